"""trace.search on the MNIST training step: what each kind of search finds is checked against the trace itself (the
kernels' origins and code, the UOps in the graphs, the matches' rules); kernel.key, the same for the same program in
any process, pairs compared kernels and names a kernel wherever one is named."""
import subprocess
import sys

import workloads

import tgviz
from tgviz import bridge as tg
from tgviz.trace.search import KINDS, find, index
from tgviz.trace.steps import where


def kinds(hits) -> set[str]:
  return {h.kind for h in hits}


def test_the_losss_log_softmax_is_found_in_the_kernels_it_ended_up_in(mnist_trace):
  """sparse_categorical_crossentropy calls log_softmax, which tinygrad's op metadata leaves out: the capture notes it, and
  a search of it finds the kernels the loss's Tensor op became, the ones that take the max, the exp and the log."""
  hits = mnist_trace.search("log_softmax")
  assert hits and kinds(hits) == {"origin"}
  want = {k.display_name for k in mnist_trace.kernels if any("log_softmax" in o.calls for o in k.origins)}
  assert {h.kernel.display_name for h in hits} == want
  assert all(h.step is h.kernel.group.steps[0] and "sparse_categorical_crossentropy calls log_softmax" in h.text for h in hits)
  ops = {tg.op_name(u) for h in hits for u in tg.toposort(h.step.before())}
  reduced = {tg.node_details(u)["arg"] for h in hits for u in tg.toposort(h.step.before()) if tg.op_name(u) == "REDUCE"}
  assert {"EXP2", "LOG2"} <= ops and any("Ops.MAX" in a for a in reduced), (ops, reduced)


def test_uops_are_found_where_they_first_appear_in_each_kernel(mnist_trace):
  hits = [h for h in mnist_trace.search("EXP2") if h.kind == "uop"]
  assert hits and all(h.text.startswith("EXP2") for h in hits)
  for h in hits:  # the node is in the graph the step started from, or in the one the match made
    graph = h.step.before() if h.match is None else h.step.at(h.match + 1)
    found = [u for u in tg.toposort(graph) if tg.node_key(u) == h.node]
    assert found and tg.op_name(found[0]) == "EXP2", h
  groups = {h.step.group.index for h in hits}
  assert len(groups) == len(hits)  # once per group: where it first appears
  holding = {g.index for g in mnist_trace.groups for s in g.steps
             if any(tg.op_name(u) == "EXP2" for graph in (s.before(), s.after()) for u in tg.toposort(graph))}
  assert holding <= groups


def test_the_users_line_finds_the_kernels_it_made(mnist_trace):
  hits = mnist_trace.search("mnist_train_step.py:27")  # loss.backward()
  assert hits and kinds(hits) == {"origin"} and all("mnist_train_step.py:27" in h.text for h in hits)
  want = {k for k in mnist_trace.kernels if any(o.file and where(o.file, o.line) == "mnist_train_step.py:27" for o in k.origins)}
  assert {id(h.kernel) for h in hits} == {id(k) for k in want} and len(want) > 10


def test_a_rule_is_found_in_each_step_it_fired_in(mnist_trace):
  hits = [h for h in mnist_trace.search("do_devectorize") if h.kind == "rule"]
  assert hits
  loc = hits[0].step.matches[hits[0].match].loc
  for h in hits:
    locs = [m.loc for m in h.step.matches]
    assert locs[h.match] == loc and locs.index(loc) == h.match and h.count == locs.count(loc), h
  assert sum(h.count for h in hits) == sum(m.loc == loc for s in mnist_trace.steps for m in s.matches)
  assert len(hits) == sum(any(m.loc == loc for m in s.matches) for s in mnist_trace.steps)
  by_file = [h for h in mnist_trace.search("uop/symbolic.py") if h.kind == "rule"]  # by the rule's source file
  assert by_file and all(h.step.matches[h.match].loc[0].endswith("uop/symbolic.py") for h in by_file)


def test_code_lines_are_found_in_their_kernels(mnist_trace):
  hits = [h for h in mnist_trace.search("get_local_id") if h.kind == "code"]
  want = {(k.display_name, n) for k in mnist_trace.kernels for n, line in enumerate(k.source.splitlines(), 1) if "get_local_id" in line}
  assert {(h.kernel.display_name, h.line) for h in hits} == want and want
  for h in hits:
    assert h.step is h.kernel.codegen_step and h.text == h.kernel.source.splitlines()[h.line - 1].strip()


