"""The run message: what the trace browser's *timeline*, *memory* and *roofline* tabs draw (js/runview.js and the
modules it imports), built from ``trace.timeline()``, ``trace.memory()`` and ``trace.roofline()``.

The widget sends it when its frontend asks (``{"type": "run"}``); the HTML report embeds it as one chunk. The compiler's
lanes (tinygrad's host-side spans) are tgviz.views.compile's part of it. It is compact
for tens of thousands of launches: the launches and the memory events go as columns of numbers, names once each. A
kernel is an index into ``kernels``, each with the step it opens (its first, as the kernel table's rows). Draws nothing.
"""
from __future__ import annotations

import bisect
import statistics

from tgviz.trace.compile import CompileTimes
from tgviz.trace.run import Launch, Roofline, RooflinePoint, Timeline
from tgviz.trace.trace import Kernel, Trace
from tgviz.trace.units import copy_name
from tgviz.views.compile import compile_data
from tgviz.views.messages import BufferRow, BufferTable, MemoryData, PeaksRow, PointRow, RooflineData, RunMsg, TimelineData, TimelineOpening
from tgviz.views.protocol import step_key

KINDS = ("kernel", "copy", "graph", "sync", "other")  # Launch.kind, by index
SLOWEST = 5  # kernel launches marked as the slowest
WIDE, SHARE = 10, 2 / 3  # a wide gap: over this many times the launches' median gap and this share of its stretch (opening)


def _us(v: float) -> float:
  return round(v, 3)


def _kernel_index(trace: Trace) -> tuple[list[list[str]], dict[int, int]]:
  rows = [[k.display_name, step_key(k.group.steps[0]) if k.group.steps else ""] for k in trace.kernels]
  return rows, {id(k): i for i, k in enumerate(trace.kernels)}


def buffer_table(trace: Trace, index: dict[int, int]) -> BufferTable:
  bufs, launches = trace.memory().buffers, {id(x): i for i, x in enumerate(trace.timeline())}
  devices: dict[str, int] = {}
  dtypes: dict[str, int] = {}
  return BufferTable(
    num=[b.num for b in bufs], device=[devices.setdefault(b.device, len(devices)) for b in bufs],
    dtype=[dtypes.setdefault(b.dtype, len(dtypes)) for b in bufs], devices=list(devices), dtypes=list(dtypes),
    size=[b.size for b in bufs], nbytes=[b.nbytes for b in bufs], alloc=[_us(b.alloc_us) for b in bufs],
    free=[_us(b.free_us) if b.free_us is not None else None for b in bufs],
    writes=[[launches[id(x)] for x in b.writes] for b in bufs], reads=[[launches[id(x)] for x in b.reads] for b in bufs],
    kernels=[[index[id(k)] for k in b.kernels if id(k) in index] for b in bufs])


def _gaps(spans: list[tuple[float, float]]) -> list[float]:
  """The time in which nothing ran before each span (start, end; in start order) but the first: from the end of every
  span before it to its start."""
  out, end = [], spans[0][1] if spans else 0.0
  for a, b in spans[1:]:
    out.append(max(0.0, a - end))
    end = max(end, b)
  return out


def _stretch(spans: list[tuple[float, float]]) -> tuple[int, int]:
  """The largest stretch of spans (its first and last index) that no wide gap splits (see opening)."""
  usual, lo, hi = statistics.median(_gaps(spans) or [0.0]), 0, len(spans) - 1
  while lo < hi:
    gaps = _gaps(spans[lo:hi + 1])
    at = max(range(len(gaps)), key=gaps.__getitem__)  # the widest gap: before span lo + at + 1
    span = max(b for _, b in spans[lo:hi + 1]) - spans[lo][0]
    if gaps[at] <= WIDE * usual or gaps[at] <= SHARE * span: break
    cut = lo + at + 1
    first = cut - lo > hi - cut + 1
    lo, hi = (lo, cut - 1) if first else (cut, hi)
  return lo, hi


def opening(tl: Timeline, ct: CompileTimes | None = None) -> TimelineOpening | None:
  """Where the timeline opens (None: no launches). A TinyJit loop on its replays: its steady state. Otherwise on the
  largest stretch of launches no wide gap splits, so that what opens is launches to see and hover, not two slivers
  either side of a compile. A gap (a time in which no launch runs) is wide where it is over WIDE (10) times the
  launches' median gap (their usual spacing: the Python between two launches) and over SHARE (two thirds) of the span of
  the stretch it is in (first start to last end): from all the launches, while the widest gap in the stretch is wide,
  split the stretch there and keep the part with more launches (the later on a tie). A single training step whose loss
  is read after a compile opens on the step's launches; the launches left out, and the gaps before and after, the
  timeline's head says (whole run, f: all of it), and how much of each gap tinygrad compiled (ct: the trace's compile
  times; None: not said)."""
  ls = tl.launches
  if not ls: return None
  if replays := [r for r in tl.jit_runs if r.replay > 0]:
    start, end = min(r.start_us for r in replays), max(r.end_us for r in replays)
    starts = [x.start_us for x in ls]
    first, last = bisect.bisect_left(starts, start), bisect.bisect_right(starts, end) - 1
  else:
    first, last = _stretch([(x.start_us, x.end_us) for x in ls])
    start, end = ls[first].start_us, max(x.end_us for x in ls[first:last + 1])
  before = max(0.0, start - max(x.end_us for x in ls[:first])) if first else None
  after = max(0.0, ls[last + 1].start_us - end) if last + 1 < len(ls) else None
  def compiling(a: float, gap: float | None) -> float | None:  # how much of a gap from a tinygrad compiled
    return _us(ct.compiling_us(a, a + gap)) if ct is not None and gap is not None else None
  return TimelineOpening(what="replays" if replays else "launches", first=first, last=last, start=_us(start), end=_us(end),
                         gap_before=_us(before) if before is not None else None, gap_after=_us(after) if after is not None else None,
                         compiling_before=compiling(start - (before or 0.0), before), compiling_after=compiling(end, after))


