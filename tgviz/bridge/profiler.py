"""tinygrad's profiler switched on for a capture: the Profiler patch, and what it hands over as a Profile.

Owns: PROFILE on inside the block, with what tinygrad's profiler appends meanwhile (its exec, alloc and free events,
device spans, graph batches) taken out of tinygrad's event lists when the block ends, so that they hold nothing more
afterwards (unless tinygrad was profiling already: then they keep it) and its exit hook never sees them, its host-side
spans (``host``) kept apart from the run's events; what the capture
adds to those events: each call's measured device time and host time, which TinyJit run a launch belongs to, each device
synchronize, which buffer a view is part of. It must not decide when it is entered (capture.Tracker does) nor build a
timeline or memory view from the records (tgviz.runtime does).
"""
from __future__ import annotations

import importlib
import itertools
import time
import weakref
from typing import Any

from tinygrad import helpers
from tinygrad.device import Buffer, Compiled, Device, ProfileDeviceEvent
from tinygrad.helpers import GlobalCounters, ProfileRangeEvent, perf_counter_us
from tinygrad.uop.ops import Ops

from tgviz.bridge.events import CPU_LANES, Profile, SyncRecord, profile_of
from tgviz.bridge.recorders import Patch, _all_subclasses

# buffer numbers a capture gives (tinygrad numbers a buffer by the length of its event list, which a capture shortens
# again): counted for the whole process, far above tinygrad's own, so that no two buffers alive at once share one
_NUMBERS = itertools.count(1 << 40)
_RUNNING: list[Profiler] = []


def running() -> bool:
  """Whether a capture's profiler is on (work done now would land in its trace)."""
  return bool(_RUNNING)


