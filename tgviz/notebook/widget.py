"""The notebook widget: trace tree, before/after graphs with per-match stepping, generated code, SVG export.

Only small state is synced as traits (the tree, the selection); graphs and code are sent as messages of
:mod:`tgviz.views.protocol` when a step is selected, computed in a background worker (tgviz.work: a newer selection
supersedes an older one's layout) so the kernel stays responsive. The one picture synced is the kept picture: the
selected step's, whole, which a saved notebook shows without its kernel.
"""
from __future__ import annotations

import html
import json
import threading
import time
import traceback
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any, cast

import anywidget
import traitlets as t

from tgviz.draw.scene import DEFAULT_MAX_NODES
from tgviz.trace.trace import Trace
from tgviz.views import access as AV
from tgviz.views import failure as FV
from tgviz.views import messages as M
from tgviz.views import program as PV
from tgviz.views import programmap as PM
from tgviz.views import protocol as P
from tgviz.views import run as runview
from tgviz.views import search as SV
from tgviz.views import whatif as W
from tgviz.views.assets import BROWSER_CSS, esm, styles
from tgviz.views.highlight import code_css
from tgviz.views.picture import export_svg, view_options
from tgviz.work.cancel import Cancelled
from tgviz.work.threads import Busy, Worker

DEFAULT_EXPORT_DIR = "tgviz-svg"
PICTURE_WAIT = 5.0  # seconds the output waits for the first picture, to keep it for frontends without widgets
KEPT_PICTURE_CHARS = 300_000  # a saved notebook keeps at most this much picture (its JSON: SVG, code, panels) per widget
LINES_NOTE = "Lines are linked to UOps while the kernel runs: run the cell again."
Selection = tuple[M.StepKey, int | None, M.View]


def _cell_label(filename: str) -> str | None:
  """IPython's name for a cell's code ("Cell In[3]"), as its tracebacks say; None for a file."""
  from IPython import get_ipython
  ip = get_ipython()
  name = ip.compile.format_code_name(filename) if ip is not None else None
  return f"{name[0]} {name[1]}" if name else None


def kept_picture(msg: M.PictureMsg, limit: int = KEPT_PICTURE_CHARS) -> M.PictureMsg:
  """The picture a saved notebook keeps, at most limit characters of JSON: the message as it is; else without what a
  static picture does without (the code's source, which its highlighted HTML shows, and the line map), marked trimmed;
  else without the SVG and code too, saying so."""
  size = len(json.dumps(msg))
  if size <= limit: return msg
  k = msg["kernel"]
  lighter = M.PictureMsg(**{**msg, "trimmed": True,
                            "kernel": M.KernelInfo(**{**k, "source": "", "lines": None, "lines_note": LINES_NOTE}) if k else None})
  if len(json.dumps(lighter)) <= limit: return lighter
  kernel = M.KernelInfo(**{**k, "html": "", "source": "", "lines": None, "lines_note": LINES_NOTE}) if k else None
  return M.PictureMsg(**{**msg, "svg": "", "kernel": kernel, "node_matches": {}, "trimmed": True,
                         "message": f"this picture ({size // 1000} kB) is too big to keep in the notebook"})


