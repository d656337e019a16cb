"""Linked panes in the browser, in the HTML report and in JupyterLab's widget: a code line marks its UOps in the graph,
a node marks its code lines, the kernel header names the Tensor ops and the user's lines, the node panel's history and
the rules tab jump where they say."""
import pytest
from harness import ARTIFACTS, TUTORIAL, new_page, notebook, run_all

from tgviz import _tinygrad as tg
from tgviz import protocol as P


@pytest.fixture(params=["offline page", "JupyterLab"])
def page(browser, request):
  """A page: offline for the report, with the loopback network for JupyterLab."""
  with new_page(browser, offline=request.param == "offline page") as p: yield p


def _conv(trace):
  return next(k for k in trace.kernels if k.name == "r_2_2_2_2")


def _store_line(kernel) -> int:
  return next(i for i, ln in enumerate(kernel.lines, 1) if ln and ln[0].op.name == "STORE")


def waiter(page):
  """wait(step key, match): until the stage shows that picture."""
  def wait(key: str, match: int | None = None) -> None:
    m = "" if match is None else str(match)
    page.wait_for_function("([k, m]) => { const s = document.querySelector('.tgviz-stage'); return s.dataset.step === k && s.dataset.match === m; }",
                           arg=[key, m], timeout=60_000)
  return wait


def check_linking(page, trace, wait_picture, shot: str) -> None:
  """The checks both frontends pass, on the tutorial's conv kernel (whose View Base AST is shown)."""
  conv = _conv(trace)
  page.locator(f".tgviz-step[data-key='{P.step_key(conv.group.steps[0])}']").click()
  wait_picture(P.step_key(conv.group.steps[0]))
  assert "conv2d" in page.locator(".tgviz-origins").inner_text()
  # hover a code line: its UOps are marked in the graph shown (the View Base AST already holds the store)
  n = _store_line(conv)
  line = page.locator(f".tgviz-code [data-line='{n}']")
  assert line.inner_text().strip() == conv.source.splitlines()[n - 1].strip()
  # a click opens the graph the renderer consumed and keeps the line's UOps marked there
  line.click()
  wait_picture(P.step_key(conv.codegen_step))
  keys = set(page.eval_on_selector_all(".tgviz-stage g.node.hl-line", "ns => ns.map(n => n.dataset.node)"))
  expected = {tg.node_key(u) for u in conv.lines[n - 1]}
  assert keys and keys <= expected and tg.node_key(conv.lines[n - 1][0]) in keys, (keys, expected)
  line.click()  # unpinned
  page.locator(".tgviz-title").hover()
  assert page.locator(".tgviz-stage g.node.hl-line").count() == 0
  line.hover()
  assert page.locator(".tgviz-stage g.node.hl-line").count() == len(keys)
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  page.screenshot(path=str(ARTIFACTS / shot))
  # click a node: its code lines are marked
  load = next(u for u in conv.lines[1] if u.op.name == "LOAD")
  page.keyboard.press("f")
  page.locator(f".tgviz-stage g.node[data-node='{tg.node_key(load)}']").first.click()
  page.wait_for_selector(".tgviz-node-panel:not([hidden])", timeout=30_000)
  marked = page.eval_on_selector_all(".tgviz-code .tgviz-line-hl", "ls => ls.map(l => Number(l.dataset.line))")
  assert marked == conv.line_numbers(load), (marked, conv.line_numbers(load))
  # the node's history: the Python side's events, each a link to where it happened
  panel = page.locator(".tgviz-history")
  panel.wait_for(timeout=30_000)
  history = P.history(trace, load, conv.group)
  shown = page.eval_on_selector_all(".tgviz-history .tgviz-event", "es => es.map(e => [e.classList[1], e.querySelector('.tgviz-link').textContent])")
  assert shown == [[e["kind"], e["title"]] for e in history], (shown, history)
  first = history[0]
  page.locator(".tgviz-history .tgviz-event .tgviz-link").first.click()
  wait_picture(first["step"], first["match"])
  # the rules tab: the most frequent pattern first; a click goes to its first match
  page.locator(".tgviz-rules-toggle").click()
  page.wait_for_selector(".tgviz-rules tr.tgviz-rule", timeout=30_000)
  top = trace.rules()[0]
  row = page.locator(".tgviz-rules tr.tgviz-rule").first
  assert row.locator("td").first.inner_text() == str(top.count)
  row.click()
  wait_picture(P.step_key(top.first.step), top.first.index)


@pytest.mark.parametrize("page", ["offline page"], indirect=True)
def test_report_links_code_graph_and_source(tutorial_trace, tmp_path, page):
  tutorial_trace.to_html(tmp_path / "index.html")
  page.goto((tmp_path / "index.html").as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=30_000)
  check_linking(page, tutorial_trace, waiter(page), "report-linking.png")
  assert not page.errors


@pytest.mark.parametrize("page", ["JupyterLab"], indirect=True)
def test_widget_links_code_graph_and_source(lab, page):
  url, token, root = lab
  (root / "linking.ipynb").write_text(notebook("%load_ext tgviz", TUTORIAL))
  import tgviz
  with tgviz.capture() as trace:  # the same cell here: the same graphs, keys and steps as in the notebook's kernel
    exec(compile(TUTORIAL.split("\n", 1)[1], "cell", "exec"), {})
  page.goto(f"{url}/lab/workspaces/linking/tree/linking.ipynb?token={token}&reset")
  run_all(page, 2)
  page.wait_for_selector(".tgviz-stage svg g.node", state="attached", timeout=120_000)
  check_linking(page, trace, waiter(page), "widget-linking.png")
  page.locator(".tgviz-rules-toggle").click()  # back to the tree
  page.locator(f".tgviz-step[data-key='{P.step_key(_conv(trace).group.steps[0])}']").click()
  origin = page.locator(".tgviz-origin").first
  assert "conv2d" in origin.inner_text() and "Cell In[2], line 4" in origin.inner_text() and "x.conv2d(weight)" in origin.inner_text()
  origin.locator("summary").click()  # the cell's lines around the call
  assert "→   4  result = x.conv2d(weight)" in origin.locator("pre").inner_text()
  assert not page.errors
