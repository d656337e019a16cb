"""Pictures of flow graphs read left to right (or top to bottom): boxes of label lines, labelled arrows between them,
optional groups drawn as frames (clusters), laid out by graphviz's dot (``rankdir=LR``, or ``TB``) and drawn as SVG.

Owns the flow picture only (what a box or arrow stands for is the caller's: tgviz.views.programmap draws a program's
kernels and buffers with it). The SVG follows the step pictures' structure (``g.side`` holding ``g.node`` boxes, each
with ``data-node``), so the frontend's pan, zoom and overview work on it alike; every text is escaped here.
"""
from __future__ import annotations

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


@dataclass
class FlowLayout:
  """Where dot put a flow picture (points, y down): each box's centre and size, each arrow's spline and label point,
  each frame's box."""
  width: float
  height: float
  boxes: dict[str, tuple[float, float, float, float]]
  arrows: list[tuple[list[tuple[float, float]], tuple[float, float] | None]]
  frames: dict[int, tuple[float, float, float, float]]
  seconds: float


def box_size(label: Sequence[str]) -> tuple[float, float]:
  """A box's size (points) for its label lines, as the step pictures size theirs."""
  return max((len(ln) for ln in label), default=1) * CHAR_W + 2 * PAD, max(len(label), 1) * LINE_H + 2 * PAD


FAST_ABOVE = 80  # boxes: past this many, dot runs with cheap settings, straight arrows and no labels (their text on hover;
                 # dot spends most of its time on labels and splines: the GPT step's 368 kernels took over a minute with them,
                 # 0.7 s without)


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
                timeout: float | None = DEFAULT_TIMEOUT, down: bool = False) -> FlowLayout:
  """Lay a flow picture out with dot (see flow_dot); arrows between boxes not drawn are left out (their entries None)."""
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
  frames_at: dict[int, tuple[float, float, float, float]] = {}
  for b in boxes:
    if b.group is None or frames is None or b.group not in frames or b.key not in placed: continue
    x, y, w, h = placed[b.key]
    x0, y0, x1, y1 = frames_at.get(b.group, (x - w / 2, y - h / 2, x + w / 2, y + h / 2))
    frames_at[b.group] = (min(x0, x - w / 2), min(y0, y - h / 2), max(x1, x + w / 2), max(y1, y + h / 2))
  return FlowLayout(width, height, placed, drawn, frames_at, time.perf_counter() - st)


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
  for g, (x0, y0, x1, y1) in lay.frames.items():
    out.append(f'<g class="frame-group" data-frame="{g}"><rect class="frame" x="{x0 - 6:.1f}" y="{y0 - 16:.1f}" width="{x1 - x0 + 12:.1f}" '
               f'height="{y1 - y0 + 22:.1f}" rx="4"/><text class="frame-label" x="{x0 - 2:.1f}" y="{y0 - 5:.1f}">'
               f'{text((frames or {}).get(g, ""))}</text></g>')
  out.append('<g class="edges">')
  for a, (pts, at) in zip(arrows, lay.arrows, strict=True):
    if not pts: continue
    key = f" data-key={attr(a.key)}" if a.key else ""
    out.append(f'<g class={attr("arrow " + a.cls)} data-from={attr(a.src)} data-to={attr(a.dst)}{key}>'
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
