"""The first capture in a fresh process: `tgviz.capture()` vs tinygrad's own tracking (VIZ=-1 set before tinygrad is
imported), and vs a plain run, on the 8x33 softmax (tests/workloads.py), each the first run of a fresh python.

Run: nice -n 10 .venv/bin/python benchmarks/first_capture.py   (REPS=7 fresh processes of each kind, interleaved;
WORKLOADS=softmax,attention: functions of tests/workloads.py, each measured in turn)
Each child imports tinygrad and tgviz (the same device set-up: DEV, else OpenCL on PoCL), then times the workload's
first run, opening the device included (CPU time of the process, all its threads; and wall time) as one of:
  capture   `with tgviz.capture() as trace: workload()`, entering and leaving the capture included (the trace kept, as
            a user keeps it: tinygrad's own tracking keeps what it recorded too)
  viz       the workload under tinygrad's own tracking: VIZ=-1 in the environment at import (TRACK_MATCH_STATS=2,
            PROFILE=1, PARALLEL=0 by default, as a capture sets them)
  plain     the workload with PARALLEL=0 and no tracking
Prints the minimum of each over the fresh processes and the ratios capture / viz in CPU and in wall time (target: both
at most 1.05x), and, per kind, the patterns compiled (upat_compile's distinct patterns) and graph_rewrite calls of one
more child each. Then where the wall time went that was no CPU time of the running thread: one more child of each kind
splits its thread's wall time (the kernel's schedstat) into running, queued for a busy CPU and waiting, and wraps the
calls a thread waits in (a compiler subprocess, a fork, a device sync, an OpenCL build, a lock, a sleep: Waits.CALLS)
to list each one's wait (its wall time less the thread's CPU time in it) with its share of the run.
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
KEPT: list = []  # the child's trace


class Waits:
  """Where the thread that enters it waited, measured without sampling: its wall time split by the kernel's schedstat
  into running on a CPU, standing ready for one (queued: the machine's CPUs were busy) and waiting; and the calls it
  can wait in (a compiler subprocess, a fork, a device sync or an OpenCL build, a lock, a sleep), each wrapped while it
  runs to add up its wall time and the part of it the thread spent not running (its thread_time did not advance)."""

  CALLS = (("subprocess", "Popen.communicate"), ("subprocess", "Popen.wait"), ("os", "fork"), ("os", "waitpid"),
           ("time", "sleep"), ("threading", "Event.wait"), ("threading", "Thread.join"), ("fcntl", "flock"),
           ("concurrent.futures", "Future.result"), ("tinygrad.device", "Compiled.synchronize"),
           ("tinygrad.runtime.ops_cl", "CLDevice.synchronize"), ("tinygrad.runtime.autogen.opencl", "clBuildProgram"),
           ("tinygrad.runtime.autogen.opencl", "clWaitForEvents"), ("tinygrad.runtime.autogen.opencl", "clFinish"))

  def __init__(self) -> None:
    self.calls: collections.Counter = collections.Counter()   # name -> [wall, not running]
    self.wall = self.ran = self.queued = 0.0
    self._undo: list[tuple[object, str, object]] = []
    self._inside = False

  def _clocks(self) -> tuple[float, float, float]:
    with open(f"/proc/self/task/{threading.get_native_id()}/schedstat") as f: ran, queued, _ = f.read().split()
    return time.perf_counter(), int(ran) / 1e9, int(queued) / 1e9

  def _wrap(self, owner: object, attr: str, name: str) -> None:
    fn = getattr(owner, attr)
    def timed(*args, **kwargs):
      if self._inside: return fn(*args, **kwargs)  # (the outermost call counts)
      self._inside, wall, cpu = True, time.perf_counter(), time.thread_time()
      try: return fn(*args, **kwargs)
      finally:
        w = time.perf_counter() - wall
        self.calls[name + " (wall)"] += w
        self.calls[name] += max(0.0, w - (time.thread_time() - cpu))
        self._inside = False
    setattr(owner, attr, timed)
    self._undo.append((owner, attr, fn))

  def __enter__(self) -> "Waits":
    import importlib
    for module, path in self.CALLS:
      try: owner = importlib.import_module(module)
      except ImportError: continue
      *outer, attr = path.split(".")
      for o in outer: owner = getattr(owner, o, None)
      if owner is not None and hasattr(owner, attr): self._wrap(owner, attr, f"{module}.{path}")
    self._start = self._clocks()
    return self

  def __exit__(self, *exc: object) -> None:
    (w, r, q), (w0, r0, q0) = self._clocks(), self._start
    self.wall, self.ran, self.queued = w - w0, r - r0, q - q0
    while self._undo:
      owner, attr, fn = self._undo.pop()
      setattr(owner, attr, fn)


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
    with tgviz.capture() as trace: fn()
    KEPT.append(trace)  # past the timing: freeing what a capture recorded is no part of a run (nor of VIZ=-1's)
  else: fn()
  if sampler is not None: sampler.__exit__()
  cpu, wall = time.process_time() - st, time.perf_counter() - wall
  return {"s": cpu, "wall": wall, "upat_compile": upat.upat_compile.cache_info().misses,
          **counts, **({"calls": dict(sampler.calls), "ran": sampler.ran, "queued": sampler.queued, "waited": sampler.wall -
                        sampler.ran - sampler.queued} if sampler is not None else {})}


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
    calls = sorted(((n, t) for n, t in r["calls"].items() if not n.endswith("(wall)") and r["calls"][n + " (wall)"] > 0),
                   key=lambda nt: -r["calls"][nt[0] + " (wall)"])
    waited = max(0.0, r["waited"])  # (the two clocks differ by a millisecond or so)
    print(f"  {k}: wall {r['wall']*1e3:.1f} ms: its thread ran {r['ran']*1e3:.1f} ms, stood ready for a busy CPU "
          f"{r['queued']*1e3:.1f} ms, waited {waited*1e3:.1f} ms ({waited / r['wall']:.1%}); in the calls it can wait in:"
          + "".join(f"\n    {name:50s} {r['calls'][name + ' (wall)']*1e3:7.1f} ms, of it waiting {t*1e3:6.1f} ms ({t / r['wall']:.1%})"
                    for name, t in calls))


if __name__ == "__main__":
  if sys.argv[1:2] == ["--child"]:
    print(json.dumps(child(sys.argv[2], sys.argv[3], "--count" in sys.argv, "--waits" in sys.argv)))
    sys.exit(0)
  for name in os.environ.get("WORKLOADS", os.environ.get("WORKLOAD", "softmax,attention")).split(","):
    measure(name, int(os.environ.get("REPS", "7")))
