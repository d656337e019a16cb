"""The widget in a real Jupyter Notebook 7 in headless Chromium: opened from the file list (/tree) as a user does, it
renders readable, its keys work while it has focus and never reach the notebook, and a node click opens its panel;
saved and reopened without its kernel, it shows its picture."""
import pytest
from harness import (
  ARTIFACTS,
  LIMIT,
  TUTORIAL,
  answer_kernel_dialogs,
  changed_in_view,
  check_maximise,
  check_saved_notebook,
  check_zoomed_to_change,
  graph_fitted,
  label_px,
  node_panel_ms,
  notebook,
  run_all,
  saved_kept_picture,
  sessions,
  settled,
  to_steps,
)

CELLS = ".jp-NotebookPanel .jp-Notebook .jp-Cell"


@pytest.fixture
def context(browser):
  ctx = browser.new_context(viewport={"width": 1600, "height": 1100})
  yield ctx
  ctx.close()


def open_from_tree(context, url: str, token: str, name: str):
  """Notebook 7's file list, then a double click on the notebook: it opens in a new tab at /notebooks/NAME."""
  tree = context.new_page()
  tree.goto(f"{url}/tree?token={token}")
  row = tree.locator(".jp-DirListing-item", has_text=name)
  row.wait_for(timeout=LIMIT)
  with context.expect_page() as opened: row.dblclick()
  page = opened.value  # a tab the page opened: its dialogs answered as the context's own pages' are
  answer_kernel_dialogs(page)
  page.wait_for_load_state()
  assert page.url.startswith(f"{url}/notebooks/{name}"), page.url
  return page


def run_from_tree(context, url: str, token: str, name: str, cells: int = 2, timeout: float = LIMIT):
  """The notebook opened from the file list, its first cells run, its widget drawn and answering; the page's errors from
  then on in page.errors (Notebook 7 itself raises "reading 'schema'" while it loads its settings)."""
  page = open_from_tree(context, url, token, name)
  run_all(page, cells)
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=timeout)
  page.wait_for_function("!document.querySelector('.tgviz-root').classList.contains('tgviz-offline')", timeout=LIMIT)
  page.errors = []
  page.on("pageerror", lambda e: page.errors.append(str(e)))
  return page


def cell_kinds(page) -> list[str]:
  return page.locator(CELLS).evaluate_all("cs => cs.map(c => c.classList.contains('jp-CodeCell') ? 'code' : 'other')")


def test_widget_in_notebook7(nb7, context):
  url, token, root = nb7
  (root / "tutorial7.ipynb").write_text(notebook("%load_ext tgviz", TUTORIAL))
  page = open_from_tree(context, url, token, "tutorial7.ipynb")
  run_all(page, 2)
  widget = page.locator(".tgviz-root")
  widget.wait_for(timeout=LIMIT)
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  to_steps(page)  # from the program map the widget opens on, to the steps
  assert page.locator(".tgviz-step.selected").inner_text().startswith("View Base AST")
  page.wait_for_function("document.querySelector('.tgviz-right > .tgviz-code').innerText.includes('__kernel')", timeout=LIMIT)
  assert label_px(page) >= 11, label_px(page)  # readable at the default zoom
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  widget.scroll_into_view_if_needed()
  widget.screenshot(path=str(ARTIFACTS / "widget-notebook7.png"))
  # keys, while the widget has focus: down steps, right matches, f / 1 / z zoom
  first = page.locator(".tgviz-step.selected").get_attribute("data-key")
  page.locator(".tgviz-title").click()
  page.keyboard.press("ArrowDown")
  page.wait_for_function(f"document.querySelector('.tgviz-step.selected').dataset.key !== '{first}'", timeout=LIMIT)
  page.keyboard.press("ArrowUp")
  page.wait_for_function(f"document.querySelector('.tgviz-step.selected').dataset.key === '{first}'", timeout=LIMIT)
  page.locator(".tgviz-step:not(.empty)", has_text="devectorize2").first.click()
  page.wait_for_function("document.querySelector('.tgviz-title').innerText.includes('devectorize2')", timeout=LIMIT)
  page.keyboard.press("ArrowRight")
  page.wait_for_function("document.querySelector('.tgviz-stage').dataset.match === '0'", timeout=LIMIT)
  page.keyboard.press("ArrowRight")
  page.wait_for_function("document.querySelector('.tgviz-stage').dataset.match === '1'", timeout=LIMIT)
  page.keyboard.press("ArrowLeft")
  page.wait_for_function("document.querySelector('.tgviz-stage').dataset.match === '0'", timeout=LIMIT)
  assert page.locator(".tgviz-match-label").inner_text().startswith("match 1 / ")
  page.keyboard.press("f")  # fit: the whole graph in view
  assert graph_fitted(page)["whole"], graph_fitted(page)
  page.keyboard.press("1")  # one to one: labels at their own 10 px
  assert 9.5 <= label_px(page) <= 10.5, label_px(page)
  page.keyboard.press("z")  # zoom to the change: all of it whole, readable where it fits so
  check_zoomed_to_change(page)
  assert changed_in_view(page)
  # Notebook 7's command-mode keys do nothing while the widget has focus: no cell added, deleted, moved or retyped
  kinds = cell_kinds(page)
  for key in ("a", "b", "d", "d", "m", "x", "Shift+k", "Shift+m"):
    page.keyboard.press(key)
  page.wait_for_timeout(500)
  assert cell_kinds(page) == kinds and len(kinds) >= 2
  assert page.locator(".tgviz-stage").get_attribute("data-match") == "0"
  # a node click opens the node panel with its op
  node = page.locator(".tgviz-stage g[data-side='after'] g.node[data-op]").first
  op, key = node.get_attribute("data-op"), node.get_attribute("data-node")
  node.click()
  page.wait_for_selector(".tgviz-node-panel:not([hidden])", timeout=LIMIT)
  panel = page.locator(".tgviz-node-panel").inner_text()
  assert panel.startswith(op) and key in panel


