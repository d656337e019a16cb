"""Linking the panes: each generated line to the UOps behind it, a node's history across the compile, rule statistics."""
import re
import sys
from pathlib import Path

import pytest

import tgviz
from tgviz import bridge as tg
from tgviz.draw import fold as F
from tgviz.views import picture as PI
from tgviz.views import protocol as P

# the variable a line declares -> the op tinygrad names that way (CStyleLanguage._render's prefixes)
PREFIX_OPS = {"val": {"LOAD"}, "cast": {"CAST", "BITCAST", "STACK"}, "bidx": {"INDEX"}, "buf": {"BUFFER"}, "wmma": {"WMMA"}}
DECL = re.compile(r"^\s*(?:[\w*]+\s+)+(?P<name>[A-Za-z_]\w*)\s*(?:\[\d+\])?\s*=")


@pytest.fixture(scope="module")
def two_kernel_backward() -> tgviz.Trace:
  """A program whose backward pass makes kernels too: relu of a matmul, summed, differentiated."""
  with tgviz.capture() as trace:
    from tinygrad import Tensor
    Tensor.manual_seed(1)
    w = Tensor.randn(4, 4)
    loss = (Tensor.ones(2, 4) @ w).relu().sum()
    (grad,) = loss.gradient(w)
    Tensor.realize(loss, grad)
  return trace


def check_lines(kernel) -> None:
  src = kernel.source.splitlines()
  lines = kernel.lines
  assert lines is not None and len(lines) == len(src), kernel.name
  rendered = set()
  for text, uops in zip(src, lines, strict=True):
    if text.startswith("  ") and text.strip().endswith((";", "{")): assert uops, (kernel.name, text)  # every statement of the body
    rendered.update(uops)
    if (m := DECL.match(text)) is None or not uops: continue
    name, op = m.group("name"), uops[0].op.name  # the UOp the line was written for comes first
    if name.startswith(("lidx", "gidx")): assert op == "SPECIAL" and uops[0].arg == name, (text, op)
    elif name.startswith(("alu", "ridx", "Ridx")): assert op not in ("LOAD", "SPECIAL", "INDEX"), (text, op)
    else:
      prefix = re.match(r"[a-z]+", name).group(0)
      if prefix in PREFIX_OPS: assert op in PREFIX_OPS[prefix], (text, op)
  # every UOp of the list the renderer consumed maps to a line
  program = next(s for s in kernel.group.steps if s.name == "linearize/render").after()
  linear = next(s for s in program.src if s.op.name == "LINEAR")
  missing = [u.op.name for u in linear.src if u not in rendered]
  assert not missing, (kernel.name, missing)


def test_every_opencl_line_maps_to_uops_and_back(tutorial_trace):
  assert any(k.renderer == "OpenCLRenderer" for k in tutorial_trace.kernels)
  for k in tutorial_trace.kernels: check_lines(k)  # the OpenCL ones and the CPU (clang) ones
  conv = next(k for k in tutorial_trace.kernels if k.name == "r_2_2_2_2")
  # the store line holds the multiply-adds of the window, and a node finds its lines back
  store = next(i for i, t in enumerate(conv.source.splitlines()) if t.strip().startswith("*(data0"))
  ops = [u.op.name for u in conv.lines[store]]
  assert ops[0] == "STORE" and ops.count("MUL") >= 4 and "ADD" in ops
  assert conv.line_numbers(conv.lines[store][0]) == [store + 1]
  # the lines' UOps are drawn in the graph the renderer consumed (the kernel's final codegen step)
  cg = conv.codegen_step
  assert cg is not None and cg.index == next(s.index for s in conv.group.steps if s.name == "linearize/render") - 1
  drawn = {tg.node_key(u) for u in tg.toposort(cg.before())}
  assert {tg.node_key(u) for u in conv.lines[store]} <= drawn


