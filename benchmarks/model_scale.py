"""Model scale: four kinds of real training step (a ResNet block, an LSTM, a 2-layer GPT, an MNIST CNN) and a bigger GPT
(gpt-big: nine blocks of width 64, each MLP 16 wider than the one before, AdamW; over 300,000 matches) run plain, with
tinygrad's own tracking dump (VIZ=-1), and under `tgviz run`; the report opened in Chromium.

Run: nice -n 10 .venv/bin/python benchmarks/model_scale.py   (MODELS=gpt,mnist picks some; DETAILS=1 adds the
in-process figures below; KEEP=DIR keeps each report there, for report_speed.py). Minutes per model on 2 cores. Prints one table, a row per model:
  plain       the script in a fresh python that imports tgviz first (same device setup): wall time (the fastest of
              RUNS, default 2, alternating with tgviz run's), peak RSS (the largest)
  tgviz run   `tgviz run SCRIPT --svg SVG` (default landmarks, the README's main job): wall time (the fastest of RUNS;
              each model's runs keep their layouts in a folder of their own: the first lays every picture out, its
              time printed under the row, the later ones reuse them, as a run again after a small change does),
              ratio to plain (target 1.5x), peak RSS of its largest process (it, or one of the processes that write the
              report; target: plain + 500 MB)
  capture     of that run, seconds to the end of the script's capture ("traced in"), and its ratio to plain (target 1.2x)
  after       seconds from there to the end: retries, the report and SVGs not written during the run (target: 10% of the run)
  SVGs        seconds the SVG files took after the run (their worker's time, beside the report's)
  report      the HTML report's size, and tinygrad's own dump of the same run (rewrites.pkl, VIZ=-1): the ratio (target
              at most 1, aim 0.5)
  1st graph   seconds from opening the report in Chromium (1600x1000) to the first graph drawn (target 1.5 s)
  busiest     seconds from a click on "most matches" to that step's graph (target 1 s)
  End         seconds from End (on the busiest step) to its last match's graph (target 0.5 s)
and under each row where `tgviz run`'s memory went: the peak RSS of the process that captured when its capture ended
and at the end (after writing the report's head and gathering the workers' steps), and of its report workers.
DETAILS=1, per model: in-process, after a warm-up run, the step plain (tinygrad's schedule/program caches cleared, as
capture() clears them) vs captured; the memory a trace holds (tracemalloc); device memory in use after the step
captured vs plain, each in a fresh process (target: equal).
Every child is a fresh process; one plain run first warms tinygrad's disk cache of compiled kernels. The device is
DEV's, else CPU (clang): what the issue's figures used.
"""
import gc
import glob
import json
import os
import re
import runpy
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from contextlib import nullcontext
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY, TGVIZ = sys.executable, str(Path(sys.executable).parent / "tgviz")
MiB = 2**20
MODELS = {"resnet": ROOT / "benchmarks" / "models" / "resnet_block_train_step.py",
          "lstm": ROOT / "benchmarks" / "models" / "lstm_train_step.py",
          "gpt": ROOT / "benchmarks" / "models" / "gpt_train_step.py",
          "mnist": ROOT / "examples" / "scripts" / "mnist_train_step.py",
          "gpt-big": ROOT / "benchmarks" / "models" / "gpt_train_step.py"}
SIZES = {"gpt-big": {"GPT_LAYERS": "9", "GPT_WIDER": "16", "GPT_DIM": "64", "GPT_SEQ": "32", "GPT_VOCAB": "128", "GPT_OPT": "AdamW"}}
ENV = {**os.environ, "DEV": os.environ.get("DEV", "CPU")}
SVG = os.environ.get("SVG", "landmarks")


def rss() -> int:
  with open("/proc/self/statm") as f: return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def child(mode: str, script: str) -> dict:
  """Runs in a fresh process (this file with --child)."""
  import tgviz
  from tgviz.bridge.capture import clear_caches
  def run(): return runpy.run_path(script, run_name="__main__")
  if mode in ("plain", "captured"):
    with tgviz.capture() if mode == "captured" else nullcontext() as trace: ns = run()
    from tinygrad.helpers import GlobalCounters
    gc.collect()
    assert ns and (mode == "plain" or trace.kernels)  # both keep the script's model alive, the captured one its trace too
    return {"mem_used": GlobalCounters.mem_used}
  run()  # warm: open the device, import everything
  if mode == "time":  # fastest of two, alternating
    plain, captured, grew = [], [], []
    for _ in range(2):
      clear_caches(); gc.collect()
      st = time.perf_counter(); run(); plain.append(time.perf_counter() - st)
      gc.collect(); r0 = rss()
      st = time.perf_counter()
      with tgviz.capture() as trace: run()
      captured.append(time.perf_counter() - st)
      gc.collect(); grew.append(rss() - r0)
      del trace
    return {"plain": min(plain), "captured": min(captured), "rss": grew[0]}
  tracemalloc.start(); gc.collect()
  with tgviz.capture() as trace: run()
  gc.collect(); m1 = tracemalloc.get_traced_memory()[0]
  del trace
  gc.collect()
  return {"held": m1 - tracemalloc.get_traced_memory()[0]}


