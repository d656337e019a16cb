"""Steps of a trace and what happens in them: a Step (one graph rewrite) with its Matches and the step before it
(step_before), graph Diffs, the Events of a node's life and the Rules (patterns) that fired.

Built on what :mod:`tgviz.bridge` recorded; :mod:`tgviz.trace.trace` groups steps into kernels and traces. The graphs a step
hands out are tinygrad ``UOp`` objects, the very ones tinygrad computed.
"""
from __future__ import annotations

import collections
import functools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tgviz import bridge as tg

if TYPE_CHECKING:
  from tgviz.trace.trace import Group


@dataclass(eq=False)
class Match:
  """One pattern that fired inside a step: the UOp it replaced and what it replaced it with."""
  step: Step
  index: int
  loc: tuple[str, int]
  time: float

  @property
  def source(self) -> str:
    """The source text of the pattern that fired."""
    return tg.pattern_source(self.loc)

  def uops(self) -> tuple[Any, Any]:
    """(the UOp matched, its replacement)."""
    return self.step._rec.match_uops(self.step._raw, self.index)

  @property
  def is_error(self) -> bool:
    """True when the pattern raised (tinygrad records a REWRITE_ERROR)."""
    return self.step._rec.match_failed(self.step._raw, self.index)


@dataclass(frozen=True)
class Diff:
  """Nodes of a step's graph added, removed and changed (before -> after pairs) by the rewrite."""
  added: tuple[Any, ...]
  removed: tuple[Any, ...]
  changed: tuple[tuple[Any, Any], ...]


def diff_graphs(before: Any, after: Any) -> Diff:
  """Compare two UOp graphs. UOps are hash-consed, so a node in both is unchanged. A node replaced in place (same
  position under the same parents, reached from the roots) is 'changed'; the rest are added or removed."""
  b_nodes, a_nodes = tg.toposort(before), tg.toposort(after)
  b_set, a_set = set(b_nodes), set(a_nodes)
  changed: dict[Any, Any] = {}
  todo = [(before, after)]
  while todo:
    b, a = todo.pop()
    if b is a or b in a_set or a in b_set or b in changed: continue  # unchanged, or not a new node
    changed[b] = a
    bs, as_ = tg.sources(b), tg.sources(a)
    if len(bs) == len(as_): todo.extend(zip(bs, as_, strict=True))
  new = set(changed.values())
  return Diff(added=tuple(u for u in a_nodes if u not in b_set and u not in new),
              removed=tuple(u for u in b_nodes if u not in a_set and u not in changed),
              changed=tuple((b, a) for b, a in changed.items()))


@functools.lru_cache(maxsize=4096)
def where(file: str, line: int) -> str:
  """A source location as people read it: "file.py:12" (cached: a trace names the same few places many times)."""
  return f"{Path(file).name}:{line}"


CellLabel = Callable[[str], str | None]
"""A file name -> how the user knows it (IPython: a cell's file -> "Cell In[3]"), or None to show the file's name."""


def place(file: str, line: int, cell_label: CellLabel | None = None) -> str:
  """A line of the user's code as the user knows it: "Cell In[2], line 4" in a notebook (IPython's name for the cell's
  temporary file, as its tracebacks say), else where(): "train.py:12"."""
  cell = cell_label(file) if cell_label is not None else None
  return f"{cell}, line {line}" if cell else where(file, line)


def places(lines: Iterable[tuple[str, int]], cell_label: CellLabel | None = None, most: int = 4) -> str:
  """Several lines of the user's code as one text, each file once: "Cell In[2], lines 3, 4", "train.py:9, 13 · a.py:2";
  past `most` lines, the first ones and "…"."""
  by_file: dict[str, list[int]] = {}
  for file, line in lines: by_file.setdefault(file, []).append(line)
  out, shown = [], 0
  for file, nums in by_file.items():
    nums = sorted(set(nums))[:max(1, most - shown)]
    shown += len(nums)
    cell = cell_label(file) if cell_label is not None else None
    text = ", ".join(map(str, nums))
    out.append(f"{cell}, line{'s' if len(nums) > 1 else ''} {text}" if cell else f"{Path(file).name}:{text}")
    if shown >= most: break
  return " · ".join(out) + (" …" if sum(len(set(v)) for v in by_file.values()) > shown else "")


