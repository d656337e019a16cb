"""Where each kind of UOp first appears in each group of a recording: what a search of a trace's UOps finds.

Owns the walk over a Recording's UOp table that finds, per group, the first place (a step's input graph, or the
replacement a match made) where a UOp of each content (op, dtype, arg) is seen, with that UOp's node key and a text to
search (its op, arg and dtype, as its label writes them). It reads the table only; it records and patches nothing.
"""
from __future__ import annotations

from dataclasses import dataclass

from tinygrad.helpers import ansistrip
from tinygrad.uop.ops import Ops, UOp

from tgviz.bridge.recording import Recording
from tgviz.bridge.uops import _base_label, node_key

_TEXT = 200  # characters of a UOp's text kept for searching (a long arg, say a kernel's whole KernelInfo, is cut)
_SKIP = (Ops.SOURCE, Ops.BINARY)  # a kernel's code and binary: its code is searched as code, its binary not at all


@dataclass(frozen=True, slots=True)
class Birth:
  """The first UOp of one content seen in a group: at step `step`, in its input graph (match -1) or in what match
  `match` made; its node key and its text (op, arg and dtype)."""
  text: str
  group: int
  step: int
  match: int
  key: str


def _text(u: UOp) -> str:
  return ansistrip(" ".join(_base_label(u)))[:_TEXT]


def births(rec: Recording) -> list[Birth]:
  """Per group, in order, the first UOp of each content (op, dtype, arg) it shows: walked from each step's input graph
  and each match's replacement, each UOp once per group (a node seen is never walked again, nor anything below it)."""
  fields = rec.uop_fields
  content_of: dict[int, int] = {}                 # trace number -> its content's id
  contents: dict[tuple, int] = {}
  found: list[tuple[int, int, int, int]] = []     # (trace number, group, step, match)
  for gi, group in enumerate(rec.groups):
    seen: set[int] = set()
    got: set[int] = set()
    for si, step in enumerate(group.steps):
      for k, root in enumerate([step.sink, *(m[1] for m in step.matches)]):
        if root in seen: continue
        stack = [root]
        while stack:
          if (n := stack.pop()) in seen: continue
          seen.add(n)
          f = fields[n]
          if (c := content_of.get(n)) is None:
            op, dtype, _, arg, _ = f
            try: c = contents.setdefault((op, dtype, arg), len(contents))
            except TypeError: c = contents.setdefault((op, dtype, repr(arg)), len(contents))  # an unhashable arg
            content_of[n] = c
          if c not in got and f[0] not in _SKIP:
            got.add(c)
            found.append((n, gi, si, k - 1))
          stack.extend(f[2])
  uops = rec.uops([n for n, *_ in found])
  texts: dict[int, str] = {}
  out = []
  for (n, gi, si, k), u in zip(found, uops, strict=True):
    if (text := texts.get(c := content_of[n])) is None: text = texts[c] = _text(u)
    out.append(Birth(text, gi, si, k, node_key(u)))
  return out
