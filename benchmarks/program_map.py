"""The program map: what recording the scheduler's decisions costs a capture, how long trace.program() and the map take,
and how soon the map of a model's training step shows in the report.

Run: python benchmarks/program_map.py [REPORT.html ...]  (PARALLEL=0; REPS runs each, default 5)
Prints, per workload, the fastest CPU time of a capture with and without bridge.schedule's ScheduleRecorder (its
patches left out) and their ratio (target: at most 1.02x); then, on the MNIST and GPT training steps, trace.program()
and program_map() (graphviz's layout of both views) in seconds, the message's size, the views' boxes; then, per report
given (default: the GPT step's, written here), the time from opening the file to the map painted in Chromium at
1600x1000 (target: under 1.5 s), the median of 3 opens.
"""
import os
import runpy
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ["PARALLEL"] = "0"
os.environ.setdefault("TGVIZ_LAYOUT_CACHE", "")  # layouts timed as a first run makes them, not from an earlier run's (draw/layout_store.py)
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
import json  # noqa: E402

import workloads  # noqa: E402

import tgviz  # noqa: E402
from tgviz.bridge import capture as C  # noqa: E402
from tgviz.bridge.recorders import Patch  # noqa: E402
from tgviz.views.programmap import program_map  # noqa: E402

MAP_SHOWN = """() => new Promise((done) => { const t0 = performance.timeOrigin;
  const look = () => { if (document.querySelector('.tgviz-progmap[open] .tgviz-map-canvas svg g.node'))
    requestAnimationFrame(() => done(performance.now())); else setTimeout(look, 5); }; look(); })"""


class Unrecorded(Patch):
  """Stands in for the ScheduleRecorder: patches nothing."""
  def __init__(self, *args): self.groups = {}
  def patches(self): return []


def cpu(fn, recorded: bool) -> float:
  C.ScheduleRecorder = real if recorded else Unrecorded  # type: ignore[misc]
  st = time.process_time()
  with tgviz.capture(): fn()
  return time.process_time() - st


def model(name: str):
  return lambda: runpy.run_path(str(ROOT / "examples" / "scripts" / name) if name.startswith("mnist") else
                                str(ROOT / "benchmarks" / "models" / name), run_name="__main__")


real = C.ScheduleRecorder

if __name__ == "__main__":
  reps = int(os.environ.get("REPS", "5"))
  for name, fn in (("softmax", workloads.softmax), ("cnn", workloads.cnn), ("adam", workloads.adam_train),
                   ("mnist step", model("mnist_train_step.py"))):
    fn()
    on, off = [], []
    for _ in range(reps):
      off.append(cpu(fn, False))
      on.append(cpu(fn, True))
    print(f"{name:11s} capture without the scheduler's decisions {min(off)*1e3:8.1f} ms, with {min(on)*1e3:8.1f} ms: "
          f"{min(on)/min(off):5.3f}x (medians {statistics.median(on)/statistics.median(off):5.3f}x)")
  C.ScheduleRecorder = real
  reports = [Path(a) for a in sys.argv[1:]]
  tmp = tempfile.mkdtemp()
  for name in ("mnist_train_step.py", "gpt_train_step.py"):
    with tgviz.capture() as trace: model(name)()
    st = time.perf_counter()
    prog = trace.program()
    t_prog = time.perf_counter() - st
    st = time.perf_counter()
    msg = program_map(trace)
    t_map = time.perf_counter() - st
    print(f"{name:20s} {len(prog.kernels)} kernels, {len(prog.boundaries)} buffers between them: program() {t_prog:.2f} s, "
          f"program_map() {t_map:.2f} s, message {len(json.dumps(msg)) / 1e3:.0f} kB, views "
          + ", ".join(f"{v['name']} {len(v['boxes'])} boxes" for v in msg["views"]))
    if name.startswith("gpt") and not reports: reports.append(trace.to_html(Path(tmp) / "gpt.html", workers=2))
  if reports:
    from browser.harness import USER_BROWSER, chromium
    with chromium(USER_BROWSER) as browser:
      for html in reports:
        times = []
        for _ in range(3):
          ctx = browser.new_context(viewport={"width": 1600, "height": 1000})
          page = ctx.new_page()
          page.goto(html.as_uri())
          times.append(page.evaluate(MAP_SHOWN) / 1e3)
          ctx.close()
        print(f"{html.name}: the map painted {statistics.median(times):.2f} s after opening the file (median of 3: "
              + ", ".join(f"{t:.2f}" for t in times) + ")")
