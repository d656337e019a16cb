"""Comparisons in a real browser: the CompareWidget in JupyterLab (two %%tgviz cells, the second --compare'd with the
first) and the HTML comparison page offline; the kernel tables of the trace widget and the report, sortable."""
import re

import pytest
from harness import ARTIFACTS, LIMIT, new_page, open_in_lab, run_all, settled, shown_labels_px, wraps
from helpers import read_time
from tinygrad import Tensor
from workloads import EXAMPLES, example

import tgviz

CONV = (EXAMPLES / "conv2d_3x3.py").read_text()

ROWS = "document.querySelectorAll('.tgviz-pairs tbody tr')"
COLUMN = "(i) => [...document.querySelectorAll('.tgviz-pairs tbody tr')].map((r) => r.cells[i].textContent)"
# a two-sided column: side s's values (a group's row: its one value)
SIDE = ("([i, s]) => [...document.querySelectorAll('.tgviz-pairs tbody tr')].map((r) => "
        "(r.cells[i].querySelectorAll('.side')[s] ?? r.cells[i]).textContent)")
# the widths (CSS px) of the pair table, the widget and the notebook's output it is in
WIDTHS = """() => { const w = (e) => e.getBoundingClientRect().width, c = document.querySelector('.tgviz-compare');
  return {table: w(c.querySelector('.tgviz-pairs')), widget: w(c), output: w(c.closest('.jp-OutputArea-output'))}; }"""
# the notebook's scrolling box (the first ancestor of the comparison that scrolls): its scrollTop
SCROLLER = """() => { let e = document.querySelector('.tgviz-compare');
  while (e && !(/(auto|scroll)/.test(getComputedStyle(e).overflowY) && e.scrollHeight > e.clientHeight)) e = e.parentElement;
  return e; }"""
# the lines a column's cells are drawn on (column i of the sheet s's table): each cell's text cut where it wraps
LINES = """(s, i) => [...s.querySelectorAll('tbody tr')].flatMap((r) => {
  const cell = r.cells[i], text = cell.textContent, range = document.createRange(), lines = [];
  let top = null, from = 0;
  for (let at = 0; at < text.length; at++) {  // (a cell's text is one text node)
    range.setStart(cell.firstChild, at); range.setEnd(cell.firstChild, at + 1);
    const y = range.getClientRects()[0]?.top;
    if (y === undefined) continue;
    if (top !== null && y > top + 2) { lines.push(text.slice(from, at).trim()); from = at; }
    top = y;
  }
  return [...lines, text.slice(from).trim()];
})"""
VIEWS = ("() => [...document.querySelectorAll('.tgviz-pair .tgviz-landmark-svg')]"
         ".map((b) => [b.closest('.tgviz-landmark').dataset.step, b.dataset.view])")


@pytest.fixture
def page(browser):
  with new_page(browser, height=1100) as p: yield p


def _open_row(page, name: str) -> None:
  """Click the pair table's row that has kernel name on either side; wait for its diff and graphs."""
  row = page.locator(".tgviz-pairs tbody tr", has=page.locator("td", has_text=name)).first
  index = row.get_attribute("data-index")
  row.click()
  try: page.wait_for_function(f"document.querySelector('.tgviz-pair').dataset.index === '{index}'", timeout=LIMIT)
  except Exception as e:
    raise AssertionError(f"pair {name} did not open: {page.locator('.tgviz-compare .tgviz-status').inner_text()!r}") from e
  page.wait_for_selector(".tgviz-pair:not([hidden]) .tgviz-landmark svg g.side g.node", timeout=LIMIT)


