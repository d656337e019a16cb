"""A scene laid out: box sizes, the DOT text (rows from :mod:`tgviz.draw.ranks`, a tall graph wrapped into columns),
dot's plain output read back into positions.

Before and after are laid out once, on their union (a Scene), so a node sits in the same place on both sides. Owns the
layout only: the engine is :mod:`tgviz.draw.engine`'s, the SVG :mod:`tgviz.draw.svg`'s.
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from tgviz.draw.engine import DEFAULT_TIMEOUT, run_dot
from tgviz.draw.ranks import NODESEP, RANKSEP, column_cuts, rank_rows
from tgviz.draw.scene import Scene, hidden_text

FONT_SIZE = 10
CHAR_W, LINE_H, PAD = FONT_SIZE * 0.6, FONT_SIZE * 1.1, 3
FAST_ABOVE = 150              # above this many nodes dot runs with cheaper (less tidy) settings
COMPRESS_TO = (13.7, 11.2)    # inches: dot packs a layout of up to FAST_ABOVE nodes this narrow where it can (ratio=compress;
                              # the report's maximised canvas at 11 px labels is some 990x810 points)
MAX_COLUMNS = 3               # a graph of up to FAST_ABOVE nodes taller than COMPRESS_TO is tried wrapped into up to this many columns
COUNT_H = 0.3 * 72            # points: the height of the (round-ended) box that counts a node's hidden inputs or users


def _box(*labels: Sequence[str]) -> tuple[float, float]:
  """The box (points) that holds each of some labels (a changed node's before and after label lines, in one spot)."""
  width = max(len(ln) for label in labels for ln in label) * CHAR_W + 2 * PAD
  return width, max(len(label) for label in labels) * LINE_H + 2 * PAD


@dataclass
class Layout:
  """Positions (points, y down) of a scene's nodes and edge splines, as dot placed them."""
  width: float
  height: float
  nodes: dict[str, tuple[float, float, float, float]]   # id -> centre x, centre y, width, height
  edges: dict[tuple[str, str], list[tuple[float, float]]]
  seconds: float
  columns: int = 1                                       # the columns a tall graph was wrapped into, side by side


def _dot(scene: Scene, fast: bool, cols: int = 1, sides: int = 1) -> tuple[str, list[str]]:
  # the after side's own nodes first, the before side's own last: dot draws nodes in about this order left to right, so
  # what a step added lies at the left of its (right-hand) after side and what it removed at the right of its before
  # side, next to each other across the gap between the sides (in one window)
  where = {k: (k in scene.on_before) - (k in scene.on_after) for k in scene.nodes}
  ids = sorted(scene.nodes, key=where.__getitem__) + [f"{k}:in" for k, (i, _) in scene.hidden.items() if i] + \
    [f"{k}:out" for k, (_, o) in scene.hidden.items() if o]
  name = {k: f"n{i}" for i, k in enumerate(ids)}
  opts = f'nodesep={NODESEP / 72:g} ranksep={RANKSEP / 72:g}' + \
    (' mclimit=0.1 nslimit=1 nslimit1=1 searchsize=5 splines=line' if fast else f' ratio=compress size="{_side_w(sides):g},{COMPRESS_TO[1]:g}"')
  out = [f"digraph G {{ graph [{opts}]; node [shape=box fixedsize=true label=\"\"];"]
  widths, heights = dict.fromkeys(ids, 0.0), dict.fromkeys(ids, 0.0)  # (in the order of ids: ranks.rank_rows sums them so)
  for k in ids[:len(scene.nodes)]:
    w, h = _box(scene.nodes[k].label, *((a.label,) if (a := scene.after_label.get(k)) else ()))
    widths[k], heights[k] = w, h
    out.append(f"{name[k]} [width={w / 72:.3f} height={h / 72:.3f}];")
  edges = []
  for k, (i, o) in scene.hidden.items():
    for suffix, count, what in ((":in", i, "inputs"), (":out", o, "users")):
      if not count: continue
      w, h = _box((hidden_text(count, what),))[0], COUNT_H
      widths[k + suffix], heights[k + suffix] = w, h
      out.append(f"{name[k + suffix]} [width={w / 72:.3f} height={h / 72:.3f}];")
      edges.append((k + suffix, k) if suffix == ":in" else (k, k + suffix))
  order = {k: i for i, k in enumerate(ids)}
  edges += sorted(scene.edges_before | scene.edges_after, key=lambda e: (order[e[0]], order[e[1]]))
  rank = rank_rows(ids, edges, widths, heights, sides)
  # a tall graph wrapped into columns side by side: each a cluster, its ranks as above less its first's (the edges
  # between columns constrain nothing)
  cuts = column_cuts(rank, heights, edges, cols) if cols > 1 else []
  column = {k: sum(rank[k] >= c for c in cuts) for k in ids}
  if cuts:  # each column's top held in one row by an invisible anchor, the columns in order left to right
    out.append(f"graph [newrank=true]; node [width=0.01 height=0.01]; {{ rank=same; {' '.join(f'a{c}' for c in range(len(cuts) + 1))} }}")
    for c in range(len(cuts) + 1):
      members = [k for k in ids if column[k] == c]
      out.append(f"subgraph cluster{c} {{ a{c} {' '.join(name[k] for k in members)} }}")
      out.append(f"a{c} -> {name[min(members, key=lambda k: rank[k])]} [style=invis weight=0];")
    out.append(" -> ".join(f"a{c}" for c in range(len(cuts) + 1)) + " [style=invis];")
  for s, d in edges:
    m = rank[d] - rank[s]
    out.append(f"{name[s]} -> {name[d]}" + (" [constraint=false];" if column[s] != column[d] else f" [minlen={m}];" if m > 1 else ";"))
  out.append("}")
  return "\n".join(out), ids


def _side_w(sides: int) -> float:
  """The width (inches) one of `sides` copies of a layout side by side gets of the maximised canvas (COMPRESS_TO)."""
  return (COMPRESS_TO[0] * 72 - (sides - 1) * 40) / sides / 72


def _seen(lay: Layout, sides: int) -> float:
  """The share of a picture of sides copies of the layout that the maximised canvas shows at 11 px labels (COMPRESS_TO),
  were its nodes spread evenly: what picks a tall graph's columns. js/port/layout.js seen mirrors it."""
  return min(1.0, COMPRESS_TO[0] * 72 / (sides * lay.width + (sides - 1) * 40)) * min(1.0, COMPRESS_TO[1] * 72 / lay.height)


def _laid(scene: Scene, fast: bool, cols: int, timeout: float | None, sides: int = 1) -> Layout:
  st = time.perf_counter()
  text, ids = _dot(scene, fast, cols, sides)
  plain = run_dot(text, "plain", timeout)
  by_name = {f"n{i}": k for i, k in enumerate(ids)}
  height, width, nodes, edges = 0.0, 0.0, {}, {}
  for line in plain.splitlines():
    parts = line.split()  # node names are n<i> and labels empty, so plain output splits on whitespace
    if not parts: continue
    if parts[0] == "graph": width, height = float(parts[2]) * 72, float(parts[3]) * 72
    elif parts[0] == "node" and parts[1] in by_name:  # (not a wrapped graph's column anchors, a<i>)
      nodes[by_name[parts[1]]] = (float(parts[2]) * 72, height - float(parts[3]) * 72, float(parts[4]) * 72,
                                  float(parts[5]) * 72)
    elif parts[0] == "edge" and parts[1] in by_name:
      n = int(parts[3])
      pts = [(float(parts[4 + 2 * i]) * 72, height - float(parts[5 + 2 * i]) * 72) for i in range(n)]
      edges[(by_name[parts[1]], by_name[parts[2]])] = pts
  return Layout(width, height, nodes, edges, time.perf_counter() - st, cols)


def layout(scene: Scene, timeout: float | None = DEFAULT_TIMEOUT, sides: int = 1) -> Layout:
  """Lay the scene out with dot, for a picture of `sides` copies of it side by side (its rows and, for up to
  FAST_ABOVE nodes, its packed width a share of the canvas's each); big scenes get dot's cheaper settings. A graph of
  up to FAST_ABOVE nodes taller than the maximised canvas at 11 px (COMPRESS_TO), but no more than MAX_COLUMNS times,
  is laid out again wrapped into 2 columns side by side, kept where the canvas shows more of the picture (_seen) and
  it is no more than 4 times wider than tall; and while the kept one is still too tall, into 3. js/port/layout.js layOut
  mirrors it."""
  fast = len(scene.nodes) > FAST_ABOVE
  best = _laid(scene, fast, 1, timeout, sides)
  wraps = best.height <= MAX_COLUMNS * COMPRESS_TO[1] * 72  # (taller, no columns fit it, and each try is a layout more)
  for cols in range(2, MAX_COLUMNS + 1):
    if fast or not wraps or best.height <= COMPRESS_TO[1] * 72: break
    lay = _laid(scene, fast, cols, timeout, sides)
    if lay.width > 4 * lay.height or _seen(lay, sides) <= _seen(best, sides): break  # more columns: wider still
    best = lay
  return best


