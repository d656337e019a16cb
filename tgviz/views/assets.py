"""The frontend's files (``js/``): shipped in the wheel under ``tgviz/static``, or ``js/`` in a source checkout."""
from __future__ import annotations

import posixpath
import re
from pathlib import Path

_IMPORT = re.compile(r'^import \{([^}]*)\} from "(\.\.?/[\w./]+)";\n', re.M)
_EXPORT = re.compile(r"^export (?=(?:async )?function |const |let |class )", re.M)
_DEFAULT = re.compile(r"^export default .*;\n", re.M)  # an inlined module's default export (anywidget's) is the importer's no more


def static_file(name: str) -> Path:
  """The path of a frontend file, e.g. "widget.js", "port/layout.js"."""
  package = Path(__file__).resolve().parents[1]   # tgviz/
  return package / "static" / name if (package / "static" / name).exists() else package.parent / "js" / name


# the trace browser's styles (the widget and the report's page)
BROWSER_CSS = ("widget.css", "table.css", "program.css", "run.css", "compare.css", "whatif.css", "access.css", "search.css",
               "programmap.css")
COMPARE_CSS = ("widget.css", "table.css", "compare.css")  # the comparison's (its widget and its page)


def styles(*names: str) -> str:
  """Frontend CSS files as one text, e.g. styles("widget.css", "table.css")."""
  return "".join(static_file(n).read_text() for n in names)


def modules(name: str) -> list[str]:
  """A frontend module and the modules it imports by a relative path (``import { f } from "./table.js";``,
  ``"./port/layout.js"``, ``"../dom.js"``), and theirs: each once, by its path under js/, in dependency order (what a
  module imports before it), the module itself last."""
  order: list[str] = []

  def visit(n: str, path: tuple[str, ...]) -> None:
    if n in path: raise ValueError(f"js/{n}: an import cycle ({' -> '.join((*path, n))})")
    if n in order: return
    for names, dep in _IMPORT.findall(static_file(n).read_text()):
      if " as " in names: raise ValueError(f"js/{n}: renamed imports cannot be inlined ({names.strip()} from {dep})")
      visit(posixpath.normpath(posixpath.join(posixpath.dirname(n), dep)), (*path, n))
    order.append(n)

  visit(name, ())
  return order


def esm(name: str) -> str:
  """A frontend module as one module text: the modules it imports (see modules) inlined before it, each once, their
  exports made plain declarations. anywidget and the HTML report load each module from a single text, where a relative
  import cannot resolve. The modules inlined into one text share its scope: their top-level names must differ
  (tests/views/test_js_parity.py parses each shipped text with node)."""
  parts = [_IMPORT.sub("", static_file(n).read_text()) for n in modules(name)]
  return "".join(_DEFAULT.sub("", _EXPORT.sub("", p)) for p in parts[:-1]) + parts[-1]


def script_safe(json_text: str) -> str:
  """JSON text (a JS string literal too) that is safe inside a <script> element: every "<" written as an escape."""
  return json_text.replace("<", "\\u003c")