def test_compare_widget_in_jupyterlab(lab, page):
  open_in_lab(page, lab, "compare", "%load_ext tgviz", "%%tgviz -o general\n" + CONV,
              "%%tgviz -o winograd --env WINO=1 --compare general\n" + CONV)
  run_all(page, 3)
  page.wait_for_selector(".tgviz-compare .tgviz-pairs tbody tr", timeout=LIMIT)
  # the trace widget of the first cell: its kernel table, sortable; a row opens that kernel's first step
  kernels = page.locator(".tgviz-kernels").first
  kernels.locator("summary").click()
  names = kernels.locator("tbody tr td:first-child").all_inner_texts()
  assert names == ["E_2 #1", "E_6_3_2", "E_2 #2", "E_3_3", "r_4_4_3_3"]  # same-named kernels told apart
  kernels.locator("th", has_text="FLOPs").click()  # first click: the most FLOPs first
  assert kernels.locator("tbody tr td:first-child").first.inner_text() == "E_6_3_2"
  kernels.locator("tbody tr", has_text="r_4_4_3_3").click()
  page.wait_for_function("document.querySelector('.tgviz-code-head').innerText.startsWith('r_4_4_3_3')", timeout=LIMIT)
  # the second cell's comparison: pairs, then the plain conv's kernel and Winograd's three, under their group's row
  assert page.evaluate(COLUMN, 0) == ["ast"] * 4 + ["same ops", "in general"] + ["in winograd"] * 3  # the sides by name
  assert page.evaluate(SIDE, [1, 1])[-3:] == ["E_6_6 #1", "E_6_6 #2", "E_4_4"] and page.evaluate(COLUMN, 2)[:4] == ["same"] * 4
  assert "general vs winograd" in page.locator(".tgviz-compare .tgviz-summary").inner_text()
  _open_row(page, "E_6_3_2")
  detail = page.locator(".tgviz-pair")
  assert "the same code on both sides" in detail.locator(".tgviz-diff").inner_text()
  assert detail.locator(".tgviz-pair-side .tgviz-landmark svg").count() == 4  # both kernels' landmark graphs, side by side
  shown = shown_labels_px(page.locator(".tgviz-compare"))  # ... open readable, labels of 11 px or more, some in each box
  assert len(shown) == 4 and all(shown) and min(px for box in shown for px in box) >= 11, shown
  page.locator(".tgviz-pairs th", has_text="total").locator("button", has_text="winograd").click()  # by side b's time
  b_times, cols = page.evaluate(SIDE, [4, 1]), page.evaluate(COLUMN, 0)
  i = cols.index("same ops")  # the group, its rows under it (Winograd's three, then the plain conv's kernel)
  assert cols[i:i + 5] == ["same ops", *["in winograd"] * 3, "in general"] and b_times[i + 4] == "–"
  members = [read_time(t) for t in b_times[i + 1:i + 4]]
  assert members == sorted(members, reverse=True)  # its rows', most time first
  # the rows by side b's time, the group by its rows' sum (first where it takes most: a one-element kernel's cold single
  # launch took 165 µs once, more than the group's 31 µs)
  tops = [read_time(t) for j, t in enumerate(b_times) if not i < j < i + 5 and t != "–"]
  assert tops == sorted(tops, reverse=True), b_times
  page.wait_for_function("document.querySelector('.tgviz-pairs tr.selected')?.innerText.includes('E_6_3_2')", timeout=LIMIT)  # still marked
  # with the focus in it, the notebook's plain keys do nothing (a, b, d d would edit its cells); Ctrl+S saves it (pass
  # 19: it stayed unsaved, JupyterLab's shortcuts suppressed in the comparison)
  page.locator(".tgviz-compare .tgviz-summary").click()
  assert page.evaluate("document.querySelector('.tgviz-compare').contains(document.activeElement)")
  cells = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell").count()
  for key in ("a", "b", "d", "d"): page.keyboard.press(key)
  settled(page)
  assert page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell").count() == cells
  page.keyboard.press("Control+s")
  page.wait_for_function("!document.querySelector('.lm-DockPanel-tabBar .lm-TabBar-tab.jp-mod-current')"
                         ".classList.contains('jp-mod-dirty')", timeout=LIMIT)
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  page.locator(".tgviz-compare").screenshot(path=str(ARTIFACTS / "compare-widget.png"))
  assert not page.errors


