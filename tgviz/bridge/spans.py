"""The compiler's own time: tinygrad's host-side spans (its ProfileRangeEvents on the TINY and USER lanes, which tinygrad's
VIZ draws above the devices) as SpanRecords, each span of a tracked group or rewrite step linked to it.

Owns: SpanRecorder (the patch: tinygrad's cpu_profile as its rewrite_group calls it, noting which tracked group or step
each span it opens is) and host_spans (tinygrad's events, the links and the stages MatchRecorder timed, as records;
also those of a profile.pkl, unlinked). Records hold plain values only: a span's TracingKey holds UOps and a renderer.
It must not decide when it is entered (capture.Tracker does).
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tinygrad.helpers import ProfileRangeEvent, TracingKey
from tinygrad.uop import ops

from tgviz.bridge.events import SpanRecord, event_name
from tgviz.bridge.recorders import Patch

HOST_LANES = ("TINY", "USER")   # tinygrad's compiler and the Tensor methods called, as VIZ names the lanes


class _Linked:
  """tinygrad's cpu_profile context, noting (on entry: the span is made then) which tracked group or step it times."""
  __slots__ = ("cm", "name", "rec")

  def __init__(self, cm: Any, name: Any, rec: SpanRecorder) -> None:
    self.cm, self.name, self.rec = cm, name, rec

  def __enter__(self) -> Any:
    ev = self.cm.__enter__()
    name, rec = self.name, self.rec
    if isinstance(name, TracingKey):                       # a group: rewrite_group has just added its key
      if ops.tracked_keys and ops.tracked_keys[-1] is name: rec.links[id(ev)] = (len(ops.tracked_keys) - 1, None)
    elif ops.active_rewrites and (step := ops.active_rewrites[-1]).name == name:  # a step: just appended to its group
      g = ops.active_group[-1] if ops.active_group else len(ops.tracked_ctxs) - 1
      steps = ops.tracked_ctxs[g] if 0 <= g < len(ops.tracked_ctxs) else []
      if steps and steps[-1] is step and id(step) not in rec.step_at:
        rec.links[id(ev)] = rec.step_at[id(step)] = (g, len(steps) - 1)
    return ev

  def __exit__(self, *exc: Any) -> Any:
    return self.cm.__exit__(*exc)


class SpanRecorder(Patch):
  """Which tracked group or step each of tinygrad's rewrite spans times: ``links`` (id of the ProfileRangeEvent -> (tracked
  group index, step index or None)) and ``step_at`` (id of a tracked step -> the same). tinygrad's events themselves
  stay in its lists (the profiler takes them out)."""

  def __init__(self) -> None:
    self.links: dict[int, tuple[int, int | None]] = {}
    self.step_at: dict[int, tuple[int, int]] = {}

  def patches(self) -> list[tuple[Any, dict[str, Any]]]:
    profile, rec = ops.cpu_profile, self
    def cpu_profile(name: Any, device: str = "TINY", display: bool = True, profile_key: bytes | None = None) -> Any:
      cm = profile(name, device, display, profile_key)
      return _Linked(cm, name, rec) if device == "TINY" and ops.TRACK_MATCH_STATS.value >= 2 else cm
    return [(ops, {"cpu_profile": cpu_profile})]


def host_spans(events: Iterable[Any], links: dict[int, tuple[int, int | None]] | None = None,
               stages: Iterable[tuple[str, float, float, Any]] = (), step_at: dict[int, tuple[int, int]] | None = None,
               index: dict[int, int] | None = None) -> list[SpanRecord]:
  """SpanRecords of tinygrad's TINY and USER spans among events (links: SpanRecorder's; index: tracked group index ->
  the trace's), then of the stages MatchRecorder timed (perf_counter seconds; step_at: SpanRecorder's)."""
  links, step_at, index = links or {}, step_at or {}, index or {}
  out = []
  for e in events:
    if not isinstance(e, ProfileRangeEvent) or e.device not in HOST_LANES or e.en is None: continue
    g, s = links.get(id(e), (None, None))
    kind = "user" if e.device == "USER" else "span" if g is None else "group" if s is None else "step"
    out.append(SpanRecord(e.device, event_name(e.name), float(e.st), float(e.en), kind, index.get(g) if g is not None else None, s))
  for stage, st, en, step in stages:
    g, s = step_at.get(id(step), (None, None))
    out.append(SpanRecord("TINY", stage, st * 1e6, en * 1e6, stage, index.get(g) if g is not None else None, s))
  return out