def test_names_keys_and_nothing(mnist_trace):
  k = mnist_trace.kernels[-1]
  by_key = mnist_trace.search(k.short_key)
  assert any(h.kind == "kernel" and h.kernel is k for h in by_key)
  steps = [h for h in mnist_trace.search("View Base AST") if h.kind == "step"]
  assert len(steps) == sum(s.name == "View Base AST" for s in mnist_trace.steps)
  assert mnist_trace.search("no such thing anywhere") == [] and mnist_trace.search("  ") == []
  found = find(index(mnist_trace), "float")  # hits come grouped by kind, in KINDS' order
  assert [r[0] for r in found] == sorted((r[0] for r in found), key=KINDS.index)


CAPTURE = "import sys, workloads, tgviz\nwith tgviz.capture() as t: workloads.tutorial()\nt.save(sys.argv[1])\n"


def test_the_same_program_traced_twice_has_the_same_kernel_keys(tutorial_trace, tmp_path):
  with tgviz.capture() as again: workloads.tutorial()
  keys = [k.key for k in tutorial_trace.kernels]
  assert [k.key for k in again.kernels] == keys and all(len(k) == 64 for k in keys)
  subprocess.run([sys.executable, "-c", CAPTURE, str(tmp_path / "t.tgviz")], check=True, timeout=600, cwd=workloads.EXAMPLES.parents[1] / "tests")
  assert [k.key for k in tgviz.load(tmp_path / "t.tgviz").kernels] == keys  # in another process, and saved
  c = tgviz.compare(tutorial_trace, again)
  assert len(c.pairs) == len(keys) and all(p.how == "ast" and p.a.key == p.b.key for p in c.pairs)
  # accepted wherever a kernel is named: by its key or a prefix of it
  k = tutorial_trace.kernels[-1]
  assert tutorial_trace.find("View Base AST", kernel=k.short_key).group is k.group
  assert {s.group.index for s in tutorial_trace.select(kernel=k.key[:6])} == {k.group.index}
  assert c.pair(k.short_key).a is k


def test_a_notebooks_lines_are_named_by_their_cell(mnist_trace):
  """In a notebook the user's lines are in ipykernel's temporary files ("1002921068.py"): the index names them as the
  rest of the widget does, by the cell_label it is given ("Cell In[5], line 27"), and the temporary file's name is in no
  hit."""
  def cell_label(file: str) -> str | None:
    return "Cell In[5]" if file.endswith("mnist_train_step.py") else None
  by_file = find(index(mnist_trace), "mnist_train_step.py:27")
  by_cell = find(index(mnist_trace, cell_label), "Cell In[5], line 27")
  assert by_file and [r[1] for r in by_cell] == [r[1] for r in by_file]
  assert all("Cell In[5], line 27" in r[5] for r in by_cell)
  assert find(index(mnist_trace, cell_label), "mnist_train_step.py") == []
  assert index(mnist_trace) is index(mnist_trace) and index(mnist_trace, cell_label) is index(mnist_trace, cell_label)


def test_an_op_searched_finds_the_kernels_that_compute_it_not_the_rest_of_its_line():
  """The scores and the softmax on one line: "softmax" finds the kernels that compute softmax, not the scores' matmul
  and division, whose line only says it; a variable's name (text no op is called) still finds every kernel of its line."""
  from tinygrad import Tensor
  with tgviz.capture() as trace:
    q, k = Tensor.randn(2, 6, 16).realize(), Tensor.randn(2, 6, 16).realize()
    scores = ((q @ k.transpose(-1, -2) / 4).contiguous().softmax(-1)).realize()
  assert scores.shape == (2, 6, 6)
  found = [h for h in trace.search("softmax") if h.kind == "origin"]
  soft = {k.display_name for k in trace.kernels if any(o.op == "softmax" or "softmax" in o.calls for o in k.origins)}
  assert soft and {h.kernel.display_name for h in found} == soft, [(h.kernel.display_name, h.text) for h in found]
  assert all("softmax" in h.text.split("  ")[1] for h in found), [h.text for h in found]
  line = {h.kernel.display_name for h in trace.search("scores") if h.kind == "origin"}
  matmul = {k.display_name for k in trace.kernels if any(o.op == "__matmul__" for o in k.origins)} - soft
  assert matmul and line == {k.display_name for k in trace.kernels if any(o.source.startswith("scores =") for o in k.origins)} >= matmul | soft, line