def test_compare_widget_fits_links_the_conv_and_leaves_the_wheel_to_the_notebook(lab, page):
  """The Winograd comparison in JupyterLab: its table no wider than the widget; the plain conv's kernel linked to the
  three Winograd computes it with (a row of their own, times summed; picking one side marks and opens the other's); a
  wheel over the pair's graphs scrolls the notebook, moving neither side, and ctrl+wheel zooms both sides alike."""
  open_in_lab(page, lab, "compare-fit", "%load_ext tgviz", "%%tgviz -o general --no-widget\n" + CONV,
              "%%tgviz -o winograd --env WINO=1 --compare general\n" + CONV)
  run_all(page, 3)
  page.wait_for_selector(".tgviz-compare .tgviz-pairs tbody tr", timeout=LIMIT)
  widths = page.evaluate(WIDTHS)
  assert widths["table"] <= widths["widget"] <= widths["output"], widths
  # every row in view, no inner scroll where the window has room (pass 11: the group's rows hid under a 360 px box)
  box = page.evaluate("() => { const b = document.querySelector('.tgviz-compare .tgviz-table-box'); return [b.scrollHeight, b.clientHeight]; }")
  assert box[0] <= box[1] + 1, box
  group = page.locator(".tgviz-pairs tbody tr", has=page.locator("td", has_text="same ops"))
  assert re.fullmatch(r"conv2d \(line \d+\): 1 kernel ↔ 3 kernels", group.locator("td").nth(1).inner_text())
  members = page.evaluate(SIDE, [4, 1])[6:]  # winograd total of the group's three kernels (after the group, r_4_4_3_3): summed
  assert read_time(group.locator("td").nth(4).locator(".side").nth(1).inner_text()) == pytest.approx(sum(map(read_time, members)), rel=0.01)
  _open_row(page, "r_4_4_3_3")  # one side's kernel: the other side's three marked, the first of them beside it
  marked = page.locator(".tgviz-pairs tr.counterpart td:nth-child(2) .side:nth-child(2)").all_inner_texts()
  assert marked == ["E_6_6 #1", "E_6_6 #2", "E_4_4"]
  sides = page.locator(".tgviz-pair .tgviz-pair-side")
  assert [s.get_attribute("data-kernel") for s in sides.all()] == ["r_4_4_3_3", "E_6_6 #1"]
  page.locator(".tgviz-same-ops button", has_text="E_4_4").click()  # a counterpart opens beside the kernel
  page.wait_for_function("document.querySelectorAll('.tgviz-pair-side')[1]?.dataset.kernel === 'E_4_4'", timeout=LIMIT)
  page.wait_for_selector(".tgviz-pair:not([hidden]) .tgviz-landmark svg g.side g.node", timeout=LIMIT)
  assert page.locator(".tgviz-pairs tr.counterpart td:nth-child(2) .side:nth-child(1)").all_inner_texts() == ["r_4_4_3_3"]
  # the wheel over a graph of the pair: the notebook scrolls, neither side moves
  box = page.locator(".tgviz-pair-side").nth(0).locator(".tgviz-landmark-svg").last
  box.evaluate("(b) => b.scrollIntoView({block: 'start'})")  # its program graph, taller than its box: the notebook below it
  before, top = page.evaluate(VIEWS), page.evaluate(f"({SCROLLER})().scrollTop")
  at = box.bounding_box()
  page.mouse.move(at["x"] + at["width"] / 2, at["y"] + min(at["height"], 300) / 2)
  page.mouse.wheel(0, 150)
  page.wait_for_function(f"({SCROLLER})().scrollTop > {top}", timeout=LIMIT)
  assert page.evaluate(VIEWS) == before
  # ctrl+wheel: both sides' graph of that step zoom alike
  page.keyboard.down("Control")
  page.mouse.wheel(0, -100)
  page.keyboard.up("Control")
  step = box.locator("xpath=..").get_attribute("data-step")
  page.wait_for_function(f"({VIEWS})().filter(([s, v]) => s === {step!r}).every(([s, v]) => v !== {dict(before)[step]!r})", timeout=LIMIT)
  views = [v.split() for s, v in page.evaluate(VIEWS) if s == step]  # (each side opened on its own window: x, y differ)
  assert len(views) == 2 and views[0][2] == views[1][2] != dict(before)[step].split()[2]
  # a drag moves both sides alike
  at = box.bounding_box()
  x, y = at["x"] + at["width"] / 2, at["y"] + at["height"] - 60
  page.mouse.move(x, y)
  page.mouse.down()
  page.mouse.move(x + 40, y - 30, steps=4)
  page.mouse.up()
  moved = [v.split() for s, v in page.evaluate(VIEWS) if s == step]
  deltas = [[round(float(m) - float(v), 2) for m, v in zip(mv, vw, strict=True)] for mv, vw in zip(moved, views, strict=True)]
  assert deltas == [[40, -30, 0]] * 2, (views, moved)
  assert page.evaluate("String(getSelection())") == ""  # (the drag selected no label's text)
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  page.locator(".tgviz-compare").screenshot(path=str(ARTIFACTS / "compare-widget-winograd.png"))
  assert not page.errors


