"""UOps as tgviz draws and names them.

Owns: a UOp's label (op, arg, dtype, folded constants), its op family, its stable key, the drawable Graph of a UOp
and the report's shared node tables (tgviz.bridge.packing packs their rows), the node panel's details, and a pattern's
source line (tgviz.bridge.graphs walks graphs). It only reads UOps: it records nothing, patches nothing and
knows no trace or step.
"""
from __future__ import annotations

import hashlib
import re
import weakref

from tinygrad.dtype import DType, dtypes
from tinygrad.helpers import ansistrip, printable
from tinygrad.uop.ops import CallInfo, GroupOp, KernelInfo, Ops, ParamArg, UOp
from tinygrad.uop.render import renderer

from tgviz.draw.graph import Graph, Node


def pattern_source(loc: tuple[str, int]) -> str:
  """The source line of the pattern defined at loc."""
  return printable(loc)


def error_text(u: UOp) -> str:
  return str(u.arg)



_FAMILY = {Ops.LOAD: "load", Ops.INDEX: "load", Ops.STAGE: "load", Ops.STORE: "store", Ops.REDUCE: "reduce",
           Ops.ALLREDUCE: "reduce", Ops.RANGE: "range", Ops.END: "range", Ops.SPECIAL: "range", Ops.IF: "range",
           Ops.ENDIF: "range", Ops.BUFFER: "buffer", Ops.PARAM: "buffer", Ops.GETADDR: "buffer", Ops.CALL: "kernel",
           Ops.FUNCTION: "kernel", Ops.PROGRAM: "kernel", Ops.LINEAR: "kernel", Ops.SOURCE: "kernel", Ops.BINARY: "kernel",
           Ops.CUSTOM_FUNCTION: "kernel", Ops.CONST: "const", Ops.REWRITE_ERROR: "error",
           **dict.fromkeys(GroupOp.Movement, "movement"), **dict.fromkeys(GroupOp.ALU, "alu")}
_LINE, _ARG_LINES = 60, 4


_ANSI_REPR = re.compile(r"\\x1b\[[0-9;]*m")  # colour codes inside a repr'd string, e.g. a KernelInfo name


def _clip(text: str, lines: int) -> list[str]:
  all_lines = _ANSI_REPR.sub("", ansistrip(text)).splitlines()
  out = [cut_line(ln) for ln in all_lines[:lines]]
  return out + (["…"] if len(all_lines) > lines else [])


_PLAIN_CALL = CallInfo()


def _arg_text(u: UOp) -> str | None:
  if u.arg is None: return None
  if u.op is Ops.CONST: return f"{u.arg:g}" if isinstance(u.arg, float) else str(u.arg)
  if u.op in GroupOp.Movement:
    try: return str(u.marg)
    except Exception: pass
  if u.op is Ops.BINARY: return f"<{len(u.arg)} bytes>"
  if isinstance(u.arg, CallInfo) and u.arg == _PLAIN_CALL: return None  # a CALL's or FUNCTION's defaults say nothing
  if isinstance(u.arg, ParamArg):  # without what the label's dtype line says, and the address space by its name alone
    text = repr(u.arg).replace(f", {u.arg.dtype!r}", "", 1) if u.arg.dtype == u.dtype else repr(u.arg)
    return text.replace("addrspace=AddrSpace.", "")
  return str(u.arg)


def _foldable(u: UOp) -> bool:
  """Constants (and broadcasts of them) are folded into their users' labels, as tinygrad's VIZ does (unless one is the
  root of the graph drawn)."""
  if u.op is Ops.CONST: return True
  if u.op is Ops.STACK and all(s.op is Ops.CONST for s in u.src): return True
  return u.op in (Ops.RESHAPE, Ops.EXPAND) and len(u.src) >= 1 and _foldable(u.src[0])


def dtype_name(dt: DType) -> str:
  """A dtype as labels, contents and panels say it: tinygrad's repr without "dtypes."."""
  return repr(dt).removeprefix("dtypes.")


def _base_label(u: UOp) -> list[str]:
  """The label lines that are the UOp's own: op, arg, dtype (a rebuild with new sources keeps them)."""
  label = [u.op.name]
  if (arg := _arg_text(u)) is not None: label += _clip(arg, 8 if u.op is Ops.SOURCE else _ARG_LINES)
  if u.dtype != dtypes.void: label.append(dtype_name(u.dtype))
  return label


