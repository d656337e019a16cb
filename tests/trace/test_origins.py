"""A kernel's origins name the user's ops and lines it computes, and only those: not the line that made a buffer it
only reads, and none left without one (the optimizer's own Tensors, an assign's copy)."""
import sys

import workloads
from tinygrad import Tensor

import tgviz


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
  assert not any(o.op == "randn_like" and o.line == x_line for kn in scores + matmul for o in kn.origins)


def test_every_kernel_of_a_training_step_names_a_line_of_the_user():
  """The SGD step of an MLP: every kernel (the optimizer's, the gradients', the assigns' copies) has an origin at a
  line of the workload's code."""
  with tgviz.capture() as trace:
    workloads.mlp_train()
  assert trace.kernels
  missing = [kn.name for kn in trace.kernels if not any(o.file == workloads.__file__ and o.line for o in kn.origins)]
  assert not missing, missing
