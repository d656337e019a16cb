"""Reading a trace: the first access of step.at(k) on the biggest steps of the MLP, the CNN and the MNIST training step,
vs tinygrad's own VIZ replay of the same k.

Run: python benchmarks/trace_speed.py   (STEPS=3 biggest steps per workload, K=20 random k per step besides the middle and last)
Targets: first access of step.at(k) p95 at most 50 ms, worst at most 0.5 s, per workload.
Also stepping back (BACK=40 steps) from the last graph of each workload's biggest walk step (substitute with walk=True:
only the replay's chain makes its graphs), as the widget's slider steps back: each step after the last graph, timed.
Each k is timed cold: the trace's replay cache and its weak cache of rebuilt UOps are cleared (and garbage collected)
before every access, as a fresh capture's step would start. tinygrad's replay is tinygrad.viz.serve.get_full_rewrite
(its per-graph JSON and text rendering for the web page stubbed out, as in tests/trace/test_trace.py); its time to graph k is
the time its generator takes to yield graph k, from one pass over the step.
"""
import gc
import os
import random
import runpy
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import workloads
from tinygrad.uop.ops import RewriteTrace, TrackedGraphRewrite
from tinygrad.viz import serve

import tgviz

ROOT = Path(__file__).resolve().parent.parent


def mnist() -> None: runpy.run_path(str(ROOT / "examples" / "scripts" / "mnist_train_step.py"), run_name="__main__")
def p95(xs): return sorted(xs)[max(0, int(len(xs) * 0.95) - 1)]


def cold_at(step, k: int) -> float:
  step._rec._replayers.clear()
  step._rec._uops.clear()
  gc.collect()
  st = time.perf_counter(); step.at(k); return time.perf_counter() - st


def viz_times(step) -> list[float]:
  """Seconds from the start of tinygrad's VIZ replay of step to its graph k, for every k."""
  raw = step._raw
  tgr = TrackedGraphRewrite(raw.loc, raw.sink, raw.matches, raw.name, raw.depth, raw.bottom_up, raw.walk, raw.enter_calls)
  gc.collect()
  out, st = [], time.perf_counter()
  for _ in serve.get_full_rewrite(serve.VizData(RewriteTrace([], [], step._rec.uop_fields)), tgr): out.append(time.perf_counter() - st)
  return out


def step_back(trace, back: int) -> str:
  """The biggest walk step, stepped back from its last graph (as one replay: the widget's slider keeps it)."""
  walks = [s for s in trace.steps if s.options["walk"]]
  if not walks: return "no walk step"
  step = max(walks, key=lambda s: len(s.matches))
  step._rec._replayers.clear()
  n = len(step.matches)
  step.at(n)
  times = []
  for k in range(n - 1, max(-1, n - 1 - back), -1):
    st = time.perf_counter(); step.at(k); times.append(time.perf_counter() - st)
  return f"{step.path} ({n} matches), {len(times)} steps back: mean {sum(times) / len(times) * 1e3:6.1f} ms, worst {max(times) * 1e3:6.1f} ms"


def main() -> None:
  nsteps, nk, rng = int(os.environ.get("STEPS", "3")), int(os.environ.get("K", "20")), random.Random(0)
  serve.uop_to_json, serve.pystr = (lambda data, x: {}), (lambda u: "")
  for fn in (workloads.mlp, workloads.cnn, mnist):
    fn()  # warm: open the device, import everything
    with tgviz.capture() as trace: fn()
    ours, theirs = [], []
    for step in sorted(trace.steps, key=lambda s: -len(s.matches))[:nsteps]:
      n = len(step.matches)
      ks = [n // 2, n, *rng.sample(range(1, n + 1), min(nk, n))]
      t = [cold_at(step, k) for k in ks]
      v = viz_times(step)
      ours += t; theirs += [v[k] for k in ks]
      print(f"  {fn.__name__:5s} {step.path} ({n} matches): at(mid) {t[0]*1e3:6.1f} ms, at(last) {t[1]*1e3:6.1f} ms, "
            f"worst {max(t)*1e3:6.1f} ms; VIZ to last {v[-1]*1e3:7.1f} ms")
    print(f"{fn.__name__:5s} first step.at(k), {len(ours)} accesses: p95 {p95(ours)*1e3:6.1f} ms (target 50), worst {max(ours)*1e3:6.1f} ms "
          f"(target 500); VIZ replay of the same k: p95 {p95(theirs)*1e3:6.1f} ms, worst {max(theirs)*1e3:6.1f} ms; "
          f"VIZ/tgviz: p95 {p95(theirs)/p95(ours):.1f}x, total {sum(theirs)/sum(ours):.1f}x")
    print(f"{fn.__name__:5s} stepping back through {step_back(trace, int(os.environ.get('BACK', '40')))}")
    del trace


if __name__ == "__main__":
  main()
