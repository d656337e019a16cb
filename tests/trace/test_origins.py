"""A kernel's origins name the user's ops and lines it computes, and only those: not the line that made a buffer it
only reads, and none left without one (the optimizer's own Tensors, an assign's copy)."""
import sys

import workloads
from tinygrad import Tensor

import tgviz
from tgviz.trace.access import trace_params
from tgviz.views import programmap as PM
from tgviz.views import protocol as P


def test_a_kernel_does_not_name_the_line_that_made_what_it_reads():
  """x and the weights are realized on their own lines: the scores kernel reads them and names only its own line."""
  with tgviz.capture() as trace:
    x = Tensor.randn(2, 6, 16).realize(); x_line = sys._getframe().f_lineno
    q, k = [x @ Tensor.randn(16, 16).realize() for _ in range(2)]; qk_line = sys._getframe().f_lineno
    ((q @ k.transpose(-2, -1)) / 4).realize(); scores_line = sys._getframe().f_lineno
  scores = [kn for kn in trace.kernels if any(o.line == scores_line for o in kn.origins)]
  assert scores, [(kn.name, kn.origins) for kn in trace.kernels]
  for kn in scores:
    assert {(o.op, o.line) for o in kn.origins} == {("__matmul__", scores_line), ("__truediv__", scores_line)}, (kn.name, kn.origins)
  matmul = [kn for kn in trace.kernels if any(o.line == qk_line and o.op == "__matmul__" for o in kn.origins)]
  assert matmul and all({o.line for o in kn.origins} == {qk_line} for kn in matmul), [(kn.name, kn.origins) for kn in matmul]
  assert not any(o.line == x_line for kn in scores + matmul for o in kn.origins)  # not randn, nor any op of x's line
  # what the widget shows: the kernel header's Tensor ops, and the program map's lines of the kernel
  here = f"test_origins.py:{scores_line}"
  for kn in scores: assert [(o["op"], o["where"]) for o in P.kernel_info(kn.group)["origins"]] == [("__matmul__", here), ("__truediv__", here)]
  mapped = [m for m in PM.program_map(trace)["kernels"] if m["name"] in {kn.name for kn in scores}]
  assert mapped and all(m["lines"] and all(line.startswith(here + " ") for line in m["lines"]) for m in mapped), mapped


def test_every_kernel_of_a_training_step_names_a_line_of_the_user():
  """The SGD step of an MLP: every kernel (the optimizer's, the gradients', the assigns' copies) has an origin at a
  line of the workload's code."""
  with tgviz.capture() as trace:
    workloads.mlp_train()
  assert trace.kernels
  missing = [kn.name for kn in trace.kernels if not any(o.file == workloads.__file__ and o.line for o in kn.origins)]
  assert not missing, missing


def test_a_kernel_that_fuses_randn_into_a_conv_names_both():
  """x is made by randn in the same lazy graph as the grouped strided conv: randn's Box-Muller (sin, log2, sqrt) runs
  in the conv's kernel, which names randn (the user's call, not randn_like inside it) at x's line and conv2d at the conv's."""
  with tgviz.capture() as trace:
    x = Tensor.randn(1, 4, 5, 5); x_line = sys._getframe().f_lineno
    w = Tensor.randn(4, 2, 2, 2).realize()
    x.conv2d(w, groups=2, stride=2).realize(); conv_line = sys._getframe().f_lineno
  conv = [kn for kn in trace.kernels if any(o.op == "conv2d" for o in kn.origins)]
  assert len(conv) == 1 and all(f in conv[0].source for f in ("sin(", "log2(", "sqrt(")), [(kn.name, kn.origins) for kn in trace.kernels]
  assert {("randn", x_line), ("conv2d", conv_line)} <= {(o.op, o.line) for o in conv[0].origins}, conv[0].origins
  # the program map's box says both lines, not only the conv's (it read "randn, conv2d · line 4": randn is on line 2)
  kernels_view = next(v for v in PM.program_map(trace)["views"] if v["name"] == "kernels")
  assert f"test_origins.py:{x_line}, {conv_line}<" in kernels_view["svg"], kernels_view["svg"]


