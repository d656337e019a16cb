"""The run a trace recorded: its timeline, its memory over time and its kernels' roofline, as plain dataclasses.

Built from the trace's profile records (tinygrad's own profile events, captured as ``VIZ=-1 PROFILE=1`` records them, or
read from its profile.pkl) and the trace's kernels; reading them needs no knowledge of tinygrad. The lanes, the pairing
of a device's spans with the launches they time, and the memory peak follow tinygrad's VIZ. :mod:`tgviz.trace.trace`'s Trace
hands these out (``trace.timeline()``, ``trace.memory()``, ``trace.roofline()``); this module draws nothing.
"""
from __future__ import annotations

import bisect
import functools
import gc
from collections import Counter, deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tgviz import bridge as tg
from tgviz.trace.units import copy_name, count_text, plural, time_text
from tgviz.trace.verdicts import DevicePeaks, Verdict, device_peaks

if TYPE_CHECKING:
  from tgviz.trace.kernel import Kernel

def _label(k: Kernel) -> str:
  """The name a kernel is shown by: numbered where kernels of the trace share a name (E_2 #1, E_2 #2)."""
  return k.display_name


LAUNCH_COLUMNS = ("lane", "name", "kind", "start_us", "duration_us", "kernel", "jit", "replay", "graph", "nbytes")  # Timeline.table


@dataclass(eq=False, slots=True)
class Launch:
  """One thing a device did in the run: a kernel launch, a copy, a graph batch, a synchronize."""
  lane: str                                 # the device it ran on (one lane per device, as tinygrad's VIZ draws them)
  name: str
  kind: str                                 # "kernel", "copy", "graph" (a batch of launches), "sync" or "other"
  start_us: float                           # from the start of the run (the capture; profile.pkl: its first event)
  duration_us: float | None                 # device time where the device measured it, else the host's time for the call;
                                            # None where nothing ran (a NULL device's kernels)
  kernel: Kernel | None = None              # the trace's kernel it runs (None: not a kernel, or compiled outside the trace)
  jit: int | None = None                    # the TinyJit it ran in (Timeline.jits[jit]); None outside one
  replay: int | None = None                 # 0: the run of the captured batch; n: its n-th replay
  graph: int | None = None                  # the graph batch (a "graph" launch, by its order) this launch ran inside
  timed_by: str = ""                        # "device", "host" or "" (no time)
  nbytes: int | None = None                 # what a copy moved, where the device's span says (VIZ shows it, and B/s)
  args: int | None = None                   # how many buffers the call was given (DEBUG=2's "arg"); None: not a call of the
                                            # runner's (a launch inside a graph batch, a sync)
  host_us: float | None = None              # how long the call took on the host, from its start (a capture's; not profile.pkl's)
  counted: bool = True                      # tinygrad counted it in its stats and DEBUG=2 lines (not: a copy out for .numpy())

  @property
  def end_us(self) -> float:
    return self.start_us + (self.duration_us or 0.0)

  def row(self) -> dict[str, Any]:
    """This launch as a row of :meth:`Timeline.table` (the kernel by its display name)."""
    return {"lane": self.lane, "name": self.name, "kind": self.kind, "start_us": round(self.start_us, 3),
            "duration_us": round(self.duration_us, 3) if self.duration_us is not None else None,
            "kernel": _label(self.kernel) if self.kernel is not None else None, "jit": self.jit, "replay": self.replay,
            "graph": self.graph, "nbytes": self.nbytes}


@dataclass
class JitRun:
  """One run of a TinyJit's captured batch: the first (replay 0) or a replay, as one span of its launches."""
  jit: int
  name: str                                 # the jitted function's name
  replay: int
  start_us: float
  end_us: float
  launches: int                             # how many launches it made (kernels, copies, graph batches and their launches)
  first: int                                # the index of its first launch in Timeline.launches


