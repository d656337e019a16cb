"""The run message: what the trace browser's *timeline*, *memory* and *roofline* tabs draw (js/runview.js and the
modules it imports), built from ``trace.timeline()``, ``trace.memory()`` and ``trace.roofline()``.

The widget sends it when its frontend asks (``{"type": "run"}``); the HTML report embeds it as one chunk. It is compact
for tens of thousands of launches: the launches and the memory events go as columns of numbers, names once each. A
kernel is an index into ``kernels``, each with the step it opens (its first, as the kernel table's rows). Draws nothing.
"""
from __future__ import annotations

from typing import Literal, TypedDict

from tgviz.model import Kernel, Trace
from tgviz.protocol import step_key
from tgviz.runtime import Launch, Roofline

KINDS = ("kernel", "copy", "graph", "sync", "other")  # Launch.kind, by index
SLOWEST = 5  # kernel launches marked as the slowest


class TimelineData(TypedDict):
  """The launches in start order, as columns: lane, name, kind (indices into lanes, names, KINDS), start and duration
  (µs; duration null where nothing was timed), kernel (index into RunMsg.kernels, -1: none), jit (-1: none) and replay;
  jit_runs: [jit, replay, start, end, launches]; moved: [launch, bytes] of copies; slowest: the indices of the slowest
  kernel launches, slowest first."""
  lanes: list[str]
  names: list[str]
  kinds: list[str]
  lane: list[int]
  name: list[int]
  kind: list[int]
  start: list[float]
  dur: list[float | None]
  kernel: list[int]
  jit: list[int]
  replay: list[int]
  jits: list[str]
  jit_runs: list[list[float]]
  moved: list[list[int]]          # [launch, bytes]: what a copy moved, where the device said
  slowest: list[int]
  duration: float
  source: str
  summary: str


class BufferRow(TypedDict):
  num: int
  device: str
  dtype: str
  size: int
  nbytes: int
  alloc_us: float
  free_us: float | None
  kernels: list[int]              # the kernels that wrote or read it (indices into RunMsg.kernels)
  writers: list[str]
  readers: list[str]


class BufferTable(TypedDict):
  """Every buffer the run allocated, as columns (as tinygrad's VIZ lists them in its memory lanes: each allocation with
  its size and dtype, its free, and the launches that used it): device and dtype are indices into devices and dtypes,
  free null where it was never freed, writes and reads the launches (indices into the timeline's columns), kernels the
  trace's kernels among them (indices into RunMsg.kernels)."""
  num: list[int]
  devices: list[str]
  dtypes: list[str]
  device: list[int]
  dtype: list[int]
  size: list[int]
  nbytes: list[int]
  alloc: list[float]
  free: list[float | None]
  writes: list[list[int]]
  reads: list[list[int]]
  kernels: list[list[int]]


class MemoryData(TypedDict):
  """Bytes in use after each allocation and free (t: µs, in_use: bytes, buf: the buffer, an index into buffers, -1 for
  one allocated before the run; as columns), every buffer, the peak (bytes, when) and the buffers alive at it, biggest
  first; before: what was in use when the run began (tinygrad's high-water mark is before + peak)."""
  t: list[float]
  in_use: list[int]
  buf: list[int]
  buffers: BufferTable
  peak: int
  peak_us: float | None
  before: int
  allocations: int
  at_peak: list[BufferRow]
  device_peaks: dict[str, int]
  summary: str


class PointRow(TypedDict):
  kernel: int
  device: str
  flops: int
  bytes: int
  runs: int
  time_us: float
  intensity: float | None
  gflops: float
  gbs: float
  bound: str | None


class PeaksRow(TypedDict):
  gflops: float
  benchmark: float                # what the benchmark reached (gflops: the roof, a faster kernel's where one was)
  gbs: float
  ridge: float
  how: str
  measured: str


class RooflineData(TypedDict):
  points: list[PointRow]
  peaks: dict[str, PeaksRow]
  notes: list[str]
  ran: int                        # kernels that ran inside the capture (a point each, where tinygrad estimated them)


class RunMsg(TypedDict):
  type: Literal["run"]
  kernels: list[list[str]]        # [display name, the step it opens ("" for none)], by index
  estimates: list[list[int] | None]  # tinygrad's [FLOPs, bytes] estimate of each kernel (per launch: VIZ's FLOPS and B/s)
  timeline: TimelineData
  memory: MemoryData
  roofline: RooflineData


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


def timeline_data(trace: Trace, index: dict[int, int]) -> TimelineData:
  tl = trace.timeline()
  lanes = {n: i for i, n in enumerate(tl.lanes)}
  names: dict[str, int] = {}
  kinds = {k: i for i, k in enumerate(KINDS)}
  def kernel(x: Launch) -> int: return index.get(id(x.kernel), -1) if x.kernel is not None else -1
  ls = tl.launches
  timed = [i for i, x in enumerate(ls) if x.kind == "kernel" and x.duration_us is not None]
  slowest = sorted(timed, key=lambda i: -(ls[i].duration_us or 0.0))[:SLOWEST]
  return TimelineData(
    lanes=list(tl.lanes), kinds=list(KINDS),
    lane=[lanes[x.lane] for x in ls], name=[names.setdefault(x.name, len(names)) for x in ls],
    kind=[kinds.get(x.kind, kinds["other"]) for x in ls], start=[_us(x.start_us) for x in ls],
    dur=[_us(x.duration_us) if x.duration_us is not None else None for x in ls], kernel=[kernel(x) for x in ls],
    jit=[x.jit if x.jit is not None else -1 for x in ls], replay=[x.replay if x.replay is not None else -1 for x in ls],
    names=list(names), jits=list(tl.jits),
    jit_runs=[[r.jit, r.replay, _us(r.start_us), _us(r.end_us), r.launches] for r in tl.jit_runs],
    moved=[[i, x.nbytes] for i, x in enumerate(ls) if x.nbytes is not None],
    slowest=slowest, duration=_us(tl.duration_us), source=tl.source, summary=tl.summary())


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
  points = [PointRow(kernel=index[id(p.kernel)], device=p.device, flops=p.flops, bytes=p.bytes, runs=p.runs,
                     time_us=_us(p.time_us), intensity=p.intensity, gflops=p.gflops, gbs=p.gbs, bound=roof.bound(p))
            for p in roof.points if id(p.kernel) in index]
  placed = {id(p.kernel) for p in roof.points}
  ran = [k for k in trace.kernels if k.run_times]
  notes = [*roof.notes, *(f"{k.display_name}: ran, but tinygrad gave no FLOPs or bytes estimate to place it"
                          for k in ran if id(k) not in placed)]
  return RooflineData(points=points, notes=notes, ran=len(ran),
                      peaks={d: PeaksRow(gflops=pk.gflops, benchmark=pk.benchmark_gflops,
                                             gbs=pk.gbs, ridge=pk.ridge, how=pk.how, measured=pk.measured)
                             for d, pk in roof.peaks.items()})


def run_message(trace: Trace, peaks: bool = True) -> RunMsg:
  """The run as the *timeline*, *memory* and *roofline* tabs draw it; peaks: look up (measure once, then cache) each
  device's peaks for the roofline."""
  kernels, index = _kernel_index(trace)
  estimates = [[k.flops, k.bytes] if k.flops is not None and k.bytes is not None else None for k in trace.kernels]
  return RunMsg(type="run", kernels=kernels, estimates=estimates, timeline=timeline_data(trace, index), memory=memory_data(trace, index),
                roofline=roofline_data(trace, index, peaks))

