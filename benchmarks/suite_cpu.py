"""Where the test suite's time goes: runs pytest (the arguments given, else the whole suite as scripts/test.sh runs it)
with a recorder in every test process, and prints the run's wall time, how busy the machine's CPUs were, and the CPU
time of every process the run started (Chromium, the Jupyter servers and their kernels, `tgviz run`s, the test
processes themselves, ...) by kind and by the test it ran under.

Each process's CPU is charged to the pytest process it descends from (a browser, a Jupyter server and its kernels, a
subprocess: each is started by one test process) and, within that, to the test running there at the time (a
fixture's set-up to the test that asked for it first). So a test's figure is what it cost the machine, whichever
process did the work. The CI's budget is the suite's wall time; on a machine whose CPUs are busy through the run, the
wall time is the CPU time over the core count, and the tests and process kinds at the top of these lists are what to
cut (see benchmarks/README.md, "`suite_cpu.py`: the test suite's time").

Usage: `.venv/bin/python benchmarks/suite_cpu.py [pytest arguments]` (after `bash scripts/install.sh test`); the
environment of scripts/test.sh is set (PARALLEL=0, two test processes). TOP=30 sets the lists' length.
"""
from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HZ = os.sysconf("SC_CLK_TCK")
TOP = int(os.environ.get("TOP", "30"))

# The recorder each test process loads (pytest -p): it writes when each test starts and ends, with its pid.
PLUGIN = '''
import json, os, time
_f = open(os.path.join(os.environ["SUITE_CPU_OUT"], f"tests-{os.getpid()}.jsonl"), "a", buffering=1)
def pytest_runtest_logstart(nodeid, location): _f.write(json.dumps([os.getpid(), "start", nodeid, time.time()]) + "\\n")
def pytest_runtest_logfinish(nodeid, location): _f.write(json.dumps([os.getpid(), "end", nodeid, time.time()]) + "\\n")
'''


def kind(cmd: str, comm: str) -> str:
  """A process's kind, from its command line (Chromium rewrites its own: --type=renderer and so on)."""
  if "chrom" in comm or "chrom" in cmd[:100]:
    return "chromium " + next((a.split("=", 1)[1] for a in cmd.split() if a.startswith("--type=")), "browser")
  # (marks of the program, not of its arguments: a subprocess's script sits in pytest's tmp_path, "pytest-of-root/...")
  for mark, name in (("playwright", "playwright driver"), ("ipykernel", "jupyter kernel"), ("-m jupyterlab", "jupyter server"),
                     ("-m notebook", "jupyter server"), ("multiprocessing", "python worker (multiprocessing)"),
                     ("-m tgviz", "tgviz run"), ("graphviz", "graphviz"), ("-m pip", "pip/uv"), ("uv pip", "pip/uv"),
                     ("-m pytest", "pytest (a test's own run)")):
    if mark in cmd: return name
  return "python (other)" if "python" in comm else comm


class Sampler:
  """Reads every process's CPU time twice a second; charges each one's growth to its kind and to the pytest process
  it descends from."""
  def __init__(self) -> None:
    self.last: dict[tuple[int, str], int] = {}   # (pid, start time) -> CPU ticks seen
    self.info: dict[int, tuple[str, int]] = {}   # pid -> (kind, parent pid), of the live processes
    self.charges: list[tuple[float, int, str, float]] = []  # (time, pytest pid or 0, kind, CPU seconds)
    self.busy: list[float] = []                  # per reading, the share of the machine's CPUs busy since the last
    self.stop = threading.Event()
    self.pytest_pids: set[int] = set()

  def _read(self) -> dict[int, tuple[tuple[int, str], int]]:
    found = {}
    for name in os.listdir("/proc"):
      if not name.isdigit(): continue
      pid = int(name)
      try:
        fields = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()
        if pid not in self.info:
          cmd = Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
          parent = int(fields[1])  # (the kernel's own threads are kthreadd's children, pid 2)
          self.info[pid] = ("kernel threads" if 2 in (pid, parent) else kind(cmd, Path(f"/proc/{name}/comm").read_text().strip()), parent)
      except (OSError, IndexError): continue
      found[pid] = ((pid, fields[19]), int(fields[11]) + int(fields[12]))
    return found

  def _owner(self, pid: int) -> int:
    """The pytest process pid descends from (itself if it is one); 0 when none."""
    seen = 0
    while pid > 1 and seen < 64:
      if pid in self.pytest_pids: return pid
      pid, seen = self.info.get(pid, ("", 0))[1], seen + 1
    return 0

  def run(self) -> None:
    stat = lambda: list(map(int, Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]))  # noqa: E731
    before, first = stat(), True
    while not self.stop.wait(0.5):
      now = time.time()
      for pid, (key, ticks) in self._read().items():
        grown = ticks - self.last.get(key, 0 if not first else ticks)
        self.last[key] = ticks
        if grown > 0:
          k = "test process (pytest)" if pid in self.pytest_pids else self.info[pid][0]
          self.charges.append((now, self._owner(pid), k, grown / HZ))
      after = stat()
      delta = [a - b for a, b in zip(after, before, strict=True)]
      self.busy.append(1 - (delta[3] + delta[4]) / max(1, sum(delta)))  # idle and iowait are not busy
      before, first = after, False
      self.info = {p: v for p, v in self.info.items() if Path(f"/proc/{p}").exists()}


