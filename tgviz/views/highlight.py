"""Generated device code as highlighted HTML (pygments), light and dark."""
from __future__ import annotations

from functools import cache

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name

from tgviz import bridge as tg
from tgviz.work.remembered import remembered


@cache
def code_css() -> str:
  """Pygments CSS for the code panel: a light style, and a dark one under JupyterLab's (or Notebook 7's) dark theme and,
  on a plain page such as the HTML report, under a dark system theme."""
  light = HtmlFormatter(style="default").get_style_defs(".tgviz-code")
  dark = HtmlFormatter(style="monokai").get_style_defs("body[data-jp-theme-light='false'] .tgviz-code")
  system = HtmlFormatter(style="monokai").get_style_defs("body:not([data-jp-theme-light]) .tgviz-code")
  return f"{light}\n{dark}\n@media (prefers-color-scheme: dark) {{\n{system}\n}}"


@remembered()
def highlight_code(source: str, renderer: str) -> str:
  """Generated device code as highlighted HTML (pygments escapes the text); renderer is the renderer's class name. Each
  source line is its own element, ``<span class="tgviz-line" data-line="N">`` (N from 1), whose number the stylesheet
  shows in the margin (not part of the text, so copying takes the code alone)."""
  lexer = get_lexer_by_name(tg.lexer_name(renderer), stripnl=False)  # keep blank first lines: numbers must match
  body = highlight(source, lexer, HtmlFormatter(nowrap=True))
  lines = body.split("\n")
  if lines and lines[-1] == "": lines.pop()  # pygments ends the text with a newline
  numbered = "".join(f'<span class="tgviz-line" data-line="{i}">{ln}</span>' for i, ln in enumerate(lines, 1))
  return f'<div class="highlight" style="--tg-ln: {len(str(len(lines)))}ch"><pre>{numbered}</pre></div>'