def step_rows(steps: list[Step]) -> list[tuple[str, str | None]]:
  """A group's steps' rows in the tree (see Step.row), those that read alike numbered in order: "ADD #1", "ADD #2"."""
  named = collections.Counter(s.name for s in steps)
  rows = [s.own_row(named[s.name] > 1) for s in steps]
  alike, seen = collections.Counter(what for what, _ in rows), collections.Counter[str]()
  for i, (what, at) in enumerate(rows):
    if alike[what] > 1:
      seen[what] += 1
      rows[i] = (f"{what} #{seen[what]}", at)
  return rows


def step_before(step: Step) -> Step | None:
  """The step whose output the step's input follows: the last before it at its depth or above (a deeper one is a
  rewrite nested in a step, whose output is not the next step's input)."""
  return next((s for s in reversed(step.group.steps[:step.index]) if s.depth <= step.depth), None)


@dataclass(eq=False)
class Step:
  """One graph rewrite tinygrad ran (a graph_rewrite call, or a function tinygrad tracks as one)."""
  group: Group
  index: int
  name: str
  depth: int
  loc: tuple[str, int]
  _rec: Any = field(default=None, repr=False)
  _raw: Any = field(default=None, repr=False)

  @functools.cached_property
  def matches(self) -> list[Match]:
    """The patterns that fired, in order (made when first asked for: a capture reads nothing it does not need)."""
    return [Match(self, k, loc, t) for k, (_, _, loc, t) in enumerate(self._raw.matches)]

  @property
  def match_count(self) -> int:
    """How many patterns fired (len(matches), without making them: a summary of a big trace counts millions)."""
    return len(self._raw.matches)

  @property
  def call_notes(self) -> dict[str, str]:
    """What a kernel's CALL node in this step's graphs says of the kernel (the kernel it becomes, its Tensor operations),
    by the AST's node key (see Trace.call_notes)."""
    return self.group.trace.call_notes if self.group.trace is not None else {}

  @property
  def time_us(self) -> float | None:
    """This rewrite's wall time (µs): tinygrad's own span of it on its TINY lane, nested steps included; None where the
    trace has no spans (a capture with profile=False, tinygrad's dumps, a kernel compiled in a compile worker)."""
    span = self.group.trace.compile_times().step(self.group.index, self.index) if self.group.trace is not None else None
    return round(span.time_us, 3) if span is not None else None

  @property
  def self_time_us(self) -> float | None:
    """:attr:`time_us` less the rewrites nested in it (its own work: walking the graph, trying its patterns)."""
    span = self.group.trace.compile_times().step(self.group.index, self.index) if self.group.trace is not None else None
    return round(span.self_us, 3) if span is not None else None

  @property
  def is_snapshot(self) -> bool:
    """tinygrad's 'View ...' landmarks (View Base AST, View Program, ...): a graph shown, not rewritten."""
    return tg.is_snapshot(self.name)

  @property
  def label(self) -> str:
    """Its name in titles and paths: a graph_rewrite tinygrad ran without a name by what it rewrote, then where it was
    called ("ADD (lidx1+56) · graph_rewrite weak.py:66"; see row)."""
    what, at = self.row
    return what if at is None else f"{what} · {at}"

  @property
  def row(self) -> tuple[str, str | None]:
    """Its name as the tree's row says it, and for a graph_rewrite tinygrad ran without a name, where it was called
    (the row's tooltip). Such a row says what it rewrote: the input's op and, where it is small, the input written out
    ("ADD (lidx1+56)", "CONST 32"): a pass's fourteen nested rewrites read as one name fourteen times, and the place,
    the same in every one of them (weak.py:66), took the row's room (passes 10 to 15). A name tinygrad gave several
    steps of the group is followed by a small input written out too ("reshape ((0+1*1+2*0)%4)": eight rows of
    "reshape" in the tutorial's kernel). Rows that still read alike (inputs too big to write out) are numbered in the
    group's order, "ADD #2" (pass 19 read 52 rows of "ADD" in one MNIST kernel): see step_rows."""
    return self.group.rows[self.index]

  def own_row(self, repeated: bool) -> tuple[str, str | None]:
    """Its row before rows alike are numbered (see row); repeated: tinygrad gave its name to other steps of the group."""
    if self._rec is None: return self.name, None
    unnamed = tg.is_unnamed(self.name)
    text = self._rec.input_text(self._raw) if unnamed or repeated else None
    what = self._rec.input_op(self._raw) if unnamed else self.name
    return f"{what}{f' {text}' if text else ''}", f"{self.name} {where(*self.loc)}" if unnamed else None

  @property
  def path(self) -> str:
    """'group / step', as the tree shows it (a kernel's group by its display name: "E_2 #2 / View Base AST")."""
    return f"{self.group.display_name} / {self.label}"

  def title(self, match: int | None = None) -> str:
    """The heading of a picture of this step, or of its match number `match` (0-based): path, pattern and where."""
    if match is None: return self.path
    m = self.matches[match]
    return f"{self.path}  match {match + 1}/{len(self.matches)}: {m.source}  ({where(*m.loc)})"

  def graphs(self, match: int | None = None) -> tuple[Any, Any]:
    """The (before, after) UOp graphs of the whole step, or of its match number `match` (0-based)."""
    if match is None: return self.before(), self.after()
    if not 0 <= match < len(self.matches): raise IndexError(f"step {self.name!r} has {len(self.matches)} matches; match={match}")
    return self.at(match), self.at(match + 1)

  def before(self) -> Any:
    """The UOp graph this step started from."""
    return self._rec.before(self._raw)

  def after(self) -> Any:
    """The UOp graph after the step: what tinygrad's rewrite returned (or, where it raised, the graph after the last
    recorded match)."""
    if (out := self.returned()) is not None: return out
    return self.at(len(self.matches))

  def returned(self) -> Any | None:
    """What tinygrad's rewrite returned, if that lived to the end of the capture (else None, and after() replays)."""
    return self._rec.returned(self._raw)

  @property
  def returned_num(self) -> int | None:
    """The trace number of what returned() gives (None where it gives None)."""
    return self._raw.out

  def at(self, k: int) -> Any:
    """The UOp graph after the first k matches of this step, exactly as tinygrad's VIZ replays it. A replay that failed
    stops at its REWRITE_ERROR, which every later k returns too."""
    if not 0 <= k <= len(self.matches):
      raise IndexError(f"step {self.name!r} has {len(self.matches)} matches: k is 0 (its input) to {len(self.matches)} (after its last), not {k}")
    return self._rec.at(self._raw, k)

  def pairs(self) -> list[tuple[Any, Any]]:
    """Each match's matched node and its replacement (as Match.uops, built in one walk)."""
    return self._rec.match_pairs(self._raw)

  @functools.cached_property
  def match_keys(self) -> list[tuple[str, str]]:
    """Each match's (matched node, replacement) by node key (as in an SVG's data-node): which matches made or replaced
    a node, without building its graphs again."""
    return [(tg.node_key(u0), tg.node_key(u1)) for u0, u1 in self.pairs()]

  def node_matches(self, keys: set[str]) -> dict[str, list[list[int]]]:
    """For each node of keys (node keys) that a match of this step made or replaced: [the matches that made it, those
    that replaced it]."""
    out: dict[str, list[list[int]]] = {}
    for k, (u0, u1) in enumerate(self.match_keys):
      if u1 in keys: out.setdefault(u1, [[], []])[0].append(k)
      if u0 in keys: out.setdefault(u0, [[], []])[1].append(k)
    return out

  @property
  def options(self) -> dict[str, bool]:
    """How tinygrad ran the rewrite, which its replay follows: bottom_up, walk, enter_calls."""
    r = self._raw
    return {"bottom_up": r.bottom_up, "walk": r.walk, "enter_calls": r.enter_calls}

  def replay(self) -> Iterator[Any]:
    """Every graph of the step in order: before, then after each match (at(0), at(1), ...), in one pass."""
    return self._rec.replay(self._raw)

  def later_graphs(self, after: int) -> Iterator[tuple[int, Any, bool]]:
    """The graphs past the first `after` matches, in one pass, as (k, the graph after match k, whether only tinygrad
    derives it from the graph before: a node rebuilt over a source of another dtype, say; see tg.page_replays)."""
    return self._rec.later_graphs(self._raw, after)

  def diff(self) -> Diff:
    """What the step added, removed and changed."""
    return diff_graphs(self.before(), self.after())

  @property
  def error(self) -> str | None:
    """The message of a pattern that raised in this step, if one did."""
    for m in self.matches:
      if m.is_error: return tg.error_text(m.uops()[1])
    return None

  def __repr__(self) -> str:
    return f"<Step {self.path!r} depth={self.depth} matches={len(self.matches)}>"


