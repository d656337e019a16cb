"""Folding (tgviz.draw.fold) is a view: on the tutorial's and a CNN's real traces, folded pictures draw far fewer nodes,
every UOp drawn raw is drawn or held by a folded node, expressions read as tinygrad renders them, marked nodes are never
folded, lanes hold no path, and the raw view (fold=False, "raw:" views) is exactly the graph. The trace and its replays
never see folding (tests/trace/test_trace.py holds them equal to VIZ's)."""
import xml.etree.ElementTree as ET

from tinygrad.helpers import strip_parens

from tgviz import bridge as tg
from tgviz.draw import fold as F
from tgviz.draw.scene import Scene, make_scene
from tgviz.views import picture as PI
from tgviz.views import protocol as P

NS = "{http://www.w3.org/2000/svg}"


def _alone(step) -> Scene:
  """The scene of a step's input graph drawn alone (nothing marked)."""
  g = tg.to_graph(step.before(), step.call_notes)
  return make_scene(g, g, set(), set(), {})


def _codegen(kernel) -> list:
  names = [s.name for s in kernel.group.steps]
  first, last = names.index("View Base AST"), names.index("View Program")
  return [s for s in kernel.group.steps[first:last + 1] if s.depth == 0]


def _drawn(svg: str, side: str | None = None) -> dict[str, list[str]]:
  """data-node -> the keys it holds (itself when not folded), of the nodes of one side (or all)."""
  out = {}
  for g in ET.fromstring(svg).iter(f"{NS}g"):
    if g.get("data-side") == side or side is None:
      for n in g.iter(f"{NS}g"):
        if n.get("data-node"): out[n.get("data-node")] = (n.get("data-holds") or n.get("data-node")).split()
  return out


def test_codegen_graphs_fold_at_least_3x(cnn_trace):
  """The CNN's conv kernels: their late codegen graphs (View Output AST, View Program: hundreds of nodes of index
  arithmetic and upcast lanes) draw at least 3x fewer nodes folded, most of their codegen steps do, and none draws more."""
  convs = [k for k in cnn_trace.kernels if k.name.startswith("r_") and len(tg.toposort(k.codegen_step.before())) > 500][:2]
  assert convs
  for k in convs:
    counts = {s.name: (len(sc.nodes), len(F.fold(sc).nodes)) for s in _codegen(k) for sc in [_alone(s)]}
    for name in ("View Output AST", "View Program"):
      raw, folded = counts[name]
      assert raw >= 3 * folded, (k.name, name, raw, folded)
    assert all(f <= r for r, f in counts.values())
    assert sum(r >= 3 * f for r, f in counts.values()) >= len(counts) // 3, counts


def test_expressions_are_tinygrad_renders(tutorial_trace, cnn_trace):
  """Every expression a folded node shows is tinygrad's own UOp.render(simplify=False) of the UOp it stands for
  (outer parentheses off), on every codegen step of the tutorial's and the CNN's kernels."""
  seen = 0
  for trace in (tutorial_trace, cnn_trace):
    for k in trace.kernels:
      for s in _codegen(k)[::3]:
        uops = {tg.node_key(u): u for u in tg.toposort(s.before())}
        a = F._Analysis(_alone(s))
        for key in a.ops:
          assert strip_parens(a.text[key]) == strip_parens(uops[key].render(simplify=False)), (s.path, key)
          seen += 1
  assert seen > 1000


