"""Plain graph data, independent of tinygrad: what the layout draws."""
from __future__ import annotations

from dataclasses import dataclass

# op families, their fill colours and legend names (tinygrad VIZ's palette where it has one)
FAMILIES: dict[str, tuple[str, str]] = {
  "load": ("#ffc0c0", "load / index"),
  "store": ("#87ceeb", "store"),
  "alu": ("#ffffc0", "ALU"),
  "reduce": ("#ff8a8a", "reduce"),
  "range": ("#c8a0e0", "range / end"),
  "movement": ("#d8f9e4", "movement"),
  "buffer": ("#b0bdff", "buffer / param"),
  "kernel": ("#7df4ff", "kernel / call / program"),
  "const": ("#e0e0e0", "const"),
  "error": ("#ff5050", "rewrite error"),
  "other": ("#ffffff", "other"),
}


Input = str | tuple[str, str | None, str]
"""A node's source: a drawn node's key, or a constant folded into its label as (dtype, text as tinygrad renders it,
op): a CONST, or a vector of constants (a STACK of CONSTs, a RESHAPE or EXPAND of a constant by a constant shape:
``{0,1,2,3}.reshape((4,1))``); text None where it is another form."""


@dataclass(frozen=True)
class Node:
  """One drawn UOp. key is stable across runs for the same UOp; label lines are plain text (escaped when drawn).

  What folding (tgviz.draw.fold, a view) reads: dtype (tinygrad's, without "dtypes."), intlike (a scalar integer or bool:
  what index arithmetic computes), text (how tinygrad renders the node alone: a constant, RANGE, SPECIAL, a variable;
  None where it needs its sources), inputs (every source in order), shape (op, dtype and arg with numbers blanked: what
  lanes share). holds: a folded node's members (their keys, its own first) and held_ops their ops; () for a node drawn
  as itself."""
  key: str
  op: str
  family: str
  label: tuple[str, ...]
  dtype: str = ""
  intlike: bool = False
  text: str | None = None
  inputs: tuple[Input, ...] = ()
  shape: str = ""
  holds: tuple[str, ...] = ()
  held_ops: tuple[str, ...] = ()


@dataclass(frozen=True)
class Graph:
  """A UOp graph as drawn: nodes in topological order (sources first), edges from source to user."""
  nodes: dict[str, Node]
  edges: tuple[tuple[str, str], ...]
  root: str
