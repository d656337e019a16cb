"""The one layer of tgviz that knows tinygrad's internals; the rest of tgviz talks to the names exported here.

By concern: ``env`` (tinygrad's version, the default device, settings), ``capture`` (the Tracker and its patches from
``recorders`` and ``profiler``), ``records`` (what a trace holds), ``events`` (the run: tinygrad's profile events as
records), ``peaks`` (a device's measured peaks), ``replay`` (exact per-match replay), ``uops`` (labels, node tables,
keys) and ``files`` (trace files). ``env`` is imported first: it checks tinygrad's version and sets the device up before
anything imports tinygrad. This file holds no logic of its own.
"""
from tgviz.bridge import env  # first: the version check and the device set-up run before tinygrad is imported
from tgviz.bridge.capture import Tracker
from tgviz.bridge.env import (
  SUPPORTED_TINYGRAD,
  UnsupportedTinygrad,
  clang_missing,
  context,
  default_device,
  parse_settings,
  restore_environment,
  settings,
)
from tgviz.bridge.events import ExecRecord, MemRecord, Profile, RangeRecord, SyncRecord, is_null_device
from tgviz.bridge.files import TraceFileError, load_recording, save_recording
from tgviz.bridge.machine import binary, disassemble, linear_uops, print_uops
from tgviz.bridge.peaks import device_peaks
from tgviz.bridge.records import (
  KERNEL_LANDMARKS,
  LANDMARKS,
  GroupRecord,
  Origin,
  Program,
  Recording,
  StepRecord,
  is_snapshot,
  lexer_name,
  program_of,
  render_step_index,
)
from tgviz.bridge.replay import opaque_call_bodies, page_replays
from tgviz.bridge.uops import (
  NodeCache,
  NodeTable,
  error_text,
  node_details,
  node_key,
  note_line,
  op_families,
  op_name,
  pack_rows,
  pattern_source,
  reaches,
  sources,
  structural_key,
  to_graph,
  toposort,
)

__all__ = [
  "KERNEL_LANDMARKS",
  "LANDMARKS",
  "SUPPORTED_TINYGRAD",
  "ExecRecord",
  "GroupRecord",
  "MemRecord",
  "NodeCache",
  "NodeTable",
  "Origin",
  "Profile",
  "Program",
  "RangeRecord",
  "Recording",
  "StepRecord",
  "SyncRecord",
  "TraceFileError",
  "Tracker",
  "UnsupportedTinygrad",
  "binary",
  "clang_missing",
  "context",
  "default_device",
  "device_peaks",
  "disassemble",
  "env",
  "error_text",
  "is_null_device",
  "is_snapshot",
  "lexer_name",
  "linear_uops",
  "load_recording",
  "node_details",
  "node_key",
  "note_line",
  "op_families",
  "op_name",
  "opaque_call_bodies",
  "pack_rows",
  "page_replays",
  "parse_settings",
  "pattern_source",
  "print_uops",
  "program_of",
  "reaches",
  "render_step_index",
  "restore_environment",
  "save_recording",
  "settings",
  "sources",
  "structural_key",
  "to_graph",
  "toposort",
]