@dataclass(frozen=True)
class Event:
  """One event in a node's life (see :meth:`Trace.history`). kind: "input" (in the graph a step started from, where the
  node is first seen), "created" (match `match` of `step` made it, replacing `other`), "rebuilt" (tinygrad rebuilt it
  after match `match` of `step` because a source changed, in the place of `other`), "lives" (in the graph after
  `step`), "replaced" (match `match` of `step` replaced it with `other`) or "removed" (gone from the graph after `step`,
  replaced by nothing the node's own match made, or not in the next step's input, which tinygrad built anew). A node
  gone can come back: tinygrad's UOps are unique by structure, so a later graph that holds the same structure holds
  the same UOp ("input" or "created" again). ``match`` indexes ``step.matches`` from 0, as Link's does: the widget and
  the report number matches from 1 (``match=2`` is their "match 3", whose graph is ``step.at(3)``)."""
  kind: str
  step: Step
  match: int | None = None
  other: Any = None


@dataclass(frozen=True)
class Link:
  """One link of a node's lineage (see :meth:`Trace.lineage`). kind "created": match `match` of `step` made `uop` (it is,
  or is inside, that match's replacement) from `other`, the node it rewrote (or, inside, the node `uop` took the place
  of); "rebuilt": tinygrad rebuilt `uop` at that match because one of its sources changed, `other` the node it took
  the place of (None where none did); "input": `uop` was in the graph `step` started from, which tinygrad built anew
  (an opt applied) where `other` is the node in its place in the step before's output, else the chain's first UOp."""
  kind: str
  step: Step
  match: int | None
  uop: Any
  other: Any = None


