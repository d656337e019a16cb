"""Graph -> DOT -> positions (graphviz) -> SVG, with before/after on one layout and changes marked.

The layout engine is graphviz's ``dot``: by default the ``graphviz-pure`` executable from PyPI, or a system ``dot``
when asked for (``TGVIZ_ENGINE=dot`` or :func:`set_engine`). Node boxes are sized here and laid out once on the union
of the before and after graphs, so a node sits in the same place on both sides. Big graphs are shown as a focused
view around what changed, and every layout runs in a child process with a time budget. The rows nodes go in, and
where a graph too tall for a screen is wrapped into columns, are tgviz.ranks'.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
import time
import weakref
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from xml.sax.saxutils import escape, quoteattr

from tgviz.graph import FAMILIES, Graph, Node
from tgviz.ranks import NODESEP, RANKSEP, column_cuts, rank_rows

FONT_SIZE = 10
CHAR_W, LINE_H, PAD = FONT_SIZE * 0.6, FONT_SIZE * 1.1, 3
DEFAULT_MAX_NODES = 300       # above this many nodes the focused view is the default
DEFAULT_TIMEOUT = 10.0        # seconds a layout may take before a smaller view is drawn
FOCUS_HOPS = 3
MAX_FAN_IN = 24               # edges drawn into one node; dot's layout time explodes on fan-ins of hundreds
FAST_ABOVE = 150              # above this many nodes dot runs with cheaper (less tidy) settings
COMPRESS_TO = (13.7, 11.2)    # inches: dot packs a layout of up to FAST_ABOVE nodes this narrow where it can (ratio=compress;
                              # the report's maximised canvas at 11 px labels is some 990x810 points)
MAX_COLUMNS = 3               # a graph of up to FAST_ABOVE nodes taller than COMPRESS_TO is tried wrapped into up to this many columns
COUNT_H = 0.3 * 72            # points: the height of the (round-ended) box that counts a node's hidden inputs or users
MARKS = {"added": "#1a9e3a", "removed": "#d62728", "changed": "#ff8c00"}


class LayoutError(RuntimeError):
  """The layout engine is missing or failed."""


class LayoutCancelled(LayoutError):
  """The layout was cancelled (see :func:`cancel`)."""


# *** engine ***

_engine: list[str] | None = None


def set_engine(name: str | None) -> list[str]:
  """Pick the layout engine: "graphviz-pure" (default, from PyPI), "dot" (a system graphviz), or a path."""
  global _engine
  name = name or os.environ.get("TGVIZ_ENGINE") or "graphviz-pure"
  exe = shutil.which(name) or shutil.which(name, path=os.path.dirname(sys.executable))
  if exe is None:
    raise LayoutError(f"graph layout engine {name!r} not found. Install the embedded one with `pip install graphviz-pure`, "
                      "or Debian's dot with `apt-get install graphviz` and set TGVIZ_ENGINE=dot")
  _engine = [exe, "-Kdot"]
  return _engine


def engine() -> list[str]:
  """The engine command line, resolved once."""
  return _engine if _engine is not None else set_engine(None)


_running: dict[int, subprocess.Popen] = {}  # thread id -> the engine process it waits on
_cancelled: weakref.WeakSet[subprocess.Popen] = weakref.WeakSet()  # engine processes cancel() killed


def run_dot(dot: str, fmt: str = "plain", timeout: float | None = DEFAULT_TIMEOUT) -> str:
  """Run the layout engine on DOT text in a child process; raises TimeoutError past timeout (the process is killed),
  LayoutCancelled when another thread cancelled it, and LayoutError when the engine fails or crashes."""
  me = threading.get_ident()
  with subprocess.Popen([*engine(), f"-T{fmt}"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                        text=True) as proc:
    _running[me] = proc
    try: out, err = proc.communicate(dot, timeout=timeout)
    except subprocess.TimeoutExpired:
      proc.kill()
      raise TimeoutError(f"layout took longer than {timeout:.0f} s") from None
    finally: _running.pop(me, None)
  if proc in _cancelled:
    raise LayoutCancelled("layout cancelled")
  if proc.returncode < 0:
    raise LayoutError(f"the graph layout engine {engine()[0]} crashed (signal {-proc.returncode}). {err.strip()[:300]} "
                      "Try a smaller view, or another engine (TGVIZ_ENGINE=dot with Debian's graphviz).")
  if proc.returncode != 0: raise LayoutError(f"graph layout failed: {err.strip()[:500]}")
  return out


def cancel(thread_id: int) -> None:
  """Stop the layout that thread is waiting on, if any (it raises LayoutCancelled there)."""
  if (proc := _running.get(thread_id)) is not None:
    _cancelled.add(proc)
    proc.kill()


# *** what one picture shows ***

@dataclass
class Scene:
  """The union of a before and an after graph, marked: what one layout draws on both sides."""
  nodes: dict[str, Node]                    # layout id -> node as shown before (after, for added nodes)
  after_label: dict[str, Node]              # layout id -> node as shown after, where it differs (changed nodes)
  edges_before: set[tuple[str, str]]
  edges_after: set[tuple[str, str]]
  on_before: set[str]
  on_after: set[str]
  marks: dict[str, str]                     # layout id -> added / removed / changed
  hidden: dict[str, tuple[int, int]] = field(default_factory=dict)  # layout id -> (hidden inputs, hidden users)
  total: int = 0                            # nodes of the full union, before focusing
  match_nodes: frozenset[str] = frozenset()  # layout ids of a match's own nodes: what it replaced and its replacement

  @property
  def partial(self) -> bool:
    return len(self.nodes) < self.total


def make_scene(before: Graph, after: Graph, added: set[str], removed: set[str], changed: dict[str, str]) -> Scene:
  """changed maps a before key to the after key that replaced it in place: both are drawn in one spot."""
  to_layout = {a: b for b, a in changed.items()}
  nodes = dict(before.nodes)
  nodes.update({to_layout.get(k, k): n for k, n in after.nodes.items() if to_layout.get(k, k) not in nodes})
  marks = dict.fromkeys(removed, "removed") | dict.fromkeys(added, "added") | dict.fromkeys(changed, "changed")
  return Scene(nodes=nodes, after_label={b: after.nodes[a] for b, a in changed.items() if a in after.nodes},
               edges_before=set(before.edges),
               edges_after={(to_layout.get(s, s), to_layout.get(d, d)) for s, d in after.edges},
               on_before=set(before.nodes), on_after={to_layout.get(k, k) for k in after.nodes}, marks=marks,
               total=0)


def focus(scene: Scene, max_nodes: int, hops: int = FOCUS_HOPS, force: bool = False, around: Sequence[str] = ()) -> Scene:
  """Keep at most max_nodes of the neighbourhood (hops up and down) of the nodes `around` (those of them drawn), else of
  what changed, or of the output when nothing did, and count the rest. Scenes within max_nodes are kept whole unless
  force is set."""
  scene.total = scene.total or len(scene.nodes)
  if len(scene.nodes) <= max_nodes and not force: return scene
  edges = scene.edges_before | scene.edges_after
  nbrs: dict[str, set[str]] = {k: set() for k in scene.nodes}
  for s, d in edges: nbrs[s].add(d); nbrs[d].add(s)
  seeds = [k for k in around if k in scene.nodes] or \
    [*(k for k in scene.nodes if k in scene.match_nodes), *(k for k in scene.nodes if k in scene.marks and k not in scene.match_nodes)] or \
    [next(reversed(scene.nodes))]
  keep: dict[str, None] = {}
  todo = deque((s, 0) for s in seeds)
  while todo and len(keep) < max_nodes:
    k, h = todo.popleft()
    if k in keep: continue
    keep[k] = None
    if h < hops: todo.extend((n, h + 1) for n in sorted(nbrs[k]) if n not in keep)
  hidden = {k: [0, 0] for k in keep}
  for s, d in edges:
    if d in keep and s not in keep: hidden[d][0] += 1
    if s in keep and d not in keep: hidden[s][1] += 1
  return Scene(nodes={k: n for k, n in scene.nodes.items() if k in keep},
               after_label={k: n for k, n in scene.after_label.items() if k in keep},
               edges_before={e for e in scene.edges_before if e[0] in keep and e[1] in keep},
               edges_after={e for e in scene.edges_after if e[0] in keep and e[1] in keep},
               on_before=scene.on_before & keep.keys(), on_after=scene.on_after & keep.keys(), marks=scene.marks,
               match_nodes=scene.match_nodes & keep.keys(),
               hidden={k: (i, o) for k, (i, o) in hidden.items() if i or o}, total=scene.total)


def cap_fan_in(scene: Scene, limit: int = MAX_FAN_IN) -> Scene:
  """Draw at most limit edges into any node (on each side); the rest are counted as hidden inputs of that node."""
  def capped(edges: set[tuple[str, str]]) -> tuple[set[tuple[str, str]], dict[str, int]]:
    into: dict[str, list[tuple[str, str]]] = {}
    order = {k: i for i, k in enumerate(scene.nodes)}
    for e in sorted(edges, key=lambda e: (order[e[1]], order[e[0]])): into.setdefault(e[1], []).append(e)
    return {e for es in into.values() for e in es[:limit]}, {d: len(es) - limit for d, es in into.items() if len(es) > limit}
  before, cut_b = capped(scene.edges_before)
  after, cut_a = capped(scene.edges_after)
  if not cut_b and not cut_a: return scene
  hidden = dict(scene.hidden)
  for k in [k for k in scene.nodes if k in cut_b or k in cut_a]:  # in node order: the DOT text is the same every run
    i, o = hidden.get(k, (0, 0))
    hidden[k] = (i + max(cut_b.get(k, 0), cut_a.get(k, 0)), o)
  return Scene(scene.nodes, scene.after_label, before, after, scene.on_before, scene.on_after, scene.marks, hidden,
               scene.total, scene.match_nodes)


# *** layout ***

def _hidden_text(count: int, what: str) -> str:
  """What the box of a node's hidden inputs or users (see Scene.hidden) says."""
  return f"… {count} {what}"


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
      w, h = _box((_hidden_text(count, what),))[0], COUNT_H
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
  were its nodes spread evenly: what picks a tall graph's columns. js/layout.js seen mirrors it."""
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
  it is no more than 4 times wider than tall; and while the kept one is still too tall, into 3. js/layout.js layOut
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


