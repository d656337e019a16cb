"""tgviz: see what tinygrad's compiler did, rewrite by rewrite, next to the code it generated.

In Jupyter: ``%load_ext tgviz`` then a ``%%tgviz`` cell. In Python::

    import tgviz
    with tgviz.capture() as trace:
        ...tinygrad code...
    print(trace.summary())
    trace.export_svg("svgs", kernel="r_*")
    trace.to_html("report/index.html")
    trace.save("run.tgviz"); tgviz.load("run.tgviz")   # later, elsewhere; also tinygrad's VIZ=-1 rewrites.pkl
    trace.kernel_table()                                # per kernel: launch dims, FLOPs and bytes estimates, device time
    trace.timeline(); trace.memory(); trace.roofline()  # the run: launches per device, buffers and the peak, the roofline
    print(tgviz.compare(trace_a, trace_b))              # kernels paired, code diffs; .to_html(), tgviz.CompareWidget
    kernel.opts; kernel.retry([("UPCAST", 0, 4)])       # the opts applied; the kernel again with others, run and compared
    trace.search("log_softmax"); kernel.key             # find anything (Hits by kind); a kernel's identity across runs
    trace.failure                                       # where tinygrad failed: the step, match and UOp, or the kernel
"""
from tgviz import bridge
from tgviz.api import Comparison, Kernel, Retry, Step, Trace, TraceFileError, capture, compare, load
from tgviz.trace.comparison import KernelPair
from tgviz.trace.failure import Failure
from tgviz.trace.run import BufferLife, Launch, Memory, Roofline, Timeline
from tgviz.trace.search import Hit
from tgviz.trace.steps import Diff, Match
from tgviz.trace.trace import Group

Opt = bridge.Opt

__all__ = [
  "BufferLife",
  "CompareWidget",
  "Comparison",
  "Diff",
  "Failure",
  "Group",
  "Hit",
  "Kernel",
  "KernelPair",
  "Launch",
  "Match",
  "Memory",
  "Opt",
  "Retry",
  "Roofline",
  "Step",
  "Timeline",
  "Trace",
  "TraceFileError",
  "capture",
  "compare",
  "load",
  "load_ipython_extension",
  "unload_ipython_extension",
]
__version__ = "0.1.0"


def load_ipython_extension(ipython) -> None:
  """%load_ext tgviz: registers the %%tgviz cell magic (tinygrad may be imported before or after)."""
  from tgviz.magic import TgvizMagics
  if (msg := bridge.clang_missing()): print(f"tgviz: {msg}")
  ipython.register_magics(TgvizMagics)


def unload_ipython_extension(ipython) -> None:
  """%unload_ext tgviz: removes the magic and restores the device settings tgviz chose."""
  ipython.magics_manager.magics["cell"].pop("tgviz", None)
  ipython.magics_manager.registry.pop("TgvizMagics", None)
  bridge.restore_environment()


def __getattr__(name: str):
  """tgviz.CompareWidget, imported when first asked for (it needs the notebook's widget libraries)."""
  if name == "CompareWidget":
    from tgviz.notebook.compare_widget import CompareWidget
    return CompareWidget
  raise AttributeError(f"module 'tgviz' has no attribute {name!r}")