def _fold_text(s: UOp) -> tuple[str, str]:
  """What a folded constant says in its user's label: the op of the constant (or vector of constants) under it, and
  the first line of its value."""
  c = s
  while c.op is not Ops.CONST and c.op is not Ops.STACK and c.src: c = c.src[0]
  text = _ANSI_REPR.sub("", ansistrip((_arg_text(c) or "") if c.op is Ops.CONST else c.render()))
  return c.op.name, (text.splitlines() or [""])[0]


def cut_line(line: str) -> str:
  """A label line cut to _LINE characters (an ellipsis ends a longer one)."""
  return line if len(line) <= _LINE else line[:_LINE - 1] + "…"


_NUMBER = re.compile(r"\d+")
_LEAVES = (Ops.CONST, Ops.RANGE, Ops.SPECIAL)
_INFO: dict[tuple, tuple[str, bool, str | None, str]] = {}  # content -> fold_info (tinygrad's hashes of args are cheap)


def _leaf_text(u: UOp) -> str | None:
  """How tinygrad's renderer (UOp.render) writes a node that needs no sources: a constant, a RANGE, a SPECIAL, a
  variable (a BUFFER or PARAM of the ALU address space); None for the rest."""
  if u.op is Ops.CONST: return str(u.arg)
  if u.op in _LEAVES or (u.op in (Ops.BUFFER, Ops.PARAM) and isinstance(u.arg, ParamArg) and getattr(u.arg.addrspace, "name", "") == "ALU"):
    try: return str(renderer.rewrite(u, ctx={}))
    except Exception: return None
  return None


def fold_info(u: UOp) -> tuple[str, bool, str | None, str]:
  """What folding (tgviz.draw.fold) reads of a UOp's own content: its dtype (without "dtypes."), whether it is a scalar
  integer or bool (index arithmetic), how tinygrad renders it alone (see _leaf_text), and its arg with numbers blanked
  (lanes share it). The report stores it with each content (NodeTable), so js/port/picture.js reads the same."""
  arg = repr(u.arg) if isinstance(u.arg, float) else u.arg
  key = (u.op, u.dtype, type(arg), arg)
  if (hit := _INFO.get(key)) is not None: return hit
  if len(_INFO) > 100_000: _INFO.clear()
  try: intlike = dtypes.is_int(u.dtype) or u.dtype == dtypes.bool
  except Exception: intlike = False
  dt = dtype_name(u.dtype)
  info = _INFO[key] = (dt, bool(intlike), _leaf_text(u), _NUMBER.sub("#", repr(u.arg)[:200]) if u.arg is not None else "")
  return info


def _constant(u: UOp) -> bool:
  """Whether u is a CONST, a STACK of CONSTs, or a RESHAPE or EXPAND of one by a constant shape (a STACK of CONSTs or a
  CONST): the constants whose text folding reads (js/port/picture.js constText writes them alike)."""
  if u.op is Ops.CONST: return True
  if u.op is Ops.STACK: return all(s.op is Ops.CONST for s in u.src)
  return (u.op in (Ops.RESHAPE, Ops.EXPAND) and len(u.src) == 2 and u.src[1].op in (Ops.CONST, Ops.STACK) and
          _constant(u.src[1]) and _constant(u.src[0]))


_VECTORS: dict[bytes, str | None] = {}  # UOp.key -> its text (a vector of constants is rendered once)


def _input(s: UOp, key: str | None) -> str | tuple[str, str | None, str]:
  """A source as graph.Node.inputs holds it: its key, or a constant folded into the label as (dtype, its text as
  tinygrad renders it (a vector of constants too: ``{0,1,2}.reshape((3,1))``), op)."""
  if key is not None: return key
  dt = dtype_name(s.dtype)
  if s.op is Ops.CONST: return (dt, str(s.arg), "CONST")
  if (text := _VECTORS.get(s.key, "")) == "":
    if len(_VECTORS) > 100_000: _VECTORS.clear()
    text = _VECTORS[s.key] = s.render(simplify=False) if _constant(s) else None
  return (dt, text, s.op.name)


