"""Views that follow what the user asked for, in the HTML report at 1600x1000: a clicked code line of a kernel whose
graph is too big to draw whole shows that line's UOps marked and on screen; the overview shows where the view is and
moves it."""
import pytest
from harness import ARTIFACTS, new_page

from tgviz import bridge as tg
from tgviz import protocol as P

ON_SCREEN = """(sel) => { const c = document.querySelector('.tgviz-canvas').getBoundingClientRect();
  const ns = [...document.querySelectorAll(sel)];
  return [ns.length, ns.filter((n) => { const r = n.getBoundingClientRect();
    return r.left >= c.left - 1 && r.right <= c.right + 1 && r.top >= c.top - 1 && r.bottom <= c.bottom + 1; }).length]; }"""


@pytest.fixture
def page(browser):
  with new_page(browser, width=1600, height=1000, offline=True) as p: yield p


@pytest.fixture(scope="module")
def cnn_report(cnn_trace, tmp_path_factory):
  return cnn_trace.to_html(tmp_path_factory.mktemp("views") / "index.html", workers=2)


def test_a_clicked_code_line_shows_its_uops_on_screen(cnn_trace, cnn_report, page):
  """The CNN's biggest kernel opens on its View Base AST; each statement line clicked (a dozen, spread over the code)
  opens the graph the renderer consumed, a partial view of over 600 nodes built around the line's UOps, with them
  marked and on screen; a line with no UOp says so on the status line."""
  kernel = max(cnn_trace.kernels, key=lambda k: len(tg.toposort(k.codegen_step.before())))
  lines = kernel.line_keys
  src = kernel.source.splitlines()
  statements = [n for n, text in enumerate(src, 1) if text.strip().endswith(";") and lines[n - 1]]
  page.goto(cnn_report.as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=60_000)
  page.locator(".tgviz-filter").fill(kernel.name)
  base = next(s for s in kernel.group.steps if s.name == tg.LANDMARKS[0])
  page.locator(f".tgviz-step[data-key='{P.step_key(base)}']").click()
  page.wait_for_function(f"document.querySelector('.tgviz-stage').dataset.step === '{P.step_key(base)}'", timeout=30_000)
  tried = statements[:: max(1, len(statements) // 12)]
  for n in tried:
    page.locator(f".tgviz-code [data-line='{n}']").click()
    page.wait_for_function("(n) => document.querySelector(`.tgviz-code [data-line='${n}']`).classList.contains('tgviz-line-pinned')"
                           " && document.querySelectorAll('.tgviz-stage g.side g.node.hl-line').length > 0", arg=n, timeout=60_000)
    page.wait_for_timeout(100)
    marked, shown = page.evaluate(ON_SCREEN, ".tgviz-stage g.side g.node.hl-line")
    assert shown >= 1, (n, src[n - 1], marked, shown)
    assert page.locator(".tgviz-stage").get_attribute("data-step") == P.step_key(kernel.codegen_step)
    page.locator(f".tgviz-code [data-line='{n}']").click()  # unpinned again: the next line is a fresh click
  page.screenshot(path=str(ARTIFACTS / "report-code-line.png"))
  empty = next(n for n, keys in enumerate(lines, 1) if not keys)
  page.locator(f".tgviz-code [data-line='{empty}']").click()
  assert "has no UOp behind it" in page.locator(".tgviz-status").inner_text()
  assert not page.errors


def test_the_overview_shows_and_moves_the_view(cnn_trace, cnn_report, page):
  """A big step's picture is bigger than the canvas: the overview is shown, and a click on its far corner moves the
  view there (other nodes come on screen)."""
  step = max(cnn_trace.steps, key=lambda s: len(s.matches))
  page.goto(cnn_report.as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=60_000)
  page.locator(f".tgviz-step[data-key='{P.step_key(step)}']").click()
  page.wait_for_function(f"document.querySelector('.tgviz-stage').dataset.step === '{P.step_key(step)}'", timeout=60_000)
  mini = page.locator(".tgviz-minimap")
  assert mini.is_visible()
  before = page.evaluate("() => document.querySelector('.tgviz-stage').style.transform")
  box = mini.bounding_box()
  page.mouse.click(box["x"] + 2, box["y"] + 2)
  assert page.evaluate("() => document.querySelector('.tgviz-stage').style.transform") != before
  assert page.locator(".tgviz-node-panel").is_hidden()  # a click on the overview picks no node
  page.screenshot(path=str(ARTIFACTS / "report-overview.png"))
  assert not page.errors


def test_the_last_match_of_a_big_step_shows_its_own_nodes(cnn_trace, cnn_report, page):
  """At the last match of the busiest steps (thousands of matches) and after z, the match's own nodes (what it replaced
  and its replacement) are on screen, not only the nodes rebuilt above them."""
  page.goto(cnn_report.as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=60_000)
  for step in sorted(cnn_trace.steps, key=lambda s: -len(s.matches))[:2]:
    key, last = P.step_key(step), len(step.matches) - 1
    page.locator(f".tgviz-step[data-key='{key}']").click()
    page.wait_for_function(f"document.querySelector('.tgviz-stage').dataset.step === '{key}'", timeout=60_000)
    page.locator(".tgviz-title").click()
    page.keyboard.press("End")
    page.wait_for_function(f"document.querySelector('.tgviz-stage').dataset.match === '{last}'", timeout=60_000)
    page.wait_for_timeout(100)
    own, shown = page.evaluate(ON_SCREEN, ".tgviz-stage g.side g.node.match-node")
    assert own >= 1 and shown >= 1, (step.path, own, shown)
    page.keyboard.press("z")
    page.wait_for_timeout(100)
    assert page.evaluate(ON_SCREEN, ".tgviz-stage g.side g.node.match-node")[1] >= 1, step.path
  page.screenshot(path=str(ARTIFACTS / "report-last-match.png"))
  assert not page.errors
