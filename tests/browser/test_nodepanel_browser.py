"""The node panel in the HTML report, as a user reads it, of a node tinygrad rebuilt (a source changed) that a later
match's replacement holds: its history and where it came from say the same thing in the same words and numbers,
rebuilt by the match that made this node, a run of rebuilds by its first match and its last; the line above them says
the matches that returned the node (it said "made by match 8" beside "rebuilt by matches 6–8"). And a node of the
softmax kernel, where the user asked where it came from: the user's op and line, in one view."""
import re

import pytest
from harness import ARTIFACTS, LIMIT, new_page, to_steps

from tgviz import bridge as tg
from tgviz.views import protocol as P


@pytest.fixture
def page(browser):
  with new_page(browser, 1600, 1000, offline=True) as p: yield p


def open_node(page, key: str, node: str) -> None:
  """The step `key` opened from the steps tree (its groups opened) and its node `node` clicked: the panel filled in."""
  to_steps(page)
  row = page.locator(f".tgviz-step[data-key='{key}']")
  for group in page.locator(".tgviz-group", has=row).all():  # its groups opened, outermost first
    if group.get_attribute("open") is None: group.locator(":scope > summary").click()
  row.click()
  page.wait_for_function("k => document.querySelector('.tgviz-stage').dataset.step === k", arg=key, timeout=LIMIT)
  page.locator(f".tgviz-stage g.side g.node[data-node='{node}']").first.click()
  page.wait_for_function("k => document.querySelector('.tgviz-node-panel[data-state=full]')?.dataset.key === k", arg=node, timeout=LIMIT)


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
  open_node(page, key, node)
  panel = page.locator(".tgviz-node-panel")
  newest = page.locator(".tgviz-lineage .tgviz-came").first.get_attribute("title")  # (its whole story: the tooltip)
  events = [e for e in page.locator(".tgviz-history .tgviz-event").all_inner_texts() if step.title(None).split(" · ")[0] in e]
  page.locator(".tgviz-lineage").scroll_into_view_if_needed()
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  page.screenshot(path=str(ARTIFACTS / "nodepanel-rebuilt.png"))
  run = re.match(r"\w+ rebuilt \(a source changed\) by (\d+) matches, first by match (\d+), last by match (\d+), of ", newest)
  assert run, newest
  last = run.group(3)
  made = [e for e in events if re.match(r"(made|rebuilt \(a source changed\)) by match \d+", e)]
  assert made and made[0].startswith(f"rebuilt (a source changed) by match {last} "), (made, newest)
  # the node it took the place of, by its op with the article that reads: "an ADD", "a SINK" ("by a ADD" read wrong)
  said = re.findall(r"\b(a|an) ([A-Z]+)\b", " ".join(page.locator(".tgviz-history .tgviz-event").all_inner_texts()))
  assert said and all((a == "an") == (op[0] in "AEIOU") for a, op in said), said
  top = panel.locator(":scope > div:not(.tgviz-lineage):not(.tgviz-history)").all_inner_texts()
  returned = [m + 1 for m in step.node_matches({node})[node][0]]
  assert f"returned by match {', '.join(map(str, returned))}" in top, top  # the matches whose replacement is the node


FOLD_ENDS = 3  # a long chain shows this many entries at each end, its middle folded

# the panel's box, and of its "made by" line and each "came from" entry: their boxes, one line's height (an entry's op)
PANEL_BOXES = """() => { const box = (e) => { const r = e.getBoundingClientRect(); return [r.top, r.bottom]; };
  const p = document.querySelector('.tgviz-node-panel');
  return { panel: [p.getBoundingClientRect().top + p.clientTop, p.getBoundingClientRect().top + p.clientTop + p.clientHeight],
           scrolled: p.scrollTop, made: box(p.querySelector('.tgviz-made-by')), history: box(p.querySelector('.tgviz-history > b')),
           came: [...p.querySelectorAll('.tgviz-lineage .tgviz-came')].map((e) => [...box(e), box(e.firstElementChild)]),
           shown: [...p.querySelectorAll('.tgviz-lineage .tgviz-came')].map((e) => e.checkVisibility()) }; }"""


