"""How far the report's page (js/replay.js, the Replayer's port on a report's node table) may replay a step itself, and
what it is told to replay it: which ops make a call opaque to a rewrite.

Owns: page_replays and opaque_call_bodies. It replays nothing (the Replayer, in replay, does) and knows no report: it
is given UOps and a node table and says how many matches the page follows.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from tinygrad.uop.ops import REWRITE_STACK_LIMIT, UOp

from tgviz.bridge.replay import _fixpoint_cycle

if TYPE_CHECKING:
  from tgviz.bridge.uops import NodeTable


def opaque_call_bodies() -> list[str]:
  """The ops of a CALL's first source that make it opaque to a rewrite that does not enter calls (see Replayer)."""
  return sorted(o.name for o in UOp._OPAQUE_CALL_BODIES)


def page_replays(pairs: list[tuple[UOp, UOp]], table: NodeTable, rows: list[int], bottom_up: bool) -> tuple[int, bool]:
  """How many of a step's matches js/replay.js, the Replayer's one pass and chain on a report's node table, follows
  exactly as VIZ from the step's input and its matches' (node, replacement) pairs alone: up to the first replacement
  that changes a dtype (nodes rebuilt over it change theirs, which only tinygrad derives); none where those
  replacements hold a fixpoint cycle (where VIZ's replay stops at an error) or the step is big enough for
  REWRITE_STACK_LIMIT (rows: the input's and the replacements' rows in the table). And whether it follows the later
  ones along the chain (a top-down rewrite: each graph made from the one before), given the graphs of the matches
  whose step only tinygrad derives (Replayer.tinygrad_only); else the report stores every later graph. The page
  refuses, with a message, what only the whole graph shows: a cyclic dependency, an opaque call body that holds a
  replaced node."""
  # the table's size bounds the step's, and mostly settles it; else count
  if 8 * len(table.rows) > REWRITE_STACK_LIMIT.value and 8 * table.reach(rows) > REWRITE_STACK_LIMIT.value: return 0, False
  n = next((i for i, (u0, u1) in enumerate(pairs) if u0.dtype is not u1.dtype), len(pairs))
  values: dict[UOp, list[UOp]] = {}
  for u0, u1 in pairs[:n]: values.setdefault(u0, []).append(u1)
  return (0, False) if _fixpoint_cycle(values) else (n, not bottom_up)