def test_comparison_page_offline(tmp_path, browser):
  traces = []
  for env in ({}, {"IMAGE": 1}):
    with tgviz.capture(env=env) as t: example("conv2d_3x3.py")
    traces.append(t)
  path = tgviz.compare(*traces, labels=("general", "IMAGE=1")).to_html(tmp_path / "index.html")
  ctx = browser.new_context(viewport={"width": 1500, "height": 1100}, offline=True)
  page, requests, errors = ctx.new_page(), [], []
  page.on("request", lambda r: requests.append(r.url))
  page.on("pageerror", lambda e: errors.append(str(e)))
  page.goto(path.as_uri())
  page.wait_for_selector(".tgviz-pairs tbody tr", timeout=LIMIT)
  assert page.evaluate(f"{ROWS}.length") == 4 + 1 + 3 + 1  # and the row of the conv's kernels on both sides, a group
  _open_row(page, "E_6_2_3")
  diff = page.locator(".tgviz-diff")
  assert diff.locator(".add").count() > 0 and diff.locator(".del").count() > 0 and "+++ E_6_2_3" in diff.inner_text()
  assert [s.get_attribute("data-kernel") for s in page.locator(".tgviz-pair-side").all()] == ["E_6_3_2", "E_6_2_3"]
  # in a narrow window (a notebook's sheet) the diff's long lines wrap at their spaces, their continuations hanging in
  # from the code's own indent: no sideways scroll
  page.set_viewport_size({"width": 700, "height": 1100})
  settled(page)
  lines = wraps(page, ".tgviz-diff > span")
  assert lines["wrapped"] >= 1 and not lines["sideways"] and not lines["bad"] and not lines["hang"], lines
  assert diff.inner_text().splitlines()[:2] == ["--- E_6_3_2", "+++ E_6_2_3"]  # (a line each, as copied)
  page.set_viewport_size({"width": 1500, "height": 1100})
  page.locator(".tgviz-pairs th", has_text="FLOPs").locator("button", has_text="general").click()  # the most FLOPs first
  flops = page.evaluate(SIDE, [8, 0])  # after how, the names, code, runs, their times, how they compare, median, launch
  values = [int(v.replace(",", "")) for v in flops if v != "–"]
  assert values == sorted(values, reverse=True) and flops[4:7] == ["–"] * 3  # IMAGE's conv: its group's rows together,
  assert page.evaluate(COLUMN, 0)[2:7] == ["same ops", "in general"] + ["in IMAGE=1"] * 3  # the group by its kernels' FLOPs summed
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  page.screenshot(path=str(ARTIFACTS / "compare-report.png"))
  assert all(u.startswith(("file:", "blob:", "data:")) for u in requests), requests
  assert not errors
  ctx.close()


