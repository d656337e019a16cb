"""What the timeline's compiler lanes draw (js/compilelanes.js): tinygrad's host-side spans of a trace as columns, each
with the step it opens, and the capture's wall time split up (``trace.compile_times()``). Draws nothing; part of the run
message (tgviz.views.run).
"""
from __future__ import annotations

from dataclasses import asdict

from tgviz.trace.compile import Span
from tgviz.trace.trace import Trace
from tgviz.views.messages import CompileData
from tgviz.views.protocol import step_key

# Span.kind by index, a group's as its group's kind (a schedule, a kernel's codegen, other work)
KINDS = ("schedule", "kernel", "group", "step", "span", "user", "linearize", "estimates", "render", "compile", "assemble")


def compile_data(trace: Trace) -> CompileData:
  """The trace's compiler and Tensor-method spans, nested, as the timeline's lanes draw them (see CompileData); a
  group's span opens its first step, a step's or a stage's its step."""
  ct = trace.compile_times()
  lanes: dict[str, int] = {}
  names: dict[str, int] = {}
  kinds = {k: i for i, k in enumerate(KINDS)}
  def opens(group: int | None, step: int | None) -> str:
    if group is None or not 0 <= group < len(trace.groups) or not (steps := trace.groups[group].steps): return ""
    return step_key(steps[step] if step is not None and step < len(steps) else steps[0])
  def kind(s: Span) -> int:
    if s.kind == "group" and s.group is not None and 0 <= s.group < len(trace.groups): return kinds.get(trace.groups[s.group].kind, kinds["group"])
    return kinds.get(s.kind, kinds["span"])
  spans = sorted(ct.spans, key=lambda s: (s.start_us, s.depth))
  return CompileData(
    lane=[lanes.setdefault(s.lane, len(lanes)) for s in spans], name=[names.setdefault(s.name, len(names)) for s in spans],
    kind=[kind(s) for s in spans], start=[round(s.start_us, 1) for s in spans], dur=[round(s.time_us, 1) for s in spans],
    own=[[i, round(s.self_us, 1)] for i, s in enumerate(spans) if s.nested_us], depth=[s.depth for s in spans],
    step=[opens(s.group, s.step) for s in spans],
    lanes=list(lanes), names=list(names), kinds=list(KINDS), totals={k: round(v, 3) for k, v in asdict(ct.totals).items()},
    summary=ct.totals.summary() if ct.spans else "")
