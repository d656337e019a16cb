"""Finding things, as a user does, in headless Chromium: the search in the MNIST step's report (the loss's log_softmax
in three actions, a UOp marked on screen, a code line, a rule's match, no match) and in the widget in JupyterLab (Python
answers); and a trace that opens on where tinygrad failed (a rewrite, a compile, a launch), in the report and the widget."""
import subprocess
import sys

import pytest
import workloads
from harness import ARTIFACTS, ATTENTION, LIMIT, inside, new_page, open_in_lab, run_all, search_for, settled

import tgviz
from tgviz.views import protocol as P

ON_SCREEN = """(sel) => { const c = document.querySelector('.tgviz-canvas').getBoundingClientRect();
  return [...document.querySelectorAll(sel)].some((n) => { const r = n.getBoundingClientRect();
    return r.width > 0 && r.left >= c.left - 1 && r.right <= c.right + 1 && r.top >= c.top - 1 && r.bottom <= c.bottom + 1; }); }"""


@pytest.fixture(scope="module")
def mnist_report(mnist_trace, tmp_path_factory):
  return mnist_trace.to_html(tmp_path_factory.mktemp("mnist") / "index.html", workers=2)


@pytest.fixture
def page(browser):
  with new_page(browser, 1600, 1000, offline=True) as p: yield p


def search(page, text: str, total: int) -> None:
  """Type text into the search box (beside the program map the page opens on, over the tree) and wait for its hits'
  count."""
  page.locator(".tgviz-filter").click()
  page.keyboard.press("Control+a")
  page.keyboard.type(text)
  said = f"{total} hit{'s' if total != 1 else ''} for “{text}”" if total else f"no match for “{text}”"
  page.wait_for_function("(t) => document.querySelector('.tgviz-results-head')?.textContent === t", arg=said, timeout=LIMIT)


def shown_at(page, step, match) -> None:
  m = "" if match is None else str(match)
  page.wait_for_function("([s, m]) => { const st = document.querySelector('.tgviz-stage'); return st && st.dataset.step === s && "
                         "st.dataset.match === m && st.querySelector('svg g.node'); }", arg=[P.step_key(step), m], timeout=LIMIT)