def test_a_relu_that_rangeify_moves_under_sums_view_names_relu():
  """A grouped strided conv, relu, sum on one line (new-user pass 9): the kernel listed randn, conv2d and sum, not relu,
  and its MAX said "made by sum": rangeify made sum's view of relu's WHERE into a WHERE (the view, which has no op of
  its own, pushed into it), which the symbolic rewrite then made a MAX. The kernel names relu; the MAX is relu's."""
  with tgviz.capture() as trace:
    Tensor.randn(1, 4, 9, 9).conv2d(Tensor.randn(4, 2, 3, 3), groups=2, stride=2).relu().sum().realize(); line = sys._getframe().f_lineno
  (conv,) = [kn for kn in trace.kernels if any(o.op == "conv2d" for o in kn.origins)]
  assert [o.op for o in conv.origins] == ["randn", "conv2d", "relu", "sum"] and {o.line for o in conv.origins} == {line}, conv.origins
  made = {u.op.name: [o.op for o in conv.origins_of(u)] for u in tgviz.bridge.toposort(conv.base_ast) if u.op.name in ("MAX", "STORE")}
  assert made == {"MAX": ["relu"], "STORE": ["sum"]}, made


def test_a_max_pool_kernel_does_not_name_the_conv_that_reads_its_output():
  """conv -> relu -> max_pool2d on one line, a conv of the pooled on the next, and a backward pass: the kernels that
  compute the pool name relu and max_pool2d at its line, not the next line's conv2d, whose reshapes of the pooled value
  tinygrad's rewrites push into the pool's REDUCE (the MNIST step's r_26_13_32_2_2 named conv2d at line 14)."""
  with tgviz.capture() as trace:
    x = Tensor.randn(2, 1, 12, 12).realize()
    w1, w2 = Tensor.randn(4, 1, 3, 3).realize(), Tensor.randn(8, 4, 3, 3).realize()
    w1.requires_grad = w2.requires_grad = True
    y = x.conv2d(w1).relu().max_pool2d(); pool_line = sys._getframe().f_lineno
    y.conv2d(w2).relu().sum().backward(); conv_line = sys._getframe().f_lineno
    Tensor.realize(w1.grad, w2.grad)
  pools = [kn for kn in trace.kernels if ("max_pool2d", pool_line, False) in {(o.op, o.line, o.backward) for o in kn.origins}]
  assert pools, [(kn.display_name, kn.origins) for kn in trace.kernels]
  for kn in pools:
    assert {(o.op, o.line) for o in kn.origins if not o.backward} <= {("relu", pool_line), ("max_pool2d", pool_line)}, (kn.display_name, kn.origins)
  # the forward pool alone: what computes y and nothing of the conv's line
  assert any({(o.op, o.line, o.backward) for o in kn.origins} == {("relu", pool_line, False), ("max_pool2d", pool_line, False)} for kn in pools)
  assert conv_line == pool_line + 1


def test_every_kernel_of_the_mnist_step_names_a_line_of_the_script():
  """examples/scripts/mnist_train_step.py (an Adam step of a convnet): none of its kernels is left without an origin in
  the script (Adam's own buffers name the line that made the optimizer, its updates the line with opt.step())."""
  with tgviz.capture() as trace:
    workloads.example("mnist_train_step.py")
  assert len(trace.kernels) > 40
  missing = [kn.name for kn in trace.kernels if not any(o.file == "mnist_train_step.py" and o.line for o in kn.origins)]
  assert not missing, missing
  step_line = next(i for i, ln in enumerate((workloads.EXAMPLES / "mnist_train_step.py").read_text().splitlines(), 1) if "opt.step()" in ln)
  assert any(o.line == step_line for kn in trace.kernels for o in kn.origins)


def test_random_tensors_name_the_users_call_not_tinygrads_internals():
  """Tensor.rand is a classmethod tinygrad does not wrap with its op metadata: the methods it runs inside make their own
  (_threefry_random_bits, cat, __getitem__, ...). Its kernels name the user's call, rand at the user's line, once."""
  with tgviz.capture("CPU") as trace:
    x = Tensor.rand(4, 4); rand_line = sys._getframe().f_lineno
    (x * 2).realize(); mul_line = sys._getframe().f_lineno
  lines = {kn.name: [(o.op, o.line) for o in kn.origins] for kn in trace.kernels}
  assert sorted(o for os_ in lines.values() for o in os_) == sorted([("rand", rand_line)] * (len(lines) - 1) + [("__mul__", mul_line)]), lines


