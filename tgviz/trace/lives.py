"""A node's life across a trace's steps: its history (where it is first seen, the steps it lives through, where it is
rewritten away) and its lineage (the rewrites that made it, back to its creation), from the steps' replayed graphs.
:class:`tgviz.trace.trace.Trace` answers ``history()`` and ``lineage()`` with it.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tgviz import bridge as tg
from tgviz.trace.steps import Event, Lineage, Link, Step, diff_graphs, step_before


class Lives:
  """History and lineage over a trace's steps (a group's, or all of them, in order). The nodes of the graphs it looked
  in are kept (bridge.GraphNodes): the next node's history asks of the same graphs."""

  def __init__(self) -> None:
    self._nodes = tg.GraphNodes()

  def history(self, uop: Any, steps: list[Step]) -> list[Event]:
    """uop's life through steps (see Trace.history)."""
    return list(self._life(uop, steps))

  def lineage(self, uop: Any, steps: list[Step], seen: tuple[Step, int] | None = None) -> Lineage:
    """Where uop came from, looking in steps (see Trace.lineage)."""
    links: list[Link] = []
    link = self._made(uop, steps, *seen) if seen is not None else self._first_made(uop, steps)
    done = {id(uop)}
    while link is not None:
      links.append(link)
      if link.other is None or id(link.other) in done: break
      done.add(id(link.other))
      if link.match is not None: link = self._made(link.other, steps, link.step, link.match)  # in the graph before the match
      elif (prev := step_before(link.step)) is not None: link = self._made(link.other, steps, prev, len(prev.matches))
    start = links[-1].step if links and links[-1].kind == "input" and links[-1].other is None else None
    kernel = start.group.kernel if start is not None and start is start.group.steps[0] else None
    if kernel is None: return Lineage(links)
    own = kernel.origins_of(links[-1].uop)
    return Lineage(links, tuple(own if own is not None else kernel.origins), own is not None)

  def _first_made(self, uop: Any, steps: list[Step]) -> Link | None:
    """The first link of uop's lineage from its history: the step's input that first holds it, or the match that made it."""
    e = next((e for e in self._life(uop, steps) if e.kind in ("input", "created", "rebuilt")), None)
    if e is None: return None
    if e.kind in ("created", "rebuilt") and e.match is not None: return self._made(uop, steps, e.step, e.match + 1)
    # a step's input that is not the step before's output (tinygrad built it anew: an opt applied): the node there in its place
    prev = step_before(e.step)
    was = next((b for b, a in diff_graphs(prev.after(), e.step.before()).changed if a is uop), None) if prev is not None else None
    return Link("input", e.step, None, uop, was)

  def _made(self, uop: Any, steps: list[Step], step: Step, k: int) -> Link | None:
    """How uop, which is in step.at(k), came into the graphs: a match of step before the k-th made it (its replacement is,
    or holds, uop: "created", from the node it rewrote) or rebuilt it (a source changed: "rebuilt", from the node it took
    the place of); where the step's input holds it, as for its history's first event."""
    if self._nodes.holds(step.before(), uop): return self._first_made(uop, steps)
    j = self._first_holding(step, uop, k) - 1
    u0, u1 = step.pairs()[j]
    earlier = self._took_place_of(step, j, uop)
    if u1 is uop: return Link("created", step, j, uop, u0)
    if tg.reaches(u1, uop, set()): return Link("created", step, j, uop, earlier if earlier is not None else u0)
    return Link("rebuilt", step, j, uop, earlier)

  def _first_holding(self, step: Step, uop: Any, hi: int) -> int:
    """The first graph of step after a match that holds uop, by bisection up to graph hi (which holds it)."""
    lo = 1
    while lo < hi:
      mid = (lo + hi) // 2
      if self._nodes.holds(step.at(mid), uop): hi = mid
      else: lo = mid + 1
    return lo

  def _took_place_of(self, step: Step, j: int, uop: Any) -> Any:
    """The node uop took the place of in the step's graph at match j (None: it took no node's place)."""
    return next((b for b, a in diff_graphs(step.at(j), step.at(j + 1)).changed if a is uop), None)

  def _rebuilt(self, step: Step, uop: Any, hi: int | None = None) -> Event:
    """The creation of a node no match made: tinygrad rebuilt it because a match changed one of its sources. The
    match is the first after which the node is in the graph (up to the graph after `hi` matches, which holds it: by
    default the step's last); `other` is the node it took the place of."""
    j = self._first_holding(step, uop, len(step.matches) if hi is None else hi) - 1
    return Event("rebuilt", step, j, self._took_place_of(step, j, uop))

  def _life(self, uop: Any, steps: list[Step]) -> Iterator[Event]:
    """The events of history, made as they are asked for (the first one, a node's creation, ends the walk early)."""
    present, prev = False, None               # present: in the graph the step before (prev) ended with
    for s in steps:
      before = self._nodes.of(s.before())
      here = uop in before
      # a step's input built anew (not the graph the step before ended with) without the node: gone after that step
      if present and not here and prev is not None: yield Event("removed", prev)
      if here and not present: yield Event("input", s)
      made = replaced = False
      for m, (u0, u1) in zip(s.matches, s.pairs(), strict=True):  # built in one walk (Match.uops rebuilds each)
        if u0 is uop:
          # not seen here before: rebuilt earlier in this step, in a graph the step's input and output do not hold
          if not here: yield self._rebuilt(s, uop, m.index)
          replaced, here = True, False
          yield Event("replaced", s, m.index, u1)
        elif not here and tg.reaches(u1, uop, before):
          made = here = True
          # a replacement that is or holds a node the graph already had (tinygrad rebuilt it at an earlier match) made nothing
          if self._nodes.holds(s.at(m.index), uop): yield self._rebuilt(s, uop, m.index)
          else: yield Event("created", s, m.index, u0)
      present, prev = self._nodes.holds(s.after(), uop), s
      if present:
        if not here and not made and s.matches: yield self._rebuilt(s, uop)
        yield Event("lives", s)
      elif (here or uop in before) and not replaced: yield Event("removed", s)
