"""Graphs as SVG: labels, identities, one layout for before and after, changes marked, any size, escaping, export."""
import re
import time
import xml.etree.ElementTree as ET

from tinygrad.uop.ops import Ops, PatternMatcher, UOp, UPat, graph_rewrite

import tgviz
from tgviz import bridge as tg
from tgviz.draw import dot as Dot
from tgviz.draw import fold as F
from tgviz.draw import ranks as R
from tgviz.draw.dot import COMPRESS_TO, layout
from tgviz.draw.scene import DEFAULT_MAX_NODES, cap_fan_in, focus
from tgviz.views import picture as P

NS = "{http://www.w3.org/2000/svg}"


def nodes_of(svg: str, side: str) -> dict[str, tuple[str, str]]:
  """uop key -> (class, translate) of each drawn node of one side."""
  root = ET.fromstring(svg)
  out = {}
  for g in root.iter(f"{NS}g"):
    if g.get("data-side") != side: continue
    for n in g.iter(f"{NS}g"):
      if n.get("data-node") and "node" in n.get("class", "").split(): out[n.get("data-node")] = (n.get("class"), n.get("transform"))
  return out


def test_conv_kernel_graph_nodes_carry_identity(tutorial_trace):
  step = tutorial_trace.find("View Base AST", kernel="r_2_2_2_2")
  svg = step.svg(side="before", fold=False)  # the raw graph
  nodes = nodes_of(svg, "before")
  graph = tg.to_graph(step.before())
  assert set(nodes) == set(graph.nodes)  # one node element per drawn UOp, identified by its UOp key
  folded = ET.fromstring(step.svg(side="before"))  # folded: every drawn UOp is a node or held by one
  held = [k for g in folded.iter() if g.get("data-node") for k in (g.get("data-holds") or g.get("data-node")).split()]
  assert set(held) == set(graph.nodes) and len(nodes_of(ET.tostring(folded, "unicode"), "before")) < len(nodes)
  ops_drawn = {ET.fromstring(svg).find(f".//*[@data-node='{k}']").get("data-op") for k in nodes}
  assert {"INDEX", "REDUCE", "STORE", "RANGE", "PARAM"} <= ops_drawn
  assert "CONST" not in ops_drawn  # constants are folded into their users' labels
  assert re.search(r"CONST\d 2", svg)
  for fam in ("fam-load", "fam-reduce", "fam-store", "legend"): assert fam in svg


def test_before_after_share_one_layout_and_mark_changes(tutorial_trace):
  step = tutorial_trace.find("devectorize2", kernel="r_2_2_2_2")
  svg = step.svg()
  before, after = nodes_of(svg, "before"), nodes_of(svg, "after")
  common = set(before) & set(after)
  assert common
  for k in common: assert before[k][1] == after[k][1], k  # unchanged nodes sit in exactly the same place
  d = step.diff()
  removed = {tg.node_key(u) for u in d.removed} & set(before)
  added = {tg.node_key(u) for u in d.added} & set(after)
  changed = [(tg.node_key(b), tg.node_key(a)) for b, a in d.changed if tg.node_key(b) in before]
  assert removed and added and changed
  assert all("removed" in before[k][0] for k in removed)
  assert all("added" in after[k][0] for k in added)
  for b, a in changed:  # a node replaced in place is marked on both sides, in the same spot
    assert "changed" in before[b][0] and "changed" in after[a][0] and before[b][1] == after[a][1]
  assert not any("removed" in c for c, _ in after.values()) and not any("added" in c for c, _ in before.values())


def test_single_match_view(tutorial_trace):
  step = tutorial_trace.find("devectorize2", kernel="r_2_2_2_2")
  svg = step.svg(match=0)
  m = step.matches[0]
  assert f"match 1/{len(step.matches)}" in svg and f":{m.loc[1]}" in svg
  before, after = nodes_of(svg, "before"), nodes_of(svg, "after")
  u0, u1 = m.uops()  # the UOp the pattern matched is on the before side, its replacement on the after side
  assert tg.node_key(u0) in before and tg.node_key(u1) in after
  assert "changed" in before[tg.node_key(u0)][0] and "changed" in after[tg.node_key(u1)][0]


def test_svg_is_deterministic_and_cached(tutorial_trace):
  step = tutorial_trace.find("View Base AST", kernel="r_2_2_2_2")
  first = step.svg()
  P.CACHE.clear()
  assert step.svg() == first
  st = time.perf_counter(); step.svg(); assert time.perf_counter() - st < 0.05


