"""The widget in a real JupyterLab in headless Chromium: tree, graph, code, keys, export, screenshot, and a saved notebook
reopened, without its kernel or while its kernel runs."""
import re
import time
from collections.abc import Callable

import pytest
from harness import (
  ARTIFACTS,
  LIMIT,
  NOTEBOOK,
  TUTORIAL,
  changed_in_view,
  check_maximise,
  check_saved_notebook,
  check_zoomed_to_change,
  ctrl_wheel,
  graph_fitted,
  inside,
  label_px,
  marked_boxes,
  new_page,
  node_panel_ms,
  open_in_lab,
  point_on,
  run_all,
  saved_kept_picture,
  sessions,
  settled,
  to_steps,
  uops_cells,
  wraps,
)


@pytest.fixture
def page(browser):
  with new_page(browser, 1600, 1100) as p: yield p


def test_widget_in_jupyterlab(lab, page):
  root = lab[2]
  open_in_lab(page, lab, "tutorial", "%load_ext tgviz", TUTORIAL)
  run_all(page, 2)
  widget = page.locator(".tgviz-root")
  widget.wait_for(timeout=LIMIT)
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  to_steps(page)  # from the program map the widget opens on, to the steps
  # the tree: schedule and kernel groups with their steps
  assert page.locator(".tgviz-group.kind-kernel").count() >= 1
  assert page.locator(".tgviz-step").count() > 50
  assert "r_2_2_2_2" in page.locator(".tgviz-tree").inner_text()
  # opens on the conv kernel's landmark, with its OpenCL code
  assert page.locator(".tgviz-step.selected").inner_text().startswith("View Base AST")
  assert page.locator(".tgviz-stage svg g.node").count() > 5
  page.wait_for_function("document.querySelector('.tgviz-right > .tgviz-code').innerText.includes('__kernel')", timeout=LIMIT)
  assert "OpenCL" in page.locator(".tgviz-code-head").inner_text()
  # readable by default: labels render at 11 CSS px or more (font size times the SVG's scale on screen)
  assert label_px(page) >= 11, label_px(page)
  assert page.locator(".tgviz-summary").inner_text().count("\n") == 0  # one line above the widget
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  shot = ARTIFACTS / "widget.png"
  widget.screenshot(path=str(shot))
  print(f"\nwidget screenshot: {shot}")
  # keys: down moves to the next step, right to the next match
  first = page.locator(".tgviz-step.selected").get_attribute("data-key")
  page.locator(".tgviz-title").click()
  page.keyboard.press("ArrowDown")
  page.wait_for_function(f"document.querySelector('.tgviz-step.selected').dataset.key !== '{first}'", timeout=LIMIT)
  page.wait_for_function("document.querySelector('.tgviz-stage').dataset.step === "
                         "document.querySelector('.tgviz-step.selected').dataset.key", timeout=LIMIT)
  # a step with matches, then step through one match
  page.locator(".tgviz-step:not(.empty)", has_text="devectorize2").first.click()
  page.wait_for_function("document.querySelector('.tgviz-title').innerText.includes('devectorize2')", timeout=LIMIT)
  assert label_px(page) >= 11 and changed_in_view(page)  # a new step opens readable, on what changed
  page.keyboard.press("ArrowRight")
  page.wait_for_function("document.querySelector('.tgviz-stage').dataset.match === '0'", timeout=LIMIT)
  assert re.search(r"match 1 / \d+", page.locator(".tgviz-match-label").inner_text())
  assert changed_in_view(page)  # stepping keeps the change in view
  page.keyboard.press("End")
  page.wait_for_function("document.querySelector('.tgviz-stage').dataset.match !== '0'", timeout=LIMIT)
  last = int(page.locator(".tgviz-stage").get_attribute("data-match"))
  assert page.locator(".tgviz-match-label").inner_text() == f"match {last + 1} / {last + 1}" and changed_in_view(page)
  page.keyboard.press("Home")
  page.wait_for_function("document.querySelector('.tgviz-stage').dataset.match === '0'", timeout=LIMIT)
  page.keyboard.press("f")  # fit: the whole graph in view
  assert graph_fitted(page)["whole"], graph_fitted(page)
  page.keyboard.press("z")  # zoom to the change: all of it whole, readable where it fits so
  check_zoomed_to_change(page)
  assert changed_in_view(page)
  cells = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell").count()
  for key in ("a", "b", "m", "d", "d", "x"):  # notebook command-mode keys do nothing while the widget has focus
    page.keyboard.press(key)
  page.wait_for_timeout(300)
  assert page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell").count() == cells
  # ... but the notebook's keys with a modifier do: Ctrl+S saves it (pass 19: it stayed unsaved, the widget's mark
  # suppressing every JupyterLab shortcut in it)
  assert page.evaluate("document.querySelector('.tgviz-root').contains(document.activeElement)")
  page.keyboard.press("Control+s")
  page.wait_for_function(f"!({DIRTY})", timeout=LIMIT)
  assert "application/vnd.jupyter.widget-view+json" in (root / "tutorial.ipynb").read_text()  # its outputs, the widget's
  assert page.locator(".tgviz-pattern").inner_text().startswith("pattern")
  assert page.locator(".tgviz-stage svg g[data-side='after'] g.node").count() > 0
  # export writes the SVG and says where
  page.locator(".tgviz-export").click()
  page.wait_for_function("document.querySelector('.tgviz-status').innerText.startsWith('exported SVG to')", timeout=LIMIT)
  path = page.locator(".tgviz-status").inner_text().removeprefix("exported SVG to ").strip()
  assert path.endswith(".svg") and (root / "tgviz-svg").is_dir()
  saved = (root / "tgviz-svg" / path.rsplit("/", 1)[-1]).read_text()
  assert saved.startswith("<svg")
  # ... of the part on screen: the box the canvas shows, in the picture's units (shift: the whole picture)
  shown = page.evaluate("""() => { const c = document.querySelector('.tgviz-canvas'), s = document.querySelector('.tgviz-stage svg');
    const m = /translate\\(([-\\d.]+)px, ([-\\d.]+)px\\) scale\\(([\\d.]+)\\)/.exec(document.querySelector('.tgviz-stage').style.transform);
    const [tx, ty, k] = m.slice(1).map(Number);
    return [Math.max(0, -tx / k), Math.max(0, -ty / k), Math.min(Number(s.getAttribute('width')), (c.clientWidth - tx) / k),
            Math.min(Number(s.getAttribute('height')), (c.clientHeight - ty) / k)]; }""")
  x, y, w, h = (round(float(v), 1) for v in saved.split('viewBox="', 1)[1].split('"', 1)[0].split())
  assert abs(x - shown[0]) < 0.2 and abs(y - shown[1]) < 0.2 and abs(x + w - shown[2]) < 0.2 and abs(y + h - shown[3]) < 0.2, (x, y, w, h, shown)
  # the step with the most matches, one click away; the selected row is in view, its name and count both shown
  page.locator(".tgviz-busiest").click()
  counts = page.eval_on_selector_all(".tgviz-step .tgviz-count", "cs => cs.map(c => Number(c.textContent))")
  page.wait_for_function(f"document.querySelector('.tgviz-step.selected .tgviz-count').textContent === '{max(counts)}'", timeout=LIMIT)
  row, tree = page.locator(".tgviz-step.selected").bounding_box(), page.locator(".tgviz-tree").bounding_box()
  assert tree["y"] <= row["y"] and row["y"] + row["height"] <= tree["y"] + tree["height"]
  # JupyterLab's dark theme: the whole widget goes dark, the graph included
  theme = "(t) => window.jupyterapp.commands.execute('apputils:change-theme', {theme: t})"
  page.evaluate(theme, "JupyterLab Dark")
  try:
    page.wait_for_function("document.body.dataset.jpThemeLight === 'false'", timeout=LIMIT)
    settled(page)
    dark = "(c) => { const [r, g, b] = c.match(/\\d+/g).map(Number); return r + g + b < 3 * 80; }"
    for sel, prop in ((".tgviz-canvas", "backgroundColor"), (".tgviz-stage svg > rect", "fill"), (".tgviz-root", "backgroundColor"),
                      (".tgviz-right > .tgviz-code .highlight", "backgroundColor")):
      color = page.evaluate(f"getComputedStyle(document.querySelector('{sel}')).{prop}")
      assert page.evaluate(f"({dark})({color!r})"), (sel, color)
    widget.screenshot(path=str(ARTIFACTS / "widget-dark.png"))
  finally: page.evaluate(theme, "JupyterLab Light")


