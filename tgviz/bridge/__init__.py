"""The one layer of tgviz that knows tinygrad's internals; the rest of tgviz talks to the names exported here.

By concern: ``env`` (tinygrad's version, the default device, settings), ``capture`` (the Tracker and its patches from
``recorders``, ``schedule`` and ``profiler``), ``records`` and ``decisions`` (what a trace holds), ``linear`` (what each
schedule ran), ``rerun`` (a schedule run again with a condition lifted), ``events`` (the run: tinygrad's profile events as
records), ``peaks`` (a device's measured peaks), ``replay`` (exact per-match replay), ``uops`` (labels, node tables,
keys) and ``files`` (trace files). ``env`` is imported first: it checks tinygrad's version and sets the device up before
anything imports tinygrad.

Must not: import any tgviz package above it (only tgviz.draw's graph data and tgviz.work); hold logic here (this file only
re-exports).
"""
from tgviz.bridge import env  # first: the version check and the device set-up run before tinygrad is imported
from tgviz.bridge.capture import Snapshot, Tracker
from tgviz.bridge.decisions import Realized, ScheduleRecord
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
from tgviz.bridge.linear import BufferInfo, Call, ScheduleCalls, schedule_calls
from tgviz.bridge.machine import ListingBuilds, binary, debug_listing, disassemble, linear_uops, print_uops, program_rows
from tgviz.bridge.opts import (
  PairRun,
  allowed_opts,
  applied_opts,
  chooser,
  compile_with,
  opt_steps,
  opts_of,
  run_pair,
)
from tgviz.bridge.peaks import device_peaks
from tgviz.bridge.records import (
  KERNEL_LANDMARKS,
  LANDMARKS,
  OPT_OPS,
  BeamSearch,
  Candidate,
  GroupRecord,
  Opt,
  OptRefused,
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
from tgviz.bridge.rerun import LIFTS, Lifted, rerun
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
  "LIFTS",
  "OPT_OPS",
  "SUPPORTED_TINYGRAD",
  "BeamSearch",
  "BufferInfo",
  "Call",
  "Candidate",
  "ExecRecord",
  "GroupRecord",
  "Lifted",
  "ListingBuilds",
  "MemRecord",
  "NodeCache",
  "NodeTable",
  "Opt",
  "OptRefused",
  "Origin",
  "PairRun",
  "Profile",
  "Program",
  "RangeRecord",
  "Realized",
  "Recording",
  "ScheduleCalls",
  "ScheduleRecord",
  "Snapshot",
  "StepRecord",
  "SyncRecord",
  "TraceFileError",
  "Tracker",
  "UnsupportedTinygrad",
  "allowed_opts",
  "applied_opts",
  "binary",
  "chooser",
  "clang_missing",
  "compile_with",
  "context",
  "debug_listing",
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
  "opt_steps",
  "opts_of",
  "pack_rows",
  "page_replays",
  "parse_settings",
  "pattern_source",
  "print_uops",
  "program_of",
  "program_rows",
  "reaches",
  "render_step_index",
  "rerun",
  "restore_environment",
  "run_pair",
  "save_recording",
  "schedule_calls",
  "settings",
  "sources",
  "structural_key",
  "to_graph",
  "toposort",
]
