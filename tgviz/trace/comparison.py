"""Two traces side by side: their kernels paired, the code of each pair diffed, and what the compiler did on each side.

The data of a comparison only (see :mod:`tgviz.api` for ``tgviz.compare`` and ``Comparison.to_html``). Kernels are paired
first by the AST they compile (their key, Kernel.key: the same kernel, whatever it is called), then, among the rest, by
name in compile order; what is left is unpaired on its side. Unpaired kernels of the two sides that compute the same
user ops (their origins: the Tensor op, and the user's line, or its text, where both sides name the same one) are linked as a group:
a plain conv's one reduce kernel and the three kernels Winograd computes it with.
"""
from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tgviz.trace.kernel import KERNEL_COLUMNS, Kernel
from tgviz.trace.retime import compare_times
from tgviz.trace.trace import Trace
from tgviz.trace.units import plural

STEPS_SHOWN = 10  # steps whose match counts differ most, in the summary


@dataclass(frozen=True)
class KernelPair:
  """A kernel of trace a and its counterpart in trace b; how: "ast" (the same AST), "name" (same name, other AST) or
  "given" (paired by the caller, e.g. a kernel and its retry with other opts)."""
  a: Kernel
  b: Kernel
  how: str

  @property
  def code_diff(self) -> str:
    """A unified diff (difflib) of the two kernels' device code; "" when the code is the same."""
    return code_diff(self.a, self.b)

  @property
  def launch_dims(self) -> tuple[tuple[tuple[int, ...], tuple[int, ...] | None], tuple[tuple[int, ...], tuple[int, ...] | None]]:
    """((global_size, local_size) of a, (global_size, local_size) of b)."""
    return (self.a.global_size, self.a.local_size), (self.b.global_size, self.b.local_size)

  @property
  def lines_changed(self) -> tuple[int, int]:
    """(lines the code diff adds, lines it removes)."""
    body = self.code_diff.splitlines()[2:]
    return sum(x.startswith("+") for x in body), sum(x.startswith("-") for x in body)

  @property
  def identical(self) -> bool:
    """Whether both sides generated the same device code."""
    return self.a.source == self.b.source

  def __repr__(self) -> str:
    return f"<KernelPair {self.a.name} ~ {self.b.name} by {self.how}{'' if self.identical else ', code differs'}>"


@dataclass(frozen=True)
class SideCounts:
  """What the compiler did on one side: kernels, rewrite steps, pattern matches, and the time spent in those matches."""
  kernels: int
  steps: int
  matches: int
  rewrite_time: float  # seconds


@dataclass(frozen=True)
class StepDelta:
  """A rewrite step (by name, summed over the trace) whose match counts differ between the sides."""
  name: str
  a: int
  b: int


@dataclass(frozen=True)
class KernelGroup:
  """Kernels only a has and kernels only b has that compute the same user ops (see :func:`link_by_origins`), e.g. a conv
  as one reduce kernel on a and as Winograd's three on b; ops: those ops as shown, "conv2d (line 7)"."""
  a: tuple[Kernel, ...]
  b: tuple[Kernel, ...]
  ops: tuple[str, ...]

  @property
  def label(self) -> str:
    """What the group computes and with how many kernels a side: "conv2d (line 7): 1 kernel ↔ 3 kernels"."""
    def n(ks: tuple[Kernel, ...]) -> str: return f"{len(ks)} kernel{'s' if len(ks) != 1 else ''}"
    return f"{', '.join(self.ops)}: {n(self.a)} ↔ {n(self.b)}"

  @property
  def times_us(self) -> tuple[float | None, float | None]:
    """(a's kernels' measured device time, b's), each summed over their runs in µs; None for a side none of whose ran."""
    def total(ks: tuple[Kernel, ...]) -> float | None:
      times = [t for k in ks for t in k.run_times]
      return round(sum(times) * 1e6, 3) if times else None
    return total(self.a), total(self.b)

  def counterparts(self, kernel: Kernel) -> tuple[Kernel, ...]:
    """The kernels of the other side of the group (() for a kernel not in it)."""
    if any(k is kernel for k in self.a): return self.b
    return self.a if any(k is kernel for k in self.b) else ()


def _op_name(key: tuple[Any, ...]) -> str:
  return key[0] + (" bw" if key[1] else "")


