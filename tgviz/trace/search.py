"""Search a trace: kernel and step names, the user's Tensor ops and lines (origins), UOp ops and args, the rules that fired
and their source files, and the generated code.

Owns the search index (plain data: what the HTML report stores and ``js/port/search.js`` searches in the page, the
port of :func:`find`) and the search itself; ``trace.search(text)`` (:func:`search`) answers with :class:`Hit`\\ s. A
UOp is found where it first appears in each group (a step's input graph, or the match that made it: see
tg.births); a rule in each step it fired in, at its first match there; a code line in its kernel's codegen step.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tgviz import bridge as tg
from tgviz.trace.kernel import Kernel
from tgviz.trace.steps import CellLabel, Step, place, where
from tgviz.trace.trace import Trace

KINDS = ("kernel", "step", "origin", "uop", "rule", "code")  # the order hits are grouped in
TEXT = 200  # characters of a hit's text (a code line, a user's line)


@dataclass(frozen=True)
class Hit:
  """One thing a search found. kind: "kernel", "step", "origin" (a Tensor op the kernel computes, or the user's line
  that called it), "uop", "rule" (a pattern that fired) or "code" (a line of a kernel's code); kernel: the kernel it is in
  (None for a schedule's or other group's step); step: where it is (a kernel's first step for a kernel or an origin, the
  step that made a UOp, the step a rule fired in, the kernel's codegen step for a code line); match: the match (0-based)
  that made the UOp, or the rule's first match in the step (None: the step's input graph, or the whole step); line: the
  code line (from 1); text: what matched, in context; node: a UOp's node key (as in an SVG's data-node); count: how many
  matches a rule made in the step."""
  kind: str
  kernel: Kernel | None
  step: Step | None
  match: int | None
  line: int | None
  text: str
  node: str | None = None
  count: int | None = None

  def __repr__(self) -> str:
    at = f" {self.step.path}" if self.step is not None else ""
    at += f" match {self.match}" if self.match is not None else ""
    at += f" line {self.line}" if self.line is not None else ""
    return f"<Hit {self.kind}{at}: {self.text!r}>"


def _rule_path(file: str) -> str:
  """A rule's source file as people name it: from the package on (tinygrad/codegen/late/devectorizer.py)."""
  parts = Path(file).parts
  return str(Path(*parts[parts.index("tinygrad"):])) if "tinygrad" in parts else file


def build_index(trace: Trace, cell_label: CellLabel | None = None) -> dict[str, Any]:
  """The search index of a trace, as plain data (JSON as is): groups [display name, kind, kernel name, key]; step names
  (each distinct name once, `names`) and each group's steps by name; origins [group, op, backward, where (steps.place:
  a notebook's cell by cell_label), the user's line, the Tensor methods it called, the node keys of the UOps of the
  kernel's AST it made, space-separated (Kernel.made_by)]; UOp texts (`uops`, each once) and
  where each first appears per group [text, group, step, match (-1: the step's input), node key] (`births`); rules
  [where, source file, pattern] and where each fired [rule, group, step, first match, count] (`fired`); each kernel's
  code [group, its codegen step, source]."""
  groups: list[list] = []
  names: dict[str, int] = {}
  steps: list[list[int]] = []
  origins: list[list] = []
  code: list[list] = []
  for g in trace.groups:
    kernel = g.kernel
    groups.append([g.display_name, g.kind, kernel.name if kernel is not None else "", kernel.key if kernel is not None else ""])
    steps.append([names.setdefault(s.name, len(names)) for s in g.steps])
    for i, o in enumerate(kernel.origins if kernel is not None else ()):
      assert kernel is not None
      origins.append([g.index, o.op, int(o.backward), place(o.file, o.line, cell_label) if o.file is not None and o.line is not None else "",
                      o.source.strip()[:TEXT], list(o.calls), " ".join(tg.node_key(u) for u in kernel.made_by(i))])
    if kernel is not None and kernel.source:
      cg = kernel.codegen_step
      code.append([g.index, cg.index if cg is not None else 0, kernel.source])
  texts: dict[str, int] = {}
  births = [[texts.setdefault(b.text, len(texts)), b.group, b.step, b.match, b.key] for b in tg.births(trace._rec)] \
    if trace._rec is not None else []
  rules: dict[tuple[str, int], int] = {}
  fired: list[list[int]] = []
  for s in trace.steps:
    seen: dict[int, list] = {}
    for k, (_, _, loc, _) in enumerate(s._raw.matches):  # (the records: a step's Match objects are made only when asked for)
      r = rules.setdefault(loc, len(rules))
      if (row := seen.get(r)) is None: fired.append(row := seen.setdefault(r, [r, s.group.index, s.index, k, 0]))
      row[4] += 1
  return {"groups": groups, "names": list(names), "steps": steps, "origins": origins, "uops": list(texts), "births": births,
          "rules": [[where(*loc), _rule_path(loc[0]), tg.pattern_source(loc)] for loc in rules], "fired": fired, "code": code}


