"""Walking UOp graphs.

Owns: a graph's nodes (toposort; GraphNodes keeps them for graphs asked about again), a node's sources, and whether one
node reaches another. Must not: label, record or change anything; it only reads UOps and knows no trace or step.
"""
from __future__ import annotations

import collections
from collections.abc import Container

from tinygrad.uop import ops
from tinygrad.uop.ops import Ops, UOp


def toposort(u: UOp) -> list[UOp]:
  return list(u.toposort())


class GraphNodes:
  """The nodes of the graphs asked about (graph -> its nodes), kept up to BUDGET nodes in all, the least recently asked
  dropped first, and none of a graph that reaches a live device buffer: a node's history and lineage ask whether each
  graph of a group holds it, and a node panel, or the next node's history, asks the same of the same graphs (the
  lineage of each of the tutorial's nodes: 130 -> 92 s)."""

  BUDGET = 400_000                          # some 20 MB of dict entries

  def __init__(self) -> None:
    self._nodes: collections.OrderedDict[UOp, dict[UOp, None]] = collections.OrderedDict()
    self._size = 0

  def of(self, graph: UOp) -> dict[UOp, None]:
    """graph's nodes (tinygrad's toposort), to look up in; not to be changed."""
    if (nodes := self._nodes.get(graph)) is not None:
      self._nodes.move_to_end(graph)
      return nodes
    nodes = graph.toposort()
    # not kept while it reaches a device buffer (tinygrad maps BUFFER UOps to Buffers weakly: kept, a schedule's graph
    # would keep the tensor's memory after the user let go of it)
    if any(u.op is Ops.BUFFER and u in ops.buffers for u in nodes): return nodes
    self._nodes[graph] = nodes
    self._size += len(nodes)
    while self._size > self.BUDGET and len(self._nodes) > 1: self._size -= len(self._nodes.popitem(last=False)[1])
    return nodes

  def holds(self, graph: UOp, u: UOp) -> bool:
    return u in self.of(graph)


def reaches(root: UOp, target: UOp, known: Container[UOp]) -> bool:
  """Whether target is in root's graph, looking only below nodes not in known (a graph that does not hold target: what
  is in it cannot lead there)."""
  stack, seen = [root], set()
  while stack:
    if (u := stack.pop()) is target: return True
    if u in seen or u in known: continue
    seen.add(u)
    stack.extend(u.src)
  return False


def sources(u: UOp) -> tuple[UOp, ...]:
  return u.src