def _ops_shown(a: list[Kernel], b: list[Kernel]) -> tuple[str, ...]:
  """The user ops both sides' kernels compute, in a's order, each with its line ("conv2d (line 7)"; "line 5 ↔ 4" where
  the two sides' code has it on other lines)."""
  def lines(ks: list[Kernel], key: tuple[Any, ...]) -> list[int]:
    return sorted({o.line for k in ks for o in k.origins if (o.op, o.backward) == key and o.line is not None})
  keys_b = {(o.op, o.backward) for k in b for o in k.origins}
  shown = []
  for key in dict.fromkeys((o.op, o.backward) for k in a for o in k.origins if (o.op, o.backward) in keys_b):
    la, lb = lines(a, key), lines(b, key)
    def text(ls: list[int]) -> str: return ", ".join(map(str, ls))
    where = f" (line {text(la)})" if la == lb and la else f" (line {text(la) or '?'} ↔ {text(lb) or '?'})" if la or lb else ""
    shown.append(_op_name(key) + where)
  return tuple(shown)


def link_by_origins(a: list[Kernel], b: list[Kernel]) -> list[KernelGroup]:
  """Groups of a's and b's kernels (the unpaired ones) that compute the same user ops: kernels are linked where their
  origins share an op on the same line (the op and line of the user's code, whatever file: two cells or scripts), then,
  among those still unlinked, an op on a line of the same text, what it assigns to left out (the same call on another
  line), then an op on any line; a group is a connected set of links with kernels on both sides. In a's compile order; kernels with no origins
  are in none."""
  order = {id(k): i for i, k in enumerate(a)}
  groups: list[KernelGroup] = []
  for key in (lambda o: (o.op, o.backward, o.line), lambda o: (o.op, o.backward, _call(o.source)), lambda o: (o.op, o.backward)):
    linked = [(ka, kb) for ka, kb in _linked(a, b, key) if ka and kb]
    groups += [KernelGroup(tuple(ka), tuple(kb), _ops_shown(ka, kb)) for ka, kb in linked]
    done = {id(k) for ka, kb in linked for k in (*ka, *kb)}
    a, b = [k for k in a if id(k) not in done], [k for k in b if id(k) not in done]
  return sorted(groups, key=lambda g: order[id(g.a[0])])


_ASSIGNED = re.compile(r"^[\w.,\[\]\s]+?=(?!=)\s*")  # a line's assignment targets ("out = ", "x, w = "), not a call's keyword
_COMMENT = re.compile(r"\s+#.*$")


def _call(source: str) -> str:
  """A line's text without what it assigns to and its comment: two cells' "general_out = x.conv2d(w)" and "wino_out =
  x.conv2d(w)  # Winograd" are the same call."""
  return _COMMENT.sub("", _ASSIGNED.sub("", source.strip(), count=1))


def _linked(a: list[Kernel], b: list[Kernel], key: Callable[[Any], Any]) -> list[tuple[list[Kernel], list[Kernel]]]:
  """The kernels of a and b with origins, as connected sets (a's, b's): two kernels are connected where an origin of
  each has the same key (union-find over kernels and keys)."""
  parent: dict[Any, Any] = {}
  def root(x: Any) -> Any:
    while parent.setdefault(x, x) != x: x = parent[x]
    return x
  kernels = [(side, i, k) for side, ks in ((0, a), (1, b)) for i, k in enumerate(ks) if k.origins]
  for side, i, k in kernels:
    for o in k.origins: parent[root((side, i))] = root(("op", key(o)))
  sets: dict[Any, tuple[list[Kernel], list[Kernel]]] = {}
  for side, i, k in kernels: sets.setdefault(root((side, i)), ([], []))[side].append(k)
  return list(sets.values())


def code_diff(a: Kernel, b: Kernel) -> str:
  """The unified diff of two kernels' device code ("" when they are the same)."""
  return "\n".join(difflib.unified_diff(a.source.splitlines(), b.source.splitlines(), a.name, b.name, lineterm=""))


