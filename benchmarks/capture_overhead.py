"""Capture overhead: a block under tgviz.capture vs the same block under tinygrad's own env-var tracking, in one run.

Run: python benchmarks/capture_overhead.py  (sets TRACK_MATCH_STATS=2 and PARALLEL=0 before tinygrad is imported)
Prints, per workload, the fastest of REPS runs of each (CPU time of this process, all its threads: the least noisy
figure on a shared machine) and their ratio (target: at most 1.05x), and the ratio of the medians for reference; then,
for reference, tinygrad's tracking with VIZ=-1 too (what a capture records: the "View ..." landmarks and each group's
call stack, which cost tinygrad a few percent) and the capture against that; last, the capture without tinygrad's
profiler (capture(profile=False)) and what profiling costs (capture / that). The workloads include a 200-step TinyJit
training loop (3,800 launches), where profiling's per-launch cost (tinygrad's own PROFILE=1 bookkeeping) shows.
"""
import os
import statistics
import sys
import time
from pathlib import Path

os.environ["TRACK_MATCH_STATS"], os.environ["PARALLEL"] = "2", "0"
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import workloads  # noqa: E402
from tinygrad.helpers import Context  # noqa: E402

import tgviz  # noqa: E402
from tgviz.bridge.capture import clear_caches  # noqa: E402


def tinygrad_tracked(fn, viz: int = 0) -> float:
  clear_caches()  # same cold caches the capture starts from
  st = time.process_time()
  with Context(VIZ=viz): fn()
  return time.process_time() - st


def captured(fn, profile: bool = True) -> float:
  st = time.process_time()
  with tgviz.capture(profile=profile):
    fn()
  return time.process_time() - st


def jit_loop() -> None:
  workloads.jit_train(200)


if __name__ == "__main__":
  reps = int(os.environ.get("REPS", "7"))
  for fn in (workloads.tutorial, workloads.softmax, workloads.cnn, workloads.mlp, jit_loop):
    fn()  # warm: open the device, import everything
    base, ours, viz, plain = [], [], [], []
    for _ in range(reps):
      base.append(tinygrad_tracked(fn))
      ours.append(captured(fn))
      viz.append(tinygrad_tracked(fn, viz=-1))
      plain.append(captured(fn, profile=False))
    b, o, v, p = min(base), min(ours), min(viz), min(plain)
    print(f"{fn.__name__:9s} tinygrad tracking {b*1e3:8.1f} ms   tgviz.capture {o*1e3:8.1f} ms   ratio {o/b:5.3f}x   "
          f"(medians: {statistics.median(ours) / statistics.median(base):5.3f}x)   "
          f"[tracking with VIZ=-1 {v*1e3:8.1f} ms = {v/b:5.3f}x; capture / that {o/v:5.3f}x]   "
          f"[capture(profile=False) {p*1e3:8.1f} ms; profiling {o/p:5.3f}x]")
