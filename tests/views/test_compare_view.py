"""The comparison's state as the page shows it: values that name a side by its letter in Comparison.kernel_table
("b slower", "only a") name it by its label."""
from tinygrad import Tensor

import tgviz
from tgviz.views.compare import said, state


def test_the_sides_are_named_by_their_labels():
  labels = ("original (heuristic)", "retry")
  assert [said(v, labels) for v in ("b faster", "b slower", "only a", "only b", "within noise", "cold", "ast", None)] == \
    ["retry faster", "retry slower", "only in original (heuristic)", "only in retry", "within noise", "cold", "ast", None]
  traces = []
  for run in (lambda: (Tensor.ones(4).contiguous() + 1).realize(), lambda: Tensor.full((6,), 2.0).contiguous().exp2().realize()):
    with tgviz.capture() as t: run()  # a kernel each side only has, of other ops
    traces.append(t)
  rows = state(tgviz.compare(*traces, labels=("four", "six")))["rows"]
  hows = {r["how"] for r in rows}
  assert {"only in four", "only in six"} <= hows and not hows & {"only a", "only b", "same ops"}, hows


def test_kernels_of_the_same_ops_are_in_a_side_not_only_in_it():
  """Kernels of other shapes computing the same ops are a group ("same ops"), each under it "in four" or "in six": the
  other side computes those ops too (its rows said "only in four" under "same ops: 1 kernel ↔ 1 kernel")."""
  traces = []
  for n in (4, 6):
    with tgviz.capture() as t: (Tensor.ones(n).contiguous() + 1).realize()
    traces.append(t)
  rows = state(tgviz.compare(*traces, labels=("four", "six")))["rows"]
  grouped = [r for r in rows if r.get("under") is not None]
  assert grouped and {r["how"] for r in grouped} == {"in four", "in six"}, [(r["how"], r.get("under")) for r in rows]
  assert all(rows[r["under"]]["how"] == "same ops" for r in grouped)