@dataclass
class Timeline:
  """Every launch, copy and sync of the run, in start order, on one lane per device; iterating a Timeline iterates its
  launches. TinyJit runs are marked on each launch (``jit``, ``replay``) and summed up in ``jit_runs``."""
  launches: list[Launch] = field(default_factory=list)
  lanes: list[str] = field(default_factory=list)     # the devices, in the order they first did something
  jits: list[str] = field(default_factory=list)      # the TinyJits that ran, by index
  jit_runs: list[JitRun] = field(default_factory=list)
  duration_us: float = 0.0                           # the run's length
  source: str = ""                                   # "capture" or "profile.pkl"

  def __len__(self) -> int: return len(self.launches)
  def __iter__(self) -> Iterator[Launch]: return iter(self.launches)
  def __getitem__(self, i: int) -> Launch: return self.launches[i]

  def kernels(self) -> list[Launch]:
    """The kernel launches (graph batches' launches included)."""
    return [x for x in self.launches if x.kind == "kernel"]

  def lane(self, device: str) -> list[Launch]:
    return [x for x in self.launches if x.lane == device]

  def without_replays(self) -> list[Launch]:
    """The launches, each TinyJit's captured batch once: its replays left out (``jit_runs`` has one span for each)."""
    return [x for x in self.launches if not x.replay]

  def table(self) -> list[dict[str, Any]]:
    """One plain row per launch (``pandas.DataFrame(timeline.table())``): the columns of LAUNCH_COLUMNS."""
    return [x.row() for x in self.launches]

  def outside_schedules(self) -> list[Launch]:
    """The copies tinygrad ran outside any schedule (its Buffer.copy_from: a result read back by .numpy(), .tolist()
    or .item(), or a buffer filled from host memory directly): no call of the program (trace.program()) is one of them.
    Known from a capture's launches only (tinygrad leaves these out of its stats: Launch.counted)."""
    return [x for x in self.launches if x.kind == "copy" and not x.counted]

  def outside_text(self) -> str:
    """outside_schedules in words, as the timeline's head and the program map's summary say them ("1 copy outside any
    schedule: a result read back"); "" where there are none."""
    if not (out := self.outside_schedules()): return ""
    back = sum(x.lane == "PYTHON" for x in out)  # a copy's lane is the device it wrote to: PYTHON, host memory, read back
    parts = ((back, "result read back", "results read back"), (len(out) - back, "buffer filled from host memory", "buffers filled from host memory"))
    what = ", ".join(("a " if len(out) == 1 else "1 ") + one if n == 1 else f"{n} {many}" for n, one, many in parts if n)
    return f"{len(out)} cop{'y' if len(out) == 1 else 'ies'} outside any schedule: {what}"

  def summary(self) -> str:
    kinds = ', '.join(f'{n} {k}' for k, n in Counter(x.kind for x in self.launches).items())  # (in order of first launch)
    jit = f", {plural(len(self.jit_runs), 'TinyJit run')}" if self.jit_runs else ""
    outside = f"; {text}" if (text := self.outside_text()) else ""
    return f"timeline: {plural(len(self.launches), 'launch', 'launches')} ({kinds or 'none'}{outside}) on " \
           f"{', '.join(self.lanes) or 'no device'} over {time_text(self.duration_us)}{jit}"

  __str__ = summary


