"""The rows (dot's ranks) a graph is laid out in, top down, and where a tall graph is cut into columns: tgviz.draw
writes them into its DOT text as each edge's minlen (and each column a cluster). Owns the spacing of boxes and rows; draws
nothing and runs no layout. js/port/ranks.js mirrors it (tests/views/test_js_parity.py holds the DOT text equal).
"""
from __future__ import annotations

import math

NODESEP, RANKSEP = 5.4, 9.0    # points between boxes of a row, and between rows (dot's nodesep 0.075 in and ranksep 0.125 in)
MIN_ROW, MAX_ROW = 850.0, 1400.0  # points: rows wider than the graph's limit between these are spread over several
MAX_STAGGER = 24              # ... over at most this many
ROW_AREA = 1.0                # rows as wide as the square root of this many times the area the boxes take


def rank_rows(ids: list[str], edges: list[tuple[str, str]], widths: dict[str, float], heights: dict[str, float],
              sides: int = 1) -> dict[str, int]:
  """The rank (row, top down) of every layout id, so that no row of boxes is much wider than the graph's limit (the
  side of a square of ROW_AREA times the boxes' area, between MIN_ROW and MAX_ROW, over `sides`: the copies of the layout
  a picture draws side by side, before and after): rows as dot ranks a graph (each node as close
  above its users as it can be: its longest path to a node without users), and a wider row split into several, its
  k-th node in sub-row k mod their number (graphviz's unflatten staggers leaves so). Every edge then gets minlen = the
  rank difference, which makes this ranking dot's own (all edges at their minimum). js/port/ranks.js rankRows mirrors it."""
  nodes = [k for k in ids if ":" not in k]  # (the rest count a node's hidden inputs or users: just above or below it)
  users: dict[str, list[str]] = {k: [] for k in nodes}
  for s, d in edges:
    if ":" not in s and ":" not in d: users[s].append(d)
  depth: dict[str, int] = {}
  for k in reversed(nodes):
    stack = [k]
    while stack:
      n = stack[-1]
      if n in depth: stack.pop(); continue
      todo = [u for u in users[n] if u not in depth and u not in stack]  # (a cycle's back edge is ignored)
      if todo: stack.extend(todo); continue
      depth[n] = 1 + max((depth.get(u, -1) for u in users[n]), default=-1)
      stack.pop()
  for k in ids:
    if ":" in k: depth[k] = depth[k.split(":")[0]] + (1 if k.endswith(":in") else -1)
  rows: dict[int, list[str]] = {}
  for k in ids: rows.setdefault(depth[k], []).append(k)
  limit = min(MAX_ROW, max(MIN_ROW, math.sqrt(ROW_AREA * sum((w + NODESEP) * (heights[k] + RANKSEP) for k, w in widths.items())))) / sides
  rank, top = {}, 0
  for level in sorted(rows, reverse=True):
    row = rows[level]
    n_rows = min(MAX_STAGGER, int(sum(widths[k] + NODESEP for k in row) / limit) + 1)
    for i, k in enumerate(row): rank[k] = top + i % n_rows
    top += n_rows
  return rank


def column_cuts(rank: dict[str, int], heights: dict[str, float], edges: list[tuple[str, str]], cols: int) -> list[int]:
  """The first rank of each column after the first, for a graph wrapped into cols columns: each cut near an even share
  of the height its rows stack to (within a quarter of a share) where the fewest edges cross it. js/port/ranks.js columnCuts
  mirrors it."""
  n = max(rank.values(), default=-1) + 1
  tall = [0.0] * n
  for k, r in rank.items(): tall[r] = max(tall[r], heights[k])
  cross = [0] * n  # edges from above rank r to it or below
  for s, d in edges:
    for r in range(rank[s] + 1, rank[d] + 1): cross[r] += 1
  top, y = [], 0.0  # the y of each rank's top
  for h in tall: top.append(y); y += h + RANKSEP
  total, cuts = y - RANKSEP, list[int]()
  for j in range(1, cols):
    aim, near = j * total / cols, total / cols / 4
    options = [r for r in range(max(cuts, default=0) + 1, n) if abs(top[r] - aim) <= near]
    if options: cuts.append(min(options, key=lambda r: (cross[r], abs(top[r] - aim))))
  return cuts