def test_clicking_a_node_opens_its_panel(lab, page):
  open_in_lab(page, lab, "nodes", "%load_ext tgviz", TUTORIAL)
  run_all(page, 2)
  page.wait_for_selector(".tgviz-stage svg g.node", state="attached", timeout=LIMIT)
  page.locator(".tgviz-step:not(.empty)", has_text="devectorize2").first.click()
  page.wait_for_function("document.querySelector('.tgviz-title').innerText.includes('devectorize2')", timeout=LIMIT)
  page.keyboard.press("f")
  node = page.locator(".tgviz-stage g[data-side='after'] g.node[data-op='INDEX']").first
  key = node.get_attribute("data-node")
  node.click()
  page.wait_for_selector(".tgviz-node-panel:not([hidden])", timeout=LIMIT)
  panel = page.locator(".tgviz-node-panel").inner_text()
  assert panel.startswith("INDEX") and key in panel and "sources:" in panel
  assert page.locator(f".tgviz-stage g.node.hl[data-node='{key}']").count() >= 1  # the node, on each side it is on
  assert page.locator(".tgviz-stage g.node.hl-in").count() >= 1  # and its inputs
  page.locator(".tgviz-node-panel details summary").click()
  assert "UOp" in page.locator(".tgviz-node-panel pre").inner_text()  # the node as tinygrad's Python
  first_source = page.locator(".tgviz-node-panel .tgviz-link").nth(1)
  first_source.click()  # a source is clickable: it becomes the picked node
  page.wait_for_function(f"document.querySelector('.tgviz-stage g.node.hl').dataset.node !== '{key}'", timeout=LIMIT)


