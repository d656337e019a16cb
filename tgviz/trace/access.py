"""What each thread of a kernel reads and writes: the kernel's accesses, classified, and the elements they touch.

Owns Access (one LOAD or STORE of a global buffer, in the View Base AST or in the final program), Reads (the elements of
a buffer some work reads, as flat indices and coordinates), Buffer (a buffer's use by the kernel: elements read and
written, reuse, masked reads) and KernelAccess, which a Kernel asks (``kernel.accesses()``, ``kernel.reads(i)``,
``kernel.thread(...)``). Every answer evaluates tinygrad's own index UOps (tgviz.bridge.access) over the kernel's
ranges with numpy: never the op's maths re-derived. The user's tensors (the shape a buffer has, the kernel and line that
wrote it) come from the scheduler's graphs of the trace (tinygrad's tensor graph and its kernel calls).
"""
from __future__ import annotations

import functools
import math
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tgviz import bridge as tg

PATTERNS = ("contiguous", "strided", "broadcast", "gather", "masked")
COUNT_LIMIT = 1 << 24  # an access over more points than this is not counted (its counts are None); its class is read off a sample
_SAMPLE = 4            # values of each other variable an access's stride is read over, beyond this many points


@dataclass(frozen=True)
class Access:
  """One LOAD or STORE of a global buffer, at a stage of the kernel: "ast" (its View Base AST: indices over the
  kernel's ranges) or "program" (its final program: over thread ids and loops, one entry per lane or vector).

  pattern: "gather" (the index reads data), "masked" (a valid mask turns some accesses off), else by the stride
  along the fastest variable (the output's fastest range in the AST; the first local, else global, thread id, else the
  innermost loop, in a program): "broadcast" (0: the same address), "contiguous" (1, or the vector's width), "strided";
  stride: that stride where there is one (None for a gather, or where nothing varies)."""
  stage: str
  number: int
  kind: str
  slot: int
  shape: tuple[int, ...]
  dtype: str
  index: str
  valid: str | None
  pattern: str
  stride: int | None
  width: int
  vars: tuple[str, ...]
  keys: tuple[str, ...]
  tensor: str | None
  count: int | None
  """Elements it reads or writes over the whole kernel, masked-off ones left out (None: too many points to count)."""
  masked: int | None
  """Accesses its valid mask turns off (out-of-bound reads of a pad, ...)."""
  elements: int | None
  """Distinct elements it touches."""

  def __repr__(self) -> str:
    stride = f" stride={self.stride}" if self.pattern == "strided" else ""
    return f"<Access {self.stage} {self.kind} buffer {self.slot} {self.shape} [{self.index}] {self.pattern}{stride}>"


@dataclass(frozen=True)
class Reads:
  """Elements of one buffer some work reads (or writes): flat (sorted, distinct flat indices), count (reads, repeats
  included, masked-off ones left out), masked (reads a valid mask turned off), data_dependent (a gather: which elements
  depends on data the kernel loads, so flat is empty)."""
  flat: np.ndarray
  shape: tuple[int, ...]
  count: int
  masked: int = 0
  data_dependent: bool = False

  @property
  def coords(self) -> np.ndarray:
    """flat as coordinates in the buffer's shape: one row per element."""
    return np.stack(np.unravel_index(self.flat, self.shape), axis=-1) if self.flat.size else np.zeros((0, len(self.shape)), np.int64)


@dataclass(frozen=True)
class Buffer:
  """A global buffer of a kernel and its use: slot, shape, dtype, the user's tensor where known; elements read and
  written, reads (repeats included), reads a mask turned off (None where too many points to count)."""
  slot: int
  shape: tuple[int, ...]
  dtype: str
  tensor: str | None
  read: int | None
  written: int | None
  reads: int | None
  masked: int | None


# *** the user's tensors, from the trace's scheduler graphs (once per trace) ***

_params_of: weakref.WeakKeyDictionary[Any, dict[str, list[tuple[int | None, tuple[int, ...] | None, str | None]]]] = weakref.WeakKeyDictionary()


def _origin_text(k: Any) -> str:
  """The kernel that wrote a buffer and the user's line that asked for it: ``written by E_9_8_2, line 4: x = ...``."""
  line = tg.main_origin(k.origins)
  if line is None: return f"written by {k.display_name}"
  return f"written by {k.display_name}, line {line.line}" + (f": {line.source.strip()}" if line.source.strip() else "")