# *** SVG ***

_BAD_XML = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def text(s: str) -> str:
  """Escape text for SVG/HTML content, dropping characters XML cannot hold."""
  return escape(_BAD_XML.sub("", s))


def attr(s: str) -> str:
  """Escape and quote text for an SVG/HTML attribute."""
  return quoteattr(_BAD_XML.sub("", s))


STYLE = "".join(
  [f".tgviz-graph{{font-family:Courier,'Courier New',monospace;font-size:{FONT_SIZE}px}}",
   ".tgviz-graph .node rect{stroke:#333;stroke-width:1}",
   ".tgviz-graph .edge{fill:none;stroke:#666;stroke-width:1}",
   ".tgviz-graph .hidden-count rect{fill:#f4f4f4;stroke:#999;stroke-dasharray:3 2}",
   ".tgviz-graph .title{font-size:13px;font-weight:bold}",
   ".tgviz-graph .banner{fill:#8a5a00}",
   ".tgviz-graph .fold rect{stroke-width:2}"] +
  [f".tgviz-graph .fam-{f} rect{{fill:{c}}}" for f, (c, _) in FAMILIES.items()] +
  [f".tgviz-graph .{m} rect{{stroke:{c};stroke-width:3}}" for m, c in MARKS.items()] +
  [".tgviz-graph .removed rect{stroke-dasharray:5 3}", ".tgviz-graph .match-node rect{stroke-width:5}"])


