"""The notebook widget of a comparison: two traces' kernels paired in a sortable table; a row opens the two kernels'
code as a diff and their landmark graphs side by side (``js/compare.js``, state and messages of :mod:`tgviz.compare_view`)."""
from __future__ import annotations

import traceback
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import anywidget
import traitlets as t

from tgviz import compare_view as V
from tgviz import layout as L
from tgviz import protocol as P
from tgviz.assets import esm, styles
from tgviz.comparison import Comparison
from tgviz.model import Trace
from tgviz.widget import text_fallback


class CompareWidget(anywidget.AnyWidget):
  """Compare two :class:`~tgviz.Trace` s (or show a :class:`~tgviz.compare.Comparison`): the kernel pairs and the kernels
  only one side has as rows, sortable by any column (launch dimensions, tinygrad's FLOPs and bytes estimates, measured
  device time); click a row for the code diff and both kernels' View Base AST and program graphs side by side."""

  _esm = esm("compare.js")
  _css = styles("widget.css", "table.css", "compare.css")

  summary = t.Unicode("").tag(sync=True)
  labels: t.List[str] = t.List().tag(sync=True)
  sides: t.List[dict] = t.List().tag(sync=True)
  rows: t.List[dict] = t.List().tag(sync=True)              # the kernel table: pairs, then kernels only one side has
  steps: t.List[dict] = t.List().tag(sync=True)
  code_css = t.Unicode("").tag(sync=True)

  def __init__(self, a: Trace | Comparison, b: Trace | None = None, labels: tuple[str, str] = ("a", "b"),
               max_nodes: int = L.DEFAULT_MAX_NODES, **kwargs: Any):
    """CompareWidget(a, b, labels=("WINO=0", "WINO=1")) compares two traces; CompareWidget(comparison) shows one."""
    if isinstance(a, Comparison): self.comparison = a
    elif b is not None: self.comparison = Comparison(a, b, labels)
    else: raise TypeError("CompareWidget(a, b) takes two traces, or one Comparison")
    self.max_nodes = max_nodes
    self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tgviz-compare")
    self._pending: Future | None = None
    super().__init__(**V.state(self.comparison), **kwargs)
    self.on_msg(self._on_msg)

  def _on_msg(self, _widget: Any, content: dict, _buffers: list) -> None:
    if content.get("type") == "pair": self._pending = self._pool.submit(self._answer, content.get("index"))

  def _answer(self, index: Any) -> None:
    try: self.send(V.pair_message(self.comparison, int(index), self.max_nodes))
    except Exception as e: self.send(P.error_message(f"{type(e).__name__}: {e}", traceback.format_exc()))

  def wait(self, timeout: float | None = 60) -> None:
    """Block until the pair being computed has been sent (for scripts and tests)."""
    if self._pending is not None: self._pending.result(timeout)

  def _repr_mimebundle_(self, **kwargs: Any) -> Any:
    return text_fallback(super()._repr_mimebundle_(**kwargs), self.comparison.summary())
