"""The widget's columns as a user sees them in the HTML report at 1600x1000: with the uops tab open (the tree column at
its narrowest, 180 px), the tree's "hide steps without matches" label wraps inside its column, never cut."""
import re

import pytest
from harness import ARTIFACTS, LIMIT, new_page, settled, to_steps

LABEL = """() => { const l = document.querySelector('.tgviz-hide-label'), col = document.querySelector('.tgviz-left');
  const r = l.getBoundingClientRect(), c = col.getBoundingClientRect();
  return {right: r.right, column: c.right, scroll: l.scrollWidth, client: l.clientWidth, text: l.textContent, width: c.width}; }"""


@pytest.fixture
def page(browser):
  with new_page(browser, width=1600, height=1000) as p: yield p


def open_conv(page) -> None:
  """The tutorial's conv kernel's first step, picked in the tree."""
  to_steps(page)
  group = page.locator(".tgviz-group.kind-kernel", has=page.locator("summary", has_text=re.compile(r"\br_2_2_2_2\b")))
  if group.get_attribute("open") is None: group.locator("summary").click()
  first = group.locator(".tgviz-step").first
  key = first.get_attribute("data-key")
  first.click()
  page.locator(f".tgviz-stage[data-step='{key}'] svg g.node").first.wait_for(timeout=LIMIT)


def test_the_hide_label_wraps_in_a_narrow_tree_column(tutorial_trace, tmp_path, page):
  tutorial_trace.to_html(tmp_path / "index.html")
  page.goto((tmp_path / "index.html").as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  open_conv(page)
  page.locator(".tgviz-tab-uops").click()
  page.locator(".tgviz-uops tr[data-n]").first.wait_for(timeout=LIMIT)
  settled(page)
  got = page.evaluate(LABEL)
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  page.screenshot(path=str(ARTIFACTS / "columns-uops-tree.png"))
  assert got["width"] <= 200 and got["text"].strip() == "hide steps without matches", got  # the tree at its narrowest
  assert got["right"] <= got["column"] and got["scroll"] <= got["client"], got