def test_maximised_panels_and_kernel_table(lab, browser):
  """At 1600x1000: maximised, the widget fills the window and the graph gets at least 1040x850 px; a node's panel shows
  in the click's own handler (no round trip), docked in the code column beside the canvas (not over it), and the kernel's answer fills
  it in; side panels collapse to a strip that brings them back; the kernel table opens over the columns (the widget does
  not grow), numbers same-named kernels and has their matches."""
  cell = TUTORIAL + "\nprint(Tensor.arange(2, 11, 3).tolist(), Tensor.arange(5, -1, -2).tolist())"  # two kernels E_3
  with new_page(browser, 1600, 1000) as page:
    open_in_lab(page, lab, "room", "%load_ext tgviz", cell)
    run_all(page, 2)
    page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
    page.wait_for_function("!document.querySelector('.tgviz-root').classList.contains('tgviz-offline')", timeout=LIMIT)
    check_maximise(page, "widget-maximised.png")
    page.locator(".tgviz-title").click()
    page.keyboard.press("m")
    settled(page)
    canvas = page.locator(".tgviz-canvas").bounding_box()
    took = node_panel_ms(page)
    print(f"\nnode panel shown {took['ms']:.1f} ms after the click (JupyterLab, maximised)")
    assert took["at_once"] and took["shown"] and took["state"] == "page", took
    assert took["text"].startswith(took["op"]) and took["key"] in took["text"] and "sources:" in took["text"]
    panel = page.locator(".tgviz-node-panel").bounding_box()
    assert panel["x"] >= canvas["x"] + canvas["width"] and page.locator(".tgviz-canvas").bounding_box() == canvas  # beside it
    page.wait_for_selector(".tgviz-node-panel[data-state='full'] .tgviz-history", timeout=LIMIT)  # the kernel's answer
    # side panels: a strip each when collapsed, a click on it brings the panel back
    tree = page.locator(".tgviz-left").bounding_box()["width"]
    page.locator(".tgviz-toggle-tree").click()
    strip = page.locator(".tgviz-strip-tree")
    assert strip.is_visible() and strip.bounding_box()["width"] <= 30 and not page.locator(".tgviz-tree").is_visible()
    assert page.locator(".tgviz-canvas").bounding_box()["width"] >= canvas["width"] + tree - 30  # the tree's room, less the strip's
    strip.click()
    assert page.locator(".tgviz-tree").is_visible() and not strip.is_visible()
    page.locator(".tgviz-node-panel .tgviz-node-head .tgviz-link").click()  # the node panel closed
    page.locator(".tgviz-toggle-code").click()
    assert page.locator(".tgviz-strip-code").is_visible() and not page.locator(".tgviz-right > .tgviz-code").is_visible()
    page.locator(".tgviz-strip-code").click()
    assert page.locator(".tgviz-right > .tgviz-code").is_visible()
    page.keyboard.press("Escape")
    # the kernel table: over the columns, the widget no taller; E_3 #1 and E_3 #2; each kernel's matches
    height = page.locator(".tgviz-root").bounding_box()["height"]
    page.locator(".tgviz-kernels summary").click()
    sheet, main = page.locator(".tgviz-kernels .tgviz-sheet").bounding_box(), page.locator(".tgviz-main").bounding_box()
    assert page.locator(".tgviz-root").bounding_box()["height"] == height
    assert abs(sheet["x"] - main["x"]) <= 2 and abs(sheet["width"] - main["width"]) <= 2 and abs(sheet["y"] - main["y"]) <= 2
    heads = page.locator(".tgviz-kernels th").all_inner_texts()
    names = page.locator(".tgviz-kernels tbody tr td:first-child").all_inner_texts()
    assert "matches" in heads and names == ["E_4", "r_2_2_2_2", "E_3 #1", "E_3 #2"], (heads, names)
    matches = page.locator(f".tgviz-kernels tbody tr td:nth-child({heads.index('matches') + 1})").all_inner_texts()
    assert all(int(m) > 0 for m in matches), matches
    page.keyboard.press("Escape")  # closes the table
    assert not page.locator(".tgviz-kernels .tgviz-sheet").is_visible()
    page.locator(".tgviz-kernels summary").click()
    page.locator(".tgviz-kernels tbody tr", has_text="E_3 #2").click()  # a row opens its kernel, and closes the table
    page.wait_for_function("document.querySelector('.tgviz-title').innerText.startsWith('E_3 #2 / View Base AST')", timeout=LIMIT)
    assert page.locator(".tgviz-code-head").inner_text().startswith("E_3 #2 ·") and not page.locator(".tgviz-kernels .tgviz-sheet").is_visible()
    assert "E_3 #2" in page.locator(".tgviz-tree").inner_text()
    # the match box (pattern, the UOps' diff) takes at most a fifth of the canvas's height, inline and maximised
    page.locator(".tgviz-step:not(.empty)", has_text="devectorize2").first.click()
    page.wait_for_function("document.querySelector('.tgviz-title').innerText.includes('devectorize2')", timeout=LIMIT)
    page.keyboard.press("ArrowRight")
    page.wait_for_function("document.querySelector('.tgviz-stage').dataset.match === '0'", timeout=LIMIT)
    assert page.locator(".tgviz-matchinfo .tgviz-uop-diff").count() == 1
    for _ in range(2):
      box, cv = page.locator(".tgviz-matchinfo").bounding_box(), page.locator(".tgviz-canvas").bounding_box()
      assert box["height"] <= cv["height"] / 5, (box, cv)
      page.keyboard.press("m")
      settled(page)
    assert not page.errors


def test_saved_notebook_shows_a_static_picture(lab, page):
  url, token, _ = lab
  path = open_in_lab(page, lab, "saved", "%load_ext tgviz", TUTORIAL)
  check_saved_notebook(page, path, url, token, "widget-saved.png")


def test_code_lines_and_a_schedules_kernels(lab, page):
  open_in_lab(page, lab, "code", "%load_ext tgviz", TUTORIAL)
  run_all(page, 2)
  page.wait_for_function("document.querySelector('.tgviz-right > .tgviz-code')?.innerText.includes('__kernel')", timeout=LIMIT)
  first = page.locator(".tgviz-right > .tgviz-code .tgviz-line[data-line='1']")
  assert first.inner_text().startswith("__kernel")  # one element per line, numbered from 1
  code = wraps(page, ".tgviz-right > .tgviz-code .tgviz-line")  # a long line wraps between tokens, hanging further in
  assert code["wrapped"] >= 1 and not code["bad"] and not code["hang"] and not code["sideways"], code
  page.locator(".tgviz-group.kind-schedule summary", has_text="Schedule 1 Kernel").first.click()
  page.locator(".tgviz-group.kind-schedule[open] .tgviz-step").first.click()
  link = page.locator(".tgviz-produced .tgviz-link").first
  link.wait_for(timeout=LIMIT)
  name = link.inner_text()
  link.click()
  page.wait_for_function(f"document.querySelector('.tgviz-title').innerText.startsWith('{name} / View Base AST')", timeout=LIMIT)


def test_raw_button_and_r_key_in_jupyterlab(lab, page):
  """The widget in JupyterLab opens folded (index arithmetic as expressions: nodes with data-holds); the raw button asks
  the kernel for the raw graph (every UOp its own node, more of them, the button lit), kept on the next step; r folds
  again."""
  open_in_lab(page, lab, "raw", "%load_ext tgviz", TUTORIAL)
  run_all(page, 2)
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  to_steps(page)  # from the program map the widget opens on, to the steps
  count = lambda sel: page.locator(f".tgviz-stage svg g[data-side] {sel}").count()  # noqa: E731
  lit = lambda: page.locator(".tgviz-raw").evaluate("b => b.classList.contains('active')")  # noqa: E731
  folded, holding = count("g.node"), count("g.node[data-holds]")
  assert holding > 0 and not lit(), (folded, holding)
  page.locator(".tgviz-raw").click()
  page.wait_for_function("() => document.querySelector('.tgviz-stage svg g.node') && "
                         "!document.querySelector('.tgviz-stage svg g.node[data-holds]')", timeout=LIMIT)
  assert count("g.node") > folded and lit()
  step = page.locator(".tgviz-stage").get_attribute("data-step")
  page.locator(".tgviz-title").click()
  page.keyboard.press("ArrowDown")  # another step: still raw
  page.wait_for_function(f"() => document.querySelector('.tgviz-stage').dataset.step !== '{step}' && "
                         "document.querySelector('.tgviz-stage svg g.node')", timeout=LIMIT)
  assert not count("g.node[data-holds]") and lit()
  page.keyboard.press("ArrowUp")
  page.wait_for_function(f"() => document.querySelector('.tgviz-stage').dataset.step === '{step}'", timeout=LIMIT)
  page.keyboard.press("r")  # folded again
  page.wait_for_function("() => document.querySelector('.tgviz-stage svg g.node[data-holds]')", timeout=LIMIT)
  assert count("g.node") == folded and count("g.node[data-holds]") == holding and not lit()
  page.locator(".tgviz-root").screenshot(path=str(ARTIFACTS / "widget-folded.png"))
  assert not page.errors


