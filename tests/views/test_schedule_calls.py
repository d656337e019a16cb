"""A schedule's counts on screen reconcile, and its graph's CALL nodes name the kernels they become: the schedule
group's name counts its calls ("Schedule 77 Kernels"), its details split them by kind (kernels compiled after it,
more calls of one kernel, kernels compiled after an earlier schedule, copies, ...) and the trace's kernels into those
compiled after it and after other schedules; each kernel's CALL says "→ E_2 #2" and its node panel links there, each
copy's "→ copy 8 B CL <- PYTHON"."""
import re

import tgviz
from tgviz import bridge as tg
from tgviz.views import protocol as P


def _schedules(trace):
  return [g for g in trace.groups if g.kind == "schedule" and g.name.startswith("Schedule")]


def test_a_schedules_calls_and_the_traces_kernels_add_up(mnist_trace):
  """The MNIST step: "Schedule 77 Kernels", 61 kernels compiled after it, 67 in the trace."""
  first = _schedules(mnist_trace)[0]
  info = P.schedule_calls(mnist_trace, first)
  assert first.name.startswith("Schedule 77 Kernels") and info["calls"] == 77 and info["compiled"] == 61
  assert info["compiled"] + info["elsewhere"] == len(mnist_trace.kernels) == 67
  for g in _schedules(mnist_trace):
    info = P.schedule_calls(mnist_trace, g)
    calls = int(re.match(r"Schedule (\d+) Kernel", g.name)[1])  # type: ignore[index]
    parts = {p["kind"]: p for p in info["parts"]}
    assert info["calls"] == calls == sum(p["count"] for p in info["parts"]), (g.name, info["parts"])
    assert info["compiled"] == len(P.produced_kernels(mnist_trace, g)) == parts.get("compiled", {"count": 0})["count"]
    assert info["compiled"] + info["elsewhere"] == len(mnist_trace.kernels)
    names = {k.display_name for k in mnist_trace.kernels}
    for kind in ("earlier", "again"):
      assert {k["name"] for k in parts.get(kind, {"kernels": []})["kernels"]} <= names
    calls_of = mnist_trace.program().calls_of(g.index)
    assert parts.get("copy", {"count": 0})["count"] == sum(c.kind == "copy" for c in calls_of)
    assert P.schedule_calls(mnist_trace, mnist_trace.groups[g.index - 1]) == info  # its Callify group: the same calls
  # the first schedule's calls: 61 kernels, more calls of some of them, copies
  parts = {p["kind"]: p["count"] for p in P.schedule_calls(mnist_trace, first)["parts"]}
  assert parts["compiled"] == 61 and parts["again"] + parts.get("copy", 0) + parts.get("earlier", 0) + parts.get("cached", 0) + \
    parts.get("other", 0) == 16, parts


