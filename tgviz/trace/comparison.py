"""Two traces side by side: their kernels paired, the code of each pair diffed, and what the compiler did on each side.

The data of a comparison only (see :mod:`tgviz.api` for ``tgviz.compare`` and ``Comparison.to_html``). Kernels are paired
first by the AST they compile (their key, Kernel.key: the same kernel, whatever it is called), then, among the rest, by
name in compile order; what is left is unpaired on its side.
"""
from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tgviz.trace.kernel import KERNEL_COLUMNS, Kernel
from tgviz.trace.retime import compare_times
from tgviz.trace.trace import Trace

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
  return SideCounts(len(trace.kernels), len(steps), sum(len(s.matches) for s in steps),
                    sum(m.time for s in steps for m in s.matches))


def _matches_by_step(trace: Trace) -> Counter[str]:
  counts: Counter[str] = Counter()
  for s in trace.steps: counts[s.name] += len(s.matches)
  return counts


def step_deltas(a: Trace, b: Trace) -> list[StepDelta]:
  """Every step name whose total match count differs between a and b, the biggest difference first."""
  ca, cb = _matches_by_step(a), _matches_by_step(b)
  names = [n for n in dict.fromkeys([*ca, *cb]) if ca[n] != cb[n]]
  return sorted((StepDelta(n, ca[n], cb[n]) for n in names), key=lambda d: -abs(d.a - d.b))


def _launch(k: Kernel) -> str:
  return f"global={k.global_size} local={k.local_size}"


class Comparison:
  """Two traces compared: kernels paired (``pairs``), the kernels only one side has (``only_a``, ``only_b``), what the
  compiler did on each side (``counts``) and the steps whose match counts differ most (``step_deltas``)."""

  def __init__(self, a: Trace, b: Trace, labels: tuple[str, str] = ("a", "b"), pairs: Sequence[tuple[Kernel, Kernel]] = ()):
    """pairs: (kernel of a, kernel of b) to pair as given, whatever their ASTs and names (e.g. a kernel and its retry)."""
    self.a, self.b, self.labels = a, b, labels
    self.pairs, self.only_a, self.only_b = pair_kernels(a.kernels, b.kernels, pairs)
    self.counts = (side_counts(a), side_counts(b))
    self.step_deltas = step_deltas(a, b)

  @property
  def unpaired(self) -> tuple[list[Kernel], list[Kernel]]:
    """(the kernels only a has, the kernels only b has), each in compile order."""
    return self.only_a, self.only_b

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
    compare; None where either did not run) and each side's kernel row (see :meth:`Trace.kernel_table`) with its keys
    prefixed by ``a_`` and ``b_`` (None on the side a kernel is missing from)."""
    def side(prefix: str, k: Kernel | None) -> dict[str, Any]:
      row = k.table_row() if k is not None else dict.fromkeys(KERNEL_COLUMNS)
      return {f"{prefix}_{key}": v for key, v in row.items()}
    rows = [{"how": p.how, "same_code": p.identical, "time": compare_times(p.a.timing, p.b.timing), **side("a", p.a), **side("b", p.b)}
            for p in self.pairs]
    rows += [{"how": "only a", "same_code": None, "time": None, **side("a", k), **side("b", None)} for k in self.only_a]
    rows += [{"how": "only b", "same_code": None, "time": None, **side("a", None), **side("b", k)} for k in self.only_b]
    return rows

  def summary(self) -> str:
    """A plain-text summary: counts per side, the pairs (same code or how many lines differ), unpaired kernels, and the
    steps whose match counts differ most."""
    la, lb = self.labels
    w = max(len(la), len(lb), 4)
    lines = [f"tgviz comparison: {la} vs {lb}", f"  {'':{w}}  kernels  steps  matches  rewrite time"]
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
    if self.step_deltas:
      lines.append(f"steps whose match counts differ most ({la} -> {lb}):")
      lines += [f"  {d.name}: {d.a} -> {d.b}" for d in self.step_deltas[:STEPS_SHOWN]]
    return "\n".join(lines)

  __str__ = summary

  def __repr__(self) -> str:
    return f"<Comparison {self.labels[0]} vs {self.labels[1]}: {len(self.pairs)} paired, {len(self.only_a)} only in " \
           f"{self.labels[0]}, {len(self.only_b)} only in {self.labels[1]}>"