def test_report_kernel_table(tutorial_trace, tmp_path, page):
  tutorial_trace.to_html(tmp_path / "index.html")
  page.goto((tmp_path / "index.html").as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  page.locator(".tgviz-kernels summary").click()
  rows = page.locator(".tgviz-kernels tbody tr")
  assert rows.count() == len(tutorial_trace.kernels)
  names = page.locator(".tgviz-kernels tbody tr td:first-child").all_inner_texts()
  assert names == [k.display_name for k in tutorial_trace.kernels] and "E_3 #2" in names
  page.locator(".tgviz-kernels th", has_text="bytes").click()  # numbers sort numerically, the biggest first
  column = page.locator(".tgviz-kernels th").all_inner_texts().index("bytes") + 1
  moved = [int(v.replace(",", "")) for v in page.locator(f".tgviz-kernels tbody tr td:nth-child({column})").all_inner_texts()]
  assert moved == sorted(moved, reverse=True) and sorted(moved) == sorted(r["bytes"] for r in tutorial_trace.kernel_table())
  page.locator(".tgviz-kernels tbody tr", has_text="r_2_2_2_2").click()
  page.wait_for_function("document.querySelector('.tgviz-step.selected')?.innerText.startsWith('View Base AST') && "
                         "document.querySelector('.tgviz-code-head').innerText.startsWith('r_2_2_2_2')", timeout=LIMIT)
  assert not page.errors


def _opts_unbroken(sheet, column: int) -> None:
  """Each opt of the kernel table's opts column on one line: a cell's lines break between opts (after a "·"), never
  inside one ("UPCAST(0," / "4)")."""
  lines = sheet.evaluate(LINES, column)
  assert lines and not [t for t in lines if re.search(r"\([^)]*$|^[^(]*\)", t)], lines


@pytest.mark.parametrize("workload", ["attention_trace", "mnist_trace"])
def test_report_kernel_table_fits_a_laptops_window(workload, request, tmp_path, browser):
  """The kernel table at a laptop's 1366 px, of a GPT step's and of the MNIST training step's report (long kernel names,
  long opts lists): every column on screen, no sideways scroll; long texts (opts, causes, what a program is shared
  with) cut short on one line, an opt never broken inside; the total's header says it is a total, beside the median.
  In a notebook's column (900 px) both fit (the MNIST step's scrolled sideways before its names wrapped after their
  underscores); in a column narrower than the table (600 px) it scrolls sideways, each row's kernel name in view."""
  trace = request.getfixturevalue(workload)
  trace.to_html(tmp_path / "index.html")
  with new_page(browser, width=1366, height=768, offline=True) as page:
    page.goto((tmp_path / "index.html").as_uri())
    page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
    page.locator(".tgviz-kernels summary").click()
    sheet = page.locator(".tgviz-kernels > .tgviz-sheet")
    sheet.locator("tbody tr").first.wait_for(timeout=LIMIT)
    settled(page)
    page.screenshot(path=str(ARTIFACTS / f"report-kernel-table-{workload}.png"))
    heads = sheet.locator("th").all_inner_texts()
    assert "total" in heads and "median" in heads and heads[-1] == "opts", heads
    wide = sheet.evaluate("s => ({scroll: s.scrollWidth, client: s.clientWidth, "
                          "right: Math.max(...[...s.querySelectorAll('th')].map((t) => t.getBoundingClientRect().right)), window: innerWidth})")
    assert wide["scroll"] <= wide["client"] and wide["right"] <= wide["window"], wide
    _opts_unbroken(sheet, heads.index("opts"))
    page.set_viewport_size({"width": 900, "height": 768})
    settled(page)
    assert sheet.evaluate("s => s.scrollWidth <= s.clientWidth"), sheet.evaluate("s => [s.scrollWidth, s.clientWidth]")
    # narrower than the table: it scrolls sideways, each row's kernel name staying in view
    page.set_viewport_size({"width": 600, "height": 768})
    settled(page)
    sheet.evaluate("s => { s.scrollLeft = s.scrollWidth; }")
    settled(page)
    first = sheet.locator("tbody tr td:first-child").first.bounding_box()
    assert sheet.evaluate("s => s.scrollLeft") > 0 and first["x"] == 0, first  # (over the sheet's padding too)
    _opts_unbroken(sheet, heads.index("opts"))  # (its column as narrow as it gets)
    page.screenshot(path=str(ARTIFACTS / f"report-kernel-table-{workload}-scrolled.png"))
    assert not page.errors


HEART = """(b) => { const c = b.getBoundingClientRect(), ns = [...b.querySelectorAll('g.side g.node')];
  const whole = (n) => { const r = n.getBoundingClientRect();
    return r.left >= c.left - 1 && r.right <= c.right + 1 && r.top >= c.top - 1 && r.bottom <= c.bottom + 1; };
  return {heart: ns.filter((n) => n.matches('.fam-reduce, .fam-store, .fam-alu:not(.intlike)')).map((n) => [n.getAttribute('data-op'), whole(n)]),
          shown: ns.filter(whole).length, all: ns.length}; }"""


def test_the_comparisons_head_line_counts_what_its_table_shows(tmp_path, page):
  """The head line's tally is its table's: the rows paired (by AST or name), the groups of the same ops with their
  kernels on each side ("in general", "in winograd"), the kernels only one side has; a group's kernels are not pairs."""
  x, w = Tensor.rand(1, 1, 6, 6).realize(), Tensor.rand(1, 1, 3, 3).realize()
  traces = []
  for env in ({}, {"WINO": 1}):
    with tgviz.capture(env=env) as t:
      (x + 1).realize()
      x.conv2d(w).realize()
    traces.append(t)
  page.goto(tgviz.compare(*traces, labels=("general", "winograd")).to_html(tmp_path / "index.html").as_uri())
  page.wait_for_selector(".tgviz-pairs tbody tr", timeout=LIMIT)
  how = page.evaluate(COLUMN, 0)
  pairs, groups = sum(h in ("ast", "name") for h in how), how.count("same ops")
  assert (pairs, groups, how.count("in general"), how.count("in winograd")) == (1, 1, 1, 3), how
  head = page.locator(".tgviz-compare .tgviz-summary").inner_text()
  assert head == "tgviz comparison: general vs winograd · 1 pair · 1 group of the same ops (1 kernel in general ↔ 3 in winograd)", head
  assert not page.errors


@pytest.fixture(scope="module")
def wino(tmp_path_factory):
  """The HTML comparison page of the conv (examples/03_winograd_and_image.ipynb): general against WINO=1."""
  traces = []
  for env in ({}, {"WINO": 1}):
    with tgviz.capture(env=env) as t: example("conv2d_3x3.py")
    traces.append(t)
  return tgviz.compare(*traces, labels=("general", "WINO=1")).to_html(tmp_path_factory.mktemp("wino") / "index.html")


def test_a_pairs_snapshot_too_wide_opens_on_its_reduce(wino, browser):
  """The conv's pair of a WINO=1 comparison (examples/03_winograd_and_image.ipynb) in a notebook-wide page: general's
  r_4_4_3_3 View Base AST, wider than its side's box at a readable size, its SINK as wide as the box, opens readable on
  the kernel's computing heart (its REDUCE, the MUL feeding it, its STORE whole in the box), not on RANGEs, a PARAM,
  the STORE and the SINK with the MUL and REDUCE off to the right."""
  path = wino
  with new_page(browser, width=900, height=1000, offline=True) as page:
    page.goto(path.as_uri())
    page.wait_for_selector(".tgviz-pairs tbody tr", timeout=LIMIT)
    _open_row(page, "r_4_4_3_3")
    box = page.locator(".tgviz-pair-side[data-kernel='r_4_4_3_3'] .tgviz-landmark[data-step='View Base AST'] .tgviz-landmark-svg")
    box.scroll_into_view_if_needed()
    settled(page)
    page.locator(".tgviz-pair-sides").screenshot(path=str(ARTIFACTS / "compare-pair-snapshot-reduce.png"))
    got = box.evaluate(HEART)
    assert {name for name, _ in got["heart"]} >= {"REDUCE", "MUL", "STORE"} and all(w for _, w in got["heart"]), got
    assert got["shown"] < got["all"] and float(box.get_attribute("data-view").split()[2]) >= 1.12, got
    assert not page.errors


# each landmark box: its kernel, step and scale, how many of its nodes it shows whole of how many, and the room (CSS px)
# between its edges and its nodes (left, top, right, bottom)
LANDMARKS = """() => [...document.querySelectorAll('.tgviz-pair .tgviz-landmark-svg')].map((b) => {
  const r = b.getBoundingClientRect(), ns = [...b.querySelectorAll('g.side g.node')].map((n) => n.getBoundingClientRect());
  const whole = ns.filter((n) => n.left >= r.left - 0.5 && n.right <= r.right + 0.5 && n.top >= r.top - 0.5 && n.bottom <= r.bottom + 0.5);
  return {kernel: b.closest('.tgviz-pair-side').dataset.kernel, step: b.closest('.tgviz-landmark').dataset.step,
          scale: Number(b.dataset.view.split(' ')[2]), all: ns.length, whole: whole.length,
          bands: [Math.min(...ns.map((n) => n.left)) - r.left, Math.min(...ns.map((n) => n.top)) - r.top,
                  r.right - Math.max(...ns.map((n) => n.right)), r.bottom - Math.max(...ns.map((n) => n.bottom))]}; })"""


def _pair_landmarks(page, report, row: str, shot: str) -> list:
  """Open the comparison page's pair of row, settled, its sides' screenshot to ARTIFACTS/shot: its landmarks' views."""
  page.goto(report.as_uri())
  page.wait_for_selector(".tgviz-pairs tbody tr", timeout=LIMIT)
  _open_row(page, row)
  settled(page)
  page.locator(".tgviz-pair-sides").screenshot(path=str(ARTIFACTS / shot))
  return page.evaluate(LANDMARKS)


def test_a_pairs_graph_that_fits_uses_its_box(wino, browser):
  """A pair whose graphs fit their boxes readable (E_2's View Base AST, 14 nodes) opens each as close as fills its box
  across or down (within the 10 px margin), readable: it opened at 11 px, centred with empty bands all round (150 px
  each side)."""
  with new_page(browser, 1500, 1100, offline=True) as page:
    whole = [v for v in _pair_landmarks(page, wino, "E_2", "compare-pair-fits.png") if v["whole"] == v["all"]]
    assert {v["step"] for v in whole} >= {"View Base AST"}, whole
    for v in whole:
      left, top, right, bottom = v["bands"]
      assert v["scale"] >= 1.12 and min(left + right, top + bottom) <= 2 * 10 + 2, v
    assert not page.errors


def test_a_pairs_view_program_opens_on_nodes(wino, browser):
  """The conv's pair (r_4_4_3_3 beside WINO=1's E_6_6) in a wide page: each side's View Program opens on its nodes,
  readable, not on its SINK alone under bare edges (the SINK, its output, is a box's height below the rest: the window
  that held it showed one node of 40 and 50)."""
  with new_page(browser, 1500, 1100, offline=True) as page:
    got = _pair_landmarks(page, wino, "r_4_4_3_3", "compare-pair-view-program.png")
    program = [v for v in got if v["step"] == "View Program"]
    assert len(program) == 2 and all(v["whole"] >= min(10, v["all"]) and v["scale"] >= 1.12 for v in program), got
    assert not page.errors