def pair_kernels(a: list[Kernel], b: list[Kernel], given: Sequence[tuple[Kernel, Kernel]] = ()) \
    -> tuple[list[KernelPair], list[Kernel], list[Kernel]]:
  """(pairs, unpaired of a, unpaired of b): the given pairs (how "given"), then the rest paired by the same AST, then by
  name, each in compile order."""
  pairs = [KernelPair(ka, kb, "given") for ka, kb in given]
  left, right = [k for k in a if all(k is not ka for ka, _ in given)], [k for k in b if all(k is not kb for _, kb in given)]
  for how, key in (("ast", lambda k: k.key), ("name", lambda k: k.name)):
    waiting: dict[str, list[Kernel]] = {}
    for k in right: waiting.setdefault(key(k), []).append(k)
    still: list[Kernel] = []
    for k in left:
      if key(k) and waiting.get(key(k)): pairs.append(KernelPair(k, waiting[key(k)].pop(0), how))  # "": no AST to go by
      else: still.append(k)
    paired = {id(p.b) for p in pairs}
    left, right = still, [k for k in right if id(k) not in paired]
  order = {id(k): i for i, k in enumerate(a)}
  return sorted(pairs, key=lambda p: order[id(p.a)]), left, right


def side_counts(trace: Trace) -> SideCounts:
  steps = list(trace.steps)
  return SideCounts(len(trace.kernels), len(steps), sum(s.match_count for s in steps),
                    sum(m.time for s in steps for m in s.matches))


def _matches_by_step(trace: Trace) -> Counter[str]:
  counts: Counter[str] = Counter()
  for s in trace.steps: counts[s.name] += s.match_count
  return counts


def step_deltas(a: Trace, b: Trace) -> list[StepDelta]:
  """Every step name whose total match count differs between a and b, the biggest difference first."""
  ca, cb = _matches_by_step(a), _matches_by_step(b)
  names = [n for n in dict.fromkeys([*ca, *cb]) if ca[n] != cb[n]]
  return sorted((StepDelta(n, ca[n], cb[n]) for n in names), key=lambda d: -abs(d.a - d.b))


def _launch(k: Kernel) -> str:
  return f"global={k.global_size} local={k.local_size}"


