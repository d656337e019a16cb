"""What if two kernels had fused: the schedule that made a buffer between them run again, from the trace alone, once as
it was and once with the condition that kept the buffer lifted, both traced, and compared.

Owns Fusion (``trace.fuse(...)``): the buffer asked about, the condition lifted (bridge.LIFTS: ranges, cost, reduce,
split, contiguous), the two runs' traces (``before``, ``after``: on the same fresh random inputs, never the user's
buffers), whether the buffer is gone, the kernels, buffers, device time and memory peak of each side, and their
Comparison. tinygrad's side is :mod:`tgviz.bridge.rerun`'s; this module draws nothing.
"""
from __future__ import annotations

import traceback
from collections import Counter
from typing import TYPE_CHECKING, Any

from tgviz import bridge as tg
from tgviz.trace.comparison import Comparison
from tgviz.trace.units import bytes_text, time_text

if TYPE_CHECKING:
  from tgviz.trace.program import Buffer
  from tgviz.trace.trace import Trace


def lift_for(buffer: Buffer) -> str:
  """The condition to lift to fuse across a buffer: from its reason (see bridge.LIFTS); ValueError where tinygrad has
  no condition to lift (an output, an input, a copy between devices, an .assign(), a multi-device op, ...)."""
  if buffer.reason == "cost": return "cost"
  if buffer.reason == "ranges": return "ranges"
  if buffer.reason == "reduce": return "split" if buffer.tinygrad.startswith("split_reduceop") else "reduce"
  if buffer.reason == "user" and buffer.tinygrad.startswith("transform_to_call: a CONTIGUOUS"): return "contiguous"
  raise ValueError(f"no condition of tinygrad's scheduler to lift for a {buffer.reason} buffer ({buffer.detail})")


def _signature(b: Buffer) -> tuple[Any, ...]:
  return (b.dtype, b.shape)


class Fusion:
  """A schedule run again with a condition lifted (see the module's docstring). ``error``: why it could not run (then
  the traces may be missing)."""

  def __init__(self, buffer: Buffer, lift: str):
    self.buffer, self.lift = buffer, lift
    self.before: Trace | None = None
    self.after: Trace | None = None
    self.error: str | None = None
    self.traceback: str | None = None

  @property
  def lifted(self) -> str:
    """What was lifted, in words."""
    return tg.LIFTS[self.lift]

  @property
  def gone(self) -> bool | None:
    """Whether the buffer asked about is no longer between two kernels with the condition lifted: fewer buffers of its
    dtype and shape between kernels than as scheduled (a run again rebuilds the tensor graph from the trace, without
    tinygrad's op metadata: the Tensor ops are not compared); None where the runs did not both end, or the run as
    scheduled made no such buffer (nothing to compare with)."""
    if self.before is None or self.after is None or self.error is not None: return None
    a = Counter(_signature(b) for b in self.before.program().boundaries)
    if not a[_signature(self.buffer)]: return None
    b = Counter(_signature(x) for x in self.after.program().boundaries)
    return b[_signature(self.buffer)] < a[_signature(self.buffer)]

  def side(self, which: str) -> dict[str, Any]:
    """One side's figures: kernels, buffers between kernels, device time of its launches (µs, in total; None where not
    timed) and the memory peak (bytes) of its run."""
    t = self.before if which == "before" else self.after
    if t is None: return {}
    times = [x.duration_us for x in t.timeline().kernels() if x.duration_us is not None]
    return {"kernels": len(t.program().kernels), "buffers": len(t.program().boundaries),
            "time_us": round(sum(times), 3) if times else None, "peak": t.memory().peak}

  def comparison(self) -> Comparison:
    """The two runs as a comparison: kernels paired, code diffed, time, FLOPs, bytes. ValueError where one is missing."""
    if self.before is None or self.after is None: raise ValueError(f"nothing to compare: {self.error or 'not run'}")
    return Comparison(self.before, self.after, ("as scheduled", f"{self.lift} lifted"))

  def summary(self) -> str:
    head = f"what if {self.buffer.label} had not been made: {self.lifted}"
    if self.error is not None: return f"{head}: {self.error}"
    a, b = self.side("before"), self.side("after")
    def us(x: Any) -> str: return time_text(x) if x is not None else "not timed"
    return (f"{head}: kernels {a['kernels']} -> {b['kernels']}, buffers between kernels {a['buffers']} -> {b['buffers']}, "
            f"device time {us(a['time_us'])} -> {us(b['time_us'])}, memory peak {bytes_text(a['peak'])} -> "
            f"{bytes_text(b['peak'])}; this buffer: {self._verdict()} (same random inputs on both sides)")

  def _verdict(self) -> str:
    if (gone := self.gone) is None:
      return f"the run as scheduled made no {self.buffer.dtype}{list(self.buffer.shape)} buffer between kernels: not compared"
    return "gone" if gone else "still made, " + self.still()

  def still(self) -> str:
    """Why buffers like the one asked about are still made with the condition lifted: their reasons there (a buffer kept
    for cost can be kept for reduce once cost is lifted: the next of tinygrad's checks)."""
    if self.after is None: return ""
    found = Counter(b.reason for b in self.after.program().boundaries if _signature(b) == _signature(self.buffer))
    return "now for " + ", ".join(f"{r} ({n})" if n > 1 else r for r, n in found.items()) if found else ""

  __str__ = summary

  def __repr__(self) -> str:
    return f"<Fusion {self.summary()}>"


def fuse(trace: Trace, buffer: Buffer, lift: str | None = None, seed: int = 0) -> Fusion:
  """Run the schedule that made buffer again twice, traced, on the same fresh random inputs (seeded): as it was, and
  with lift (default: the one its reason names, lift_for) lifted; the run as it was is the last question's where that
  was about the same schedule and seed. Never raises for a run that fails: its ``error`` says why."""
  f = Fusion(buffer, lift or lift_for(buffer))
  prog, rec = trace.program(), trace._rec
  writer = buffer.writer
  if writer is None or rec is None or (group := prog.callify_group(writer.schedule)) is None:
    f.error = "tgviz cannot tell which schedule made this buffer"
    return f
  tag = next((m.tag for g in rec.groups if g.schedule is not None for n, m in g.schedule.made.items() if n == buffer.num), None)
  env = {k: v for k, v in trace.env.items() if k not in ("BEAM", "DEBUG")}
  device = trace.device.split(" ")[0]
  def run(lifted: str | None) -> Trace:
    tracker = tg.Tracker(device)
    with tg.context(env), tg.Lifted(lifted), tracker:  # (lifted under the capture's own recorders: they see it)
      tg.rerun(rec, rec.groups[group], tag if lifted == "contiguous" else None, seed)
    assert tracker.recording is not None
    t = type(trace)(trace.device)
    t.env = env
    t.fill(tracker.recording)
    return t
  try:
    # the run as scheduled is the same for every buffer of a schedule: the last one is kept for the next question
    kept = trace._fused_before
    f.before = kept[1] if kept is not None and kept[0] == (group, seed) else run(None)
    trace._fused_before = ((group, seed), f.before)
    f.after = run(f.lift)
  except Exception as e:
    f.error, f.traceback = f"{type(e).__name__}: {e}", traceback.format_exc()
  return f