def _node_svg(side: str, n: Node, mark: str | None, box: tuple[float, float, float, float],
              match: bool = False) -> str:
  """A node's group: data-node its key; a folded node (tgviz.fold) also says the keys it holds, in data-holds, and their
  ops, in data-held-ops."""
  x, y, w, h = box
  cls = f"node fam-{n.family}" + (f" {mark}" if mark else "") + (" fold" if n.holds else "") + (" match-node" if match else "")
  lines = "".join(f'<tspan x="{PAD}" y="{PAD + (i + 0.85) * LINE_H:.1f}">{text(ln)}</tspan>' for i, ln in enumerate(n.label))
  title = "\n".join(n.label) + (f"\n[{mark}]" if mark else "") + (f"\n[folded: {len(n.holds)} UOps]" if n.holds else "")
  holds = f" data-holds={attr(' '.join(n.holds))} data-held-ops={attr(' '.join(n.held_ops))}" if n.holds else ""
  return (f'<g class={attr(cls)} id={attr(f"{side}-{n.key}")} data-node={attr(n.key)} data-op={attr(n.op)}{holds} '
          f'transform="translate({x - w / 2:.1f},{y - h / 2:.1f})"><title>{text(title)}</title>'
          f'<rect width="{w:.1f}" height="{h:.1f}" rx="3"/><text>{lines}</text></g>')