class Comparison:
  """Two traces compared: kernels paired (``pairs``), the kernels only one side has (``only_a``, ``only_b``) and those of
  them linked as computing the same user ops (``groups``), what the compiler did on each side (``counts``) and the steps
  whose match counts differ most (``step_deltas``)."""

  def __init__(self, a: Trace, b: Trace, labels: tuple[str, str] = ("a", "b"), pairs: Sequence[tuple[Kernel, Kernel]] = ()):
    """pairs: (kernel of a, kernel of b) to pair as given, whatever their ASTs and names (e.g. a kernel and its retry)."""
    self.a, self.b, self.labels = a, b, labels
    self.pairs, self.only_a, self.only_b = pair_kernels(a.kernels, b.kernels, pairs)
    self.groups = link_by_origins(self.only_a, self.only_b)
    self.counts = (side_counts(a), side_counts(b))
    self.step_deltas = step_deltas(a, b)

  @property
  def unpaired(self) -> tuple[list[Kernel], list[Kernel]]:
    """(the kernels only a has, the kernels only b has), each in compile order."""
    return self.only_a, self.only_b

  def group_of(self, kernel: Kernel) -> KernelGroup | None:
    """The group of kernels computing the same user ops that kernel (an unpaired one) is in; None where it is in none."""
    return next((g for g in self.groups if g.counterparts(kernel)), None)

  def counterparts(self, kernel: Kernel) -> tuple[Kernel, ...]:
    """The kernels of the other side that compute what kernel computes: its pair's kernel, or the other side of its
    group (a plain conv's kernel: Winograd's three); () where there are none."""
    for p in self.pairs:
      if p.a is kernel: return (p.b,)
      if p.b is kernel: return (p.a,)
    g = self.group_of(kernel)
    return g.counterparts(kernel) if g is not None else ()

  def pair(self, name: str) -> KernelPair:
    """The first pair whose kernel on side a (or else on side b) is named so: its name, display name, a glob of them,
    or its key (a prefix of 4 hex digits or more; see Kernel.named)."""
    for p in self.pairs:
      if p.a.named(name) or p.b.named(name): return p
    raise KeyError(f"no paired kernel {name!r}; paired: {', '.join(f'{p.a.name}~{p.b.name}' for p in self.pairs) or 'none'}")

  def kernel_table(self) -> list[dict[str, Any]]:
    """One plain row per pair, then per unpaired kernel (usable as a ``pandas.DataFrame``): ``how`` ("ast", "name",
    "only a", "only b"), ``same_code``, ``time`` (how b's time compares with a's: "b faster", "b slower", "within noise"
    where each median lies inside the other's min-max spread, "cold" where either is a single cold launch: nothing to
    compare; None where either did not run), ``group`` (an unpaired kernel's index in ``groups``, else None) and each
    side's kernel row (see :meth:`Trace.kernel_table`) with its keys
    prefixed by ``a_`` and ``b_`` (None on the side a kernel is missing from)."""
    def side(prefix: str, k: Kernel | None) -> dict[str, Any]:
      row = k.table_row() if k is not None else dict.fromkeys(KERNEL_COLUMNS)
      return {f"{prefix}_{key}": v for key, v in row.items()}
    def group(k: Kernel) -> int | None: return next((i for i, g in enumerate(self.groups) if g.counterparts(k)), None)
    rows = [{"how": p.how, "same_code": p.identical, "time": compare_times(p.a.timing, p.b.timing), "group": None,
             **side("a", p.a), **side("b", p.b)} for p in self.pairs]
    rows += [{"how": "only a", "same_code": None, "time": None, "group": group(k), **side("a", k), **side("b", None)} for k in self.only_a]
    rows += [{"how": "only b", "same_code": None, "time": None, "group": group(k), **side("a", None), **side("b", k)} for k in self.only_b]
    return rows

  def tally(self) -> str:
    """How the kernel table's rows add up, as its page's head line says it: the pairs, the groups of the same ops with
    their kernels on each side, the kernels only one side has outside them: "6 pairs · 1 group of the same ops (1 kernel
    in general ↔ 4 in winograd) · 1 only in winograd"."""
    la, lb = self.labels
    parts = [plural(len(self.pairs), "pair")]
    if self.groups:
      na, nb = sum(len(g.a) for g in self.groups), sum(len(g.b) for g in self.groups)
      parts.append(f"{plural(len(self.groups), 'group')} of the same ops ({plural(na, 'kernel')} in {la} ↔ {nb} in {lb})")
    for label, only in ((la, self.only_a), (lb, self.only_b)):
      if n := sum(self.group_of(k) is None for k in only): parts.append(f"{n} only in {label}")
    return " · ".join(parts)

  def summary(self) -> str:
    """A plain-text summary: its first line the sides and the tally, counts per side, the pairs (same code or how many
    lines differ), unpaired kernels, and the steps whose match counts differ most."""
    la, lb = self.labels
    w = max(len(la), len(lb), 4)
    lines = [f"tgviz comparison: {la} vs {lb} · {self.tally()}", f"  {'':{w}}  kernels  steps  matches  rewrite time"]
    for label, c in zip(self.labels, self.counts, strict=True):
      lines.append(f"  {label:{w}}  {c.kernels:7d}  {c.steps:5d}  {c.matches:7d}  {c.rewrite_time * 1e3:9.1f} ms")
    lines.append(f"paired kernels ({len(self.pairs)}):")
    for p in self.pairs:
      code = "same code" if p.identical else "code differs (+{} -{} lines)".format(*p.lines_changed)
      launch = _launch(p.a) if _launch(p.a) == _launch(p.b) else f"{_launch(p.a)} -> {_launch(p.b)}"
      how = {"ast": "same AST", "name": "same name"}.get(p.how, "paired as given")
      lines.append(f"  {p.a.display_name} ~ {p.b.display_name}  {how}, {code}, {launch}")
    for label, only in ((la, self.only_a), (lb, self.only_b)):
      lines.append(f"only in {label} ({len(only)}): {', '.join(k.display_name for k in only) or '-'}")
    if self.groups: lines.append(f"the same user ops, computed by other kernels ({la} ↔ {lb}):")
    for g in self.groups:
      names = [", ".join(k.display_name for k in ks) for ks in (g.a, g.b)]
      lines.append(f"  {g.label}: {names[0]} ↔ {names[1]}")
    if self.step_deltas:
      lines.append(f"steps whose match counts differ most ({la} -> {lb}):")
      lines += [f"  {d.name}: {d.a} -> {d.b}" for d in self.step_deltas[:STEPS_SHOWN]]
    return "\n".join(lines)

  __str__ = summary

  def __repr__(self) -> str:
    return f"<Comparison {self.labels[0]} vs {self.labels[1]}: {self.tally()}>"