def test_maximise_in_notebook7(nb7, browser):
  """Notebook 7 at 1600x1000: m fills the window with the widget (graph canvas at least 1040x850), Escape puts it back;
  a node's panel shows in the click's own handler."""
  url, token, root = nb7
  (root / "room7.ipynb").write_text(notebook("%load_ext tgviz", TUTORIAL))
  ctx = browser.new_context(viewport={"width": 1600, "height": 1000})
  try:
    page = run_from_tree(ctx, url, token, "room7.ipynb")
    page.locator(".tgviz-root").scroll_into_view_if_needed()
    check_maximise(page, "widget-maximised-notebook7.png")
    took = node_panel_ms(page)
    print(f"\nnode panel shown {took['ms']:.1f} ms after the click (Notebook 7)")
    assert took["at_once"] and took["shown"] and took["text"].startswith(took["op"]), took
    assert not page.errors
  finally: ctx.close()


def test_saved_notebook7_shows_a_static_picture(nb7, context):
  url, token, root = nb7
  path = root / "saved7.ipynb"
  path.write_text(notebook("%load_ext tgviz", TUTORIAL))
  page = open_from_tree(context, url, token, "saved7.ipynb")
  check_saved_notebook(page, path, url, token, "widget-saved-notebook7.png")


DIRTY = "window.jupyterapp.shell.currentWidget.context.model.dirty"


def test_notebook7_reopened_while_its_kernel_runs_opens_unmodified(nb7, context):
  """A saved notebook with a widget, its browser tab closed while its kernel keeps running and opened again from the
  file list, opens unmodified once the widget has drawn from the kernel's answer (the widget manager's restore,
  registering the kernel's models, had marked it changed); running the cell again still marks it."""
  url, token, root = nb7
  path = root / "alive7.ipynb"
  path.write_text(notebook("%load_ext tgviz", TUTORIAL))
  page = run_from_tree(context, url, token, "alive7.ipynb")
  page.wait_for_function("!document.querySelector('.tgviz-canvas').classList.contains('busy')", timeout=LIMIT)
  page.keyboard.press("Control+s")
  saved_kept_picture(path)
  page.wait_for_function(f"!{DIRTY}", timeout=LIMIT)
  page.close()  # the kernel keeps running
  assert [s["path"] for s in sessions(url, token)] == ["alive7.ipynb"]
  page = open_from_tree(context, url, token, "alive7.ipynb")
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  page.wait_for_function("!document.querySelector('.tgviz-root').classList.contains('tgviz-offline')"
                         " && !document.querySelector('.tgviz-canvas').classList.contains('busy')", timeout=LIMIT)
  settled(page)
  assert page.evaluate(DIRTY) is False
  page.locator(f"{CELLS} .jp-InputArea-editor").nth(1).click()  # the cell run again: changed
  page.keyboard.press("Shift+Enter")
  page.wait_for_function(DIRTY, timeout=LIMIT)