def test_backward_program_lines(two_kernel_backward):
  assert len(two_kernel_backward.kernels) >= 2
  for k in two_kernel_backward.kernels: check_lines(k)


@pytest.mark.parametrize("device", ["CPU", "NULL:CUDA:sm_90", "NULL:WGSL", "NULL:HIP"])
def test_other_c_style_renderers_map_lines(device):
  if device == "CPU" and tg.clang_missing(): pytest.skip("tinygrad's CPU device needs clang")
  with tgviz.capture(device=device) as trace:
    from tinygrad import Tensor
    a = Tensor.ones(4, 4).contiguous().realize()
    (a @ a).relu().sum(axis=1).realize()
  assert trace.kernels
  for k in trace.kernels:
    assert k.lines is not None and k.lines_note is None, (device, k.name)
    assert any(k.lines), (device, k.name)
    assert all(u for t, u in zip(k.source.splitlines(), k.lines, strict=True) if t.startswith("  ") and t.strip().endswith(";")), (device, k.name)


def test_a_renderer_tgviz_cannot_map_says_so():
  with tgviz.capture(device="NULL:PTX:sm_90") as trace:
    from tinygrad import Tensor
    (Tensor.ones(4, 4).contiguous() + 1).realize()
  k = trace.kernels[-1]
  assert k.source and k.lines is None and "PTXRenderer" in k.lines_note and "is not a C-style one" in k.lines_note
  assert "did not see" not in k.lines_note  # tgviz saw it rendered: the renderer is why
  info = P.kernel_info(k.group)
  assert info["lines"] is None and info["lines_note"] == k.lines_note


def test_a_kernel_tgviz_did_not_see_rendered_says_so(tutorial_trace):
  """A trace without tgviz's line data (as tinygrad's own rewrites.pkl: its recording, tgviz.load's, has no lines): the
  note says tgviz did not see the kernel rendered, not that its C-style renderer cannot be mapped."""
  rec = tutorial_trace._rec
  trace = tgviz.Trace(tutorial_trace.device)
  trace.fill(tg.Recording(rec.groups, rec.uop_fields))
  for k in trace.kernels:
    assert k.source and k.lines is None, k.name
    assert "did not see this kernel rendered" in k.lines_note and "rewrites.pkl" in k.lines_note and "C-style" not in k.lines_note


def test_kernel_info_carries_line_keys(tutorial_trace):
  conv = next(k for k in tutorial_trace.kernels if k.name == "r_2_2_2_2")
  info = P.kernel_info(conv.group)
  assert info["codegen_step"] == P.step_key(conv.codegen_step)
  assert len(info["lines"]) == len(conv.source.splitlines())
  assert info["lines"][1] == list(dict.fromkeys(tg.node_key(u) for u in conv.lines[1]))


def test_lines_survive_save_and_load(tutorial_trace, tmp_path):
  back = tgviz.load(tutorial_trace.save(tmp_path / "t.tgviz"))
  for a, b in zip(tutorial_trace.kernels, back.kernels, strict=True):
    assert [[tg.node_key(u) for u in ln] for ln in a.lines] == [[tg.node_key(u) for u in ln] for ln in b.lines]


def test_history_starts_where_the_node_is_made(tutorial_trace):
  conv = next(k for k in tutorial_trace.kernels if k.name == "r_2_2_2_2")
  store = next(ln[0] for ln in conv.lines if ln and ln[0].op.name == "STORE")
  events = tutorial_trace.history(store, conv.group)
  assert events[0].kind == "rebuilt", events[:3]  # tinygrad rebuilt it when a match changed one of its sources
  first = events[0]
  # it is not in the graph before that match, and it is after it
  assert store not in set(tg.toposort(first.step.at(first.match))) and store in set(tg.toposort(first.step.at(first.match + 1)))
  assert first.other is not None and first.other.op.name == "STORE"  # the store it took the place of
  lives = [e.step.name for e in events if e.kind == "lives"]
  assert "View Output AST" in lives and "linearize/render" in lives
  assert tutorial_trace.history(store)[:len(events)] == events  # the whole trace: the same story, the kernel's group first


