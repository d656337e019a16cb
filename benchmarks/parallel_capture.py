"""Many cores: a capture that compiles its kernels in tinygrad's worker pool (PARALLEL of 3 or more, each worker traced, the
records merged in task order; below 3 the capture compiles in its own process, see parallel.POOL_FROM) against a plain
run with the same PARALLEL; and, per kernel, what predicts the ratio on more cores.

Run: nice -n 10 .venv/bin/python benchmarks/parallel_capture.py   (MODEL=mnist|gpt|resnet|lstm, default mnist; REPS=1;
PARALLELS=1,2,4; DEV defaults to CPU, as benchmarks/model_scale.py). Minutes on 2 cores. Prints:
  measured   per PARALLEL: the model's step in a fresh process (tgviz imported in both, so the same device set-up),
             plain and under tgviz.capture(), the fastest of REPS (interleaved), the ratio; and how much of each was
             lower_and_compile (tinygrad's compile of the kernels, in the pool when PARALLEL > 0).
  per kernel in one process, each of the step's compile tasks again: tinygrad's _compile_kernel as a plain worker runs it,
             and traced_compile as a capture's worker runs it (its pickled result's round trip included), caches emptied
             before each, as a capture's workers empty them; the capture's merge of a task's records (from a
             PARALLEL=3 capture); the import a traced worker adds (tgviz, once per worker process: tinygrad replaces a
             worker after 16 tasks).
  expected   the ratio on 1, 2, 4, 16 and 64 cores from those figures: each compile batch (one lower_and_compile) takes
             max(sum of its tasks / N, its longest task) in workers, and for the capture at least its merges, done one
             after another in the capture's process; the rest of the step as measured at PARALLEL=0 (its schedule and
             runs: tracked in the capture, not in the plain run) as measured at the first PARALLEL.
"""
import json
import os
import pickle
import runpy
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODELS = {"resnet": ROOT / "benchmarks" / "models" / "resnet_block_train_step.py",
          "lstm": ROOT / "benchmarks" / "models" / "lstm_train_step.py",
          "gpt": ROOT / "benchmarks" / "models" / "gpt_train_step.py",
          "mnist": ROOT / "examples" / "scripts" / "mnist_train_step.py"}
ENV = {**os.environ, "DEV": os.environ.get("DEV", "CPU"), "PYTHONPATH": str(ROOT)}


def _compile_timer() -> list[float]:
  """Wall seconds of each lower_and_compile call from now on (tinygrad's compile of a schedule's kernels)."""
  from tinygrad.engine import realize
  spent: list[float] = []
  lower = realize.lower_and_compile
  def timed(linear):
    st = time.perf_counter()
    try: return lower(linear)
    finally: spent.append(time.perf_counter() - st)
  realize.lower_and_compile = timed  # (compile_linear looks it up in realize's globals at each call)
  return spent


def child_step(mode: str, script: str) -> dict:
  """The step once, plain or captured, with the PARALLEL of the environment."""
  import tgviz
  spent = _compile_timer()
  st = time.perf_counter()
  if mode == "captured":
    with tgviz.capture() as trace: runpy.run_path(script, run_name="__main__")
    assert trace.error is None and trace.kernels
  else: runpy.run_path(script, run_name="__main__")
  return {"wall": time.perf_counter() - st, "compile": sum(spent)}


def child_kernels(script: str) -> dict:
  """Per compile task of the step: plain and traced compile seconds, batch by batch; the merge seconds of each task of a
  PARALLEL=3 capture."""
  from tinygrad.codegen import to_program_cache
  from tinygrad.engine import realize
  from tinygrad.helpers import Context

  import tgviz
  from tgviz.bridge import parallel
  from tgviz.bridge.capture import _rewriting_caches
  batches: list[list] = []
  real_pool = realize.get_worker_pool
  class Recording:  # a pool that hands lower_and_compile's tasks over to the real one, keeping a copy
    def imap_unordered(self, fn, tasks):
      batches.append(todo := list(tasks))
      return real_pool().imap_unordered(fn, todo)
  realize.get_worker_pool = lambda: Recording()
  with Context(PARALLEL=2): runpy.run_path(script, run_name="__main__")
  realize.get_worker_pool = real_pool
  caches = _rewriting_caches(len(sys.modules))
  names = [(c.__module__, c.__name__) for c in caches]
  plain, traced = [], []
  for todo in batches:
    plain.append([]); traced.append([])
    for task in todo:
      to_program_cache.clear()  # (a plain worker keeps the rewriting helpers' caches from task to task)
      st = time.perf_counter(); realize._compile_kernel(task); plain[-1].append(time.perf_counter() - st)
      ast = list(task[1][0].toposort())
      job = (task, names, list(range(1, len(ast) + 1)), 1 << 40)
      st = time.perf_counter()
      pickle.loads(pickle.dumps(parallel.traced_compile(job)))
      traced[-1].append(time.perf_counter() - st)
  merges: list[float] = []
  merge = parallel.ParallelCompiles.merge
  def timed_merge(self, *args):
    st = time.perf_counter()
    try: return merge(self, *args)
    finally: merges.append(time.perf_counter() - st)
  parallel.ParallelCompiles.merge = timed_merge
  with tgviz.capture(env={"PARALLEL": parallel.POOL_FROM}): runpy.run_path(script, run_name="__main__")  # (fewer: no pool)
  return {"plain": plain, "traced": traced, "merges": merges}