class Profiler(Patch):
  """tinygrad's profiler on for a block (PROFILE=1), as ``VIZ=-1 PROFILE=1`` runs it, plus each call's times, TinyJit runs,
  device synchronizes and buffer views. ``profile()``: the records, once the block ended."""

  def __init__(self, device: str = "") -> None:
    self.device = device                   # the capture's device: its runtime's synchronize is timed too
    self.timing: dict[int, tuple] = {}     # exec event number -> (device seconds, host µs, kind, SOURCE key, PROGRAM key, jit)
    self.syncs: list[SyncRecord] = []
    self.views: dict[int, tuple[int, int]] = {}
    self.progs: dict[bytes, bytes] = {}
    self.jits: list[str] = []
    self.jit: tuple[int, int] | None = None  # the TinyJit run going on
    self._events: list[Any] = []
    self.host: list[ProfileRangeEvent] = []  # tinygrad's host-side spans of the block (TINY, USER), once it ended
    self._lists: tuple[list, ...] = ()
    self._starts: tuple[int, ...] = ()
    self._syncing = 0
    self.start = self.end = 0.0
    self.mem_before: dict[str, int] = {}
    self.freed: dict[int, int] = {}        # a freed buffer's number -> the bytes GlobalCounters stopped counting for it

  def patches(self) -> list[tuple[Any, dict[str, Any]]]:
    from tinygrad.engine import jit, realize
    try: importlib.import_module(f"tinygrad.runtime.ops_{self.device.split(':')[0].lower()}")  # its device class, if not loaded yet
    except Exception: pass
    sync_classes = [c for c in _all_subclasses(Compiled) if "synchronize" in c.__dict__]
    return [(helpers.PROFILE, {"value": 1}), (realize, {"track_stats": self._timed(realize.track_stats)}),
            (jit._TinyJit, {"__call__": self._jit_runs(jit._TinyJit.__call__)}),
            (Buffer, {"trace_num": property(self._number), "deallocate": self._freeing(Buffer.deallocate)}),
            *[(c, {"synchronize": self._sync(c.__dict__["synchronize"])}) for c in sync_classes]]

  def __enter__(self) -> Profiler:
    self._lists = (helpers.cpu_events, Compiled.profile_events, Buffer.profile_events)
    self._starts = tuple(len(x) for x in self._lists)
    self._kept = bool(helpers.PROFILE)       # tinygrad profiles the whole run already: its lists keep what the block adds
    self.mem_before = {d: n for d, n in GlobalCounters.mem_used_per_device.items() if n}
    self.start = float(perf_counter_us())
    super().__enter__()
    _RUNNING.append(self)
    return self

  def __exit__(self, *exc: object) -> None:
    if self in _RUNNING: _RUNNING.remove(self)
    try:
      self._flush()
      self.end = float(perf_counter_us())
      # the run's events; tinygrad's host-side spans (rewrites, Tensor methods) apart: they hold its UOps (spans.host_spans
      # makes records of them, and the capture lets go of them)
      for lst, n in zip(self._lists, self._starts, strict=True):
        for e in lst[n:]: (self.host if isinstance(e, ProfileRangeEvent) and e.device in CPU_LANES else self._events).append(e)
    finally:
      try: super().__exit__(*exc)
      finally:
        if not self._kept:
          for lst, n in zip(self._lists, self._starts, strict=True): del lst[n:]

  def profile(self) -> Profile | None:
    """What the block recorded, as records (None when the profiler never came on)."""
    if not self.start: return None
    events, self._events = self._events, []
    return profile_of(events, self.timing, start=self.start, end=self.end or self.start, syncs=self.syncs, views=self.views,
                      progs=self.progs, jits=self.jits, mem_before=self.mem_before, freed=self.freed)

  def _flush(self) -> None:
    """Devices that report spans later (HCQ: at a synchronize) report them now, with their clock's offset (tinygrad's own
    exit does the same), while PROFILE is still on."""
    reported = {e.device.split(":")[0] for lst, n in zip(self._lists, self._starts, strict=True) for e in lst[n:]
                if isinstance(e, ProfileDeviceEvent)}
    self._syncing += 1
    try:
      for name in list(Device._opened_devices):
        dev = Device[name]
        if not getattr(dev, "sig_prof_records", None) and not self._spans(name): continue
        dev.synchronize()
        if name.split(":")[0] not in reported and self._spans(name): dev._at_profile_finalize()
    finally: self._syncing -= 1

  def _spans(self, device: str) -> bool:
    return any(isinstance(e, ProfileRangeEvent) and e.device.split(":")[0] == device.split(":")[0]
               for e in self._lists[1][self._starts[1]:])

  def _timed(self, track_stats):
    events, timing, progs, recorder = helpers.cpu_events, self.timing, self.progs, self
    def timed(ctx, call, st, ets):
      n = len(events)
      try: return track_stats(ctx, call, st, ets)
      finally:
        if (added := len(events) - n) > 0:
          wall, ast, key, prog = time.perf_counter_ns() / 1e3 - float(st), call.src[0], b"", b""
          if ast.op is Ops.PROGRAM:
            kind, prog = "kernel", ast.key
            key = progs.get(prog) or next((s.key for s in ast.src if s.op is Ops.SOURCE), b"")
            progs[prog] = key
          elif ast.op is Ops.COPY: kind = "copy"
          elif ast.op is Ops.CUSTOM_FUNCTION and ast.arg == "graph":
            kind = "graph"
            for c in ast.src[0].src:  # the graph's own launches: their PROGRAM keys, for the spans the graph reports
              if c.src[0].op is Ops.PROGRAM and (p := c.src[0].key) not in progs:
                progs[p] = next((s.key for s in c.src[0].src if s.op is Ops.SOURCE), b"")
          elif ast.op is Ops.CUSTOM_FUNCTION and ast.arg == "hcq": kind = "kernel"
          else: kind = "other"
          for i in range(added): timing[n + i] = (ets[i] if i < len(ets) else None, wall, kind, key, prog, recorder.jit, bool(ctx.update_stats))
    return timed

  def _jit_runs(self, call):
    """_TinyJit.__call__ marking what runs inside as its run: 0 the captured batch (the call that captures it runs it
    once), n its n-th replay; its first call, which runs the function as is, is no JIT run."""
    seen: dict[int, tuple[weakref.ref, int]] = {}
    recorder = self
    def __call__(tj, *args, **kwargs):
      if tj.cnt == 0 or not helpers.JIT: return call(tj, *args, **kwargs)
      if (ent := seen.get(id(tj))) is None or ent[0]() is not tj:
        ent = seen[id(tj)] = (weakref.ref(tj), len(recorder.jits))
        recorder.jits.append(getattr(tj.fxn, "__qualname__", None) or "TinyJit")
      before, recorder.jit = recorder.jit, (ent[1], tj.cnt - 1)
      try: return call(tj, *args, **kwargs)
      finally: recorder.jit = before
    return __call__

  def _freeing(self, deallocate):
    """Buffer.deallocate, noting the bytes tinygrad's GlobalCounters stops counting: a free event says no size, and a
    buffer allocated before the run is freed in it too (a notebook's earlier tensors)."""
    freed = self.freed
    def wrapped(buf, *args, **kwargs):
      if buf._base is None and not buf.device.startswith("DISK") and (buf.options is None or buf.options.external_ptr is None):
        freed[buf.trace_num] = buf.nbytes
      return deallocate(buf, *args, **kwargs)
    return wrapped

  def _number(self, buf: Buffer) -> int:
    """Buffer.trace_num: the buffer's number, made once (a view's notes the buffer it is part of)."""
    if (n := buf.__dict__.get("_trace_num")) is not None: return n
    # tinygrad profiling already keeps its lists whole: its own numbering stays unique (and fits VIZ's 32-bit keys)
    n = buf._trace_num = len(Buffer.profile_events) if self._kept else next(_NUMBERS)
    if buf._base is not None: self.views[n] = (buf._base.trace_num, buf.offset)  # offset: bytes
    return n

  def _sync(self, synchronize):
    syncs, recorder = self.syncs, self
    def wrapped(dev, *args, **kwargs):
      if recorder._syncing: return synchronize(dev, *args, **kwargs)  # one inside another (a subclass calling its base), or the flush
      recorder._syncing += 1
      st = perf_counter_us()
      try: return synchronize(dev, *args, **kwargs)
      finally:
        recorder._syncing -= 1
        syncs.append(SyncRecord(dev.device, float(st), float(perf_counter_us())))
    return wrapped
