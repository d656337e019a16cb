"""Generated device code as highlighted HTML (pygments), light and dark."""
from __future__ import annotations

import re
from functools import cache
from typing import Any

from pygments import format as render
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.token import Name, Number, Operator, Punctuation, String, Text

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


_BREAK = "\ue000"  # where a line may wrap, in the tokens' text until pygments has escaped it (then <wbr>)
_CLOSERS = tuple(")]};,.:")  # never at the start of a wrapped line's continuation
_OPERANDS = (Name, Number, String)  # what a binary operator follows (after anything else it is unary: -x, *(p))


def _breakable(tokens: list[tuple[Any, str]]) -> list[tuple[Any, str]]:
  """The tokens with a break opportunity (_BREAK) after each operator and each punctuation but a member access's `.`
  (after a comma, a bracket, a binary operator), where the next token is no whitespace (a space is one already), no
  operator (`<<`, `->`, `+=` are two tokens: they stay whole) and no closing bracket or comma: a line too long for the
  code column wraps between tokens, never inside a name, a number or a string."""
  out = list(tokens)
  for i, (kind, text) in enumerate(tokens[:-1]):
    nxt_kind, nxt = tokens[i + 1]
    punct, op = kind in Punctuation, kind in Operator
    if not (punct or op) or text in (".", "") or nxt_kind in Text or nxt_kind in Operator or nxt.startswith(_CLOSERS): continue
    before_kind, before = tokens[i - 1] if i else (Text, "")
    if op and not (any(before_kind in t for t in _OPERANDS) or before.endswith((")", "]"))): continue  # unary
    out[i] = (kind, text + _BREAK)
  return out


_NO_WRAP = 16  # characters a line of which never wraps (a row of the narrowest code column holds more): no --len
_CHUNK = re.compile(f"(?<= )|{_BREAK}")  # where a line may wrap: after a space, at a break


def _size(marked: str) -> str:
  """The style of a line (its text with _BREAK where it may wrap) that the stylesheet estimates its rows from (js/
  codelines.js): its indentation (--in) and length (--len) in characters, and the characters a row it wraps leaves
  empty on average (--w: it wraps between tokens, not at any character; a row ends at a random place in a chunk
  between two places it may wrap, c characters long with the chance c/len, and leaves c/2 on average: the sum of c²/2
  over len). Nothing for a blank line, no --len nor --w for a short one (one row)."""
  text = marked.expandtabs(8).rstrip()
  bare = text.replace(_BREAK, "")
  n = len(bare) - len(bare.lstrip(" "))
  style = [f"--in:{n}"] if n else []
  if len(bare) > _NO_WRAP:
    chunks = [len(c) for c in _CHUNK.split(text) if c]
    style += [f"--len:{len(bare)}", f"--w:{sum(c * c for c in chunks) / (2 * len(bare)):.1f}"]
  return f' style="{";".join(style)}"' if style else ""


@remembered()
def highlight_code(source: str, renderer: str) -> str:
  """Generated device code as highlighted HTML (pygments escapes the text); renderer is the renderer's class name. Each
  source line is its own element, ``<span class="tgviz-line" data-line="N">`` (N from 1), whose number the stylesheet
  shows in the margin (not part of the text, so copying takes the code alone); each line says its indentation, length and
  room a wrap leaves, in characters (``style="--in:4;--len:57;--w:2.5"``, _size: a wrapped line's continuation hangs
  under its start, further in; the stylesheet estimates from them how many rows a line not yet laid out takes at the
  column's width, js/codelines.js), and ``<wbr>`` marks where a long line may wrap (between tokens: _breakable)."""
  lexer = get_lexer_by_name(tg.lexer_name(renderer), stripnl=False)  # keep blank first lines: numbers must match
  tokens = list(lexer.get_tokens(source))
  if _BREAK not in source: tokens = _breakable(tokens)
  body = render(tokens, HtmlFormatter(nowrap=True)).replace(_BREAK, "<wbr>")
  lines = body.split("\n")
  if lines and lines[-1] == "": lines.pop()  # pygments ends the text with a newline
  marked = "".join(text for _, text in tokens).split("\n")  # each line's text, _BREAK where it may wrap
  numbered = "".join(f'<span class="tgviz-line" data-line="{i}"{_size(marked[i - 1] if i <= len(marked) else "")}>{ln}</span>'
                     for i, ln in enumerate(lines, 1))
  return f'<div class="highlight" style="--tg-ln: {len(str(len(lines)))}ch"><pre>{numbered}</pre></div>'