def test_rewrite_with_user_text_is_escaped():
  with tgviz.capture() as trace:
    sink = UOp(Ops.SINK, src=(UOp(Ops.CUSTOM, arg="<img src=x onerror=alert(1)> & ]]>"),))
    evil = PatternMatcher([(UPat(Ops.CUSTOM, name="x"), lambda x: None if x.arg.endswith("<b>") else x.replace(arg=x.arg + "<b>"))])
    graph_rewrite(sink, evil, name="<evil step>")
  step = trace.find("<evil step>")
  root = ET.fromstring(step.svg())
  assert not root.findall(f".//{NS}img")
  assert "<img src=x onerror=alert(1)> & ]]><b>" in "".join(root.itertext())


def test_big_step_picture_says_it_is_partial(cnn_trace):
  step = max(cnn_trace.steps, key=lambda s: len(P.scene_of(s, None).nodes))
  pic = P.picture(step, max_nodes=60)
  assert pic.partial and pic.shown <= 60 and "Partial view" in pic.message and "view='full'" in pic.message
  assert "Partial view" in pic.svg


def test_timeout_falls_back_to_smaller_view(cnn_trace, monkeypatch):
  step = max(cnn_trace.steps, key=lambda s: len(P.scene_of(s, None).nodes))
  real = layout
  def slow_for_big(scene, timeout=None, sides=1):
    if len(scene.nodes) > 100: raise TimeoutError("too slow")
    return real(scene, timeout, sides)
  monkeypatch.setattr(P, "layout", slow_for_big)
  pic = P.picture(step, max_nodes=250, timeout=1)
  assert pic.partial and pic.shown <= 100 and "took over" in pic.message


def test_export_svg_files_are_valid_unique_and_safe(tutorial_trace, tmp_path):
  paths = tutorial_trace.export_svg(tmp_path, kernel="r_2_2_2_2")
  conv = next(g for g in tutorial_trace.groups if g.name == "r_2_2_2_2")
  assert len(paths) == len(conv.steps) and len({p.name for p in paths}) == len(paths)
  for p in paths:
    assert re.fullmatch(r"[A-Za-z0-9._-]+\.svg", p.name) and "r_2_2_2_2" in p.name
    assert ET.parse(p).getroot().tag == f"{NS}svg"
  assert any("View_Base_AST" in p.name for p in paths)
  only = tutorial_trace.export_svg(tmp_path / "one", step="View Program")
  assert len(only) == len(tutorial_trace.kernels)
  # a step's before and after; a snapshot (or a step that matched nothing) is one graph, drawn once
  def drawn_sides(p): return {g.get("data-side") for g in ET.parse(p).getroot().iter(f"{NS}g") if g.get("data-side")}
  steps = {s.index: s for s in conv.steps}
  for p in paths:
    step = steps[int(p.name.split("--")[1][:3])]
    assert drawn_sides(p) == ({"before", "after"} if step.matches else {"before"}), p.name
  assert drawn_sides(only[0]) == {"before"} and any(s.matches for s in conv.steps)


def test_big_steps_lay_out_no_wider_than_four_times_their_height(cnn_trace):
  """Wide rows (a linearized program's hundreds of UOps, devectorize's lanes) are spread over several rows: the focused
  view of every big step of a real kernel, at its first and last match, is at most about 4 times wider than tall, and
  no row holds boxes much wider than the graph's limit."""
  big = [s for s in cnn_trace.steps if len(cap_fan_in(P.scene_of(s, None)).nodes) > 100]
  assert len(big) >= 10
  worst = 0.0
  for step in big:
    for match in {None, len(step.matches) - 1} - {-1}:
      scene = focus(cap_fan_in(P.scene_of(step, match)), DEFAULT_MAX_NODES)
      lay = layout(scene, None)
      worst = max(worst, lay.width / lay.height)
      rows: dict[int, float] = {}
      for _, y, w, _ in lay.nodes.values(): rows[round(y)] = rows.get(round(y), 0) + w + R.NODESEP
      assert max(rows.values()) < 3 * R.MAX_ROW, step.path
  assert worst <= 4, worst


def test_a_match_picture_marks_the_match_own_nodes(cnn_trace):
  """A match's picture marks what it replaced and its replacement (class match-node, thick outline), the nodes the view
  opens on before the ones rebuilt above them: on the busiest step, at its first and last match, folded and raw."""
  step = max(cnn_trace.steps, key=lambda s: len(s.matches))
  for k in (0, len(step.matches) - 1):
    u0, u1 = step.matches[k].uops()
    for fold in (False, True):
      svg = P.picture(step, match=k, fold=fold).svg
      own = re.findall(r'<g class="node [^"]*match-node[^"]*"[^>]*data-node="([0-9a-f]+)"', svg)
      assert own, (k, fold)
      if not fold: assert tg.node_key(u0) in own or tg.node_key(u1) in own
  assert not re.search(r"<g class=\"node [^\"]*match-node", P.picture(step).svg)  # a whole step has no single match