def test_a_saved_notebook_opens_unmodified(lab, page):
  """Opening a saved notebook with a widget (its state saved with it) leaves it unmodified: no unsaved-changes mark
  once the widget has drawn what the notebook kept; an edit then marks it."""
  url, token, _ = lab
  path = open_in_lab(page, lab, "unmodified", "%load_ext tgviz", TUTORIAL)
  check_saved_notebook(page, path, url, token, "widget-reopened.png")  # run, saved, kernel shut down, reopened: drawn
  tab = page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab", has_text="unmodified.ipynb")
  assert tab.count() == 1 and "jp-mod-dirty" not in tab.get_attribute("class"), tab.get_attribute("class")
  page.locator(".jp-Notebook .jp-Cell .jp-InputArea-editor").first.click()  # an edit still marks it changed
  page.keyboard.type("# edited\n")
  page.wait_for_function("document.querySelector('.lm-DockPanel-tabBar .lm-TabBar-tab.jp-mod-current')?.classList.contains('jp-mod-dirty')",
                         timeout=LIMIT)
  assert not page.errors


CURRENT_TAB = ".lm-DockPanel-tabBar .lm-TabBar-tab.jp-mod-current"
DIRTY = f"document.querySelector('{CURRENT_TAB}')?.classList.contains('jp-mod-dirty')"


def answered(page) -> None:
  """Until the widget has drawn its picture from its live kernel's answer (not offline, not laying out), and the page
  has drawn twice since."""
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  page.wait_for_function("!document.querySelector('.tgviz-root').classList.contains('tgviz-offline')"
                         " && !document.querySelector('.tgviz-canvas').classList.contains('busy')", timeout=LIMIT)
  settled(page)


def test_a_notebook_reopened_while_its_kernel_runs_opens_unmodified(lab, page):
  """A saved notebook with a widget, its tab closed while its kernel keeps running and opened again from the file
  browser, then the page reloaded, opens unmodified each time once the widget has drawn from the kernel's answer
  (the widget manager's restore, registering the kernel's models, had marked it changed); running the cell again
  still marks it."""
  url, token, _ = lab
  path = open_in_lab(page, lab, "alive", "%load_ext tgviz", TUTORIAL)
  run_all(page, 2)
  answered(page)
  page.keyboard.press("Control+s")
  saved_kept_picture(path)
  page.wait_for_function(f"!({DIRTY})", timeout=LIMIT)
  page.locator(f"{CURRENT_TAB} .lm-TabBar-tabCloseIcon").click()  # closed: the kernel keeps running
  page.locator(".tgviz-root").wait_for(state="detached", timeout=LIMIT)
  assert [s["path"] for s in sessions(url, token)] == ["alive.ipynb"]
  page.evaluate("window.jupyterapp.commands.execute('filebrowser:activate')")
  page.locator(".jp-DirListing-item", has_text="alive.ipynb").dblclick()
  answered(page)
  tab = page.locator(CURRENT_TAB)
  assert "alive.ipynb" in tab.inner_text() and "jp-mod-dirty" not in tab.get_attribute("class"), tab.get_attribute("class")
  page.reload()  # the page reloaded, the kernel still running
  answered(page)
  assert "alive.ipynb" in tab.inner_text() and "jp-mod-dirty" not in tab.get_attribute("class"), tab.get_attribute("class")
  page.locator(f"{NOTEBOOK} .jp-Cell .jp-InputArea-editor").nth(1).click()  # the cell run again: changed
  page.keyboard.press("Shift+Enter")
  page.wait_for_function(DIRTY, timeout=LIMIT)
  assert not page.errors


ANSWERED = """() => { const roots = [...document.querySelectorAll('.tgviz-root')];
  return roots.length === 2 && roots.every((r) => !r.querySelector('.tgviz-canvas').classList.contains('busy')
    && !r.classList.contains('tgviz-offline') && r.querySelector('.tgviz-stage svg g.node')
    && !r.querySelector('.tgviz-status').textContent.startsWith('laying out')); }"""


def test_widgets_of_cells_run_together_end_showing_their_pictures(lab, page):
  """Cells run together (Run All): two widgets, then a cell that keeps the kernel busy past the time a page waits for
  the kernel before it shows its kept picture as static. The kernel answers the pages' requests only after it: each
  widget then shows its picture, not dimmed at "laying out…" (the answer, the kept picture unchanged, was not sent),
  and is open on the program map, what a trace opens on (the kept picture, shown meanwhile, gives way to it again)."""
  open_in_lab(page, lab, "runall", "%load_ext tgviz", TUTORIAL, TUTORIAL, "import time\ntime.sleep(10)\nprint('slept')")
  run_all(page, 4)
  page.wait_for_function("[...document.querySelectorAll('.jp-OutputArea-output')].some((o) => o.innerText.includes('slept'))",
                         timeout=LIMIT)
  page.wait_for_function(ANSWERED, timeout=LIMIT)
  page.locator(".tgviz-root").first.screenshot(path=str(ARTIFACTS / "widget-run-all.png"))
  assert page.locator(".tgviz-root .tgviz-progmap[open]").count() == 2
  assert not page.errors