def test_a_uop_gone_and_back_says_so(tutorial_trace):
  """tinygrad's UOps are unique by structure: a node can leave the graphs (the next step's input, built anew, lacks it)
  and come back, the same UOp, in a later graph (precompile kernels puts the kernel's AST back). Its history said
  "made by match 1 of precompile kernels" after "lives through 7 steps", with no word that it had gone, beside a
  lineage that says the kernel's early steps made it (new-user pass 10): it says where it went and that it is back."""
  conv = next(k for k in tutorial_trace.kernels if k.name == "r_2_2_2_2")
  store = next(ln[0] for ln in conv.lines if ln and ln[0].op.name == "STORE")
  events = tutorial_trace.history(store, conv.group)
  i = next(i for i, e in enumerate(events) if e.kind == "created" and i and events[i - 1].kind == "removed")
  gone, back = events[i - 1], events[i]
  steps = conv.group.steps
  after = steps[steps.index(gone.step) + 1]
  assert store in set(tg.toposort(gone.step.after())) and store not in set(tg.toposort(after.before()))  # gone between two steps
  assert all(store not in set(tg.toposort(s.before())) | set(tg.toposort(s.after())) for s in steps[steps.index(after):steps.index(back.step)])
  assert store in set(tg.toposort(back.step.at(back.match + 1)))
  panel = P.history(tutorial_trace, store, conv.group)
  assert [e["kind"] for e in panel][:1] == ["rebuilt"] and not panel[0]["again"]
  assert [(e["kind"], e["again"]) for e in panel if e["again"]] == [("created", True)]


def test_history_wants_a_group(tutorial_trace):
  conv = next(k for k in tutorial_trace.kernels if k.name == "r_2_2_2_2")
  with pytest.raises(TypeError, match=r"group must be a Group \(one of trace.groups, or kernel.group\), not str"):
    tutorial_trace.history(conv.lines[1][0], conv.name)


def test_history_and_lineage_want_a_node_and_a_step_its_range(tutorial_trace):
  """A node's op name is not a node: said, rather than an empty history (a new user's trace.history("BUFFER")); a k
  past a step's end says which there are."""
  for ask in (tutorial_trace.history, tutorial_trace.lineage):
    with pytest.raises(TypeError, match=r"uop must be a node of one of this trace's graphs \(a UOp: from step.at\(k\).*not str 'BUFFER'"):
      ask("BUFFER")
  step = next(s for s in tutorial_trace.steps if s.matches)
  n = len(step.matches)
  with pytest.raises(IndexError, match=rf"has {n} match(es)?: k is 0 \(its input\) to {n} \(after its last\), not -1"): step.at(-1)


def test_history_of_a_replaced_node_ends_with_its_replacement(tutorial_trace):
  step = next(s for s in tutorial_trace.steps if len(s.matches) >= 3 and s.group.kind == "kernel")
  m = step.matches[1]
  u0, u1 = m.uops()
  events = tutorial_trace.history(u0, step.group)
  gone = [e for e in events if e.kind == "replaced" and e.step is step]
  assert gone and gone[0].match == 1 and gone[0].other is u1
  assert events[0].kind in ("input", "created", "rebuilt") and events.index(gone[0]) > 0


