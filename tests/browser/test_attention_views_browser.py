"""The graph views a new user met on the attention block (harness.ATTENTION) in a notebook's narrow canvas (about 410
px beside the file browser; the report at 860 px wide gives the canvas that width): f on a small kernel's step fits its
graph, readable and centred; a schedule's step opens on its changes; a code line clicked says why the step changed,
with a way back; in JupyterLab, a click in the widget leaves the notebook where it is."""
import runpy

import pytest
from harness import ARTIFACTS, ATTENTION, LIMIT, inside, label_px, new_page, open_in_lab, run_all, settled, to_steps

import tgviz
from tgviz.views import protocol as P

NODES = """() => { const c = document.querySelector('.tgviz-canvas').getBoundingClientRect();
  const box = (sel) => [...document.querySelectorAll(sel)].map((n) => {
    const r = n.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; });
  return {canvas: [c.left, c.top, c.right, c.bottom], nodes: box('.tgviz-stage g.side g.node'),
          names: box('.tgviz-stage g.side > text.title')}; }"""


@pytest.fixture(scope="module")
def attention(tmp_path_factory):
  """The attention block's trace, run as a script (its lines: attention.py's), and its report."""
  script = tmp_path_factory.mktemp("attention") / "attention.py"
  script.write_text(ATTENTION)
  with tgviz.capture() as trace: runpy.run_path(str(script))
  return trace, trace.to_html(script.parent / "index.html", workers=2)