def test_two_random_tensors_realized_together_each_name_their_own_line():
  """x and w are drawn on two lines and realized together by the conv. The two draws build the same key from the seed
  (equal UOps are one UOp in tinygrad, and it keeps the metadata of the last Tensor method that made it): still, the
  kernels that draw x's bits name x's line only, those that draw w's name w's line only, and the conv names both and
  its own."""
  with tgviz.capture() as trace:
    x = Tensor.randn(1, 4, 8, 8); x_line = sys._getframe().f_lineno
    w = Tensor.randn(4, 2, 2, 2); w_line = sys._getframe().f_lineno
    x.conv2d(w, groups=2, stride=2).realize(); conv_line = sys._getframe().f_lineno
  lines = [(kn.name, {(o.op, o.line) for o in kn.origins}) for kn in trace.kernels]
  draws = [o for _, o in lines if ("conv2d", conv_line) not in o]
  assert {("randn", x_line)} in draws and {("randn", w_line)} in draws and all(o in ({("randn", x_line)}, {("randn", w_line)}) for o in draws), lines
  conv = next(kn for kn in trace.kernels if any(o.op == "conv2d" for o in kn.origins))
  # in the order the lines called them, and known by the conv's line, what it stores: in the program map's box and in
  # the access tab's "written by" (they named x's line, and line 3 of 2-4)
  assert [(o.op, o.line) for o in conv.origins] == [("randn", x_line), ("randn", w_line), ("conv2d", conv_line)], conv.origins
  assert tgviz.bridge.main_origin(conv.origins).line == conv_line
  box = next(b for b in PM.program_map(trace)["kernels"] if b["name"] == conv.display_name)
  assert box["lines"] == [f"test_origins.py:{n} " + src for n, src in zip((x_line, w_line, conv_line), (
    "x = Tensor.randn(1, 4, 8, 8); x_line = sys._getframe().f_lineno", "w = Tensor.randn(4, 2, 2, 2); w_line = sys._getframe().f_lineno",
    "x.conv2d(w, groups=2, stride=2).realize(); conv_line = sys._getframe().f_lineno"), strict=True)], box
  written = {text for params in trace_params(trace).values() for _, _, text in params if text and conv.display_name in text}
  conv_src = "x.conv2d(w, groups=2, stride=2).realize(); conv_line = sys._getframe().f_lineno"
  assert written == {f"written by {conv.display_name}, line {conv_line}: {conv_src}"}, written


def test_a_node_of_a_kernels_ast_names_the_op_that_made_it():
  """In the kernel that fuses two randn into a conv, a node's panel says which of the user's ops made it: the conv's
  REDUCE and STORE conv2d, each randn's LOG2 and SIN that randn (its line), not every op of the kernel; a node made
  from the kernel's AST through later rewrites says it too, at the end of its "came from"."""
  with tgviz.capture() as trace:
    x = Tensor.randn(1, 4, 8, 8); x_line = sys._getframe().f_lineno
    w = Tensor.randn(4, 2, 2, 2); w_line = sys._getframe().f_lineno
    x.conv2d(w, groups=2, stride=2).realize(); conv_line = sys._getframe().f_lineno
  conv = next(kn for kn in trace.kernels if any(o.op == "conv2d" for o in kn.origins))
  ast = tgviz.bridge.toposort(conv.base_ast)
  def made(op: str) -> list[set]: return [{(o.op, o.line) for o in conv.origins_of(u)} for u in ast if u.op.name == op]
  assert made("REDUCE") == [{("conv2d", conv_line)}] and made("STORE") == [{("conv2d", conv_line)}], (made("REDUCE"), made("STORE"))
  assert sorted(map(sorted, made("LOG2"))) == [[("randn", x_line)], [("randn", w_line)]], made("LOG2")
  assert all(len(m) == 1 for op in ("SIN", "SQRT") for m in made(op))
  # the node panel: a LOG2 of the rendered kernel, followed back to the AST, names its randn only
  log2 = next(u for u in tgviz.bridge.toposort(conv.codegen_step.after()) if u.op.name == "LOG2")
  msg = P.node_message(trace, P.step_key(conv.codegen_step), None, tgviz.bridge.node_key(log2))
  assert msg["origins_own"] and [o["op"] for o in msg["origins"]] == ["randn"] and msg["lineage"][-1]["kind"] == "input", msg["origins"]


def test_code_run_with_exec_names_its_own_lines_and_the_users_call():
  """Code run from a string (exec, as a test or a tool may run a user's cell) is the user's: its kernels name randn,
  the call in it, and the lines in the string, not randn_like inside randn at the line that called exec."""
  code = "from tinygrad import Tensor\nx = Tensor.randn(2, 6, 16).realize()\ny = (x * 2).realize()\n"
  with tgviz.capture() as trace: exec(code, {})
  named = sorted({(o.op, o.line) for kn in trace.kernels for o in kn.origins})
  assert named == [("__mul__", 3), ("randn", 2)], named
