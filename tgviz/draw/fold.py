"""Folding: a view of a scene that draws less, never a change to the data (the trace, replays and raw pictures see the
exact graph).

Owns: which nodes of a scene (layout.Scene, the union of a before and an after graph) fold, and the folded scene drawn
instead: the same layout for both sides, marked nodes (added, removed, changed: what a match touched) always drawn as
themselves. It reads only the drawn nodes (graph.Node: op, dtype, the text tinygrad renders a leaf with, the sources
in order, the arg's shape) and knows no tinygrad. js/port/fold.js is its twin, function for function; tests/views/test_js_parity.py
holds them equal.

Two folds:
- index arithmetic: an integer or bool ALU node whose sources are constants (vectors of constants too, as after the
  expander: ``{0,1,2,3}.reshape((4,1))*8``), RANGE, SPECIAL, variables or such nodes (``expressible``) is absorbed
  into its users when they all are expressible too; the nodes left (``roots``) are drawn labelled with their expression
  as tinygrad's renderer writes it (tinygrad/uop/render.py: ``lidx0*48+r1*4``). A constant one (a CAST of a constant,
  arithmetic of constants) goes into its users' labels, as to_graph folds CONST, where its line reads whole.
- lanes: nodes of one op, dtype and arg shape whose sources are the same nodes, lanes of one class or constants (values
  ignored), and whose users are the same nodes or lanes of one class, are drawn as one node "×N". Classes are interned
  bottom up (a structural class per node, constants ignored), then split top down by the classes of their users; a
  structural class holds no path (a node's class is made of its sources' classes, which differ from its own).
"""
from __future__ import annotations

import re
from dataclasses import replace

from tgviz.draw.graph import Node
from tgviz.draw.scene import Scene

SYMS = {"ADD": "+", "SUB": "-", "FLOORDIV": "//", "FLOORMOD": "%", "SHL": "<<", "SHR": ">>", "MUL": "*", "CMPLT": "<",
        "CMPNE": "!=", "AND": "&", "OR": "|", "XOR": "^"}  # tinygrad/uop/render.py syms
PRECEDENCE = {"MUL": 1, "FLOORDIV": 1, "FLOORMOD": 1, "ADD": 2, "SUB": 2, "SHL": 3, "SHR": 3, "AND": 4, "XOR": 5, "OR": 6}
EXPR_OPS = frozenset({*SYMS, "CAST", "NEG", "MAX", "WHERE", "CDIV", "CMOD"})  # what the renderer writes from its sources
WEAK = frozenset({"weakint", "weakfloat", "bool"})  # a CAST of a constant of these is written as the constant
LANE_OPS = frozenset({*EXPR_OPS, "EXP2", "LOG2", "SIN", "SQRT", "RECIPROCAL", "TRUNC", "CMPEQ", "THREEFRY", "FDIV", "POW",
                      "MULACC", "BITCAST", "LOAD", "STORE", "INDEX", "STACK", "REDUCE", "WMMA", "SHRINK", "RESHAPE",
                      "PERMUTE", "EXPAND", "PAD", "FLIP"})  # the ops whose nodes can be lanes (not RANGE, PARAM, SINK, ...)
GATHER_OPS = frozenset({"STACK", "GROUP", "SINK"})  # users that take lanes as they come: a vector of lanes, a group of stores
CHAIN_OPS = frozenset({"ADD", "MUL", "MAX", "AND", "OR", "XOR"})  # a chain of one of these takes lanes one by one (a reduce)
LIST_OPS = frozenset({"LINEAR"})  # a list of every UOp (the program, in order): it keeps no expression from folding
LINE, MAX_LINES = 60, 4
MAX_TEXT = LINE * MAX_LINES  # a longer expression is not one: its node is drawn as itself


def strip_parens(s: str) -> str:
  """tinygrad.helpers.strip_parens: one pair of outer parentheses off, where they enclose the whole."""
  if not (s[:1] == "(" and s[-1:] == ")"): return s
  depth = 0
  for c in s[1:-1]:
    depth += (c == "(") - (c == ")")
    if depth < 0: return s
  return s[1:-1] if depth == 0 else s


