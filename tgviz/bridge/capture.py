"""A capture: tinygrad's rewrite tracking switched on for a block, every patch entered through one ExitStack.

Owns: the Tracker (the order patches go on and come off, the tracking tables a capture gets, the caches cleared so a
block traces the same way every time) and turning what it tracked into a Recording. Each patch is a recorders.Patch,
undone exactly once, in reverse order, whatever raises on entry or on exit. It must not patch tinygrad itself.
"""
from __future__ import annotations

import functools
import gc
import sys
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

from tinygrad.helpers import ALLOW_DEVICE_USAGE, Context, TracingKey
from tinygrad.uop import ops
from tinygrad.uop.ops import UOpMetaClass

from tgviz.bridge.attempts import MatchRecorder
from tgviz.bridge.beam import BeamRecorder
from tgviz.bridge.env import default_device
from tgviz.bridge.opts import OptStepRecorder
from tgviz.bridge.origins import OriginRecorder
from tgviz.bridge.parallel import ParallelCompiles
from tgviz.bridge.profiler import Profiler
from tgviz.bridge.quiet import QuietCompilers
from tgviz.bridge.recorders import (
  KernelTimer,
  LineRecorder,
  Patch,
  SourceOnlyCompilers,
  StackRecorder,
  StepRecorder,
)
from tgviz.bridge.recording import Recording
from tgviz.bridge.records import groups_from, kept_groups
from tgviz.bridge.schedule import ScheduleRecorder
from tgviz.bridge.spans import SpanRecorder, host_spans

_TRACE_NUM = "_RECURSIVE_PROPERTY_trace_num"

_REWRITING = {"graph_rewrite", "substitute", "simplify"}


@functools.lru_cache(maxsize=1)
def _rewriting_caches(_modules: int) -> list[functools._lru_cache_wrapper]:
  """The functools caches of tinygrad helpers that run graph rewrites; found again when more modules are loaded."""
  found = []
  for name, mod in list(sys.modules.items()):
    if not name.startswith("tinygrad.") or mod is None: continue
    for obj in list(vars(mod).values()):
      if not isinstance(obj, functools._lru_cache_wrapper) or obj.__module__ != name: continue
      code = getattr(obj.__wrapped__, "__code__", None)
      if code is not None and _REWRITING & set(code.co_names): found.append(obj)
  return found


def clear_caches() -> None:
  """Drop tinygrad's schedule and program caches, and the functools caches of helpers that run graph rewrites (e.g.
  apply_movement_op), so a block traces the same way every time. Caches of compiled patterns are kept: clearing them
  would rebuild pattern matchers, which tinygrad's PatternMatcher.__add__ cache then keeps forever."""
  for cache in _rewriting_caches(len(sys.modules)): cache.cache_clear()
  from tinygrad.codegen import to_program_cache
  from tinygrad.schedule import schedule_cache
  schedule_cache.clear()
  to_program_cache.clear()


def _drop_trace_nums() -> None:
  """Live UOps cache their trace number; once the table they index is handed over, the numbers must go."""
  for ref in list(UOpMetaClass.ucache.values()):
    if (u := ref()) is not None: u.__dict__.pop(_TRACE_NUM, None)


class TrackingTables(Patch):
  """tinygrad's tracking globals, fresh for the capture: its groups, steps and (unless shared) its UOp table. Under
  tinygrad's own tracking (VIZ / TRACK_MATCH_STATS set at import) its UOp table stays in use, so the trace numbers live
  UOps cache stay valid: the capture shares that table."""

  def __init__(self) -> None:
    self.shared = bool(ops.uop_fields)
    self.keys: list[TracingKey] = []
    self.ctxs: list[list] = []
    self.fields: dict[int, tuple] = ops.uop_fields if self.shared else {}

  def patches(self) -> list[tuple[Any, dict[str, Any]]]:
    return [(ops, {"tracked_keys": self.keys, "tracked_ctxs": self.ctxs, "uop_fields": self.fields, "_name_cnt": {},
                   "active_group": [], "active_rewrites": []})]


@dataclass(frozen=True)
class Snapshot:
  """A capture's recording so far (Tracker.snapshot): its groups no later rewrite can add to (their indices in it:
  closed, tinygrad puts a rewrite outside any group into the last group made), and the first trace number given by
  the snapshot (what steps returned numbered below it are numbered so in the capture too)."""
  recording: Recording
  closed: set[int]
  fresh: int