PLACE = """() => { const row = document.querySelector('.tgviz-step.selected'), tree = document.querySelector('.tgviz-tree');
  const r = row.getBoundingClientRect(), t = tree.getBoundingClientRect();
  return {row: row.dataset.key, in_view: r.top >= t.top - 1 && r.bottom <= t.bottom + 1, scrolled: tree.scrollTop,
          pinned: [...document.querySelectorAll('.tgviz-right > .tgviz-code .tgviz-line-pinned')].map((e) => e.dataset.line),
          marked: [...document.querySelectorAll('.tgviz-stage g.side g.node.hl-line')].filter((n) => { const b = n.getBoundingClientRect(),
            c = document.querySelector('.tgviz-canvas').getBoundingClientRect();
            return b.left >= c.left && b.right <= c.right && b.top >= c.top && b.bottom <= c.bottom; }).length}; }"""


def test_maximise_keeps_the_place(lab, page):
  """A step far down the tree selected and a code line clicked: maximised (m) and back (Escape), the selected step's
  row stays in view in the tree, and the clicked line stays pinned with its nodes marked, on screen, in the graph."""
  open_in_lab(page, lab, "place", "%load_ext tgviz", TUTORIAL)
  run_all(page, 2)
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  page.wait_for_function("!document.querySelector('.tgviz-root').classList.contains('tgviz-offline')", timeout=LIMIT)
  to_steps(page)
  row = page.locator(".tgviz-group.kind-kernel[open] .tgviz-step:not(.empty)").last
  row.scroll_into_view_if_needed()
  key = row.get_attribute("data-key")
  row.click()
  page.wait_for_function(f"document.querySelector('.tgviz-stage').dataset.step === '{key}'", timeout=LIMIT)
  line = page.locator(".tgviz-right > .tgviz-code .tgviz-line", has_text="=").last
  n = line.get_attribute("data-line")
  line.click()
  page.wait_for_function(f"document.querySelector(\".tgviz-right > .tgviz-code [data-line='{n}']\").classList.contains('tgviz-line-pinned')"
                         " && document.querySelectorAll('.tgviz-stage g.side g.node.hl-line').length > 0", timeout=LIMIT)
  page.wait_for_function("!document.querySelector('.tgviz-canvas').classList.contains('busy')", timeout=LIMIT)
  before = page.evaluate(PLACE)
  assert before["in_view"] and before["scrolled"] > 0 and before["pinned"] == [n], before
  page.mouse.move(1, 1)  # the pointer off the code: a line under it would be hovered, and mark its own nodes
  page.keyboard.press("m")
  page.wait_for_function("document.querySelector('.tgviz-root').classList.contains('maximised')", timeout=LIMIT)
  settled(page)
  maxed = page.evaluate(PLACE)
  page.screenshot(path=str(ARTIFACTS / "widget-maximised-place.png"))
  assert maxed["row"] == before["row"] and maxed["in_view"] and maxed["pinned"] == [n] and maxed["marked"] > 0, maxed
  page.keyboard.press("Escape")
  page.wait_for_function("!document.querySelector('.tgviz-root').classList.contains('maximised')", timeout=LIMIT)
  settled(page)
  back = page.evaluate(PLACE)
  assert back["in_view"] and back["pinned"] == [n] and back["marked"] > 0, back
  assert not page.errors


ROOM = """() => { const q = (s) => document.querySelector(s), box = (e) => e.getBoundingClientRect();
  const bar = q('.tgviz-controls'), mini = q('.tgviz-minimap'), canvas = box(q('.tgviz-canvas'));
  const rows = Math.max(...[...bar.children].filter((e) => e.offsetParent).map((e) => box(e).height));
  const pane = [q('.tgviz-right > .tgviz-code'), q('.tgviz-uops'), q('.tgviz-asm')].find((e) => !e.hidden && e.offsetParent);
  const scrolls = ['auto', 'scroll'].includes(getComputedStyle(pane).overflowX);
  // a line's text beyond the line's own box is cut (it is clipped there, and no scroll reaches it)
  const cut = [...pane.querySelectorAll('.tgviz-line, td')].filter((e) => { const r = document.createRange();
    r.selectNodeContents(e); return r.getBoundingClientRect().right > box(e).right + 1; }).length;
  return {widget: box(q('.tgviz-root')).width, canvas: canvas.width, bar: box(bar).height, row: rows,
          mini: mini.hidden ? null : [box(mini).width / canvas.width, box(mini).height / canvas.height],
          wider: pane.scrollWidth > pane.clientWidth + 1, scrolls, cut}; }"""


def test_columns_have_room_at_a_notebooks_width(lab, browser):
  """At a notebook's usual width (the widget some 950 px, a new user's JupyterLab at 1400x1000), with the uops tab, then
  the code and asm tabs, open: the graph keeps 400 px, its toolbar is one row (what does not fit goes into its ⋯ menu),
  the overview takes at most a quarter of the graph's width and height, and no code line or listing cell is cut (a
  wider one scrolls sideways); the code's and the uops' long lines wrap between tokens, their continuations hanging
  further in, with no sideways scroll; the uops' cells are whole (each row's argument on a line of its own, under its
  other cells, where the pane is narrow)."""
  with new_page(browser, 1400, 1000) as page:
    open_in_lab(page, lab, "room", "%load_ext tgviz", TUTORIAL)
    run_all(page, 2)
    page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
    page.wait_for_function("!document.querySelector('.tgviz-root').classList.contains('tgviz-offline')", timeout=LIMIT)
    to_steps(page)
    page.locator(".tgviz-group", has_text="r_2_2_2_2").locator(".tgviz-step", has_text="devectorize2").first.click()
    page.wait_for_function("document.querySelector('.tgviz-title').innerText.startsWith('r_2_2_2_2 / devectorize2')", timeout=LIMIT)
    for tab, ready in (("uops", ".tgviz-uops tr"),
                       ("code", ".tgviz-right > .tgviz-code .tgviz-line"), ("asm", ".tgviz-asm tr, .tgviz-asm .tgviz-program-note")):
      page.locator(".tgviz-tab", has_text=tab).click()
      page.wait_for_selector(ready, timeout=LIMIT)
      page.locator(".tgviz-title").click()
      page.keyboard.press("1")  # one to one: bigger than the canvas, the overview shows
      settled(page)
      got = page.evaluate(ROOM)
      page.locator(".tgviz-root").screenshot(path=str(ARTIFACTS / f"widget-room-{tab}.png"))
      assert 950 <= got["widget"] <= 1250, got  # a notebook's usual width
      assert got["canvas"] >= 400 and got["bar"] < 1.6 * got["row"], (tab, got)
      assert got["mini"] and max(got["mini"]) <= 0.26, (tab, got)
      assert got["cut"] == 0 and (got["scrolls"] or not got["wider"]), (tab, got)
      if tab != "asm":  # the code and the uops need no sideways scroll: long lines wrap between tokens, hanging further in
        lines = wraps(page, ".tgviz-right > .tgviz-code .tgviz-line" if tab == "code" else ".tgviz-uops td")
        assert lines["wrapped"] >= 1 and not lines["bad"] and not lines["hang"] and not lines["sideways"], (tab, lines)
      if tab == "uops":
        cells = uops_cells(page)
        assert cells["rows"] > 10 and cells["below"] and not cells["clipped"] and cells["scroll"] <= cells["client"], cells
    assert not page.errors