@dataclass(eq=False)
class BufferLife:
  """One buffer allocation of the run, from its allocation to its free, and the launches that wrote or read it (a view's
  launches count for the buffer it is part of)."""
  num: int                                  # tinygrad's number for the buffer
  device: str
  dtype: str
  size: int                                 # elements
  nbytes: int
  alloc_us: float
  free_us: float | None = None              # None: still allocated when the run ended
  writes: list[Launch] = field(default_factory=list)
  reads: list[Launch] = field(default_factory=list)

  @property
  def kernels(self) -> list[Kernel]:
    """The trace's kernels that wrote or read it, each once, in order."""
    return list({id(k): k for x in [*self.writes, *self.reads] if (k := x.kernel) is not None}.values())

  def alive(self, t_us: float) -> bool:
    return self.alloc_us <= t_us and (self.free_us is None or t_us < self.free_us)

  def row(self) -> dict[str, Any]:
    """A plain row; a copy named with its bytes by tgviz's rule."""
    return {"num": self.num, "device": self.device, "dtype": self.dtype, "size": self.size, "nbytes": self.nbytes,
            "alloc_us": round(self.alloc_us, 3), "free_us": round(self.free_us, 3) if self.free_us is not None else None,
            "writers": sorted({_label(x.kernel) if x.kernel is not None else copy_name(x.name, x.nbytes) for x in self.writes}),
            "readers": sorted({_label(x.kernel) if x.kernel is not None else copy_name(x.name, x.nbytes) for x in self.reads})}

  def __repr__(self) -> str:
    return f"<BufferLife {self.num} {self.device} {count_text(self.dtype, self.size)} {self.nbytes} B>"


@dataclass(eq=False, slots=True)
class MemEvent:
  t_us: float
  kind: str                                 # "alloc" or "free"
  buffer: BufferLife
  in_use: int                               # bytes the run's buffers hold afterwards, on all devices but DISK
  device_in_use: int                        # ... on the buffer's device


@dataclass
class Memory:
  """The run's buffer allocations and frees over time, with sizes and dtypes; the peak and what was alive at it.
  Counted as tinygrad counts GlobalCounters.mem_used (DISK buffers left out): ``before`` is what tinygrad counted as in
  use when the run began, so tinygrad's own high-water mark is before + peak; the buffers alive at the peak are the
  run's, and hold peak + ``freed_before`` bytes (buffers allocated before the run and freed in it by then; ``freed``: in
  all)."""
  buffers: list[BufferLife] = field(default_factory=list)
  events: list[MemEvent] = field(default_factory=list)
  peak: int = 0
  peak_us: float | None = None
  at_peak: list[BufferLife] = field(default_factory=list)
  device_peaks: dict[str, int] = field(default_factory=dict)  # per device, as tinygrad's VIZ computes its memory lanes
  before: dict[str, int] = field(default_factory=dict)
  freed_before: int = 0
  freed: int = 0

  def alive_at(self, t_us: float) -> list[BufferLife]:
    return [b for b in self.buffers if b.alive(t_us)]

  def table(self) -> list[dict[str, Any]]:
    """One plain row per buffer alive at the peak, biggest first."""
    return [b.row() for b in sorted(self.at_peak, key=lambda b: -b.nbytes)]

  def summary(self) -> str:
    at = f" at {time_text(self.peak_us)}" if self.peak_us is not None else ""
    return f"memory: {plural(len(self.buffers), 'allocation')}, peak {self.peak:,} B with {plural(len(self.at_peak), 'buffer')} alive{at}"

  __str__ = summary


@dataclass
class RooflinePoint:
  """A kernel on the roofline: tinygrad's estimates of its FLOPs and bytes, and what its launches achieved."""
  kernel: Kernel
  device: str
  flops: int
  bytes: int
  runs: int
  time_us: float                            # its launches' device time in total
  intensity: float | None                   # FLOPs per byte
  gflops: float                             # achieved GFLOP/s
  gbs: float                                # achieved GB/s
  float_flops: int | None = None            # the float work of flops (the rest: integer ops, counted apart)
  median_us: float | None = None            # its time (Kernel.timing: re-timed where it was)
  float_gflops: float | None = None         # float_flops over median_us: where it is drawn, under the float32 roof

  def row(self) -> dict[str, Any]:
    return {"kernel": _label(self.kernel), "device": self.device, "flops": self.flops, "bytes": self.bytes, "runs": self.runs,
            "time_us": round(self.time_us, 3), "intensity": self.intensity, "gflops": self.gflops, "gbs": self.gbs,
            "float_flops": self.float_flops, "median_us": self.median_us, "float_gflops": self.float_gflops}


