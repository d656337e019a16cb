"""The HTML report's whole window as a new user met it (the MNIST training step's, 841x900 and 1600x1000): the kernel
table's sheet stays inside the window as it changes size, its sideways scroll bar in view, and fits a notebook's
widget, its long names wrapped; the step tree is no narrower
at 1600 px than at 841, each kernel's name whole; Escape with nothing open leaves the keys working (no notebook to go
back to)."""
import pytest
from harness import ARTIFACTS, KERNEL_TABLE, LIMIT, new_page, settled, to_steps


@pytest.fixture(scope="module")
def mnist_report(mnist_trace, tmp_path_factory):
  return mnist_trace.to_html(tmp_path_factory.mktemp("mnist") / "index.html")


def opened(page, report) -> None:
  page.goto(report.as_uri())
  page.wait_for_selector(".tgviz-progmap[open], .tgviz-stage svg g.node", state="attached", timeout=LIMIT)
  settled(page)


# the kernel table's sheet: its box, the columns' top (where it should start), the window's height, whether it scrolls
# sideways, and the right edge of its last column's header once scrolled to its end
SHEET = """() => { const s = document.querySelector('.tgviz-kernels[open] > .tgviz-sheet'), r = s.getBoundingClientRect();
  const wide = s.scrollWidth > s.clientWidth;
  s.scrollLeft = s.scrollWidth;
  const last = [...s.querySelectorAll('thead th')].pop().getBoundingClientRect();
  s.scrollLeft = 0;
  return {top: r.top, bottom: r.bottom, columns: document.querySelector('.tgviz-main').getBoundingClientRect().top,
          height: innerHeight, width: innerWidth, wide, last: last.right}; }"""


def test_the_kernel_table_stays_in_the_window_as_it_changes_size(mnist_report, browser):
  """Opened at 1600x1000, then the window made 841x900, then 1600x1000 again: the sheet starts at the columns' top
  (under the top bar, which wraps onto more lines at 841) and ends inside the window, its sideways scroll bar in view
  where the table is wider than the window (it ran 100 px past the window's foot: its top and height were those of the
  window it opened in), and its last column can be scrolled to."""
  with new_page(browser, width=1600, height=1000, offline=True) as page:
    opened(page, mnist_report)
    page.locator(".tgviz-kernels > summary").click()
    page.wait_for_selector(".tgviz-kernels[open] tbody tr", timeout=LIMIT)
    for width, height in ((1600, 1000), (841, 900), (1600, 1000)):
      page.set_viewport_size({"width": width, "height": height})
      page.wait_for_function(f"innerWidth === {width} && innerHeight === {height}", timeout=LIMIT)
      settled(page)
      got = page.evaluate(SHEET)
      page.screenshot(path=str(ARTIFACTS / f"report-kernel-table-{width}.png"))
      assert abs(got["top"] - got["columns"]) <= 1 and got["bottom"] <= got["height"], got
      assert got["last"] <= got["width"], got
    assert not page.errors


def test_a_models_kernel_table_fits_a_notebooks_width(mnist_trace, mnist_report, browser):
  """The MNIST step's kernel table, 67 kernels, at 841 px: its names of up to 26 characters (r_2_13_13_2_2_2_4_4_3_3 #1)
  and FLOPs of 9 digits made it 947 px wide, a sideways scroll with the causes cut and the opts off screen (a new
  user's pass; the attention block's short names never met it). Now it fits, every figure whole, a name going on more
  lines after its underscores (its text the name itself), each row three lines high at most; at 1600 px each row one
  line."""
  names = sorted(k.display_name for k in mnist_trace.kernels)
  assert max(map(len, names)) >= 24
  with new_page(browser, width=841, height=900, offline=True) as page:
    opened(page, mnist_report)
    page.locator(".tgviz-kernels > summary").click()
    page.wait_for_selector(".tgviz-kernels[open] tbody tr", timeout=LIMIT)
    for width in (841, 1600):
      page.set_viewport_size({"width": width, "height": 900})
      page.wait_for_function(f"innerWidth === {width}", timeout=LIMIT)
      settled(page)
      got = page.evaluate(KERNEL_TABLE)
      page.screenshot(path=str(ARTIFACTS / f"report-mnist-kernel-table-{width}.png"))
      assert got["scroll"] <= got["client"] and got["right"] <= got["window"], got  # no sideways scroll
      assert not got["cut"] and not got["broken"], got
      assert sorted(n for n, _ in got["names"]) == names
      line = page.eval_on_selector(".tgviz-kernels tbody td", "c => parseFloat(getComputedStyle(c).lineHeight) || 13")
      most = 3 if width == 841 else 1  # lines (a row's padding and border: under one more)
      assert all(h < (most + 1) * line for h in got["heights"]), (width, line, list(zip(got["names"], got["heights"], strict=True)))
    assert not page.errors


# the step tree's width, and each kernel's name (its group's) that does not show whole in it
TREE = """() => { const col = document.querySelector('.tgviz-left').getBoundingClientRect();
  const cut = [...document.querySelectorAll('.tgviz-group.kind-kernel > summary')].map((s) => {
    const t = [...s.childNodes].find((n) => n.nodeType === Node.TEXT_NODE && n.textContent.trim());
    const r = document.createRange(); r.selectNodeContents(t);
    return [t.textContent.trim(), r.getBoundingClientRect().right]; }).filter(([, right]) => right > col.right);
  return {width: col.width, kernels: document.querySelectorAll('.tgviz-group.kind-kernel').length, cut}; }"""


