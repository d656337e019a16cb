"""The widget's columns as a user sees them in the HTML report at 1600x1000: with the uops tab open (the tree column at
its narrowest, 180 px), the tree's "hide steps without matches" label wraps inside its column, never cut."""
import re

import pytest
from harness import ARTIFACTS, LIMIT, new_page, settled, to_steps, uops_cells, wraps

LABEL = """() => { const l = document.querySelector('.tgviz-hide-label'), col = document.querySelector('.tgviz-left');
  const r = l.getBoundingClientRect(), c = col.getBoundingClientRect();
  return {right: r.right, column: c.right, scroll: l.scrollWidth, client: l.clientWidth, text: l.textContent, width: c.width}; }"""


@pytest.fixture
def page(browser):
  with new_page(browser, width=1600, height=1000) as p: yield p


def open_conv(page, name: str = "r_2_2_2_2") -> None:
  """A kernel's first step (the tutorial's conv kernel's), picked in the tree."""
  to_steps(page)
  group = page.locator(".tgviz-group.kind-kernel", has=page.locator("summary", has_text=re.compile(rf"\b{re.escape(name)}(?!\S)")))
  if group.get_attribute("open") is None: group.locator("summary").click()
  first = group.locator(".tgviz-step").first
  key = first.get_attribute("data-key")
  first.click()
  page.locator(f".tgviz-stage[data-step='{key}'] svg g.node").first.wait_for(timeout=LIMIT)


def test_the_hide_label_wraps_in_a_narrow_tree_column(tutorial_trace, tmp_path, page):
  tutorial_trace.to_html(tmp_path / "index.html")
  page.goto((tmp_path / "index.html").as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  open_conv(page)
  page.locator(".tgviz-tab-uops").click()
  page.locator(".tgviz-uops tr[data-n]").first.wait_for(timeout=LIMIT)
  settled(page)
  got = page.evaluate(LABEL)
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  page.screenshot(path=str(ARTIFACTS / "columns-uops-tree.png"))
  assert got["width"] <= 200 and got["text"].strip() == "hide steps without matches", got  # the tree at its narrowest
  assert got["right"] <= got["column"] and got["scroll"] <= got["client"], got


# the code column's tabs (their right edges, the window's width) and the node panel's code words broken inside
NARROW = """() => { const tabs = [...document.querySelectorAll('.tgviz-code-tabs .tgviz-tab')].map((t) => t.getBoundingClientRect());
  const col = document.querySelector('.tgviz-right').getBoundingClientRect();
  const words = [...document.querySelectorAll('.tgviz-node-panel code')].filter((c) => /^\\S+$/.test(c.textContent)
    && c.textContent.length * 8 < col.width - 40);
  return {tabs: tabs.map((r) => [r.left, r.right]), column: [col.left, col.right], width: innerWidth,
          broken: words.filter((c) => c.getClientRects().length > 1).map((c) => c.textContent)}; }"""


def test_the_code_column_reads_in_a_window_1000_px_wide(mnist_trace, tmp_path, browser):
  """The MNIST step's report in a window 1000 px wide (the new user's pass): the code column keeps room to read (it had
  200 px: the access tab cut at the window's edge, "rel|u" and "m|ax_pool2d" broken in a REDUCE's panel); every tab of
  it shows whole, and the node panel breaks no short word of its code."""
  kernel = next(k for k in mnist_trace.kernels if {"relu", "max_pool2d"} <= {o.op for o in k.origins})
  mnist_trace.to_html(tmp_path / "index.html")
  with new_page(browser, width=1000, height=900) as page:
    page.goto((tmp_path / "index.html").as_uri())
    page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
    open_conv(page, kernel.display_name)
    page.locator(".tgviz-stage g.side g.node[data-op='REDUCE']").first.click()
    page.wait_for_selector(".tgviz-node-panel:not([hidden]) .tgviz-made-by", timeout=LIMIT)
    settled(page)
    got = page.evaluate(NARROW)
    page.screenshot(path=str(ARTIFACTS / "columns-report-1000.png"))
    assert got["column"][1] - got["column"][0] >= 250, got
    assert len(got["tabs"]) == 4 and all(got["column"][0] <= a and b <= min(got["column"][1], got["width"]) for a, b in got["tabs"]), got
    assert not got["broken"], got
    assert not page.errors


def open_report(page, report, kernel: str) -> None:
  """The attention block's report, on its kernel's first step, picked in the tree."""
  page.goto(report.as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", state="attached", timeout=LIMIT)
  open_conv(page, kernel)


def test_the_uops_tab_reads_without_scrolling_sideways_at_841_px(attention_report, browser):
  """The new user's attention block, its last kernel's uops tab (softmax @ v) in a widget 841 px wide (JupyterLab 1400
  px wide, its file browser open): every row (number, op, dtype, sources, argument) reads in the column, none scrolls it
  sideways (a constant source, log2(e) as 1.4426950216293335, widened the sources' column past it), no cell cut; that
  constant is cut in its row, whole in its tooltip."""
  trace, html = attention_report
  kernel = next(k.display_name for k in trace.kernels if {"softmax", "__matmul__"} <= {o.op for o in k.origins})
  with new_page(browser, width=841, height=900) as page:
    open_report(page, html, kernel)
    page.locator(".tgviz-tab-uops").click()
    page.locator(".tgviz-uops tr[data-n]").first.wait_for(timeout=LIMIT)
    settled(page)
    got = uops_cells(page)
    page.screenshot(path=str(ARTIFACTS / "columns-uops-841.png"))
    assert got["rows"] > 10 and got["scroll"] <= got["client"] and not got["clipped"], got
    # a constant source too long for its column (log2(e), which widened it) is cut, whole on hover
    const = page.locator(".tgviz-uops .tgviz-uop-const", has_text="1.4426950216293335")
    const.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "columns-uops-841-const.png"))
    assert const.get_attribute("title") == "1.4426950216293335" and const.evaluate("(e) => e.scrollWidth > e.clientWidth")
    assert not page.errors