def _path(pts: list[tuple[float, float]]) -> str:
  d = f"M{pts[0][0]:.1f},{pts[0][1]:.1f}"
  if len(pts) >= 4 and (len(pts) - 1) % 3 == 0:
    d += "".join(f" C{pts[i][0]:.1f},{pts[i][1]:.1f} {pts[i + 1][0]:.1f},{pts[i + 1][1]:.1f} {pts[i + 2][0]:.1f},"
                 f"{pts[i + 2][1]:.1f}" for i in range(1, len(pts), 3))
  else: d += "".join(f" L{x:.1f},{y:.1f}" for x, y in pts[1:])
  return d


def side_svg(scene: Scene, lay: Layout, side: str) -> str:
  """The nodes and edges of one side ("before" or "after") of a scene, as an SVG group at the origin."""
  present = scene.on_before if side == "before" else scene.on_after
  edges = scene.edges_before if side == "before" else scene.edges_after
  own = {"before": {"removed", "changed"}, "after": {"added", "changed"}}[side]
  out = ['<g class="edges">']
  for (s, d), pts in lay.edges.items():
    if (s, d) in edges or (s.split(":")[0] in present and d.split(":")[0] in present and (":" in s or ":" in d)):
      out.append(f'<path class="edge" data-from={attr(s)} data-to={attr(d)} d="{_path(pts)}" marker-end="url(#tgviz-arrow)"/>')
  out.append("</g>")
  for k, n in scene.nodes.items():
    if k not in present: continue
    shown = scene.after_label.get(k, n) if side == "after" else n
    mark = scene.marks.get(k)
    out.append(_node_svg(side, shown, mark if mark in own else None, lay.nodes[k], k in scene.match_nodes))
  for k, (i, o) in scene.hidden.items():
    if k not in present: continue
    for suffix, count, what in ((":in", i, "inputs"), (":out", o, "users")):
      if not count: continue
      x, y, w, h = lay.nodes[k + suffix]
      out.append(f'<g class="hidden-count" data-for={attr(k)} transform="translate({x - w / 2:.1f},{y - h / 2:.1f})">'
                 f'<rect width="{w:.1f}" height="{h:.1f}" rx="8"/><text x="{PAD}" y="{h / 2 + 3:.1f}">{_hidden_text(count, what)}'
                 f'</text></g>')
  return "".join(out)


def _legend(x: float, y: float) -> tuple[str, float]:
  items = [(f"fam-{f}", name) for f, (_, name) in FAMILIES.items()] + [(m, m) for m in MARKS]
  out, cx = [f'<g class="legend" transform="translate({x:.1f},{y:.1f})">'], 0.0
  for cls, name in items:
    out.append(f'<g class="node {cls}" transform="translate({cx:.1f},0)"><rect width="12" height="12"/>'
               f'<text x="16" y="10">{text(name)}</text></g>')
    cx += 16 + len(name) * CHAR_W + 14
  out.append("</g>")
  return "".join(out), cx


def scene_svg(scene: Scene, lay: Layout, sides: tuple[str, ...], title: str, message: str | None = None) -> str:
  """A standalone SVG document of the given sides of a scene, side by side on the same coordinates."""
  gap, top = 40.0, 44.0 + (18 if message else 0)
  legend, legend_w = _legend(10, top - 22)
  width = max(len(sides) * lay.width + (len(sides) - 1) * gap + 20, legend_w + 20, len(title) * 8.0)
  height = lay.height + top + 30
  out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="tgviz-graph" width="{width:.0f}" height="{height:.0f}" '
         f'viewBox="0 0 {width:.0f} {height:.0f}">',
         f"<style>{STYLE}</style>",
         '<defs><marker id="tgviz-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" '
         'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#666"/></marker></defs>',
         '<rect width="100%" height="100%" fill="#ffffff"/>',
         f'<text class="title" x="10" y="16">{text(title)}</text>']
  if message: out.append(f'<text class="banner" x="10" y="32">{text(message)}</text>')
  out.append(legend)
  for i, side in enumerate(sides):
    x = 10 + i * (lay.width + gap)
    out.append(f'<g class="side" data-side="{side}" transform="translate({x:.1f},{top + 16:.1f})">'
               f'<text class="title" x="0" y="-4">{side}</text>{side_svg(scene, lay, side)}</g>')
  out.append("</svg>")
  return "".join(out)
