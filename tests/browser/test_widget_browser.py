"""The widget in a real JupyterLab in headless Chromium: tree, graph, code, keys, export, screenshot."""
import re

import pytest
from harness import ARTIFACTS, notebook, run_all

TUTORIAL = """%%tgviz
from tinygrad import Tensor
x = Tensor.arange(9).reshape(1, 1, 3, 3).float().realize()
weight = Tensor.ones(1, 1, 2, 2).realize()
result = x.conv2d(weight)
print(result.tolist())"""


@pytest.fixture
def page(browser):
  ctx = browser.new_context(viewport={"width": 1600, "height": 1100})
  p = ctx.new_page()
  yield p
  ctx.close()


def test_widget_in_jupyterlab(lab, page):
  url, token, root = lab
  (root / "tutorial.ipynb").write_text(notebook("%load_ext tgviz", TUTORIAL))
  page.goto(f"{url}/lab/tree/tutorial.ipynb?token={token}")
  run_all(page, 2)
  widget = page.locator(".tgviz-root")
  widget.wait_for(timeout=120_000)
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=60_000)
  # the tree: schedule and kernel groups with their steps
  assert page.locator(".tgviz-group.kind-kernel").count() >= 1
  assert page.locator(".tgviz-step").count() > 50
  assert "r_2_2_2_2" in page.locator(".tgviz-tree").inner_text()
  # opens on the conv kernel's landmark, with its OpenCL code
  assert page.locator(".tgviz-step.selected").inner_text().startswith("View Base AST")
  assert page.locator(".tgviz-stage svg g.node").count() > 5
  page.wait_for_function("document.querySelector('.tgviz-code').innerText.includes('__kernel')", timeout=30_000)
  assert "OpenCL" in page.locator(".tgviz-code-head").inner_text()
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  shot = ARTIFACTS / "widget.png"
  widget.screenshot(path=str(shot))
  print(f"\nwidget screenshot: {shot}")
  # keys: down moves to the next step, right to the next match
  first = page.locator(".tgviz-step.selected").get_attribute("data-key")
  page.locator(".tgviz-title").click()
  page.keyboard.press("ArrowDown")
  page.wait_for_function(f"document.querySelector('.tgviz-step.selected').dataset.key !== '{first}'", timeout=10_000)
  page.wait_for_function("document.querySelector('.tgviz-stage').dataset.step === "
                         "document.querySelector('.tgviz-step.selected').dataset.key", timeout=30_000)
  # a step with matches, then step through one match
  page.locator(".tgviz-step:not(.empty)", has_text="devectorize2").first.click()
  page.wait_for_function("document.querySelector('.tgviz-title').innerText.includes('devectorize2')", timeout=30_000)
  page.keyboard.press("ArrowRight")
  page.wait_for_function("document.querySelector('.tgviz-stage').dataset.match === '0'", timeout=30_000)
  assert re.search(r"match 1 / \d+", page.locator(".tgviz-match-label").inner_text())
  assert page.locator(".tgviz-pattern").inner_text().startswith("pattern")
  assert page.locator(".tgviz-stage svg g[data-side='after'] g.node").count() > 0
  # export writes the SVG and says where
  page.locator(".tgviz-export").click()
  page.wait_for_function("document.querySelector('.tgviz-status').innerText.startsWith('exported SVG to')", timeout=30_000)
  path = page.locator(".tgviz-status").inner_text().removeprefix("exported SVG to ").strip()
  assert path.endswith(".svg") and (root / "tgviz-svg").is_dir()
  assert (root / "tgviz-svg" / path.rsplit("/", 1)[-1]).read_text().startswith("<svg")
