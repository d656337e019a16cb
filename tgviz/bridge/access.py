"""A kernel's memory accesses, read from tinygrad's own UOps, and the evaluation of their index expressions with numpy.

Owns: finding every LOAD and STORE of a global buffer (a PARAM) in a kernel's View Base AST (where a load is an INDEX
of a PARAM used as a value and a store a STORE to one) and in its linearized program (LOAD and STORE of an INDEX, or of a
SHRINK: a vector of consecutive elements, with a LOAD's gate and the conditions of the IF blocks around it); writing the
UOps their index and valid mask are made of (tinygrad's get_idx and get_valid) into a plain table (AccessTable: op
names, sources, constants: what the page evaluates too, js/port/access.js), with the ranges and thread ids they run over;
and evaluating such a table over numpy arrays of range values exactly as tinygrad's ops compute (python_alu's semantics:
C division and modulo for CDIV and CMOD, Python's for FLOORDIV and FLOORMOD). A value read from memory (a LOAD, an INDEX
of a buffer used as a value, a symbolic variable) is no constant of the kernel: an index that uses one is data-dependent
(a gather) and is never evaluated. It keeps no UOp.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from tinygrad.dtype import AddrSpace, dtypes
from tinygrad.uop.ops import AxisType, Ops, ParamArg, UOp

from tgviz.bridge.uops import node_key

# the ops an index expression is evaluated with; any other op in one is a value the kernel reads or makes (DATA)
_ARITH = {Ops.ADD, Ops.SUB, Ops.MUL, Ops.CDIV, Ops.CMOD, Ops.FLOORDIV, Ops.FLOORMOD, Ops.SHL, Ops.SHR, Ops.AND, Ops.OR,
          Ops.XOR, Ops.MAX, Ops.NEG, Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ, Ops.WHERE, Ops.CAST}


class Unsupported(ValueError):
  """A kernel whose accesses tgviz cannot evaluate (a range of symbolic size, a vector index, ...): the reason."""


@dataclass(frozen=True)
class Var:
  """A range or thread id an index runs over: its name as tinygrad renders it (``r0``, ``lidx0``), its size, and its
  kind: the range's AxisType in lower case (``reduce``, ``weak``, ...) in an AST; ``global``, ``local`` or ``loop`` in a
  program."""
  name: str
  size: int
  kind: str


@dataclass(frozen=True)
class RawAccess:
  """One LOAD or STORE of a global buffer: kind ("load"/"store"), the buffer's slot (its PARAM's number), dtype, and
  size in elements; the index and valid nodes of the table (valid None: always valid); width (1, or the consecutive
  elements a vector access moves); the variables it runs over (by number); whether its index or mask reads data; the
  node keys of its UOps (for linking); tinygrad's rendering of its index and mask; the variables it runs under (it is
  done once per point of them: a superset of vars); for a store in an AST, the loads (by number among the table's
  accesses) its value is made from."""
  kind: str
  slot: int
  dtype: str
  numel: int
  index: int
  valid: int | None
  width: int
  vars: tuple[int, ...]
  data: bool
  keys: tuple[str, ...]
  index_text: str
  valid_text: str
  loops: tuple[int, ...] = ()
  feeds: tuple[int, ...] = ()


@dataclass
class AccessTable:
  """A kernel's accesses at one stage ("ast": its View Base AST, or "program": the linearized program), with the plain
  expression table they are evaluated on: nodes are [op, kind ("i", "b", "f"), sources, arg]; a CONST's arg is its
  value, a VAR's the variable's number, a DATA's a short text of what it reads."""
  stage: str
  nodes: list[list] = field(default_factory=list)
  vars: list[Var] = field(default_factory=list)
  accesses: list[RawAccess] = field(default_factory=list)


def _const_int(u: UOp) -> int | None:
  while u.op is Ops.CAST: u = u.src[0]
  return int(u.arg) if u.op is Ops.CONST and isinstance(u.arg, int) and not isinstance(u.arg, bool) else None


def _param(u: UOp) -> UOp | None:
  """The global buffer (PARAM) a pointer-like UOp reaches through AFTER and casts; None for another (a local or register
  BUFFER, an image)."""
  while u.op in (Ops.AFTER, Ops.CAST, Ops.BITCAST): u = u.src[0]
  if u.op is not Ops.PARAM or not isinstance(u.arg, ParamArg) or u.arg.vmin_vmax is not None: return None
  return u if u.arg.addrspace in (AddrSpace.GLOBAL, None) else None