# the widths of the tree, the graph canvas and the code column, and the selected step's row: whether it is in the tree's view
WIDTHS = """() => { const w = (s) => document.querySelector(s).getBoundingClientRect().width;
  const row = document.querySelector('.tgviz-step.selected').getBoundingClientRect();
  const tree = document.querySelector('.tgviz-tree').getBoundingClientRect();
  return {tree: w('.tgviz-left'), canvas: w('.tgviz-canvas'), code: w('.tgviz-right'),
          row: row.top >= tree.top && row.bottom <= tree.bottom && row.width > 0}; }"""


def test_the_whole_window_at_1600_px_keeps_the_graph_large_and_the_code_readable(attention_report, browser):
  """The attention block's report at 1600x1000 (the layout the widget maximised has): the graph keeps 1040 px or more
  and the code column gets 360 px or more (it had 280, and a kernel's line wrapped into three or four rows); the tree
  keeps 180 px, its selected step in view."""
  _, html = attention_report
  with new_page(browser, width=1600, height=1000) as page:
    open_report(page, html, "r_3_4_6 #1")
    page.wait_for_function("document.querySelector('.tgviz-right > .tgviz-code').innerText.includes('__kernel')", timeout=LIMIT)
    settled(page)
    got = page.evaluate(WIDTHS)
    code = wraps(page, ".tgviz-right > .tgviz-code .tgviz-line")
    page.screenshot(path=str(ARTIFACTS / "columns-1600.png"))
    assert got["canvas"] >= 1040 and got["code"] >= 360 and got["tree"] >= 180 and got["row"], got
    assert code["visual"] <= code["elements"] * 1.5 and not code["sideways"], code
    assert not page.errors


# the top bar: its title's text, whether it shows whole (not cut), its lines; the bar's links (their text, whether whole
# and inside the widget, their rows)
TOP = """() => { const s = document.querySelector('.tgviz-summary'), root = document.querySelector('.tgviz-root').getBoundingClientRect();
  const links = [...document.querySelectorAll('.tgviz-top > details > summary')].filter((e) => e.offsetParent);
  const line = parseFloat(getComputedStyle(s).lineHeight) || 15;
  return {text: s.textContent, whole: s.scrollWidth <= s.clientWidth && s.scrollHeight <= s.clientHeight + 1,
          lines: Math.round((s.clientHeight - parseFloat(getComputedStyle(s).paddingTop) - parseFloat(getComputedStyle(s).paddingBottom)) / line),
          links: links.map((e) => { const r = e.getBoundingClientRect();
            return {text: e.textContent, top: Math.round(r.top),
                    whole: e.scrollWidth <= e.clientWidth && r.left >= root.left && r.right <= root.right}; })}; }"""


def test_the_title_reads_whole_beside_the_bars_links_at_841_px(attention_report, browser):
  """The attention block's report in a widget 841 px wide: the top bar's title ("tgviz trace on CL: 11 kernels, ...
  matches", cut with an ellipsis there) reads whole, on two lines at most, and the bar's links (program map, kernel
  table, what if…, timeline · memory · roofline) stay whole, on one row, in the widget."""
  _, html = attention_report
  with new_page(browser, width=841, height=900) as page:
    page.goto(html.as_uri())
    page.wait_for_selector(".tgviz-stage svg g.node", state="attached", timeout=LIMIT)
    settled(page)
    got = page.evaluate(TOP)
    page.screenshot(path=str(ARTIFACTS / "columns-title-841.png"), clip={"x": 0, "y": 0, "width": 841, "height": 120})
    assert got["text"].startswith("tgviz trace on CL:") and got["text"].endswith("matches") and got["whole"] and got["lines"] <= 2, got
    assert len(got["links"]) == 4 and all(link["whole"] for link in got["links"]) and len({link["top"] for link in got["links"]}) == 1, got
    assert not page.errors
