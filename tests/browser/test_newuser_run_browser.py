"""What a new user met on the attention block (harness.ATTENTION) in a notebook's widget about 841 px wide (JupyterLab
at 1400 px with its file browser open; the report at 860 px gives the widget that width): the memory chart opens on the
timeline's window, its allocations and peak readable, the whole run one click away."""
import json

import pytest
from harness import ARTIFACTS, LIMIT, new_page, settled

WIDE = 860  # the report's page width that gives the widget the notebook's 841 px
MEM = ".tgviz-mem-canvas"


def run_tab(page, tab: str) -> None:
  """The run views open on tab, its chart drawn."""
  if not page.locator(".tgviz-run[open]").count(): page.locator(".tgviz-run > summary").click()
  page.locator(f".tgviz-run-tab[data-tab='{tab}']").click()
  page.wait_for_selector(f".tgviz-run-pane[data-tab='{tab}'] canvas[data-view]", timeout=LIMIT)


@pytest.fixture
def page(browser):
  with new_page(browser, WIDE, 1000, offline=True) as p: yield p


def test_the_memory_chart_opens_on_the_timelines_window(attention_report, page):
  """The memory tab opened on the whole run, 0 to 780 ms, its allocations squashed into a few px at the right (the
  first 300 ms, the schedule and compile, held nothing). Now it opens on the window the timeline opens on (launches
  6-20) and says so; the allocations in it spread over most of the plot, the peak marked and labelled in view; one
  click ("whole run") shows all of it, f switches back."""
  trace, report = attention_report
  page.goto(report.as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node, .tgviz-progmap[open] svg", timeout=LIMIT)
  run_tab(page, "timeline")
  window = json.loads(page.locator(".tgviz-tl-canvas").get_attribute("data-view"))
  opening = page.locator(".tgviz-tl-opening")
  name = opening.inner_text() if opening.is_visible() else "launches"
  run_tab(page, "memory")
  canvas = page.locator(MEM)
  page.wait_for_function(f"document.querySelector('{MEM}').dataset.peakX", timeout=LIMIT)
  settled(page)
  page.screenshot(path=str(ARTIFACTS / "newuser-memory-opens.png"))
  v0, v1 = json.loads(canvas.get_attribute("data-view"))
  assert [v0, v1] == pytest.approx(window), (v0, v1, window)  # the timeline's window
  shown = page.locator(".tgviz-mem-shown").inner_text()
  assert shown.startswith("opens on the timeline's window: ") and name in shown and "whole run (f)" in shown, shown
  assert page.locator(".tgviz-mem-opening.active").inner_text() == name
  mem = trace.memory()
  inside = [e.t_us for e in mem.events if v0 <= e.t_us <= v1]
  assert f"{len(inside)} of {len(mem.events)} allocations and frees in it" in shown, shown
  assert len(inside) >= len(mem.events) / 2 and inside[-1] - inside[0] >= (v1 - v0) / 2, (inside, v0, v1)  # spread, readable
  box = canvas.bounding_box()
  (l0, l1), px = json.loads(canvas.get_attribute("data-peak-label")), float(canvas.get_attribute("data-peak-x"))
  assert 80 < px < box["width"] and 80 < l0 < l1 <= box["width"] - 2 and (l1 < px - 4 or l0 > px + 4), (l0, l1, px, box)
  # the whole run in one click, and f back to the window
  page.locator(".tgviz-mem-fit").click()
  page.wait_for_selector(".tgviz-mem-fit.active", timeout=LIMIT)
  w0, w1 = json.loads(canvas.get_attribute("data-view"))
  assert w0 <= 0 and w1 >= max(e.t_us for e in mem.events), (w0, w1)
  page.screenshot(path=str(ARTIFACTS / "newuser-memory-whole.png"))
  page.locator(".tgviz-run-head").click()  # the widget focused: f switches the chart's view
  page.keyboard.press("f")
  page.wait_for_selector(".tgviz-mem-opening.active", timeout=LIMIT)
  assert json.loads(canvas.get_attribute("data-view")) == pytest.approx(window)
  assert not page.errors
