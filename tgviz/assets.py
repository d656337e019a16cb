"""The frontend's files (``js/``): shipped in the wheel under ``tgviz/static``, or ``js/`` in a source checkout."""
from __future__ import annotations

import re
from pathlib import Path

_IMPORT = re.compile(r'^import \{[^}]*\} from "\./([\w.]+)";\n', re.M)
_EXPORT = re.compile(r"^export (?=function |const |class )", re.M)


def static_file(name: str) -> Path:
  """The path of a frontend file, e.g. "widget.js"."""
  here = Path(__file__).resolve().parent
  return here / "static" / name if (here / "static" / name).exists() else here.parent / "js" / name


def styles(*names: str) -> str:
  """Frontend CSS files as one text, e.g. styles("widget.css", "table.css")."""
  return "".join(static_file(n).read_text() for n in names)


def esm(name: str) -> str:
  """A frontend module as one module text, its imports of sibling files (``import { f } from "./table.js";``) replaced by
  their code: anywidget and the HTML report load each module from a single text, where a relative import cannot resolve."""
  return _IMPORT.sub(lambda m: _EXPORT.sub("", esm(m.group(1))), static_file(name).read_text())


def script_safe(json_text: str) -> str:
  """JSON text (a JS string literal too) that is safe inside a <script> element: every "<" written as an escape."""
  return json_text.replace("<", "\\u003c")
