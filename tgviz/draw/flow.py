"""Pictures of flow graphs read left to right (or top to bottom): boxes of label lines, labelled arrows between them,
optional groups drawn as frames (clusters), laid out by graphviz's dot (``rankdir=LR``, or ``TB``) and drawn as SVG.

Owns the flow picture only (what a box or arrow stands for is the caller's: tgviz.views.programmap draws a program's
kernels and buffers with it). The SVG follows the step pictures' structure (``g.side`` holding ``g.node`` boxes, each
with ``data-node``), so the frontend's pan, zoom and overview work on it alike; every text is escaped here.
"""
from __future__ import annotations

import itertools
import shlex
import time
from collections.abc import Sequence
from dataclasses import dataclass

from tgviz.draw.dot import CHAR_W, FONT_SIZE, LINE_H, PAD
from tgviz.draw.engine import DEFAULT_TIMEOUT, run_dot
from tgviz.draw.svg import attr, text

FLOW_STYLE = "".join([
  f".tgviz-flow{{font-family:Courier,'Courier New',monospace;font-size:{FONT_SIZE}px}}",
  ".tgviz-flow .node rect{fill:#7df4ff;stroke:#333;stroke-width:1}",
  ".tgviz-flow .edge{fill:none;stroke:#666;stroke-width:1.2}",
  ".tgviz-flow .hit{fill:none;stroke:transparent;stroke-width:10;pointer-events:stroke}",
  ".tgviz-flow .edge-label{fill:#333}",
  ".tgviz-flow .arrow.far .edge{stroke-opacity:.45;stroke-dasharray:6 3}",
  ".tgviz-flow .frame{fill:none;stroke:#aaa;stroke-dasharray:4 3}",
  ".tgviz-flow .frame-label{fill:#555}",
  ".tgviz-flow .title{font-size:13px;font-weight:bold}"])


@dataclass(frozen=True)
class Box:
  """A box of the picture: its key (``data-node``), label lines (plain text), CSS classes, hover text and the frame
  (group) it is drawn in, if any."""
  key: str
  label: tuple[str, ...]
  cls: str = ""
  title: str = ""
  group: int | None = None


@dataclass(frozen=True)
class Arrow:
  """An arrow from one box to another, its label (one line, drawn where dot places it), CSS classes, hover text and a
  key the SVG carries (``data-key``)."""
  src: str
  dst: str
  label: str = ""
  cls: str = ""
  title: str = ""
  key: str = ""


Placed = dict[str, tuple[float, float, float, float]]                   # boxes by key: centre x, y, width, height
Drawn = list[tuple[list[tuple[float, float]], tuple[float, float] | None]]  # arrows: spline points, label point


@dataclass
class FlowLayout:
  """Where dot put a flow picture (points, y down): each box's centre and size, each arrow's spline (cubic Bézier
  points) and label point, each frame's boxes (one, or one per band it is cut into: see layout_flow's wrap)."""
  width: float
  height: float
  boxes: Placed
  arrows: Drawn
  frames: dict[int, list[tuple[float, float, float, float]]]
  seconds: float
  far: frozenset[int] = frozenset()  # the arrows drawn from one band to another (by index), drawn fainter


def box_size(label: Sequence[str]) -> tuple[float, float]:
  """A box's size (points) for its label lines, as the step pictures size theirs."""
  return max((len(ln) for ln in label), default=1) * CHAR_W + 2 * PAD, max(len(label), 1) * LINE_H + 2 * PAD


FAST_ABOVE = 80  # boxes: past this many, dot runs with cheap settings, straight arrows and no labels (their text on hover;
                 # dot spends most of its time on labels and splines: the GPT step's 368 kernels took over a minute with them,
                 # 0.7 s without)


WRAP_PAST = 4.0  # a left-to-right picture is cut into bands (layout_flow's wrap) only past this many bands' width: the attention
                 # block's forward map (3,250 pt at 850) reads as before, panned across or top to bottom; its backward's (4,500) is cut


def flow_dot(boxes: Sequence[Box], arrows: Sequence[Arrow], frames: dict[int, str] | None = None, down: bool = False) -> str:
  """The DOT text of a flow picture: left to right (down: top to bottom), boxes fixed to their labels' size, arrows
  labelled, groups framed; past FAST_ABOVE boxes dot's cheaper settings, straight lines and no labels."""
  name = {b.key: f"n{i}" for i, b in enumerate(boxes)}
  fast = len(boxes) > FAST_ABOVE
  cheap = " mclimit=0.1 nslimit=1 nslimit1=1 searchsize=5 splines=line" if fast else ""
  out = ["digraph G {", f"graph [rankdir={'TB' if down else 'LR'} nodesep=0.12 ranksep=0.35 newrank=true{cheap}];",
         f'node [shape=box fixedsize=true label=""]; edge [fontname=Courier fontsize={FONT_SIZE}];']
  by_group: dict[int | None, list[Box]] = {}
  for b in boxes: by_group.setdefault(b.group, []).append(b)
  for g, members in by_group.items():
    lines = [f"{name[b.key]} [width={box_size(b.label)[0] / 72:.3f} height={box_size(b.label)[1] / 72:.3f}];" for b in members]
    if g is None or frames is None or g not in frames: out += lines
    else: out += [f'subgraph cluster{g} {{ label="" margin=10;', *lines, "}"]
  for a in arrows:
    if a.src in name and a.dst in name:
      out.append(f"{name[a.src]} -> {name[a.dst]}" + (f" [label={_quote(a.label)}];" if a.label and not fast else ";"))
  out.append("}")
  return "\n".join(out)


