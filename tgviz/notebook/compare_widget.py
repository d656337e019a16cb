"""The notebook widget of a comparison: two traces' kernels paired in a sortable table; a row opens the two kernels'
code as a diff and their landmark graphs side by side (``js/compare.js``, state and messages of :mod:`tgviz.views.compare`)."""
from __future__ import annotations

import traceback
from typing import Any

import anywidget
import traitlets as t

from tgviz.draw.scene import DEFAULT_MAX_NODES
from tgviz.notebook.widget import text_fallback
from tgviz.trace.comparison import Comparison
from tgviz.trace.trace import Trace
from tgviz.views import compare as V
from tgviz.views import protocol as P
from tgviz.views.assets import COMPARE_CSS, esm, styles
from tgviz.work.threads import Busy, Worker


class CompareWidget(anywidget.AnyWidget):
  """Compare two :class:`~tgviz.Trace` s (or show a :class:`~tgviz.compare.Comparison`): the kernel pairs and the kernels
  only one side has as rows, sortable by any column (launch dimensions, tinygrad's FLOPs and bytes estimates, measured
  device time); click a row for the code diff and both kernels' View Base AST and program graphs side by side."""

  _esm = esm("compare.js")
  _css = styles(*COMPARE_CSS)

  summary = t.Unicode("").tag(sync=True)
  labels: t.List[str] = t.List().tag(sync=True)
  sides: t.List[dict] = t.List().tag(sync=True)
  rows: t.List[dict] = t.List().tag(sync=True)              # the kernel table: pairs, then kernels only one side has
  steps: t.List[dict] = t.List().tag(sync=True)
  code_css = t.Unicode("").tag(sync=True)

  def __init__(self, a: Trace | Comparison, b: Trace | None = None, labels: tuple[str, str] = ("a", "b"),
               max_nodes: int = DEFAULT_MAX_NODES, **kwargs: Any):
    """CompareWidget(a, b, labels=("WINO=0", "WINO=1")) compares two traces; CompareWidget(comparison) shows one."""
    if isinstance(a, Comparison): self.comparison = a
    elif b is not None: self.comparison = Comparison(a, b, labels)
    else: raise TypeError("CompareWidget(a, b) takes two traces, or one Comparison")
    self.max_nodes = max_nodes
    self._work = Worker("tgviz-compare")
    super().__init__(**V.state(self.comparison), **kwargs)
    self.on_msg(self._on_msg)

  def _on_msg(self, _widget: Any, content: dict, _buffers: list) -> None:
    if content.get("type") != "pair": return
    index = content.get("index")
    try: self._work.submit(lambda: self._answer(index), kind="pair")  # a newer row supersedes an older one
    except Busy as e: self.send(P.error_message(f"not now: {e}"))

  def _answer(self, index: Any) -> None:
    try: self.send(V.pair_message(self.comparison, int(index), self.max_nodes))
    except Exception as e: self.send(P.error_message(f"{type(e).__name__}: {e}", traceback.format_exc()))

  def wait(self, timeout: float | None = 60) -> None:
    """Block until every pair asked for has been sent (for scripts and tests); TimeoutError past timeout seconds."""
    if not self._work.drain(timeout): raise TimeoutError(f"the pairs asked for were not all sent within {timeout} s")

  def _repr_mimebundle_(self, **kwargs: Any) -> Any:
    return text_fallback(super()._repr_mimebundle_(**kwargs), self.comparison.summary())