def note_line(note: str) -> str:
  """A CALL node's note (a trace's call notes: what it becomes, a kernel and its Tensor operations, a copy) as its label line."""
  return _clip(note, 1)[0]


def _label(u: UOp, notes: dict[str, str] | None = None) -> list[str]:
  """A UOp's label lines (see _node)."""
  label = _base_label(u)
  for i, s in enumerate(u.src):
    if _foldable(s):
      head, first = _fold_text(s)
      label.append(cut_line(f"{head}{i} {first}"))
  if u.op is Ops.CALL and u.src:
    c = u.src[0]
    if (note := (notes or {}).get(node_key(c)) or callee_note(_base_label(c), len(c.src))): label.append(note_line(note))
  return label


def callee_note(label: list[str], srcs: int) -> str | None:
  """What a CALL of no traced kernel or copy says it calls, read from the callee alone (its own label lines, the op
  first, and its number of sources; js/port/replay.js calleeNote says the same): a LINEAR runs the schedule's calls in
  order, a SINK without a kernel's info is the scheduled function (its sources: the buffers it writes), a COPY copies
  to a device."""
  op = label[0]
  if op == "LINEAR": return f"→ its {srcs} calls, in order"
  if op == "SINK" and label == ["SINK"] and srcs: return f"→ the scheduled function: {srcs} output" + ("s" if srcs != 1 else "")
  if op == "COPY" and len(label) > 1: return f"→ a copy to {label[1]}"
  return None


def _node(u: UOp, notes: dict[str, str] | None = None, keys: list[str | None] | None = None) -> Node:
  """How a UOp is drawn: its op, arg and dtype, and one line per constant source folded into it ("CONST1 2.0": source
  1); a CALL also says what it becomes, a kernel and its Tensor operations or a copy (notes). js/port/replay.js labels
  the nodes a report's page rebuilds the same way. keys: its sources' keys (None: folded), for what folding reads."""
  label = _label(u, notes)
  if keys is None: return Node(node_key(u), u.op.name, family(u), tuple(label))
  dt, intlike, text, shape = fold_info(u)
  return Node(node_key(u), u.op.name, family(u), tuple(label), dt, intlike, text,
              tuple(_input(s, k) for s, k in zip(u.src, keys, strict=True)), shape)


# a UOp's node as to_graph draws it, while the UOp lives: a kernel's landmarks and the graphs of kernels of one model
# share most of their UOps (the MNIST step's 209 landmark pictures: 31,107 nodes, 11,401 UOps). A node is the UOp's
# alone (its sources' keys and foldability are theirs), but a CALL's, which says what the trace's notes say of its callee
_NODES: weakref.WeakKeyDictionary[UOp, Node] = weakref.WeakKeyDictionary()


def to_graph(root: UOp, notes: dict[str, str] | None = None) -> Graph:
  """The drawable graph of a UOp: readable labels, op families, constants folded into their users (notes: see _node)."""
  nodes: dict[str, Node] = {}
  edges: list[tuple[str, str]] = []
  drawn: dict[UOp, str | None] = {}  # each UOp's key, None for a folded constant (sources come first)
  _ = root.key  # every node's key in one walk (asked for node by node, tinygrad walks below each one again)
  for u in root.toposort():
    folded = u is not root and _foldable(u)
    if folded:
      drawn[u] = None
      continue
    if (n := _NODES.get(u)) is None:
      n = _node(u, notes, [drawn[s] for s in u.src])
      if u.op is not Ops.CALL: _NODES[u] = n
    nodes[n.key] = n
    drawn[u] = n.key
    edges.extend((k, n.key) for s in u.src if (k := drawn[s]) is not None)
  return Graph(nodes, tuple(dict.fromkeys(edges)), node_key(root))


