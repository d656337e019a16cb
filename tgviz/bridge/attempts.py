"""Every attempt of a pattern while a capture runs: the matches tinygrad's tracking records, and per pattern the counts
and times tinygrad's ``TRACK_MATCH_STATS=2`` keeps (its ``match_stats``: matches, attempts, time in matches, time in
attempts that did not match), plus the time exclusive of the rewrites nested inside an attempt.

Owns: MatchRecorder (the patch: tinygrad's PatternMatcher.rewrite, plain and tracked, replaced by one that records each
match in the running graph_rewrite as tinygrad's TrackedPatternMatcher does, and counts and times every attempt; and
RewriteContext's rewrites timed, so that a pattern whose function runs rewrites of its own is not charged for them),
PatternStats (what it counted, per pattern location, plain values that travel in trace files and back from compile
workers) and the stages of a kernel's ``linearize/render`` step (linearize, render, the device compiler: the matches of
tinygrad's pm_to_program, kept with their start so the timeline can draw them). It must not decide when it is entered
(capture.Tracker does) nor build records of steps.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from tinygrad.codegen import pm_to_program
from tinygrad.uop import ops
from tinygrad.uop.ops import Ops, RewriteContext, TrackedPatternMatcher, UOp

from tgviz.bridge.recorders import Patch

_PLAIN_MATCHER = TrackedPatternMatcher.__bases__[0]  # tinygrad's PatternMatcher (ops.PatternMatcher is the tracked one under VIZ)
# the patterns of tinygrad's last codegen rewrite (linearize/render), by the function each calls: do_render, do_compile, ...
STAGES = {p: getattr(fn, "__name__", "").removeprefix("do_") for p, fn in pm_to_program.patterns}


@dataclass(slots=True)
class PatternStats:
  """One pattern location's counts over a capture, as TRACK_MATCH_STATS counts them (every rewrite, tracked or not):
  matches, attempts (a match tried past its early reject), seconds in its matches and in its attempts that did not
  match; and ``self_time``: seconds in all its attempts, less the rewrites run inside them (a pattern whose function
  rewrites a graph of its own, lower_sink_to_linear's, is charged only for its own work)."""
  matches: int = 0
  attempts: int = 0
  match_time: float = 0.0
  fail_time: float = 0.0
  self_time: float = 0.0

  def add(self, other: PatternStats) -> None:
    self.matches += other.matches
    self.attempts += other.attempts
    self.match_time += other.match_time
    self.fail_time += other.fail_time
    self.self_time += other.self_time

  def plain(self) -> tuple[int, int, float, float, float]:
    """As saved in a trace file (plain values only)."""
    return (self.matches, self.attempts, self.match_time, self.fail_time, self.self_time)


def stats_of(plain: dict[tuple[str, int], tuple]) -> dict[tuple[str, int], PatternStats]:
  """PatternStats by location from what a trace file holds (PatternStats.plain per location)."""
  return {loc: PatternStats(*v) for loc, v in plain.items()}


class MatchRecorder(Patch):
  """Every pattern match of the tracked rewrites, recorded as tinygrad's TrackedPatternMatcher records it (its time, a
  pattern that raises as a REWRITE_ERROR), and every attempt of every pattern counted and timed (``stats()``), with the
  plain matcher's cached set of source ops: the same matches as tinygrad's own tracking, for no more than it costs.

  An attempt's time runs from the end of the one before it in the same rewrite call (the first: from the call's start)
  to its own end, so one clock reading per attempt times them all; the early rejects between two attempts (a set
  comparison each) are charged to the attempt after them. ``stages``: (stage, start, end, the tracked step it ran in)
  of each pm_to_program match (STAGES), perf_counter seconds.

  And the kernel whose launch raised (tinygrad's runner runs each CALL through a PatternMatcher, pm_exec, outside any
  rewrite: a kernel that fails to build its runtime, where OpenCL compiles, or to run raises there). ``failed``: the last
  one, as (its SOURCE UOp's key, "Type\nmessage", "compile" for a tinygrad CompileError, else "run"), None while none did."""

  def __init__(self) -> None:
    self.failed: tuple[bytes, str, str] | None = None
    self.counts: dict[Any, list] = {}          # UPat -> [matches, attempts, match_time, fail_time, time in nested rewrites]
    self.stages: list[tuple[str, float, float, Any]] = []
    self.nested = [0.0]                        # seconds of work done at the current level (see _timed)

  def patches(self) -> list[tuple[Any, dict[str, Any]]]:
    rewrite = self._rewrite()
    return [(_PLAIN_MATCHER, {"rewrite": rewrite}), (TrackedPatternMatcher, {"rewrite": rewrite}),
            (RewriteContext, {"unified_rewrite": self._timed(RewriteContext.unified_rewrite),
                              "walk_rewrite": self._timed(RewriteContext.walk_rewrite)})]

  def stats(self) -> dict[tuple[str, int], PatternStats]:
    """What was counted, by pattern location (patterns defined on one line, a list comprehension's, summed)."""
    out: dict[tuple[str, int], PatternStats] = {}
    for p, (m, a, mt, ft, nested) in self.counts.items():
      loc: tuple[str, int] = p.location
      if (s := out.get(loc)) is None: out[loc] = PatternStats(m, a, mt, ft, mt + ft - nested)
      else: s.add(PatternStats(m, a, mt, ft, mt + ft - nested))
    return out

  def launch_failed(self, call: UOp, e: Exception) -> None:
    from tinygrad.device import CompileError
    if call.src and call.src[0].op is Ops.PROGRAM and (src := next((s for s in call.src[0].src if s.op is Ops.SOURCE), None)) is not None:
      self.failed = (src.key, f"{type(e).__name__}\n{e}", "compile" if isinstance(e, CompileError) else "run")

  def _timed(self, method: Any) -> Any:
    """A rewrite whose whole time counts as nested work for the attempt it runs in (and no more: what was done inside
    it is the rewrite's own)."""
    nested, clock = self.nested, time.perf_counter
    def timed(rctx: RewriteContext, root: UOp, *args: Any, **kwargs: Any) -> UOp:
      outer, st = nested[0], clock()
      try: return method(rctx, root, *args, **kwargs)
      finally: nested[0] = outer + (clock() - st)
    timed.__wrapped__ = method  # type: ignore[attr-defined]
    return timed

  def _rewrite(self) -> Any:
    counts, stages, nested, clock, track = self.counts, self.stages, self.nested, time.perf_counter, ops.TRACK_MATCH_STATS
    def rewrite(pm: Any, uop: UOp, ctx: Any = None) -> UOp | None:
      """PatternMatcher.rewrite while a capture runs (see MatchRecorder)."""
      if (ler := uop.__dict__.get("_src_ops")) is None: uop.__dict__["_src_ops"] = ler = {u.op for u in uop.src}
      t = None
      for p, match, early_reject in pm.pdict.get(uop.op, ()):
        if not early_reject.issubset(ler): continue
        if t is None: t = clock()
        if (c := counts.get(p)) is None: c = counts[p] = [0, 0, 0.0, 0.0, 0.0]
        c[1] += 1
        outer = nested[0]
        try: ret = match(uop, ctx)
        except Exception as e:
          nested[0] = outer + (clock() - t)
          if track.value >= 2 and ops.active_rewrites:
            err = UOp(Ops.REWRITE_ERROR, src=uop.src, arg=f"{type(e).__name__}\n{e}")
            ops.active_rewrites[-1].matches.append((uop.trace_num, err.trace_num, p.location, 0))
          elif uop.op is Ops.CALL: self.launch_failed(uop, e)
          raise
        now = clock()
        et = now - t
        if (inner := nested[0] - outer): c[4] += inner  # rewrites (or attempts) ran inside this one: not its own time
        nested[0] = outer + et
        if ret is not None and ret is not uop:
          c[0] += 1
          c[2] += et
          if track.value >= 2 and isinstance(ret, UOp) and ops.active_rewrites:
            ops.active_rewrites[-1].matches.append((uop.trace_num, ret.trace_num, p.location, et))
            if p in STAGES: stages.append((STAGES[p], t, now, ops.active_rewrites[-1]))
          return ret
        c[3] += et
        t = now
      return None
    return rewrite
