"""Memory: 100 different cells captured one after another, each trace dropped after use, vs the same cells without tgviz.

Run: python benchmarks/memory.py
Each 'cell' is a small computation with its own shapes (so every one compiles new kernels). Each mode runs in a fresh
process; prints the growth of its resident memory over the 100 cells, and the ratio (target: at most 1.2x).
"""
import gc
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from tinygrad import Tensor

import tgviz


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


if __name__ == "__main__":
  if len(sys.argv) > 1:
    print(run(sys.argv[1] == "captured"))
    sys.exit()
  plain, ours = (int(subprocess.run([sys.executable, __file__, mode], capture_output=True, text=True, check=True)
                     .stdout.split()[-1]) for mode in ("plain", "captured"))
  print(f"100 cells: without tgviz +{plain / 2**20:.1f} MiB, captured (traces dropped) +{ours / 2**20:.1f} MiB, "
        f"ratio {ours / max(plain, 1):.2f}x")