def test_every_uop_is_drawn_or_held_and_raw_is_the_graph(cnn_trace):
  """Folded, every node the raw picture draws is drawn or held by a drawn node (data-holds), but for constants, which
  go into their users' labels as CONSTs do; on both sides and at matches. Raw (fold=False), the picture draws exactly
  the graph's nodes, none folded."""
  k = max(cnn_trace.kernels, key=lambda k: len(k.group.steps))
  step = max(_codegen(k), key=lambda s: len(s.matches))
  n = len(step.matches)
  for m in (None, 0, n // 2, n - 1):
    # (no time budget: on a busy machine a layout past it would fall back to a partial view, which this is not about)
    raw = step.svg(match=m, view="full", fold=False, timeout=None)
    folded = step.svg(match=m, view="full", timeout=None)
    before, after = step.graphs(m)
    consts = F.constants(PI.scene_of(step, m))  # written into their users' labels, as CONSTs are
    for side, graph in (("before", before), ("after", after)):
      nodes = set(tg.to_graph(graph, step.call_notes).nodes)
      drawn_raw = _drawn(raw, side)
      assert set(drawn_raw) == nodes and all(v == [k] for k, v in drawn_raw.items())
      held = {h for hs in _drawn(folded, side).values() for h in hs}
      assert nodes - consts <= held and not held & consts, (m, side, len(nodes - consts - held))
    assert len(_drawn(folded)) < len(_drawn(raw))
  assert "data-holds" not in raw and 'class="node' in raw


def test_marked_nodes_are_never_folded(tutorial_trace, cnn_trace):
  """At a match (and over a whole step), every added, removed and changed node is drawn as itself: its own node,
  holding nothing else, with its own label, on its side."""
  steps = [s for s in tutorial_trace.steps if s.matches][::7]
  k = max(cnn_trace.kernels, key=lambda k: len(k.group.steps))
  steps += sorted((s for s in k.group.steps if s.matches), key=lambda s: -len(s.matches))[:3]
  checked = 0
  for step in steps:
    n = len(step.matches)
    for m in sorted({None, 0, n // 3, n - 1}, key=lambda x: -1 if x is None else x):
      scene = PI.scene_of(step, m)
      folded = F.fold(scene)
      for key, mark in scene.marks.items():
        if key not in scene.nodes: continue
        node = folded.nodes[key]
        assert not node.holds and node.label == scene.nodes[key].label and folded.marks[key] == mark, (step.path, m, key)
        assert (key in folded.on_before) == (key in scene.on_before) and (key in folded.on_after) == (key in scene.on_after)
        checked += 1
      for key, node in folded.nodes.items():  # and no fold holds a marked node
        assert not (set(node.holds) - {key}) & set(scene.marks), (step.path, m, key)
  assert checked > 100


def _places(svg: str) -> dict[str, dict[str, tuple[str, str | None]]]:
  """Per side: data-node -> (its transform, its data-holds)."""
  out: dict[str, dict[str, tuple[str, str | None]]] = {}
  for g in ET.fromstring(svg).iter(f"{NS}g"):
    if g.get("data-side"):
      out[g.get("data-side")] = {n.get("data-node"): (n.get("transform"), n.get("data-holds")) for n in g.iter(f"{NS}g")
                                 if n.get("data-node")}
  return out


def test_lanes_hold_no_path_and_sides_share_one_layout(cnn_trace):
  """A lane node (×N) never holds two nodes on one path; an unmarked folded node is on both sides of a match's picture
  in the same place (one layout for both)."""
  k = max(cnn_trace.kernels, key=lambda k: len(k.group.steps))
  lanes = 0
  for s in _codegen(k):
    g = tg.to_graph(s.before())
    srcs: dict[str, list[str]] = {key: [] for key in g.nodes}
    for src, dst in g.edges: srcs[dst].append(src)
    below: dict[str, set[str]] = {}
    for key in g.nodes: below[key] = {x for src in srcs[key] for x in (src, *below[src])}  # sources come first
    scene = _alone(s)
    a = F._Analysis(scene)
    classes: dict[int, list[str]] = {}
    for unit, c in F.lanes(scene, a, a.unit_edges(scene.edges_before)).items(): classes.setdefault(c, []).append(unit)
    for members in classes.values():
      assert len(members) >= 2 and len({g.nodes[m].op for m in members}) == 1
      assert not any(below[m] & set(members) for m in members), (s.path, members)
      lanes += 1
  assert lanes > 20
  step = max(_codegen(k), key=lambda s: len(s.matches))
  places = _places(step.svg(match=len(step.matches) // 2))
  common = set(places["before"]) & set(places["after"])
  assert len(common) > 50 and all(places["before"][k] == places["after"][k] for k in common)
  assert any(places["before"][k][1] for k in common)  # folded nodes among them


def test_a_uop_inside_a_fold_is_found(cnn_trace):
  """Linking: a code line's UOps inside a fold are found by the node that holds them (fold.drawn_as, data-holds), and a
  partial view asked around them is built around that node."""
  kernel = max(cnn_trace.kernels, key=lambda k: len(tg.toposort(k.codegen_step.before())))
  step = kernel.codegen_step
  scene = F.fold(PI.scene_of(step, None))
  keys = [k for line in kernel.line_keys or [] for k in line]
  inside = [k for k in keys if k not in scene.nodes and F.drawn_as(scene, [k])]
  assert len(inside) > 20
  for k in inside[:50]:
    [at] = F.drawn_as(scene, [k])
    assert k in scene.nodes[at].holds
  msg = P.picture_message(cnn_trace, P.step_key(step), view="line:" + str(next(
    n for n, line in enumerate(kernel.line_keys, 1) if set(line) & set(inside))))
  drawn = _drawn(msg["svg"])
  assert any(set(hs) & set(inside) for hs in drawn.values())


def test_expander_vector_index_math_folds(attention_trace):
  """After tinygrad's expander, index arithmetic over vectors of constants (`{0,1,2,3,4,5}.reshape((6,1,1))`) folds into
  expressions as tinygrad renders them (UOp.render(simplify=False)): the attention's r_2_6_6_8 graph after the expander
  draws 35 nodes raw and at most 24 folded (31 when folding stopped at the vectors), its index expressions drawn whole
  (a constant too long for a label line is drawn as an expression); at every match of the expander no marked node is
  folded away."""
  k = next(k for k in attention_trace.kernels if k.name == "r_2_6_6_8")
  expander, after = (next(s for s in k.group.steps if s.depth == 0 and s.name == n) for n in ("expander", "remove reduces"))
  scene = _alone(after)
  a, folded = F._Analysis(scene), F.fold(scene)
  assert len(scene.nodes) == 35 and len(folded.nodes) <= 24, len(folded.nodes)
  uops = {tg.node_key(u): u for u in tg.toposort(after.before())}
  vectors = [key for key in a.ops if "{" in a.text[key]]
  assert len(vectors) >= 4
  for key in vectors: assert strip_parens(a.text[key]) == strip_parens(uops[key].render(simplify=False)), key
  labels = ["".join(n.label[:-1]) for n in folded.nodes.values() if n.label[0].startswith("{") or n.label[0].startswith("({")]
  assert "{0,1,2,3,4,5}.reshape((6,1,1))*8+{0,1,2,3,4,5,6,7}.reshape((1,1,8))+r7*48" in labels, labels
  assert not any("…" in line for n in folded.nodes.values() for line in n.label if "{" in line and "STACK" not in line)
  for m in (None, *range(len(expander.matches))):
    scene = PI.scene_of(expander, m)
    folded = F.fold(scene)
    for key in scene.marks:
      if key in scene.nodes: assert not folded.nodes[key].holds[1:] and folded.nodes[key].label == scene.nodes[key].label
    assert not any(set(n.holds[1:]) & set(scene.marks) for n in folded.nodes.values())
