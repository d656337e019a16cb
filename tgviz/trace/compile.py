"""Where the compile time goes: tinygrad's own spans of its compiler (the TINY lane: schedules, each kernel's codegen and
its rewrite steps, the stages of linearize/render tgviz timed) and of the Tensor methods called (USER), nested as
tinygrad's VIZ draws them; each step's time and self time; per kernel, its share of the schedule, its codegen, render
and device compile; and the capture's wall time split into what these cover and what they do not.

Built from the trace's profile records (tgviz.bridge's SpanRecords); reading them needs no knowledge of tinygrad. Times
are µs from the start of the capture. :class:`tgviz.trace.trace.Trace` hands these out (``trace.compile_times()``,
``trace.compile_table()``, ``step.time_us``); this module draws nothing.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from tgviz import bridge as tg
from tgviz.trace.units import time_text


class GroupInfo(NamedTuple):
  """A group of the trace (its index), as these tables read it."""
  group: int
  kind: str                                 # "schedule", "kernel" or "other"
  name: str


class KernelInfo(NamedTuple):
  """A kernel of the trace, as the compile table reads it: its group, its display name, and the SOURCE key of its
  program where it is the first kernel of it (the program's first launch is its), else None."""
  group: int
  name: str
  source_key: bytes | None


REWRITES = ("group", "step")                # the kinds of span a step's self time leaves out
COMPILE_COLUMNS = ("kernel", "schedule_us", "codegen_us", "render_us", "compile_us", "first_launch_us", "total_us")  # Trace.compile_table


@dataclass(eq=False, slots=True)
class Span:
  """One of tinygrad's host-side spans (see tgviz.bridge.SpanRecord), placed in its lane: its depth (0: outermost) and
  the time of the rewrites (groups, steps) nested directly in it, through spans of other kinds."""
  lane: str
  name: str
  kind: str                                 # "group", "step", "span", "user", or a stage: "linearize", "render", "compile", ...
  start_us: float
  end_us: float
  group: int | None = None                  # the trace's group it is (or, a step or stage, ran in)
  step: int | None = None
  depth: int = 0
  nested_us: float = 0.0
  parent: Span | None = None                # the span it is nested in, on its lane

  @property
  def time_us(self) -> float:
    return self.end_us - self.start_us

  @property
  def self_us(self) -> float:
    """Its time less the rewrites nested in it (a step's own work)."""
    return self.time_us - self.nested_us


@dataclass
class CompileTotals:
  """The capture's wall time split up (µs, from tinygrad's spans): the compiler's outermost spans (schedules, kernels'
  codegen with their render and device compile, the rest), the Tensor methods outside them (building the graph,
  launching, copying, waiting: ``launches_us`` of it the launches' host time), and what no span covers (the user's own
  Python between Tensor methods, and tgviz's at the capture's start and end). The parts add up to ``wall_us``."""
  wall_us: float = 0.0
  schedule_us: float = 0.0
  codegen_us: float = 0.0                   # kernels' codegen, their render and compile included
  render_us: float = 0.0
  compile_us: float = 0.0
  other_us: float = 0.0                     # the compiler's other outermost spans (JIT captures, rewrites outside groups)
  tensor_us: float = 0.0
  launches_us: float = 0.0
  first_launches_us: float = 0.0            # of launches_us: each program's first launch beyond its device time (where a
                                            # device builds the kernel: PoCL compiles it for its first launch)
  uncovered_us: float = 0.0
  unassigned_us: float = 0.0                # of schedule_us: schedules after which no kernel compiled (in no kernel's row)

  @property
  def compiler_us(self) -> float:
    return self.schedule_us + self.codegen_us + self.other_us

  def summary(self) -> str:
    t = time_text
    return (f"capture {t(self.wall_us)}: compiler {t(self.compiler_us)} (schedule {t(self.schedule_us)}, kernels' codegen "
            f"{t(self.codegen_us)} of which render {t(self.render_us)} and device compile {t(self.compile_us)}, other "
            f"{t(self.other_us)}); Tensor methods outside the compiler {t(self.tensor_us)} (of it launches {t(self.launches_us)}, "
            f"each program's first launch beyond its device time {t(self.first_launches_us)}); "
            f"not covered by tinygrad's spans (Python between Tensor methods, the capture's own start and end) {t(self.uncovered_us)}")

  __str__ = summary


@dataclass
class CompileTimes:
  """Every host-side span of a capture in its lane, nested (``spans``: by lane, in start order), with what each step,
  group and kernel took."""
  spans: list[Span] = field(default_factory=list)
  totals: CompileTotals = field(default_factory=CompileTotals)
  steps: dict[tuple[int, int], Span] = field(default_factory=dict)
  groups: dict[int, Span] = field(default_factory=dict)
  stages: dict[int, dict[str, float]] = field(default_factory=dict)  # group -> stage -> µs
  first_launch: dict[bytes, float] = field(default_factory=dict)    # SOURCE key -> its first launch's host µs beyond its device time
  shares: dict[int, float] = field(default_factory=dict)             # kernel group -> its share of its schedule (µs)

  def step(self, group: int, step: int) -> Span | None:
    return self.steps.get((group, step))

  def compiling_us(self, start_us: float, end_us: float) -> float:
    """How much of the time from start_us to end_us tinygrad's compiler ran: its outermost spans on the TINY lane."""
    return _overlap(_covered([(s.start_us, s.end_us) for s in self.spans if s.lane == "TINY" and s.depth == 0]), [(start_us, end_us)])


def _nest(spans: list[Span]) -> None:
  """Depths and nested rewrite time of one lane's spans, sorted by start (the outer first where two start together)."""
  stack: list[Span] = []
  rewrite: list[Span] = []                  # the rewrite spans open, innermost last
  for s in spans:
    while stack and stack[-1].end_us <= s.start_us:
      if rewrite and rewrite[-1] is stack[-1]: rewrite.pop()
      stack.pop()
    s.depth, s.parent = len(stack), stack[-1] if stack else None
    if s.kind in REWRITES:
      if rewrite: rewrite[-1].nested_us += s.time_us
      rewrite.append(s)
    stack.append(s)


def _covered(intervals: list[tuple[float, float]]) -> list[tuple[float, float]]:
  """Intervals merged where they overlap, in order."""
  out: list[tuple[float, float]] = []
  for a, b in sorted(intervals):
    if out and a <= out[-1][1]: out[-1] = (out[-1][0], max(out[-1][1], b))
    else: out.append((a, b))
  return out


def _overlap(a: list[tuple[float, float]], b: list[tuple[float, float]]) -> float:
  """The time two lists of merged intervals share."""
  i = j = 0
  total = 0.0
  while i < len(a) and j < len(b):
    total += max(0.0, min(a[i][1], b[j][1]) - max(a[i][0], b[j][0]))
    if a[i][1] < b[j][1]: i += 1
    else: j += 1
  return total


def compile_times(prof: Any, groups: list[GroupInfo]) -> CompileTimes:
  """The spans of a trace's profile records (prof: its bridge Profile, or None), nested, with the totals (groups: the
  trace's, for their kinds)."""
  out = CompileTimes()
  if prof is None: return out
  t0 = prof.start
  records = getattr(prof, "spans", [])  # (absent from traces saved before they were kept)
  spans = sorted((Span(r.lane, r.name, r.kind, r.st - t0, r.en - t0, r.group, r.step) for r in records),
                 key=lambda s: (s.lane, s.start_us, -s.end_us))
  for lane in dict.fromkeys(s.lane for s in spans): _nest([s for s in spans if s.lane == lane])
  out.spans = spans
  for s in spans:
    if s.group is None: continue
    if s.kind == "group": out.groups[s.group] = s
    elif s.kind == "step" and s.step is not None: out.steps[(s.group, s.step)] = s
    elif s.kind not in ("span", "user"): out.stages.setdefault(s.group, {})[s.kind] = s.time_us + out.stages.get(s.group, {}).get(s.kind, 0.0)
  out.totals = _totals(prof, out, groups)
  out.totals.unassigned_us = _shares(out, groups)
  return out


def _totals(prof: Any, ct: CompileTimes, groups: list[GroupInfo]) -> CompileTotals:
  """The totals: each schedule's and kernel's outermost group span (one nested in another's, as a kernel compiled while a
  TinyJit captures, counts for its own kind, not the outer span's), the rest of the compiler's outermost spans other."""
  tot = CompileTotals(wall_us=prof.end - prof.start)
  kinds = {g.group: g.kind for g in groups}
  def kind(s: Span) -> str | None: return kinds.get(s.group) if s.kind == "group" and s.group is not None else None
  for s in ct.spans:
    if s.lane != "TINY" or (k := kind(s)) not in ("schedule", "kernel"): continue
    outer = s.parent
    while outer is not None and kind(outer) not in ("schedule", "kernel"): outer = outer.parent
    if outer is not None: continue
    if k == "schedule": tot.schedule_us += s.time_us
    else:
      tot.codegen_us += s.time_us
      tot.render_us += ct.stages.get(s.group, {}).get("render", 0.0)  # type: ignore[arg-type]
      tot.compile_us += ct.stages.get(s.group, {}).get("compile", 0.0)  # type: ignore[arg-type]
  tiny = [s for s in ct.spans if s.lane == "TINY" and s.depth == 0]
  tot.other_us = sum(s.time_us for s in tiny) - tot.schedule_us - tot.codegen_us
  compiler = _covered([(s.start_us, s.end_us) for s in tiny])
  user = _covered([(s.start_us, s.end_us) for s in ct.spans if s.lane == "USER" and s.depth == 0])
  tot.tensor_us = sum(b - a for a, b in user) - _overlap(user, compiler)
  tot.launches_us = sum(e.wall or 0.0 for e in prof.execs) + sum(s.en - s.st for s in prof.syncs)
  for e in prof.execs:
    if e.kind == "kernel" and e.key and e.key not in ct.first_launch and e.wall is not None:
      ct.first_launch[e.key] = max(0.0, e.wall - (e.dur or 0.0))
  tot.first_launches_us = sum(ct.first_launch.values())
  tot.uncovered_us = tot.wall_us - tot.compiler_us - tot.tensor_us
  return tot


def _shares(ct: CompileTimes, groups: list[GroupInfo]) -> float:
  """Each kernel's share of the schedule that made it, into ct.shares: a schedule's time (its Callify and Schedule
  groups) split evenly over the kernels compiled after it, up to the next schedule. Returns the time of schedules after
  which no kernel compiled (all of theirs were compiled before): in no kernel's share."""
  pending, unassigned, batch = 0.0, 0.0, list[int]()
  def close() -> None:
    for gi in batch: ct.shares[gi] = ct.shares.get(gi, 0.0) + pending / len(batch)
  for g in groups:
    if g.kind == "schedule":
      if batch: close(); pending, batch = 0.0, []
      elif tg.starts_schedule(g.name): unassigned, pending = unassigned + pending, 0.0
      pending += s.time_us if (s := ct.groups.get(g.group)) is not None else 0.0
    elif g.kind == "kernel": batch.append(g.group)
  if batch: close()
  else: unassigned += pending
  return unassigned


def compile_rows(ct: CompileTimes, kernels: list[KernelInfo]) -> list[dict[str, Any]]:
  """Per kernel, in compile order: its share of the schedule that made it (see _shares), its codegen (the rewrites,
  linearize and the rest of its group), render, device compile (tinygrad's compile step, its disk cache included), its
  program's first launch beyond its device time (a device that builds a kernel when it first runs it, PoCL, does it
  there; 0 for a kernel whose program an earlier one launched first, or that did not run), and the total; µs, None
  where the trace has no span of its codegen (a kernel compiled in a worker process, a trace without a profile)."""
  rows = []
  for k in kernels:
    if (s := ct.groups.get(k.group)) is None:
      rows.append(dict(zip(COMPILE_COLUMNS, (k.name, None, None, None, None, None, None), strict=True)))
      continue
    stage = ct.stages.get(k.group, {})
    render, comp, sched = stage.get("render", 0.0), stage.get("compile", 0.0), ct.shares.get(k.group, 0.0)
    first = ct.first_launch.get(k.source_key, 0.0) if k.source_key is not None else 0.0
    values: tuple[Any, ...] = (k.name, round(sched, 3), round(s.time_us - render - comp, 3), round(render, 3), round(comp, 3),
                               round(first, 3), round(sched + s.time_us + first, 3))
    rows.append(dict(zip(COMPILE_COLUMNS, values, strict=True)))
  return rows
