"""The node panel in the HTML report, as a user reads it, of a node tinygrad rebuilt (a source changed) that a later
match's replacement holds: its history and where it came from say the same thing in the same words and numbers,
rebuilt by the match that made this node, a run of rebuilds by its first match and its last; the line above them says
the matches that returned the node (it said "made by match 8" beside "rebuilt by matches 6–8")."""
import re

import pytest
from harness import ARTIFACTS, LIMIT, new_page, to_steps

from tgviz import bridge as tg
from tgviz.views import protocol as P


@pytest.fixture
def page(browser):
  with new_page(browser, 1600, 1000, offline=True) as p: yield p


def rebuilt_node(trace):
  """A step and a node in its output that tinygrad rebuilt at one match, whose lineage's newest run is of 2 or more
  rebuilds, and that a later match's replacement is."""
  for s in (s for s in trace.steps if 0 < len(s.matches) <= 40):
    for u in tg.toposort(s.after()):
      links = trace.lineage(u, s.group, seen=(s, len(s.matches))).runs()
      if not links or links[0][0].kind != "rebuilt" or links[0][0].step is not s or len(links[0]) < 2: continue
      if s.node_matches({tg.node_key(u)}).get(tg.node_key(u), [[]])[0]: return s, u
  raise AssertionError("no such node")


def test_a_rebuilt_nodes_panel_says_one_story(tutorial_trace, tmp_path, page):
  step, uop = rebuilt_node(tutorial_trace)
  key, node = P.step_key(step), tg.node_key(uop)
  page.goto(tutorial_trace.to_html(tmp_path / "index.html").as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  to_steps(page)
  row = page.locator(f".tgviz-step[data-key='{key}']")
  for group in page.locator(".tgviz-group", has=row).all():  # its groups opened, outermost first
    if group.get_attribute("open") is None: group.locator(":scope > summary").click()
  row.click()
  page.wait_for_function("k => document.querySelector('.tgviz-stage').dataset.step === k", arg=key, timeout=LIMIT)
  page.locator(f".tgviz-stage g.side g.node[data-node='{node}']").first.click()
  page.wait_for_function("k => document.querySelector('.tgviz-node-panel[data-state=full]')?.dataset.key === k", arg=node, timeout=LIMIT)
  panel = page.locator(".tgviz-node-panel")
  newest = page.locator(".tgviz-lineage .tgviz-came").first.inner_text()
  events = [e for e in page.locator(".tgviz-history .tgviz-event").all_inner_texts() if step.title(None).split(" · ")[0] in e]
  page.locator(".tgviz-lineage").scroll_into_view_if_needed()
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  page.screenshot(path=str(ARTIFACTS / "nodepanel-rebuilt.png"))
  run = re.match(r"\w+ rebuilt \(a source changed\) by (\d+) matches, first by match (\d+), last by match (\d+), of ", newest)
  assert run, newest
  last = run.group(3)
  made = [e for e in events if re.match(r"(made|rebuilt \(a source changed\)) by match \d+", e)]
  assert made and made[0].startswith(f"rebuilt (a source changed) by match {last} "), (made, newest)
  top = panel.locator(":scope > div:not(.tgviz-lineage):not(.tgviz-history)").all_inner_texts()
  returned = [m + 1 for m in step.node_matches({node})[node][0]]
  assert f"returned by match {', '.join(map(str, returned))}" in top, top  # the matches whose replacement is the node
