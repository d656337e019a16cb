"""The run's timeline tab on a TinyJit training loop of many steps, in a real browser (Debian's Chromium).

Run: .venv/bin/python benchmarks/timeline_speed.py [STEPS]   (default 1000: tens of thousands of launches)
Captures tests/workloads.py's jit_train(STEPS), builds the run message (tgviz.views.run) and the HTML report, opens the
report from disk and times, in the page: opening the tabs until the timeline is drawn (the run's data decoded, its
columns built, the first frame drawn), then zooming (wheel events) and dragging, one event per animation frame, with each
frame's drawing time and the time between frames. Targets (issue #27): drawn in under a second; zoom and drag without
stutter (every frame drawn well inside a 60 Hz frame, 16.7 ms).
"""
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "browser")]
import workloads  # noqa: E402
from harness import USER_BROWSER, chromium  # noqa: E402

import tgviz  # noqa: E402
from tgviz.views import run as runview  # noqa: E402

OPEN = """async () => {
  const t0 = performance.now();
  document.querySelector('.tgviz-run > summary').click();
  while (!document.querySelector('.tgviz-tl-canvas[data-draws]')) await new Promise((r) => requestAnimationFrame(r));
  return performance.now() - t0;
}"""
# one event per frame; returns [the drawing time of each frame (ms), the time between frames (ms)]
FRAMES = """async ([kind, n]) => {
  const c = document.querySelector('.tgviz-tl-canvas'), r = c.getBoundingClientRect();
  const y = r.top + r.height / 2, x0 = r.left + r.width * 0.6;
  const draws = [], gaps = [];
  if (kind === 'drag') c.dispatchEvent(new PointerEvent('pointerdown', {bubbles: true, clientX: x0, clientY: y, pointerId: 1}));
  let last = performance.now();
  for (let i = 0; i < n; i++) {
    const ev = kind === 'zoom' ? new WheelEvent('wheel', {bubbles: true, cancelable: true, clientX: x0, clientY: y, deltaY: i < n / 2 ? -120 : 120})
      : new PointerEvent('pointermove', {bubbles: true, clientX: x0 - 4 * (i + 1), clientY: y, pointerId: 1});
    const before = c.dataset.draws;
    c.dispatchEvent(ev);
    await new Promise((res) => requestAnimationFrame(() => requestAnimationFrame(res)));
    if (c.dataset.draws !== before) draws.push(Number(c.dataset.drawMs));
    const now = performance.now(); gaps.push((now - last) / 2); last = now;
  }
  if (kind === 'drag') c.dispatchEvent(new PointerEvent('pointerup', {bubbles: true, clientX: x0 - 4 * n, clientY: y, pointerId: 1}));
  return [draws, gaps];
}"""


def figures(name: str, values: list[float]) -> str:
  return f"{name}: median {statistics.median(values):.2f} ms, max {max(values):.2f} ms over {len(values)}"


def main(steps: int) -> None:
  st = time.perf_counter()
  with tgviz.capture() as trace: workloads.jit_train(steps)
  print(f"jit_train({steps}) captured in {time.perf_counter() - st:.1f} s")
  trace.roofline()  # the device's peaks measured (once, then cached) before anything is timed
  st = time.perf_counter()
  msg = runview.run_message(trace)
  built = time.perf_counter() - st
  size = len(json.dumps(msg, separators=(",", ":")))
  print(f"run message: {len(msg['timeline']['start']):,} launches, {len(msg['memory']['t']):,} memory events; built in "
        f"{built * 1e3:.0f} ms (timeline and memory views included), {size / 2**20:.2f} MB of JSON")
  with tempfile.TemporaryDirectory() as tmp, chromium(USER_BROWSER) as browser:
    html = trace.to_html(Path(tmp) / "index.html")
    page = browser.new_context(viewport={"width": 1600, "height": 1000}).new_page()
    page.goto(html.as_uri())
    page.wait_for_selector(".tgviz-stage svg g.node", timeout=60_000)
    opened = page.evaluate(OPEN)
    canvas = page.locator(".tgviz-tl-canvas")
    print(f"timeline tab: drawn {opened:.0f} ms after the click (target 1000 ms; its columns built and first drawn in "
          f"{canvas.get_attribute('data-first-ms')} ms of that)")
    for kind in ("zoom", "drag"):
      draws, gaps = page.evaluate(FRAMES, [kind, 60])
      print(f"  {kind}: {figures('frame drawn in', draws)}; {figures('between frames', gaps)} (target: every frame under 16.7 ms)")


if __name__ == "__main__":
  main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
