"""What a capture is up against: one model step (benchmarks/model_scale.py's scripts) run in one process, tinygrad's
caches cleared before each run as capture() clears them, as
  plain        the script as a user runs it (tinygrad's PARALLEL default: on 2 cores a pool of 2 spawned workers compiles)
  serial       PARALLEL=0: every kernel compiled in the process itself
  viz          tinygrad's own tracking, VIZ=-1 in the environment at import (it sets PARALLEL=0 itself)
  capture      `with tgviz.capture(): ...` (below PARALLEL=3 it compiles in its own process: see tgviz.bridge.parallel)
  capture-pool the capture with its compiles traced in tinygrad's pool (bridge.parallel.POOL_FROM lowered to 2)
Each in a fresh python (the same device set-up: DEV, else CPU), a warm-up run first, then RUNS (default 2) timed runs;
prints per kind the fastest run's wall time, its CPU time in the process, and the CPU time of the compile workers (the
pool is shut after each run, so its workers' time is counted; a fresh pool starts with the next run, as tinygrad
starts one with a process), and each kind's wall time against plain's.

Run: nice -n 10 .venv/bin/python benchmarks/capture_baselines.py   (MODEL=gpt|mnist|resnet|lstm|gpt-big, default gpt;
KINDS=plain,capture picks some)
"""
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from model_scale import ENV, MODELS, SIZES

KINDS = ("plain", "serial", "viz", "capture", "capture-pool")
RUNS = int(os.environ.get("RUNS", "2"))


def child(kind: str, script: str) -> dict:
  """In a fresh process (this file with --child): the warm-up run, then RUNS timed ones."""
  import gc
  import runpy
  from contextlib import nullcontext

  import tgviz
  from tgviz.bridge import parallel
  from tgviz.bridge.capture import clear_caches
  if kind == "capture-pool": parallel.POOL_FROM = 2
  from tinygrad.engine import worker
  def run(): runpy.run_path(script, run_name="__main__")
  run()
  worker.terminate_worker_pool()
  best: dict = {}
  for _ in range(RUNS):
    clear_caches(); gc.collect()
    c0, k0, st = time.process_time(), resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    with tgviz.capture() if kind.startswith("capture") else nullcontext(): run()
    wall, cpu = time.perf_counter() - st, time.process_time() - c0
    worker.terminate_worker_pool()  # (its workers' CPU time counted once they are gone)
    k1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    workers = k1.ru_utime + k1.ru_stime - k0.ru_utime - k0.ru_stime
    if not best or wall < best["wall"]: best = {"wall": wall, "cpu": cpu, "workers": workers}
  return best


def main() -> None:
  model = os.environ.get("MODEL", "gpt")
  kinds = os.environ.get("KINDS", ",".join(KINDS)).split(",")
  env = {**ENV, **SIZES.get(model, {})}
  print(f"{model} step ({MODELS[model].name}), in one process, fastest of {RUNS} runs after a warm one:")
  out = {}
  for kind in kinds:
    e = {**env, **({"PARALLEL": "0"} if kind == "serial" else {}), **({"VIZ": "-1"} if kind == "viz" else {})}
    r = subprocess.run([sys.executable, __file__, "--child", kind, str(MODELS[model])], capture_output=True, text=True, env=e)
    if r.returncode: sys.exit(f"{kind} failed:\n{r.stderr}")
    out[kind] = res = json.loads(r.stdout.strip().splitlines()[-1])
    ratio = f"   {res['wall'] / out['plain']['wall']:.2f}x plain's wall" if "plain" in out and kind != "plain" else ""
    print(f"  {kind:12s} wall {res['wall']:6.2f} s   CPU {res['cpu']:6.2f} s   compile workers {res['workers']:6.2f} s{ratio}")


if __name__ == "__main__":
  if len(sys.argv) > 1 and sys.argv[1] == "--child": print(json.dumps(child(sys.argv[2], sys.argv[3])))
  else: main()
