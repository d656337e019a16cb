"""The code column's uops and asm tabs in the browser: in the HTML report, in JupyterLab and in Notebook 7, on the
default PoCL device and on the CPU device (clang). The uops tab lists the linearized program (as many rows as
kernel.program_uops), a row marks its node on screen in the codegen graph and its code lines, a node marks its row, a code
line its rows; the asm tab shows the disassembly (CPU) or the one line why there is none (PoCL), and an instruction range
marks its source lines and a code line its instructions."""
import re

import pytest
from harness import ARTIFACTS, LIMIT, TUTORIAL, new_page, notebook, run_all, settled, to_steps

CPU_CELL = TUTORIAL.replace("%%tgviz", "%%tgviz -o cpu --device CPU", 1)
ON_SCREEN = """(n) => { const c = n.closest('.tgviz-root').querySelector('.tgviz-canvas').getBoundingClientRect(), r = n.getBoundingClientRect();
  return r.width > 0 && r.left >= c.left - 1 && r.right <= c.right + 1 && r.top >= c.top - 1 && r.bottom <= c.bottom + 1; }"""


LISTING = """(root) => { const pane = [...root.querySelectorAll('.tgviz-uops, .tgviz-asm')].find((p) => !p.hidden);
  const main = root.querySelector('.tgviz-main').getBoundingClientRect(), right = root.querySelector('.tgviz-right').getBoundingClientRect();
  // where each line's text ends: its last character drawn, not a space (white-space: pre-wrap: the spaces where a line
  // wraps hang past the pane's edge, unseen, as in a text editor)
  const r = document.createRange(), box = pane.getBoundingClientRect(), ends = [...pane.querySelectorAll('tr[data-n] td:last-child')]
    .map((e) => { let end = -Infinity; const walk = document.createTreeWalker(e, NodeFilter.SHOW_TEXT);
      for (let t = walk.nextNode(); t; t = walk.nextNode())
        for (let i = 0; i < t.data.length; i++) if (t.data[i].trim()) {
          r.setStart(t, i); r.setEnd(t, i + 1);
          for (const q of r.getClientRects()) if (q.width > 0) end = Math.max(end, q.right); }
      return end; });
  return {column: right.width, share: right.width / main.width, main: main.width,
          graph: root.querySelector('.tgviz-centre').getBoundingClientRect().width,
          cut: ends.filter((x) => x > box.left + pane.clientWidth).length,
          wrapped: [...pane.querySelectorAll('tr[data-n] td:last-child')].filter((e) => e.offsetHeight > 20).length,
          lines: ends.length, scrolls: pane.scrollWidth > pane.clientWidth + 1}; }"""


def check_listing_width(root, code_width: float) -> dict:
  """The uops or asm tab shown widens the code column to its longest line, the graph keeping 40% of the widget, 400 px
  at least; each line's end on screen, nothing to scroll sideways (a line longer than there is room for wraps: then
  the graph is at its narrowest)."""
  settled(root.page)  # the columns follow the filled pane (a MutationObserver, then a layout)
  got = root.evaluate(LISTING)
  narrowest = max(400, 0.4 * got["main"])
  assert got["lines"] > 0 and got["column"] > code_width + 50 and got["graph"] >= narrowest - 1, (got, code_width)
  assert got["cut"] == 0 and not got["scrolls"], got  # every line's end on screen
  assert got["wrapped"] == 0 or got["graph"] <= narrowest + 1, got  # wrapped only where there was no more room
  return got


def _conv(trace):
  return next(k for k in trace.kernels if k.name == "r_2_2_2_2")


def _numbers(root, selector: str) -> list[int]:
  return root.locator(selector).evaluate_all("es => es.map(e => Number(e.dataset.n ?? e.dataset.line))")