def _kind(u: UOp) -> str:
  return "b" if u.dtype == dtypes.bool else "f" if dtypes.is_float(u.dtype) else "i"


def _value(arg: object) -> int | float | bool:
  """A constant as a plain number (tinygrad wraps floats: ConstFloat)."""
  return arg if isinstance(arg, (int, bool)) else float(arg)  # type: ignore[arg-type]


_RENDER_UOPS = 400  # an expression bigger than this is not printed: tinygrad's render is quadratic in its length (an
# LSTM step's unrolled kernel: minutes for its accesses' indices, gigabytes held)


def _render(u: UOp) -> str:
  """tinygrad's rendering of an expression (as its DEBUG prints it), or what it is, where it is too big to print."""
  if (n := len(u.toposort())) > _RENDER_UOPS: return f"({u.op.name} of {n:,} UOps: too big to print)"
  try: return u.render()
  except Exception: return str(u.op)


class _Builder:
  """Writes the expression UOps of accesses into an AccessTable, each UOp once."""

  def __init__(self, table: AccessTable, var_of: dict[UOp, int]):
    self.table, self.var_of, self.ids = table, var_of, dict[UOp, int]()

  def add(self, root: UOp) -> tuple[int, bool]:
    """The node of root (its arithmetic written first, down to constants, variables and the values it reads), and
    whether it reads data."""
    stack = [(root, False)]
    while stack:
      u, ready = stack.pop()
      if u in self.ids: continue
      inner = u.op in _ARITH and u not in self.var_of
      if inner and not ready:
        stack.append((u, True))
        stack.extend((s, False) for s in reversed(u.src) if s not in self.ids)
        continue
      row: list[Any]
      if u.op is Ops.CONST: row = ["INVALID", "b", [], None] if u.is_invalid else ["CONST", _kind(u), [], _value(u.arg)]
      elif u in self.var_of: row = ["VAR", "i", [], self.var_of[u]]
      elif inner: row = [u.op.name, _kind(u), [self.ids[s] for s in u.src], None]
      else:
        buf = _param(u.src[0]) if u.src else None
        row = ["DATA", _kind(u), [], f"{u.op.name} of buffer {buf.arg.slot}" if buf is not None else u.op.name]
      self.ids[u] = len(self.table.nodes)
      self.table.nodes.append(row)
    return self.ids[root], self._reads_data(self.ids[root])

  def _reads_data(self, n: int) -> bool:
    seen, stack = set(), [n]
    while stack:
      if (i := stack.pop()) in seen: continue
      seen.add(i)
      if self.table.nodes[i][0] == "DATA": return True
      stack.extend(self.table.nodes[i][2])
    return False

  def uses(self, n: int) -> tuple[int, ...]:
    """The variables node n depends on, by number, in order."""
    seen, stack, out = set(), [n], set()
    while stack:
      if (i := stack.pop()) in seen: continue
      seen.add(i)
      op, _, src, arg = self.table.nodes[i]
      if op == "VAR": out.add(arg)
      stack.extend(src)
    return tuple(sorted(out))

  def access(self, kind: str, buf: UOp, idx: UOp, gates: Sequence[UOp], width: int, keys: Iterable[str]) -> RawAccess:
    index, valid = idx.get_idx(), idx.get_valid()
    conds = [c for c in (valid, *gates) if not (c.op is Ops.CONST and c.arg is True)]
    i, data = self.add(index)
    v: int | None = None
    for c in conds:
      n, d = self.add(c)
      data = data or d
      v = n if v is None else self._and(v, n)
    vars_ = tuple(sorted(set(self.uses(i)) | (set(self.uses(v)) if v is not None else set())))
    size = _const_int(buf.src[0]) if buf.src else None
    if size is None: raise Unsupported(f"buffer {buf.arg.slot} has no constant size")
    return RawAccess(kind, buf.arg.slot, buf.dtype.name, size, i, v, width, vars_, data, tuple(dict.fromkeys(keys)),
                     _render(index), " and ".join(_render(c) for c in conds))

  def _and(self, a: int, b: int) -> int:
    self.table.nodes.append(["AND", "b", [a, b], None])
    return len(self.table.nodes) - 1


def _size(u: UOp) -> int:
  size = _const_int(u.src[0])
  if size is None: raise Unsupported(f"{_render(u)} has a symbolic size")
  return size


