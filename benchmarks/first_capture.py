"""The first capture in a fresh process: `tgviz.capture()` vs tinygrad's own tracking (VIZ=-1 set before tinygrad is
imported), and vs a plain run, on the 8x33 softmax (tests/workloads.py), each the first run of a fresh python.

Run: nice -n 10 .venv/bin/python benchmarks/first_capture.py   (REPS=7 fresh processes of each kind, interleaved;
WORKLOADS=softmax,attention: functions of tests/workloads.py, each measured in turn)
Each child imports tinygrad and tgviz (the same device set-up: DEV, else OpenCL on PoCL), then times the workload's
first run, opening the device included (CPU time of the process, all its threads; and wall time) as one of:
  capture   `with tgviz.capture(): workload()`, entering and leaving the capture included
  viz       the workload under tinygrad's own tracking: VIZ=-1 in the environment at import (TRACK_MATCH_STATS=2,
            PROFILE=1, PARALLEL=0 by default, as a capture sets them)
  plain     the workload with PARALLEL=0 and no tracking
Prints the minimum of each over the fresh processes and the ratios capture / viz in CPU and in wall time (target: both
at most 1.05x), and, per kind, the patterns compiled (upat_compile's distinct patterns) and graph_rewrite calls of one
more child each. Then where the wall time went that was no CPU time of the running thread (a device sync, a compiler
subprocess, a lock, a fork): one more child of each kind samples its main thread every millisecond (its stack, and its
own CPU clock); a sample whose thread used less CPU than the time that passed waited, in the innermost call of
tinygrad's, tgviz's, pyopencl's or the standard library's below it. The waits are listed by that call, with their share
of the run's wall time.
"""
import collections
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KINDS = ("capture", "viz", "plain")


class Waits:
  """Samples the thread that enters it every `every` seconds, from a thread of its own: the wall time the sampled thread
  neither ran on a CPU nor stood ready to (the kernel's schedstat: its CPU time and its time queued for a CPU), by where
  it waited (waits: {call: seconds}); queued: the time it was ready but the machine's CPUs were busy."""

  MARKS = ("tinygrad/", "tgviz/", "pyopencl/", "/lib/python3")

  def __init__(self, every: float = 0.001) -> None:
    self.every, self.waits, self.queued = every, collections.Counter(), 0.0
    self._done = threading.Event()

  def __enter__(self) -> "Waits":
    self._thread = threading.main_thread()
    self._stat = f"/proc/self/task/{threading.get_native_id()}/schedstat"
    self._sampler = threading.Thread(target=self._sample, daemon=True)
    self._sampler.start()
    return self

  def __exit__(self, *exc: object) -> None:
    self._done.set()
    self._sampler.join()

  def _where(self, frame) -> str:
    """The innermost frame in code of tinygrad, tgviz, pyopencl or the standard library (the call that waited)."""
    while frame is not None:
      name = frame.f_code.co_filename
      if any(m in name for m in self.MARKS):
        short = name.split("site-packages/")[-1].split("lib/python3.11/")[-1].replace(str(ROOT) + "/", "")
        return f"{frame.f_code.co_name} ({short}:{frame.f_lineno})"
      frame = frame.f_back
    return "?"

  def _clocks(self) -> tuple[float, float, float]:
    with open(self._stat) as f: ran, queued, _ = f.read().split()
    return time.perf_counter(), int(ran) / 1e9, int(queued) / 1e9

  def _sample(self) -> None:
    ident = self._thread.ident
    wall, ran, queued = self._clocks()
    while not self._done.wait(self.every):
      w, r, q = self._clocks()
      self.queued += q - queued
      if (waited := (w - wall) - (r - ran) - (q - queued)) > 0 and (frame := sys._current_frames().get(ident)) is not None:
        self.waits[self._where(frame)] += waited
      wall, ran, queued = w, r, q


def child(kind: str, workload: str, count: bool, waits: bool = False) -> dict:
  """Runs in a fresh process (this file with --child)."""
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
  sampler = Waits() if waits else None
  st, wall = time.process_time(), time.perf_counter()
  if sampler is not None: sampler.__enter__()
  if kind == "capture":
    with tgviz.capture(): fn()
  else: fn()
  if sampler is not None: sampler.__exit__()
  return {"s": time.process_time() - st, "wall": time.perf_counter() - wall, "upat_compile": upat.upat_compile.cache_info().misses,
          **counts, **({"waits": dict(sampler.waits), "queued": sampler.queued} if sampler is not None else {})}


def in_child(kind: str, workload: str, count: bool = False, waits: bool = False) -> dict:
  env = {**os.environ, "PARALLEL": "0"}
  env.pop("VIZ", None)
  if kind == "viz": env["VIZ"] = "-1"
  args = [sys.executable, __file__, "--child", kind, workload] + (["--count"] if count else []) + (["--waits"] if waits else [])
  r = subprocess.run(args, capture_output=True, text=True, cwd=ROOT, env=env)
  if r.returncode: sys.exit(f"child {kind} failed:\n{r.stderr}")
  return json.loads(r.stdout.strip().splitlines()[-1])


def measure(workload: str, reps: int) -> None:
  runs: dict[str, list[dict]] = {k: [] for k in KINDS}
  for _ in range(reps):
    for kind in KINDS: runs[kind].append(in_child(kind, workload))
  best = {k: min(r["s"] for r in v) for k, v in runs.items()}
  wall = {k: min(r["wall"] for r in v) for k, v in runs.items()}
  counts = {k: in_child(k, workload, count=True) for k in KINDS}
  print(f"{workload}, first run in a fresh process, min of {reps} each:")
  for k in KINDS:
    print(f"  {k:8s} CPU {best[k]*1e3:7.1f} ms   wall {wall[k]*1e3:7.1f} ms   graph_rewrite calls {counts[k].get('graph_rewrite', 0):4d}   "
          f"patterns compiled {counts[k].get('upat_compile', 0):4d}")
  print(f"  capture / viz: CPU {best['capture'] / best['viz']:.3f}x, wall {wall['capture'] / wall['viz']:.3f}x (target: both at "
        f"most 1.05x)   viz / plain: CPU {best['viz'] / best['plain']:.3f}x, wall {wall['viz'] / wall['plain']:.3f}x")
  for k in KINDS[:2]:
    r = in_child(k, workload, waits=True)
    waited = sum(r["waits"].values())
    top = sorted(r["waits"].items(), key=lambda kv: -kv[1])[:6]
    print(f"  {k}: wall {r['wall']*1e3:.1f} ms; its thread waited {waited*1e3:.1f} ms ({waited / r['wall']:.0%}), and stood "
          f"ready for a busy CPU {r['queued']*1e3:.1f} ms ({r['queued'] / r['wall']:.0%}); the waits:"
          + "".join(f"\n    {t*1e3:7.1f} ms {t / r['wall']:5.1%}  {where}" for where, t in top))


if __name__ == "__main__":
  if sys.argv[1:2] == ["--child"]:
    print(json.dumps(child(sys.argv[2], sys.argv[3], "--count" in sys.argv, "--waits" in sys.argv)))
    sys.exit(0)
  for name in os.environ.get("WORKLOADS", os.environ.get("WORKLOAD", "softmax,attention")).split(","):
    measure(name, int(os.environ.get("REPS", "7")))
