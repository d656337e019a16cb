"""The HTML report in a real browser (Debian's Chromium, 1600x1000): size, memory, time to the first graph, to the
busiest step, to its last match (End), to any match.

Run: .venv/bin/python benchmarks/report_speed.py [SCRIPT ...]   (default: examples/scripts/conv2d_winograd_image.py)
For each script, `tgviz run` writes the report (an .html argument: a report written before, timed as it is); Chromium
opens it from disk and the page is timed. Targets (issue #10, on conv2d_winograd_image): file <= 7 MB with every
match, browser memory <= 300 MB, first graph <= 1.5 s after opening the file, any match <= 1 s (the middle and last
match of the step with the most matches, and random ones). Issue #26, on any report (model_scale.py prints them for
its models): first graph <= 1.5 s, the busiest step ("most matches") <= 1 s, End (its last match) <= 0.5 s. Each time
is the page's own clock (performance.now) from the navigation or the click/key to the frame that paints the graph.
"""
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "browser"))
from harness import USER_BROWSER, chromium  # noqa: E402

SHOW = """async ([key, m]) => {
  const stage = document.querySelector('.tgviz-stage');
  const until = (ok) => new Promise((resolve) => {
    if (ok()) return resolve();
    const obs = new MutationObserver(() => { if (ok()) { obs.disconnect(); resolve(); } });
    obs.observe(stage, {attributes: true, childList: true});
  });
  if (stage.dataset.step !== key) {  // open the step first: the slider knows its matches once it is shown
    document.querySelector(`.tgviz-step[data-key='${key}']`).click();
    await until(() => stage.dataset.step === key);
  }
  const t0 = performance.now();
  const s = document.querySelector('.tgviz-slider');
  s.value = String(m + 1); s.dispatchEvent(new Event('input'));
  await until(() => stage.dataset.step === key && stage.dataset.match === String(m));
  return performance.now() - t0;
}"""


# the page's own clock once the first graph is on screen: in the page, then the frame that paints it (a watcher set
# before the page's scripts run)
FIRST_GRAPH = """new MutationObserver((_, obs) => {
  if (!document.querySelector('.tgviz-stage svg g.node')) return;
  obs.disconnect();
  requestAnimationFrame(() => setTimeout(() => { window.tgvizFirstGraph = performance.now(); }));
}).observe(document, {childList: true, subtree: true});"""

# ms from the action (a click on "most matches", or End) to the stage showing the step / match it leads to, painted
AFTER = """async ([what, key, match]) => {
  const stage = document.querySelector('.tgviz-stage');
  const t0 = performance.now();
  if (what === 'busiest') document.querySelector('.tgviz-busiest').click();
  else document.querySelector('.tgviz-root').dispatchEvent(new KeyboardEvent('keydown', {key: 'End', bubbles: true}));
  await new Promise((resolve) => {
    const ok = () => stage.dataset.step === key && stage.dataset.match === match && stage.querySelector('svg g.node');
    if (ok()) return resolve();
    const obs = new MutationObserver(() => { if (ok()) { obs.disconnect(); resolve(); } });
    obs.observe(stage, {attributes: true, childList: true});
  });
  await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve)));
  return performance.now() - t0;
}"""


def open_timed(browser, html: Path) -> tuple[Any, dict[str, float]]:
  """Open a report at 1600x1000 and time issue #26's three figures (seconds): the first graph after opening the file,
  the busiest step after a click on "most matches", and its last match after End. Returns (page, figures)."""
  context = browser.new_context(viewport={"width": 1600, "height": 1000})
  context.add_init_script(FIRST_GRAPH)
  page = context.new_page()
  page.goto(html.as_uri())
  page.wait_for_function("window.tgvizFirstGraph !== undefined", polling=100, timeout=120_000)
  first = page.evaluate("window.tgvizFirstGraph") / 1e3
  page.wait_for_selector(".tgviz-step", state="attached", timeout=120_000)  # (a big tree is built after the first graph)
  rows = page.eval_on_selector_all(".tgviz-step", "rs => rs.map(r => [r.dataset.key, Number(r.querySelector('.tgviz-count').textContent)])")
  key, most = max(rows, key=lambda r: r[1])  # the first of the busiest, as the button picks it
  busiest = page.evaluate(AFTER, ["busiest", key, ""]) / 1e3
  end = page.evaluate(AFTER, ["end", key, str(most - 1)]) / 1e3
  return page, {"first": first, "busiest": busiest, "end": end, "matches": most}


def browser_memory_mb(page) -> float:
  """The page's JS heap plus the renderer's other memory, as Chromium reports it to the DevTools protocol."""
  cdp = page.context.new_cdp_session(page)
  cdp.send("Performance.enable")
  metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
  return metrics["JSHeapTotalSize"] / 2**20


def measure(script: Path) -> None:
  with tempfile.TemporaryDirectory() as tmp:
    if script.suffix == ".html": html, ran = script, "written before"
    else:
      st = time.perf_counter()
      subprocess.run([sys.executable, "-m", "tgviz", "run", str(script), "--out", tmp, "--svg", "none"], check=True,
                     capture_output=True)
      html, ran = Path(tmp) / "index.html", f"tgviz run {time.perf_counter() - st:.1f} s"
    print(f"{script.name}: {ran}; report {html.stat().st_size / 2**20:.2f} MB (target 7 MB)")
    with chromium(USER_BROWSER) as browser:
      page, t = open_timed(browser, html)
      print(f"  first graph {t['first']:.2f} s after opening the file (target 1.5 s); the busiest step ({t['matches']} "
            f"matches) {t['busiest']:.2f} s after a click (target 1 s); its last match {t['end']:.2f} s after End (target 0.5 s)")
      rows = page.eval_on_selector_all(".tgviz-step", "rs => rs.map(r => [r.dataset.key, Number(r.querySelector('.tgviz-count').textContent)])")
      key, most = max(rows, key=lambda r: r[1])
      times = {m: page.evaluate(SHOW, [key, m]) / 1e3 for m in (most // 2, most - 1)}
      rng = random.Random(0)
      picks = [r for r in rows if r[1] > 0]
      rand = [page.evaluate(SHOW, [k, rng.randrange(n)]) / 1e3 for k, n in (rng.choice(picks) for _ in range(20))]
      print(f"  biggest step ({most} matches): middle match {times[most // 2]:.2f} s, last {times[most - 1]:.2f} s; "
            f"20 random matches: max {max(rand):.2f} s, median {sorted(rand)[10]:.2f} s (target 1 s)")
      print(f"  browser memory (JS heap) {browser_memory_mb(page):.0f} MB (target 300 MB)")


if __name__ == "__main__":
  for arg in sys.argv[1:] or [str(ROOT / "examples" / "scripts" / "conv2d_winograd_image.py")]: measure(Path(arg))
