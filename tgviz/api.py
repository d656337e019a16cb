"""The public API: :func:`capture` and :func:`compare`, and the Trace, Step, Kernel, Retry and Comparison a user holds,
with their pictures and reports.

These classes are the model's (:mod:`tgviz.trace`) plus the methods that draw (``Step.svg``, ``Trace.export_svg``) and
write reports (``Trace.to_html``, ``Comparison.to_html``, ``Retry.to_html``). They live here, above the views and the
report, so that those build on the model without the model ever importing them back.
"""
from __future__ import annotations

import contextlib
import traceback
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from tgviz import bridge as tg
from tgviz.draw.engine import DEFAULT_TIMEOUT
from tgviz.draw.scene import DEFAULT_MAX_NODES
from tgviz.report import writer as report
from tgviz.trace import comparison as C
from tgviz.trace import failure as F
from tgviz.trace import fusion, steps, whatif
from tgviz.trace import search as S
from tgviz.trace import trace as model
from tgviz.trace.program import Buffer
from tgviz.views import compare as compare_view
from tgviz.views import picture

TraceFileError = tg.TraceFileError


class Step(steps.Step):
  __doc__ = steps.Step.__doc__

  def svg(self, side: str = "both", match: int | None = None, max_nodes: int = DEFAULT_MAX_NODES, view: str = "auto",
          timeout: float | None = DEFAULT_TIMEOUT, around: tuple[str, ...] = (), fold: bool = True) -> str:
    """This step's graph as a standalone SVG: side "before", "after" or "both" (side by side, one layout, with what was
    added, removed and changed marked), or "auto" (both, or the one graph of a step that matched nothing). match=k
    shows the graph before and after the k-th (0-based) match instead. view "auto" focuses on what changed above
    max_nodes nodes, "focus" always does, "full" never does; a layout running past timeout seconds falls back to a
    smaller focused view, and the picture says it is partial. around: node keys (tgviz.bridge.node_key, e.g.
    kernel.line_keys[n]) a partial view is built around instead of what changed. fold (default): index arithmetic
    drawn as one node with its expression, constants in their users' labels, parallel lanes as one node ×N (a folded
    node's data-holds lists the UOps it stands for; changed nodes are never folded); fold=False: the raw graph, one
    node per UOp."""
    return picture.picture(self, side, match, max_nodes, view, timeout, around, fold).svg


class Retry(whatif.Retry):
  __doc__ = whatif.Retry.__doc__

  def to_html(self, path: str | Path, title: str | None = None) -> Path:
    """Write the comparison (:meth:`comparison`) as a self-contained HTML page."""
    return compare_view.write_comparison(self.comparison(), path, title or f"tgviz retry of {self.kernel.display_name}")


class Kernel(whatif.Kernel):
  __doc__ = whatif.Kernel.__doc__
  retry_type: ClassVar[type[whatif.Retry]] = Retry


class Trace(model.Trace):
  """Everything tinygrad's compiler did inside one :func:`capture` block."""

  step_type: ClassVar[type[steps.Step]] = Step
  kernel_type: ClassVar[type[model.Kernel]] = Kernel

  def export_svg(self, directory: str | Path, kernel: str | None = None, step: str | None = None, side: str = "auto",
                 max_nodes: int = DEFAULT_MAX_NODES, view: str = "auto", landmarks: bool = False,
                 fold: bool = True) -> list[Path]:
    """Write one standalone SVG per selected step (see :meth:`select`) into directory; returns the paths. side and fold
    as in :meth:`Step.svg`: by default a step's before and after, a snapshot's (or a step without matches') one graph,
    folded. File names say which group and step they show and are safe on every OS."""
    return picture.export_svg(self.select(kernel, step, landmarks), directory, side, max_nodes, view, fold=fold)

  def fuse(self, a: Any, b: Any = None, lift: str | None = None, seed: int = 0) -> fusion.Fusion:
    """What if they had fused: a Buffer of :meth:`program` (or the first buffer between kernels a and b, see
    :meth:`why`) and the schedule that made it run again twice, traced, on the same fresh random inputs: as it was, and
    with the condition that kept the buffer lifted (lift: "ranges", "cost", "reduce", "split", "contiguous"; default:
    the one its reason names). The user's buffers are never touched. See :class:`tgviz.trace.fusion.Fusion`."""
    if b is not None:
      between = self.why(a, b)
      if not between: raise ValueError("no buffer lies between those kernels: nothing to fuse")
      a = next((x for x in between if x.reason in ("cost", "reduce", "ranges")), between[0])
    if not isinstance(a, Buffer): raise TypeError(f"fuse wants a Buffer of trace.program() or two kernels, not {type(a).__name__}")
    return fusion.fuse(self, a, lift, seed)
  @property
  def failure(self) -> F.Failure | None:
    """Where tinygrad failed, when the capture ended by an error tinygrad raised in a rewrite (the step and match, the UOp
    it was matching), a compile or a launch (the kernel): see :class:`tgviz.trace.failure.Failure`; None otherwise."""
    return F.failure(self)

  def search(self, text: str) -> list[S.Hit]:
    """Everything in this trace that text is found in (case-insensitive), grouped by kind: kernels by name or key, steps
    by name, origins (the Tensor ops, the user's file:line and line text), UOps by op, arg and dtype ("EXP2", "CONST
    0.5"), where each first appears in each kernel, rules by file:line, source file or pattern, each in each step it
    fired in, and code lines. Each Hit has kind, kernel, step, match, line and text (see :class:`tgviz.trace.search.Hit`)."""
    return S.search(self, text)

  def to_html(self, path: str | Path, title: str = "tgviz trace", **kwargs: Any) -> Path:
    """Write a self-contained HTML report (no server, kernel or network) to browse this trace: the tree, every step and
    every match, laid out in the page, and the kernels' code. See :func:`tgviz.report.writer.write_report`."""
    return report.write_report(self, path, title, **kwargs)


