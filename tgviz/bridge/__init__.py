"""The one layer of tgviz that knows tinygrad's internals; the rest of tgviz talks to the names exported here.

By concern: ``env`` (tinygrad's version, the default device, settings), ``access`` (a kernel's loads and stores, their
index expressions evaluated), ``capture`` (the Tracker and its patches from ``recorders``, ``origins`` (which Tensor
ops and user lines a kernel computes), ``attempts`` (every pattern attempt, counted and timed; a launch that raised),
``spans`` (tinygrad's compiler spans), ``schedule`` and ``profiler``), ``records`` and ``decisions`` (what a trace
holds; ``recording``: with the UOp table), ``linear`` (what each schedule ran), ``rerun`` (a schedule run again with a
condition lifted), ``events`` (the run: tinygrad's profile events as records), ``peaks`` (a device's measured peaks),
``retime`` (a kernel timed again; its float work), ``replay`` (exact per-match replay), ``uops`` (labels, node tables,
keys; ``packing``: the tables packed for a report), ``graphs`` (walking graphs), ``births`` (where each kind of UOp
first appears: what a search finds) and ``files`` (trace files). ``env`` is imported first: it checks tinygrad's version and sets the device up
before anything imports tinygrad.

Must not: import any tgviz package above it (only tgviz.draw's graph data and tgviz.work); hold logic here (this file only
re-exports).
"""
from tgviz.bridge import env  # first: the version check and the device set-up run before tinygrad is imported
from tgviz.bridge.access import (
  CALLS_STEP,
  SHAPES_STEP,
  AccessTable,
  RawAccess,
  Unsupported,
  Var,
  ast_accesses,
  evaluate,
  kernel_calls,
  program_accesses,
  stored_params,
  tensor_shapes,
)
from tgviz.bridge.attempts import PatternStats, stats_of
from tgviz.bridge.beam import beam_pick
from tgviz.bridge.births import Birth, births
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
from tgviz.bridge.graphs import GraphNodes, reaches, sources, toposort
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
  opts_text,
  refusal,
  run_pair,
)
from tgviz.bridge.packing import pack_rows
from tgviz.bridge.peaks import device_peaks
from tgviz.bridge.rebuilt_dtypes import dtype_rules
from tgviz.bridge.recording import Recording
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
  StepRecord,
  is_snapshot,
  is_unnamed,
  lexer_name,
  main_origin,
  program_of,
  render_step_index,
  starts_schedule,
)
from tgviz.bridge.replay import opaque_call_bodies, page_replays
from tgviz.bridge.rerun import LIFTS, Lifted, rerun
from tgviz.bridge.retime import Retimed, float_ops, median_interval, time_program
from tgviz.bridge.uops import (
  NodeCache,
  NodeTable,
  error_text,
  is_uop,
  kernel_key,
  node_details,
  node_key,
  note_line,
  op_families,
  op_name,
  pattern_source,
  python_text,
  to_graph,
)

__all__ = [
  "CALLS_STEP",
  "KERNEL_LANDMARKS",
  "LANDMARKS",
  "LIFTS",
  "OPT_OPS",
  "SHAPES_STEP",
  "SUPPORTED_TINYGRAD",
  "AccessTable",
  "BeamSearch",
  "Birth",
  "BufferInfo",
  "Call",
  "Candidate",
  "ExecRecord",
  "GraphNodes",
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
  "PatternStats",
  "Profile",
  "Program",
  "RangeRecord",
  "RawAccess",
  "Realized",
  "Recording",
  "Retimed",
  "ScheduleCalls",
  "ScheduleRecord",
  "Snapshot",
  "StepRecord",
  "SyncRecord",
  "TraceFileError",
  "Tracker",
  "Unsupported",
  "UnsupportedTinygrad",
  "Var",
  "allowed_opts",
  "applied_opts",
  "ast_accesses",
  "beam_pick",
  "binary",
  "births",
  "chooser",
  "clang_missing",
  "compile_with",
  "context",
  "debug_listing",
  "default_device",
  "device_peaks",
  "disassemble",
  "dtype_rules",
  "env",
  "error_text",
  "evaluate",
  "float_ops",
  "is_null_device",
  "is_snapshot",
  "is_unnamed",
  "is_uop",
  "kernel_calls",
  "kernel_key",
  "lexer_name",
  "linear_uops",
  "load_recording",
  "main_origin",
  "median_interval",
  "node_details",
  "node_key",
  "note_line",
  "op_families",
  "op_name",
  "opaque_call_bodies",
  "opt_steps",
  "opts_of",
  "opts_text",
  "pack_rows",
  "page_replays",
  "parse_settings",
  "pattern_source",
  "print_uops",
  "program_accesses",
  "program_of",
  "program_rows",
  "python_text",
  "reaches",
  "refusal",
  "render_step_index",
  "rerun",
  "restore_environment",
  "run_pair",
  "save_recording",
  "schedule_calls",
  "settings",
  "sources",
  "starts_schedule",
  "stats_of",
  "stored_params",
  "tensor_shapes",
  "time_program",
  "to_graph",
  "toposort",
]