# the notebook's scroll (Lab's windowed notebook scrolls its outer panel), the graph's transform, the wheel's hint
WHEEL = """() => { const s = document.querySelector('.jp-NotebookPanel .jp-WindowedPanel-outer');
  const hint = document.querySelector('.tgviz-wheel-hint');
  return {scrolled: s.scrollTop, view: document.querySelector('.tgviz-stage').style.transform,
          hint: hint && hint.isConnected ? hint.innerText : ''}; }"""


def test_the_wheel_scrolls_the_notebook_and_ctrl_wheel_zooms(lab, page):
  """Over the widget's graph in a notebook, the plain wheel scrolls the notebook on (a graph that zoomed on it took the
  reader's scroll as the pointer passed over it) and a hint says how to zoom; ctrl+wheel zooms the graph; maximised,
  the widget has the window and the plain wheel zooms."""
  open_in_lab(page, lab, "wheel", "%load_ext tgviz", TUTORIAL, "print('\\n'.join(map(str, range(200))))")
  run_all(page, 3)
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  to_steps(page)
  settled(page)
  canvas = page.locator(".tgviz-canvas").bounding_box()
  page.mouse.move(canvas["x"] + canvas["width"] / 2, canvas["y"] + canvas["height"] / 3)
  before = page.evaluate(WHEEL)
  page.mouse.wheel(0, 200)
  page.wait_for_function(f"document.querySelector('.jp-NotebookPanel .jp-WindowedPanel-outer').scrollTop !== {before['scrolled']}",
                         timeout=LIMIT)
  after = page.evaluate(WHEEL)
  assert after["view"] == before["view"] and "ctrl + wheel to zoom" in after["hint"], (before, after)
  page.locator(".tgviz-wheel-hint").wait_for(state="detached", timeout=LIMIT)  # the hint goes
  page.mouse.move(*point_on(page, ".tgviz-canvas"))  # (the notebook scrolled: the canvas moved)
  scrolled = page.evaluate(WHEEL)["scrolled"]
  ctrl_wheel(page, -200)
  page.wait_for_function(f"document.querySelector('.tgviz-stage').style.transform !== {after['view']!r}", timeout=LIMIT)
  assert page.evaluate(WHEEL)["scrolled"] == scrolled  # ctrl+wheel is the graph's: the notebook stays
  page.locator(".tgviz-title").click()
  page.keyboard.press("m")
  page.wait_for_selector(".tgviz-root.maximised", timeout=LIMIT)
  settled(page)
  zoomed = page.evaluate(WHEEL)["view"]
  canvas = page.locator(".tgviz-canvas").bounding_box()
  page.mouse.move(canvas["x"] + canvas["width"] / 2, canvas["y"] + canvas["height"] / 2)
  page.mouse.wheel(0, -200)
  page.wait_for_function(f"document.querySelector('.tgviz-stage').style.transform !== {zoomed!r}", timeout=LIMIT)
  assert not page.errors


GROUPED_CONV = """%%tgviz -o conv
from tinygrad import Tensor
x = Tensor.randn(1, 4, 8, 8)
w = Tensor.randn(4, 2, 2, 2)
out = x.conv2d(w, groups=2, stride=2).realize()"""
# the stage's zoom and pan, and the point of the picture (SVG units) at the canvas's centre
VIEW = """() => { const c = document.querySelector('.tgviz-canvas'), t = document.querySelector('.tgviz-stage').style.transform;
  const [tx, ty, s] = /translate\\(([-\\d.e]+)px, ([-\\d.e]+)px\\) scale\\(([-\\d.e]+)\\)/.exec(t).slice(1).map(Number);
  return {transform: t, scale: s, centre: [(c.clientWidth / 2 - tx) / s, (c.clientHeight / 2 - ty) / s]}; }"""


def _maximise_and_back(page, between=None) -> None:
  """m, then (between: what the user does while maximised) Escape: the widget back in its cell, drawn twice."""
  page.keyboard.press("m")
  page.wait_for_function("document.querySelector('.tgviz-root').classList.contains('maximised')", timeout=LIMIT)
  settled(page)
  if between: between()
  page.keyboard.press("Escape")
  page.wait_for_function("!document.querySelector('.tgviz-root').classList.contains('maximised')", timeout=LIMIT)
  settled(page)