def main() -> None:
  out = Path(tempfile.mkdtemp(prefix="suite-cpu-"))
  (out / "suite_cpu_plugin.py").write_text(PLUGIN)
  args = sys.argv[1:] or ["-n", "2", "--dist", "loadfile"]
  env = {**os.environ, "PARALLEL": os.environ.get("PARALLEL", "0"), "SUITE_CPU_OUT": str(out),
         "PYTHONPATH": os.pathsep.join([str(out), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
  sampler = Sampler()
  thread = threading.Thread(target=sampler.run, daemon=True)
  start = time.time()
  proc = subprocess.Popen([str(ROOT / ".venv" / "bin" / "python"), "-m", "pytest", "-q", "-p", "suite_cpu_plugin", *args],
                          cwd=ROOT, env=env)
  sampler.pytest_pids.add(proc.pid)
  thread.start()
  while proc.poll() is None:  # the test processes (pytest-xdist's workers) register as they write their first test
    sampler.pytest_pids |= {int(p.stem.split("-")[1]) for p in out.glob("tests-*.jsonl")}
    time.sleep(1)
  sampler.stop.set()
  thread.join()
  wall = time.time() - start
  report(out, sampler, wall, proc.returncode)


def report(out: Path, sampler: Sampler, wall: float, code: int) -> None:
  spans: dict[int, list[tuple[float, float, str]]] = collections.defaultdict(list)
  for path in out.glob("tests-*.jsonl"):
    started: dict[str, float] = {}
    for line in path.read_text().splitlines():
      pid, what, nodeid, t = json.loads(line)
      if what == "start": started[nodeid] = t
      elif nodeid in started: spans[pid].append((started.pop(nodeid), t, nodeid))
  by_kind: collections.Counter = collections.Counter()
  by_test: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
  for t, owner, k, cpu in sampler.charges:
    by_kind[k] += cpu
    test = next((n for a, b, n in spans.get(owner, []) if a <= t <= b + 0.5), None)
    by_test[test or ("(between tests)" if owner else "(outside the test processes)")][k] += cpu
  total = sum(by_kind.values())
  busy = sum(sampler.busy) / max(1, len(sampler.busy))
  print(f"\npytest exited {code}; wall {wall / 60:.1f} min; the machine's {os.cpu_count()} CPUs busy {busy:.0%} of it; "
        f"CPU charged {total / 60:.1f} min")
  print("\nCPU by kind of process:")
  for k, v in by_kind.most_common(TOP):
    if v >= total / 200: print(f"  {v:8.1f} s  {v / total:5.1%}  {k}")
  files: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
  for test, kinds in by_test.items(): files[test.split("::")[0]].update(kinds)
  def rows(title: str, table: dict[str, collections.Counter]) -> None:
    print(f"\n{title} (CPU s: all, then its three largest kinds):")
    for name, kinds in sorted(table.items(), key=lambda kv: -sum(kv[1].values()))[:TOP]:
      print(f"  {sum(kinds.values()):8.1f}  {name}  [" + ", ".join(f"{k} {v:.0f}" for k, v in kinds.most_common(3)) + "]")
  rows("Files", files)
  rows("Tests", by_test)


if __name__ == "__main__":
  main()
