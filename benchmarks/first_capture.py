"""The first capture in a fresh process: `tgviz.capture()` vs tinygrad's own tracking (VIZ=-1 set before tinygrad is
imported), and vs a plain run, on the 8x33 softmax (tests/workloads.py), each the first run of a fresh python.

Run: nice -n 10 .venv/bin/python benchmarks/first_capture.py   (REPS=7 fresh processes of each kind, interleaved;
WORKLOAD=softmax, or another function of tests/workloads.py)
Each child imports tinygrad and tgviz (the same device set-up: DEV, else OpenCL on PoCL), then times the workload's
first run, opening the device included (CPU time of the process, all its threads; wall time for reference) as one of:
  capture   `with tgviz.capture(): workload()`, entering and leaving the capture included
  viz       the workload under tinygrad's own tracking: VIZ=-1 in the environment at import (TRACK_MATCH_STATS=2,
            PROFILE=1, PARALLEL=0 by default, as a capture sets them)
  plain     the workload with PARALLEL=0 and no tracking
Prints the minimum of each over the fresh processes and the ratio capture / viz (target: at most 1.05x), and, per kind,
the patterns compiled (upat_compile's distinct patterns) and graph_rewrite calls of one more child each.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KINDS = ("capture", "viz", "plain")


def child(kind: str, workload: str, count: bool) -> dict:
  """Runs in a fresh process (this file with --child)."""
  import time
  sys.path.insert(0, str(ROOT / "tests"))
  import workloads

  import tgviz
  fn = getattr(workloads, workload)
  counts: dict[str, int] = {}
  from tinygrad.uop import ops, upat
  if count:  # count graph_rewrite calls (every module's name for it), which costs time: a run that counts is not timed
    def counting(*a, rewrite=ops.graph_rewrite, **k):
      counts["graph_rewrite"] = counts.get("graph_rewrite", 0) + 1
      return rewrite(*a, **k)
    for mod in [m for n, m in list(sys.modules.items()) if n.startswith("tinygrad") and m is not None]:
      if getattr(mod, "graph_rewrite", None) is ops.graph_rewrite: mod.graph_rewrite = counting
  st, wall = time.process_time(), time.perf_counter()
  if kind == "capture":
    with tgviz.capture(): fn()
  else: fn()
  return {"s": time.process_time() - st, "wall": time.perf_counter() - wall, "upat_compile": upat.upat_compile.cache_info().misses,
          **counts}


def in_child(kind: str, workload: str, count: bool = False) -> dict:
  env = {**os.environ, "PARALLEL": "0"}
  env.pop("VIZ", None)
  if kind == "viz": env["VIZ"] = "-1"
  args = [sys.executable, __file__, "--child", kind, workload] + (["--count"] if count else [])
  r = subprocess.run(args, capture_output=True, text=True, cwd=ROOT, env=env)
  if r.returncode: sys.exit(f"child {kind} failed:\n{r.stderr}")
  return json.loads(r.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
  if sys.argv[1:2] == ["--child"]:
    print(json.dumps(child(sys.argv[2], sys.argv[3], "--count" in sys.argv)))
    sys.exit(0)
  reps, workload = int(os.environ.get("REPS", "7")), os.environ.get("WORKLOAD", "softmax")
  runs: dict[str, list[dict]] = {k: [] for k in KINDS}
  for _ in range(reps):
    for kind in KINDS: runs[kind].append(in_child(kind, workload))
  best = {k: min(r["s"] for r in v) for k, v in runs.items()}
  wall = {k: min(r["wall"] for r in v) for k, v in runs.items()}
  counts = {k: in_child(k, workload, count=True) for k in KINDS}
  print(f"{workload}, first run in a fresh process, min of {reps} each (CPU s):")
  for k in KINDS:
    print(f"  {k:8s} {best[k]*1e3:8.1f} ms (wall {wall[k]*1e3:7.1f} ms)   graph_rewrite calls {counts[k].get('graph_rewrite', 0):4d}   "
          f"patterns compiled {counts[k].get('upat_compile', 0):4d}")
  print(f"capture / viz {best['capture'] / best['viz']:.3f}x (target at most 1.05x; wall {wall['capture'] / wall['viz']:.3f}x)   "
        f"viz / plain {best['viz'] / best['plain']:.3f}x   capture / plain {best['capture'] / best['plain']:.3f}x")