class TraceWidget(anywidget.AnyWidget):
  """Browse a :class:`~tgviz.Trace`: the steps of every kernel, the graph before and after each rewrite and each single
  match, and the kernel's generated code. Keys (with the widget focused): up/down step, left/right match."""

  _esm = esm("widget.js")
  _css = styles(*BROWSER_CSS)

  tree: t.List[M.TreeGroup] = t.List().tag(sync=True)
  # the selection: the page's to choose (a cell may set it too). Not echoed back (ipywidgets' echo_update): the page
  # asks for each choice in a ready message as well, and a copy of an older one arriving late would undo a newer one
  selected = t.Unicode("").tag(sync=True, echo_update=False)                  # a protocol.StepKey
  match = t.Int(None, allow_none=True).tag(sync=True, echo_update=False)      # None: the whole step
  view = t.Unicode("auto").tag(sync=True, echo_update=False)
  code_css = t.Unicode("").tag(sync=True)
  summary = t.Unicode("").tag(sync=True)
  kernels: t.List[M.KernelRow] = t.List().tag(sync=True)    # the kernel table
  error = t.Unicode("").tag(sync=True)
  export_dir = t.Unicode(DEFAULT_EXPORT_DIR).tag(sync=True)
  kept_picture = t.Dict().tag(sync=True)                   # a protocol.PictureMsg: what a saved notebook shows
  whatif = t.Dict().tag(sync=True)                         # whatif_view.state: per kernel its opts, BEAM's candidates, retries
  opening = t.Unicode("step").tag(sync=True)               # the sheet it opens on: "program" (the map) or "step" (FV.opening)
  tab = t.Unicode("code").tag(sync=True)                   # the code column's tab it opens on: code, uops, asm or access
  kept_access = t.Dict().tag(sync=True)                    # an AccessMsg: the access tab last shown, kept in a saved notebook
  failure = t.Dict(default_value=None, allow_none=True).tag(sync=True)  # a messages.FailureInfo: where tinygrad failed (opened on), or None

  def __init__(self, trace: Trace, kernel: str | None = None, max_nodes: int = DEFAULT_MAX_NODES,
               export_dir: str | Path = DEFAULT_EXPORT_DIR, error_note: str | None = None, tab: str = "code", **kwargs: Any):
    """error_note: where the traceback of an exception that ended the capture is shown instead of in the widget (the
    magic: IPython shows it under the widget); without it the widget shows the traceback. tab: the code column's tab it
    opens on ("access": the first kernel's accesses, kept with the notebook at once)."""
    self.trace, self.max_nodes, self._kernel = trace, max_nodes, kernel
    self._run_asked = self._map_asked = False
    # tinygrad's side (pictures, retries) one request at a time, a newer picture superseding the older; the code
    # column's tabs and the run's sheet on a second thread, so that a slow layout does not hold them up
    self._work = Worker("tgviz-layout")
    self._side = Worker("tgviz-tabs")
    self._lock = threading.Lock()
    self._latest: Selection | None = None
    self._pending: Future | None = None  # the latest selection's layout, until it is answered
    self._since = 0.0  # when it was asked for (time.monotonic)
    failure = FV.failure_info(trace)
    selected, match, sheet = FV.opening(trace, failure, kernel, tab)
    super().__init__(tree=P.tree(trace, kernel), selected=selected, match=match, code_css=code_css(), kernels=P.kernel_rows(trace, kernel),
                     summary=trace.summary(), error=self._error_text(trace, error_note), export_dir=str(export_dir),
                     whatif=W.state(trace), tab=tab, failure=failure, opening=sheet, **kwargs)
    if tab == "access" and self.selected: self._keep(AV.answer_later(trace, {"type": "access", "step": self.selected})())
    self.on_msg(self._on_msg)
    self.observe(lambda _: self._request(), names=["selected", "match", "view"])
    self._request()  # start on the first picture right away, so it is ready when the page asks

  @staticmethod
  def _error_text(trace: Trace, note: str | None) -> str:
    if trace.error is None: return ""
    if note is None: return trace.traceback or ""
    return f"stopped by {type(trace.error).__name__}: {trace.error}: {note}"

  def _request(self, again: bool = False) -> None:
    """Lay out the selection in the background, the page told it is busy; again (the page asks again, having no
    answer yet): a layout of the same selection under way is left to answer, not started over."""
    if not self.selected: return
    key: Selection = (self.selected, self.match, self.view)
    with self._lock:
      if again and key == self._latest and self._pending is not None and not self._pending.done():
        self.send(P.busy_message(*key, since=round(time.monotonic() - self._since, 1)))  # (the page says how long)
        return
      self.send(P.busy_message(*key))
      self._latest, self._since = key, time.monotonic()
      # a slow layout of an older selection stops here (its dot process is killed)
      self._pending = self._background(self._work, lambda: self._compute(key), kind="picture")

  def _ready(self, selection: Any) -> None:
    """The page wants the picture of its selection (see M.ReadyMsg): taken where it differs from the widget's, as the
    page's own change of the state would be (nothing sent back: the page holds it already; the change lays it out),
    else the picture asked again."""
    if isinstance(selection, dict) and (got := (str(selection.get("step")), selection.get("match"), str(selection.get("view")))) != \
        (self.selected, self.match, self.view) and (got[1] is None or isinstance(got[1], int)):
      self.set_state({"selected": got[0], "match": got[1], "view": got[2]})
    else: self._request(again=True)

  def _compute(self, key: Selection) -> None:
    msg: M.PictureMsg | M.ErrorMsg
    try: msg = P.picture_message(self.trace, *key, max_nodes=self.max_nodes, cell_label=_cell_label)
    except Cancelled: return
    except Exception as e: msg = P.error_message(f"{type(e).__name__}: {e}", traceback.format_exc())
    with self._lock:
      if key != self._latest: return  # a newer selection supersedes this one
      self._pending = None  # answered (under the lock: a request again after this starts a new layout)
      if msg["type"] == "picture" and msg["match"] is None:
        # a whole step's picture crosses once: as the kept picture (the frontend draws it from there), or, too big to
        # keep, as a message, with the kept picture saying so. The kept picture unchanged (the page asked again, as
        # it does when it comes up after the first answer) syncs nothing: then the answer is the message.
        kept = kept_picture(msg)
        if kept is not msg or kept == self.kept_picture: self.send(msg)
        self.kept_picture = cast(dict, kept)
      else: self.send(msg)

  def _on_msg(self, _widget: Any, content: dict, _buffers: list) -> None:
    if content.get("type") == "ready": self._ready(content.get("selection"))
    elif content.get("type") == "node":
      try: self.send(P.node_message(self.trace, self.selected, self.match, str(content.get("key")), _cell_label))
      except Exception as e: self.send(P.error_message(f"node: {type(e).__name__}: {e}"))
    elif content.get("type") == "rules":
      try: self.send(P.rules_message(self.trace))
      except Exception as e: self.send(P.error_message(f"rules: {type(e).__name__}: {e}"))
    # a tab asked again (no answer came, see js/program.js's ASK_AGAIN_MS): the same request under way is left to answer
    # (a CPU kernel's -g compile takes longer than the page waits: started over, it never ended)
    elif content.get("type") in (*PV.REQUESTS, "access") and content.get("again") and \
        self._side.under_way(str(content["type"]), str(content.get("step"))): pass
    elif content.get("type") in PV.REQUESTS:  # the uops or asm tab: what prints here, the rest (a compile) in the background
      rest = PV.answer_later(self.trace, content)
      self._background(self._side, lambda: self.send(rest()), kind=str(content["type"]), key=str(content.get("step")))
    elif content.get("type") == "access":  # the access tab: the kernel's accesses, in the background
      answer = AV.answer_later(self.trace, content)
      self._background(self._side, lambda: self.send(self._keep(answer())), kind="access", key=str(content.get("step")))
    elif content.get("type") == "search":  # its index is built on the first search (seconds on a big trace): not here
      text = str(content.get("text", ""))
      self._background(self._side, lambda: self._send_search(text), kind="search")
    elif content.get("type") == "run":  # the timeline, memory and roofline tabs: peaks may be measured, so not here
      self._run_asked = True
      self._background(self._side, self._send_run, kind="run")
    elif content.get("type") == "programmap":  # laid out by graphviz: not here
      self._map_asked = True
      self._background(self._side, self._send_map, kind="programmap")
    elif content.get("type") == "retime":  # in the layout worker: tinygrad runs one thing at a time
      self._background(self._work, lambda: self._retime(content))
    elif content.get("type") == "export":
      try:
        step = P.step_of(self.trace, self.selected)
        box = content.get("box")
        paths = export_svg([step], self.export_dir, max_nodes=self.max_nodes, match=self.match, **view_options(step, self.view),
                           box=tuple(float(v) for v in box[:4]) if isinstance(box, list) and len(box) >= 4 else None)
        self.send(P.exported_message(paths))
      except Exception as e: self.send(P.error_message(f"export failed: {type(e).__name__}: {e}"))
    elif content.get("type") in ("allowed", "retry"):  # in the layout worker: tinygrad runs one thing at a time
      self._background(self._work, lambda: self._what_if(content))
    elif content.get("type") == "fuse":  # likewise: the schedule runs again, twice
      self._background(self._work, lambda: self._fuse(content), kind="fuse")

  def _keep(self, msg: Any) -> Any:
    """An access tab's message, kept in the widget's state (a saved notebook's access tab draws it without a kernel)
    where it is small enough."""
    if msg.get("type") == "access" and len(json.dumps(msg)) <= KEPT_PICTURE_CHARS: self.kept_access = cast(dict, msg)
    return msg

  def _background(self, worker: Worker, fn: Callable[[], None], kind: str | None = None, key: object = None) -> Future | None:
    """fn in a background worker (its future; kind and key: see Worker.submit); a request the worker cannot take now is
    answered with an error saying so."""
    try: return worker.submit(fn, kind, key)
    except Busy as e: self.send(P.error_message(f"not now: {e}"))
    return None

  def _what_if(self, content: dict) -> None:
    try:
      if content["type"] == "allowed": self.send(W.allowed_message(self.trace, content))
      else:
        self.send(W.retry(self.trace, content))
        self.whatif = W.state(self.trace)  # the retry joins the kernel's retries (a saved notebook keeps them)
    except Exception as e: self.send(P.error_message(f"{content['type']}: {type(e).__name__}: {e}", traceback.format_exc()))

  def _send_search(self, text: str) -> None:
    try: self.send(SV.search_message(self.trace, text, _cell_label))
    except Exception as e: self.send(P.error_message(f"search: {type(e).__name__}: {e}", traceback.format_exc()))

  def _send_run(self) -> None:
    try:
      self.send(runview.run_message(self.trace))
      self.kernels = P.kernel_rows(self.trace, self._kernel)  # the devices' peaks are measured now: the limits
    except Exception as e: self.send(P.error_message(f"run: {type(e).__name__}: {e}", traceback.format_exc()))

  def _fuse(self, content: dict) -> None:
    try: self.send(PM.fuse_message(self.trace, content))
    except Exception as e: self.send(P.error_message(f"fuse: {type(e).__name__}: {e}", traceback.format_exc()))

  def _send_map(self) -> None:
    try: self.send(PM.program_map(self.trace, cell_label=_cell_label))
    except Exception as e: self.send(P.error_message(f"programmap: {type(e).__name__}: {e}", traceback.format_exc()))
  def _retime(self, content: dict) -> None:
    """Kernels timed again (content["kernels"]: display names; none: the slowest, as trace.retime chooses): the kernel table
    and, once asked for, the run's tabs and the program map sent again with the new times."""
    try:
      names = {str(n) for n in content.get("kernels") or []}
      self.trace.retime([k for k in self.trace.kernels if k.display_name in names] if names else None)
      self.kernels = P.kernel_rows(self.trace, self._kernel)
      if self._run_asked: self.send(runview.run_message(self.trace))
      if self._map_asked: self._send_map()
    except Exception as e: self.send(P.error_message(f"retime: {type(e).__name__}: {e}", traceback.format_exc()))

  def wait(self, timeout: float | None = 30) -> None:
    """Block until every request made so far (the picture, the tabs', retries) has been answered (for scripts and
    tests); TimeoutError past timeout seconds."""
    if not (self._work.drain(timeout) and self._side.drain(timeout)):
      raise TimeoutError(f"the widget's requests were not all answered within {timeout} s")

  def _repr_mimebundle_(self, **kwargs: Any) -> Any:
    """The widget, and for frontends without widgets (nbconvert, GitHub) the summary and the first picture."""
    try: self.wait(PICTURE_WAIT)
    except TimeoutError: pass
    return text_fallback(super()._repr_mimebundle_(**kwargs), self.trace.summary(), self.kept_picture.get("svg", ""))


def text_fallback(bundle: Any, text: str, picture: str = "") -> Any:
  """A widget's mime bundle with text for where widgets do not render (nbconvert, a terminal): the summary, and a
  picture (SVG markup built by tgviz.draw, its text escaped there) after it."""
  data: dict[str, Any] = bundle[0] if isinstance(bundle, tuple) else bundle
  data["text/plain"] = text
  data["text/html"] = f"<pre class='tgviz-summary'>{html.escape(text)}</pre>{picture}"
  return bundle