def open_step(page, report, key: str) -> None:
  """The report open at the step `key` (from the program map it opens on), its picture drawn and its view settled."""
  page.goto(report.as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node, .tgviz-progmap[open] svg", timeout=LIMIT)
  to_steps(page)
  page.locator(f".tgviz-group:has(.tgviz-step[data-key='{key}']) > summary").evaluate("s => { s.parentElement.open = true; }")
  page.locator(f".tgviz-step[data-key='{key}']").click()
  page.wait_for_function("k => { const s = document.querySelector('.tgviz-stage'); return s.dataset.step === k && s.querySelector('svg g.node'); }",
                         arg=key, timeout=LIMIT)
  settled(page)


def test_f_fits_a_small_kernels_graph_readable_and_centred(attention, browser):
  """The softmax kernel's View Base AST (a dozen nodes) in a 410 px canvas: f fitted the whole picture, the title and a
  legend three times the graph's width, leaving the graph 150 px wide at the canvas's top left with 3 px labels. Now
  every node is whole on the canvas, the nodes as large as fits them (readable where they fit readable: 11 px labels),
  filling the canvas across or down, centred both ways (with the side's name above them)."""
  trace, report = attention
  step = next(k for k in trace.kernels if k.name.startswith("r_3_4_6")).group.steps[0]
  with new_page(browser, 860, 1000, offline=True) as page:
    open_step(page, report, P.step_key(step))
    page.locator(".tgviz-title").click()
    page.keyboard.press("f")
    settled(page)
    page.screenshot(path=str(ARTIFACTS / "attention-softmax-fit.png"))
    got, px = page.evaluate(NODES), label_px(page)
    c, ns = got["canvas"], got["nodes"]
    assert c[2] - c[0] <= 420 and ns, got
    assert all(inside(n, c) for n in ns), got
    graph = ns + got["names"]  # the nodes and their side's name ("before")
    left, top = min(n[0] for n in graph), min(n[1] for n in graph)
    right, bottom = max(n[2] for n in graph), max(n[3] for n in graph)
    room = min((c[2] - c[0] - 20) / (right - left), (c[3] - c[1] - 20) / (bottom - top))  # a 10 px margin all round
    assert room <= 1.02, (room, got)  # as large as fits: filling the canvas across or down
    assert px >= min(11, 0.98 * px * room) and px >= 8, px
    assert abs((left - c[0]) - (c[2] - right)) <= 2 and abs((top - c[1]) - (c[3] - bottom)) <= 2, got  # centred
    assert not page.errors


# The changed nodes whole on the canvas clear of the overview, and the most that any view at this zoom shows so (the
# canvas less a 10 px margin all round; the overview where it is): the best view has a changed node's edge on one of
# the window's edges each way, so only those are tried.
CHANGED = """() => { const c = document.querySelector('.tgviz-canvas').getBoundingClientRect(), m = 10;
  const mini = document.querySelector('.tgviz-minimap'), o = mini && mini.offsetParent ? mini.getBoundingClientRect() : null;
  const rs = [...document.querySelectorAll('.tgviz-stage g.side g.node.added, .tgviz-stage g.side g.node.removed, '
                                           + '.tgviz-stage g.side g.node.changed')].map((n) => n.getBoundingClientRect());
  const shows = (dx, dy, l, t, r, b) => rs.filter((q) => q.left + dx >= l - 0.5 && q.right + dx <= r + 0.5 && q.top + dy >= t - 0.5
    && q.bottom + dy <= b + 0.5 && !(o && q.left + dx < o.right && q.right + dx > o.left && q.top + dy < o.bottom && q.bottom + dy > o.top)).length;
  const l = c.left + m, t = c.top + m, r = c.right - m, b = c.bottom - m;
  const dxs = rs.flatMap((q) => [l - q.left, r - q.right]), dys = rs.flatMap((q) => [t - q.top, b - q.bottom]);
  let most = 0;
  for (const dx of dxs) for (const dy of dys) most = Math.max(most, shows(dx, dy, l, t, r, b));
  return {changed: rs.length, shown: shows(0, 0, c.left, c.top, c.right, c.bottom), most}; }"""


def test_a_schedule_step_opens_on_its_changes(attention, browser):
  """A schedule's "params to buffers" (160 nodes, 38 changed: its CALLs, their buffers, the LINEAR) in a notebook-sized
  canvas (410x690 px): it opened readable on the window with the most nodes, one changed PARAM in it and no changed
  CALL. Now it opens readable with as many changed nodes whole on screen as any view at that zoom shows (clear of the
  overview), a changed CALL among them."""
  trace, report = attention
  sched = next(g for g in trace.groups if g.kind == "schedule" and any(s.name == "params to buffers" and len(s.matches) > 8 for s in g.steps))
  step = next(s for s in sched.steps if s.name == "params to buffers")
  with new_page(browser, 860, 780, offline=True) as page:
    open_step(page, report, P.step_key(step))
    page.screenshot(path=str(ARTIFACTS / "attention-schedule-opens.png"))
    got = page.evaluate(CHANGED)
    assert got["changed"] > 8 and got["shown"] >= got["most"] > 1, got
    assert label_px(page) >= 11, label_px(page)
    calls = page.evaluate("""() => { const c = document.querySelector('.tgviz-canvas').getBoundingClientRect();
      return [...document.querySelectorAll('.tgviz-stage g.side g.node.changed[data-op="CALL"]')].filter((n) => {
        const r = n.getBoundingClientRect(); return r.left >= c.left && r.right <= c.right && r.top >= c.top && r.bottom <= c.bottom; }).length; }""")
    assert calls >= 1, calls
    assert not page.errors


OUTER = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer"  # the notebook's scrolling box
# the widget's top at the notebook panel's top, as the user had it; the notebook's scrollTop then
WIDGET_AT_TOP = f"""() => {{ const o = document.querySelector('{OUTER}'), r = document.querySelector('.tgviz-root');
  o.scrollTop += r.getBoundingClientRect().top - o.getBoundingClientRect().top; return o.scrollTop; }}"""
# the tree scrolled so that the row key is cut at its top edge (top) or bottom edge: half of it shown
CUT_ROW = """([key, top]) => { const t = document.querySelector('.tgviz-tree'), row = t.querySelector(`.tgviz-step[data-key="${key}"]`);
  const r = row.getBoundingClientRect(), b = t.getBoundingClientRect();
  t.scrollTop += top ? r.top + r.height / 2 - b.top : r.top + r.height / 2 - b.bottom; }"""
ROW_WHOLE = """(key) => { const t = document.querySelector('.tgviz-tree').getBoundingClientRect();
  const r = document.querySelector(`.tgviz-tree .tgviz-step[data-key="${key}"]`).getBoundingClientRect();
  return r.top >= t.top - 0.5 && r.bottom <= t.bottom + 0.5; }"""


def test_a_click_in_the_widget_does_not_scroll_the_notebook(lab, browser):
  """The new user's notebook (JupyterLab at 1400x1000, the file browser open), the attention cell's widget at the top
  of the notebook panel: a click on a tree step cut at the tree's top or bottom edge scrolled the notebook some 225 px
  (the row was brought into view with scrollIntoView, which scrolls the notebook too): the cell's input came back, the
  canvas's foot left the screen. Now the tree alone scrolls, the row whole in it, and the notebook stays put."""
  with new_page(browser, 1400, 1000) as page:
    open_in_lab(page, lab, "attention-jump", "%load_ext tgviz", "%%tgviz -o attn\n" + ATTENTION, "print('\\n'.join(map(str, range(80))))")
    run_all(page, 3)
    page.evaluate("window.jupyterapp.shell.activateById('filebrowser')")
    page.wait_for_selector(".tgviz-root .tgviz-filter", timeout=LIMIT)
    to_steps(page.locator(".tgviz-root").first)
    settled(page)
    rows = page.locator(".tgviz-tree .tgviz-step").evaluate_all("rs => rs.map((r) => r.dataset.key)")
    for key, top in ((rows[len(rows) // 2], True), (rows[len(rows) // 3], False)):
      page.evaluate(CUT_ROW, [key, top])
      scrolled = page.evaluate(WIDGET_AT_TOP)
      settled(page)
      assert not page.evaluate(ROW_WHOLE, key)
      at = page.locator(f".tgviz-tree .tgviz-step[data-key='{key}']").bounding_box()
      tree = page.locator(".tgviz-tree").bounding_box()
      y = at["y"] + at["height"] * (0.75 if top else 0.25)  # on the row's half that shows
      assert tree["y"] < y < tree["y"] + tree["height"], (at, tree)
      page.mouse.click(at["x"] + 40, y)
      page.wait_for_function("k => document.querySelector('.tgviz-stage').dataset.step === k", arg=key, timeout=LIMIT)
      settled(page)
      page.screenshot(path=str(ARTIFACTS / f"attention-click-no-jump-{'top' if top else 'bottom'}.png"))
      assert page.evaluate(f"document.querySelector('{OUTER}').scrollTop") == scrolled, (key, top)
      assert page.evaluate(ROW_WHOLE, key), (key, top)
    assert not page.errors


STATUS = "document.querySelector('.tgviz-status').textContent"
STEP = "() => { const s = document.querySelector('.tgviz-stage'); return [s.dataset.step, s.dataset.match]; }"


def test_a_code_line_that_changes_step_says_why_and_links_back(attention, browser):
  """The user, at the matmul kernel's "postopt symbolic", its last match, clicked a code line: the view jumped to "View
  Output AST" with nothing saying why. A line's UOps are drawn in the graph the renderer consumed (where a step before
  it does not draw them, that graph opens, zoomed to them): now the status line says so, naming both steps, and its link
  goes back to the step and match left. A line clicked where the step shown draws its UOps keeps the step (there, the
  link stays)."""
  trace, report = attention
  kernel = next(k for k in trace.kernels if k.name.startswith("r_2_6_6_16"))
  step = next(s for s in kernel.group.steps if s.name == "postopt symbolic" and len(s.matches) > 1)
  codegen, last = P.step_key(kernel.codegen_step), len(step.matches) - 1
  line = next(n for n, keys in enumerate(kernel.line_keys, 1) if len(keys) > 1)
  with new_page(browser, 1400, 1000, offline=True) as page:
    open_step(page, report, P.step_key(step))
    page.locator(".tgviz-title").click()
    page.keyboard.press("End")
    page.wait_for_function(f"document.querySelector('.tgviz-stage').dataset.match === '{last}'", timeout=LIMIT)
    page.locator(f".tgviz-right > .tgviz-code [data-line='{line}']").click()
    page.wait_for_function(f"document.querySelector('.tgviz-stage').dataset.step === '{codegen}' && "
                           "document.querySelectorAll('.tgviz-stage g.side g.node.hl-line').length > 0", timeout=LIMIT)
    settled(page)
    page.screenshot(path=str(ARTIFACTS / "attention-code-line-changes-step.png"))
    status, name = page.evaluate(STATUS), kernel.codegen_step.name
    was = f"postopt symbolic, match {last + 1}/{len(step.matches)}"
    assert f"line {line}'s UOps marked here, in {name}" in status and "postopt symbolic does not draw them" in status, status
    back = page.locator(".tgviz-status .tgviz-line-back")
    assert back.inner_text() == f"back to {was}", back.inner_text()
    other = next(n for n, keys in enumerate(kernel.line_keys, 1) if keys and n != line)  # drawn here: the step stays
    page.locator(f".tgviz-right > .tgviz-code [data-line='{other}']").click()
    page.wait_for_function("n => document.querySelector(`.tgviz-right > .tgviz-code [data-line='${n}']`).classList.contains('tgviz-line-pinned')",
                           arg=other, timeout=LIMIT)
    settled(page)
    assert page.evaluate(STEP) == [codegen, ""], page.evaluate(STEP)
    back.click()
    page.wait_for_function(f"document.querySelector('.tgviz-stage').dataset.step === '{P.step_key(step)}' && "
                           f"document.querySelector('.tgviz-stage').dataset.match === '{last}'", timeout=LIMIT)
    assert page.locator(".tgviz-step.selected").inner_text().startswith("postopt symbolic")
    assert not page.errors
