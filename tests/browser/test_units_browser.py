"""Durations as a user reads them in the HTML report: one rule everywhere (3 significant figures, in the unit that
reads best: tgviz.trace.units.time_text and js/units.js's fmtTime), so that the kernel table, the program map's boxes
and panel, the roofline and the timeline never write "7.23 µs" beside "9.638 µs", and one duration reads the same in
each of them."""
import re

import pytest
import workloads
from harness import ARTIFACTS, LIMIT, new_page
from test_runtime_browser import open_tab
from tinygrad import Tensor

import tgviz
from tgviz.trace.units import time_text
from tgviz.views import protocol as P

TIME = r"(?:\d\.\d\d|\d\d\.\d|\d\d\d|0) (?:ns|µs|ms|s)"  # 3 significant figures
ANY_TIME = r"(?<![\w.,])[\d.,]+ (?:ns|µs|ms|s)\b"


@pytest.fixture(scope="module")
def report(tmp_path_factory):
  with tgviz.capture() as trace: workloads.tutorial()
  return trace, trace.to_html(tmp_path_factory.mktemp("units") / "index.html")


@pytest.fixture
def page(browser):
  with new_page(browser, 1600, 1000, offline=True) as p: yield p


def times_in(text: str) -> list[str]:
  return re.findall(ANY_TIME, text)


def test_a_duration_reads_the_same_everywhere(report, page):
  trace, path = report
  page.goto(path.as_uri())
  page.wait_for_selector(".tgviz-progmap[open] .tgviz-map-canvas svg g.node", timeout=LIMIT)
  seen: list[str] = []
  # the program map: each kernel's box and its panel give its median, as the trace's program map has it
  program = trace.program()
  page.locator(".tgviz-map-views button[data-view='kernels']").click()
  timed = [k for k in program.kernels if k.time_us is not None]
  assert timed
  for k in timed:
    lines = page.locator(f".tgviz-map-canvas g.node[data-node='k{k.index}'] tspan").all_text_contents()
    assert time_text(k.time_us) in times_in("\n".join(lines)), lines
    seen += times_in("\n".join(lines))
  k = timed[-1]
  page.evaluate("""(key) => { const n = document.querySelector(`.tgviz-map-canvas g.node[data-node='${key}']`);
    const c = n.closest('.tgviz-map-canvas'), r = n.getBoundingClientRect();
    const at = {bubbles: true, clientX: r.x + 4, clientY: r.y + 4, pointerId: 1, button: 0};
    n.dispatchEvent(new PointerEvent('pointerdown', at)); c.dispatchEvent(new PointerEvent('pointerup', at)); }""", f"k{k.index}")
  panel = page.locator(".tgviz-map-panel")
  assert f"{time_text(k.time_us)} (median of {len(k.times_us)} launch" in panel.inner_text(), panel.inner_text()
  seen += times_in(panel.inner_text())
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  page.screenshot(path=str(ARTIFACTS / "units-programmap.png"))
  # the kernel table: each kernel's total and median, as the trace's kernel table has them
  page.locator(".tgviz-kernels > summary").click()
  heads = [t.rstrip(" ▲▼") for t in page.locator(".tgviz-kernels thead th").all_inner_texts()]
  cells = page.eval_on_selector_all(".tgviz-kernels tbody tr", "rs => rs.map(r => [...r.cells].map(c => c.textContent))")
  rows = [dict(zip(heads, c, strict=True)) for c in cells]
  for row, want in zip(rows, trace.kernel_table(), strict=True):
    if want["time_us"] is not None: assert row["total"] == time_text(want["time_us"]), (row, want)
    if want["median_us"] is not None: assert row["median"].removeprefix("❄ ") == time_text(want["median_us"]), (row, want)
    seen += [t for key in ("total", "median", "spread", "compile, all") for t in times_in(row[key])]
  page.screenshot(path=str(ARTIFACTS / "units-kernel-table.png"))
  page.locator(".tgviz-kernels > summary").click()
  # the timeline's slowest launches and the roofline's points
  open_tab(page, "timeline")
  seen += times_in(" ".join(page.locator(".tgviz-tl-slowest .tgviz-link").all_inner_texts()))
  open_tab(page, "roofline")
  page.locator(".tgviz-roof-point").last.hover()
  seen += times_in(page.locator(".tgviz-roof-hover").inner_text())
  page.screenshot(path=str(ARTIFACTS / "units-roofline.png"))
  assert len(seen) > 10 and all(re.fullmatch(TIME, t) for t in seen), seen


def test_a_count_agrees_with_its_noun(tmp_path, page):
  """A step whose graph is one node says "1 node shown", not "1 nodes shown" (counts on screen go through plural)."""
  with tgviz.capture() as trace: (Tensor.ones(4).contiguous() + 1).realize()
  key = next(k for s in trace.steps if P.picture_message(trace, k := P.step_key(s), None, "auto")["shown"] == 1)
  page.goto(trace.to_html(tmp_path / "index.html").as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  page.evaluate("(k) => document.querySelector(`.tgviz-step[data-key='${k}']`).click()", key)
  page.wait_for_function(f"document.querySelector('.tgviz-stage').dataset.step === '{key}'", timeout=LIMIT)
  status = page.locator(".tgviz-status")
  assert status.inner_text() == "1 node shown" and status.is_visible()
