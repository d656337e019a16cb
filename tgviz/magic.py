"""The %%tgviz cell magic: run a cell as IPython would, with tinygrad's compiler traced, and show the widget."""
from __future__ import annotations

import ast

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

from tgviz.api import Trace, capture, compare
from tgviz.bridge import parse_settings
from tgviz.draw.scene import DEFAULT_MAX_NODES
from tgviz.notebook.compare_widget import CompareWidget
from tgviz.notebook.widget import DEFAULT_EXPORT_DIR, TraceWidget
from tgviz.trace.units import plural


@magics_class
class TgvizMagics(Magics):
  @magic_arguments()
  @argument("-o", "--out", default="tgviz_trace", metavar="NAME",
            help="variable the Trace is stored in (default: tgviz_trace)")
  @argument("--device", default=None, metavar="DEV",
            help="tinygrad device for the cell, e.g. CL, CPU, or NULL:CUDA:sm_90 to see another target's code "
                 "without its hardware (default: DEV, else OpenCL on PoCL)")
  @argument("--export", default=None, metavar="DIR", help="write SVGs of every step of the cell's kernels into DIR")
  @argument("--max-nodes", type=int, default=DEFAULT_MAX_NODES, metavar="N",
            help=f"graphs above N nodes open on a focused view around what changed (default {DEFAULT_MAX_NODES})")
  @argument("--kernel", default=None, metavar="PATTERN", help="show only kernels whose name matches this glob pattern")
  @argument("--env", action="append", default=[], metavar="NAME=VALUE",
            help="run the cell under this tinygrad Context setting, e.g. --env WINO=1 (repeatable)")
  @argument("--compare", default=None, metavar="NAME",
            help="compare the cell's trace with the Trace in variable NAME (from an earlier %%%%tgviz -o NAME cell) and show "
                 "the comparison: kernels paired, code diffs, landmark graphs side by side")
  @argument("--tab", default="code", choices=("code", "uops", "asm", "access"),
            help="the code column's tab the widget opens on (access: what each thread reads, kept with the notebook)")
  @argument("--no-widget", action="store_true", help="print a text summary instead of showing the widget")
  @cell_magic
  def tgviz(self, line: str, cell: str) -> None:
    """Run the cell with tinygrad's compiler traced, then show every kernel's rewrites, graphs and code.

    The cell runs as it would without the magic (same output, same variables, last expression displayed); the Trace
    is stored in a variable (-o). --env NAME=VALUE runs it under tinygrad Context settings; --compare NAME shows the
    comparison with the Trace of an earlier cell instead. An exception still shows the widget with everything traced
    up to it, then the traceback."""
    args = parse_argstring(self.tgviz, line)
    shell = self.shell
    assert shell is not None, "the magic runs in an IPython shell"
    try: env = parse_settings(args.env)
    except ValueError as e: raise UsageError(f"%%tgviz --env: {e}") from None
    other = self._trace_named(args.compare) if args.compare is not None else None
    trace: Trace | None = None
    code = shell.transform_cell(cell)  # IPython's input transforms (%magics, !shell, ...)
    filename = shell.compile.cache(code, self._cell_number())  # so tracebacks label the cell's lines "Cell In[n]"
    try:
      with capture(device=args.device, env=env) as trace: self._run(code, filename)
    except BaseException:  # capture() kept it in trace.error; raised again after the widget, as IPython shows it
      if trace is None: raise  # the capture itself could not start
    shell.user_ns[args.out] = trace
    if args.export:
      paths = trace.export_svg(args.export, kernel=args.kernel or "*")
      print(f"tgviz: wrote {plural(len(paths), 'SVG file')} to {args.export}")
    if other is not None:
      comparison = compare(other, trace, labels=(args.compare, args.out))
      if args.no_widget: print(comparison.summary())
      else: display(CompareWidget(comparison, max_nodes=args.max_nodes))
    elif args.no_widget: print(trace.summary())
    else:
      display(TraceWidget(trace, kernel=args.kernel, max_nodes=args.max_nodes,
                          export_dir=args.export or DEFAULT_EXPORT_DIR, error_note="its traceback follows below", tab=args.tab))
    if trace.error is not None: raise self._from_user_frames(trace.error, filename)

  def _trace_named(self, name: str) -> Trace:
    """The Trace in the user's variable name (UsageError, saying what to do, when there is none)."""
    assert self.shell is not None
    if name not in self.shell.user_ns:
      raise UsageError(f"%%tgviz --compare {name}: there is no variable {name!r}; first run the other cell as %%tgviz -o {name}")
    found = self.shell.user_ns[name]
    if not isinstance(found, Trace):
      raise UsageError(f"%%tgviz --compare {name}: {name} is a {type(found).__name__}, not a tgviz Trace; "
                       f"store one with %%tgviz -o {name}")
    return found

  def _cell_number(self) -> int:
    """The number of the cell running now (IPython has already counted it in shell.execution_count)."""
    shell = self.shell
    assert shell is not None
    result = getattr(shell.displayhook, "exec_result", None)
    return result.execution_count if result is not None and result.execution_count is not None else shell.execution_count

  def _from_user_frames(self, e: BaseException, filename: str) -> BaseException:
    """The exception, to be shown by IPython from the cell's own frames on: tgviz's frames (the magic, the capture)
    are not the user's business. IPython renders an exception through its _render_traceback_ when it has one."""
    shell = self.shell
    assert shell is not None
    tb = e.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != filename: tb = tb.tb_next
    if tb is not None:
      lines = shell.InteractiveTB.structured_traceback(type(e), e, tb, tb_offset=0)
      try: e._render_traceback_ = lambda: lines  # type: ignore[attr-defined]
      except AttributeError: pass  # an exception type that takes no attributes keeps IPython's own rendering
    return e

  def _run(self, code: str, filename: str) -> None:
    """Execute like IPython: in the user namespace, the last expression shown through the displayhook (Out[n], _)."""
    shell = self.shell
    assert shell is not None, "the magic runs in an IPython shell"
    tree = ast.parse(code, filename)
    last = tree.body[-1] if tree.body else None
    if isinstance(last, ast.Expr): tree.body.pop()  # shown as Out[n], as IPython shows a cell's last expression
    exec(compile(tree, filename, "exec"), shell.user_ns)
    if isinstance(last, ast.Expr):
      value = eval(compile(ast.Expression(last.value), filename, "eval"), shell.user_ns)
      shell.displayhook(value)