def test_rules_count_every_match(tutorial_trace):
  rules = tutorial_trace.rules()
  total = sum(len(s.matches) for s in tutorial_trace.steps)
  assert sum(r.count for r in rules) == total
  assert [r.count for r in rules] == sorted((r.count for r in rules), reverse=True)
  top = rules[0]
  assert top.first.loc == top.loc and top.first.step is top.steps[0] and top.source
  assert sum(len([m for m in s.matches if m.loc == top.loc]) for s in top.steps) == top.count
  steps = f"{len(top.steps)} step{'s' if len(top.steps) > 1 else ''}"
  assert repr(top) == f"Rule({Path(top.loc[0]).name}:{top.loc[1]}, count={top.count}, time={top.time * 1e3:.3g} ms, {steps})"
  by_time = tutorial_trace.rules(sort="time")
  assert [r.time for r in by_time] == sorted((r.time for r in by_time), reverse=True)
  with pytest.raises(ValueError, match="sort"): tutorial_trace.rules(sort="name")


def test_origins_of_a_backward_program(two_kernel_backward):
  """Forward kernels name their Tensor ops and this file's lines; the gradient's kernels say backward."""
  here = __file__
  origins = [(o.op, o.backward, o.file) for k in two_kernel_backward.kernels for o in k.origins]
  assert ("__matmul__", False, here) in origins and ("relu", False, here) in origins, origins
  assert ("__matmul__", True, here) in origins, origins  # the gradient's kernel, at the line that asked for it
  by_kernel = {k.name: {o.op for o in k.origins} for k in two_kernel_backward.kernels}
  # w is not realized: randn's Box-Muller (sin, log2) runs in the matmul's kernel, which names both; no other kernel is
  # given everything (the relu's and the gradient's kernels do not compute randn)
  for k in two_kernel_backward.kernels:
    ops = by_kernel[k.name]
    assert ("randn" in ops and "__matmul__" in ops) == ("sin(" in k.source and "__matmul__" in ops), (k.name, ops)
    if "relu" in ops: assert "randn" not in ops, by_kernel
  assert any({"randn", "__matmul__"} <= ops for ops in by_kernel.values()), by_kernel
  text = Path(here).read_text().splitlines()
  for k in two_kernel_backward.kernels:
    for o in k.origins: assert o.line is not None and o.source and o.source in text[o.line - 1]
  # each kernel's CALL in the schedule's kernel graph says the kernel it becomes and its operations
  graph = [s for s in two_kernel_backward.steps if s.name == "View Kernel Graph"]
  labels = [line for s in graph for g in s.graphs() for node in tg.to_graph(g, s.call_notes).nodes.values() for line in node.label]
  names = {k.display_name for k in two_kernel_backward.kernels}
  assert any(line.startswith("→ ") and line[2:].split(" · ")[0] in names and "__matmul__" in line.partition(" · ops: ")[2] for line in labels), labels


def test_a_tensor_method_that_raised_does_not_claim_later_ops():
  """A Tensor method that raises leaves tinygrad's marker of the running method set (its wrapper restores it only on
  return): a capture ending by that error puts it back, so the next cell's kernels name their own ops and lines."""
  from tinygrad import Tensor
  a = Tensor.ones(3, 4).contiguous().realize()
  with pytest.raises(RuntimeError, match="cannot dot"), tgviz.capture(): a @ a
  with tgviz.capture() as trace:
    (a + 2).exp().realize(); here = sys._getframe().f_lineno
  origins = {(o.op, o.line) for k in trace.kernels for o in k.origins}
  assert ("__add__", here) in origins and not any(op == "__matmul__" for op, _ in origins), origins