def _quote(s: str) -> str:
  return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def layout_flow(boxes: Sequence[Box], arrows: Sequence[Arrow], frames: dict[int, str] | None = None,
                timeout: float | None = DEFAULT_TIMEOUT, down: bool = False, wrap: float | None = None) -> FlowLayout:
  """Lay a flow picture out with dot (see flow_dot); arrows between boxes not drawn are left out (their entries None).
  wrap: a left-to-right picture more than WRAP_PAST times that wide (points: a long chain of kernels) is cut between its columns
  into bands about that wide, stacked top to bottom as lines of text are (see _wrap)."""
  st = time.perf_counter()
  plain = run_dot(flow_dot(boxes, arrows, frames, down), "plain", timeout)
  by_name = {f"n{i}": b.key for i, b in enumerate(boxes)}
  width = height = 0.0
  placed: dict[str, tuple[float, float, float, float]] = {}
  splines: dict[tuple[str, str], list[tuple[list[tuple[float, float]], tuple[float, float] | None]]] = {}
  for line in plain.splitlines():
    parts = shlex.split(line) if '"' in line else line.split()
    if not parts: continue
    if parts[0] == "graph": width, height = float(parts[2]) * 72, float(parts[3]) * 72
    elif parts[0] == "node" and parts[1] in by_name:
      placed[by_name[parts[1]]] = (float(parts[2]) * 72, height - float(parts[3]) * 72, float(parts[4]) * 72, float(parts[5]) * 72)
    elif parts[0] == "edge" and parts[1] in by_name and parts[2] in by_name:
      n = int(parts[3])
      pts = [(float(parts[4 + 2 * i]) * 72, height - float(parts[5 + 2 * i]) * 72) for i in range(n)]
      rest = parts[4 + 2 * n:]
      at = (float(rest[1]) * 72, height - float(rest[2]) * 72) if len(rest) >= 5 else None  # label x y style color
      splines.setdefault((by_name[parts[1]], by_name[parts[2]]), []).append((pts, at))
  drawn = []
  for a in arrows:  # dot lists an edge's splines in the order of the DOT text: the same pair's in turn
    got = splines.get((a.src, a.dst))
    drawn.append(got.pop(0) if got else ([], None))
  band: dict[str, int] = {}
  far: frozenset[int] = frozenset()
  if wrap is not None and not down and width > WRAP_PAST * wrap:
    width, height, placed, drawn, band, far = _wrap(placed, drawn, arrows, _spans(boxes, placed, frames), wrap)
  frames_at: dict[int, list[tuple[float, float, float, float]]] = {}
  for (g, _), r in sorted(_frame_boxes(boxes, placed, frames, band).items()): frames_at.setdefault(g, []).append(r)
  return FlowLayout(width, height, placed, drawn, frames_at, time.perf_counter() - st, far)


FRAME_ABOVE, FRAME_BELOW = 18.0, 8.0  # points a frame's rectangle and label take above and below its boxes (flow_svg)
LANE = 8.0                            # points between two arrows that go from one band to another, in their lane


def _frame_boxes(boxes: Sequence[Box], placed: Placed, frames: dict[int, str] | None,
                 band: dict[str, int]) -> dict[tuple[int, int], tuple[float, float, float, float]]:
  """The box round each frame's boxes in each band it has boxes in (band: each box's; none there: band 0), by (frame,
  band): x0, y0, x1, y1."""
  out: dict[tuple[int, int], tuple[float, float, float, float]] = {}
  for b in boxes:
    if b.group is None or frames is None or b.group not in frames or b.key not in placed: continue
    x, y, w, h = placed[b.key]
    x0, y0, x1, y1 = out.get(k := (b.group, band.get(b.key, 0)), (x - w / 2, y - h / 2, x + w / 2, y + h / 2))
    out[k] = (min(x0, x - w / 2), min(y0, y - h / 2), max(x1, x + w / 2), max(y1, y + h / 2))
  return out