def trace_params(trace: Any) -> dict[str, list[tuple[int | None, tuple[int, ...] | None, str | None]]]:
  """Kernel AST key -> per PARAM of a Trace's kernels (a Trace: this module is below tgviz.trace.trace, which it does not
  import): the buffer's number, its tensor's shape and which kernel wrote it (where known)."""
  if (known := _params_of.get(trace)) is not None: return known
  shapes: dict[int, tuple[int, ...]] = {}
  calls: dict[str, tuple[int | None, ...]] = {}
  writer: dict[int, str] = {}
  for g in trace.groups:
    for s in g.steps:
      if g.kind != "schedule" or s.name not in (tg.SHAPES_STEP, tg.CALLS_STEP): continue
      try:
        if s.name == tg.SHAPES_STEP: shapes.update({b: sh for b, sh in tg.tensor_shapes(s.before()).items() if b not in shapes})
        else: calls.update({k: b for k, b in tg.kernel_calls(s.after()) if k not in calls})
      except Exception: continue  # a graph tgviz cannot rebuild: its tensors stay unknown
    if g.kernel is not None and g.steps and (bufs := calls.get(tg.node_key(g.steps[0].before()))) is not None:
      for p in tg.stored_params(g.steps[0].before()):
        if p < len(bufs) and (b := bufs[p]) is not None: writer[b] = _origin_text(g.kernel)
  out = {k: [(b, shapes.get(b) if b is not None else None, writer.get(b) if b is not None else None) for b in bufs] for k, bufs in calls.items()}
  _params_of[trace] = out
  return out


# *** evaluation over a grid of variables ***

def _grid(table: tg.AccessTable, free: Sequence[int], fixed: Mapping[int, int], sample: int | None = None, keep: int | None = None) -> dict[int, Any]:
  """Variable values: fixed ones as ints, free ones as aranges along an axis each (in free's order); with sample, every
  free variable but keep limited to its first `sample` values."""
  env: dict[int, Any] = dict(fixed)
  for ax, v in enumerate(free):
    n = table.vars[v].size if sample is None or v == keep else min(sample, table.vars[v].size)
    env[v] = np.arange(n).reshape([-1 if i == ax else 1 for i in range(len(free))])
  return env


