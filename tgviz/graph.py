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


@dataclass(frozen=True)
class Node:
  """One drawn UOp. key is stable across runs for the same UOp; label lines are plain text (escaped when drawn)."""
  key: str
  op: str
  family: str
  label: tuple[str, ...]


@dataclass(frozen=True)
class Graph:
  """A UOp graph as drawn: nodes in topological order (sources first), edges from source to user."""
  nodes: dict[str, Node]
  edges: tuple[tuple[str, str], ...]
  root: str