def _spans(boxes: Sequence[Box], placed: Placed, frames: dict[int, str] | None) -> dict[int, tuple[float, float]]:
  """Each frame's span across the picture (x from, to): a band is cut outside frames where it can be."""
  return {g: (x0, x1) for (g, _), (x0, _, x1, _) in _frame_boxes(boxes, placed, frames, {}).items()}


def _cuts(placed: Placed, spans: dict[int, tuple[float, float]], wrap: float) -> list[float]:
  """Where a wide left-to-right picture is cut into bands: between columns of boxes (x where no box is), each band as
  wide as wrap or less where a cut allows (outside frames first, then the widest), else the narrowest wider one."""
  edges = sorted((x - w / 2, x + w / 2) for x, _, w, _ in placed.values())
  gaps, reach = [], edges[0][1]
  for lo, hi in edges[1:]:
    if lo > reach: gaps.append((reach + lo) / 2)
    reach = max(reach, hi)
  cuts, start, end = [], edges[0][0], reach
  while end - start > wrap:
    inside = {x: any(lo < x < hi for lo, hi in spans.values()) for x in gaps if x > start + 1}
    fits = [x for x in inside if x <= start + wrap and x >= start + wrap / 2]
    if fits: at = min(fits, key=lambda x: (inside[x], -x))
    elif (over := [x for x in inside if x > start + wrap]): at = min(over)
    elif inside: at = max(inside)
    else: break
    cuts.append(at)
    start = at
  return cuts


def _wrap(placed: Placed, drawn: Drawn, arrows: Sequence[Arrow], spans: dict[int, tuple[float, float]],
          wrap: float) -> tuple[float, float, Placed, Drawn, dict[str, int], frozenset[int]]:
  """A left-to-right picture cut into bands (_cuts), each moved to the left and under the one before. An arrow within a
  band moves with it; one from a band to another is drawn anew, unlabelled: from its tail right into the gap beside its
  box's column, along a lane of its own above the band it goes to, and into its head from the left.
  Returns the picture's new size, boxes and arrows, each box's band, and the arrows drawn anew."""
  cuts = _cuts(placed, spans, wrap)
  band = {k: sum(x >= c for c in cuts) for k, (x, *_) in placed.items()}
  into: dict[int, list[int]] = {}  # the arrows into each band from another, in order
  for i, (a, (pts, _)) in enumerate(zip(arrows, drawn, strict=True)):
    if pts and band[a.src] != band[a.dst]: into.setdefault(band[a.dst], []).append(i)
  lane = {i: (j, n) for j, ids in into.items() for n, i in enumerate(ids)}
  # each band's height: its boxes with their frames' room, its own arrows and labels
  ys: dict[int, list[float]] = {}
  for k, (_, y, _, h) in placed.items(): ys.setdefault(band[k], []).extend((y - h / 2 - FRAME_ABOVE, y + h / 2 + FRAME_BELOW))
  for i, (a, (pts, at)) in enumerate(zip(arrows, drawn, strict=True)):
    if pts and i not in lane: ys[band[a.src]].extend([y for _, y in pts] + ([at[1] - LINE_H, at[1] + LINE_H] if at else []))
  margin = 12 + 2 * max(map(len, into.values()), default=0)  # room left of a band's first column for the lanes' ends
  starts = [min(x - w / 2 for x, _, w, _ in placed.values()), *cuts]
  move: list[tuple[float, float]] = []
  top = 0.0
  for j, start in enumerate(starts):
    top += LANE * (len(into.get(j, [])) + (j > 0))  # the lanes of the arrows into band j, above it
    lo, hi = min(ys.get(j, [0.0])), max(ys.get(j, [0.0]))
    move.append((margin - start, top - lo))
    top += hi - lo

  def shift(p: tuple[float, float], j: int) -> tuple[float, float]: return p[0] + move[j][0], p[1] + move[j][1]

  moved = {k: (*shift((x, y), band[k]), w, h) for k, (x, y, w, h) in placed.items()}
  out: Drawn = []
  for i, (a, (pts, at)) in enumerate(zip(arrows, drawn, strict=True)):
    if not pts: out.append((pts, at))
    elif i not in lane: out.append(([shift(p, band[a.src]) for p in pts], shift(at, band[a.src]) if at else None))
    else:
      j, n = lane[i]
      p0, p1, (sx, _, sw, _), (dx, _, dw, _) = shift(pts[0], band[a.src]), shift(pts[-1], j), moved[a.src], moved[a.dst]
      y = move[j][1] + min(ys[j]) - LANE * (len(into[j]) - n) + LANE / 2
      right, left = sx + sw / 2 + 8 + 2 * n, dx - dw / 2 - 8 - 2 * n
      # (no label: many cross on a graph like a chain of randn kernels, and their labels, often the same, crowded the
      # lanes; the arrow's hover and click say what it carries)
      out.append((_polyline([p0, (right, p0[1]), (right, y), (left, y), (left, p1[1]), p1]), None))
  return (*_bounds(moved, out), moved, out, band, frozenset(lane))


