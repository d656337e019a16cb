"""Where the trace browser opens: on where tinygrad failed, when it did (the step, the match, the node marked, the
exception and traceback shown beside it), else on the program map (tgviz.views.programmap) over the most telling
picture (protocol.first_selection).

The one place the opening is chosen: the widget and the report both open where :func:`opening` says.
"""
from __future__ import annotations

from tgviz.trace import failure as F
from tgviz.trace.trace import Trace
from tgviz.views import protocol as P
from tgviz.views.messages import FailureInfo, StepKey


def failure_info(trace: Trace) -> FailureInfo | None:
  """Where tinygrad failed (tgviz.trace.failure), as the browser shows it; None when it did not."""
  if (f := F.failure(trace)) is None: return None
  return FailureInfo(kind=f.kind, summary=f.summary(), error=f.error, traceback=f.traceback, step=P.step_key(f.step),  # type: ignore[typeddict-item]
                     match=f.match, node=f.node, line=f.line)


def opening(trace: Trace, failure: FailureInfo | None, kernel: str | None = None, tab: str = "code") -> tuple[StepKey, int | None, str]:
  """What the browser opens on: the selection (step and match) and the sheet over it, "program" (the program map) or
  "step" (none). The failure (failure_info(trace)) first: its step and match, no sheet. Else protocol.first_selection
  (of the kernels kernel names), the whole step, under the program map where the trace ran kernels it can map and the
  user asked for neither one kernel nor another tab of the code column (tab)."""
  if failure is not None: return failure["step"], failure["match"], "step"
  sheet = "program" if kernel is None and tab == "code" and trace.program().kernels else "step"
  return P.first_selection(trace, kernel), None, sheet
