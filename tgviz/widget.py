"""The notebook widget: trace tree, before/after graphs with per-match stepping, generated code, SVG export.

Only small state is synced as traits (the tree, the selection); graphs and code are sent as messages when a step is
selected, computed in a worker thread so the kernel stays responsive.
"""
from __future__ import annotations

import html
import threading
import traceback
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anywidget
import traitlets as t

from tgviz import layout as L
from tgviz import viewer
from tgviz.trace import Trace


DEFAULT_EXPORT_DIR = "tgviz-svg"


def static_file(name: str) -> Path:
  """A frontend file: shipped in the wheel under tgviz/static, or js/ in a source checkout."""
  here = Path(__file__).resolve().parent
  return here / "static" / name if (here / "static" / name).exists() else here.parent / "js" / name


class TraceWidget(anywidget.AnyWidget):
  """Browse a :class:`~tgviz.Trace`: the steps of every kernel, the graph before and after each rewrite and each single
  match, and the kernel's generated code. Keys (with the widget focused): up/down step, left/right match."""

  _esm = static_file("widget.js")
  _css = static_file("widget.css")

  tree = t.List().tag(sync=True)
  selected = t.List(t.Int(), default_value=[-1, -1]).tag(sync=True)
  match = t.Int(-1).tag(sync=True)
  view = t.Unicode("auto").tag(sync=True)
  code_css = t.Unicode("").tag(sync=True)
  summary = t.Unicode("").tag(sync=True)
  error = t.Unicode("").tag(sync=True)
  export_dir = t.Unicode(DEFAULT_EXPORT_DIR).tag(sync=True)

  def __init__(self, trace: Trace, kernel: str | None = None, max_nodes: int = L.DEFAULT_MAX_NODES,
               export_dir: str | Path = DEFAULT_EXPORT_DIR, **kwargs: Any):
    self.trace, self.max_nodes = trace, max_nodes
    self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tgviz-layout")
    self._lock = threading.Lock()
    self._pending: Future | None = None
    self._latest: tuple | None = None
    self._worker: int | None = None
    super().__init__(tree=viewer.tree(trace, kernel), selected=list(viewer.first_selection(trace, kernel)),
                     code_css=viewer.code_css(), summary=trace.summary(), error=trace.traceback or "",
                     export_dir=str(export_dir), **kwargs)
    self.on_msg(self._on_msg)
    self.observe(lambda _: self._request(), names=["selected", "match", "view"])
    self._request()  # start on the first picture right away, so it is ready when the page asks

  def _request(self) -> Future | None:
    g, s = self.selected
    if g < 0: return None
    key = (g, s, self.match, self.view)
    with self._lock:
      self._latest = key
      if self._worker is not None: L.cancel(self._worker)  # a slow layout of an older selection stops here
      self.send({"type": "busy", "group": g, "step": s, "match": self.match, "view": self.view})
      self._pending = self._pool.submit(self._compute, key)
      return self._pending

  def _compute(self, key: tuple) -> None:
    self._worker = threading.get_ident()
    try: msg = viewer.step_message(self.trace, *key, max_nodes=self.max_nodes)
    except L.LayoutCancelled: return
    except Exception as e:
      msg = {"type": "error", "message": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()}
    with self._lock:
      if key == self._latest: self.send(msg)  # a newer selection supersedes this one

  def _on_msg(self, _widget: Any, content: dict, _buffers: list) -> None:
    if content.get("type") == "ready": self._request()
    elif content.get("type") == "export":
      g, s = self.selected
      try:
        paths = viewer.export_selection(self.trace, g, s, self.match, self.view, self.export_dir, self.max_nodes)
        self.send({"type": "exported", "paths": [str(p.resolve()) for p in paths]})
      except Exception as e: self.send({"type": "error", "message": f"export failed: {type(e).__name__}: {e}"})

  def wait(self, timeout: float | None = 30) -> None:
    """Block until the picture being computed has been sent (for scripts and tests)."""
    if self._pending is not None: self._pending.result(timeout)

  def _repr_mimebundle_(self, **kwargs: Any):
    bundle = super()._repr_mimebundle_(**kwargs)
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    data["text/plain"] = self.trace.summary()
    data["text/html"] = f"<pre class='tgviz-summary'>{html.escape(self.trace.summary())}</pre>"
    return bundle