def _polyline(pts: list[tuple[float, float]]) -> list[tuple[float, float]]:
  """Straight segments through pts, as cubic Bézier points (each segment's control points at its ends)."""
  out = [pts[0]]
  for a, b in itertools.pairwise(pts): out += [a, b, b]
  return out


def _bounds(placed: Placed, drawn: Drawn) -> tuple[float, float]:
  """The size of a picture: its boxes (with their frames' room) and arrows, from the origin."""
  xs = [x + w / 2 for x, _, w, _ in placed.values()] + [x for pts, _ in drawn for x, _ in pts]
  ys = [y + h / 2 + FRAME_BELOW for _, y, _, h in placed.values()] + [y for pts, _ in drawn for _, y in pts]
  return max(xs, default=0.0) + 4, max(ys, default=0.0) + 4


def _path(pts: list[tuple[float, float]]) -> str:
  d = f"M{pts[0][0]:.1f},{pts[0][1]:.1f}"
  if len(pts) >= 4 and (len(pts) - 1) % 3 == 0:
    d += "".join(f" C{pts[i][0]:.1f},{pts[i][1]:.1f} {pts[i + 1][0]:.1f},{pts[i + 1][1]:.1f} {pts[i + 2][0]:.1f},"
                 f"{pts[i + 2][1]:.1f}" for i in range(1, len(pts), 3))
  else: d += "".join(f" L{x:.1f},{y:.1f}" for x, y in pts[1:])
  return d


def flow_svg(boxes: Sequence[Box], arrows: Sequence[Arrow], lay: FlowLayout, title: str = "", frames: dict[int, str] | None = None,
             style: str = "") -> str:
  """A standalone SVG document of a laid-out flow picture (title above; style: CSS added to FLOW_STYLE)."""
  top = 30.0 if title else 8.0
  width, height = lay.width + 20, lay.height + top + 16
  out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="tgviz-graph tgviz-flow" width="{width:.0f}" height="{height:.0f}" '
         f'viewBox="0 0 {width:.0f} {height:.0f}"><style>{FLOW_STYLE}{style}</style>',
         '<defs><marker id="tgviz-flow-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" '
         'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#666"/></marker></defs>']
  if title: out.append(f'<text class="title" x="10" y="18">{text(title)}</text>')
  out.append(f'<g class="side" data-side="flow" transform="translate(10,{top:.1f})">')
  for g, pieces in lay.frames.items():
    out.append(f'<g class="frame-group" data-frame="{g}">' + "".join(
               f'<rect class="frame" x="{x0 - 6:.1f}" y="{y0 - 16:.1f}" width="{x1 - x0 + 12:.1f}" height="{y1 - y0 + 22:.1f}" rx="4"/>'
               f'<text class="frame-label" x="{x0 - 2:.1f}" y="{y0 - 5:.1f}">{text((frames or {}).get(g, "") + (" (continued)" if i else ""))}</text>'
               for i, (x0, y0, x1, y1) in enumerate(pieces)) + "</g>")
  out.append('<g class="edges">')
  for i, (a, (pts, at)) in enumerate(zip(arrows, lay.arrows, strict=True)):
    if not pts: continue
    key = f" data-key={attr(a.key)}" if a.key else ""
    out.append(f'<g class={attr("arrow " + a.cls + (" far" if i in lay.far else ""))} data-from={attr(a.src)} data-to={attr(a.dst)}{key}>'
               f'<title>{text(a.title or a.label)}</title><path class="edge" d="{_path(pts)}" marker-end="url(#tgviz-flow-arrow)"/>'
               f'<path class="hit" d="{_path(pts)}"/>'
               + (f'<text class="edge-label" x="{at[0]:.1f}" y="{at[1] + 3:.1f}" text-anchor="middle">{text(a.label)}</text>'
                  if at is not None and a.label else "") + "</g>")
  out.append("</g>")
  for b in boxes:
    if b.key not in lay.boxes: continue
    x, y, w, h = lay.boxes[b.key]
    lines = "".join(f'<tspan x="{PAD}" y="{PAD + (i + 0.85) * LINE_H:.1f}">{text(ln)}</tspan>' for i, ln in enumerate(b.label))
    out.append(f'<g class={attr("node " + b.cls)} data-node={attr(b.key)} transform="translate({x - w / 2:.1f},{y - h / 2:.1f})">'
               f'<title>{text(b.title or chr(10).join(b.label))}</title><rect width="{w:.1f}" height="{h:.1f}" rx="3"/>'
               f'<text>{lines}</text></g>')
  out.append("</g></svg>")
  return "".join(out)