def test_a_deep_graph_is_wrapped_into_columns_that_fit_the_canvas(attention_trace):
  """A graph too tall for the maximised canvas at 11 px (the attention's threefry kernel E_3_32_2: a chain of some 24
  rows) is laid out again wrapped into columns side by side, kept where the canvas shows more of it: the layout that
  is 1100 pt tall in one column against the canvas's 806 (1460 pt before boxes were made smaller) now fits it, no more
  than 4 times wider than tall, every node drawn and every edge, the ones between columns too. A graph that fits is
  laid out as before, in one column."""
  step = next(s for s in attention_trace.steps if s.path == "E_3_32_2 / add local buffers")
  scene = cap_fan_in(F.fold(P.scene_of(step, None)))
  one = Dot._laid(scene, False, 1, None)
  lay = layout(scene, None)
  assert one.height > 1.3 * COMPRESS_TO[1] * 72 and lay.columns > 1
  assert lay.height < 0.7 * one.height and lay.height <= COMPRESS_TO[1] * 72 and lay.width <= 4 * lay.height
  assert lay.width * lay.height < one.width * one.height
  assert set(lay.nodes) == set(one.nodes) and set(lay.edges) == set(one.edges)
  small = next(s for s in attention_trace.steps if 10 <= len(P.scene_of(s, None).nodes) <= 20)
  assert layout(cap_fan_in(P.scene_of(small, None)), None).columns == 1


def test_what_a_step_added_lies_next_to_what_it_removed_across_the_gap(cnn_trace):
  """One layout for before and after: the nodes only the after side draws (added) are placed left of those only the
  before side draws (removed), so that across the gap between the sides (before left, after right) they are near each
  other, in one window of the canvas. On the CNN's conv kernel's check_merge_1_2 (every node of the before side removed,
  every one of the after side added) the two sets lie apart, the added ones left; the picture's SVG agrees."""
  step = next(s for s in cnn_trace.steps if s.path == "r_10_5_4_3_2_3_4_3_3_3 / check_merge_1_2")
  scene = cap_fan_in(F.fold(P.scene_of(step, None)))
  lay = layout(scene, None, sides=2)
  added, removed = scene.on_after - scene.on_before, scene.on_before - scene.on_after
  assert len(added) >= 10 and len(removed) >= 10
  right_of_added = max(lay.nodes[k][0] for k in added)
  assert sum(lay.nodes[k][0] > right_of_added for k in removed) >= 0.8 * len(removed)
  svg = P.picture(step).svg  # each side's nodes at their layout's x (the side's group moves them)
  x = lambda t: float(re.match(r"translate\(([-\d.]+)", t).group(1))  # noqa: E731
  gone = [x(t) for cls, t in nodes_of(svg, "before").values() if "removed" in cls.split()]
  new = [x(t) for cls, t in nodes_of(svg, "after").values() if "added" in cls.split()]
  assert len(gone) >= 10 and sum(g > max(new) for g in gone) >= 0.8 * len(gone)


def test_a_two_sided_picture_packs_each_side_narrower(attention_trace):
  """A step drawn before and after side by side is laid out for half the canvas's width per side: its rows are spread
  from half the width and dot packs it to half the width where it can, so the picture of both sides is narrower than
  the same layout made for one side drawn twice (the attention's memory coalescing: 75 nodes)."""
  step = next(s for s in attention_trace.steps if s.path == "r_2_2_3_8_6 #2 / memory coalescing")
  scene = cap_fan_in(F.fold(P.scene_of(step, None)))
  one, two = Dot._laid(scene, False, 1, None, 1), Dot._laid(scene, False, 1, None, 2)
  assert two.width < 0.9 * one.width and set(two.nodes) == set(one.nodes)
  assert f'size="{Dot._side_w(2):g},' in Dot._dot(scene, False, 1, 2)[0] and Dot._side_w(2) < COMPRESS_TO[0] / 2


def test_param_labels_leave_out_the_dtype_their_dtype_line_says(cnn_trace):
  """A PARAM's or BUFFER's arg (tinygrad's ParamArg) is drawn without the dtype the label's next line says, and its
  address space by name alone: "ParamArg(0, device='CL')", "ParamArg(1, REG)"; boxes narrow to fit."""
  steps = [s for k in cnn_trace.kernels for s in k.group.steps if s.name in ("View Base AST", "add local buffers")]
  labels = {n.label for s in steps for n in P.scene_of(s, None).nodes.values() if n.op in ("PARAM", "BUFFER")}
  args = [lab[1] for lab in labels if len(lab) > 1 and lab[1].startswith("ParamArg(")]
  assert args and not any("dtypes." in a or "AddrSpace." in a or "addrspace=" in a for a in args)
  assert any(re.fullmatch(r"ParamArg\(\d+, device='CL'\)", a) for a in args)
