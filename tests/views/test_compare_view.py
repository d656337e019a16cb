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
  for n in (4, 6):  # a kernel each side only has
    with tgviz.capture() as t: (Tensor.ones(n).contiguous() + 1).realize()
    traces.append(t)
  rows = state(tgviz.compare(*traces, labels=("four", "six")))["rows"]
  hows = {r["how"] for r in rows}
  assert {"only in four", "only in six"} <= hows and not hows & {"only a", "only b"}, hows