def check_program(page, root, trace, shot: str) -> None:
  """The checks every frontend passes on the tutorial's conv kernel of trace (PoCL or CPU), in the widget root."""
  conv = _conv(trace)
  uops, cpu = conv.program_uops, conv.device == "CPU"
  root.scroll_into_view_if_needed()
  to_steps(root)  # from the program map a trace opens on, to the steps
  root.locator(".tgviz-title").click()  # focused first: a click on a row then moves nothing under the pointer
  # the kernel's View Base AST
  group = root.locator(".tgviz-group.kind-kernel", has=page.locator("summary", has_text=re.compile(r"\br_2_2_2_2\b")))
  if group.get_attribute("open") is None: group.locator("summary").click()
  first = group.locator(".tgviz-step").first
  key = first.get_attribute("data-key")
  first.click()
  root.locator(f".tgviz-stage[data-step='{key}'] svg g.node").first.wait_for(timeout=LIMIT)
  # uops: one row per UOp, numbered as print_uops numbers them, with its op
  code_width = root.locator(".tgviz-right").bounding_box()["width"]
  root.locator(".tgviz-tab-uops").click()
  rows = root.locator(".tgviz-uops tr[data-n]")
  rows.nth(len(uops) - 1).wait_for(timeout=LIMIT)
  check_listing_width(root, code_width)
  assert rows.count() == len(uops)
  assert root.locator(".tgviz-uops .tgviz-uop-n").all_inner_texts() == [str(i) for i in range(len(uops))]
  # its op as print_uops prints it (Ops.STORE); in a pane as narrow as a notebook's column, without the namespace
  narrow = root.locator(".tgviz-uops").evaluate("e => e.clientWidth <= 560")
  assert root.locator(".tgviz-uops .tgviz-uop-op").all_inner_texts() == [u.op.name if narrow else str(u.op) for u in uops]
  assert root.locator(".tgviz-right > .tgviz-code").is_hidden() and root.locator(".tgviz-uops").is_visible()
  # a row: its node marked on screen in the codegen graph (which opens: the View Base AST does not draw it), its code lines
  n_store = next(i for i, u in enumerate(uops) if u.op.name == "STORE")
  row = rows.nth(n_store)
  store_key = row.get_attribute("data-key")
  row.locator(".tgviz-uop-n").click()  # (a row is as wide as its longest arg: its middle lies far to the right)
  marked = ".tgviz-stage g.side g.node.hl-line"
  node = root.locator(f"{marked}[data-node='{store_key}'], {marked}[data-holds~='{store_key}']").first
  node.wait_for(timeout=LIMIT)
  assert root.locator(".tgviz-stage").get_attribute("data-step") != key and node.evaluate(ON_SCREEN)
  assert _numbers(root, ".tgviz-right > .tgviz-code .tgviz-line-hl") == conv.line_numbers(uops[n_store]) != []
  assert _numbers(root, ".tgviz-uops tr.tgviz-row-hl") == [n_store]
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  root.screenshot(path=str(ARTIFACTS / f"{shot}-uops.png"))
  # a node: its row
  root.locator(".tgviz-fit").click()
  load = root.locator(".tgviz-stage g.side g.node[data-op='LOAD']").first
  load_key = load.get_attribute("data-node")
  load.click()
  # (a LOAD picked opens the access tab on its access once the kernel's accesses come: waited for, or on a loaded
  # machine they came after the click on the code tab below, and the column was the access tab's width)
  root.locator(".tgviz-tab-access.active").wait_for(timeout=LIMIT)
  # (and its node panel, docked above the tabs, filled in by the kernel's node message: it came after the access tab on a
  # loaded machine, and the panel shown at once grew when the message came, the tabs and code lines moving down under a
  # click or a pointer placed on them: the CI failure of stop 55, a code line hovered and no row marked)
  root.locator(f".tgviz-node-panel[data-key='{load_key}'][data-state='full']").wait_for(timeout=LIMIT)
  assert _numbers(root, ".tgviz-uops tr.tgviz-row-hl") == [i for i, u in enumerate(uops) if u.op.name == "LOAD"
                                                          and rows.nth(i).get_attribute("data-key") == load_key] != []
  # a code line, hovered and clicked: its rows
  line = next(i for i, ln in enumerate(conv.lines, 1) if ln and ln[0].op.name == "STORE")
  behind = [i for i, u in enumerate(uops) if u in conv.lines[line - 1]]
  root.locator(".tgviz-tab-code").click()
  settled(root.page)
  assert abs(root.locator(".tgviz-right").bounding_box()["width"] - code_width) <= 1  # the code tab: its own width again
  code_line = root.locator(f".tgviz-right > .tgviz-code [data-line='{line}']")
  root.page.mouse.move(0, 0)  # (from off the line: the hover is a pointer coming onto it)
  code_line.hover()
  root.page.wait_for_function("document.querySelectorAll('.tgviz-uops tr.tgviz-row-hover').length > 0", timeout=LIMIT)
  assert _numbers(root, ".tgviz-uops tr.tgviz-row-hover") == behind and n_store in behind
  code_line.click()
  assert _numbers(root, ".tgviz-uops tr.tgviz-row-hl") == behind
  # asm: the disassembly on the CPU device, one line why there is none on PoCL
  root.locator(".tgviz-tab-asm").click()
  if not cpu:
    note = root.locator(".tgviz-asm .tgviz-program-note")
    note.wait_for(timeout=LIMIT)
    assert note.inner_text() == conv.disassembly_note and "no disassembler" in note.inner_text()
    assert root.locator(".tgviz-asm tr").count() == 0
    return
  asm = root.locator(".tgviz-asm tr[data-n]")
  asm.first.wait_for(timeout=LIMIT)
  wide = check_listing_width(root, code_width)
  print(f"\nasm tab: the code column {code_width:.0f} -> {wide['column']:.0f} px (the graph {wide['graph']:.0f} px), "
        f"{wide['lines']} lines, none cut, {wide['wrapped']} wrapped")
  texts = root.locator(".tgviz-asm .tgviz-asm-code").evaluate_all("es => es.map(e => e.title)")  # each row's objdump line
  assert texts == conv.disassembly.splitlines()
  shown = root.locator(".tgviz-asm .tgviz-asm-code").all_inner_texts()
  assert all(t.split("\t")[-1].split()[0] in s for t, s in zip(texts, shown, strict=True) if "\t" in t.strip()) and "push" in shown[6]
  # the code line pinned above: its instructions marked
  assert _numbers(root, ".tgviz-asm tr.tgviz-row-hl") == [i for i, ls in enumerate(conv.disassembly_lines) if line in ls] != []
  # an instruction range (the store's): its source lines marked
  i_store = next(i for i, t in enumerate(texts) if re.search(r"\tvmov\w+\s+%xmm\d+,\(%rdi\)$", t.rstrip()))
  asm.nth(i_store).locator(".tgviz-asm-line").click()
  assert _numbers(root, ".tgviz-right > .tgviz-code .tgviz-line-hl") == conv.disassembly_lines[i_store] == [line]
  ranged = _numbers(root, ".tgviz-asm tr.tgviz-range")
  assert i_store in ranged and all(conv.disassembly_lines[i] == [line] for i in ranged)
  root.screenshot(path=str(ARTIFACTS / f"{shot}-asm.png"))


