"""Linked panes in the browser, in the HTML report and in JupyterLab's widget: a code line marks its UOps in the graph,
a node marks its code lines, the kernel header names the Tensor ops and the user's lines, the node panel's history and
the rules tab jump where they say."""
import pytest
from harness import ARTIFACTS, LIMIT, TUTORIAL, label_px, new_page, notebook, run_all

from tgviz import bridge as tg
from tgviz.views import protocol as P


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
                           arg=[key, m], timeout=LIMIT)
  return wait


# the marked nodes against the canvas: how many lie whole on it; the nodes cut at its left or right edge; whether the
# whole graph is narrower than the canvas (then a view can cut none there)
LINE_NODES_PLACED = """() => { const c = document.querySelector('.tgviz-canvas').getBoundingClientRect();
  const all = [...document.querySelectorAll('.tgviz-stage g.side g.node')].map((n) => n.getBoundingClientRect());
  const rs = [...document.querySelectorAll('.tgviz-stage g.node.hl-line')].map((n) => n.getBoundingClientRect());
  const whole = (r) => r.left >= c.left && r.right <= c.right && r.top >= c.top && r.bottom <= c.bottom;
  const cut = all.filter((r) => (r.left < c.left && r.right > c.left) || (r.left < c.right && r.right > c.right));
  return {marked: rs.length, whole: rs.filter(whole).length, cut: cut.length,
          narrower: Math.max(...all.map((r) => r.right)) - Math.min(...all.map((r) => r.left)) <= c.width}; }"""


