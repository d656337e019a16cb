"""tgviz.draw.flow on hand-built flow pictures: left to right along the arrows, groups framed, text escaped, and the
cheap layout past FAST_ABOVE boxes."""
import xml.etree.ElementTree as ET

from tgviz.draw import flow
from tgviz.draw.flow import Arrow, Box, flow_svg, layout_flow

SVG = "{http://www.w3.org/2000/svg}"


def test_boxes_run_left_to_right_along_the_arrows():
  boxes = [Box("a", ("first", "x < 1 & y")), Box("b", ("second",), group=0), Box("c", ("third",), group=0)]
  arrows = [Arrow("a", "b", "float[4] 16 B", "r-user", key="0"), Arrow("b", "c", "<b>", key="1"), Arrow("a", "c", key="2")]
  lay = layout_flow(boxes, arrows, {0: "realize() · t.py:3"})
  x = {k: v[0] for k, v in lay.boxes.items()}
  assert x["a"] < x["b"] < x["c"]
  assert all(pts for pts, _ in lay.arrows) and lay.arrows[0][1] is not None  # labelled where dot placed the label
  x0, _, x1, _ = lay.frames[0]
  assert x0 <= x["b"] <= x1 and x0 <= x["c"] <= x1 and not x0 <= x["a"] <= x1
  svg = flow_svg(boxes, arrows, lay, frames={0: "realize() · t.py:3"})
  root = ET.fromstring(svg)  # well formed: every text escaped
  assert [g.get("data-node") for g in root.iter(f"{SVG}g") if g.get("data-node")] == ["a", "b", "c"]
  assert [g.get("data-key") for g in root.iter(f"{SVG}g") if g.get("data-key")] == ["0", "1", "2"]
  assert "x &lt; 1 &amp; y" in svg and "&lt;b&gt;" in svg and "realize() · t.py:3" in svg


def test_down_runs_top_to_bottom():
  boxes = [Box("a", ("first",)), Box("b", ("second",)), Box("c", ("third",))]
  lay = layout_flow(boxes, [Arrow("a", "b", "float[4] 16 B"), Arrow("b", "c")], down=True)
  y = {k: v[1] for k, v in lay.boxes.items()}
  assert y["a"] < y["b"] < y["c"] and lay.height > lay.width


def test_many_boxes_take_the_cheap_layout_without_labels():
  n = flow.FAST_ABOVE + 5
  boxes = [Box(f"n{i}", (f"kernel {i}",)) for i in range(n)]
  arrows = [Arrow(f"n{i}", f"n{i + 1}", "float[1] 4 B") for i in range(n - 1)]
  dot = flow.flow_dot(boxes, arrows)
  assert "splines=line" in dot and " [label=" not in dot  # (no arrow labelled: their text on hover)
  lay = layout_flow(boxes, arrows)
  assert all(lay.boxes[f"n{i}"][0] < lay.boxes[f"n{i + 1}"][0] for i in range(n - 1))
