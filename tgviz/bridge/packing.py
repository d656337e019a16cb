"""A report's node tables packed: what the page (js/port/replay.js) cannot derive of each row is stored, the rest
derived again there.

Owns: pack_rows (each row's content, its sources told against an earlier row's, and what differs from what the page
derives) and the Python twin of the page's derivation (derivedRow). Plain lists in and out: it reads no UOp.
"""
from __future__ import annotations

import operator
from collections.abc import Callable

from tgviz.bridge.uops import callee_note, cut_line, note_line, op_families


def _derived(rows: list[list], contents: list[list], notes: dict[str, str], key: Callable[[int], str],
             i: int) -> tuple[str, list[str], object]:
  """What js/port/replay.js derives of row i from its content and sources (derivedRow): family, label lines, fold (key:
  a row's key, see NodeTable.key)."""
  _, _, _, srcs, _, content = rows[i]
  own = contents[content][1]
  op = own[0]
  label = list(own)
  for j, s in enumerate(srcs):
    if f := rows[s][4]: label.append(cut_line(f"{f[0]}{j} {f[1]}"))
  if op == "CALL" and srcs:
    callee = rows[srcs[0]]
    if note := (notes and notes.get(key(srcs[0]))) or callee_note(contents[callee[5]][1], len(callee[3])):
      label.append(note_line(note))
  fold: object = 0
  if op in ("RESHAPE", "EXPAND") and srcs and rows[srcs[0]][4]: fold = rows[srcs[0]][4]
  elif op == "STACK" and all(rows[s][2][0] == "CONST" for s in srcs): fold = ["STACK", None]
  elif op == "CONST" and len(own) > 1: fold = ["CONST", own[1]]
  return _OP_FAMILY.get(op, "other"), label, fold


_OP_FAMILY = op_families()


_TEMPLATES = 8  # how many earlier rows of the same content and arity a row's sources may be told against


def _packed_sources(rows: list[list]) -> list[list[int]]:
  """Each row's sources against a template: one of the last _TEMPLATES earlier rows of the same content and as many
  sources (a replay rebuilds a node with one source changed), the most recent unless a leading -q picks the q-th before
  it; then per source 0 for the template's, else how many rows back it is. A row with no template: distances back."""
  out: list[list[int]] = []
  add = out.append
  recent: dict[tuple[int, int], list[int]] = {}
  for i, row in enumerate(rows):
    if not (srcs := row[3]):
      add([])
      continue
    n = len(srcs)
    if (cands := recent.get(key := (row[5], n))) is None:
      recent[key] = [i]
      add([i - s for s in srcs])
      continue
    if srcs == (last := rows[cands[-1]][3]): add([0] * n)  # the most recent one is the same: it wins
    # else the earlier one sharing the most sources (the most recent of those), none beating one that shares all;
    # one and two sources (most rows: 442,000 of a GPT step's 551,000) spelled out, the same choice
    elif n == 1:
      s0 = srcs[0]
      for j in range(len(cands) - 2, -1, -1):
        if rows[cands[j]][3][0] == s0:
          add([j + 1 - len(cands), 0])
          break
      else: add([i - s0])
    elif n == 2:
      (s0, s1), top = srcs, len(cands) - 1
      q, best = 0, (s0 == last[0]) + (s1 == last[1])
      for j in range(top - 1, -1, -1):
        t = rows[cands[j]][3]
        if (same := (s0 == t[0]) + (s1 == t[1])) > best:
          q, best = top - j, same
          if same == 2: break
      t = rows[cands[top - q]][3]
      enc = [0 if s0 == t[0] else i - s0, 0 if s1 == t[1] else i - s1]
      add([-q, *enc] if q else enc)
    else:
      q, best = 0, -1
      for j, c in enumerate(reversed(cands)):
        if (same := sum(map(operator.eq, srcs, rows[c][3]))) > best:  # (same lengths: the key says so)
          q, best = j, same
          if same == n: break
      enc = [0 if s == t else i - s for s, t in zip(srcs, rows[cands[-1 - q]][3] if q else last, strict=True)]
      add([-q, *enc] if q else enc)
    cands.append(i)
    if len(cands) > _TEMPLATES: del cands[0]
  return out


def pack_rows(rows: list[list], contents: list[list], notes: dict[str, str], key: Callable[[int], str]) -> dict[str, list]:
  """A node table's rows as the report stores them: each row's content id, its sources (a row's sources come before
  it) told against a similar earlier row (see _packed_sources), and only what the page cannot derive: [row, field,
  value] where the row's family, label or fold differs from what js/port/replay.js derives (derivedRow; tinygrad's key is
  derived too: sha256 of the content's text and the sources' keys). notes: the CALL notes' label lines by kernel AST
  key; key: a row's key (NodeTable.key). js/port/replay.js unpackRows unpacks it exactly."""
  over: list[list] = []
  # rows whose label is one list (NodeTable.add makes one per op, dtype, arg, folded constants and callee) and that have
  # as many sources differ alike: their family, label and fold, and what derivedRow derives, are made of those
  differs: dict[tuple[int, int], list[tuple[int, object]]] = {}
  for i, row in enumerate(rows):
    if (d := differs.get(alike := (id(row[2]), len(row[3])))) is None:
      d = differs[alike] = [(field, row[field]) for field, value in zip((1, 2, 4), _derived(rows, contents, notes, key, i), strict=True)
                            if row[field] != value]
    over.extend([i, field, value] for field, value in d)
  return {"content": [r[5] for r in rows], "src": _packed_sources(rows), "over": over}
