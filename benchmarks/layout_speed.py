"""Layout speed: before/after SVGs of steps, first pictures of every MLP step, engine vs Debian's dot.

Run: python benchmarks/layout_speed.py   (FULL=0 skips the largest-full-layout search)
Targets: p95 under 150 ms uncached and 5 ms cached for union graphs of <= 300 nodes; every MLP step's first
picture within 2 s; the largest full layout achieved within 30 s; per-graph time of the shipped engine vs dot.
"""
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("TGVIZ_LAYOUT_CACHE", "")  # layouts timed as a first run makes them, not from an earlier run's (draw/layout_store.py)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import workloads

import tgviz
from tgviz.draw import dot as Dot
from tgviz.draw.engine import run_dot, set_engine
from tgviz.draw.scene import focus
from tgviz.views import picture as P


def p95(xs): return sorted(xs)[max(0, int(len(xs) * 0.95) - 1)]


def main() -> None:
  traces = {}
  for fn in (workloads.tutorial, workloads.cnn, workloads.mlp):
    with tgviz.capture() as traces[fn.__name__]: fn()
  # 1. small steps, uncached and cached
  small, cached = [], []
  for name in ("tutorial", "cnn"):
    for step in traces[name].steps:
      if len(P.scene_of(step, None).nodes) > 300: continue
      st = time.perf_counter(); step.svg(); small.append(time.perf_counter() - st)
      st = time.perf_counter(); step.svg(); cached.append(time.perf_counter() - st)
  print(f"union <= 300 nodes: {len(small)} steps, p95 uncached {p95(small)*1e3:.1f} ms (target 150), "
        f"p95 cached {p95(cached)*1e3:.3f} ms (target 5)")
  # 2. every MLP step gets a first picture
  times, partial = [], 0
  for step in traces["mlp"].steps:
    st = time.perf_counter(); pic = P.picture(step); times.append((time.perf_counter() - st, step, pic))
    partial += pic.partial
  worst = max(times, key=lambda t: t[0])
  print(f"MLP: {len(times)} steps, first picture max {worst[0]:.2f} s ({worst[1].path}, {worst[2].shown}/{worst[2].total} nodes), "
        f"p95 {p95([t[0] for t in times]):.3f} s (target: max under 2 s); {partial} focused")
  # 3. shipped engine vs Debian's dot on the same DOT files
  biggest = sorted({id(t[1]): t for t in times}.values(), key=lambda t: -t[2].total)
  dots = []
  for _, step, _ in biggest[:: max(1, len(biggest) // 12)][:12]:
    scene = focus(P.scene_of(step, None), 300)
    dots.append((len(scene.nodes), Dot._dot(scene, fast=len(scene.nodes) > 400)[0]))
  if shutil.which("dot"):
    ratios = []
    for n, dot in dots:
      set_engine("graphviz-pure"); st = time.perf_counter(); run_dot(dot, timeout=None); ours = time.perf_counter() - st
      set_engine("dot"); st = time.perf_counter(); run_dot(dot, timeout=None); theirs = time.perf_counter() - st
      ratios.append(ours / theirs)
      print(f"  {n:4d} nodes: graphviz-pure {ours*1e3:7.1f} ms  dot {theirs*1e3:7.1f} ms  ratio {ours/theirs:.2f}")
    print(f"engine ratio graphviz-pure/dot: median {statistics.median(ratios):.2f}x over {len(ratios)} graphs")
    set_engine(None)
  else: print("Debian's dot not installed (apt-get install graphviz): engine ratio not measured")
  # 4. the largest full layout within 30 s: graphs of growing size until one does not finish
  if os.environ.get("FULL", "1") != "0":
    best, big = None, sorted({t[2].total: t for t in times if t[2].total > 300}.values(), key=lambda t: t[2].total)
    for _, step, pic in list(dict.fromkeys([*big[:: max(1, len(big) // 5)], *big[-2:]])):
      st = time.perf_counter(); full = P.picture(step, view="full", timeout=30); t = time.perf_counter() - st
      if full.partial:
        print(f"  full layout of {pic.total} nodes ({step.path}): over 30 s"); break
      best = (full.total, t, step.path)
      print(f"  full layout of {full.total} nodes in {t:.1f} s ({step.path})")
    if best: print(f"largest full layout within 30 s: {best[0]} nodes in {best[1]:.1f} s ({best[2]})")

if __name__ == "__main__":
  main()