def render(n: Node, args: list[str], ops: list[str], consts: list[str]) -> str:
  """tinygrad's renderer (tinygrad/uop/render.py) on one node, its sources already written (args), with their ops
  (ops; a constant's, a vector of constants' too, is CONST) and, for a CONST source, its dtype (consts; "" for the
  others: tinygrad writes a CAST of a weak CONST as the CONST, of a vector as a CAST)."""
  op = n.op
  if op == "CAST": return args[0] if consts[0] in WEAK else f"({n.dtype})({args[0]})"
  if op == "NEG": return f"(-{args[0]})"
  if op == "MAX": return f"max({args[0]}, {args[1]})"
  if op == "WHERE": return f"({args[1]} if {args[0]} else {args[2]})"
  if op in ("CDIV", "CMOD"): return f"{op.lower()}({args[0]}, {args[1]})"
  a, b = args
  if op in PRECEDENCE:
    if PRECEDENCE.get(ops[0], 99) <= PRECEDENCE[op]: a = strip_parens(a)
    if PRECEDENCE.get(ops[1], 99) < PRECEDENCE[op]: b = strip_parens(b)
  return f"({a}{SYMS[op]}{b})"


class _Analysis:
  """Which nodes of a scene are expressions (their text), constants, absorbed or drawn, and the units drawn."""

  def __init__(self, scene: Scene) -> None:
    nodes, marks = scene.nodes, scene.marks
    self.users: dict[str, list[str]] = {k: [] for k in nodes}
    for s, d in scene.edges_before | scene.edges_after:
      if s in self.users and d in nodes: self.users[s].append(d)
    self.text: dict[str, str] = {}        # an expression's (or a constant's) text, as tinygrad renders it
    self.const: set[str] = set()          # constants: text without RANGE, SPECIAL or variables
    self.expr: set[str] = set()           # integer (or bool) expressions and leaves: what an expression absorbs
    self.ops: set[str] = set()            # expressions that are not leaves: what absorbs
    for k, n in nodes.items():
      if k in marks: continue
      if n.text is not None:
        if n.intlike: self.text[k] = n.text; self.expr.add(k)
        continue
      if n.op not in EXPR_OPS or len(n.inputs) != (3 if n.op == "WHERE" else 1 if n.op in ("CAST", "NEG") else 2): continue
      args, ops, consts, const = [], [], [], True
      for i in n.inputs:
        if isinstance(i, str):
          if i not in self.text: break
          args.append(self.text[i]); ops.append(nodes[i].op); consts.append(""); const = const and i in self.const
        else:
          if i[1] is None: break
          args.append(i[1]); ops.append("CONST"); consts.append(i[0] if i[2] == "CONST" else "")  # a vector: (int)({0,1})
      else:
        if not n.intlike and n.op != "CAST": continue  # a CAST to a float of an index (or a constant) ends one
        text = render(n, args, ops, consts)
        if len(text) > MAX_TEXT: continue
        self.text[k] = text
        self.ops.add(k)
        if n.intlike: self.expr.add(k)
        if const: self.const.add(k)
    # hidden: absorbed into users that are all expressions, or a constant whose users are all unmarked and whose text
    # reads whole in their labels (a line "OP0 text"; a longer one, a vector's, is drawn as an expression)
    self.hidden = {k for k in self.text if self.users[k] and (
      (k in self.expr and all(u in self.ops or nodes[u].op in LIST_OPS for u in self.users[k]) and
       any(u in self.ops for u in self.users[k])) or
      (k in self.const and len(nodes[k].op) + 2 + len(self.text[k]) <= LINE and not any(u in marks for u in self.users[k])))}
    # unit -> the nodes it stands for, itself first (hidden ones, depth first; not the constants: like CONSTs, in labels)
    self.holds: dict[str, list[str]] = {}
    inside = self.hidden - self.const
    for k, n in nodes.items():
      if k in self.hidden: continue
      held, stack = [k], [i for i in reversed(n.inputs) if isinstance(i, str) and i in inside]
      while stack:
        h = stack.pop()
        if h in held: continue
        held.append(h)
        stack.extend(i for i in reversed(nodes[h].inputs) if isinstance(i, str) and i in inside)
      self.holds[k] = held
    self.owners: dict[str, list[str]] = {}  # hidden node -> the units that hold it
    for u, held in self.holds.items():
      for h in held[1:]: self.owners.setdefault(h, []).append(u)

  def unit_edges(self, edges: set[tuple[str, str]]) -> list[tuple[str, str]]:
    """Edges between units: an edge into a hidden node goes to the units that hold it; one out of a hidden node is
    inside a unit."""
    out: dict[tuple[str, str], None] = {}
    for s, d in edges:
      if s in self.hidden or s not in self.holds: continue
      for u in ([d] if d in self.holds else self.owners.get(d, [])):
        if u != s: out[(s, u)] = None
    return list(out)