class NodeCache:
  """What the node tables of one report share: each UOp's row, label and content, computed once. The UOps (drawn) are
  worth keeping for one segment's table only: a report writer clears them at each (benchmarks/model_scale.py: kept
  for 200,000 UOps, a worker's peak memory grew by a third and the report took longer to write)."""

  def __init__(self, notes: dict[str, str] | None = None) -> None:
    self.notes = notes
    self.drawn: dict[UOp, tuple] = {}       # UOp -> (family, label, fold, content)
    # label by what it is made of: a replay rebuilds a node many times over with new sources and the same label
    self.labels: dict[tuple, tuple[str, list[str]]] = {}
    self.contents: dict[tuple, list] = {}   # (op, dtype, arg, tag) -> [what its key hashes before its sources, base label, fold info]

  def clear(self) -> None:
    """Forget the UOps (and the graphs they hold alive): what their labels and contents are made of stays."""
    self.drawn.clear()


class NodeTable:
  """Many graphs as one table of plain rows, shared nodes once (the HTML report's data; js/port/picture.js draws it and
  js/port/replay.js rebuilds nodes in it). A row: [key, family, label lines (the first is the op), source row ids (all of
  them, in order), fold, content id]; key: None until key() derives it (a report needs only its CALLs' callees' keys,
  and deriving every row's was some 7% of its segments' time); fold: what a folded constant says in its user's label
  ([op, first line of its value], see _fold_text), 0 for other nodes; content: index into `contents`, whose entries are
  [the text UOp.key hashes before its sources' keys, the label lines that are the UOp's own (see _base_label), what
  folding reads of it (see fold_info: [dtype, intlike, text, shape])], and the repr of its tag where it has one (a
  UOp's identity, which its key leaves out: js/port/dtypes.js finds the content of a node rebuilt with another dtype
  by it)."""

  def __init__(self, cache: NodeCache) -> None:
    self.rows: list[list] = []
    self.contents: list[list] = []
    self._ids: dict[UOp, int] = {}
    self._content_ids: dict[tuple, int] = {}
    self._cache = cache
    # (content id, source rows) -> row, of the UOps forget() let go of: a UOp's identity (tinygrad's key leaves out tags)
    self._forgotten: dict[tuple[int, tuple[int, ...]], int] = {}
    self._digests: dict[int, bytes] = {}  # row -> its UOp.key, where key() derived it
    self.stacks: list[UOp] = []  # the STACKs it holds (bridge.rebuilt_dtypes.page_derives reads them)

  def forget(self, keep: UOp) -> None:
    """Let go of the UOps seen but those of keep's graph (the table and its cache hold every UOp they have seen alive,
    and the graphs a report stores of a big step are hundreds of thousands of UOps). A UOp let go of and made again
    later is found by its content and its sources' rows: its row is the same, as if it had been kept."""
    live = set(keep.toposort())
    drawn, content_ids, rows = self._cache.drawn, self._content_ids, self.rows
    self.stacks = [u for u in self.stacks if u in live]
    for u in [u for u in self._ids if u not in live]:
      i = self._ids.pop(u)
      self._forgotten[(content_ids[drawn.pop(u)[3]], tuple(rows[i][3]))] = i

  def reach(self, roots: list[int]) -> int:
    """How many rows the graphs of these rows hold together."""
    seen, stack, rows = set(), list(roots), self.rows
    while stack:
      if (n := stack.pop()) in seen: continue
      seen.add(n)
      stack.extend(rows[n][3])
    return len(seen)

  def add(self, root: UOp) -> int:
    """The row id of root, adding it and whatever below it is new."""
    ids = self._ids
    if (i := ids.get(root)) is not None: return i
    cache, rows, content_ids = self._cache, self.rows, self._content_ids
    drawn = cache.drawn
    has, row_of = ids.__contains__, ids.__getitem__
    stack = [root]  # a node is added once its sources are: it stays under them, and is met again when they are in
    while stack:
      if has(u := stack[-1]):
        stack.pop()
        continue
      src = u.src
      if not all(map(has, src)):
        stack.extend(src)  # (those in already are popped at once)
        continue
      stack.pop()
      if (d := drawn.get(u)) is None:
        op, dtype, uarg = u.op, u.dtype, u.arg
        arg = repr(uarg) if isinstance(uarg, float) else uarg  # 0.0 == -0.0, drawn apart
        folds = [drawn[s][2] for s in src]  # (the sources are in already)
        folded = tuple([(i, src[i]) for i, f in enumerate(folds) if f]) if any(folds) else ()  # constants its label folds in
        made_of = (op, dtype, type(arg), arg, folded, src[0] if op is Ops.CALL and src else None)
        if (lab := cache.labels.get(made_of)) is None: lab = cache.labels[made_of] = (family(u), _label(u, cache.notes))
        content = (op, dtype, type(arg), arg, u.tag)
        if content not in cache.contents:
          cache.contents[content] = [str((op, dtype, uarg)), _base_label(u), list(fold_info(u)), *(() if u.tag is None else (repr(u.tag),))]
        d = drawn[u] = (lab[0], lab[1], list(_fold_text(u)) if _foldable(u) else 0, content)
      if (c := content_ids.get(d[3])) is None:
        c = content_ids[d[3]] = len(self.contents)
        self.contents.append(cache.contents[d[3]])
      srows = list(map(row_of, src))
      if u.op is Ops.STACK: self.stacks.append(u)
      if self._forgotten and (i := self._forgotten.get((c, tuple(srows)))) is not None:
        ids[u] = i
        continue
      ids[u] = len(rows)
      rows.append([None, d[0], d[1], srows, d[2], c])
    return ids[root]

  def key(self, i: int) -> str:
    """Row i's key, node_key of its UOp, derived from the table as js/port/replay.js derives it: tinygrad's UOp.key, the
    sha256 of its content's text and its sources' keys, taken from the rows below (tinygrad's property would walk the
    UOp's whole graph again); filled into the row, and into those below it."""
    rows, digests, contents = self.rows, self._digests, self.contents
    stack = [i]
    while stack:
      if (n := stack[-1]) in digests:
        stack.pop()
        continue
      srcs = rows[n][3]
      if missing := [s for s in srcs if s not in digests]:
        stack.extend(missing)
        continue
      stack.pop()
      digest = digests[n] = hashlib.sha256(contents[rows[n][5]][0].encode() + b"".join([digests[s] for s in srcs])).digest()
      rows[n][0] = digest.hex()[:12]
    return rows[i][0]


