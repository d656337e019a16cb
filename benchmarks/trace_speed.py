"""Reading a trace: before()/after() of every step of the MLP trace vs tinygrad's own VIZ replay of the same trace.

Run: python benchmarks/trace_speed.py
Targets: before()/after() p95 under 50 ms; all steps' before and after in at most 1/10 of tinygrad's replay time.
(tinygrad's replay is tinygrad.viz.serve.get_full_rewrite, which also renders each graph for its web page.)
"""
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import workloads
from tinygrad.uop.ops import RewriteTrace, TrackedGraphRewrite
from tinygrad.viz import serve

import tgviz


def main() -> None:
  with tgviz.capture() as trace: workloads.mlp()
  steps = list(trace.steps)
  print(f"MLP trace: {len(trace.groups)} groups, {len(steps)} steps, {sum(len(s.matches) for s in steps)} matches")
  times = []
  st_all = time.perf_counter()
  for s in steps:
    st = time.perf_counter(); s.before(); s.after(); times.append(time.perf_counter() - st)
  ours = time.perf_counter() - st_all
  times.sort()
  print(f"before()+after(): p95 {times[int(len(times) * 0.95)] * 1e3:.2f} ms, max {times[-1] * 1e3:.2f} ms, "
        f"all steps {ours:.3f} s")
  rec = steps[0]._rec
  data = serve.VizData(RewriteTrace([], [], rec.uop_fields))
  st = time.perf_counter()
  for s in steps:
    r = s._raw
    for _ in serve.get_full_rewrite(data, TrackedGraphRewrite(r.loc, r.sink, r.matches, r.name, r.depth, r.bottom_up,
                                                              r.walk, r.enter_calls)): pass
  viz = time.perf_counter() - st
  print(f"tinygrad VIZ replay of every step: {viz:.1f} s; tgviz/VIZ = 1/{viz / ours:.0f}")


if __name__ == "__main__":
  main()