def timeline_data(trace: Trace, index: dict[int, int]) -> TimelineData:
  tl = trace.timeline()
  lanes = {n: i for i, n in enumerate(tl.lanes)}
  names: dict[str, int] = {}
  kinds = {k: i for i, k in enumerate(KINDS)}
  def kernel(x: Launch) -> int: return index.get(id(x.kernel), -1) if x.kernel is not None else -1
  ls = tl.launches
  timed = [i for i, x in enumerate(ls) if x.kind == "kernel" and x.duration_us is not None]
  cold = {id(k) for k in trace.kernels if (t := k.timing) is not None and t.cold}
  slowest = sorted(timed, key=lambda i: -(ls[i].duration_us or 0.0))[:SLOWEST]
  def name(x: Launch) -> str: return copy_name(x.name, x.nbytes)  # a copy's bytes by tgviz's rule
  return TimelineData(
    lanes=list(tl.lanes), kinds=list(KINDS),
    lane=[lanes[x.lane] for x in ls], name=[names.setdefault(name(x), len(names)) for x in ls],
    kind=[kinds.get(x.kind, kinds["other"]) for x in ls], start=[_us(x.start_us) for x in ls],
    dur=[_us(x.duration_us) if x.duration_us is not None else None for x in ls], kernel=[kernel(x) for x in ls],
    jit=[x.jit if x.jit is not None else -1 for x in ls], replay=[x.replay if x.replay is not None else -1 for x in ls],
    names=list(names), jits=list(tl.jits),
    jit_runs=[[r.jit, r.replay, _us(r.start_us), _us(r.end_us), r.launches] for r in tl.jit_runs],
    moved=[[i, x.nbytes] for i, x in enumerate(ls) if x.nbytes is not None],
    slowest=slowest, duration=_us(tl.duration_us), source=tl.source, summary=tl.summary(),
    outside=tl.outside_text(),
    cold=[i for i, x in enumerate(ls) if id(x.kernel) in cold], opening=opening(tl, trace.compile_times()))


def memory_data(trace: Trace, index: dict[int, int]) -> MemoryData:
  mem = trace.memory()
  def kernels(ks: list[Kernel]) -> list[int]: return [index[id(k)] for k in ks if id(k) in index]
  rows = [BufferRow(**b.row(), kernels=kernels(b.kernels)) for b in sorted(mem.at_peak, key=lambda b: -b.nbytes)]  # type: ignore[typeddict-item]
  order = {id(b): i for i, b in enumerate(mem.buffers)}
  return MemoryData(t=[_us(e.t_us) for e in mem.events], in_use=[e.in_use for e in mem.events],
                    buf=[order.get(id(e.buffer), -1) for e in mem.events], buffers=buffer_table(trace, index), peak=mem.peak,
                    peak_us=_us(mem.peak_us) if mem.peak_us is not None else None, before=sum(mem.before.values()),
                    allocations=len(mem.buffers), at_peak=rows, device_peaks=dict(mem.device_peaks), summary=mem.summary())


def roofline_data(trace: Trace, index: dict[int, int], peaks: bool = True) -> RooflineData:
  roof: Roofline = trace.roofline(peaks=peaks)
  def point(p: RooflinePoint) -> PointRow:
    v = roof.verdict(p)
    return PointRow(kernel=index[id(p.kernel)], device=p.device, flops=p.flops, bytes=p.bytes, runs=p.runs, time_us=_us(p.time_us),
                    intensity=p.intensity, gflops=p.gflops, gbs=p.gbs, bound=roof.bound(p), float_gflops=p.float_gflops,
                    verdict=v.bound if v else None, fraction=v.fraction if v else None, why=v.why if v else None)
  points = [point(p) for p in roof.points if id(p.kernel) in index]
  placed = {id(p.kernel) for p in roof.points}
  ran = [k for k in trace.kernels if k.run_times]
  notes = [*roof.notes, *(f"{k.display_name}: ran, but tinygrad gave no FLOPs or bytes estimate to place it"
                          for k in ran if id(k) not in placed)]
  return RooflineData(points=points, notes=notes, ran=len(ran),
                      peaks={d: PeaksRow(gflops=pk.gflops, benchmark=pk.benchmark_gflops,
                                             gbs=pk.gbs, ridge=pk.ridge, how=pk.how, measured=pk.measured, launch_us=pk.launch_us)
                             for d, pk in roof.peaks.items()})


def run_message(trace: Trace, peaks: bool = True) -> RunMsg:
  """The run as the *timeline*, *memory* and *roofline* tabs draw it; peaks: look up (measure once, then cache) each
  device's peaks for the roofline."""
  kernels, index = _kernel_index(trace)
  estimates = [[k.flops, k.bytes] if k.flops is not None and k.bytes is not None else None for k in trace.kernels]
  return RunMsg(type="run", kernels=kernels, estimates=estimates, timeline=timeline_data(trace, index), memory=memory_data(trace, index),
                roofline=roofline_data(trace, index, peaks), compile=compile_data(trace),
                timings=[t.text() if (t := k.timing) is not None else None for k in trace.kernels],
                retimed=[[round(t.median_us, 3), t.n] if (t := k.timing) is not None and t.source == "re-timed" else None
                         for k in trace.kernels])