def check_linking(page, trace, wait_picture, shot: str, report: bool) -> None:
  """The checks both frontends pass, on the tutorial's conv kernel (whose View Base AST is shown); report: the HTML
  report's node panel, which has the label lines instead of the full arg."""
  conv = _conv(trace)
  page.locator(f".tgviz-step[data-key='{P.step_key(conv.group.steps[0])}']").click()
  wait_picture(P.step_key(conv.group.steps[0]))
  assert "conv2d" in page.locator(".tgviz-origins").inner_text()
  # hover a code line whose UOps the View Base AST does not draw: the status line says where they are
  n = _store_line(conv)
  line = page.locator(f".tgviz-right > .tgviz-code [data-line='{n}']")
  assert line.inner_text().strip() == conv.source.splitlines()[n - 1].strip()
  status = page.locator(".tgviz-status")
  before = status.inner_text()
  line.hover()
  assert page.locator(".tgviz-stage g.node.hl-line").count() == 0
  assert "click the line to open the codegen graph" in status.inner_text()
  page.locator(".tgviz-title").hover()
  assert status.inner_text() == before
  # a click opens the graph the renderer consumed, keeps the line's UOps marked there and zooms to them, readable
  line.click()
  wait_picture(P.step_key(conv.codegen_step))
  keys = set(page.eval_on_selector_all(".tgviz-stage g.node.hl-line", "ns => ns.map(n => n.dataset.node)"))
  expected = {tg.node_key(u) for u in conv.lines[n - 1]}
  assert keys and keys <= expected and tg.node_key(conv.lines[n - 1][0]) in keys, (keys, expected)
  # all on screen, and no other node cut at the canvas's side where the graph fits across (centred on the line's
  # nodes, the conv's PARAM was cut at the left while the right edge had room)
  placed = page.evaluate(LINE_NODES_PLACED)
  assert placed["whole"] == placed["marked"] and (placed["cut"] == 0 or not placed["narrower"]), placed
  assert label_px(page) >= 11
  # another line clicked there: the status line names it now (it named the first one still), the way back kept
  assert f"line {n}'s UOps marked here" in status.inner_text() and "back to" in status.inner_text(), status.inner_text()
  m = next(i for i, ln in enumerate(conv.lines, 1) if ln and i != n)
  page.locator(f".tgviz-right > .tgviz-code [data-line='{m}']").click()
  page.wait_for_function("t => document.querySelector('.tgviz-status').textContent.includes(t)", arg=f"line {m}'s UOps marked here", timeout=LIMIT)
  assert "back to" in status.inner_text() and f"line {n}'s" not in status.inner_text(), status.inner_text()
  line.click()  # the first line again
  page.wait_for_function("t => document.querySelector('.tgviz-status').textContent.includes(t)", arg=f"line {n}'s UOps marked here", timeout=LIMIT)
  line.click()  # unpinned
  page.locator(".tgviz-title").hover()
  assert page.locator(".tgviz-stage g.node.hl-line").count() == 0
  line.hover()
  assert page.locator(".tgviz-stage g.node.hl-line").count() == len(keys)
  assert "click the line" not in status.inner_text()  # here they are drawn
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  page.screenshot(path=str(ARTIFACTS / shot))
  # click a node: its code lines are marked
  load = next(u for u in conv.lines[1] if u.op.name == "LOAD")
  key = tg.node_key(load)
  page.keyboard.press("f")
  page.locator(f".tgviz-stage g.node[data-node='{key}']").first.click()
  page.wait_for_selector(".tgviz-node-panel:not([hidden])", timeout=LIMIT)  # at once, from what the page holds (harness.node_panel_ms holds that)
  page.wait_for_selector(".tgviz-node-panel[data-state='full']", timeout=LIMIT)  # then the kernel's (the page's) answer
  marked = page.eval_on_selector_all(".tgviz-right > .tgviz-code .tgviz-line-hl", "ls => ls.map(l => Number(l.dataset.line))")
  assert marked == conv.line_numbers(load), (marked, conv.line_numbers(load))
  # the node panel: the report has the label lines drawn (after the op), the widget the dtype and the full arg
  head, rows = page.locator(".tgviz-node-head").text_content(), page.locator(".tgviz-node-panel > div").all_inner_texts()
  if report:
    label = tg.to_graph(conv.codegen_step.before()).nodes[key].label
    assert head.startswith(f"LOAD {key}") and f"label {' · '.join(label[1:])}" in rows and not any(r.startswith("arg") for r in rows)
  else:
    details = tg.node_details(load)
    assert head.startswith(f"LOAD {details['dtype']} · {key}") and f"arg {details['arg']}" in rows and not any(r.startswith("label") for r in rows)
  # the node's history: the Python side's events, each a link to where it happened, the node it came from a link too
  panel = page.locator(".tgviz-history")
  panel.wait_for(timeout=LIMIT)
  history = P.history(trace, load, conv.group)
  shown = page.eval_on_selector_all(".tgviz-history .tgviz-event", "es => es.map(e => [e.classList[1], e.querySelector('.tgviz-other')?.textContent "
                                    "?? null, e.querySelector('.tgviz-link:not(.tgviz-other)').textContent])")
  assert shown == [[e["kind"], e["other"] or None, e["title"]] for e in history], (shown, history)
  # gone after View Program, the same UOp back in precompile kernels: said so (pass 10 read "made by" there as its origin)
  texts = page.locator(".tgviz-history .tgviz-event").all_inner_texts()
  assert [t.startswith("back, the same UOp") for t in texts] == [e["again"] for e in history] and any(e["again"] for e in history), texts
  first = history[0]
  page.locator(".tgviz-history .tgviz-event .tgviz-link:not(.tgviz-other)").first.click()
  wait_picture(first["step"], first["match"])
  # the node it came from, elsewhere: that step and match, the node picked there
  i, made = next((i, e) for i, e in enumerate(history) if e["other_key"] and (e["step"], e["match"]) != (first["step"], first["match"]))
  page.locator(".tgviz-history .tgviz-event").nth(i).locator(".tgviz-other").click()
  wait_picture(made["step"], made["match"])
  picked = page.wait_for_selector(f".tgviz-stage g.node.hl[data-op='{made['other']}']", timeout=LIMIT).get_attribute("data-node")
  if report: assert picked == made["other_key"]  # (the widget's are the notebook kernel's: buffers numbered otherwise)
  page.wait_for_function("k => document.querySelector('.tgviz-node-head')?.textContent.includes(k)", arg=picked, timeout=LIMIT)
  # where the node came from: the chain of rewrites back to the kernel's AST, the user's op and line; each run a link
  page.locator(f".tgviz-step[data-key='{P.step_key(conv.codegen_step)}']").click()  # back on the codegen step: the node again
  wait_picture(P.step_key(conv.codegen_step))
  page.locator(f".tgviz-stage g.node[data-node='{key}']").first.click()
  page.wait_for_function("k => document.querySelector('.tgviz-node-panel[data-state=full]')?.dataset.key === k", arg=key, timeout=LIMIT)
  chain = P.node_message(trace, P.step_key(conv.codegen_step), None, key)["lineage"]
  shown = page.eval_on_selector_all(".tgviz-lineage .tgviz-came", "es => es.map(e => [e.classList[1], e.querySelector('.tgviz-at').textContent,"
                                    " e.querySelector('.tgviz-other')?.textContent ?? null, e.title])")
  # each a line: its step's name (a link), the node it came from; the whole story (the match's rule) its tooltip
  assert [s[0::2] for s in shown] == [[r["kind"], r["other"] or None] for r in chain], (shown, chain)
  assert all(at.startswith(r["name"]) and r["title"] in title for (_, at, _, title), r in zip(shown, chain, strict=True)), (shown, chain)
  assert chain[-1]["kind"] == "input" and chain[-1]["step"] == P.step_key(conv.group.steps[0]) and len(chain) > 3
  origin = page.locator(".tgviz-node-panel .tgviz-made-by").inner_text()
  # (the node's own op: the capture noted which of the kernel's ops made each node of its AST), at the panel's top
  rewrites, line = sum(r["count"] for r in chain if r["kind"] != "input"), "tutorial_conv2d.py:6" if report else "Cell In[2], line 4"
  assert origin == f"made by conv2d at {line}; {rewrites} rewrites since the kernel's AST", origin
  page.locator(".tgviz-lineage").scroll_into_view_if_needed()
  page.screenshot(path=str(ARTIFACTS / shot.replace(".png", "-lineage.png")))
  mid = chain[len(chain) // 2]
  if page.locator(".tgviz-lineage .tgviz-unfold").count(): page.locator(".tgviz-lineage .tgviz-unfold").click()  # (a long chain's middle, folded)
  page.locator(".tgviz-lineage .tgviz-came").nth(len(chain) // 2).locator(".tgviz-link:not(.tgviz-other)").click()
  wait_picture(mid["step"], mid["match"])
  # the rules tab: the most frequent pattern first; a click goes to its first match
  page.locator(".tgviz-rules-toggle").click()
  page.wait_for_selector(".tgviz-rules tr.tgviz-rule", timeout=LIMIT)
  top = trace.rules()[0]
  row = page.locator(".tgviz-rules tr.tgviz-rule").first
  assert row.locator("td").first.inner_text() == str(top.count)
  row.click()
  wait_picture(P.step_key(top.first.step), top.first.index)


@pytest.mark.parametrize("page", ["offline page"], indirect=True)
def test_report_links_code_graph_and_source(tutorial_trace, tmp_path, page):
  tutorial_trace.to_html(tmp_path / "index.html")
  page.goto((tmp_path / "index.html").as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  check_linking(page, tutorial_trace, waiter(page), "report-linking.png", report=True)
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
  page.wait_for_selector(".tgviz-stage svg g.node", state="attached", timeout=LIMIT)
  check_linking(page, trace, waiter(page), "widget-linking.png", report=False)
  page.locator(".tgviz-rules-toggle").click()  # back to the tree
  page.locator(f".tgviz-step[data-key='{P.step_key(_conv(trace).group.steps[0])}']").click()
  origin = page.locator(".tgviz-origin").first
  assert "conv2d" in origin.inner_text() and "Cell In[2], line 4" in origin.inner_text() and "x.conv2d(weight)" in origin.inner_text()
  origin.locator("summary").click()  # the cell's lines around the call
  assert "→   4  result = x.conv2d(weight)" in origin.locator("pre").inner_text()
  assert not page.errors


@pytest.fixture(scope="module")
def train_report(tmp_path_factory):
  """A small MLP's training step (one schedule of kernels, more calls of some, and copies), and its report."""
  import workloads

  import tgviz
  with tgviz.capture() as trace: workloads.mlp_train((64, 32, 10), 8)
  return trace, trace.to_html(tmp_path_factory.mktemp("train") / "index.html", workers=2)


@pytest.mark.parametrize("page", ["offline page"], indirect=True)
def test_a_schedules_counts_reconcile_and_its_calls_name_their_kernels(train_report, page):
  """A schedule's details say what its calls are (adding up to the count in its name) and how the trace's kernels
  split; every CALL node of its kernel graph says what it becomes (a copy as the program names it), a kernel's CALL
  the kernel, and its node panel goes there."""
  trace, report = train_report
  sched = next(g for g in trace.groups if g.name.startswith("Schedule"))
  graph = next(s for s in sched.steps if s.name == "View Kernel Graph")
  info = P.schedule_calls(trace, sched)
  page.goto(report.as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  page.locator(".tgviz-group.kind-schedule summary", has_text=sched.name).first.click()
  page.locator(f".tgviz-step[data-key='{P.step_key(graph)}']").click()
  waiter(page)(P.step_key(graph))
  calls = page.locator(".tgviz-calls").inner_text()
  n = int(sched.name.split()[1])
  assert calls.startswith(f"{n} calls: ") and sum(int(p.split(" ", 1)[0]) for p in calls.split(": ", 1)[1].split(", ") if p[:1].isdigit()) == n, calls
  assert f"{info['compiled']} kernels compiled after this schedule" in calls and "copies" in calls and "more calls of" in calls, calls
  # calls of fewer kernels (one called again and again) say how many kernels their links are
  again = next(p for p in info["parts"] if p["kind"] == "again")
  assert len(again["kernels"]) < again["count"] and \
    f"{again['count']} {again['text']} ({len(again['kernels'])} kernel{'s' if len(again['kernels']) > 1 else ''}: " in calls, calls
  assert page.locator(".tgviz-calls-trace").inner_text() == f"the trace's {len(trace.kernels)} kernels: {info['compiled']} compiled after " \
    f"this schedule, {len(trace.kernels) - info['compiled']} after other schedules"
  # a CALL of a kernel: named after it, as the tree names it; clicked, its panel links to that kernel's steps
  names = {k.display_name: k for k in trace.kernels}
  drawn = page.eval_on_selector_all(".tgviz-stage g.node[data-op='CALL']",
                                    "ns => ns.map(n => [n.dataset.node, n.querySelector('title').textContent])")
  becomes = {key: [ln for ln in title.split("\n") if ln.startswith("→ ")] for key, title in drawn}
  assert drawn and all(len(lines) == 1 for lines in becomes.values()), drawn  # every CALL says what it becomes
  copies = {f"→ {c.name}" for c in trace.program().calls_of(sched.index) if c.kind == "copy"}
  assert copies and {ln[0] for ln in becomes.values() if ln[0].startswith("→ copy ")} == copies, drawn
  assert not any("CallInfo" in title for _, title in drawn), drawn
  named = [(key, ln[0][2:].split(" · ")[0]) for key, ln in becomes.items() if not ln[0].startswith("→ copy ")]
  assert named and all(name in names for _, name in named), drawn
  key, name = named[len(named) // 2]
  page.keyboard.press("f")  # the whole picture: that node on screen
  page.locator(f".tgviz-stage g.node[data-node='{key}']").first.click()
  link = page.locator(".tgviz-node-panel .tgviz-becomes .tgviz-link")
  assert link.inner_text() == name
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  page.screenshot(path=str(ARTIFACTS / "report-schedule-calls.png"))
  link.click()
  waiter(page)(P.step_key(names[name].group.steps[0]))
  assert page.locator(".tgviz-title").inner_text().startswith(f"{name} / ")
  assert not page.errors