def ast_accesses(sink: UOp) -> AccessTable:
  """The accesses of a kernel's View Base AST: a store is a STORE to an INDEX of a PARAM; a load an INDEX of a PARAM
  used as a value. Variables: every RANGE, by its axis number."""
  table = AccessTable("ast")
  topo = list(sink.toposort())
  ranges = sorted((u for u in topo if u.op is Ops.RANGE), key=lambda u: u.arg)
  var_of = {u: i for i, u in enumerate(ranges)}
  table.vars = [Var(_render(u), _size(u), u.arg[-1].name.lower() if isinstance(u.arg[-1], AxisType) else "range") for u in ranges]
  b = _Builder(table, var_of)
  targets = {u.src[0] for u in topo if u.op is Ops.STORE}
  # the ranges each UOp runs under: those of the END around its store, and of the REDUCEs it is reduced by
  under: dict[UOp, set[int]] = {}
  for u in topo:
    if u.op in (Ops.END, Ops.REDUCE):
      rngs = {var_of[r] for r in u.src[1:] if r in var_of}
      for x in u.src[0].toposort(): under.setdefault(x, set()).update(rngs)
  load_of: dict[UOp, int] = {}
  for u in topo:
    if u.op is Ops.INDEX and u not in targets and len(u.src) == 2 and (buf := _param(u.src[0])) is not None:
      load_of[u] = len(table.accesses)
      a = b.access("load", buf, u.src[1], (), 1, (node_key(u),))
      table.accesses.append(replace(a, loops=tuple(sorted(under.get(u, set()) | set(a.vars)))))
  for u in topo:
    if u.op is Ops.STORE and u.src[0].op is Ops.INDEX and len(u.src[0].src) == 2 and (buf := _param(u.src[0].src[0])) is not None:
      feeds = tuple(sorted(load_of[x] for x in u.src[1].toposort() if x in load_of))
      a = b.access("store", buf, u.src[0].src[1], (), 1, (node_key(u), node_key(u.src[0])))
      table.accesses.append(replace(a, loops=tuple(sorted(under.get(u, set()) | set(a.vars))), feeds=feeds))
  return table


def program_accesses(uops: Sequence[UOp]) -> AccessTable:
  """The accesses of a linearized program: each LOAD and STORE whose address (an INDEX, or a SHRINK: a vector of
  consecutive elements) is in a global buffer, gated by a LOAD's gate and the IF blocks around it. Variables: the thread
  ids (SPECIAL: global, local) and the loops (RANGE), in program order."""
  table = AccessTable("program")
  vars_ = [u for u in uops if u.op in (Ops.SPECIAL, Ops.RANGE)]
  var_of = {u: i for i, u in enumerate(vars_)}
  table.vars = [Var(_render(u), _size(u), ("local" if str(u.arg).startswith("l") else "global") if u.op is Ops.SPECIAL else "loop")
                for u in vars_]
  b = _Builder(table, var_of)
  ifs: list[UOp] = []
  for u in uops:
    if u.op is Ops.IF: ifs.append(u.src[0])
    elif u.op is Ops.ENDIF and ifs: ifs.pop()
    elif u.op in (Ops.LOAD, Ops.STORE) and u.src[0].op in (Ops.INDEX, Ops.SHRINK) and (buf := _param(u.src[0].src[0])) is not None:
      addr = u.src[0]
      if addr.op is Ops.INDEX and len(addr.src) != 2: continue
      width = 1 if addr.op is Ops.INDEX else _const_int(addr.src[2])
      if width is None: raise Unsupported(f"{_render(addr)} has a symbolic width")
      gates = [u.src[2]] if u.op is Ops.LOAD and len(u.src) == 3 else []
      keys = (node_key(u), node_key(addr))
      a = b.access(u.op.name.lower(), buf, addr.src[1], [*gates, *ifs], width, keys)
      loops = {i for i, v in enumerate(vars_) if v.op is Ops.SPECIAL} | {var_of[r] for r in u.ranges if r in var_of}
      table.accesses.append(replace(a, loops=tuple(sorted(loops | set(a.vars)))))
  return table


# *** evaluation (js/port/access.js evaluates alike) ***

def _cdiv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
  q = np.abs(a) // np.where(b == 0, 1, np.abs(b))
  return np.where((a < 0) != (b < 0), -q, q)