def test_a_code_line_opens_a_view_built_around_its_uops(cnn_trace):
  """The graph the renderer consumed is too big to draw whole (a partial view around its output): the view a clicked
  code line asks for ("line:N") is built around that line's UOps, so every statement line of the busiest kernel has
  its UOps drawn (two dozen lines of it tried), and the banner says what the partial view is around. A line with no UOp asks for an ordinary view.
  That is the raw graph ("raw:" views); folded (the default), the graph fits whole, each line's UOps drawn or held by a
  folded node (data-holds)."""
  kernel = max(cnn_trace.kernels, key=lambda k: len(tg.toposort(k.codegen_step.before())))
  step = kernel.codegen_step
  assert len(tg.toposort(step.before())) > 2 * 300  # a partial view
  plain = P.picture_message(cnn_trace, P.step_key(step), view="raw:auto")
  drawn = set(re.findall(r'data-node="([0-9a-f]+)"', plain["svg"]))
  lines = kernel.line_keys
  statements = [n for n, text in enumerate(kernel.source.splitlines(), 1) if text.strip().endswith(";") and lines[n - 1]]
  assert len(statements) > 20
  assert sum(not set(lines[n - 1]) & drawn for n in statements) > len(statements) // 4  # the auto view misses many
  for n in statements[:: max(1, len(statements) // 24)]:  # two dozen lines spread over the kernel (each a layout)
    msg = P.picture_message(cnn_trace, P.step_key(step), view=f"raw:line:{n}")
    assert msg["view"] == f"raw:line:{n}" and msg["partial"]
    assert set(lines[n - 1]) & set(re.findall(r'data-node="([0-9a-f]+)"', msg["svg"])), (n, kernel.source.splitlines()[n - 1])
    assert "around the code line's UOps" in msg["message"]
  n = statements[len(statements) // 2]
  assert set(lines[n - 1]) & set(re.findall(r'data-node="([0-9a-f]+)"', step.svg(around=tuple(lines[n - 1]), fold=False)))  # the API alike
  empty = next(n for n, keys in enumerate(lines, 1) if not keys)
  assert "around what changed" in P.picture_message(cnn_trace, P.step_key(step), view=f"raw:line:{empty}")["message"]
  folded = P.picture_message(cnn_trace, P.step_key(step), view=f"line:{n}")
  held = set(re.findall(r'data-node="([0-9a-f]+)"', folded["svg"]))
  held |= {k for h in re.findall(r'data-holds="([0-9a-f ]+)"', folded["svg"]) for k in h.split()}
  # (the rest are constants, in their users' labels: CONSTs raw and folded, a CAST of one folded)
  drawable = set(tg.to_graph(step.before()).nodes) - F.constants(PI.scene_of(step, None))
  assert not folded["partial"] and all(set(lines[m - 1]) & drawable <= held for m in statements)
  with pytest.raises(ValueError, match="auto, full or line:N"): P.picture_message(cnn_trace, P.step_key(step), view="sideways")


def _conv(trace):
  return next(k for k in trace.kernels if k.name == "r_2_2_2_2")


def test_lineage_goes_back_to_the_kernels_ast_and_the_users_line(tutorial_trace):
  """A node's "came from" chain: each rewrite that made it from an earlier node, back to the kernel's AST (the input of
  its first step) and the Tensor op and line of the user's code that made that."""
  conv = _conv(tutorial_trace)
  store = next(ln[0] for ln in conv.lines if ln and ln[0].op.name == "STORE")
  lin = tutorial_trace.lineage(store, conv.group)
  assert lin.links[0].uop is store and lin.links[0].kind in ("created", "rebuilt")
  # each link made its node at that match from the next link's node, which the graph before the match holds
  for new, old in zip(lin.links, lin.links[1:], strict=False):
    assert new.other is old.uop
    if new.match is not None:
      assert new.uop not in set(tg.toposort(new.step.at(new.match))) and new.uop in set(tg.toposort(new.step.at(new.match + 1)))
      assert old.uop in set(tg.toposort(new.step.at(new.match)))
  first = lin.links[-1]
  assert first.kind == "input" and first.other is None and first.step is conv.group.steps[0] and lin.first is first.uop
  assert first.uop in set(tg.toposort(conv.group.steps[0].before()))
  assert len(lin.links) > 10  # the last rebuild ("casted consts") is far from where the store began
  assert [(o.op, Path(o.file).name, o.line) for o in lin.origins] == [("conv2d", "tutorial_conv2d.py", 6)]
  assert "from conv2d (tutorial_conv2d.py:6)" in repr(lin) and "in the input of 'r_2_2_2_2 / View Base AST'" in repr(lin)
  # the node panel's message: its runs, newest first, back to the AST, with the user's line
  node = P.node_message(tutorial_trace, P.step_key(conv.codegen_step), None, tg.node_key(store))
  runs = node["lineage"]
  assert sum(r["count"] for r in runs) == len(lin.links) and runs[-1]["kind"] == "input" and runs[-1]["step"] == P.step_key(conv.group.steps[0])
  assert runs[0]["key"] == tg.node_key(store) and all(r["other_key"] == runs[i + 1]["key"] for i, r in enumerate(runs[:-1])), runs
  assert [(o["op"], o["where"]) for o in node["origins"]] == [("conv2d", "tutorial_conv2d.py:6")]


def test_lineage_of_a_node_that_lives_inside_one_step(tutorial_trace):
  """A node a match's picture shows that neither the step's input nor its output holds (rebuilt at one match, rebuilt
  again at a later one) still has its chain, from that picture on."""
  conv = _conv(tutorial_trace)
  store = next(ln[0] for ln in conv.lines if ln and ln[0].op.name == "STORE")
  made = tutorial_trace.lineage(store, conv.group).links[0]
  inside, step = made.other, made.step
  assert inside not in set(tg.toposort(step.before())) and inside not in set(tg.toposort(step.after()))
  lin = tutorial_trace.lineage(inside, conv.group, seen=(step, made.match))
  assert lin.links[0].uop is inside and lin.links[0].step is step and lin.links[-1].step is conv.group.steps[0] and lin.origins
  node = P.node_message(tutorial_trace, P.step_key(step), made.match, tg.node_key(inside))
  assert node["lineage"][0]["key"] == tg.node_key(inside) and node["lineage"][-1]["kind"] == "input" and node["origins"]


def test_a_node_panel_shows_no_colour_codes(tutorial_trace):
  """tinygrad colours kernel names (r\\x1b[90m_\\x1b[0m...): the node panel of the PROGRAM and SINK nodes that carry one
  (their arg, and the node as Python) reads as plain text, not as escape codes."""
  step = tutorial_trace.find("linearize/render", kernel="r_2_2_2_2")
  named = [u for u in tg.toposort(step.after()) if tg.op_name(u) in ("PROGRAM", "SINK") and "r_2_2_2_2" in tg.node_details(u)["arg"]]
  assert named, "no PROGRAM or SINK node names the kernel"
  for u in named:
    details = tg.node_details(u)
    assert "\\x1b" not in details["arg"] + details["python"] and "\x1b" not in details["arg"] + details["python"], details["arg"]
    assert "name='r_2_2_2_2'" in details["arg"], details["arg"]


def test_a_rebuilt_nodes_history_and_lineage_agree(tutorial_trace):
  """A node tinygrad rebuilt (a source changed) at one match, which a later match's replacement holds or is: its history
  says it was rebuilt at the match its lineage names, never "made" by the later match (the node panel said "made by
  match 4" beside "rebuilt by matches 1–3")."""
  checked = 0
  for s in (s for g in tutorial_trace.groups for s in g.steps if 0 < len(s.matches) <= 40):
    before = set(tg.toposort(s.before()))  # a node of the step's input: its lineage starts before the step
    for uop in (u for u in tg.toposort(s.after()) if u not in before):
      lin = tutorial_trace.lineage(uop, s.group, seen=(s, len(s.matches)))
      if not lin.links or lin.links[0].kind != "rebuilt" or lin.links[0].step is not s: continue
      made = [e for e in tutorial_trace.history(uop, s.group) if e.step is s and e.kind in ("created", "rebuilt")]
      assert [(e.kind, e.match) for e in made] == [("rebuilt", lin.links[0].match)], (s.path, uop.op, made, lin)
      checked += 1
  assert checked >= 5
