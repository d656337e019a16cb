"""Model scale: the real-model example scripts (an MNIST Adam training step, a transformer block forward+backward) run
plain, under `tgviz run`, and captured in-process.

Run: python benchmarks/model_scale.py   (SCRIPTS=mnist_train_step,transformer_block picks the scripts)
Prints, per script, each figure on its own line with its target:
  plain run: the script in a fresh python that imports tgviz first (same device setup), wall time and peak RSS
  `tgviz run SCRIPT --out DIR`: wall time (target at most 3x plain), peak RSS (target at most 2 GB), report folder size
  in-process, after a warm-up run: the step plain (tinygrad's schedule/program caches cleared, as capture() clears them)
    vs captured, the memory a trace holds (tracemalloc: what dropping it frees; RSS growth over the capture for reference)
  device memory in use (GlobalCounters.mem_used) after the step captured vs plain, each in a fresh process (target: equal)
Every child is a fresh process; one plain run first warms tinygrad's disk cache of compiled kernels.
"""
import gc
import json
import os
import runpy
import subprocess
import sys
import tempfile
import time
import tracemalloc
from contextlib import nullcontext
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY, TGVIZ = sys.executable, str(Path(sys.executable).parent / "tgviz")
MiB = 2**20


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


def in_child(mode: str, script: Path) -> dict:
  r = subprocess.run([PY, __file__, "--child", mode, str(script)], capture_output=True, text=True, cwd=ROOT)
  if r.returncode: sys.exit(f"child {mode} {script.name} failed:\n{r.stderr}")
  return json.loads(r.stdout.strip().splitlines()[-1])


def timed(cmd: list[str]) -> tuple[float, int]:
  """Wall time and peak RSS (bytes) of a command, in a fresh process."""
  st = time.perf_counter()
  p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
  _, status, ru = os.wait4(p.pid, 0)
  wall = time.perf_counter() - st
  p.returncode = os.waitstatus_to_exitcode(status)
  assert p.returncode == 0, f"{cmd} exited with {p.returncode}"
  return wall, ru.ru_maxrss * 1024


def main() -> None:
  for name in os.environ.get("SCRIPTS", "mnist_train_step,transformer_block").split(","):
    script = ROOT / "examples" / "scripts" / f"{name}.py"
    plain_cmd = [PY, "-c", "import tgviz, runpy, sys; runpy.run_path(sys.argv[1], run_name='__main__')", str(script)]
    timed(plain_cmd)  # warm tinygrad's disk cache
    plain, plain_peak = timed(plain_cmd)
    print(f"{name}:")
    print(f"  plain run (fresh python, tgviz imported): {plain:.1f} s, peak RSS {plain_peak / MiB:.0f} MiB")
    with tempfile.TemporaryDirectory() as tmp:
      wall, peak = timed([TGVIZ, "run", str(script), "--out", tmp])
      files = [f for f in Path(tmp).rglob("*") if f.is_file()]
      size = sum(f.stat().st_size for f in files)
    print(f"  tgviz run wall time: {wall:.1f} s = {wall / plain:.1f}x plain (target 3x)")
    print(f"  tgviz run peak RSS: {peak / MiB:.0f} MiB (target 2048 MiB)")
    print(f"  tgviz run report folder: {size / MiB:.1f} MiB in {len(files)} files")
    t = in_child("time", script)
    print(f"  in-process step, tinygrad caches cleared: plain {t['plain']:.2f} s, captured {t['captured']:.2f} s = "
          f"{t['captured'] / t['plain']:.1f}x (fastest of 2 each)")
    held = in_child("tracemalloc", script)["held"]
    print(f"  memory held by the trace: {held / MiB:.1f} MiB (tracemalloc: freed when dropped); "
          f"RSS grew {t['rss'] / MiB:.1f} MiB over the first capture")
    p, c = (in_child(m, script)["mem_used"] for m in ("plain", "captured"))
    print(f"  device memory in use after the step: plain {p / MiB:.3f} MiB, captured {c / MiB:.3f} MiB, "
          f"difference {(c - p) / 1024:+.1f} KiB (target: equal)")


if __name__ == "__main__":
  if len(sys.argv) > 1 and sys.argv[1] == "--child": print(json.dumps(child(sys.argv[2], sys.argv[3])))
  else: main()
