"""What if the compiler chose other optimizations? The tutorial's conv2d and a matmul: the opts tinygrad applied and who
chose them, each kernel retried with none, with a larger upcast and with locals (compiled again, run on the same inputs
as the original, timed, compared), an opt tinygrad refuses, then BEAM=2's search. Runs as it is (python what_if.py) and
under tgviz run; the notebook examples/06_what_if.ipynb shows the same with the widgets."""
from tinygrad import Tensor

import tgviz


def show_retries(kernel, opt_lists):
  """Retry kernel with each list of opts; every retry must compute what the original did, with both times measured."""
  print(f"kernel {kernel.name} opts by {kernel.opts_by}: {', '.join(map(str, kernel.opts)) or 'none'}")
  retries = [kernel.retry(opts) for opts in opt_lists]
  for r in retries:
    print(" ", r)
    assert r.ok and r.same, r
    assert None not in r.times_us()
  return retries


# the tutorial's conv2d: a 3x3 input, a 2x2 filter of ones
x = Tensor.arange(9).reshape(1, 1, 3, 3).float().realize()
weight = Tensor.ones(1, 1, 2, 2).realize()
with tgviz.capture() as conv:
  result = x.conv2d(weight).realize()
assert result.tolist() == [[[[8.0, 12.0], [20.0, 24.0]]]]
conv_kernel = next(k for k in conv.kernels if k.name == "r_2_2_2_2")
assert conv_kernel.opts_by == "heuristic" and [o.op for o in conv_kernel.opts] == ["UNROLL", "UNROLL", "LOCAL", "LOCAL"]
assert [step.name for _, step in conv_kernel.opt_steps] == ["shift (1,) 2 unroll", "shift (0,) 2 unroll", "shift (2,) 2 local",
                                                            "shift (3,) 2 local"]  # the rewrite step each opt made
show_retries(conv_kernel, [[], [("UPCAST", 0, 0)], [("LOCAL", 0, 2)], [("LOCAL", 0, 2), ("UNROLL", 0, 0)]])

# a 64x64 matmul
Tensor.manual_seed(0)
a, b = Tensor.randn(64, 64).realize(), Tensor.randn(64, 64).realize()
with tgviz.capture() as matmul:
  product = (a @ b).realize()
(mm,) = matmul.kernels
assert mm.name == "r_2_8_16_4_4_16_4" and mm.opts_by == "heuristic"
retries = show_retries(mm, [[], [("UPCAST", 0, 8), ("UPCAST", 1, 4), ("UNROLL", 0, 4)],
                            [("UPCAST", 0, 4), ("UPCAST", 1, 4), ("LOCAL", 0, 8), ("LOCAL", 1, 8)]])
assert retries[0].retried.name == "r_64_64_64"
print(retries[2].comparison())

refused = mm.retry([("UPCAST", 0, 4), ("UPCAST", 0, 3)])  # 3 does not divide what is left of the axis
print(" ", refused)
assert not refused.ok and refused.error.startswith("tinygrad refused UPCAST(0, 3): 3 can't divide")

# BEAM=2 searches the opts by timing candidates: a 32x32 matmul on tinygrad's CPU device, which compiles them much faster
# than PoCL; CACHELEVEL=0: a real search, not an answer from BEAM's cache
a_cpu, b_cpu = Tensor.randn(32, 32, device="CPU").realize(), Tensor.randn(32, 32, device="CPU").realize()
with tgviz.capture("CPU", env={"BEAM": 2, "CACHELEVEL": 0}) as beam:
  (a_cpu @ b_cpu).realize()
(searched,) = beam.kernels
timed = searched.search.timed
print(f"kernel {searched.name} opts by {searched.opts_by}: {', '.join(map(str, searched.opts))}; BEAM timed {len(timed)} "
      f"candidates, {len(searched.search.candidates) - len(timed)} more not timed")
assert searched.opts_by == "BEAM" and timed and tuple(searched.opts) == searched.search.winner
fastest = min(timed, key=lambda c: c.time)
print(f"  fastest candidate: {', '.join(map(str, fastest.opts))} in {fastest.time * 1e6:.1f} µs")
