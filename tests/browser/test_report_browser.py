"""`tgviz run` writes an index.html that works in a browser with no network and no kernel: every step and every match,
laid out in the page from the same DOT text as the Python side, drawn into the same SVG."""
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import workloads
from harness import ARTIFACTS, LIMIT, label_px, new_page, node_panel_ms, search_for, settled, to_steps, uops_cells, wraps
from tinygrad import Tensor

import tgviz
from tgviz import bridge as tg
from tgviz.draw import dot as Dot
from tgviz.draw import fold as F
from tgviz.draw.dot import FAST_ABOVE, layout
from tgviz.draw.engine import run_dot
from tgviz.draw.scene import DEFAULT_MAX_NODES, cap_fan_in, focus
from tgviz.report.contents import unchunk
from tgviz.views import picture as PI
from tgviz.views import protocol as P

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "scripts" / "tutorial_conv2d.py"


@pytest.fixture(scope="module")
def report(tmp_path_factory):
  out = tmp_path_factory.mktemp("report")
  proc = subprocess.run([sys.executable, "-m", "tgviz", "run", str(EXAMPLE), "--out", str(out)], capture_output=True,
                        text=True, timeout=600)
  assert proc.returncode == 0, proc.stderr
  assert "r_2_2_2_2" in proc.stdout and f"report: {(out / 'index.html').resolve()}" in proc.stdout
  return out


@pytest.fixture
def page(browser):
  with new_page(browser, offline=True) as p: yield p


def test_report_svgs_are_valid(report):
  svgs = list((report / "svg").glob("*.svg"))  # by default, tinygrad's "View ..." landmarks of every group
  assert any("r_2_2_2_2--" in p.name and "View_Base_AST" in p.name for p in svgs)
  assert all("--" in p.name and p.name.split("--")[1][4:].startswith("View_") for p in svgs), [p.name for p in svgs]
  for p in svgs: ET.parse(p)


def _select_match(page, key: str, match: int) -> None:
  page.locator(f".tgviz-step[data-key='{key}']").click()
  page.wait_for_function(f"document.querySelector('.tgviz-stage').dataset.step === '{key}'", timeout=LIMIT)
  page.evaluate("(m) => { const s = document.querySelector('.tgviz-slider'); s.value = String(m + 1); "
                "s.dispatchEvent(new Event('input')); }", match)
  page.wait_for_function(f"document.querySelector('.tgviz-stage').dataset.match === '{match}'", timeout=LIMIT)