def test_a_softmax_nodes_panel_says_where_it_came_from_in_one_view(attention_report, browser):
  """The new user's click: a CMPLT of the softmax kernel (r_3_4_6 #1), its output AST, at 1400x800. At the panel's
  top, without scrolling, the user's op and line and the rewrites since the kernel's AST; each link of the chain one
  line (its step and match a link, its rule's file:line), its whole story in its tooltip (the chain had 17 entries of
  whole rule reprs, some 2,400 px of text in a 348 px box, the user's op last)."""
  trace, html = attention_report
  kernel = next(k for k in trace.kernels if "softmax" in {o.op for o in k.origins})
  step = next(s for s in kernel.group.steps if s.name == "View Output AST")
  key = P.step_key(step)
  node = next(n for n in (tg.node_key(u) for u in tg.toposort(step.after()) if tg.op_name(u) == "CMPLT"))
  msg = P.node_message(trace, key, None, node)
  assert msg["origins_own"] and [o["op"] for o in msg["origins"]] == ["softmax"] and len(msg["lineage"]) > 10, msg
  with new_page(browser, 1400, 800, offline=True) as p:  # (a laptop: a node panel of 350 px)
    p.goto(html.as_uri())
    p.wait_for_selector(".tgviz-stage svg g.node, .tgviz-progmap[open] svg", timeout=LIMIT)
    open_node(p, key, node)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    p.screenshot(path=str(ARTIFACTS / "nodepanel-softmax.png"))
    p.locator(".tgviz-node-panel").screenshot(path=str(ARTIFACTS / "nodepanel-softmax-panel.png"))
    rewrites = sum(link["count"] for link in msg["lineage"] if link["kind"] != "input")
    made = p.locator(".tgviz-node-panel .tgviz-made-by").inner_text()
    assert made == f"made by softmax at attention.py:6; {rewrites} rewrites since the kernel's AST", made
    got = p.evaluate(PANEL_BOXES)
    top, bottom = got["panel"]
    assert got["scrolled"] == 0 and top <= got["made"][0] and got["made"][1] <= bottom, got  # in view as the panel opens
    # the chain's ends (the newest rewrites, and back to the AST's input) shown, its middle folded: the node's history,
    # below it, starts in view too (passes 11-13: 20 entries, the history below a 350 px panel's fold)
    ends = [True] * FOLD_ENDS
    assert got["shown"] == ends + [False] * (len(msg["lineage"]) - 2 * FOLD_ENDS) + ends, got
    assert got["history"][1] <= bottom, got
    more = p.locator(".tgviz-lineage .tgviz-unfold")
    assert more.inner_text() == f"… {len(msg['lineage']) - 2 * FOLD_ENDS} more", more.inner_text()
    more.click()  # the whole chain, on a click, the panel taller: the history's start still in view under it (pass 15)
    got = p.evaluate(PANEL_BOXES)
    assert all(got["shown"]) and len(got["came"]) == len(msg["lineage"]), got
    assert got["scrolled"] == 0 and got["history"][1] <= got["panel"][1], got
    # the focus stays in the panel (the button it was on is gone; on the page's body, a notebook's widget no longer heard
    # Escape: pass 16)
    assert p.evaluate("() => !!document.activeElement?.closest('.tgviz-node-panel')")
    assert all(b - t < 1.5 * (line[1] - line[0]) for t, b, line in got["came"]), got  # one line each
    shown = p.eval_on_selector_all(".tgviz-lineage .tgviz-came", "es => es.map(e => [e.querySelector('.tgviz-at').textContent, e.title])")
    def at(link):  # the step's name, the match(es) and the rule's file:line, as the entry's link says them
      if link["match"] is None: return link["name"]
      ms = f"matches {link['match'] + 1}–{link['last'] + 1}" if link["count"] > 1 else f"match {link['match'] + 1}"
      return f"{link['name']} {ms}" + (f" · {link['where']}" if link["where"] else "")
    assert [s[0] for s in shown] == [at(link) for link in msg["lineage"]], shown
    assert all(link["title"] in s[1] for s, link in zip(shown, msg["lineage"], strict=True)), shown  # the whole rule in the tooltip
