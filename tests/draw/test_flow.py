"""tgviz.draw.flow on hand-built flow pictures: left to right along the arrows, groups framed, text escaped, and the
cheap layout past FAST_ABOVE boxes."""
import itertools
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
  [(x0, _, x1, _)] = lay.frames[0]
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


def test_a_long_chain_wraps_into_bands_read_like_text():
  """A left-to-right picture more than WRAP_PAST times `wrap` wide (a long chain of kernels: the attention block's map opened
  with 3 of its 29 boxes on screen, the rest off to the right) is cut between columns into bands at most that wide,
  stacked top to bottom in reading order; an arrow from one band to the next is drawn anew (fainter, unlabelled) from
  its tail, along a lane above the band it goes to, into its head from the left; a frame the cut crosses is drawn in
  each band, "(continued)" after the first."""
  n, wrap = 18, 600.0
  boxes = [Box(f"k{i}", (f"kernel {i}", "randn"), group=0 if i in (3, 4, 5, 6) else None) for i in range(n)]
  arrows = [Arrow(f"k{i}", f"k{i + 1}", "float[4] 16 B", key=str(i)) for i in range(n - 1)]
  plain = layout_flow(boxes, arrows, {0: "realize() · t.py:3"})
  assert plain.width > flow.WRAP_PAST * wrap and not plain.far
  lay = layout_flow(boxes, arrows, {0: "realize() · t.py:3"}, wrap=wrap)
  assert lay.width < plain.width / 2 and lay.height > plain.height
  # bands: boxes of a band side by side, left to right; each band under the one before, none overlapping
  rows: list[list[str]] = [[]]
  for i in range(n):
    x, y, w, h = lay.boxes[f"k{i}"]
    assert x - w / 2 >= 0 and x + w / 2 <= lay.width and y - h / 2 >= 0 and y + h / 2 <= lay.height
    if i and x < lay.boxes[f"k{i - 1}"][0]: rows.append([])  # (the next band)
    rows[-1].append(f"k{i}")
  assert len(rows) >= 3 and all(len(r) >= 2 for r in rows[:-1])  # (each band as wide as wrap allows)
  for above, below in itertools.pairwise(rows):
    assert max(lay.boxes[k][1] + lay.boxes[k][3] / 2 for k in above) < min(lay.boxes[k][1] - lay.boxes[k][3] / 2 for k in below)
    assert max(lay.boxes[k][0] + lay.boxes[k][2] / 2 for k in above) - min(lay.boxes[k][0] - lay.boxes[k][2] / 2 for k in above) <= wrap
  crossing = {i for i in range(n - 1) if any(f"k{i}" in r and f"k{i + 1}" not in r for r in rows)}
  assert lay.far == crossing and crossing
  for i in crossing:  # from its tail, to its head's left side (where dot ends an arrow: its head drawn there), at its height
    pts, at = lay.arrows[i]
    (sx, _, sw, _), (dx, dy, dw, _) = lay.boxes[f"k{i}"], lay.boxes[f"k{i + 1}"]
    assert abs(pts[0][0] - (sx + sw / 2)) < 3 and 0 <= dx - dw / 2 - pts[-1][0] < 15 and abs(pts[-1][1] - dy) < 3
    assert at is None and min(y for _, y in pts) < dy - 14  # along a lane above the band it goes to, unlabelled (its hover says)
  # the frame: a piece in each band its boxes are in
  bands = {j for j, r in enumerate(rows) for k in r if k in ("k3", "k4", "k5", "k6")}
  assert len(lay.frames[0]) == len(bands)
  svg = flow_svg(boxes, arrows, lay, frames={0: "realize() · t.py:3"})
  root = ET.fromstring(svg)
  far = [g.get("data-key") for g in root.iter(f"{SVG}g") if "far" in (g.get("class") or "").split()]
  assert far == [str(i) for i in sorted(crossing)]
  assert len([r for r in root.iter(f"{SVG}rect") if r.get("class") == "frame"]) == len(bands)
  labels = [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "frame-label"]
  assert labels == ["realize() · t.py:3"] + ["realize() · t.py:3 (continued)"] * (len(bands) - 1)
