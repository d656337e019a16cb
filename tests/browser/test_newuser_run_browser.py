"""What a new user met on the attention block (harness.ATTENTION) in a notebook's widget about 841 px wide (JupyterLab
at 1400 px with its file browser open; the report at 860 px gives the widget that width): the memory chart opens on the
timeline's window, its allocations and peak readable, the whole run one click away; the kernel table fits without a
sideways scroll; the tree's column keeps its width while a search is typed."""
import json
import re

import pytest
from harness import ARTIFACTS, KERNEL_TABLE, LIMIT, new_page, search_for, settled, to_steps

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


def test_the_kernel_table_fits_the_widget(attention_report, page):
  """The kernel table in the 841 px widget needed a sideways scroll: its columns (kernel, key, global, local, FLOPs,
  bytes, runs, total, median, spread, limit, compile, ...) were 1,166 px wide. Now it fits, no sideways scroll, every
  column's header on screen and every figure whole: the key is in the kernel's hover, the spread says its unit once
  ("2.92–6.33 µs"), and a spread or limit goes on two lines where there is no room, never broken inside a figure (a
  spread of two units, "2.33 µs – 3.11 ms, 3 launches", on three: whole on one, it alone made the table 9 px wider than
  the widget). At 1600 px it fits too, each row one line high."""
  trace, report = attention_report
  page.goto(report.as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node, .tgviz-progmap[open] svg", timeout=LIMIT)
  page.locator(".tgviz-kernels > summary").click()
  page.locator(".tgviz-kernels tbody tr").first.wait_for(timeout=LIMIT)
  for width in (WIDE, 1600):
    page.set_viewport_size({"width": width, "height": 1000})
    settled(page)
    page.screenshot(path=str(ARTIFACTS / f"newuser-kernel-table-{width}.png"))
    got = page.evaluate(KERNEL_TABLE)
    assert got["scroll"] <= got["client"] and got["right"] <= got["window"], got  # no sideways scroll
    assert got["heads"][:3] == ["kernel", "global", "local"] and "key" not in got["heads"] and "spread" in got["heads"], got["heads"]
    assert not got["cut"] and not got["broken"], got
    assert len(got["names"]) == len(trace.kernels) and all(t.startswith(f"{n} · key ") for n, t in got["names"]), got["names"]
    line = page.eval_on_selector(".tgviz-kernels tbody td", "c => parseFloat(getComputedStyle(c).lineHeight) || 13")
    # two lines at most, three for a spread of two units ("2.33 µs –" "3.11 ms," "3 launches"); one on a wide screen
    most = [(4 if " – " in spread else 3) if width == WIDE else 2 for spread in got["spreads"]]
    assert all(h < m * line for h, m in zip(got["heights"], most, strict=True)), (got["heights"], got["spreads"], line)
  spread = page.locator(".tgviz-kernels tbody td.wrap").all_inner_texts()
  assert not [s for s in spread if re.search(r" (ns|µs|ms) – [\d.]+ \1", s)], spread  # a unit once: "2.92–6.33 µs, 3 launches"
  assert not page.errors


# the tree's column and the graph's canvas (left and width), and the hits: each whole inside the column, none scrolled sideways
COLUMNS = """() => { const box = (s) => { const r = document.querySelector(s).getBoundingClientRect(); return [r.left, r.width]; };
  const left = document.querySelector('.tgviz-left').getBoundingClientRect(), res = document.querySelector('.tgviz-results');
  return {tree: box('.tgviz-left'), canvas: box('.tgviz-canvas'), sideways: res.scrollWidth - res.clientWidth,
          out: [...res.querySelectorAll('.tgviz-hit:not([hidden])')].filter((e) => e.offsetParent).filter((e) => {
            const r = e.getBoundingClientRect(); return r.left < left.left - 1 || r.right > left.right + 1; }).length,
          hits: res.querySelectorAll('.tgviz-hit').length}; }"""


def test_the_tree_keeps_its_width_while_searching(attention_report, page):
  """The step tree's column widened as a search was typed (its hits listed in it), moving the graph. Now the column and
  the graph keep where they are, word after word, the hits wrapping inside the column."""
  report = attention_report[1]
  page.goto(report.as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node, .tgviz-progmap[open] svg", timeout=LIMIT)
  to_steps(page)
  settled(page)
  before = page.evaluate(COLUMNS)
  for text in ("soft", "softmax", "r_2_2_3"):
    search_for(page, text)
    got = page.evaluate(COLUMNS)
    page.screenshot(path=str(ARTIFACTS / f"newuser-search-{text}.png"))
    assert got["tree"] == pytest.approx(before["tree"], abs=1) and got["canvas"] == pytest.approx(before["canvas"], abs=1), (text, before, got)
    assert got["hits"] and not got["out"] and got["sideways"] <= 0, (text, got)
  assert not page.errors
