"""The code column's access tab in the browser: in the HTML report, in JupyterLab and in Notebook 7, on a conv with stride
2, dilation 2, padding 1 and groups 2. Hovering an output element lights, in the cells of the canvas the user sees, exactly
the elements Kernel.reads names (the receptive field: strided, dilated, cut by the padding, in its group's channels);
per thread, the chosen thread's reads and writes are lit in its colour (its neighbours in others); a LOAD picked in the
graph (or a code line's number) opens the tab on its access. Screenshots: the tutorial's conv, this conv, an attention block's matmul."""
import math
import re

import pytest
from harness import ARTIFACTS, LIMIT, check_saved_notebook, new_page, notebook, open_in_lab, run_all, settled
from tinygrad import Tensor

import tgviz

CONV = """from tinygrad import Tensor
Tensor.manual_seed(0)
x = Tensor.rand(1, 4, 9, 9).realize(); w = Tensor.rand(4, 2, 3, 3).realize()
y = x.conv2d(w, stride=2, dilation=2, padding=1, groups=2).realize()"""
READ, OUT, THREAD, SHARED = "#1976d2", "#e65100", "#d32f2f", "#212121"

# each element's colour on screen: the pixel at the middle of its cell (canvas.tgvizCell: where accessgrid.js drew it)
COLOURS = """(canvas, numel) => { const ctx = canvas.getContext('2d'), out = {};
  for (let f = 0; f < numel; f++) {
    const b = canvas.tgvizCell(f);
    if (!b) continue;
    const [r, g, bl] = ctx.getImageData(b.x + (b.size >> 1), b.y + (b.size >> 1), 1, 1).data;
    out[f] = '#' + [r, g, bl].map((v) => v.toString(16).padStart(2, '0')).join('');
  }
  return out; }"""


@pytest.fixture(scope="module")
def conv():
  """The conv's kernel, as tinygrad compiles the cell's code (the notebooks' kernels are the same)."""
  env: dict = {}
  with tgviz.capture() as trace: exec(CONV, env)
  return trace, trace.kernels[-1]


def _lit(root, slot: int, numel: int, colour: str | set[str]) -> list[int]:
  """The elements of a buffer whose cells show this colour (or one of these)."""
  colours = root.locator(f".tgviz-access-buffer[data-slot='{slot}'] canvas").evaluate(COLOURS, numel)
  want = {colour} if isinstance(colour, str) else colour
  return sorted(int(f) for f, c in colours.items() if c in want)


def _open_kernel(page, root, k) -> str:
  """Select the kernel's View Base AST in the tree (beside the program map a trace opens on); returns its step key."""
  group = root.locator(".tgviz-group.kind-kernel", has=page.locator("summary", has_text=re.compile(rf"\b{k.name}\b")))
  if group.get_attribute("open") is None: group.locator("summary").click()
  first = group.locator(".tgviz-step").first
  key = first.get_attribute("data-key")
  first.click()
  root.locator(f".tgviz-stage[data-step='{key}'] svg g.node").first.wait_for(timeout=LIMIT)
  return key


