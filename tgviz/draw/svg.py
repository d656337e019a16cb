"""A laid-out scene as SVG: each side's nodes and edges, changes marked, every node carrying its key (``data-node``);
standalone documents with a title, a banner and a legend. The same SVG is shown, exported and written to files.

Owns the SVG only; text from user code is escaped here (:func:`text`, :func:`attr`).
"""
from __future__ import annotations

import re
from xml.sax.saxutils import escape, quoteattr

from tgviz.draw.dot import CHAR_W, FONT_SIZE, LINE_H, PAD, Layout
from tgviz.draw.graph import FAMILIES, Node
from tgviz.draw.scene import Scene, hidden_text

MARKS = {"added": "#1a9e3a", "removed": "#d62728", "changed": "#ff8c00"}

_BAD_XML = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
# what needs nothing escaped (most of a picture's texts: keys, ops, classes, labels), passed as it is: the same text as
# escape's and quoteattr's, some 3x sooner (a GPT step's 350 landmark pictures ask for some 350,000)
_PLAIN_TEXT = re.compile(r"[^&<>\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]*")
_PLAIN_ATTR = re.compile(r"[\w .,:#()+*/=-]*", re.ASCII)


def text(s: str) -> str:
  """Escape text for SVG/HTML content, dropping characters XML cannot hold."""
  return s if _PLAIN_TEXT.fullmatch(s) else escape(_BAD_XML.sub("", s))


def attr(s: str) -> str:
  """Escape and quote text for an SVG/HTML attribute."""
  return f'"{s}"' if _PLAIN_ATTR.fullmatch(s) else quoteattr(_BAD_XML.sub("", s))


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
  """A node's group: data-node its key, class intlike where it computes an integer or bool (index arithmetic, not a value the
  kernel computes); a folded node (tgviz.draw.fold) also says the keys it holds, in data-holds, and their
  ops, in data-held-ops."""
  x, y, w, h = box
  cls = f"node fam-{n.family}" + (" intlike" if n.intlike else "") + (f" {mark}" if mark else "") + (" fold" if n.holds else "") \
    + (" match-node" if match else "")
  lines = "".join(f'<tspan x="{PAD}" y="{PAD + (i + 0.85) * LINE_H:.1f}">{text(ln)}</tspan>' for i, ln in enumerate(n.label))
  uops = f"{len(n.holds)} UOp{'' if len(n.holds) == 1 else 's'}"  # (as js/port/layout.js writes it: draw is below trace.units)
  title = "\n".join(n.label) + (f"\n[{mark}]" if mark else "") + (f"\n[folded: {uops}]" if n.holds else "")
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
                 f'<rect width="{w:.1f}" height="{h:.1f}" rx="8"/><text x="{PAD}" y="{h / 2 + 3:.1f}">{hidden_text(count, what)}'
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