def test_report_opens_offline_and_steps_through_every_match(report, page):
  requests = []
  page.on("request", lambda r: requests.append(r.url))
  page.goto((report / "index.html").as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  assert "r_2_2_2_2" in page.locator(".tgviz-tree").inner_text()
  assert page.locator(".tgviz-step.selected").inner_text().startswith("View Base AST")
  assert "__kernel" in page.locator(".tgviz-right > .tgviz-code").inner_text()
  # the step with the most matches: its middle and last match are in the report and drawn in the page
  counts = page.eval_on_selector_all(".tgviz-step", "rs => rs.map(r => [r.dataset.key, "
                                     "Number(r.querySelector('.tgviz-count').textContent)])")
  key, most = max(counts, key=lambda c: c[1])
  assert most > 20, counts  # more than the old report's 20-match limit
  for m in (most // 2, most - 1):
    _select_match(page, key, m)
    assert page.locator(".tgviz-match-label").inner_text() == f"match {m + 1} / {most}"
    assert page.locator(".tgviz-pattern").inner_text().startswith("pattern")
    assert page.locator(".tgviz-stage svg g[data-side='after'] g.node").count() > 0
    assert f"match {m + 1}/{most}" in page.locator(".tgviz-stage svg .title").first.text_content()
  page.locator(".tgviz-title").click()
  page.keyboard.press("ArrowLeft")
  page.wait_for_function(f"document.querySelector('.tgviz-stage').dataset.match === '{most - 2}'", timeout=LIMIT)
  page.keyboard.press("f")
  node = page.locator(".tgviz-stage g[data-side='after'] g.node").first
  op, key = node.get_attribute("data-op"), node.get_attribute("data-node")
  node.click()  # the report's node panel: the node's label and its sources, from the page's data
  page.wait_for_selector(".tgviz-node-panel:not([hidden])", timeout=LIMIT)
  assert page.locator(".tgviz-node-panel").inner_text().startswith(op) and key in page.locator(".tgviz-node-panel").inner_text()
  assert page.locator(f".tgviz-stage g.node.hl[data-node='{key}']").count() >= 1
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  page.screenshot(path=str(ARTIFACTS / "report.png"))
  assert all(u.startswith(("file:", "blob:", "data:")) for u in requests), requests
  assert not page.errors


def _python_side(step, match, fold=True):
  """What tgviz.views.picture lays out for a selection (folded, or raw): the DOT text of the layout it keeps (a tall graph's
  wrapped into columns, where that shows more) and dot's plain output of it."""
  scene = PI.scene_of(step, match)
  scene = focus(cap_fan_in(F.fold(scene) if fold else scene), DEFAULT_MAX_NODES)
  sides = len(PI.SIDES[PI.sides(step)])
  kept = layout(scene, None, sides)
  dot = Dot._dot(scene, fast=len(scene.nodes) > FAST_ABOVE, cols=kept.columns, sides=sides)[0]
  return dot, run_dot(dot, "plain")


def test_report_pictures_are_the_python_pictures(tutorial_trace, tmp_path, page):
  """Every step of the tutorial (whole, first, middle and last match; folded, and every fifth raw too): the page writes
  the same DOT text, and from the same layout the very same SVG bytes; graphviz-wasm and graphviz-pure lay out the same
  DOT alike on nearly all."""
  tutorial_trace.to_html(tmp_path / "index.html")
  page.goto((tmp_path / "index.html").as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  sels = [(s, m) for s in tutorial_trace.steps for m in ([None, 0, len(s.matches) // 2, len(s.matches) - 1] if s.matches else [None])]
  sels = [(s, m, "auto") for s, m in sels] + [(s, m, "raw:auto") for s, m in sels[::5]]
  same_layout = 0
  for step, m, view in sels:
    dot, plain = _python_side(step, m, fold=view == "auto")
    py = P.picture_message(tutorial_trace, P.step_key(step), m, view)
    own, given = page.evaluate("async ([s, m, v, plain]) => { const r = window.tgvizReport; "
                               "return [await r.pictureMessage({step: s, match: m, view: v}), "
                               "await r.pictureMessage({step: s, match: m, view: v}, plain)]; }", [P.step_key(step), m, view, plain])
    assert own["dot"] == dot, (step, m)
    assert given["svg"] == py["svg"], (step, m)
    assert (given["shown"], given["total"], given["partial"], given["message"]) == (py["shown"], py["total"], py["partial"], py["message"])
    assert given["info"] == py["info"] and (m is None or given["match_info"]["title"] == py["match_info"]["title"])
    same_layout += own["svg"] == py["svg"]
  assert same_layout >= 0.95 * len(sels), f"wasm and Python layouts agree on {same_layout} of {len(sels)}"
  assert not page.errors


def _steps_data(html: Path) -> dict[str, dict]:
  """Each step's data as the report stores it (step key -> its step_data, from its segment's decoded chunk)."""
  chunks = re.findall(r'<script type="application/octet-stream" id="tgviz-t-[0-9]+">([^<]*)</script>', html.read_text())
  return {k: s for b in chunks for k, s in unchunk(b)["steps"].items()}


def _page_graphs_are_vizs(page, html: Path, checks: list) -> None:
  """The page's graph after k matches holds the same nodes, in the same order, as Step.at(k) (which tests/trace/test_trace.py
  holds equal to tinygrad's VIZ replay), for each (step, ks): the page is asked in the order given, Python's graphs are
  made in one pass (Step.replay, the same graphs: asked in reverse, Step.at chained back from the input again and again)."""
  page.goto(html.as_uri())
  page.wait_for_function("window.tgvizReport !== undefined", timeout=LIMIT)
  for step, ks in checks:
    got = page.evaluate("async ([key, ks]) => { const out = []; for (const k of ks) out.push(await window.tgvizReport.graphKeys(key, k)); "
                        "return out; }", [P.step_key(step), ks])
    wanted, want = set(ks), {}
    for k, g in zip(range(max(ks) + 1), step.replay(), strict=False):  # (the replay goes on past max(ks))
      if k in wanted: want[k] = [tg.node_key(u) for u in tg.toposort(g)]
    for k, keys in zip(ks, got, strict=True): assert keys == want[k], (step.path, k)
  assert not page.errors


def test_report_computes_each_match_graph_as_vizs_replay(tutorial_trace, tmp_path, page):
  """The report stores a step's input and its matches, not the graph after each match: the page computes those
  (js/port/replay.js), equal to VIZ's for every match of every step of the tutorial."""
  html = tutorial_trace.to_html(tmp_path / "index.html")
  data, steps = _steps_data(html), [s for s in tutorial_trace.steps if s.matches]
  assert all(data[P.step_key(s)]["computed"] == len(s.matches) and len(data[P.step_key(s)]["graphs"]) == 1 for s in steps)
  _page_graphs_are_vizs(page, html, [(s, list(range(len(s.matches) + 1))) for s in steps])


@pytest.mark.slow
def test_report_computes_the_graphs_of_a_training_step(tmp_path, page):
  """The same on an MLP training step (256-64-10, batch 16: 16 thousand matches, its biggest step 4,324; the 784-128-10
  one, twice that in twice the time, has the same kinds of steps): the first, middle and last twenty graphs of every
  step, every other step asked last graph first (not the order the chain computes them in). Past a
  replacement that changes a dtype, the page derives the dtypes of the nodes tinygrad rebuilds over it
  (js/port/dtypes.js): such a step keeps no graph but its input in the report, and the graphs around each match that
  rebuilds a node over a source of another dtype are right too. Where the page cannot (bridge.rebuilt_dtypes.
  page_derives), a step keeps some graphs from that replacement on: a bottom-up one every later graph, a top-down one
  those of the matches whose step only tinygrad derives, the page chaining from them to the others."""
  workloads.mlp_train((256, 64, 10), 16)
  with tgviz.capture() as trace: workloads.mlp_train((256, 64, 10), 16)
  html = trace.to_html(tmp_path / "index.html")
  data = _steps_data(html)
  def first_dtype_change(s): return next((i for i, (u0, u1) in enumerate(s.pairs()) if u0.dtype != u1.dtype), len(s.matches))
  changed = [s for s in trace.steps if first_dtype_change(s) < len(s.matches)]
  derived = {s: [k for k, _, d in s.later_graphs(first_dtype_change(s)) if d] for s in changed if data[P.step_key(s)]["computed"] == len(s.matches)}
  assert len(derived) == len(changed) >= 2 and all(derived.values())  # (a schedule's step and a kernel's)
  assert all(data[P.step_key(s)]["stored"] is None and len(data[P.step_key(s)]["graphs"]) == 1 for s in derived)
  stored = [s for s in trace.steps if data[P.step_key(s)]["computed"] < len(s.matches)]
  assert all(data[P.step_key(s)]["computed"] == first_dtype_change(s) for s in stored)
  for s in stored:
    d, n = data[P.step_key(s)], len(s.matches)
    if s.options["bottom_up"]: assert d["stored"] is None and len(d["graphs"]) == n - d["computed"] + 1
    else: assert d["stored"] == sorted(set(d["stored"])) and d["computed"] < d["stored"][0] and len(d["graphs"]) == len(d["stored"]) + 1
  checks = []
  for s in trace.steps:
    n = len(s.matches)
    if not n: continue
    around = {k + d for k in [*(data[P.step_key(s)]["stored"] or ()), *derived.get(s, ())] for d in (-1, 0, 1) if 0 <= k + d <= n}
    ks = sorted(set(range(min(20, n + 1))) | set(range(max(0, n // 2 - 10), min(n + 1, n // 2 + 10))) | set(range(max(0, n - 19), n + 1)) | around)
    checks.append((s, ks[::-1] if s.index % 2 else ks))  # last first in every other step: not the chain's order
  assert max(len(s.matches) for s, _ in checks) > 2000
  _page_graphs_are_vizs(page, html, checks)


def test_report_follows_a_dark_system_theme(report, browser):
  ctx = browser.new_context(viewport={"width": 1500, "height": 1000}, offline=True, color_scheme="dark")
  page = ctx.new_page()
  page.goto((report / "index.html").as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  dark = "(c) => { const [r, g, b] = c.match(/\\d+/g).map(Number); return r + g + b < 3 * 80; }"
  canvas = page.evaluate("getComputedStyle(document.querySelector('.tgviz-canvas')).backgroundColor")
  graph = page.evaluate("getComputedStyle(document.querySelector('.tgviz-stage svg > rect')).fill")
  panel = page.evaluate("getComputedStyle(document.querySelector('.tgviz-root')).backgroundColor")
  assert all(page.evaluate(f"({dark})({c!r})") for c in (canvas, graph, panel)), (canvas, graph, panel)
  label = page.evaluate("getComputedStyle(document.querySelector('.tgviz-stage g.node text')).fill")
  assert not page.evaluate(f"({dark})({label!r})"), label  # light text on the dark graph
  code = page.evaluate("getComputedStyle(document.querySelector('.tgviz-right > .tgviz-code .highlight')).backgroundColor")
  assert page.evaluate(f"({dark})({code!r})"), code
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  page.screenshot(path=str(ARTIFACTS / "report-dark.png"))
  ctx.close()


def test_report_code_lines_schedule_kernels_and_side_panels(report, page):
  page.goto((report / "index.html").as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  to_steps(page)  # from the program map the report opens on, to the steps
  # the code: one element per line, numbered from 1; a line longer than the column wraps between tokens, its
  # continuation further in (no sideways scroll)
  lines = page.locator(".tgviz-right > .tgviz-code .tgviz-line")
  assert lines.first.get_attribute("data-line") == "1" and lines.first.inner_text().startswith("__kernel")
  assert page.locator(".tgviz-right > .tgviz-code").inner_text().splitlines()[0].startswith("__kernel")  # numbers are not in the text
  code = wraps(page, ".tgviz-right > .tgviz-code .tgviz-line")
  assert code["wrapped"] >= 1 and not code["bad"] and not code["hang"] and not code["sideways"], code
  # a schedule step: the kernels compiled after it, each one click from its steps
  page.locator(".tgviz-group.kind-schedule summary", has_text="Schedule 1 Kernel").first.click()
  page.locator(".tgviz-group.kind-schedule[open] .tgviz-step").first.click()
  page.wait_for_selector(".tgviz-produced .tgviz-link", timeout=LIMIT)
  assert "compiled after this schedule" in page.locator(".tgviz-code-head").inner_text()
  name = page.locator(".tgviz-produced .tgviz-link").first.inner_text()
  page.locator(".tgviz-produced .tgviz-link").first.click()
  page.wait_for_function(f"document.querySelector('.tgviz-title').innerText.startsWith('{name} / View Base AST')", timeout=LIMIT)
  assert page.locator(".tgviz-step.selected").inner_text().startswith("View Base AST")
  # side panels: drag the tree wider, collapse the code to its strip; both kept for the session
  tree0, canvas0 = page.locator(".tgviz-left").bounding_box()["width"], page.locator(".tgviz-canvas").bounding_box()["width"]
  handle = page.locator(".tgviz-handle-tree").bounding_box()
  page.mouse.move(handle["x"] + 2, handle["y"] + 50)
  page.mouse.down()
  page.mouse.move(handle["x"] + 102, handle["y"] + 50, steps=5)
  page.mouse.up()
  tree1 = page.locator(".tgviz-left").bounding_box()["width"]
  assert abs(tree1 - tree0 - 100) <= 3, (tree0, tree1)
  page.locator(".tgviz-toggle-code").click()
  assert not page.locator(".tgviz-right > .tgviz-code").is_visible() and page.locator(".tgviz-strip-code").is_visible()
  assert page.locator(".tgviz-canvas").bounding_box()["width"] > canvas0
  page.reload()
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  to_steps(page)  # from the program map the report opens on, to the steps
  assert not page.locator(".tgviz-right > .tgviz-code").is_visible() and abs(page.locator(".tgviz-left").bounding_box()["width"] - tree1) <= 1
  page.locator(".tgviz-toggle-code").click()
  assert page.locator(".tgviz-right > .tgviz-code").is_visible() and not page.locator(".tgviz-strip-code").is_visible()
  # "/" goes to the filter, and what is typed there filters the tree (keys are the widget's only outside the filter)
  page.locator(".tgviz-title").click()
  page.keyboard.press("/")
  page.keyboard.type("devectorize")
  page.wait_for_selector(".tgviz-tree[data-filter='devectorize']", state="attached", timeout=LIMIT)  # typing paused
  # the rows the filter left (it rebuilds the tree of those alone); text, not innerText: a group off screen is not
  # rendered (content-visibility), and innerText reads nothing there
  names = page.locator(".tgviz-step .tgviz-name").all_text_contents()
  assert names and all("devectorize" in n for n in names), names
  page.wait_for_function("document.querySelector('.tgviz-step .tgviz-name').innerText.includes('devectorize')",
                         timeout=LIMIT)  # the first on screen, drawn (on the next frame)
  assert not page.errors


# the number of code lines in the page when its first picture is drawn (read in the same task, before any idle time)
LINES_AT_DRAW = """new MutationObserver((_, obs) => {
  if (!document.querySelector('.tgviz-stage svg g.node')) return;
  obs.disconnect();
  window.linesAtDraw = document.querySelectorAll('.tgviz-right > .tgviz-code .tgviz-line').length;
}).observe(document, {childList: true, subtree: true});"""

# the code line at the top of the code panel, and its text
TOP_LINE = """() => { const c = document.querySelector('.tgviz-right > .tgviz-code'), r = c.getBoundingClientRect();
  const e = document.elementFromPoint(r.left + 60, r.top + 12)?.closest('[data-line]');
  return e ? [Number(e.dataset.line), e.textContent] : null; }"""
# every code line laid out, as a browser without content-visibility would: the panel as tall as its lines truly are
LAID_OUT = ".tgviz-right > .tgviz-code .tgviz-line { content-visibility: visible !important; }"
PARTS = (0.75, 0.4, 0.9)  # where the code panel is scrolled to: fractions of its height


def laid_out_height(page) -> int:
  """The code panel's height with every line laid out (LAID_OUT for a moment)."""
  return page.evaluate(f"""() => {{ const s = document.createElement('style'), c = document.querySelector('.tgviz-right > .tgviz-code');
    s.textContent = '{LAID_OUT}';
    document.head.append(s);
    const h = c.scrollHeight;
    s.remove();
    return h; }}""")


def test_a_kernels_header_opens_that_kernel(report, page):
  """A kernel's header in the tree, clicked while another kernel is shown: that kernel opens on its first step, its code
  and its ops beside it (new-user pass 10: the group unfolded, the code and origins stayed the other kernel's); the
  shown kernel's header folds its steps, as a header does."""
  page.goto((report / "index.html").as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  to_steps(page)
  groups = page.locator(".tgviz-group.kind-kernel")
  assert groups.count() >= 2
  def name(i: int) -> str: return groups.nth(i).locator("summary").inner_text().split()[1]
  a, b = name(0), name(1)
  assert a != b
  groups.nth(0).locator(".tgviz-step").first.click()
  page.wait_for_function("n => document.querySelector('.tgviz-title').innerText.startsWith(n + ' / ')", arg=a, timeout=LIMIT)
  code_a = page.locator(".tgviz-right > .tgviz-code").inner_text()
  assert f" {a}(" in code_a.splitlines()[0], code_a[:200]
  first_b = groups.nth(1).locator(".tgviz-step").first.get_attribute("data-key")
  groups.nth(1).locator("summary").click()
  page.wait_for_function("k => document.querySelector('.tgviz-stage').dataset.step === k", arg=first_b, timeout=LIMIT)
  assert page.locator(".tgviz-title").inner_text().startswith(f"{b} / ")
  page.wait_for_function("n => document.querySelector('.tgviz-right > .tgviz-code').innerText.split('\\n')[0].includes(' ' + n + '(')",
                         arg=b, timeout=LIMIT)
  assert groups.nth(1).get_attribute("open") is not None and page.locator(".tgviz-step.selected").get_attribute("data-key") == first_b
  groups.nth(1).locator("summary").click()  # the kernel shown: its header folds it, the picture stays
  page.wait_for_function("() => !document.querySelectorAll('.tgviz-group.kind-kernel')[1].open", timeout=LIMIT)
  assert page.locator(".tgviz-stage").get_attribute("data-step") == first_b
  assert not page.errors


def test_the_tree_opens_at_the_kernels_header(report, page):
  """The report opens on its last kernel's View Base AST, far down the tree: the tree shows that kernel's header at its
  top, its first steps under it; it put the row in the middle, half the tree the steps of the kernel before (new-user
  passes 10 and 12). A row clicked in view leaves the tree where it is."""
  page.goto((report / "index.html").as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  to_steps(page)
  tree = page.locator(".tgviz-tree").bounding_box()
  head = page.locator(".tgviz-group:has(.tgviz-step.selected) > summary").bounding_box()
  row = page.locator(".tgviz-step.selected").bounding_box()
  top = page.evaluate("() => document.querySelector('.tgviz-tree').scrollTop")
  assert top > 0  # (it scrolled: the kernel lies below the tree's first screen)
  assert abs(head["y"] - tree["y"]) <= 1 and row["y"] + row["height"] <= tree["y"] + tree["height"], (tree, head, row)
  third = page.locator(".tgviz-group:has(.tgviz-step.selected) .tgviz-step").nth(3)
  key = third.get_attribute("data-key")
  third.click()
  page.wait_for_function("k => document.querySelector('.tgviz-stage').dataset.step === k", arg=key, timeout=LIMIT)
  assert page.evaluate("() => document.querySelector('.tgviz-tree').scrollTop") == top
  assert not page.errors


# per row (its step key): whether its whole name lies inside the row's name box, and no number in it is broken across
# two lines (a wrapped "+330" read as "+33" / "0")
SHOWN = r"""keys => keys.map((k) => { const el = document.querySelector(`.tgviz-step[data-key="${k}"] .tgviz-name`);
  el.scrollIntoView({block: "center"}); const box = el.getBoundingClientRect(), r = document.createRange();
  r.selectNodeContents(el);
  const inside = [...r.getClientRects()].every((c) => c.left >= box.left - 0.5 && c.right <= box.right + 0.5
                                                    && c.top >= box.top - 0.5 && c.bottom <= box.bottom + 0.5);
  const texts = [...el.childNodes].filter((t) => t.nodeType === Node.TEXT_NODE);
  const whole = texts.every((t) => [...t.data.matchAll(/\d+/g)].every((m) => { const d = document.createRange();
    d.setStart(t, m.index); d.setEnd(t, m.index + m[0].length); return d.getClientRects().length === 1; }));
  return inside && whole; })"""


def _grouped_conv() -> None:
  Tensor.randn(1, 4, 9, 9).conv2d(Tensor.randn(4, 2, 3, 3), groups=2, stride=2).relu().sum().realize()


@pytest.mark.parametrize("program", ["attention", "grouped conv"])
def test_the_tree_tells_a_kernels_rewrites_apart_at_a_narrow_width(program, request, tmp_path, browser):
  """The kernel with the most unnamed rewrites (tinygrad's lowering of weak index dtypes, one graph_rewrite per node) of
  the attention block and of the grouped strided conv, its tree 180 px wide (the least it takes, and a maximised
  widget's): each row shows what it rewrote in full (the op and its input written out: "ADD (gidx0*24+lidx0*6+2)",
  "ADD (r1*9+r4*18+r2+(r3//2*162+r0*81)+330)"), and those differ row from row; where it was called, the same in each, is
  its tooltip; a wrapped name breaks after an operator, no number split. Pass 14 read ten rows cut to "ADD ·
  graph_rewri…", pass 15 seven cut alike, pass 16 the conv's eight cut at three lines, and "+8" / "0"."""
  if program == "attention": trace, html = request.getfixturevalue("attention_report")
  else:
    with tgviz.capture() as trace: _grouped_conv()
    html = trace.to_html(tmp_path / "index.html")
  unnamed = [s for s in trace.steps if s.row[1] is not None]  # (where it was called: said of an unnamed rewrite only)
  group = max({s.group for s in unnamed}, key=lambda g: sum(s.group is g for s in unnamed))
  rows = [(P.step_key(s), s.row[0]) for s in unnamed if s.group is group]
  assert len(rows) > 5 and any("(" in what for _, what in rows), rows  # (some inputs written out)
  with new_page(browser, 841, 1000, offline=True) as p:
    p.goto(html.as_uri())
    p.wait_for_selector(".tgviz-stage svg g.node, .tgviz-progmap[open] svg", timeout=LIMIT)
    to_steps(p)
    assert p.locator(".tgviz-tree").bounding_box()["width"] <= 200
    shown = p.evaluate(SHOWN, [k for k, _ in rows])
    names = p.evaluate("ks => ks.map((k) => document.querySelector(`.tgviz-step[data-key='${k}'] .tgviz-name`).textContent)", [k for k, _ in rows])
    assert names == [what for _, what in rows], names  # (the breaks put in it are no text)
    tips = [p.locator(f".tgviz-step[data-key='{k}'] .tgviz-name").get_attribute("title") for k, _ in rows]
    p.locator(f".tgviz-step[data-key='{rows[-1][0]}']").scroll_into_view_if_needed()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    p.screenshot(path=str(ARTIFACTS / f"report-tree-rewrites-841-{program.replace(' ', '-')}.png"))
  assert all(shown), [what for (_, what), ok in zip(rows, shown, strict=True) if not ok]
  whats = [what for _, what in rows]
  assert len(set(whats)) == len(whats), whats
  assert tips == [s.label for s in unnamed if s.group is group], tips  # where it was called: its tooltip


def test_a_long_kernels_code_is_put_in_as_it_is_seen(tmp_path, page):
  """A kernel's code of hundreds of lines (an LSTM's: thousands, tens of thousands of elements, which held its picture
  up by some 300 ms): not all of it is in the page when the picture is drawn, nor laid out once put in, yet the panel
  is as tall when drawn as once every line is laid out (its scroll bar does not jump), scrolled anywhere it shows the
  lines every line laid out shows there, and soon all of it is there (the browser's find sees it); the column resized,
  the panel is as tall as its lines at the new width. In the report's narrow code column most lines of this kernel
  wrap to two rows or more; a line not laid out is as tall as the rows estimated from its length at the column's
  width (js/codelines.js rowsOf), which wrapping between tokens can make a row too few or too many: the heights are
  held within 3% (this kernel: 0.1%; 36 kernels at this width: 0.6% on average, 6% at most) and the line shown at a
  place within 2 lines of the laid-out panel's (a few rows' error above it; this kernel: 0 or 1)."""
  with tgviz.capture() as trace: workloads.long_kernel()
  kernel = max(trace.kernels, key=lambda k: len(k.source.splitlines()))
  source = kernel.source.splitlines()
  assert len(source) > 400, len(source)
  assert P.first_selection(trace) in {P.step_key(s) for s in kernel.group.steps}  # the page opens on it
  trace.to_html(tmp_path / "long.html")
  # a window 1160 px wide: the code column 265 px, where most of this kernel's lines wrap (at 1500 px it has 341 now)
  page.set_viewport_size({"width": 1160, "height": 1000})
  page.add_init_script(LINES_AT_DRAW)
  page.goto((tmp_path / "long.html").as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  to_steps(page)  # from the program map the report opens on, to the steps
  settled(page)
  assert 0 < page.evaluate("window.linesAtDraw") < len(source)
  code = page.locator(".tgviz-right > .tgviz-code")
  assert code.locator(".tgviz-line").first.text_content() == source[0]
  drawn = code.evaluate("c => c.scrollHeight")
  shown = {}
  for part in PARTS:  # lines not put in yet, scrolled to: there
    code.evaluate("(c, part) => { c.scrollTop = c.scrollHeight * part; }", part)
    page.wait_for_function(f"({TOP_LINE})() !== null", timeout=LIMIT)
    settled(page)
    n, text = page.evaluate(TOP_LINE)
    assert text == source[n - 1], (part, n, text)
    shown[part] = n
  page.wait_for_function("n => document.querySelectorAll('.tgviz-right > .tgviz-code .tgviz-line').length === n", arg=len(source), timeout=LIMIT)
  assert code.locator(".tgviz-line").all_text_contents() == source
  laid_out = laid_out_height(page)
  wrapped = code.evaluate("""c => { const hs = [...c.querySelectorAll('.tgviz-line')].map((e) => e.getBoundingClientRect().height);
    return hs.filter((h) => h > 1.5 * Math.min(...hs)).length; }""")
  assert wrapped > len(source) / 2, wrapped  # most lines wrap: one row a line would be far off
  assert abs(drawn - laid_out) <= 0.03 * laid_out, (drawn, laid_out)  # no scroll jump
  page.add_style_tag(content=LAID_OUT).evaluate("s => s.classList.add('tgviz-laid-out')")
  for part in PARTS:  # the lines every line laid out shows there
    code.evaluate("(c, part) => { c.scrollTop = c.scrollHeight * part; }", part)
    settled(page)
    n, _ = page.evaluate(TOP_LINE)
    assert abs(shown[part] - n) <= 2, (part, shown[part], n)
  page.evaluate("() => document.querySelectorAll('.tgviz-laid-out').forEach((s) => s.remove())")
  # the column widened (the window wider): the lines, laid out at the old width and not since, are as tall as they are
  # at the new width
  narrow = page.viewport_size
  wide = {"width": narrow["width"] * 2, "height": narrow["height"]}
  page.set_viewport_size(wide)
  settled(page)
  resized = code.evaluate("c => c.scrollHeight")
  wide_laid_out = laid_out_height(page)
  assert resized < 0.8 * drawn and abs(resized - wide_laid_out) <= 0.03 * wide_laid_out, (drawn, resized, wide_laid_out)
  # opened wide, then narrowed: the blocks not put in yet (no idle time here: a block is put in only as it is seen)
  # are as tall as their lines at the new width
  page.add_init_script("window.requestIdleCallback = () => 0;")
  page.goto((tmp_path / "long.html").as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  to_steps(page)
  settled(page)
  page.set_viewport_size(narrow)
  settled(page)
  assert code.locator(".tgviz-line").count() < len(source)
  assert abs(code.evaluate("c => c.scrollHeight") - laid_out) <= 0.03 * laid_out, laid_out
  assert not page.errors


def test_an_attention_blocks_kernels_fit_a_notebooks_column(attention_trace, tmp_path, browser):
  """An attention block's kernels in a notebook's narrow columns (1000 px wide), as in its report: the longest code
  (some 90 lines, put in whole), most lines wrapping, is as tall when drawn as once scrolled through (the scroll bar
  does not grow under the pointer) and as with every line laid out: no estimate is left in it; and every kernel's uops
  tab needs no sideways scroll and cuts no cell (a long list of sources, such as a SINK's or a VECTORIZE's, wraps in
  its row)."""
  trace = attention_trace
  kernels = list({k.name.split(" #")[0]: k for k in trace.kernels}.values())
  kernel = max(kernels, key=lambda k: len(k.source.splitlines()))
  source = kernel.source.splitlines()
  assert 60 < len(source) < 256, len(source)
  trace.to_html(tmp_path / "attention.html")

  def open_codegen(page, k) -> None:
    search_for(page, k.name)
    key = P.step_key(k.codegen_step)
    page.locator(f".tgviz-step[data-key='{key}']").click()
    page.wait_for_function("k => document.querySelector('.tgviz-stage').dataset.step === k", arg=key, timeout=LIMIT)
    search_for(page, "")

  with new_page(browser, width=1000, height=760, offline=True) as page:
    page.goto((tmp_path / "attention.html").as_uri())
    page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
    to_steps(page)
    open_codegen(page, kernel)
    code = page.locator(".tgviz-right > .tgviz-code")
    page.wait_for_function("n => document.querySelectorAll('.tgviz-right > .tgviz-code .tgviz-line').length === n", arg=len(source), timeout=LIMIT)
    settled(page)
    drawn = code.evaluate("c => c.scrollHeight")
    for part in (1, 0.5, 0):
      code.evaluate("(c, part) => { c.scrollTop = c.scrollHeight * part; }", part)
      settled(page)
    scrolled = code.evaluate("c => c.scrollHeight")
    wrapped = code.evaluate("""c => { const hs = [...c.querySelectorAll('.tgviz-line')].map((e) => e.getBoundingClientRect().height);
      return hs.filter((h) => h > 1.5 * Math.min(...hs)).length; }""")
    assert wrapped > len(source) / 3, wrapped
    assert abs(drawn - scrolled) <= 1 and abs(drawn - laid_out_height(page)) <= 1, (drawn, scrolled, laid_out_height(page))
    page.locator(".tgviz-tab", has_text="uops").click()
    bad = {}
    for k in kernels:
      open_codegen(page, k)
      page.wait_for_function("n => document.querySelector('.tgviz-uops')?.textContent.includes(`name='${n}'`)",
                             arg=k.name.split(" #")[0], timeout=LIMIT)
      settled(page)
      cells = uops_cells(page)
      if cells["clipped"] or cells["scroll"] > cells["client"]: bad[k.name] = cells
    page.screenshot(path=str(ARTIFACTS / "report-attention-uops.png"))
    assert not bad, bad
    assert not page.errors


CUT_AT_LEFT = """() => { const c = document.querySelector('.tgviz-canvas').getBoundingClientRect();
  const ns = [...document.querySelectorAll('.tgviz-stage g.side g.node')], rs = ns.map((n) => n.getBoundingClientRect());
  const cut = rs.filter((r) => r.bottom > c.top && r.top < c.bottom && r.left < c.left - 1 && r.right > c.left + 1);  // (1 px: the stroke)
  // a snapshot's output row (dot draws it lowest) stays whole in view, clear of the overview: where it spans the canvas
  // from near its left edge to near its right one (or the overview's), the view cannot start at a node's edge without
  // cutting it
  const marked = ns.some((n) => n.matches('.added, .removed, .changed')), low = Math.max(...rs.map((r) => r.top));
  const held = marked ? [] : rs.filter((r) => r.top === low), mini = document.querySelector('.tgviz-minimap');
  const o = mini && !mini.hidden ? mini.getBoundingClientRect() : null;
  const end = (r) => (o && r.bottom > o.top ? o.left : c.right);
  const right = Math.max(...cut.map((r) => r.right)) - c.left, left = c.left - Math.min(...cut.map((r) => r.left));
  return {cut: cut.length, pinned: held.some((r) => r.left - c.left < right) && held.some((r) => end(r) - r.right < left),
          whole: rs.filter((r) => r.left >= c.left - 1 && r.right <= c.right + 1 && r.top >= c.top - 1 && r.bottom <= c.bottom + 1).length}; }"""


def test_steps_open_on_a_nodes_edge(attention_trace, tmp_path, browser):
  """An attention block's kernels in a notebook's column (the report at 1000x760): each kernel's first step and its code's
  step open readable, and where the graph is wider than the canvas the view starts at a node's edge: no node is cut
  mid-way at the canvas's left edge (as the legend above it was), unless the output row a snapshot opens on leaves no
  such start; in a dense graph a node wider than the gaps between the others can leave none: one node cut at most, in at
  most one step in ten (before, 14 of these 38 steps cut up to 8)."""
  html = attention_trace.to_html(tmp_path / "attention.html", workers=2)
  keys = list(dict.fromkeys(P.step_key(s) for k in attention_trace.kernels for s in (k.group.steps[0], k.codegen_step) if s))
  cut = {}
  with new_page(browser, width=1000, height=760, offline=True) as page:
    page.goto(html.as_uri())
    page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
    to_steps(page)
    for key in keys:
      page.locator(f".tgviz-step[data-key='{key}']").evaluate("e => e.click()")  # (a row scrolled out of the tree's view too)
      page.wait_for_function("k => { const s = document.querySelector('.tgviz-stage'); return s.dataset.step === k && s.querySelector('svg'); }",
                             arg=key, timeout=LIMIT)
      settled(page)
      got = page.evaluate(CUT_AT_LEFT)
      assert label_px(page) >= 10.99 and got["whole"] > 0, (key, got)
      if got["cut"] and not got["pinned"]:
        cut[key] = got
        page.screenshot(path=str(ARTIFACTS / f"opening-cut-{key.replace(':', '-')}.png"))
    assert all(got["cut"] == 1 for got in cut.values()) and len(cut) <= len(keys) // 10, cut
    assert not page.errors


ON_SCREEN = """() => { const c = document.querySelector('.tgviz-canvas').getBoundingClientRect();
  const within = (r) => r.left >= c.left - 1 && r.right <= c.right + 1 && r.top >= c.top - 1 && r.bottom <= c.bottom + 1;
  const all = [...document.querySelectorAll('.tgviz-stage g.side g.node')], rs = all.map((n) => n.getBoundingClientRect());
  const marked = all.filter((n) => n.matches('.added, .removed, .changed'));
  const lowest = Math.max(...rs.map((r) => r.top));
  return {marked: marked.length, shown: marked.filter((n) => within(n.getBoundingClientRect())).length,
          lowest_row_shown: rs.some((r) => r.top === lowest && within(r))}; }"""


def test_big_steps_open_on_what_changed(cnn_trace, tmp_path, page):
  """A step of thousands of matches changes nodes all over both sides of its picture: it opens, steps and zooms on a
  part of the change that fits the canvas, readable, not on the empty middle of it all; a big snapshot opens with its
  lowest row (the graph's output end) on screen, and the canvas it is measured in is the one left under the banner."""
  html = cnn_trace.to_html(tmp_path / "index.html", workers=2)
  page.goto(html.as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  def shown(key: str, match: str) -> dict:
    page.wait_for_function("([k, m]) => { const s = document.querySelector('.tgviz-stage'); return s.dataset.step === k && s.dataset.match === m; }",
                           arg=[key, match], timeout=LIMIT)
    return page.evaluate(ON_SCREEN)
  for step in sorted(cnn_trace.steps, key=lambda s: -len(s.matches))[:2]:
    key, n = P.step_key(step), len(step.matches)
    page.locator(f".tgviz-step[data-key='{key}']").click()
    whole = shown(key, "")
    assert whole["marked"] > 50 and whole["shown"] >= 5, (step.path, whole)
    page.locator(".tgviz-title").click()
    page.keyboard.press("End")
    last = shown(key, str(n - 1))
    assert last["shown"] >= 1, (step.path, last)
    page.keyboard.press("z")
    assert page.evaluate(ON_SCREEN)["shown"] >= 1
  page.screenshot(path=str(ARTIFACTS / "report-big-step.png"))
  snap = next(s for s in cnn_trace.steps if s.is_snapshot and len(tg.toposort(s.before())) > DEFAULT_MAX_NODES)
  search_for(page, snap.group.name)
  page.locator(f".tgviz-step[data-key='{P.step_key(snap)}']").click()
  assert shown(P.step_key(snap), "")["lowest_row_shown"], snap.path
  assert not page.errors


PATTERN_LINES = """() => [...document.querySelectorAll('.tgviz-rules tr.tgviz-rule td code')].slice(0, 20).map((c) => {
  const lh = parseFloat(getComputedStyle(c).lineHeight) || 1.2 * parseFloat(getComputedStyle(c).fontSize);
  return [c.textContent, Math.max(1, Math.round(c.getBoundingClientRect().height / lh))]; })"""


def test_report_fills_the_window_and_its_panels(tutorial_trace, tmp_path, browser):
  """At 1600x1000 the report is the widget over the whole window, the graph canvas at least 1040x850; a node's panel
  shows in the click's own handler (no round trip), beside the canvas, and the page's history fills in; the rules tab is wide enough to
  read a pattern (tens of characters a line); side panels collapse to a strip that brings them back; the kernel table
  opens over the columns, E_3 #1 and E_3 #2 apart, with each kernel's matches."""
  html = tutorial_trace.to_html(tmp_path / "index.html")
  with new_page(browser, 1600, 1000, offline=True) as page:
    page.goto(html.as_uri())
    page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
    to_steps(page)  # from the program map the report opens on, to the steps
    box, canvas = page.locator(".tgviz-root").bounding_box(), page.locator(".tgviz-canvas").bounding_box()
    assert (box["x"], box["y"], box["width"], box["height"]) == (0, 0, 1600, 1000), box
    assert canvas["width"] >= 1040 and canvas["height"] >= 850, canvas
    assert page.evaluate("document.documentElement.scrollHeight") <= 1000 and not page.locator(".tgviz-maximise").is_visible()
    print(f"\nreport canvas at 1600x1000: {canvas['width']:.0f}x{canvas['height']:.0f} px")
    took = node_panel_ms(page)
    print(f"node panel shown {took['ms']:.1f} ms after the click (report)")
    assert took["at_once"] and took["shown"] and took["text"].startswith(took["op"]), took
    panel = page.locator(".tgviz-node-panel").bounding_box()
    assert panel["x"] >= canvas["x"] + canvas["width"] and page.locator(".tgviz-canvas").bounding_box() == canvas
    page.wait_for_selector(".tgviz-node-panel[data-state='full'] .tgviz-history", timeout=LIMIT)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "report-full-window.png"))
    # the rules: a column wide enough that a pattern reads in lines of tens of characters
    page.locator(".tgviz-rules-toggle").click()
    page.wait_for_selector(".tgviz-rules tr.tgviz-rule", timeout=LIMIT)
    assert page.locator(".tgviz-left").bounding_box()["width"] >= 700
    shown = page.evaluate(PATTERN_LINES)  # [pattern text, lines it takes]: no more than at 50 characters a line
    assert any(len(t) > 80 for t, _ in shown) and all(k <= sum(-(-len(ln) // 50) or 1 for ln in t.split("\n")) for t, k in shown), shown
    page.screenshot(path=str(ARTIFACTS / "report-rules.png"))
    page.locator(".tgviz-rules-toggle").click()
    # side panels: a strip each when collapsed; a click on the strip brings the panel back
    page.locator(".tgviz-toggle-tree").click()
    page.locator(".tgviz-node-panel .tgviz-node-head .tgviz-link").click()  # no node picked: the code column collapses to its strip
    page.locator(".tgviz-toggle-code").click()
    for strip in (".tgviz-strip-tree", ".tgviz-strip-code"):
      assert page.locator(strip).is_visible() and page.locator(strip).bounding_box()["width"] <= 30, strip
    wide = page.locator(".tgviz-canvas").bounding_box()
    assert wide["width"] >= 1500, wide
    page.screenshot(path=str(ARTIFACTS / "report-collapsed.png"))
    page.locator(".tgviz-strip-tree").click()
    page.locator(".tgviz-strip-code").click()
    assert page.locator(".tgviz-tree").is_visible() and page.locator(".tgviz-right > .tgviz-code").is_visible()
    # the kernel table: over the columns, E_3 #1 and E_3 #2, each kernel's matches
    page.locator(".tgviz-kernels summary").click()
    sheet, main = page.locator(".tgviz-kernels .tgviz-sheet").bounding_box(), page.locator(".tgviz-main").bounding_box()
    assert abs(sheet["y"] - main["y"]) <= 2 and sheet["height"] <= main["height"] + 1 and sheet["width"] >= 1590
    heads = page.locator(".tgviz-kernels th").all_inner_texts()
    rows = page.locator(".tgviz-kernels tbody tr").evaluate_all("rs => rs.map(r => [...r.cells].map(c => c.innerText))")
    names, matches = [r[0] for r in rows], [int(r[heads.index("matches")]) for r in rows]
    assert names == [k.display_name for k in tutorial_trace.kernels] and "E_3 #2" in names
    assert matches == [k.group.match_count for k in tutorial_trace.kernels]
    page.screenshot(path=str(ARTIFACTS / "report-kernel-table.png"))
    page.locator(".tgviz-kernels tbody tr", has_text="E_3 #2").click()
    page.wait_for_function("document.querySelector('.tgviz-title').innerText.startsWith('E_3 #2 / View Base AST')", timeout=LIMIT)
    assert page.locator(".tgviz-code-head").inner_text().startswith("E_3 #2 ·")
    assert not page.errors


def test_report_folds_and_r_shows_the_raw_graph(report, page):
  """The report opens folded (index arithmetic as expressions, lanes ×N: nodes with data-holds); r (or the raw button)
  shows the raw graph, every UOp its own node, and kept while stepping; r again folds. A folded node's panel lists what
  it holds, and a click on one opens the raw graph with that UOp picked."""
  page.goto((report / "index.html").as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  to_steps(page)  # from the program map the report opens on, to the steps
  count = lambda sel: page.locator(f".tgviz-stage svg g[data-side] {sel}").count()  # noqa: E731
  folded, holding = count("g.node"), count("g.node[data-holds]")
  assert holding > 0 and not page.locator(".tgviz-raw").evaluate("b => b.classList.contains('active')")
  page.locator(".tgviz-title").click()
  page.keyboard.press("r")
  page.wait_for_function("() => !document.querySelector('.tgviz-stage svg g.node[data-holds]')", timeout=LIMIT)
  assert count("g.node") > folded and page.locator(".tgviz-raw").evaluate("b => b.classList.contains('active')")
  page.keyboard.press("ArrowDown")  # another step: still raw
  page.wait_for_function("() => document.querySelector('.tgviz-stage svg g.node') && "
                         "!document.querySelector('.tgviz-stage svg g.node[data-holds]')", timeout=LIMIT)
  assert page.locator(".tgviz-raw").evaluate("b => b.classList.contains('active')")
  page.keyboard.press("ArrowUp")
  page.keyboard.press("r")
  page.wait_for_function("() => document.querySelector('.tgviz-stage svg g.node[data-holds]')", timeout=LIMIT)
  page.keyboard.press("f")  # the whole graph in view: the folded node clicked below is on the canvas
  fold = page.locator(".tgviz-stage svg g[data-side] g.node[data-holds]").first
  held = fold.get_attribute("data-holds").split()
  fold.click()
  page.wait_for_selector(".tgviz-node-panel:not([hidden]) .tgviz-held", timeout=LIMIT)
  assert f"folded: {len(held)} UOps" in page.locator(".tgviz-held").inner_text()
  member = held[-1]
  page.locator(f".tgviz-held [data-held='{member}']").click()
  page.wait_for_selector(f".tgviz-stage svg g.node.hl[data-node='{member}']", timeout=LIMIT)
  assert not page.locator(".tgviz-stage svg g.node[data-holds]").count()
  assert not page.errors