def lanes(scene: Scene, a: _Analysis, edges: list[tuple[str, str]]) -> dict[str, int]:
  """The lane class of each unit folded with others (see the module's docstring); units not in the result stay alone.
  Two passes: structural classes bottom up (op, dtype, arg shape and the sources' classes, constants ignored), then
  top down a unit's class and its users' (a user that gathers lanes, a STACK or GROUP, taken as it comes)."""
  nodes, marks = scene.nodes, scene.marks
  ids: dict[str, int] = {}
  cls: dict[str, int] = {}
  for k, n in nodes.items():  # sources come first
    if k in marks or k in a.const or n.op not in LANE_OPS: cls[k] = ids.setdefault(f"#{k}", len(ids)); continue
    ins = ["C" if not isinstance(i, str) or i in a.const else str(cls.get(i, i)) for i in n.inputs]
    cls[k] = ids.setdefault(f"{n.op}|{n.dtype}|{n.shape}|{','.join(ins)}", len(ids))
  def link(d: str) -> bool:  # a link of a chain of one associative op (tinygrad's reduce of unrolled lanes): its input or user
    n = nodes[d]
    return n.op in CHAIN_OPS and any(nodes[x].op == n.op and nodes[x].dtype == n.dtype
                                     for x in [*(i for i in n.inputs if isinstance(i, str) and i in nodes), *a.users[d]])
  users: dict[str, list[str]] = {u: [] for u in a.holds}
  gather = {d for d in a.holds if nodes[d].op in GATHER_OPS or link(d)}
  for s, d in edges:
    if d not in gather: users[s].append(d)
  lane: dict[str, int] = {}
  for k in reversed(a.holds):  # users come first
    if k in marks or k in a.const or nodes[k].op not in LANE_OPS: continue
    outs = sorted({f"c{lane[u]}" if u in lane else f"k{u}" for u in users[k]})
    lane[k] = ids.setdefault(f"{cls[k]};{','.join(outs)}", len(ids))
  return _classes({k: lane[k] for k in a.holds if k in lane})


def _classes(of: dict[str, object]) -> dict[str, int]:
  """Units grouped by a value, numbered in order of first appearance; groups of one dropped."""
  count: dict[object, int] = {}
  for v in of.values(): count[v] = count.get(v, 0) + 1
  ids: dict[object, int] = {}
  return {u: ids.setdefault(v, len(ids)) for u, v in of.items() if count[v] > 1}


def _chunks(text: str) -> list[str]:
  return [text[i:i + LINE] for i in range(0, len(text), LINE)]


def masked(lines: list[str]) -> str:
  """One line for the same line of several lanes: the line if they agree, else its numbers that differ as # (… when the
  lines differ in more than numbers)."""
  if all(ln == lines[0] for ln in lines): return lines[0]
  parts = [re.split(r"([0-9]+)", ln) for ln in lines]
  first = parts[0]
  if any(len(p) != len(first) or any(p[i] != first[i] for i in range(0, len(p), 2)) for p in parts): return "…"
  return "".join(first[i] if i % 2 == 0 or all(p[i] == first[i] for p in parts) else "#" for i in range(len(first)))


def _unit_node(scene: Scene, a: _Analysis, k: str) -> tuple[Node, list[str]]:
  """A unit as drawn, and its label lines after the first (what lanes compare): an expression with its text, a node
  with its constants' texts added, or the node itself."""
  n, held = scene.nodes[k], a.holds[k]
  if k in a.ops:
    tail = [*_chunks(strip_parens(a.text[k])), n.dtype + (f" · {len(held)} uops" if len(held) > 1 else "")]
    return _held(scene, replace(n, label=tuple(tail), text=None), held), tail
  extra = [_cut(f"{scene.nodes[i].op}{j} {a.text[i]}") for j, i in enumerate(n.inputs) if isinstance(i, str) and i in a.hidden]
  named = n.text is not None and k in a.text and n.text not in n.label  # a leaf says the name expressions call it by
  if not extra and not named: return n, list(n.label[1:])
  label = (_cut(f"{n.op} {n.text}") if named else n.label[0], *n.label[1:], *extra)
  return _held(scene, replace(n, label=label), held), list(label[1:])


