"""The runtime side of a trace as plain records: tinygrad's profile events, and what a capture adds to them.

Owns: the records a trace holds of the run (ExecRecord: each launch tinygrad's runner made, its "exec" event; RangeRecord:
a span a device or tinygrad's graph runner reported; SpanRecord: one of tinygrad's host-side spans, its compiler's and
the Tensor methods'; MemRecord: a buffer's "alloc" or "free"; SyncRecord; DeviceRecord;
Profile, all of them) and turning tinygrad's event objects (ProfilePointEvent, ProfileRangeEvent, ProfileGraphEvent,
ProfileDeviceEvent, from a capture or from tinygrad's profile.pkl) into them, as tinygrad's VIZ reads them (device clocks
moved by each device's tdiff, graph batches flattened into their launches). Records hold plain values only (never a
UOp, Buffer or TracingKey). It patches nothing and reads no file.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from tinygrad.device import ProfileDeviceEvent, ProfileGraphEvent
from tinygrad.helpers import ProfilePointEvent, ProfileRangeEvent, TracingKey, ansistrip

CPU_LANES = frozenset({"USER", "TINY", "GC"})  # tinygrad's host-side spans (Tensor methods, rewrites, gc): not the run's


@dataclass(slots=True)
class ExecRecord:
  """One call tinygrad's runner made (its "exec" event): a kernel launch, a copy, a graph batch, ..."""
  num: int                                  # the event's number (tinygrad's key)
  device: str
  name: str
  kind: str                                 # "kernel", "copy", "graph" or "other"
  st: float                                 # µs on tinygrad's perf_counter_us clock: when the call began
  dur: float | None                         # µs of device time, as the device measured it (None: not measured)
  wall: float | None                        # µs the call took on the host (a capture's own timing; None in profile.pkl)
  bufs: tuple[int, ...]                     # the buffers it was given, by number (MemRecord.num)
  outs: tuple[int, ...]                     # indexes into bufs it writes
  ins: tuple[int, ...]                      # indexes into bufs it reads
  key: bytes = b""                          # a kernel's SOURCE key (Program.source_key): the Kernel it runs
  prog: bytes = b""                         # a kernel's PROGRAM key (tinygrad's profile_key)
  jit: tuple[int, int] | None = None        # (which TinyJit of the run, its run: 0 the captured batch, n its n-th replay)
  counted: bool = True                      # tinygrad counted it in its stats (GlobalCounters, DEBUG=2's lines): a call made
                                            # with update_stats off (the copy out of .numpy(), .tolist()) is not (older
                                            # traces' records have no such field: read it with getattr)


@dataclass(slots=True)
class RangeRecord:
  """A span a device reported (HCQ and Metal kernels and copies, NULL devices), or a launch inside a graph batch."""
  device: str
  name: str
  st: float                                 # µs, on the host's clock (the device's tdiff added)
  en: float
  key: bytes | None = None                  # tinygrad's profile_key: the PROGRAM of a kernel's launch
  nbytes: int | None = None                 # what a copy moved, where tinygrad says
  graph: int | None = None                  # the graph batch (ProfileGraphEvent, in order) it ran in


@dataclass(slots=True)
class SpanRecord:
  """A span of tinygrad's host-side lanes (its ProfileRangeEvents on TINY: schedules, kernels' codegen, each rewrite
  step; on USER: the Tensor methods called), or a stage of a kernel's linearize/render step tgviz timed (linearize,
  render, compile: the device compiler), with the group and step of the trace it is (or ran in). µs, on tinygrad's
  perf_counter_us clock."""
  lane: str                                 # "TINY" or "USER", as tinygrad's VIZ names the lanes
  name: str
  st: float
  en: float
  kind: str                                 # "group", "step", "span" (another of tinygrad's), "user", or a stage: "render", ...
  group: int | None = None                  # the trace's group (Recording.groups) it is or ran in
  step: int | None = None                   # its step in that group


@dataclass(slots=True)
class MemRecord:
  """A buffer allocated or freed (tinygrad's "alloc" and "free" events), in the order tinygrad made them."""
  kind: str                                 # "alloc" or "free"
  num: int
  device: str
  ts: float                                 # µs
  dtype: str = ""
  itemsize: int = 0
  size: int = 0                             # elements


@dataclass(slots=True)
class SyncRecord:
  """A device synchronize inside a capture."""
  device: str
  st: float
  en: float


@dataclass(slots=True)
class DeviceRecord:
  """A device tinygrad described (ProfileDeviceEvent): its clock's offset from the host's, and its properties."""
  device: str
  tdiff: float
  props: dict[str, Any] = field(default_factory=dict)