def op_families() -> dict[str, str]:
  """Each op's family (by op name; "other" for the rest), for the report's page to unpack rows (see pack_rows)."""
  return {op.name: family for op, family in _FAMILY.items()}


def is_uop(x: object) -> bool:
  """Whether x is a tinygrad UOp (a node of a graph)."""
  return isinstance(x, UOp)


def op_name(u: UOp) -> str:
  return u.op.name


def family(u: UOp) -> str:
  """The op family a UOp is drawn in (graph.FAMILIES)."""
  return _FAMILY.get(u.op, "other")


def plain_arg(text: str) -> str:
  """An arg's text without the colour codes a repr'd kernel name carries (printed as \\x1b[..m escapes)."""
  return _ANSI_REPR.sub("", text)


def python_text(u: UOp) -> str:
  """A graph as tinygrad's Python (pyrender, as tinygrad's DEBUG=5 prints a kernel's AST and its VIZ shows a graph; str()
  where pyrender refuses), without colours."""
  try: return _ANSI_REPR.sub("", ansistrip(u.pyrender()))
  except Exception: return _ANSI_REPR.sub("", ansistrip(str(u)))


def node_details(u: UOp) -> dict[str, str]:
  """What the node panel shows of a UOp: op, dtype, the full arg and tag, and the node as tinygrad's Python (python_text)."""
  return {"op": u.op.name, "dtype": dtype_name(u.dtype), "arg": _ANSI_REPR.sub("", ansistrip(repr(u.arg)))[:4000],
          "tag": repr(u.tag), "python": python_text(u)[:20000]}


def kernel_key(ast: UOp) -> str:
  """tinygrad's key of a kernel's AST as its VIZ links a kernel to the CALLs of it (viz/serve.py canonicalize_ast: the
  AST's KernelInfo blanked, so that its name and opts do not count): the same kernel has it in any run or process."""
  if ast.op is Ops.SINK and isinstance(ast.arg, KernelInfo): ast = ast.replace(arg=KernelInfo())
  return ast.key.hex()


def node_key(u: UOp) -> str:
  """A stable identity for a UOp: the same on every run for the same graph."""
  return u.key.hex()[:12]  # 48 bits: no two nodes of one graph share it in practice; short keys keep reports small