def in_child(mode: str, script: Path, env: dict) -> dict:
  r = subprocess.run([PY, __file__, "--child", mode, str(script)], capture_output=True, text=True, cwd=ROOT, env=env)
  if r.returncode: sys.exit(f"child {mode} {script.name} failed:\n{r.stderr}")
  return json.loads(r.stdout.strip().splitlines()[-1])


def timed(cmd: list[str], env: dict | None = None) -> tuple[float, int]:
  """Wall time and peak RSS (bytes) of a command in a fresh process: of its largest process (wait4's figure covers the
  children it waited for, e.g. the report's workers)."""
  st = time.perf_counter()
  p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT, env=env or ENV)
  _, status, ru = os.wait4(p.pid, 0)
  wall = time.perf_counter() - st
  p.returncode = os.waitstatus_to_exitcode(status)
  assert p.returncode == 0, f"{cmd} exited with {p.returncode}"
  return wall, ru.ru_maxrss * 1024


def _hwm(pid: int) -> int:
  """A process's peak RSS so far (VmHWM), bytes; 0 once it is gone."""
  try:
    with open(f"/proc/{pid}/status") as f: return next(int(ln.split()[1]) * 1024 for ln in f if ln.startswith("VmHWM"))
  except (OSError, StopIteration): return 0


def _children(pid: int) -> list[int]:
  try:
    with open(f"/proc/{pid}/task/{pid}/children") as f: return [int(c) for c in f.read().split()]
  except OSError: return []


def timed_run(cmd: list[str], env: dict) -> tuple[float, int, dict]:
  """timed(cmd) for `tgviz run`, and where its memory went, sampled every 0.2 s: the parent's peak when the capture
  ended ("traced in" printed) and at the end, and the peak of its report workers; and where its time went: seconds to
  the capture's end, and the SVG files' seconds it printed."""
  st = time.perf_counter()
  p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=ROOT, env=env, text=True)
  where = {"capture": 0, "parent": 0, "workers": 0, "traced": 0.0, "svgs": 0.0}
  def read() -> None:
    assert p.stdout is not None
    for line in p.stdout:
      if line.startswith("tgviz: traced in"): where["capture"], where["traced"] = _hwm(p.pid), time.perf_counter() - st
      if (m := re.search(r"wrote \d+ SVG files .* in ([\d.]+) s$", line)): where["svgs"] = float(m.group(1))
  reader = threading.Thread(target=read, daemon=True)
  reader.start()
  seen: dict[int, int] = {}
  while True:
    pid, status, ru = os.wait4(p.pid, os.WNOHANG)
    if pid: break
    where["parent"] = max(where["parent"], _hwm(p.pid))
    for c in _children(p.pid): seen[c] = max(seen.get(c, 0), _hwm(c))
    time.sleep(0.2)
  reader.join()
  where["workers"] = max(seen.values(), default=0)
  p.returncode = os.waitstatus_to_exitcode(status)
  assert p.returncode == 0, f"{cmd} exited with {p.returncode}"
  return time.perf_counter() - st, ru.ru_maxrss * 1024, where


def page_times(html: Path) -> dict[str, float]:
  """The report in Chromium (1600x1000), seconds: first graph after opening, the busiest step after a click, its last
  match after End (report_speed.open_timed)."""
  sys.path.insert(0, str(ROOT / "tests" / "browser"))
  sys.path.insert(0, str(ROOT / "benchmarks"))
  from harness import USER_BROWSER, chromium
  from report_speed import open_timed
  with chromium(USER_BROWSER) as browser: return open_timed(browser, html)[1]


RUNS = int(os.environ.get("RUNS", "2"))