def _held(scene: Scene, n: Node, held: list[str] | tuple[str, ...]) -> Node:
  """n holding these nodes (and their ops), where it holds more than itself."""
  return replace(n, holds=tuple(held), held_ops=tuple(scene.nodes[h].op for h in held)) if len(held) > 1 else n


def _cut(line: str) -> str:
  return line if len(line) <= LINE else line[:LINE - 1] + "…"


def fold(scene: Scene) -> Scene:
  """The folded view of a scene (before focus and the fan-in cap): units drawn instead of the nodes they hold, lanes
  as one node ×N; marked nodes are drawn as themselves, and nodes present on a side are drawn on it."""
  a = _Analysis(scene)
  before, after = a.unit_edges(scene.edges_before), a.unit_edges(scene.edges_after)
  part = lanes(scene, a, list(dict.fromkeys(before + after)))
  members: dict[int, list[str]] = {}
  for u, c in part.items(): members.setdefault(c, []).append(u)
  drawn: dict[str, str] = {}  # unit -> the layout id it is drawn as
  nodes: dict[str, Node] = {}
  for k in scene.nodes:
    if k not in a.holds or (k in part and members[part[k]][0] != k): continue
    if k not in part:
      nodes[k] = _unit_node(scene, a, k)[0]
      drawn[k] = k
      continue
    group = members[part[k]]
    units = [_unit_node(scene, a, u) for u in group]
    tails = [t for _, t in units]
    rep = scene.nodes[k]
    if k in a.ops:  # expressions: compared whole, then cut into lines
      texts = [strip_parens(a.text[u]) for u in group]
      tail = [*_chunks(masked(texts)), rep.dtype]
    else: tail = [masked([t[i] if i < len(t) else "" for t in tails]) for i in range(len(tails[0]))]
    held = tuple(dict.fromkeys(h for n, _ in units for h in (n.holds or (n.key,))))
    nodes[k] = _held(scene, replace(rep, label=(f"×{len(group)} {rep.op}", *tail), text=None), held)
    for u in group: drawn[u] = k
  def side(es: list[tuple[str, str]]) -> set[tuple[str, str]]:
    return {(drawn[s], drawn[d]) for s, d in es if drawn[s] != drawn[d]}
  holders = {k: [drawn[u] for u in ([k] if k in a.holds else a.owners.get(k, []))] for k in scene.nodes}
  return Scene(nodes=nodes, after_label=dict(scene.after_label), edges_before=side(before), edges_after=side(after),
               on_before={d for k in scene.on_before for d in holders[k]}, on_after={d for k in scene.on_after for d in holders[k]},
               marks=dict(scene.marks))


def constants(scene: Scene) -> set[str]:
  """The nodes of a scene that folding writes into their users' labels (constants: a CAST of a constant, arithmetic of
  constants), as to_graph writes CONSTs: no folded node holds them."""
  a = _Analysis(scene)
  return a.hidden & a.const


def config() -> dict[str, object]:
  """What js/port/fold.js folds by (tgviz.report.writer.config sends it): one source for both."""
  return {"syms": SYMS, "precedence": PRECEDENCE, "exprOps": sorted(EXPR_OPS), "weak": sorted(WEAK),
          "laneOps": sorted(LANE_OPS), "gatherOps": sorted(GATHER_OPS), "chainOps": sorted(CHAIN_OPS), "listOps": sorted(LIST_OPS), "line": LINE,
          "maxText": MAX_TEXT}


def drawn_as(scene: Scene, keys: list[str] | tuple[str, ...]) -> list[str]:
  """The layout ids of a (folded) scene's nodes that are or hold these node keys, in order, each once."""
  where: dict[str, str] = {}
  for k, n in scene.nodes.items():
    for h in n.holds or (k,): where.setdefault(h, k)
  return list(dict.fromkeys(where[k] for k in keys if k in where))