@dataclass
class Roofline:
  """Each kernel that ran with tinygrad's estimates, placed by arithmetic intensity and achieved GFLOP/s, against each
  device's peaks (``peaks[device]``; missing where they could not be measured, ``notes`` says why)."""
  points: list[RooflinePoint] = field(default_factory=list)
  peaks: dict[str, DevicePeaks] = field(default_factory=dict)
  notes: list[str] = field(default_factory=list)

  def bound(self, p: RooflinePoint) -> str | None:
    """"memory" or "compute": which roof is the lower at the point's intensity (None without peaks)."""
    if (pk := self.peaks.get(p.device)) is None or p.intensity is None: return None
    return "memory" if p.intensity < pk.ridge else "compute"

  def roof(self, p: RooflinePoint) -> float | None:
    """The GFLOP/s the device's roofs allow at the point's intensity."""
    if (pk := self.peaks.get(p.device)) is None or p.intensity is None: return None
    return min(pk.gflops, pk.gbs * p.intensity)

  def verdict(self, p: RooflinePoint) -> Verdict | None:
    """Which limit the kernel ran into (memory, compute or latency), with the fraction of its roof reached (see
    tgviz.trace.verdicts); None without peaks."""
    return p.kernel.verdict(self.peaks.get(p.device))

  def table(self) -> list[dict[str, Any]]:
    said = lambda v: {"verdict": v.bound, "roof_fraction": v.fraction, "why": v.why} if v else dict.fromkeys(("verdict", "roof_fraction", "why"))  # noqa: E731
    return [{**p.row(), "bound": self.bound(p), "roof_gflops": self.roof(p), **said(self.verdict(p))} for p in self.points]

  def summary(self) -> str:
    lines = [f"roofline: {plural(len(self.points), 'kernel')}"]
    for d, pk in self.peaks.items():
      lines.append(f"  {d}: peak {pk.gflops:,.1f} GFLOP/s, {pk.gbs:,.1f} GB/s (ridge {pk.ridge:.2f} FLOP/B; {pk.how}, {pk.measured})")
    lines += [f"  {n}" for n in self.notes]
    return "\n".join(lines)

  __str__ = summary


def _kernel_kind(name: str, key: bytes | None, nbytes: int | None) -> str:
  return "copy" if "->" in name or nbytes is not None else "kernel" if key else "other"


def build(prof: tg.Profile | None, kernels: dict[bytes, Kernel]) -> tuple[Timeline, Memory]:
  """The timeline and the memory view of a trace's profile records (kernels: SOURCE key -> the trace's kernel)."""
  if prof is None: return Timeline(), Memory()
  enabled = gc.isenabled()
  gc.disable()  # tens of thousands of new objects, none of them garbage: the collector's passes would only cost time
  try: return _build(prof, kernels)
  finally:
    if enabled: gc.enable()