def measure(name: str, script: Path) -> dict:
  plain_cmd = [PY, "-c", "import tgviz, runpy, sys; runpy.run_path(sys.argv[1], run_name='__main__')", str(script)]
  env = {**ENV, **SIZES.get(name, {})}
  timed(plain_cmd, env)  # warm tinygrad's disk cache
  with tempfile.TemporaryDirectory() as tmp:
    timed([PY, str(script)], {**env, "VIZ": "-1", "TRACK_MATCH_STATS": "2", "TMPDIR": tmp})
    dump = Path(glob.glob(f"{tmp}/rewrites.pkl*")[0]).stat().st_size
    plains, runs = [], []
    # the layouts tgviz keeps from run to run, in a folder of this model's: its first run lays every picture out, as a
    # user's first run does, the later ones reuse them, as a run again after a small change does
    env = {**env, "TGVIZ_LAYOUT_CACHE": str(Path(tmp) / "layouts")}
    for _ in range(RUNS):  # alternating: each the fastest of its RUNS (a shared machine's noise only ever slows one)
      plains.append(timed(plain_cmd, env))
      runs.append(timed_run([TGVIZ, "run", str(script), "--out", tmp, "--svg", SVG], env))
    (plain, _), (wall, _, fastest) = min(plains), min(runs, key=lambda r: r[0])
    plain_peak, (peak, where) = max(p for _, p in plains), max(((p, w) for _, p, w in runs), key=lambda r: r[0])
    html = Path(tmp) / "index.html"
    size, page = html.stat().st_size, page_times(html)
    if os.environ.get("KEEP"):
      (keep := Path(os.environ["KEEP"])).mkdir(parents=True, exist_ok=True)
      shutil.copy(html, keep / f"{name}.html")
  return {"model": name, "plain": plain, "run": wall, "first_run": runs[0][0], "plain_peak": plain_peak, "peak": peak, "report": size,
          "dump": dump, **page, **where, "traced": fastest["traced"], "svgs": fastest["svgs"]}


def details(script: Path, env: dict) -> None:
  t = in_child("time", script, env)
  print(f"  in-process step, tinygrad caches cleared: plain {t['plain']:.2f} s, captured {t['captured']:.2f} s = "
        f"{t['captured'] / t['plain']:.1f}x (fastest of 2 each)")
  held = in_child("tracemalloc", script, env)["held"]
  print(f"  memory held by the trace: {held / MiB:.1f} MiB (tracemalloc: freed when dropped); "
        f"RSS grew {t['rss'] / MiB:.1f} MiB over the first capture")
  p, c = (in_child(m, script, env)["mem_used"] for m in ("plain", "captured"))
  print(f"  device memory in use after the step: plain {p / MiB:.3f} MiB, captured {c / MiB:.3f} MiB, "
        f"difference {(c - p) / 1024:+.1f} KiB (target: equal)")


def main() -> None:
  names = os.environ.get("MODELS", ",".join(MODELS)).split(",")
  print(f"{'model':8s} {'plain':>7s} {'tgviz run':>9s} {'ratio':>6s} {'capture':>13s} {'after':>12s} {'SVGs':>6s} "
        f"{'peak plain':>10s} {'peak run':>9s} {'report':>8s} {'VIZ dump':>8s} {'ratio':>6s} {'1st graph':>9s} {'busiest':>8s} {'End':>6s}")
  for name in names:
    r = measure(name, MODELS[name])
    after = r["run"] - r["traced"]
    print(f"{name:8s} {r['plain']:6.1f}s {r['run']:8.1f}s {r['run'] / r['plain']:5.2f}x {r['traced']:6.1f}s {r['traced'] / r['plain']:5.2f}x "
          f"{after:5.1f}s {after / r['run']:5.0%} {r['svgs']:5.1f}s {r['plain_peak'] / MiB:7.0f}MiB "
          f"{r['peak'] / MiB:6.0f}MiB {r['report'] / MiB:5.1f}MiB {r['dump'] / MiB:5.1f}MiB {r['report'] / r['dump']:5.2f}x "
          f"{r['first']:8.2f}s {r['busiest']:7.2f}s {r['end']:5.2f}s", flush=True)
    print(f"  the first tgviz run (no layouts kept yet): {r['first_run']:.1f} s, {r['first_run'] / r['plain']:.2f}x plain", flush=True)
    print(f"  tgviz run's peak RSS: {r['capture'] / MiB:.0f} MiB when the capture ended, {r['parent'] / MiB:.0f} MiB "
          f"writing the report (the process that captured); {r['workers'] / MiB:.0f} MiB in its report workers "
          f"(sampled every 0.2 s)", flush=True)
    if os.environ.get("DETAILS"): details(MODELS[name], {**ENV, **SIZES.get(name, {})})


if __name__ == "__main__":
  if len(sys.argv) > 1 and sys.argv[1] == "--child": print(json.dumps(child(sys.argv[2], sys.argv[3])))
  else: main()