@contextlib.contextmanager
def capture(device: str | None = None, env: Mapping[str, Any] | None = None, profile: bool = True) -> Iterator[Trace]:
  """Run a block with tinygrad's compiler traced; the Trace is filled when the block ends.

  >>> with capture() as trace:
  ...   (Tensor.ones(4) + 1).realize()
  >>> trace.kernels[0].source

  device: any tinygrad device (``"CL"``, ``"CPU"``, ``"NULL:CUDA:sm_90"`` to see another target's code without its
  hardware). Default: ``DEV`` if set, else OpenCL on PoCL. env: tinygrad Context settings for the block, e.g.
  ``{"WINO": 1}`` (a name tinygrad does not know, or a value of the wrong type, raises ValueError before the block
  runs); kept in ``trace.env``. An exception in the block is kept in ``trace.error`` (with the trace up to the failure)
  and propagates (``sys.exit()`` and ``sys.exit(0)`` propagate too, as a clean end, not an error). Each kernel's
  launches inside the block wait for completion, so their device time is measured (``trace.kernel_table()``); results
  are unchanged. profile: record the run as tinygrad's profiler does (``trace.timeline()``, ``trace.memory()``); it costs
  tinygrad's own PROFILE=1 bookkeeping, about 25 µs a launch (noticeable only in long TinyJit loops): False leaves it out.
  Kernels compile in tinygrad's worker pool as in a plain run (``env={"PARALLEL": 4}`` sets its size; below 3, the
  default on 2 cores, they compile in this process, which is faster there), each traced in its worker: the trace is the
  one ``PARALLEL=0`` gives.
  """
  settings = tg.settings(dict(env or {}))
  trace = Trace(device or tg.default_device())
  trace.env = settings
  tracker = tg.Tracker(device, profile)
  try:
    with tg.context(settings), tracker:
      trace.tracker = tracker
      yield trace
  except BaseException as e:
    if isinstance(e, FileNotFoundError) and "clang" in str(e) and (msg := tg.clang_missing()): e.add_note(msg)
    if not (isinstance(e, SystemExit) and e.code in (None, 0)):  # sys.exit() or sys.exit(0) ends a script cleanly
      trace.error, trace.traceback = e, "".join(traceback.format_exception(e))
    raise
  finally:
    trace.tracker = None
    if tracker.recording is not None: trace.fill(tracker.recording)


def load(path: str | Path, trusted: bool = False) -> Trace:
  """Open a trace file: one :meth:`Trace.save` wrote, or tinygrad's own tracking dump, the rewrites.pkl that a script
  run with ``VIZ=-1`` writes at exit (e.g. on a GPU box, to browse here). Both need the same tinygrad version as here.

  >>> trace = tgviz.load("conv.tgviz")          # or tgviz.load("/tmp/rewrites.pkl.<user>")

  Opening a file runs nothing from it: it is unpickled allowing only what a trace holds (tgviz's records, tinygrad's
  dtypes, enums and small dataclasses), and anything else raises :class:`TraceFileError` naming it, before it is called.
  ``trusted=True`` unpickles with plain pickle, which can run code the file carries: only for a tinygrad dump of your own
  that holds more than a trace does. Raises :class:`TraceFileError` when the file is not a trace, is damaged, or was
  saved for another format or tinygrad version."""
  return Trace.load(path, trusted=trusted)


class Comparison(C.Comparison):
  __doc__ = C.Comparison.__doc__

  def to_html(self, path: str | Path, title: str | None = None, max_nodes: int = DEFAULT_MAX_NODES) -> Path:
    """Write a self-contained HTML page (no server, kernel or network) of this comparison: the counts, the sortable kernel
    table of both sides, and per kernel pair the code diff and the landmark graphs side by side. title: the page's
    title, by default "tgviz comparison: <label a> vs <label b>". Returns the path."""
    return compare_view.write_comparison(self, path, title, max_nodes)


def compare(a: model.Trace, b: model.Trace, labels: tuple[str, str] = ("a", "b")) -> Comparison:
  """Compare two traces: kernels paired by the AST they compile, then by name in compile order; the code diff and
  launch dimensions of each pair; the kernels only one side has; per side kernels, steps, matches and rewrite time; the
  steps whose match counts differ most.

  >>> with tgviz.capture() as general: conv()
  >>> with tgviz.capture(env={"WINO": 1}) as winograd: conv()
  >>> print(tgviz.compare(general, winograd, labels=("WINO=0", "WINO=1")))
  """
  return Comparison(a, b, labels)