def check_access(page, root, k, shot: str) -> None:
  """The checks every frontend passes on the conv kernel k, in the widget root."""
  root.scroll_into_view_if_needed()
  _open_kernel(page, root, k)
  use = {b.slot: b for b in k.buffer_use()}
  out = next(b for b in use.values() if b.written)
  x = next(b for b in use.values() if b.shape == (1, 4, 9, 9))
  w = next(b for b in use.values() if b.shape == (4, 2, 3, 3))
  root.locator(".tgviz-tab-access").click()
  root.locator(f".tgviz-access-buffer[data-slot='{w.slot}'] canvas").wait_for(timeout=LIMIT)
  assert root.locator(".tgviz-right > .tgviz-code").is_hidden() and root.locator(".tgviz-access").is_visible()
  assert "(output)" in root.locator(f".tgviz-access-buffer[data-slot='{out.slot}'] .tgviz-access-head").inner_text()
  # the counts under each buffer: the model's
  head = root.locator(f".tgviz-access-buffer[data-slot='{x.slot}'] .tgviz-access-use").inner_text()
  assert f"{x.read} read, {x.reads:,} reads" in head and f"{x.masked} masked off" in head, head
  # hover an output element at the corner: its receptive field lit, the padding's reads masked off
  canvas = root.locator(f".tgviz-access-buffer[data-slot='{out.slot}'] canvas")
  assert k.reads(0)[x.slot].masked > 0  # the corner's window hangs over the padding
  for e in (0, 27):
    cell = canvas.evaluate(f"(c) => c.tgvizCell({e})")
    box = canvas.bounding_box()
    scale = box["width"] / canvas.evaluate("(c) => c.width")
    page.mouse.move(box["x"] + (cell["x"] + cell["size"] / 2) * scale, box["y"] + (cell["y"] + cell["size"] / 2) * scale)
    reads = k.reads(e)
    root.locator(".tgviz-access-status", has_text=f"{len(reads[x.slot].flat)} elements").wait_for(timeout=LIMIT)
    assert _lit(root, x.slot, 324, READ) == reads[x.slot].flat.tolist() != []
    assert _lit(root, w.slot, 72, READ) == reads[w.slot].flat.tolist()
    assert _lit(root, out.slot, math.prod(out.shape), OUT) == [e]
    status = root.locator(".tgviz-access-status").inner_text()
    assert (f"{reads[x.slot].masked} masked off" in status) == (reads[x.slot].masked > 0), status
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  root.screenshot(path=str(ARTIFACTS / f"{shot}-element.png"))
  # per thread: thread lidx0=1 and its neighbour, in their colours
  root.locator(".tgviz-access-stage[data-stage='program']").click()
  root.locator(".tgviz-access-var input[data-var='lidx0']").fill("1")
  root.locator(".tgviz-access-status", has_text="thread lidx0=1").wait_for(timeout=LIMIT)
  reads, writes = k.thread(lidx0=1)[x.slot][0], k.thread(lidx0=1)[out.slot][1]
  mine, shared = _lit(root, x.slot, 324, THREAD), _lit(root, x.slot, 324, {THREAD, SHARED})
  assert set(mine) <= set(reads.flat.tolist()) <= set(shared) and mine
  mine, shared = _lit(root, out.slot, 64, THREAD), _lit(root, out.slot, 64, {THREAD, SHARED})
  assert set(mine) <= set(writes.flat.tolist()) <= set(shared) and mine
  root.screenshot(path=str(ARTIFACTS / f"{shot}-thread.png"))
  # an output element clicked, per thread: the thread that writes it is chosen
  cell, box = canvas.evaluate("(c) => c.tgvizCell(63)"), canvas.bounding_box()
  page.mouse.click(box["x"] + (cell["x"] + cell["size"] / 2) * scale, box["y"] + (cell["y"] + cell["size"] / 2) * scale)
  ids = {v: int(root.locator(f".tgviz-access-var input[data-var='{v}']").input_value()) for v in ("lidx0", "lidx1")}
  assert 63 in k.thread(**ids)[out.slot][1].flat.tolist() and 63 in _lit(root, out.slot, 64, {THREAD, SHARED})
  # a LOAD picked in the graph (the View Base AST's INDEX of x): the tab opens on its access
  load = next(a for a in k.accesses("ast") if a.kind == "load" and a.slot == x.slot)
  root.locator(".tgviz-tab-code").click()
  root.locator(".tgviz-fit").click()
  root.locator(f".tgviz-stage g.side g.node[data-node='{load.keys[0]}']").first.click()
  root.locator(f".tgviz-access-list tr.tgviz-row-hl[data-n='{load.number}']").wait_for(timeout=LIMIT)
  assert root.locator(".tgviz-access").is_visible() and root.locator(".tgviz-access-stage.active").get_attribute("data-stage") == "ast"
  # a click on a code line's number: the tab opens on the access of the final program written there
  program = [a for a in k.accesses("program") if a.kind == "load" and a.slot == x.slot]
  line = next(i for i, keys in enumerate(k.line_keys, 1) if any(key in keys for a in program for key in a.keys))
  want = next(a for a in k.accesses() if any(key in k.line_keys[line - 1] for key in a.keys))
  root.locator(".tgviz-tab-code").click()
  root.locator(f".tgviz-right > .tgviz-code [data-line='{line}']").click(position={"x": 12, "y": 5})  # its number, in the margin
  root.locator(f".tgviz-access-list tr.tgviz-row-hl[data-n='{want.number}']").wait_for(timeout=LIMIT)
  assert want.stage == "program" and root.locator(".tgviz-access-stage.active").get_attribute("data-stage") == "program"


@pytest.fixture
def page(browser):
  with new_page(browser, width=1600, height=1000) as p: yield p