class Tracker:
  """Switches tinygrad's rewrite tracking on for a block and hands back what it recorded.

  Use as a context manager; ``recording`` is set on exit, also when the block raised."""

  def __init__(self, device: str | None = None, profile: bool = True):
    self.device, self.profile = device, profile
    self.recording: Recording | None = None

  def __enter__(self) -> Tracker:
    if ops.active_rewrites or ops.active_group:
      raise RuntimeError("tgviz: a capture cannot start inside a running tinygrad rewrite or another capture")
    clear_caches()
    self._out: dict[int, int] = {}
    self._tables, self._origins, self._lines, self._timer = TrackingTables(), OriginRecorder(), LineRecorder(), KernelTimer()
    self._profiler = Profiler(self.device or default_device())
    self._steps = StepRecorder(self._origins)
    self._schedule = ScheduleRecorder(self._origins)
    self._beam, self._opts = BeamRecorder(), OptStepRecorder()
    self._matches, self._spans = MatchRecorder(), SpanRecorder()
    self._parallel = ParallelCompiles(self._origins, self._lines, self._opts, _rewriting_caches(len(sys.modules)))
    with ExitStack() as stack:
      # what the process held before is left out of the cyclic collector's full collections while tinygrad compiles (a
      # notebook's earlier traces: one took 0.9-1.0 s of a 3.5 s capture in a process holding a million objects); a
      # process that froze its own objects keeps them so
      if not gc.get_freeze_count():
        gc.freeze()
        stack.callback(gc.unfreeze)
      if not self._tables.shared: stack.callback(_drop_trace_nums)  # last, once the table they index is handed over
      stack.enter_context(self._tables)
      stack.callback(self._number_outputs)                         # while the capture's UOp table is still tinygrad's
      stack.enter_context(self._matches)
      stack.enter_context(self._steps)
      ctx: dict[str, Any] = {"TRACK_MATCH_STATS": 2, "VIZ": -1}  # PARALLEL stays the user's: see ParallelCompiles
      if self.device is not None: ctx["DEV"] = self.device
      stack.enter_context(Context(**ctx))
      stack.enter_context(self._spans)
      stack.enter_context(StackRecorder())
      stack.enter_context(self._lines)
      stack.enter_context(self._origins)
      stack.enter_context(self._schedule)
      if (null := default_device().upper().startswith("NULL")): stack.enter_context(SourceOnlyCompilers())
      stack.enter_context(QuietCompilers())                          # clang's warnings on tinygrad's code are noise
      stack.enter_context(self._timer)
      stack.enter_context(self._beam)
      stack.enter_context(self._opts)
      self._parallel.serial = null   # a NULL device's source-only compilers do not travel to compile workers
      stack.enter_context(self._parallel)
      if self.profile: stack.enter_context(self._profiler)         # after KernelTimer: its launch times come from there
      # our own group first, so rewrites outside any tinygrad group land in this capture and nowhere else
      ops.add_trace_group(TracingKey("capture", tb=None))
      self._stack = stack.pop_all()
    return self

  def _number_outputs(self) -> None:
    """What each step returned, by trace number in the capture's table (numbering every result as the capture runs
    would cost capture time: those still alive at the end are numbered now)."""
    self._out = self._outputs()
    self._steps.io = {}

  def _outputs(self) -> dict[int, int]:
    out = {sid: u.trace_num for sid, ref in self._steps.io.items() if (u := ref()) is not None}
    out.update(self._parallel.out)  # what compile workers' steps returned
    return out

  def quiet(self, fn: Callable[[], None] | None) -> None:
    """Have fn called on the capturing thread each time an outermost tracked rewrite has walked its graph (between
    kernels' rewrites, with no rewrite half-recorded: a point to fork at, see snapshot); None: no longer."""
    self._steps.quiet = fn

  def snapshot(self) -> Snapshot:
    """What the running capture recorded so far, as the Recording it would hand back if it ended now (see Snapshot).
    Only in a process forked from the capture at a quiet point: it numbers the live outputs of steps, and this process
    records no more (its own rewrites, a replay's, are not the capture's; nor does it fork at quiet points) and may use
    the devices the capture opened."""
    self._steps.quiet = None
    ops.TRACK_MATCH_STATS.value = 0
    ALLOW_DEVICE_USAGE.value = 1  # (the rewrite it forked in may forbid it) to disassemble with the compilers the capture opened
    t = self._tables
    fresh = next(ops.ucount)  # numbers from here on were first given here
    groups = groups_from(t.keys, t.ctxs, self._outputs(), self._origins.groups, self._beam.searches, self._opts.steps,
                         self._schedule.groups, self._origins.nodes)
    first = len(t.keys) - len(groups)  # tgviz's own group, left out while nothing landed in it
    closed = {i - first for i in range(first, len(t.keys) - 1) if i not in ops.active_group}
    return Snapshot(Recording(groups, t.fields, self._lines.lines, self._timer.runs), closed, fresh)

  def __exit__(self, *exc: object) -> None:
    try: self._stack.close()
    finally:
      t = self._tables
      groups = groups_from(t.keys, t.ctxs, self._out, self._origins.groups, self._beam.searches, self._opts.steps,
                           self._schedule.groups, self._origins.nodes)
      profile, m = self._profiler.profile(), self._matches
      if profile is not None:
        index = {g: i for i, g in enumerate(kept_groups(t.keys, t.ctxs))}
        profile.spans = host_spans(self._profiler.host, self._spans.links, m.stages, self._spans.step_at, index)
      self._profiler.host, m.stages = [], []  # (tinygrad's spans hold its UOps)
      patterns = {loc: s.plain() for loc, s in m.stats().items()}
      for loc, s in self._parallel.patterns.items():  # what compile workers counted
        if loc in patterns: s.add(type(s)(*patterns[loc]))
        patterns[loc] = s.plain()
      self.recording = Recording(groups, t.fields, self._lines.lines, self._timer.runs, profile, patterns, failed=m.failed)