Row = list[Any]
"""A hit as data: [kind, group, step (or None), match (or None), line (or None), text, node (or None), count (or None)]."""


def find(index: dict[str, Any], text: str) -> list[Row]:
  """Every hit of text (case-insensitive, a substring; blanks around it ignored) in an index (build_index), grouped by
  kind (KINDS' order), each kind in the trace's order. js/port/search.js findIndex is its port (held equal by
  tests/views/test_js_parity.py)."""
  q = text.strip().lower()
  if not q: return []
  out: list[Row] = []
  groups, steps, names = index["groups"], index["steps"], index["names"]
  for g, (display, kind, name, key) in enumerate(groups):
    if kind == "kernel" and (q in display.lower() or q in name.lower() or (len(q) >= 4 and key.startswith(q))):  # (Kernel.named)
      out.append(["kernel", g, 0 if steps[g] else None, None, None, f"{display} {key[:8]}", None, None])
  hit_names = {i for i, n in enumerate(names) if q in n.lower()}
  for g, (display, kind, _, _) in enumerate(groups):
    if kind != "kernel" and steps[g] and q in display.lower(): out.append(["step", g, 0, None, None, display, None, None])
    out += [["step", g, s, None, None, names[n], None, None] for s, n in enumerate(steps[g]) if n in hit_names]
  # text that names an op the user called ("softmax") finds the kernels that compute it, not every op of a line that
  # says it (the scores' matmul on the line that ends in .softmax()); other text (a variable's name) finds lines
  named = any(q in op.lower() or any(q in c.lower() for c in calls) for _, op, _, _, _, calls, _ in index["origins"])
  for g, op, backward, at, line, calls, made in index["origins"]:
    called = [c for c in calls if q in c.lower()]
    if q in op.lower() or q in at.lower() or (q in line.lower() and not named) or called:
      # the place first: what tells a kernel's hits of one op apart, read before a narrow list cuts the rest
      text = f"{at}  {op}{' (backward)' if backward else ''}{' calls ' + ', '.join(called) if called else ''}  {line}"
      out.append(["origin", g, 0 if steps[g] else None, None, None, text.strip(), made or None, None])
  uops = index["uops"]
  hit_uops = {i for i, u in enumerate(uops) if q in u.lower()}
  out += [["uop", g, s, None if m < 0 else m, None, uops[t], key, None] for t, g, s, m, key in index["births"] if t in hit_uops]
  rules = index["rules"]
  hit_rules = {i for i, (at, path, source) in enumerate(rules) if q in at.lower() or q in path.lower() or q in source.lower()}
  out += [["rule", g, s, m, None, f"{rules[r][0]}  {rules[r][2]}"[:TEXT], None, n] for r, g, s, m, n in index["fired"] if r in hit_rules]
  for g, cg, source in index["code"]:
    out += [["code", g, cg, None, i + 1, line.strip()[:TEXT], None, None] for i, line in enumerate(source.split("\n")) if q in line.lower()]
  return out


_INDEXES: weakref.WeakKeyDictionary[Trace, dict[CellLabel | None, dict[str, Any]]] = weakref.WeakKeyDictionary()


def index(trace: Trace, cell_label: CellLabel | None = None) -> dict[str, Any]:
  """The trace's search index (build_index, the user's lines named by cell_label), built on first use and kept while
  the trace lives."""
  kept = _INDEXES.setdefault(trace, {})
  if (found := kept.get(cell_label)) is None: found = kept[cell_label] = build_index(trace, cell_label)
  return found


def hits(trace: Trace, rows: list[Row]) -> list[Hit]:
  """Rows of find() as Hits of the trace's kernels and steps."""
  groups = trace.groups
  return [Hit(kind, groups[g].kernel, groups[g].steps[s] if s is not None else None, m, line, text, node, count)
          for kind, g, s, m, line, text, node, count in rows]


def search(trace: Trace, text: str) -> list[Hit]:
  """Everything in the trace text is found in (case-insensitive; see find): kernels by name or key, steps by name,
  origins by op, file:line or line text, UOps by op, arg and dtype ("EXP2", "CONST 0.5"), rules by file:line, source
  file or pattern, code lines; grouped by kind (KINDS), each kind in the trace's order."""
  return hits(trace, find(index(trace), text))