def child_import() -> dict:
  """Seconds a worker that has tinygrad imported spends importing tgviz's compile side (what traced_compile needs)."""
  import tinygrad.engine.realize  # noqa: F401  (a worker has it: tinygrad's pool imports it)
  st = time.perf_counter()
  import tgviz.bridge.parallel  # noqa: F401
  return {"import": time.perf_counter() - st}


def child(args: list[str], env: dict | None = None) -> dict:
  r = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True, text=True, cwd=ROOT, env=env or ENV)
  if r.returncode: sys.exit(f"child {args} failed:\n{r.stderr[-4000:]}")
  return json.loads(r.stdout.strip().splitlines()[-1])


def expected(n: int, k: dict, rest_plain: float, rest_captured: float, extra_import: float) -> tuple[float, float]:
  """Plain and captured seconds of the step on n cores, from the per-kernel figures (see the module's docstring)."""
  plain = captured = 0.0
  merges = iter(k["merges"])
  for p, t in zip(k["plain"], k["traced"], strict=True):
    m = [next(merges, 0.0) for _ in t]
    t = [x + extra_import / 16 for x in t]  # a worker imports tgviz once, and tinygrad replaces it after 16 tasks
    plain += max(sum(p) / n, max(p))
    captured += max(sum(t) / n, max(t), sum(m))
  return rest_plain + plain, rest_captured + captured


def main() -> None:
  name = os.environ.get("MODEL", "mnist")
  script, reps = str(MODELS[name]), int(os.environ.get("REPS", "1"))
  counts = [int(n) for n in os.environ.get("PARALLELS", "1,2,4").split(",")]
  print(f"{name} ({os.environ.get('DEV', 'CPU')}), {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} "
        f"(a shared machine: the times are noisy)")
  child(["step", "plain", script], {**ENV, "PARALLEL": str(counts[0])})  # warm tinygrad's disk cache of compiled kernels
  runs: dict[tuple[int, str], list[dict]] = {}
  for _ in range(reps):
    for workers in counts:
      for mode in ("plain", "captured"):
        runs.setdefault((workers, mode), []).append(child(["step", mode, script], {**ENV, "PARALLEL": str(workers)}))
  best = {key: min(rs, key=lambda r: r["wall"]) for key, rs in runs.items()}
  print(f"{'PARALLEL':>8s} {'plain':>8s} {'(compile)':>9s} {'captured':>9s} {'(compile)':>9s} {'ratio':>6s}")
  for workers in counts:
    p, c = best[(workers, "plain")], best[(workers, "captured")]
    print(f"{workers:8d} {p['wall']:7.1f}s {p['compile']:8.1f}s {c['wall']:8.1f}s {c['compile']:8.1f}s {c['wall'] / p['wall']:5.2f}x")
  k = child(["kernels", script])
  extra = child(["import"])["import"]
  plain_k, traced_k = [x for b in k["plain"] for x in b], [x for b in k["traced"] for x in b]
  print(f"per kernel ({len(plain_k)} compile tasks in {len(k['plain'])} batches of {[len(b) for b in k['plain']]}): "
        f"compile plain {1e3 * sum(plain_k) / len(plain_k):.0f} ms, traced in a worker {1e3 * sum(traced_k) / len(traced_k):.0f} ms "
        f"({sum(traced_k) / sum(plain_k):.2f}x), merged in the capture {1e3 * sum(k['merges']) / max(1, len(k['merges'])):.1f} ms; "
        f"tgviz's import in a worker {extra:.2f} s")
  first_p, first_c = best[(counts[0], "plain")], best[(counts[0], "captured")]
  rest_p, rest_c = first_p["wall"] - first_p["compile"], first_c["wall"] - first_c["compile"]
  print(f"the rest of the step (schedule, runs) at PARALLEL={counts[0]}: plain {rest_p:.1f} s, captured {rest_c:.1f} s "
        f"({rest_c / rest_p:.2f}x)")
  print("expected on N cores: " + ", ".join(f"{n}: {c:.1f} s / {p:.1f} s = {c / p:.2f}x"
                                            for n in (1, 2, 4, 16, 64) for p, c in [expected(n, k, rest_p, rest_c, extra)]))


if __name__ == "__main__":
  if len(sys.argv) > 1 and sys.argv[1] == "--child":
    mode, rest = sys.argv[2], sys.argv[3:]
    out = child_step(rest[0], rest[1]) if mode == "step" else child_kernels(rest[0]) if mode == "kernels" else child_import()
    print(json.dumps(out))
  else: main()
