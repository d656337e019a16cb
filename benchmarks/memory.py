"""Memory: 100 different cells captured one after another, each trace dropped after use, vs the same cells without tgviz;
and a `%%tgviz` cell of a real model's training step in a Jupyter kernel.

Run: python benchmarks/memory.py            (the 100 cells)
     nice -n 10 python benchmarks/memory.py notebook   (the GPT step in a kernel: minutes)
Each 'cell' is a small computation with its own shapes (so every one compiles new kernels). Each mode runs in a fresh
process; prints the growth of its resident memory over the 100 cells, and the ratio (target: at most 1.2x).
notebook: benchmarks/models/gpt_train_step.py as a cell in a fresh Jupyter kernel (jupyter_client, ipykernel; DEV, else
CPU), plain and as a `%%tgviz` cell (which shows its widget, its first picture computed), then the messages the widget
builds when a page asks: the pictures of the busiest step and of the schedule's busiest (the whole step and three
matches each), the rules and the run's tabs; then every graph of that schedule step, in order (Step.at, as the
slider steps through its matches). Prints the kernel process's peak RSS (VmHWM) after each (target: the plain
cell's + 500 MB).
"""
import gc
import os
import subprocess
import sys
from pathlib import Path

os.environ.setdefault("TGVIZ_LAYOUT_CACHE", "")  # layouts timed as a first run makes them, not from an earlier run's (draw/layout_store.py)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from tinygrad import Tensor

import tgviz

MiB = 2**20


def rss() -> int:
  with open("/proc/self/statm") as f: return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def cell(i: int) -> None:
  n = 8 + i
  x = Tensor.ones(n, 16).contiguous()
  ((x * (i + 1)).relu() @ Tensor.ones(16, 4)).sum(0).realize()


def run(captured: bool, offset: int = 0) -> int:
  for i in range(5): cell(offset + 1000 + i)  # warm up this mode
  gc.collect()
  start = rss()
  for i in range(100):
    if captured:
      with tgviz.capture() as trace: cell(offset + i)
      assert trace.kernels[0].source  # use it, then drop it
      del trace
    else: cell(offset + i)
  gc.collect()
  return rss() - start


# *** a %%tgviz cell of the GPT training step in a real Jupyter kernel ***

GPT = Path(__file__).resolve().parent / "models" / "gpt_train_step.py"
MESSAGES = """
from tgviz.views import protocol as P
from tgviz.views import run as runview
t = {out}
busiest = max(t.steps, key=lambda s: len(s.matches))
schedule = max((s for s in t.steps if s.group.kind != "kernel"), key=lambda s: len(s.matches))
for s in (busiest, schedule):
  n = len(s.matches)
  for m in (None, 0, n // 2, n - 1): P.picture_message(t, P.step_key(s), m)
P.rules_message(t), runview.run_message(t)
print(busiest.path, len(busiest.matches), schedule.path, len(schedule.matches))
"""
STEPPING = """
for k in range(len(schedule.matches) + 1): schedule.at(k)  # as the slider steps, every match (the replay kept)
"""


def _kernel_peak(cells: list[str]) -> list[int]:
  """Runs the cells in a fresh Jupyter kernel (jupyter_client, ipykernel): the kernel process's peak RSS (VmHWM)
  after each."""
  from jupyter_client.manager import start_new_kernel
  env = {**os.environ, "DEV": os.environ.get("DEV", "CPU")}
  km, kc = start_new_kernel(kernel_name="python3", env=env, cwd=str(GPT.parent.parent.parent))
  try:
    pid, peaks = km.provisioner.process.pid, []
    for code in cells:
      reply = kc.execute_interactive(code, timeout=1800, output_hook=lambda msg: None)
      assert reply["content"]["status"] == "ok", reply["content"]
      with open(f"/proc/{pid}/status") as f: peaks.append(next(int(ln.split()[1]) * 1024 for ln in f if ln.startswith("VmHWM")))
    return peaks
  finally:
    kc.stop_channels()
    km.shutdown_kernel(now=True)


def notebook() -> None:
  script = GPT.read_text()
  plain = _kernel_peak(["import tgviz", script])[-1]
  ours = _kernel_peak(["%load_ext tgviz", f"%%tgviz -o trace\n{script}", MESSAGES.format(out="trace"), STEPPING])
  print(f"GPT step in a Jupyter kernel, peak RSS of the kernel: plain cell {plain / MiB:.0f} MiB; %%tgviz cell (its "
        f"widget's first picture) {ours[1] / MiB:.0f} MiB (+{(ours[1] - plain) / MiB:.0f}); then the pictures of the "
        f"busiest step and of the schedule's, whole and at three matches, the rules and run tabs {ours[2] / MiB:.0f} MiB "
        f"(+{(ours[2] - plain) / MiB:.0f}); then every graph of that schedule step in order, as the slider steps "
        f"{ours[3] / MiB:.0f} MiB (+{(ours[3] - plain) / MiB:.0f}; target: plain + 500 MB = +{500e6 / MiB:.0f} MiB)")


if __name__ == "__main__":
  if sys.argv[1:] == ["notebook"]:
    notebook()
    sys.exit()
  if len(sys.argv) > 1:
    print(run(sys.argv[1] == "captured"))
    sys.exit()
  plain, ours = (int(subprocess.run([sys.executable, __file__, mode], capture_output=True, text=True, check=True)
                     .stdout.split()[-1]) for mode in ("plain", "captured"))
  print(f"100 cells: without tgviz +{plain / MiB:.1f} MiB, captured (traces dropped) +{ours / MiB:.1f} MiB, "
        f"ratio {ours / max(plain, 1):.2f}x")
