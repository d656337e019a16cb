"""Capture overhead: a block under tgviz.capture vs the same block under tinygrad's own env-var tracking, in one run.

Run: python benchmarks/capture_overhead.py  (sets TRACK_MATCH_STATS=2 and PARALLEL=0 before tinygrad is imported)
Prints, per workload, the median time of each and their ratio (target: at most 1.05x).
"""
import os, statistics, sys, time
from pathlib import Path

os.environ["TRACK_MATCH_STATS"], os.environ["PARALLEL"] = "2", "0"
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import tgviz  # noqa: E402
from tgviz import _tinygrad as tg  # noqa: E402
import workloads  # noqa: E402


def tinygrad_tracked(fn) -> float:
  tg._clear_caches()  # same cold caches the capture starts from
  st = time.perf_counter()
  fn()
  return time.perf_counter() - st


def captured(fn) -> float:
  st = time.perf_counter()
  with tgviz.capture():
    fn()
  return time.perf_counter() - st


if __name__ == "__main__":
  reps = int(os.environ.get("REPS", "5"))
  for fn in (workloads.tutorial, workloads.cnn, workloads.mlp):
    fn()  # warm: open the device, import everything
    base, ours = [], []
    for _ in range(reps):
      base.append(tinygrad_tracked(fn))
      ours.append(captured(fn))
    b, o = statistics.median(base), statistics.median(ours)
    print(f"{fn.__name__:9s} tinygrad tracking {b*1e3:8.1f} ms   tgviz.capture {o*1e3:8.1f} ms   ratio {o/b:5.3f}x")