@pytest.fixture
def page(browser):
  with new_page(browser, width=1600, height=1000) as p: yield p


@pytest.mark.parametrize("device", ["CL", "CPU"])
def test_report_program_tabs(tutorial_trace, cpu_trace, tmp_path, page, device):
  trace = tutorial_trace if device == "CL" else cpu_trace
  trace.to_html(tmp_path / "index.html")
  page.goto((tmp_path / "index.html").as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  root = page.locator(".tgviz-root")
  check_program(page, root, trace, f"report-program-{device.lower()}")
  if device == "CPU":  # the asm tab's width is the user's to drag too; the code tab keeps its own
    width = lambda: root.locator(".tgviz-right").bounding_box()["width"]  # noqa: E731
    wide, handle = width(), root.locator(".tgviz-handle-code").bounding_box()
    page.mouse.move(handle["x"] + 2, handle["y"] + 200)
    page.mouse.down()
    page.mouse.move(handle["x"] + 2 - 150, handle["y"] + 200, steps=5)
    page.mouse.up()
    assert abs(width() - (wide + 150)) <= 2
    root.locator(".tgviz-tab-code").click()
    settled(page)
    assert width() < wide - 200
    root.locator(".tgviz-tab-asm").click()
    settled(page)
    assert abs(width() - (wide + 150)) <= 2
  assert not page.errors


def check_notebook(page, server, lab: bool, traces) -> None:
  """The notebook's two widgets (PoCL, then the CPU device), opened in JupyterLab or Notebook 7, pass check_program."""
  url, token, root = server
  (root / "program.ipynb").write_text(notebook("%load_ext tgviz", TUTORIAL, CPU_CELL))
  page.goto(f"{url}/lab/workspaces/program/tree/program.ipynb?token={token}&reset" if lab else f"{url}/notebooks/program.ipynb?token={token}")
  run_all(page, 3)
  roots = page.locator(".tgviz-root")
  roots.nth(1).locator(".tgviz-stage svg g.node").first.wait_for(state="attached", timeout=LIMIT)
  page.errors.clear()  # from here on (Notebook 7 itself raises "reading 'schema'" while it loads its settings)
  for i, (trace, name) in enumerate(zip(traces, ("cl", "cpu"), strict=True)):
    check_program(page, roots.nth(i), trace, f"{'lab' if lab else 'nb7'}-program-{name}")
  assert not page.errors


def test_jupyterlab_program_tabs(lab, page, tutorial_trace, cpu_trace):
  check_notebook(page, lab, True, (tutorial_trace, cpu_trace))


def test_notebook7_program_tabs(nb7, page, tutorial_trace, cpu_trace):
  check_notebook(page, nb7, False, (tutorial_trace, cpu_trace))