@dataclass
class Profile:
  """Everything a trace holds of the run: tinygrad's profile events as records, and what a capture adds."""
  start: float                              # µs: when the capture began (profile.pkl: its first event)
  end: float
  execs: list[ExecRecord] = field(default_factory=list)
  ranges: list[RangeRecord] = field(default_factory=list)
  mem: list[MemRecord] = field(default_factory=list)
  syncs: list[SyncRecord] = field(default_factory=list)
  devices: list[DeviceRecord] = field(default_factory=list)
  graphs: int = 0                           # graph batches (ProfileGraphEvent)
  views: dict[int, tuple[int, int]] = field(default_factory=dict)  # a view buffer's number -> (its base's, byte offset)
  progs: dict[bytes, bytes] = field(default_factory=dict)          # PROGRAM key -> SOURCE key, of the kernels launched
  jits: list[str] = field(default_factory=list)                    # the name of each TinyJit that ran, in order
  mem_before: dict[str, int] = field(default_factory=dict)         # bytes tinygrad counted in use per device at the start
  freed: dict[int, int] = field(default_factory=dict)              # a freed buffer's number -> the bytes tinygrad counted
  source: str = "capture"                                          # "capture" or "profile.pkl"
  spans: list[SpanRecord] = field(default_factory=list)            # tinygrad's host-side spans (absent from traces saved
                                                                   # before they were kept: read with getattr)


def event_name(n: Any) -> str:
  return ansistrip(n.display_name if isinstance(n, TracingKey) else str(n))


def _kind(name: str) -> str:
  """A launch's kind from the name tinygrad gives it (get_call_name), where the capture did not see the call."""
  if name.startswith("copy "): return "copy"
  if name.startswith("batched "): return "graph"
  if name.startswith("enc/dec "): return "other"
  return "kernel"


def _plain(props: Any) -> dict[str, Any]:
  ok = (str, int, float, bool, type(None))
  return {str(k): v for k, v in props.items() if isinstance(v, ok)} if isinstance(props, dict) else {}


def is_null_device(device: str) -> bool:
  return device.split(":")[0] == "NULL"  # a NULL device runs nothing: its times are made up


def profile_of(events: Iterable[Any], timing: dict[int, tuple] | None = None, *, start: float | None = None, end: float | None = None,
               source: str = "capture", **extra: Any) -> Profile:
  """Records of tinygrad's profile events, in their order. timing: an exec event's number -> (device seconds or None, host
  µs, kind, SOURCE key, PROGRAM key, jit run, whether tinygrad counted it in its stats), what a capture saw of the call;
  extra: Profile's other fields."""
  events = list(events)
  tdiff = {e.device: float(e.tdiff) for e in events if isinstance(e, ProfileDeviceEvent)}
  prof = Profile(0.0, 0.0, source=source, **extra)
  timing = timing or {}
  for e in events:
    if isinstance(e, ProfilePointEvent):
      if e.name == "exec": prof.execs.append(_exec(e, timing.get(e.key)))
      elif e.name == "alloc":
        dt = e.arg["dtype"]
        prof.mem.append(MemRecord("alloc", int(e.key), e.device, float(e.ts), dt.name, int(dt.itemsize), int(e.arg["sz"])))
      elif e.name == "free": prof.mem.append(MemRecord("free", int(e.key), e.device, float(e.ts)))
    elif isinstance(e, ProfileRangeEvent):
      if e.device in CPU_LANES: continue
      d = tdiff.get(e.device, 0.0)
      nbytes = e.name.ret if isinstance(e.name, TracingKey) and isinstance(e.name.ret, int) else None
      st = float(e.st) + d
      prof.ranges.append(RangeRecord(e.device, event_name(e.name), st, float(e.en) + d if e.en is not None else st, e.profile_key, nbytes))
    elif isinstance(e, ProfileGraphEvent):
      for ent in e.ents:
        d = tdiff.get(ent.device, 0.0)
        prof.ranges.append(RangeRecord(ent.device, event_name(ent.name), float(e.sigs[ent.st_id]) + d, float(e.sigs[ent.en_id]) + d,
                                       ent.profile_key, graph=prof.graphs))
      prof.graphs += 1
    elif isinstance(e, ProfileDeviceEvent): prof.devices.append(DeviceRecord(e.device, float(e.tdiff), _plain(e.props)))
  times = [x.st for x in prof.execs] + [x.st for x in prof.ranges] + [x.ts for x in prof.mem] + [x.st for x in prof.syncs]
  ends = [x.st + (x.dur or x.wall or 0.0) for x in prof.execs] + [x.en for x in prof.ranges] + [x.ts for x in prof.mem] + \
         [x.en for x in prof.syncs]
  prof.start = start if start is not None else min(times, default=0.0)
  prof.end = end if end is not None else max(ends, default=prof.start)
  return prof


def _exec(e: ProfilePointEvent, seen: tuple | None) -> ExecRecord:
  arg, name = e.arg, ansistrip(str(e.arg.get("name", "")))
  bufs = tuple(int(b) for b in arg.get("bufs", ()))
  outs, ins = tuple(arg.get("outputs", ())), tuple(arg.get("inputs", ()))
  if seen is None: return ExecRecord(int(e.key), e.device, name, _kind(name), float(e.ts), None, None, bufs, outs, ins)
  seconds, wall, kind, key, prog, jit, counted = seen
  dur = seconds * 1e6 if seconds is not None and not is_null_device(e.device) else None
  return ExecRecord(int(e.key), e.device, name, kind, float(e.ts), dur, wall, bufs, outs, ins, key, prog, jit, counted)


def is_profile_dump(obj: Any) -> bool:
  """Whether an unpickled object is tinygrad's profile.pkl: its list of profile events."""
  from tinygrad.helpers import ProfileEvent
  return isinstance(obj, list) and bool(obj) and all(isinstance(e, ProfileEvent) for e in obj)