def test_report_access_tab(conv, tutorial_trace, attention_trace, tmp_path, page):
  trace, k = conv
  trace.to_html(tmp_path / "index.html")
  page.goto((tmp_path / "index.html").as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  check_access(page, page.locator(".tgviz-root"), k, "report-access")
  assert not page.errors
  # the pictures a user judges by: the tutorial's conv, an attention block's matmul (per thread)
  for name, t, kernel in (("tutorial", tutorial_trace, next(k for k in tutorial_trace.kernels if k.name == "r_2_2_2_2")),
                          ("attention", attention_trace, max((k for k in attention_trace.kernels if k.name.startswith("r_")),
                                                             key=lambda k: len(k.accesses("program"))))):
    t.to_html(tmp_path / name / "index.html")
    page.goto((tmp_path / name / "index.html").as_uri())
    page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
    root = page.locator(".tgviz-root")
    _open_kernel(page, root, kernel)
    root.locator(".tgviz-tab-access").click()
    root.locator(".tgviz-access-buffer canvas").first.wait_for(timeout=LIMIT)
    stored = next(b for b in kernel.buffer_use() if b.written)
    canvas = root.locator(f".tgviz-access-buffer[data-slot='{stored.slot}'] canvas")
    cell, box = canvas.evaluate("(c) => c.tgvizCell(0)"), canvas.bounding_box()
    page.mouse.move(box["x"] + cell["x"] + cell["size"] / 2, box["y"] + cell["y"] + cell["size"] / 2)
    root.locator(".tgviz-access-status", has_text="reads").wait_for(timeout=LIMIT)
    root.screenshot(path=str(ARTIFACTS / f"report-access-{name}.png"))
    if name == "attention":
      root.locator(".tgviz-access-stage[data-stage='program']").click()
      root.locator(".tgviz-access-status", has_text="thread").wait_for(timeout=LIMIT)
      root.screenshot(path=str(ARTIFACTS / "report-access-attention-thread.png"))
  assert not page.errors


def test_a_picked_loads_access_tab_stays_closed_on_the_next_step(tutorial_trace, tmp_path, page):
  """A LOAD picked opens the access tab once; back on the code tab, the next step of the kernel (the LOAD still drawn,
  still picked) keeps the code tab: the tab jumped back to the access tab on every step and match drawn."""
  tutorial_trace.to_html(tmp_path / "index.html")
  page.goto((tmp_path / "index.html").as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  root = page.locator(".tgviz-root")
  k = next(k for k in tutorial_trace.kernels if k.name == "r_2_2_2_2")
  _open_kernel(page, root, k)
  load = next(a for a in k.accesses("ast") if a.kind == "load")
  root.locator(".tgviz-fit").click()
  root.locator(f".tgviz-stage g.side g.node[data-node='{load.keys[0]}']").first.click()
  root.locator(f".tgviz-access-list tr.tgviz-row-hl[data-n='{load.number}']").wait_for(timeout=LIMIT)
  root.locator(f".tgviz-node-panel[data-key='{load.keys[0]}'][data-state='full']").wait_for(timeout=LIMIT)
  root.locator(".tgviz-tab-code").click()
  assert root.locator(".tgviz-right > .tgviz-code").is_visible()
  group = root.locator(".tgviz-group.kind-kernel", has=page.locator("summary", has_text=re.compile(r"\br_2_2_2_2\b")))
  step = group.locator(".tgviz-step").nth(1)
  key = step.get_attribute("data-key")
  step.click()
  picked = root.locator(f".tgviz-stage[data-step='{key}'] g.node.hl[data-node='{load.keys[0]}']")
  picked.first.wait_for(timeout=LIMIT)  # drawn, the LOAD picked there again
  settled(page)
  assert root.locator(".tgviz-tab-code.active").count() == 1 and root.locator(".tgviz-right > .tgviz-code").is_visible()
  assert root.locator(".tgviz-access").is_hidden()
  assert not page.errors


def test_a_load_of_another_step_says_where_its_accesses_are(tutorial_trace, tmp_path, page):
  """A LOAD picked in a step the access tab does not read (it has the View Base AST's and the final program's) says
  where its accesses are, on the status line: it opened nothing, and said nothing (new-user pass 8)."""
  from tgviz.bridge import node_key
  from tgviz.views.protocol import step_key
  k = next(k for k in tutorial_trace.kernels if k.name == "r_2_2_2_2")
  held = {key for a in k.accesses() for key in a.keys}
  step, key = next((s, node_key(u)) for s in k.group.steps for u in s.after().toposort() if u.op.name == "LOAD" and node_key(u) not in held)
  tutorial_trace.to_html(tmp_path / "index.html")
  page.goto((tmp_path / "index.html").as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  root = page.locator(".tgviz-root")
  _open_kernel(page, root, k)
  root.locator(f".tgviz-step[data-key='{step_key(step)}']").click()
  node = root.locator(f".tgviz-stage[data-step='{step_key(step)}'] g.side g.node[data-node='{key}']").first
  node.wait_for(timeout=LIMIT)
  root.locator(".tgviz-fit").click()
  node.click()
  root.locator(".tgviz-status", has_text="this LOAD's accesses: the access tab has those of the View Base AST").wait_for(timeout=LIMIT)
  assert root.locator(".tgviz-right > .tgviz-code").is_visible()
  assert not page.errors


def test_report_big_buffer_draws_a_window(tmp_path, page):
  """A buffer with more than 384 cells a side is drawn as a window, which says so and moves to what is lit: a flipped
  1024x64 buffer's first output element reads its last row."""
  a = Tensor.rand(1024, 64).realize()
  with tgviz.capture() as trace: a.flip(0).contiguous().realize()
  k = trace.kernels[-1]
  trace.to_html(tmp_path / "index.html")
  page.goto((tmp_path / "index.html").as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  root = page.locator(".tgviz-root")
  _open_kernel(page, root, k)
  root.locator(".tgviz-tab-access").click()
  out, src = next(b for b in k.buffer_use() if b.written), next(b for b in k.buffer_use() if not b.written)
  canvas = root.locator(f".tgviz-access-buffer[data-slot='{out.slot}'] canvas")
  canvas.wait_for(timeout=LIMIT)
  assert canvas.evaluate("(c) => c.tgvizCell(1023 * 64)") is None  # the last row: outside the window
  cell, box = canvas.evaluate("(c) => c.tgvizCell(0)"), canvas.bounding_box()
  page.mouse.move(box["x"] + cell["x"] + cell["size"] / 2, box["y"] + cell["y"] + cell["size"] / 2)
  assert k.reads(0)[src.slot].flat.tolist() == [1023 * 64]
  root.locator(".tgviz-access-status", has_text=re.compile(r"\b1 element,")).wait_for(timeout=LIMIT)
  note = root.locator(f".tgviz-access-buffer[data-slot='{src.slot}'] .tgviz-access-window")
  assert note.is_visible() and "of 1024" in note.inner_text() and "rows 0–" not in note.inner_text()  # moved down
  assert _lit(root, src.slot, 1024 * 64, READ) == [1023 * 64]
  root.screenshot(path=str(ARTIFACTS / "report-access-window.png"))
  assert not page.errors


def check_notebook(page, server, lab: bool, k) -> None:
  url, token, root = server
  (root / "access.ipynb").write_text(notebook("%load_ext tgviz", "%%tgviz\n" + CONV))
  page.goto(f"{url}/lab/workspaces/access/tree/access.ipynb?token={token}&reset" if lab else f"{url}/notebooks/access.ipynb?token={token}")
  run_all(page, 2)
  widget = page.locator(".tgviz-root").first
  widget.locator(".tgviz-stage svg g.node").first.wait_for(state="attached", timeout=LIMIT)
  page.errors.clear()  # from here on (Notebook 7 itself raises "reading 'schema'" while it loads its settings)
  check_access(page, widget, k, f"{'lab' if lab else 'nb7'}-access")
  assert not page.errors


def test_jupyterlab_access_tab(lab, page, conv):
  check_notebook(page, lab, True, conv[1])


def test_notebook7_access_tab(nb7, page, conv):
  check_notebook(page, nb7, False, conv[1])


def test_saved_notebook_keeps_the_access_tab(lab, page, conv):
  """%%tgviz --tab access, saved and reopened without its kernel: the access tab is drawn from what the notebook kept,
  and a hover still lights the receptive field (the page evaluates it)."""
  url, token, _ = lab
  path = open_in_lab(page, lab, "access-saved", "%load_ext tgviz", "%%tgviz --tab access\n" + CONV)
  check_saved_notebook(page, path, url, token, "lab-access-saved.png")  # run, saved, kernel shut down, reopened
  root, k = page.locator(".tgviz-root"), conv[1]
  x = next(b for b in k.buffer_use() if b.shape == (1, 4, 9, 9))
  out = next(b for b in k.buffer_use() if b.written)
  root.locator(f".tgviz-access-buffer[data-slot='{out.slot}'] canvas").wait_for(timeout=LIMIT)
  canvas = root.locator(f".tgviz-access-buffer[data-slot='{out.slot}'] canvas")
  cell, box = canvas.evaluate("(c) => c.tgvizCell(0)"), canvas.bounding_box()
  page.mouse.move(box["x"] + cell["x"] + cell["size"] / 2, box["y"] + cell["y"] + cell["size"] / 2)
  root.locator(".tgviz-access-status", has_text="masked off").wait_for(timeout=LIMIT)
  assert _lit(root, x.slot, 324, READ) == k.reads(0)[x.slot].flat.tolist()
  root.screenshot(path=str(ARTIFACTS / "lab-access-saved.png"))


def test_same_kernel_in_the_notebook_as_here(conv):
  """The notebooks' cell compiles the very kernel the checks hold the page to (same name, same accesses)."""
  env: dict = {}
  with tgviz.capture() as again: exec(CONV, env)
  assert again.kernels[-1].name == conv[1].name
  assert [a.index for a in again.kernels[-1].accesses()] == [a.index for a in conv[1].accesses()]
  assert isinstance(env["y"], Tensor)
