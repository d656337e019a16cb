"""Re-timed medians repeat between captures; single cold launches do not.

Run: nice -n 10 .venv/bin/python benchmarks/retime_repeat.py   (CAPTURES=2 fresh processes; WORKLOAD=mlp_train, or another
function of tests/workloads.py; SLOWEST=5)
Each child captures the workload, notes each kernel's launch times in the capture, then times kernels again until the
slowest by device time are warm medians (trace.retime: warm-up launches, then until the median settles), and prints both. Per
kernel (by display name) the script prints the capture's times and the re-timed medians of every child, and the spread
of each across the children (the largest over the smallest): the re-timed medians should repeat within 10% on a quiet
machine, the single cold launches need not.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def child(workload: str, slowest: int) -> dict:
  """Runs in a fresh process (this file with --child)."""
  sys.path.insert(0, str(ROOT / "tests"))
  import workloads

  import tgviz
  with tgviz.capture() as trace: getattr(workloads, workload)()
  capture = {k.display_name: k.timing.median_us for k in trace.kernels if k.timing is not None}
  done = trace.retime(slowest=slowest)
  return {"capture": capture, "retimed": {k.display_name: [k.timing.median_us, k.timing.n, k.timing.min_us, k.timing.max_us, bool(k.timing.stable)]
                                          for k in done if k.timing is not None}}


def main() -> None:
  workload, slowest, n = os.environ.get("WORKLOAD", "mlp_train"), int(os.environ.get("SLOWEST", "5")), int(os.environ.get("CAPTURES", "2"))
  runs = []
  for _ in range(n):
    out = subprocess.run([sys.executable, __file__, "--child", workload, str(slowest)], capture_output=True, text=True, check=True,
                         env={**os.environ, "PARALLEL": "0"})
    runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
  names = sorted({k for r in runs for k in r["retimed"]}, key=lambda k: -max(r["retimed"].get(k, [0])[0] for r in runs))
  print(f"{workload}: {n} captures, kernels re-timed in each until the {slowest} slowest are warm medians")
  print(f"{'kernel':28s} {'capture (µs, each)':>28s} {'spread':>7s}   {'re-timed median (µs, each; runs)':>44s} {'spread':>7s}")
  worst = 1.0
  for name in names:
    cap = [r["capture"].get(name) for r in runs]
    med = [r["retimed"].get(name) for r in runs]
    if any(c is None for c in cap) or any(m is None for m in med): continue
    cs, ms = max(cap) / min(cap), max(m[0] for m in med) / min(m[0] for m in med)
    worst = max(worst, ms)
    each = ", ".join(f"{m[0]:,.1f} ({m[1]}{'' if m[4] else '*'})" for m in med)
    print(f"{name:28s} {', '.join(f'{c:,.1f}' for c in cap):>28s} {cs:6.2f}x   {each:>44s} {ms:6.2f}x")
  print(f"largest spread of a re-timed median across captures: {worst:.2f}x  (* a median that did not settle within the budget)")


if __name__ == "__main__":
  if len(sys.argv) > 1 and sys.argv[1] == "--child": print(json.dumps(child(sys.argv[2], int(sys.argv[3]))))
  else: main()