def test_a_big_trees_rows_come_after_its_first_graph(mnist_trace, mnist_report, browser):
  """A trace of thousands of steps (the MNIST step's 5,044) draws its first graph before it builds its tree, whose rows
  are written as HTML in one go (a model's 22,210 took 0.6 s, which the first graph waited for): at the first graph
  the tree says it is listing the steps; then every step has its row, the step shown marked."""
  steps = sum(len(g.steps) for g in mnist_trace.groups)
  assert steps > 3000  # (widget.js TREE_LATER_ROWS)
  with new_page(browser, width=1600, height=1000, offline=True) as page:
    page.add_init_script("""new MutationObserver((_, obs) => {
      if (!document.querySelector('.tgviz-stage svg g.node')) return;
      obs.disconnect();
      window.atFirstGraph = {rows: document.querySelectorAll('.tgviz-step').length, tree: document.querySelector('.tgviz-tree').textContent};
    }).observe(document, {childList: true, subtree: true});""")
    page.goto(mnist_report.as_uri())
    page.wait_for_function("window.atFirstGraph !== undefined", timeout=LIMIT)
    assert page.evaluate("window.atFirstGraph") == {"rows": 0, "tree": f"listing {steps:,} steps…"}
    page.wait_for_function(f"document.querySelectorAll('.tgviz-step').length === {steps}", timeout=LIMIT)
    shown = page.locator(".tgviz-stage").get_attribute("data-step")
    assert page.locator(".tgviz-step.selected").get_attribute("data-key") == shown
    assert not page.errors


def test_the_step_tree_is_no_narrower_in_a_wider_window(mnist_report, browser):
  """The tree at 1600x1000 is at least as wide as at 841x900 (it was 120 px against 180: "r_4_4_8_3_3_8_11" for
  r_4_4_8_3_3_8_11_11), and every kernel's name shows whole in it at both."""
  widths = {}
  for width, height in ((841, 900), (1600, 1000)):
    with new_page(browser, width=width, height=height, offline=True) as page:
      opened(page, mnist_report)
      to_steps(page)
      settled(page)
      got = page.evaluate(TREE)
      page.screenshot(path=str(ARTIFACTS / f"report-tree-{width}.png"))
      assert got["kernels"] > 60 and not got["cut"], got
      widths[width] = got["width"]
      assert not page.errors
  assert widths[1600] >= widths[841], widths


def test_a_match_typed_is_shown(mnist_trace, mnist_report, browser):
  """A step of thousands of matches (the slider moves dozens a pixel): its match label clicked is a box to type the
  match in; Enter shows it (0: the whole step, past the last: the last), Escape leaves the box as it was; the keys typed
  in it are its own (1, the widget's one-to-one key, is a digit there), and the widget's keys work again after."""
  step = max((s for g in mnist_trace.groups for s in g.steps), key=lambda s: len(s.matches))
  n = len(step.matches)
  assert n > 1000
  with new_page(browser, width=1600, height=1000, offline=True) as page:
    opened(page, mnist_report)
    to_steps(page)
    page.locator(".tgviz-busiest").click()
    label, box, stage = page.locator(".tgviz-match-label"), page.locator(".tgviz-match-input"), page.locator(".tgviz-stage")
    page.wait_for_function("document.querySelector('.tgviz-match-label').textContent === 'whole step'", timeout=LIMIT)
    def typed(text: str, key: str = "Enter") -> None:
      label.click()
      assert box.is_visible() and not label.is_visible() and box.evaluate("b => b === document.activeElement")
      page.keyboard.type(text)
      page.keyboard.press(key)
      assert label.is_visible() and not box.is_visible()
    typed("1011")
    page.wait_for_function("document.querySelector('.tgviz-stage').dataset.match === '1010'", timeout=LIMIT)
    assert label.inner_text() == f"match 1011 / {n}" and box.input_value() == "1011"
    typed("5", "Escape")  # left: nothing changes
    assert stage.get_attribute("data-match") == "1010" and label.inner_text() == f"match 1011 / {n}"
    typed(str(n + 100))  # past the last: the last
    page.wait_for_function(f"document.querySelector('.tgviz-stage').dataset.match === '{n - 1}'", timeout=LIMIT)
    typed("0")  # the whole step
    page.wait_for_function("document.querySelector('.tgviz-stage').dataset.match === ''", timeout=LIMIT)
    assert label.inner_text() == "whole step"
    page.keyboard.press("ArrowRight")  # the widget's keys again: the first match
    page.wait_for_function("document.querySelector('.tgviz-stage').dataset.match === '0'", timeout=LIMIT)
    assert not page.errors


def test_escape_with_nothing_open_leaves_the_keys_working(tutorial_trace, tmp_path, browser):
  """In the report, Escape with nothing to close keeps the focus in the page's widget (it went to <body>, and ←, z and
  r did nothing until the graph was clicked again): r then shows the raw graph."""
  with new_page(browser, width=1600, height=1000, offline=True) as page:
    opened(page, tutorial_trace.to_html(tmp_path / "index.html"))
    to_steps(page)
    page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
    page.locator(".tgviz-title").click()
    page.keyboard.press("Escape")
    assert page.evaluate("document.querySelector('.tgviz-root').contains(document.activeElement)")
    page.keyboard.press("r")
    page.wait_for_function("document.querySelector('.tgviz-raw').classList.contains('active')", timeout=LIMIT)
    assert not page.errors