def test_search_in_the_report_finds_and_goes_there(mnist_trace, mnist_report, page):
  page.goto(mnist_report.as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  # "where did the loss's log_softmax end up?": /, log_softmax, a click (3 actions)
  hits = mnist_trace.search("log_softmax")
  search(page, "log_softmax", len(hits))
  assert page.locator(".tgviz-hits.kind-origin .tgviz-hit").count() == len(hits)
  page.locator(".tgviz-hit").first.click()
  shown_at(page, hits[0].step, None)
  assert page.locator(".tgviz-progmap[open]").count() == 0  # the map the page opened on gives way to what was found
  assert hits[0].kernel.display_name in page.locator(".tgviz-code-head").inner_text()
  page.screenshot(path=str(ARTIFACTS / "search-log-softmax.png"))
  # the same hit again with the map opened over the kernel it shows: the map gives way again (it stayed, covering it)
  page.locator(".tgviz-progmap > summary").click()
  page.wait_for_selector(".tgviz-progmap[open]", timeout=LIMIT)
  page.locator(".tgviz-hit").first.click()
  page.wait_for_selector(".tgviz-progmap:not([open])", state="attached", timeout=LIMIT)
  shown_at(page, hits[0].step, None)
  # a UOp: where it first appears, marked on screen
  uop = next(h for h in mnist_trace.search("EXP2") if h.kind == "uop" and h.kernel is not None)
  search(page, "EXP2", len(mnist_trace.search("EXP2")))
  page.locator(".tgviz-hits.kind-uop .tgviz-hit").nth([h for h in mnist_trace.search("EXP2") if h.kind == "uop"].index(uop)).click()
  shown_at(page, uop.step, uop.match)
  marked = f".tgviz-stage g.node.hl[data-node='{uop.node}'], .tgviz-stage g.node.hl[data-holds~='{uop.node}']"
  page.wait_for_selector(marked, timeout=LIMIT)
  assert page.evaluate(ON_SCREEN, marked)
  page.screenshot(path=str(ARTIFACTS / "search-uop.png"))
  # a code line: the kernel's codegen graph, the line marked
  code = next(h for h in mnist_trace.search("get_local_id") if h.kind == "code")
  search(page, "get_local_id", len(mnist_trace.search("get_local_id")))
  page.locator(".tgviz-hits.kind-code .tgviz-hit").first.click()
  page.wait_for_selector(f".tgviz-right > .tgviz-code [data-line='{code.line}'].tgviz-line-pinned", timeout=LIMIT)
  assert page.locator(".tgviz-stage").get_attribute("data-step") == P.step_key(code.step)
  # a rule: the step it fired in, at its first match there
  rule = next(h for h in mnist_trace.search("do_devectorize") if h.kind == "rule")
  search(page, "do_devectorize", len(mnist_trace.search("do_devectorize")))
  page.locator(".tgviz-hits.kind-rule .tgviz-hit").first.click()
  shown_at(page, rule.step, rule.match)
  assert "do_devectorize" in page.locator(".tgviz-pattern").inner_text()
  # text from the trace is text: code with "<<" in it lists as such
  shifts = mnist_trace.search("<<")
  search(page, "<<", len(shifts))
  assert "<<" in page.locator(".tgviz-hits.kind-code .tgviz-hit-text").first.inner_text()
  assert page.locator(".tgviz-results .tgviz-hit-text *").count() == 0
  search(page, "no such thing anywhere", 0)
  page.keyboard.press("Escape")  # clears the box: the hits go
  page.wait_for_selector(".tgviz-results", state="hidden", timeout=LIMIT)
  page.locator(".tgviz-title").click()
  page.keyboard.press("Control+f")  # Ctrl-F: the search box, not the page's find
  assert page.evaluate("document.activeElement.classList.contains('tgviz-filter')")
  assert not page.errors


SOFTMAX = "%%tgviz -o sm\nfrom tinygrad import Tensor\nTensor.manual_seed(0)\nTensor.randn(8, 33).softmax(1).realize()"


def test_search_in_the_widget_is_answered_by_python(lab, browser):
  with new_page(browser, 1600, 1100) as page:
    open_in_lab(page, lab, "search", "%load_ext tgviz", SOFTMAX)
    run_all(page, 2)
    page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
    page.locator(".tgviz-filter").click()  # beside the program map the widget opens on
    page.keyboard.type("EXP2")
    page.wait_for_selector(".tgviz-hits.kind-uop .tgviz-hit", timeout=LIMIT)
    head = page.locator(".tgviz-results-head").inner_text()
    assert head.endswith("for “EXP2”") and int(head.split()[0]) >= page.locator(".tgviz-hit").count() > 0
    hit = page.locator(".tgviz-hits.kind-uop .tgviz-hit").last
    where = hit.locator(".tgviz-hit-where").inner_text()
    hit.click()
    page.wait_for_function("(w) => document.querySelector('.tgviz-title').innerText.startsWith(w.split(' · ')[0])", arg=where, timeout=LIMIT)
    page.wait_for_selector(".tgviz-stage g.node.hl", timeout=LIMIT)
    assert page.evaluate(ON_SCREEN, ".tgviz-stage g.node.hl")
    page.locator(".tgviz-root").screenshot(path=str(ARTIFACTS / "search-widget.png"))
    assert not page.errors


def test_the_widgets_search_names_the_users_lines_by_their_cell(lab, browser):
  """A search of the user's op in the widget lists where it was called as the rest of the widget (and IPython's
  tracebacks) names it, "Cell In[2], line 3", not by ipykernel's temporary file ("1002921068.py:3"); a search of
  that name finds every op of the line."""
  with new_page(browser, 1600, 1100) as page:
    open_in_lab(page, lab, "search-cell", "%load_ext tgviz", SOFTMAX)
    run_all(page, 2)
    page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
    page.locator(".tgviz-filter").click()
    page.keyboard.type("softmax")
    page.wait_for_function("document.querySelector('.tgviz-results-head')?.textContent.endsWith('for “softmax”')", timeout=LIMIT)
    texts = page.locator(".tgviz-hits.kind-origin .tgviz-hit-text").all_inner_texts()
    assert texts and all("softmax" in t and "Cell In[2], line 3" in t and ".py:" not in t for t in texts), texts
    assert ".py:" not in page.locator(".tgviz-results").inner_text()
    page.locator(".tgviz-results").screenshot(path=str(ARTIFACTS / "search-widget-cell.png"))
    page.keyboard.press("Control+a")
    page.keyboard.type("Cell In[2], line 3")
    page.wait_for_function("document.querySelector('.tgviz-results-head')?.textContent.endsWith('for “Cell In[2], line 3”')", timeout=LIMIT)
    # the line's every op (randn's too, which "softmax" does not name: the op is what that finds, not the line's text)
    page.wait_for_function(f"document.querySelectorAll('.tgviz-hits.kind-origin .tgviz-hit').length > {len(texts)}", timeout=LIMIT)
    lines = page.locator(".tgviz-hits.kind-origin .tgviz-hit-text").all_inner_texts()
    assert all(t.startswith("Cell In[2], line 3  ") for t in lines) and {t.split("  ")[1].split()[0] for t in lines} == {"randn", "softmax"}, lines
    assert not page.errors


@pytest.fixture(scope="module", params=["rewrite", "compile", "run"])
def failed_report(request, tmp_path_factory):
  """tgviz run of a script that makes tinygrad fail there: its report, and the trace it saved."""
  tmp = tmp_path_factory.mktemp(f"failed-{request.param}")
  script = tmp / f"failing_{request.param}.py"
  script.write_text(workloads.FAILING[request.param])
  proc = subprocess.run([sys.executable, "-m", "tgviz", "run", str(script), "--out", str(tmp / "out"), "--save", "--svg", "none"],
                        capture_output=True, text=True, timeout=600)
  assert proc.returncode == 1 and "tgviz: tinygrad failed: " in proc.stderr, proc.stderr[-2000:]
  return request.param, tmp / "out" / "index.html", tgviz.load(tmp / "out" / "trace.tgviz").failure


def test_a_report_opens_on_where_tinygrad_failed(failed_report, page):
  where, report, f = failed_report
  page.goto(report.as_uri())
  shown_at(page, f.step, f.match)
  box = page.locator(".tgviz-failure")
  assert box.is_visible() and f.summary() in box.inner_text() and "failed" in box.inner_text()
  marked = f".tgviz-stage g.node.hl[data-node='{f.node}'], .tgviz-stage g.node.hl[data-holds~='{f.node}']"
  page.wait_for_selector(marked, timeout=LIMIT)  # the UOp it failed on, picked, on screen, its panel open
  assert page.evaluate(ON_SCREEN, marked) and page.locator(".tgviz-node-panel").is_visible()
  if where == "compile": page.wait_for_selector(f".tgviz-right > .tgviz-code [data-line='{f.line}'].tgviz-line-hl", timeout=LIMIT)
  box.locator("summary").click()  # the exception and tinygrad's traceback
  assert "Traceback" in box.locator("pre").inner_text() and f.error.splitlines()[0] in box.locator("pre").inner_text()
  page.screenshot(path=str(ARTIFACTS / f"failure-{where}.png"))
  assert not page.errors


def test_the_widget_opens_on_where_tinygrad_failed(lab, browser):
  cell = "%%tgviz -o failed\n" + workloads.FAILING["rewrite"]
  with new_page(browser, 1600, 1100) as page:
    open_in_lab(page, lab, "failing", "%load_ext tgviz", cell)
    run_all(page, 2)
    page.wait_for_selector(".tgviz-failure:not([hidden])", timeout=LIMIT)
    page.wait_for_function("document.querySelector('.tgviz-stage').dataset.match === '4'", timeout=LIMIT)  # match 5 of 5
    assert "a rewrite failed in" in page.locator(".tgviz-failure").inner_text()
    page.wait_for_selector(".tgviz-stage g.node.hl", timeout=LIMIT)  # the STORE the pattern was matching, picked
    page.wait_for_function("document.querySelector('.tgviz-node-panel').innerText.startsWith('STORE')", timeout=LIMIT)
    assert "devectorize2" in page.locator(".tgviz-title").inner_text()
    page.locator(".tgviz-root").screenshot(path=str(ARTIFACTS / "failure-widget.png"))
    assert not page.errors


SOFTMAX_KERNELS = ["r_3_4_6 #1", "r_3_4_6 #2", "r_2_2_3_16_6"]  # the attention's kernels that compute its softmax

# per origin hit: its place's text, its box and the visible boxes of its row's texts, where that place is ([l, t, r, b])
PLACES = """(place) => [...document.querySelectorAll('.tgviz-hits.kind-origin .tgviz-hit')].map((row) => {
  const text = row.querySelector('.tgviz-hit-text'), node = text.firstChild, at = node.textContent.indexOf(place);
  const box = (r) => [r.left, r.top, r.right, r.bottom];
  const range = document.createRange();
  if (at >= 0) { range.setStart(node, at); range.setEnd(node, at + place.length); }
  const where = row.querySelector('.tgviz-hit-where');
  return {text: node.textContent, place: at >= 0 ? [...range.getClientRects()].map(box) : [], shown: box(text.getBoundingClientRect()),
          whereCut: where.scrollWidth > where.clientWidth + 1 || where.scrollHeight > where.clientHeight + 1}; })"""
# the nodes marked (hl-line) in the graph: their ops, boxes, and the canvas's box
MARKED_LINE = """() => { const c = document.querySelector('.tgviz-canvas').getBoundingClientRect(), box = (r) => [r.left, r.top, r.right, r.bottom];
  const ns = [...document.querySelectorAll('.tgviz-stage g.side g.node.hl-line')];
  return {canvas: box(c), ops: ns.map((n) => n.dataset.op), boxes: ns.map((n) => box(n.getBoundingClientRect()))}; }"""


def check_softmax_search(page, place: str, shot: str) -> None:
  """A search of "softmax" in the attention's trace: each hit (a user's op in a kernel) shows its place whole, the kernel
  beside it; the tree keeps to the kernels that compute it; a hit clicked opens its kernel with what it computes (the
  softmax's reduce among it) marked and in view."""
  search_for(page, "softmax")
  problems = []
  rows = page.evaluate(PLACES, place)
  # one hit a kernel that computes it (not the matmul whose line's text says softmax too)
  whole = all(r["place"] and all(inside(b, r["shown"], -0.5) for b in r["place"]) and not r["whereCut"] for r in rows)
  if len(rows) != len(SOFTMAX_KERNELS) or not whole:
    problems.append(f"a hit's place is cut or missing: {rows}")
  page.locator(".tgviz-results").screenshot(path=str(ARTIFACTS / f"{shot}-hits.png"))
  tree = page.locator(".tgviz-tree .tgviz-group > summary").all_inner_texts()
  if not all(any(k in t for t in tree) for k in SOFTMAX_KERNELS) or not page.locator(".tgviz-tree .tgviz-step").count():
    problems.append(f"the tree does not list the kernels that compute softmax: {tree}")
  page.locator(".tgviz-hits.kind-origin .tgviz-hit").first.click()
  page.wait_for_function("() => document.querySelector('.tgviz-title').innerText.startsWith('r_3_4_6 #1')", timeout=LIMIT)
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  settled(page)
  got = page.evaluate(MARKED_LINE)
  page.screenshot(path=str(ARTIFACTS / f"{shot}-hit.png"))
  if "REDUCE" not in got["ops"] or not all(inside(b, got["canvas"]) for b in got["boxes"]):
    problems.append(f"the hit's UOps are not marked, or not in view: {got}")
  # in the kernel that fuses the softmax's division into the matmul after it, only the softmax's UOps: its EXP2 and
  # RECIPROCAL, not the matmul's REDUCE
  page.locator(".tgviz-hits.kind-origin .tgviz-hit", has_text="r_2_2_3_16_6").first.click()
  page.wait_for_function("() => document.querySelector('.tgviz-title').innerText.startsWith('r_2_2_3_16_6')", timeout=LIMIT)
  page.wait_for_function("() => document.querySelector('.tgviz-status').innerText.includes('what this op computes')", timeout=LIMIT)
  settled(page)
  mixed = page.evaluate(MARKED_LINE)
  if not {"EXP2", "RECIPROCAL"} <= set(mixed["ops"]) or "REDUCE" in mixed["ops"]:
    problems.append(f"the softmax hit in r_2_2_3_16_6 marks more or less than the softmax's UOps: {mixed['ops']}")
  assert not problems, problems
  assert not page.errors


def test_a_users_op_found_in_the_report_shows_where_and_what(attention_report, browser):
  with new_page(browser, 1400, 1000, offline=True) as page:
    page.goto(attention_report[1].as_uri())
    page.wait_for_selector(".tgviz-stage svg g.node, .tgviz-progmap[open] svg", timeout=LIMIT)
    check_softmax_search(page, "attention.py:6", "search-attention-report")


def test_a_users_op_found_in_the_widget_shows_where_and_what(lab, browser):
  """The new user's pass: JupyterLab at 1400x1000, the attention cell, "softmax" searched and a hit clicked."""
  with new_page(browser, 1400, 1000) as page:
    open_in_lab(page, lab, "search-attention", "%load_ext tgviz", "%%tgviz -o attn\n" + ATTENTION)
    run_all(page, 2)
    page.wait_for_selector(".tgviz-root .tgviz-filter", timeout=LIMIT)
    check_softmax_search(page, "Cell In[2], line 6", "search-attention-lab")