def _values(table: tg.AccessTable, a: tg.RawAccess, env: dict[int, Any], shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
  """An access's index and validity over env, broadcast to shape."""
  roots = [a.index] if a.valid is None else [a.index, a.valid]
  vals = tg.evaluate(table.nodes, roots, env)
  idx = np.broadcast_to(vals[0], shape)
  ok = np.broadcast_to(vals[1], shape) if a.valid is not None else np.ones(shape, bool)
  return idx, ok


def _elements(idx: np.ndarray, width: int) -> np.ndarray:
  """Flat elements of accesses at idx, each of `width` consecutive lanes."""
  return (idx.reshape(-1, 1) + np.arange(width)).reshape(-1) if width > 1 else idx.reshape(-1)


def _fastest(table: tg.AccessTable, a: tg.RawAccess, stores: Sequence[tg.RawAccess]) -> int | None:
  """The variable an access's stride is read along (see Access)."""
  kinds = [v.kind for v in table.vars]
  if table.stage == "program":
    for kind in ("local", "global"):
      if kind in kinds: return kinds.index(kind)
    loops = [v for v in a.loops if kinds[v] == "loop"]
    return loops[-1] if loops else None
  for s in stores:  # the output's fastest range: the smallest step of its store's index
    if s.data: continue  # a scatter: its index reads data
    steps = {}
    for v in s.vars:
      if table.vars[v].size < 2: continue
      at = dict.fromkeys(s.vars, 0)
      lo, hi = tg.evaluate(table.nodes, [s.index], at)[0], tg.evaluate(table.nodes, [s.index], {**at, v: 1})[0]
      if (d := abs(int(hi) - int(lo))) > 0: steps[v] = d
    if steps: return min(steps, key=lambda v: (steps[v], -v))
  reduces = [v for v in a.loops if kinds[v] == "reduce"]
  return reduces[-1] if reduces else None


def _uses(table: tg.AccessTable, node: int) -> list[int]:
  """The variables a node of the table depends on, in order."""
  seen, stack, out = set(), [node], set()
  while stack:
    if (n := stack.pop()) in seen: continue
    seen.add(n)
    op, _, src, arg = table.nodes[n]
    if op == "VAR": out.add(arg)
    stack.extend(src)
  return sorted(out)


def _points(table: tg.AccessTable, vs: Sequence[int]) -> int:
  return math.prod(table.vars[v].size for v in vs)


class KernelAccess:
  """A kernel's accesses at both stages and what they touch (see Kernel.accesses, Kernel.reads, Kernel.thread)."""

  def __init__(self, ast: Any, program_uops: Sequence[Any], params: list[tuple[int | None, tuple[int, ...] | None, str | None]]):
    self._ast, self._uops, self._params = ast, program_uops, params
    self.notes: dict[str, str] = {}
    """Why a stage's accesses cannot be evaluated (a range of symbolic size, ...), by stage."""

  @functools.cached_property
  def tables(self) -> dict[str, tg.AccessTable]:
    """The accesses' tables by stage ("ast", "program"); a stage tgviz cannot evaluate is missing (see notes)."""
    out = {}
    for stage, make in (("ast", lambda: tg.ast_accesses(self._ast)), ("program", lambda: tg.program_accesses(self._uops))):
      if (stage == "ast" and self._ast is None) or (stage == "program" and not self._uops): continue
      try: out[stage] = make()
      except tg.Unsupported as e: self.notes[stage] = str(e)
    return out

  @functools.cache  # noqa: B019
  def shape(self, slot: int, numel: int) -> tuple[int, ...]:
    """A buffer's shape: its tensor's where known and of its size; else the one its first unmasked access of the AST
    indexes it by, where that index is var*stride summed over variables whose strides make a contiguous shape (the
    scheduler's buffers between kernels: (2, 6, 8) for ``r2*8+r0+r1*48``); else flat."""
    shape = self._params[slot][1] if slot < len(self._params) else None
    if shape is not None and math.prod(shape) == numel: return shape
    if (table := self.tables.get("ast")) is None: return (numel,)
    a = next((a for a in table.accesses if a.slot == slot and a.valid is None and not a.data), None)
    if a is None or _points(table, a.vars) > COUNT_LIMIT: return (numel,)
    vs = [v for v in a.vars if table.vars[v].size > 1]
    zero = dict.fromkeys(a.vars, 0)
    at = int(tg.evaluate(table.nodes, [a.index], zero)[0])
    strides = {v: int(tg.evaluate(table.nodes, [a.index], {**zero, v: 1})[0]) - at for v in vs}
    env = _grid(table, a.vars, {})
    idx, _ = _values(table, a, env, tuple(table.vars[v].size for v in a.vars))
    linear: Any = at
    for v in vs: linear = linear + env[v] * strides[v]
    chain, step = [], 1
    for v in sorted(vs, key=lambda v: strides[v]):
      if strides[v] != step: return (numel,)
      chain.append(table.vars[v].size)
      step *= table.vars[v].size
    if at != 0 or step != numel or not np.array_equal(idx, np.broadcast_to(linear, idx.shape)): return (numel,)
    return tuple(reversed(chain)) if chain else (numel,)

  def tensor(self, slot: int) -> str | None:
    """Which kernel wrote the buffer (its Tensor ops and the user's line), where known."""
    return self._params[slot][2] if slot < len(self._params) else None

  @functools.cache  # noqa: B019 (one per kernel, kept with it)
  def accesses(self, stage: str) -> list[Access]:
    """The accesses of a stage, classified and counted."""
    if (table := self.tables.get(stage)) is None: return []
    out = []
    for n, (a, (pattern, stride)) in enumerate(zip(table.accesses, self.patterns(stage), strict=True)):
      count = masked = elements = None
      if not a.data and _points(table, a.vars) <= COUNT_LIMIT:
        idx, ok = _values(table, a, _grid(table, a.vars, {}), tuple(table.vars[v].size for v in a.vars))
        mult = _points(table, [v for v in a.loops if v not in a.vars]) * a.width
        count, masked = int(ok.sum()) * mult, int((~ok).sum()) * mult
        seen = np.zeros(a.numel, bool)
        els = _elements(idx[ok], a.width)
        seen[els[(els >= 0) & (els < a.numel)]] = True
        elements = int(seen.sum())
      out.append(Access(stage, n, a.kind, a.slot, self.shape(a.slot, a.numel), a.dtype, a.index_text, a.valid_text or None, pattern,
                        stride, a.width, tuple(table.vars[v].name for v in a.vars), a.keys, self.tensor(a.slot), count, masked, elements))
    return out

  @functools.cache  # noqa: B019
  def patterns(self, stage: str) -> list[tuple[str, int | None]]:
    """Each access's pattern and stride (see Access), without counting it (cheap: its mask over the variables the mask
    uses, its stride along the fastest variable with a few values of the others)."""
    if (table := self.tables.get(stage)) is None: return []
    stores = [a for a in table.accesses if a.kind == "store"]
    return [self._pattern(table, a, stores) for a in table.accesses]

  def _pattern(self, table: tg.AccessTable, a: tg.RawAccess, stores: Sequence[tg.RawAccess]) -> tuple[str, int | None]:
    if a.data: return "gather", None
    if a.valid is not None:
      vs = _uses(table, a.valid)
      if _points(table, vs) > COUNT_LIMIT: return "masked", None  # too many points to tell: its mask is there
      ok = tg.evaluate(table.nodes, [a.valid], _grid(table, vs, {}))[0]
      if not np.all(ok): return "masked", None
    stride = None
    f = _fastest(table, a, stores)
    if f is not None and f not in a.vars: stride = 0
    elif f is not None:
      vs = [f, *[v for v in a.vars if v != f]]
      shape = tuple(table.vars[v].size if v == f else min(_SAMPLE, table.vars[v].size) for v in vs)
      idx, ok = _values(table, a, _grid(table, vs, {}, _SAMPLE, f), shape)
      d, both = np.diff(idx, axis=0), ok[1:] & ok[:-1]
      if both.any():
        vals, counts = np.unique(d[both], return_counts=True)
        stride = int(vals[np.argmax(counts)])
    return ("broadcast" if stride == 0 else "contiguous" if stride in (None, 1, a.width) else "strided"), stride

  @functools.cached_property
  def buffers(self) -> list[Buffer]:
    """Each global buffer of the kernel (AST stage) and its use, by slot."""
    table = self.tables.get("ast")
    if table is None: return []
    out = []
    for slot in sorted({a.slot for a in table.accesses}):
      mine = [(r, a) for r, a in zip(table.accesses, self.accesses("ast"), strict=True) if a.slot == slot]
      loads, stores = [x for x in mine if x[1].kind == "load"], [x for x in mine if x[1].kind == "store"]
      r0 = mine[0][0]
      read, written = self._touched(table, [r for r, _ in loads], r0.numel), self._touched(table, [r for r, _ in stores], r0.numel)
      counts = [a.count for _, a in loads]
      masks = [a.masked for _, a in loads]
      out.append(Buffer(slot, self.shape(slot, r0.numel), r0.dtype, self.tensor(slot), read, written,
                        sum(c for c in counts if c is not None) if None not in counts else None,
                        sum(m for m in masks if m is not None) if None not in masks else None))
    return out

  def _touched(self, table: tg.AccessTable, accs: Sequence[tg.RawAccess], numel: int) -> int | None:
    """Distinct elements some accesses touch over the whole kernel (None: a gather, or too many points)."""
    if not accs: return 0
    seen = np.zeros(numel, bool)
    for a in accs:
      if a.data or _points(table, a.vars) > COUNT_LIMIT: return None
      idx, ok = _values(table, a, _grid(table, a.vars, {}), tuple(table.vars[v].size for v in a.vars))
      els = _elements(idx[ok], a.width)
      seen[els[(els >= 0) & (els < numel)]] = True
    return int(seen.sum())

  def _store(self, slot: int | None) -> tuple[tg.AccessTable, tg.RawAccess]:
    table = self.tables.get("ast")
    if table is None: raise ValueError(f"this kernel's accesses cannot be evaluated: {self.notes.get('ast', 'tgviz saw no AST of it')}")
    stores = [a for a in table.accesses if a.kind == "store" and (slot is None or a.slot == slot)]
    if not stores: raise ValueError(f"the kernel stores to no buffer {slot}" if slot is not None else "the kernel stores nothing")
    return table, stores[0]

  @functools.cache  # noqa: B019
  def _written_by(self, slot: int | None) -> tuple[np.ndarray, np.ndarray]:
    """The store's flat index at each point of its variables (flattened), and those points' order by index."""
    table, s = self._store(slot)
    idx, ok = _values(table, s, _grid(table, s.vars, {}), tuple(table.vars[v].size for v in s.vars))
    flat = np.where(ok, idx, -1).reshape(-1)
    return flat, np.argsort(flat, kind="stable")

  def reads(self, out_index: int | Sequence[int], slot: int | None = None) -> dict[int, Reads]:
    """For the output element at out_index (flat, or coordinates in the output's shape) of the buffer stored to (slot;
    default: the kernel's first store), the elements of each buffer read to compute it, over every reduce iteration,
    masked-off reads left out: {slot: Reads}."""
    table, s = self._store(slot)
    shape = self.shape(s.slot, s.numel)
    if isinstance(out_index, (int, np.integer)): flat = int(out_index)
    elif len(out_index) != len(shape): raise IndexError(f"{tuple(out_index)} is no element of buffer {s.slot} of shape {shape}")
    else:
      inside = all(0 <= c < n for c, n in zip(out_index, shape, strict=True))
      flat = int(np.ravel_multi_index(tuple(out_index), shape)) if inside else -1
    if not 0 <= flat < s.numel: raise IndexError(f"element {out_index} is outside buffer {s.slot} of shape {shape}")
    written, order = self._written_by(s.slot)
    lo, hi = np.searchsorted(written, flat, side="left", sorter=order), np.searchsorted(written, flat, side="right", sorter=order)
    sizes = [table.vars[v].size for v in s.vars]
    found: dict[int, list] = {}
    for point in order[lo:hi]:
      fixed = dict(zip(s.vars, (int(c) for c in np.unravel_index(point, sizes)), strict=True)) if sizes else {}
      for li in s.feeds:
        a = table.accesses[li]
        acc = found.setdefault(a.slot, [[], 0, 0, False, a.numel])
        free = [v for v in a.vars if v not in fixed]
        mult = _points(table, [v for v in a.loops if v not in a.vars and v not in fixed]) * a.width
        if a.data: acc[1] += _points(table, free) * mult; acc[3] = True; continue
        idx, ok = _values(table, a, _grid(table, free, fixed), tuple(table.vars[v].size for v in free))
        acc[0].append(_elements(idx[ok], a.width))
        acc[1] += int(ok.sum()) * mult
        acc[2] += int((~ok).sum()) * mult
    out = {}
    for b, (parts, count, masked, data, numel) in sorted(found.items()):
      els = np.unique(np.concatenate(parts)) if parts else np.zeros(0, np.int64)
      out[b] = Reads(els[(els >= 0) & (els < numel)], self.shape(b, numel), count, masked, data)
    return out

  def thread(self, ids: dict[str, int]) -> dict[int, tuple[Reads, Reads]]:
    """What one thread of the final program reads and writes, per buffer: {slot: (reads, writes)}. ids: values of thread
    ids and loops by name (``{"gidx0": 1, "lidx0": 3}``; a thread id not given is 0, a loop not given runs whole)."""
    table = self.tables.get("program")
    if table is None: raise ValueError(f"this kernel's program cannot be evaluated: {self.notes.get('program', 'no program')}")
    names = {v.name: i for i, v in enumerate(table.vars)}
    if unknown := set(ids) - set(names): raise KeyError(f"no thread id or loop named {', '.join(sorted(unknown))} (there are {', '.join(names)})")
    fixed = {i: 0 for i, v in enumerate(table.vars) if v.kind != "loop"} | {names[k]: int(v) for k, v in ids.items()}
    found: dict[tuple[int, str], list] = {}
    for a in table.accesses:
      acc = found.setdefault((a.slot, a.kind), [[], 0, 0, False, a.numel])
      free = [v for v in a.loops if v not in fixed]
      if a.data: acc[1] += _points(table, free) * a.width; acc[3] = True; continue
      idx, ok = _values(table, a, _grid(table, free, fixed), tuple(table.vars[v].size for v in free))
      acc[0].append(_elements(idx[ok], a.width))
      acc[1] += int(ok.sum()) * a.width
      acc[2] += int((~ok).sum()) * a.width
    def made(slot: int, kind: str) -> Reads:
      parts, count, masked, data, numel = found.get((slot, kind), [[], 0, 0, False, 1])
      els = np.unique(np.concatenate(parts)) if parts else np.zeros(0, np.int64)
      return Reads(els[(els >= 0) & (els < numel)], self.shape(slot, numel), count, masked, data)
    return {b: (made(b, "load"), made(b, "store")) for b in sorted({s for s, _ in found})}
