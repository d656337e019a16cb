"""Generated device code as highlighted HTML (pygments), light and dark."""
from __future__ import annotations

from functools import cache, lru_cache

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name

from tgviz import bridge as tg


@cache
def code_css() -> str:
  """Pygments CSS for the code panel and the asm tab: a light style, and a dark one under JupyterLab's (or Notebook 7's) dark theme and,
  on a plain page such as the HTML report, under a dark system theme."""
  panes = (".tgviz-code", ".tgviz-asm")  # the code, and the asm tab (program.js)
  light = HtmlFormatter(style="default").get_style_defs(list(panes))
  dark = HtmlFormatter(style="monokai").get_style_defs([f"body[data-jp-theme-light='false'] {p}" for p in panes])
  system = HtmlFormatter(style="monokai").get_style_defs([f"body:not([data-jp-theme-light]) {p}" for p in panes])
  return f"{light}\n{dark}\n@media (prefers-color-scheme: dark) {{\n{system}\n}}"


@lru_cache(maxsize=256)
def highlight_code(source: str, renderer: str) -> str:
  """Generated device code as highlighted HTML (pygments escapes the text); renderer is the renderer's class name. Each
  source line is its own element, ``<span class="tgviz-line" data-line="N">`` (N from 1), whose number the stylesheet
  shows in the margin (not part of the text, so copying takes the code alone)."""
  lines = highlight_lines(source, tg.lexer_name(renderer))
  numbered = "".join(f'<span class="tgviz-line" data-line="{i}">{ln}</span>' for i, ln in enumerate(lines, 1))
  return f'<div class="highlight" style="--tg-ln: {len(str(len(lines)))}ch"><pre>{numbered}</pre></div>'


def highlight_lines(text: str, lexer: str) -> list[str]:
  """Text highlighted by the pygments lexer of that name, as HTML (the text escaped), one string per line of the text."""
  body = highlight(text, get_lexer_by_name(lexer, stripnl=False), HtmlFormatter(nowrap=True))  # blank first lines kept
  lines = body.split("\n")
  if lines and lines[-1] == "": lines.pop()  # pygments ends the text with a newline
  return lines