def test_call_nodes_name_the_kernel_they_become(mnist_trace):
  """Every kernel CALL in a schedule's kernel graph, those of kernels with no Tensor op too, says which kernel it
  becomes (by the name the tree shows), and its node panel links to that kernel's steps."""
  names = {k.display_name: k for k in mnist_trace.kernels}
  step = next(s for s in _schedules(mnist_trace)[0].steps if s.name == "View Kernel Graph")
  graph = tg.to_graph(step.before(), step.call_notes)
  every = [u for u in tg.toposort(step.before()) if u.op.name == "CALL"]
  becomes = {u: [ln for ln in graph.nodes[tg.node_key(u)].label if ln.startswith("→ ")] for u in every}
  assert all(len(lines) == 1 for lines in becomes.values())  # every CALL says what it becomes, once
  calls = [u for u in every if not becomes[u][0].startswith("→ copy ")]
  program = mnist_trace.program().calls_of(step.group.index)
  assert len(every) == 77 and len(calls) == sum(c.kind == "kernel" for c in program) == 72  # the others: the 5 copies
  assert sorted(becomes[u][0] for u in every if u not in calls) == sorted(f"→ {c.name}" for c in program if c.kind == "copy")
  for u in calls:
    label = graph.nodes[tg.node_key(u)].label
    named = [ln for ln in label if ln.startswith("→ ")]
    name = named[0][2:].split(" · ")[0]
    assert name in names, (name, label)
    kernel = names[name]
    assert tg.node_key(kernel.group.steps[0].before()) == tg.node_key(u.src[0])  # the kernel compiled from its AST
  for u in calls[:: len(calls) // 3]:  # (a node panel reads the node's history: a second or so in a schedule's steps)
    name = next(ln for ln in graph.nodes[tg.node_key(u)].label if ln.startswith("→ "))[2:].split(" · ")[0]
    node = P.node_message(mnist_trace, P.step_key(step), None, tg.node_key(u))
    assert node["becomes"] == {"name": name, "group": names[name].group.index, "step": P.step_key(names[name].group.steps[0])}
  assert P.node_message(mnist_trace, P.step_key(step), None, tg.node_key(calls[0].src[0]))["becomes"] is None  # not a CALL


def _last_split(trace):
  """The step the user looked at: the last "split kernels" of the trace's schedule, its last match."""
  step = [s for g in _schedules(trace) for s in g.steps if s.name == "split kernels"][-1]
  return step, len(step.matches) - 1


def test_every_call_node_says_what_it_becomes(attention_cell_trace):
  """A notebook cell's attention of randn inputs, at "Schedule ... / split kernels": each CALL node says what it becomes,
  a kernel ("→ E_2 #1 · ops: randn") or a copy, by the program's name of it ("→ copy 8 B CL <- PYTHON"), as many copies
  as the program's schedule has; no label carries tinygrad's CallInfo when it holds only its defaults."""
  step, m = _last_split(attention_cell_trace)
  program = attention_cell_trace.program().calls_of(step.group.index)
  copies = [f"→ {c.name}" for c in program if c.kind == "copy"]
  assert copies and all(re.fullmatch(r"→ copy \d+ B CL <- PYTHON", c) for c in copies), copies
  kernels = {k.display_name for k in attention_cell_trace.kernels}
  for side in step.graphs(m):
    graph = tg.to_graph(side, step.call_notes)
    labels = [n.label for n in graph.nodes.values() if n.op == "CALL"]
    assert labels and all(label[0] == "CALL" and len(label) == 2 and label[1].startswith("→ ") for label in labels), labels
    said = [label[1] for label in labels]
    assert sorted(ln for ln in said if ln.startswith("→ copy ")) == sorted(copies)
    assert {ln[2:].split(" · ")[0] for ln in said if not ln.startswith("→ copy ")} <= kernels
    assert not any("CallInfo" in ln for n in graph.nodes.values() for ln in n.label)


def test_calls_of_no_kernel_say_what_they_call(attention_cell_trace):
  """Every CALL node of every schedule step's graphs says what it calls, a CALL of no kernel or copy too: the schedule's
  LINEAR ("→ its 14 calls, in order": as many as tinygrad's "Schedule 14 Kernels" says), the scheduled function ("→ the
  scheduled function: 9 outputs": as many as its Callify group's "9 Buffers"), a COPY before it is a copy call ("→ a
  copy to CL")."""
  said: set[str] = set()
  for g in attention_cell_trace.groups:
    if g.kind != "schedule": continue
    calls = int(re.search(r" (\d+) (?:Kernel|Buffer)", g.name)[1])  # type: ignore[index]
    callify = g if g.name.startswith("Callify") else attention_cell_trace.groups[g.index - 1]
    outputs = int(re.fullmatch(r"Callify (\d+) Buffers? n\d+", callify.name)[1])  # type: ignore[index]
    for step in g.steps:
      for side in (step.before(), step.after()):
        graph = tg.to_graph(side, step.call_notes)
        for n in graph.nodes.values():
          if n.op != "CALL": continue
          assert n.label[-1].startswith("→ "), (g.name, step.name, n.label)
          said.add(n.label[-1])
          if n.label[-1].startswith("→ its "): assert n.label[-1] == f"→ its {calls} calls, in order", g.name
          if n.label[-1].startswith("→ the scheduled"): assert n.label[-1].endswith(f": {outputs} outputs"), g.name
  for kind in (r"→ its \d+ calls, in order", r"→ the scheduled function: \d+ outputs", r"→ a copy to CL"):
    assert any(re.fullmatch(kind, line) for line in said), (kind, said)


def test_a_call_info_that_carries_something_stays():
  """A CALL's CallInfo with a name (or any field off its default) is still in its label."""
  from tinygrad import dtypes
  from tinygrad.uop.ops import CallInfo, Ops, UOp
  body = UOp(Ops.SINK, dtypes.void, ())
  plain, named = (tg.to_graph(UOp(Ops.CALL, dtypes.void, (body,), info)) for info in (CallInfo(), CallInfo(name="attn")))
  assert plain.nodes[plain.root].label == ("CALL",)
  assert named.nodes[named.root].label == ("CALL", "CallInfo(None, 'attn', False, False)")


def test_a_schedules_row_in_the_tree_says_what_its_calls_are(attention_cell_trace):
  """tinygrad names a schedule by its calls ("Schedule 5 Kernels n1") though 2 of them are copies, and a later one of 3
  kernels compiles none (it reuses n2's): each schedule's row in the tree says so beside its name, its counts the
  calls of its panel (schedule_calls), every kind once; the Callify group before it (the same calls) says none, so
  that two rows in a row do not repeat the counts (pass 19)."""
  rows = {g["name"]: g.get("calls") for g in P.tree(attention_cell_trace) if g["kind"] == "schedule"}
  runs = attention_cell_trace.program().runs_schedule
  for g in attention_cell_trace.groups:
    if g.kind != "schedule" or (info := P.schedule_calls(attention_cell_trace, g)) is None: continue
    said = rows[g.display_name]
    if not runs(g.index):
      assert g.name.startswith("Callify") and said is None, (g.display_name, said)
      continue
    assert said and sum(int(s.split()[0]) for s in said) == info["calls"] and len(said) == len(info["parts"]), (g.display_name, said, info)
  assert sum(1 for g in attention_cell_trace.groups if g.name.startswith("Callify") and P.schedule_calls(attention_cell_trace, g))  # (the premise)
  assert any("2 copies" in (s or []) for s in rows.values()) and any("4 called again" in (s or []) for s in rows.values()), rows
  # the same work realized again: its schedule compiles nothing, its kernels the first one's
  from tinygrad import Tensor
  a = Tensor([1.0, 2.0, 3.0, 4.0]).realize()
  with tgviz.capture() as trace:
    for _ in range(2): (a * 2 + 1).realize()
  said = [g["calls"] for g in P.tree(trace) if g["kind"] == "schedule" and "calls" in g]
  assert said[0] == ["1 compiled here"] and said[-1] == ["1 reused"], said