_BINARY: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
  "ADD": np.add, "SUB": np.subtract, "MUL": np.multiply, "MAX": np.maximum, "SHL": np.left_shift, "SHR": np.right_shift,
  "AND": np.bitwise_and, "OR": np.bitwise_or, "XOR": np.bitwise_xor, "CMPLT": np.less, "CMPNE": np.not_equal, "CMPEQ": np.equal,
  "FLOORDIV": lambda a, b: np.floor_divide(a, np.where(b == 0, 1, b)), "FLOORMOD": lambda a, b: np.mod(a, np.where(b == 0, 1, b)),
  "CDIV": _cdiv, "CMOD": lambda a, b: a - _cdiv(a, b) * b,
}


def evaluate(nodes: list[list], roots: Sequence[int], env: Mapping[int, np.ndarray | int]) -> list[np.ndarray]:
  """The values of nodes `roots` of a table (whose sources come before their users), with each variable's value from
  env (an int, or an array broadcastable with the others'): int64 for integers, bool for bools, float64 for floats. A
  DATA node raises Unsupported (a data-dependent index is never evaluated); INVALID is False (a mask never true)."""
  need, stack = set(), list(roots)
  while stack:
    if (n := stack.pop()) not in need: need.add(n); stack.extend(nodes[n][2])
  memo: dict[int, np.ndarray] = {}
  for n in sorted(need):
    op, kind, src, arg = nodes[n]
    xs = [memo[s] for s in src]
    if op == "CONST": v = np.asarray(arg, dtype=bool if kind == "b" else np.float64 if kind == "f" else np.int64)
    elif op == "INVALID": v = np.asarray(False)
    elif op == "VAR": v = np.asarray(env[arg], dtype=np.int64)
    elif op == "DATA": raise Unsupported(f"the value of {arg} is data, unknown until the kernel runs")
    elif op == "NEG": v = np.negative(xs[0])
    elif op == "WHERE": v = np.where(xs[0], xs[1], xs[2])
    elif op == "CAST": v = (xs[0] != 0) if kind == "b" else xs[0].astype(np.float64) if kind == "f" else np.trunc(xs[0]).astype(np.int64)
    else:
      a, c = xs
      if op in ("AND", "OR", "XOR") and (a.dtype == bool) != (c.dtype == bool): a, c = a.astype(np.int64), c.astype(np.int64)
      v = _BINARY[op](a, c)
    memo[n] = v
  return [memo[r] for r in roots]


# *** the user's tensors: each buffer's shape and the kernel calls that use it, from the scheduler's graphs ***

SHAPES_STEP = "replace bufs"        # a Callify group's step whose input holds each buffer reshaped to its tensor's shape
CALLS_STEP = "resolve linear call"  # a Schedule group's step whose output calls each kernel with its buffers


def tensor_shapes(graph: UOp) -> dict[int, tuple[int, ...]]:
  """Buffer number -> the shape of the tensor it holds: the first RESHAPE of the BUFFER in a tensor graph (a buffer
  the scheduler made between two kernels has none)."""
  out: dict[int, tuple[int, ...]] = {}
  for u in graph.toposort():
    if u.op is Ops.RESHAPE and u.src[0].op is Ops.BUFFER and isinstance(u.src[0].arg, ParamArg) and u.src[0].arg.slot not in out:
      try: shape = tuple(int(s) for s in u.shape)
      except (TypeError, ValueError): continue  # a symbolic shape
      out[u.src[0].arg.slot] = shape
  return out


def kernel_calls(graph: UOp) -> list[tuple[str, tuple[int | None, ...]]]:
  """Each kernel CALL of a schedule's linear graph, in order: the node key of the kernel's AST, and the buffer number
  each of its PARAMs is bound to (None where the argument is no BUFFER)."""
  return [(node_key(u.src[0]), tuple(x.arg.slot if x.op is Ops.BUFFER and isinstance(x.arg, ParamArg) else None for x in u.src[1:]))
          for u in graph.toposort() if u.op is Ops.CALL and u.src and u.src[0].op is Ops.SINK]


def stored_params(sink: UOp) -> set[int]:
  """The numbers of the PARAMs a kernel's AST stores to."""
  return {buf.arg.slot for u in sink.toposort() if u.op is Ops.STORE and u.src[0].op is Ops.INDEX and (buf := _param(u.src[0].src[0])) is not None}