def test_maximise_and_back_keeps_the_graphs_view(lab, browser):
  """The grouped conv's kernel at its step "initial symbolic", on its last match, zoomed to the change twice (every
  changed node on the canvas): maximised (m) and back (Escape), the graph shows in its cell what it showed before,
  the same zoom and pan, every changed node still on the canvas where it was. Panned while maximised: back in the cell
  the point the user looked at (the maximised canvas's centre) is at the canvas's centre, labels readable."""
  with new_page(browser, 1400, 1000) as page:
    open_in_lab(page, lab, "maxview", "%load_ext tgviz", GROUPED_CONV)
    run_all(page, 2)
    # (attached: the widget opens on its program map, over the steps' graph, which to_steps shows)
    page.wait_for_selector(".tgviz-stage svg g.node", state="attached", timeout=LIMIT)
    page.wait_for_function("!document.querySelector('.tgviz-root').classList.contains('tgviz-offline')", timeout=LIMIT)
    to_steps(page)
    row = page.locator(".tgviz-group", has_text="r_2_2_4_4_2_2_2").locator(".tgviz-step", has_text="initial symbolic").first
    row.scroll_into_view_if_needed()
    key = row.get_attribute("data-key")
    row.click()
    page.wait_for_function(f"document.querySelector('.tgviz-stage').dataset.step === '{key}'", timeout=LIMIT)
    page.keyboard.press("End")
    page.wait_for_function("document.querySelector('.tgviz-stage').dataset.match !== ''", timeout=LIMIT)
    page.wait_for_function("!document.querySelector('.tgviz-canvas').classList.contains('busy')", timeout=LIMIT)
    page.keyboard.press("z")
    page.keyboard.press("z")
    settled(page)
    check_zoomed_to_change(page, again=True)
    before, (canvas, nodes) = page.evaluate(VIEW), marked_boxes(page)
    page.screenshot(path=str(ARTIFACTS / "widget-maxview-before.png"))
    _maximise_and_back(page)
    back, (canvas2, nodes2) = page.evaluate(VIEW), marked_boxes(page)
    page.screenshot(path=str(ARTIFACTS / "widget-maxview-back.png"))
    assert back["transform"] == before["transform"], (before, back)
    assert canvas2 == canvas and nodes2 == nodes and all(inside(n, canvas2) for n in nodes2), (canvas, nodes, canvas2, nodes2)
    # panned while maximised: what was at the centre stays there
    looked = {}

    def pan() -> None:
      c = page.locator(".tgviz-canvas").bounding_box()
      x, y = c["x"] + c["width"] / 2, c["y"] + c["height"] / 2
      page.mouse.move(x, y)
      page.mouse.down()
      page.mouse.move(x - 150, y - 90, steps=5)
      page.mouse.up()
      settled(page)
      looked.update(page.evaluate(VIEW))
    _maximise_and_back(page, pan)
    after = page.evaluate(VIEW)
    page.screenshot(path=str(ARTIFACTS / "widget-maxview-panned-back.png"))
    assert abs(after["centre"][0] - looked["centre"][0]) < 1 and abs(after["centre"][1] - looked["centre"][1]) < 1, (looked, after)
    assert label_px(page) >= 10.99 or after["scale"] == looked["scale"], (after, looked)
    assert not page.errors


def selection_update(data: bytes) -> bool:
  """Whether a message from the page to the kernel is ipywidgets' update of the widget's selected step."""
  return b'"comm_msg"' in data and b'"selected"' in data and b'"update"' in data


def tutorial_through(page, lab, name: str, kernel_socket, opened: Callable[[], None] | None = None) -> None:
  """The tutorial's cell run in a notebook whose messages with its kernel pass through kernel_socket (a Playwright
  WebSocketRoute handler), its widget answered by the kernel and showing its tree (opened: called before the cells
  run)."""
  page.route_web_socket(re.compile(r".*/api/kernels/.*/channels.*"), kernel_socket)
  open_in_lab(page, lab, name, "%load_ext tgviz", TUTORIAL)
  if opened is not None: opened()
  run_all(page, 2)
  page.wait_for_selector(".tgviz-stage svg g.node", state="attached", timeout=LIMIT)
  page.wait_for_function("!document.querySelector('.tgviz-root').classList.contains('tgviz-offline')", timeout=LIMIT)
  to_steps(page)


def test_a_step_chosen_while_the_kernel_heard_none_of_it_is_still_drawn(lab, browser):
  """A loaded CI run: a step clicked in the tree never drew (its row marked, the canvas not dimmed, for 5 minutes).
  ipywidgets sends a model's change once the kernel's idle status for the change before it has come; one lost (here:
  the page's first change of the step selected, dropped on its way to the kernel) and no later change went. The page
  asks again with its selection after ASK_AGAIN_MS, which the kernel takes: the step is drawn."""
  dropped: list[bytes] = []
  def kernel_socket(ws) -> None:
    server = ws.connect_to_server()
    def to_kernel(message) -> None:
      data = message if isinstance(message, bytes) else message.encode()
      if not dropped and selection_update(data): dropped.append(data)
      else: server.send(message)
    ws.on_message(to_kernel)
  with new_page(browser, 1600, 1000) as page:
    tutorial_through(page, lab, "lostsync", kernel_socket)
    rows = page.locator(".tgviz-group.kind-kernel[open] .tgviz-step:not(.empty)")
    for row in (rows.last, rows.first):  # the first change lost; the second held back behind it
      row.scroll_into_view_if_needed()
      key = row.get_attribute("data-key")
      row.click()
    page.wait_for_function(f"document.querySelector('.tgviz-stage').dataset.step === '{key}'", timeout=LIMIT)
    assert len(dropped) == 1  # (the premise: the kernel never heard of the first step chosen)
    assert not page.errors