@dataclass(frozen=True)
class Lineage:
  """Where a node came from (see :meth:`Trace.lineage`): ``links``, newest first, each rewrite that made a node of the
  chain from the one before it, back to its first UOp; ``origins``, the Tensor ops and the user's lines of the kernel
  whose AST that first UOp is in (empty where the chain starts elsewhere: a schedule's graph, or a node made from
  nothing earlier); ``own``: those of the first UOp itself (Kernel.origins_of), not all of the kernel's."""
  links: list[Link]
  origins: tuple[tg.Origin, ...] = ()
  own: bool = False

  @property
  def first(self) -> Any:
    """The first UOp of the chain (None for a node found in no step)."""
    return self.links[-1].uop if self.links else None

  def runs(self) -> list[list[Link]]:
    """The links in runs, newest first: consecutive links of one kind, in one step, of nodes of one op (a node rebuilt at
    every match of a step is one run)."""
    out: list[list[Link]] = []
    for ln in self.links:
      if out and (r := out[-1][-1]).kind == ln.kind and r.step is ln.step and tg.op_name(r.uop) == tg.op_name(ln.uop): out[-1].append(ln)
      else: out.append([ln])
    return out

  def __repr__(self) -> str:
    def say(run: list[Link]) -> str:
      new, old = run[0], run[-1]
      came = f" from {tg.op_name(old.other)}" if old.other is not None else ""
      if new.kind == "input": return f"{tg.op_name(new.uop)} in the input of {new.step.path!r}{came}"
      matches = f"match {(old.match or 0) + 1}" + (f"-{(new.match or 0) + 1}" if len(run) > 1 else "")
      return f"{tg.op_name(new.uop)} {new.kind} by {matches} of {new.step.path!r}{came}"
    ops = ", ".join(f"{o.op} ({Path(o.file).name}:{o.line})" if o.file else o.op for o in self.origins)
    return "\n".join(["<Lineage", *(f"  {say(r)}" for r in self.runs()), *([f"  from {ops}"] if ops else [])]) + ">"


@dataclass(eq=False)
class Rule:
  """A pattern of a trace (see Trace.rules): where it is defined, how often and for how long it fired in the trace's
  steps (count, time in seconds; the steps, its first match: None for a pattern that fired only in untracked rewrites,
  or never), and, where the capture counted every attempt, TRACK_MATCH_STATS=2's figures for it."""
  loc: tuple[str, int]
  count: int
  time: float
  steps: list[Step]
  first: Match | None
  attempts: int | None = None               # its attempts in every rewrite (tried past its early reject)
  matched: int | None = None                # its matches in every rewrite (TRACK_MATCH_STATS's count)
  self_time_us: float | None = None         # its attempts' time less the rewrites nested in them
  failed_us: float | None = None            # time in its attempts that did not match

  @property
  def match_rate(self) -> float | None:
    """matched / attempts (None where not counted)."""
    return self.matched / self.attempts if self.attempts and self.matched is not None else None

  @property
  def source(self) -> str:
    """The pattern's source text."""
    return tg.pattern_source(self.loc)

  def __repr__(self) -> str:
    return f"Rule({where(*self.loc)}, count={self.count}, time={self.time * 1e3:.3g} ms, " \
           f"{len(self.steps)} step{'s' if len(self.steps) != 1 else ''})"