def _build(prof: tg.Profile, kernels: dict[bytes, Kernel]) -> tuple[Timeline, Memory]:
  t0, out, pairs = prof.start, [], []
  def kernel(src: bytes | None) -> Kernel | None: return kernels.get(src) if src else None
  # a device's own spans of its launches (HCQ, Metal, NULL): with a capture's PROGRAM keys by key, else in order per device
  by_key: dict[tuple[str, bytes], deque[tg.RangeRecord]] = {}
  by_dev: dict[str, deque[tg.RangeRecord]] = {}
  for r in prof.ranges:
    if r.graph is None and r.key is not None:
      by_key.setdefault((r.device, r.key), deque()).append(r)
      by_dev.setdefault(r.device, deque()).append(r)
  used: set[int] = set()
  null = functools.cache(tg.is_null_device)
  graph_marks: list[tuple[int | None, int | None]] = []  # per graph batch, the TinyJit run it ran in
  batches: dict[int, tuple[float, float]] = {}  # per graph batch, the device's span of its launches (VIZ's "<dev> Graph" lane)
  for r in prof.ranges:
    if r.graph is not None:
      a, b = batches.get(r.graph, (r.st, r.en))
      batches[r.graph] = (min(a, r.st), max(b, r.en))
  for e in prof.execs:
    span = None
    if e.kind == "kernel":
      q = by_key.get((e.device, e.prog)) if e.prog else by_dev.get(e.device)
      while q and id(q[0]) in used: q.popleft()
      if q: used.add(id(span := q.popleft()))
    jit, replay = e.jit if e.jit is not None else (None, None)
    if e.kind == "graph" and (g := batches.get(len(graph_marks))): span = tg.RangeRecord(e.device, e.name, *g)
    if span is not None: st, dur, by = span.st, (None if null(e.device) else span.en - span.st), ("" if null(e.device) else "device")
    elif e.dur is not None: st, dur, by = e.st, e.dur, "device"
    elif e.kind != "kernel" and e.wall is not None: st, dur, by = e.st, e.wall, "host"
    else: st, dur, by = e.st, None, ""
    launch = Launch(e.device, e.name, e.kind, st - t0, dur, kernel(e.key), jit, replay, None, by, args=len(e.bufs), host_us=e.wall,
                    counted=getattr(e, "counted", True))
    if e.kind == "graph": graph_marks.append((jit, replay))
    out.append(launch)
    pairs.append((e, launch))
  for r in prof.ranges:
    if id(r) in used: continue             # it timed a launch above
    jit, replay = graph_marks[r.graph] if r.graph is not None and r.graph < len(graph_marks) else (None, None)
    nothing = null(r.device)
    out.append(Launch(r.device, r.name, _kernel_kind(r.name, r.key, r.nbytes), r.st - t0, None if nothing else r.en - r.st,
                      kernel(prof.progs.get(r.key)) if r.key else None, jit, replay, r.graph, "" if nothing else "device", r.nbytes))
  out += [Launch(s.device, "synchronize", "sync", s.st - t0, s.en - s.st, timed_by="host") for s in prof.syncs]
  out.sort(key=lambda x: x.start_us)
  timeline = Timeline(out, list(dict.fromkeys(x.lane for x in out)), list(prof.jits), _jit_runs(out, prof.jits),
                      prof.end - prof.start, prof.source)
  return timeline, _memory(prof, pairs)


def _jit_runs(launches: list[Launch], names: list[str]) -> list[JitRun]:
  runs: dict[tuple[int, int], JitRun] = {}
  for i, x in enumerate(launches):
    if x.jit is None or x.replay is None: continue
    if (r := runs.get((x.jit, x.replay))) is None:
      runs[(x.jit, x.replay)] = JitRun(x.jit, names[x.jit] if x.jit < len(names) else "TinyJit", x.replay, x.start_us, x.end_us, 1, i)
    else:
      r.end_us, r.launches = max(r.end_us, x.end_us), r.launches + 1
  return sorted(runs.values(), key=lambda r: r.start_us)