def test_maximise_and_back_keep_the_view_under_a_pointer_resting_on_the_code(lab, browser):
  """The pointer resting on a code line with UOps behind it (the line hovered, its nodes marked): maximised (m) the graph
  keeps its view, the same point of it at the canvas's centre at the same zoom, though the layout moving puts another
  line under the still pointer (it re-centred on the hovered line's UOps); back (Escape), the view it had."""
  with new_page(browser, 1600, 1000) as page:
    open_in_lab(page, lab, "maxhover", "%load_ext tgviz", TUTORIAL)
    run_all(page, 2)
    page.wait_for_selector(".tgviz-stage svg g.node", state="attached", timeout=LIMIT)
    page.wait_for_function("!document.querySelector('.tgviz-root').classList.contains('tgviz-offline')", timeout=LIMIT)
    to_steps(page)
    row = page.locator(".tgviz-group.kind-kernel[open] .tgviz-step:not(.empty)").last  # a step that draws the code's UOps
    row.scroll_into_view_if_needed()
    key = row.get_attribute("data-key")
    row.click()
    page.wait_for_function(f"document.querySelector('.tgviz-stage').dataset.step === '{key}'", timeout=LIMIT)
    page.wait_for_function("!document.querySelector('.tgviz-canvas').classList.contains('busy')", timeout=LIMIT)
    page.locator(".tgviz-title").click()  # the widget focused, for its keys
    line = page.locator(".tgviz-right > .tgviz-code .tgviz-line", has_text="=").last
    line.scroll_into_view_if_needed()
    box = line.bounding_box()
    x, y = box["x"] + box["width"] - 30, box["y"] + box["height"] / 2  # (at the column's right: in it maximised too)
    page.mouse.move(x, y)
    settled(page)
    assert page.evaluate("document.querySelectorAll('.tgviz-stage g.side g.node.hl-line').length") > 0  # its nodes marked
    before = page.evaluate(VIEW)

    def still() -> None:  # the pointer where it was (the layout moved under it): what is under it now is hovered
      page.mouse.move(x, y)
      settled(page)
      assert page.evaluate("([x, y]) => !!document.elementFromPoint(x, y)?.closest('.tgviz-right')", [x, y])
      maxed = page.evaluate(VIEW)
      page.screenshot(path=str(ARTIFACTS / "widget-maximised-hovered.png"))
      assert maxed["scale"] == before["scale"], (before, maxed)
      assert all(abs(a - b) < 1 for a, b in zip(maxed["centre"], before["centre"], strict=True)), (before, maxed)
    _maximise_and_back(page, still)
    page.mouse.move(x, y)
    settled(page)
    assert page.evaluate(VIEW)["transform"] == before["transform"], (before, page.evaluate(VIEW))
    assert not page.errors


def test_a_step_chosen_while_the_kernels_connection_drops_is_still_drawn(lab, browser):
  """A loaded machine drops the kernel's connection now and then (JupyterLab cancels requests under way: "Canceled
  future for create_subshell_request"). Back, JupyterLab's widget manager reloads every widget's state from the kernel
  (ipywidgets' request_states), a state that predates a step the user chose meanwhile, whose change was lost with the
  connection: the widget went back to the step drawn before and left the user's choice undone (on a busy page, its
  canvas dimmed under "laying out…" for good). The user's last choice stands: the step clicked is drawn, also one the
  page drew at once from its cache, which the kernel then hears of; and a change lost, which holds every later change
  of the model back in ipywidgets, does not hold the next choice back."""
  socket = {"drop": False, "dropped": 0, "sockets": 0, "reloads": 0, "infos": 0}
  def kernel_socket(ws) -> None:
    socket["sockets"] += 1
    server = ws.connect_to_server()
    def to_kernel(message) -> None:
      data = message if isinstance(message, bytes) else message.encode()
      socket["reloads"] += b"request_states" in data
      if socket["drop"] and selection_update(data):
        socket["dropped"] += 1  # lost with the connection (and from then on, as ipywidgets holds the next ones back)
      else: server.send(message)
    def to_page(message) -> None:
      socket["infos"] += b"comm_info_reply" in (message if isinstance(message, bytes) else message.encode())
      ws.send(message)
    ws.on_message(to_kernel)
    server.on_message(to_page)
  def until(done) -> None:  # (the route hears the page's messages as the page runs)
    deadline = time.time() + LIMIT / 1000
    while not done() and time.time() < deadline: page.wait_for_timeout(50)
    assert done()
  def choose_and_drop(row) -> str:
    """Click a step's row, its change of the model lost (and every later one); then the connection drops and comes back.
    Returns the step's key."""
    row.scroll_into_view_if_needed()
    key = row.get_attribute("data-key")
    sockets, reloads = socket["sockets"], socket["reloads"]
    socket["drop"] = True
    row.click()
    until(lambda: socket["dropped"] > 0)
    page.evaluate("window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.reconnect()")
    until(lambda: socket["reloads"] > reloads)
    assert socket["sockets"] == sockets + 1  # (the premise: a new connection, the state reloaded)
    return key
  def shown_and_known(key: str) -> None:
    """The page shows the step, its row selected, and the kernel holds it too: a node clicked there gets the kernel's
    answer (which the page takes only where the step the kernel answers for is the page's)."""
    page.wait_for_function(f"document.querySelector('.tgviz-stage').dataset.step === '{key}'", timeout=LIMIT)
    assert page.locator(".tgviz-step.selected").get_attribute("data-key") == key
    page.keyboard.press("f")  # (the whole graph: its first node on the canvas)
    node = page.locator(".tgviz-stage g.side g.node[data-node]").first
    picked = node.get_attribute("data-node")
    node.click()
    page.wait_for_function("k => { const p = document.querySelector('.tgviz-node-panel');"
                           " return p.dataset.state === 'full' && p.dataset.key === k; }", arg=picked, timeout=LIMIT)
  with new_page(browser, 1600, 1000) as page:
    # (the widgets' state JupyterLab loads as the notebook's kernel connects is loaded before the cells run: it loads
    # it again on a new connection only where no load is under way, and a load whose answer was due on the dropped
    # connection waits for good. The kernel has no widgets yet, so the page asks for its comms, comm_info_request; on
    # a busy machine that answer waited for the cells to end, and came after the test's reconnect)
    tutorial_through(page, lab, "reconnect", kernel_socket, opened=lambda: until(lambda: socket["infos"] > 0))
    drawn = page.locator(".tgviz-stage").get_attribute("data-step")
    key = choose_and_drop(page.locator(".tgviz-group.kind-kernel[open] .tgviz-step:not(.empty)").last)
    assert key != drawn
    shown_and_known(key)
    # the next choice, none of the model's changes reaching the kernel any more: back to the step drawn first, drawn at
    # once from the page's cache, then the connection drops again: the page stays on it, and the kernel holds it too
    assert choose_and_drop(page.locator(f".tgviz-step[data-key='{drawn}']")) == drawn
    shown_and_known(drawn)
    assert not page.errors