def _memory(prof: tg.Profile, pairs: list[tuple[tg.ExecRecord, Launch]]) -> Memory:
  t0, mem = prof.start, Memory(before=dict(prof.mem_before))
  lives: dict[int, list[BufferLife]] = {}   # a number's allocations in order (a buffer freed and allocated again keeps its number)
  current: dict[int, BufferLife] = {}
  total, per_dev, best, best_at, freed, freed_by = 0, dict[str, int](), 0, -1, 0, dict[int, int]()
  sizes = getattr(prof, "freed", {})      # (absent from traces saved before it was recorded)
  for m in prof.mem:
    if m.kind == "alloc":
      b = BufferLife(m.num, m.device, m.dtype, m.size, min(1_000_000_000_000, m.size) * m.itemsize, m.ts - t0)
      mem.buffers.append(b)
      lives.setdefault(m.num, []).append(b)
      current[m.num] = b
      delta = b.nbytes
    elif m.num in current:
      b = current.pop(m.num)
      b.free_us, delta = m.ts - t0, -b.nbytes
    elif (size := sizes.get(m.num)):  # a buffer allocated before the run: not the run's, but tinygrad stops counting it
      total -= size
      freed += size
      gone = BufferLife(m.num, m.device, "", 0, size, 0.0)
      gone.free_us = m.ts - t0
      mem.events.append(MemEvent(m.ts - t0, m.kind, gone, total, per_dev.get(m.device, 0)))
      freed_by[len(mem.events) - 1] = freed
      continue
    else: continue
    per_dev[b.device] = per_dev.get(b.device, 0) + delta
    mem.device_peaks[b.device] = max(mem.device_peaks.get(b.device, 0), per_dev[b.device])
    if not b.device.startswith("DISK"): total += delta
    mem.events.append(MemEvent(m.ts - t0, m.kind, b, total, per_dev[b.device]))
    if total > best: best, best_at = total, len(mem.events) - 1
    freed_by[len(mem.events) - 1] = freed
  mem.peak, mem.freed = best, freed
  if best_at >= 0:
    mem.peak_us, mem.freed_before = mem.events[best_at].t_us, freed_by[best_at]
    alive: dict[int, BufferLife] = {}
    for ev in mem.events[:best_at + 1]:
      if ev.kind == "alloc": alive[id(ev.buffer)] = ev.buffer
      elif id(ev.buffer) in alive: del alive[id(ev.buffer)]
    mem.at_peak = [b for b in alive.values() if not b.device.startswith("DISK")]
  # the launches that wrote or read each buffer: the allocation of its number live when the call ended
  starts = {n: [b.alloc_us for b in ls] for n, ls in lives.items()}
  views = prof.views
  for e, launch in pairs:
    end = e.st - t0 + (e.wall or e.dur or 0.0)
    for i, num in enumerate(e.bufs):
      num = views[num][0] if num in views else num
      if (ls := lives.get(num)) is None: continue
      b = ls[max(bisect.bisect_right(starts[num], end) - 1, 0)]
      if i in e.outs: b.writes.append(launch)
      if i in e.ins or i not in e.outs: b.reads.append(launch)
  return mem


def roofline_points(kernels: list[Kernel]) -> list[RooflinePoint]:
  """The kernels that ran, with tinygrad's estimates of their FLOPs and bytes, as roofline points."""
  points = []
  for k in kernels:
    times = k.run_times
    if not times or k.flops is None or k.bytes is None or (total := sum(times)) <= 0: continue
    n, ff, t = len(times), k.float_flops, k.timing
    med = t.median_us if t is not None else None
    points.append(RooflinePoint(k, k.device, k.flops, k.bytes, n, total * 1e6, k.flops / k.bytes if k.bytes else None,
                                k.flops * n / total / 1e9, k.bytes * n / total / 1e9, ff, med,
                                ff / med / 1e3 if ff is not None and med else None))
  return points


def roofline(kernels: list[Kernel], peaks: bool = True, cache_dir: Any = None, measure: bool = True) -> Roofline:
  """The kernels' roofline; peaks: look up each device's peaks (measure: once, where they were never measured; then
  cached)."""
  out = Roofline(roofline_points(kernels))
  if not out.points: out.notes.append("no kernel ran with tinygrad's FLOPs and bytes estimates and a measured device time")
  if peaks:
    for device in dict.fromkeys(p.device for p in out.points):
      pk, why = device_peaks(device, cache_dir, measure)
      if pk is None:
        if why: out.notes.append(f"{device}: {why}")
        continue
      out.peaks[device], mine = pk, [p for p in out.points if p.device == device]
      fastest = max(mine, key=lambda p: p.float_gflops or 0.0)
      quickest = min((p for p in mine if p.median_us), key=lambda p: p.median_us or 0.0, default=None)
      out.notes += pk.beaten((_label(fastest.kernel), fastest.float_gflops or 0.0),
                             (_label(quickest.kernel), quickest.median_us or 0.0) if quickest is not None else None)
  return out
