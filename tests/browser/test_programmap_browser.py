"""The program map in a real browser, as a user meets it: what the HTML report, JupyterLab and Notebook 7 open on. Its
labels read at 11 px or more; its counts are trace.program()'s; a click on a box says why the kernel ends there (the
reasons trace.program() gives) and leads to its steps, code and kernel-table row; "why didn't these two fuse?" takes at
most three actions (an arrow: one; a kernel, then shift-click another: two) and names the buffers trace.why() names;
every kernel of a model's step is two actions away; the kernel table counts kernels by cause; in a notebook "what if
they fused?" runs the schedule again. Screenshots (beside VIZ's View Kernel Graph, turn4's anchors) go to test-artifacts/."""
import re

import pytest
import workloads
from harness import ARTIFACTS, ATTENTION, LIMIT, inside, new_page, notebook, open_in_lab, run_all, settled
from tinygrad import Tensor

import tgviz
from tgviz.trace.units import time_text

MAP = ".tgviz-progmap"
LABEL_PX = """(sel) => { const t = document.querySelector(sel + ' .tgviz-map-canvas svg g.node text tspan');
  return parseFloat(getComputedStyle(t).fontSize) * t.getBoundingClientRect().height / t.getBBox().height; }"""
CELL = """%%tgviz -o trace
from tinygrad import Tensor
x = Tensor.ones(16, 16).contiguous().realize()
y = (x * 2 + 1).contiguous()
(y.sum(1) + y.T.max(1)).softmax().realize()"""


@pytest.fixture(scope="module")
def mnist(mnist_trace, tmp_path_factory):
  """The MNIST training step (85 calls of 67 kernels), traced (the session's capture), and its report."""
  return mnist_trace, mnist_trace.to_html(tmp_path_factory.mktemp("map") / "index.html", workers=2)


@pytest.fixture
def page(browser):
  with new_page(browser, 1600, 1000) as p: yield p


@pytest.fixture
def offline(browser):
  """A page with no network: the report works offline, from disk."""
  with new_page(browser, 1600, 1000, offline=True) as p: yield p


def shoot(page, name: str) -> None:
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  page.screenshot(path=str(ARTIFACTS / name))


def click_box(page, key: str, shift: bool = False) -> None:
  """A click on a box of the map (brought into view first: the map is bigger than its canvas)."""
  box = page.locator(f"{MAP} .tgviz-map-canvas g.node[data-node='{key}']")
  page.evaluate("""(k) => { const n = document.querySelector(`.tgviz-map-canvas g.node[data-node='${k}']`);
    const c = n.closest('.tgviz-map-canvas'), r = n.getBoundingClientRect();
    const at = {bubbles: true, clientX: r.x + 4, clientY: r.y + 4, pointerId: 1, button: 0, shiftKey: %s};
    n.dispatchEvent(new PointerEvent('pointerdown', at)); c.dispatchEvent(new PointerEvent('pointerup', at)); }"""
                % ("true" if shift else "false"), key)
  assert box.count() == 1


def test_report_opens_on_the_map(mnist, offline):
  trace, report, page = *mnist, offline
  program = trace.program()
  page.goto(report.as_uri())
  page.wait_for_selector(f"{MAP}[open] .tgviz-map-canvas svg g.node", timeout=LIMIT)
  assert page.evaluate(LABEL_PX, MAP) >= 10.99  # readable: 11 px or more on screen
  counts = page.locator(".tgviz-map-count").all_inner_texts()
  assert counts == [f"{r} {n}" for r, n in program.counts().items()]
  assert page.locator(".tgviz-map-views button.active").inner_text() == "by line of your code"  # 85 kernels: by line first
  shoot(page, "programmap-mnist-report.png")

  # a box of several kernels (a line of the user's code): its kernels, each a link to its steps
  group = page.locator(f"{MAP} .tgviz-map-canvas g.node.fold").first.get_attribute("data-node")
  click_box(page, group)
  members = page.locator(".tgviz-map-member")
  assert members.count() > 1 and page.locator(".tgviz-map-panel h4").inner_text() == f"{members.count()} kernels"

  # every kernel: one box, its panel says why it ends there, in trace.program()'s words
  page.locator(".tgviz-map-views button[data-view='kernels']").click()
  k = next(k for k in program.kernels if k.writes and k.writes[0].between and k.writes[0].reason == "reduce")
  click_box(page, f"k{k.index}")
  panel = page.locator(".tgviz-map-panel")
  assert panel.locator("h4").inner_text() == k.name
  assert k.writes[0].detail in panel.inner_text() and "tinygrad: " + k.writes[0].tinygrad in panel.inner_text()
  shoot(page, "programmap-mnist-kernel.png")

  # why didn't these two fuse: a kernel, then shift-click one that reads what it writes
  reader = k.writes[0].readers[0]
  click_box(page, f"k{reader.index}", shift=True)
  assert panel.locator("h4").inner_text() == f"why didn't {k.name} and {reader.name} fuse?"
  between = [b.label for b in program.why(k.index, reader.index)]
  assert panel.locator(".tgviz-map-buffer b").all_inner_texts() == between and between
  # a real shift-click on a box after a click on the panel's text selects no text (it selected the text between them)
  panel.locator("h4").click()
  canvas = page.locator(f"{MAP} .tgviz-map-canvas").bounding_box()
  def inside(b: dict) -> bool:
    x, y = b["x"] + b["width"] / 2, b["y"] + b["height"] / 2
    return canvas["x"] < x < canvas["x"] + canvas["width"] and canvas["y"] < y < canvas["y"] + canvas["height"]
  shown = next(b for n in page.locator(f"{MAP} .tgviz-map-canvas g.node").all() if (b := n.bounding_box()) and inside(b))
  page.keyboard.down("Shift")
  page.mouse.click(shown["x"] + shown["width"] / 2, shown["y"] + shown["height"] / 2)
  page.keyboard.up("Shift")
  assert page.evaluate("getSelection().toString()") == ""

  # ... or one action: the arrow between them
  arrow = page.locator(f".tgviz-map-canvas g.arrow[data-from='k{k.index}'][data-to='k{reader.index}']")
  page.evaluate("""(el) => { const p = el.querySelector('path.hit'), c = el.closest('.tgviz-map-canvas');
    const at = p.getPointAtLength(p.getTotalLength() / 2);
    const m = p.getScreenCTM(), x = at.x * m.a + m.e, y = at.y * m.d + m.f, o = {bubbles: true, clientX: x, clientY: y, pointerId: 1, button: 0};
    p.dispatchEvent(new PointerEvent('pointerdown', o)); c.dispatchEvent(new PointerEvent('pointerup', o)); }""", arrow.element_handle())
  assert k.writes[0].label in panel.locator(".tgviz-map-buffer b").all_inner_texts()

  # its kernel-table row, with the kernels by cause
  click_box(page, f"k{k.index}")
  panel.locator("button:text-is('kernel table')").click()
  row = page.locator(".tgviz-kernels tbody tr.selected")
  assert page.locator(".tgviz-kernels[open]").count() == 1 and row.count() == 1 and k.kernel.display_name in row.inner_text()
  assert re.match(r"\d+ kernels by cause: ", page.locator(".tgviz-causes").inner_text())
  heads = page.locator(".tgviz-kernels thead th").all_inner_texts()
  assert "reduce" in row.locator("td").nth(heads.index("cause")).inner_text()
  shoot(page, "programmap-mnist-kernel-table.png")

  # its steps: the map gives way, the kernel's first step is open with its code
  page.locator(".tgviz-kernels > summary").click()
  page.locator(f"{MAP} > summary").click()
  click_box(page, f"k{k.index}")
  panel.locator("button:text-is('steps')").click()
  page.wait_for_function("(n) => document.querySelector('.tgviz-code-head').innerText.startsWith(n + ' ·')", arg=k.kernel.display_name)
  assert not page.locator(f"{MAP}[open]").count()
  assert not page.errors


@pytest.mark.slow
def test_every_kernel_of_the_gpt_step_is_two_actions_away(offline, gpt_run):
  """The GPT training step's report (`tgviz run`, 368 calls): the map opens by line; every kernel of its trace (saved
  beside it) is in a box, and a click on it lists the kernel as a link to its steps (the second action)."""
  out, page = gpt_run[0], offline
  trace = tgviz.load(out / "trace.tgviz")
  page.goto((out / "index.html").as_uri())
  page.wait_for_selector(f"{MAP}[open] .tgviz-map-canvas svg g.node", timeout=LIMIT)
  assert page.evaluate(LABEL_PX, MAP) >= 10.99
  shoot(page, "programmap-gpt-report.png")
  program, reached = trace.program(), set()
  for key in page.locator(f"{MAP} .tgviz-map-canvas g.node[data-node^='g'], {MAP} .tgviz-map-canvas g.node[data-node^='k']").evaluate_all(
      "ns => ns.map(n => n.dataset.node)"):
    click_box(page, key)  # a box of one kernel: its panel; of several: its kernels, each a link to its steps
    members = page.locator(".tgviz-map-member")
    if not members.count(): reached.add(page.locator(".tgviz-map-panel h4").inner_text())
    else: reached.update(members.evaluate_all("ns => ns.map(n => n.firstChild.textContent)"))
  assert {k.name for k in program.kernels} <= reached
  assert not page.errors


ON_MAP = """() => { const c = document.querySelector('.tgviz-map-canvas'), box = (r) => [r.left, r.top, r.right, r.bottom];
  const boxes = {}; for (const n of c.querySelectorAll('g.node[data-node]')) boxes[n.dataset.node] = box(n.getBoundingClientRect());
  const frames = [...c.querySelectorAll('text.frame-label')].map((t) => box(t.getBoundingClientRect()));
  const arrows = [...c.querySelectorAll('text.edge-label')].map((t) => [...box(t.getBoundingClientRect()), t.textContent]);
  const panel = c.parentElement.querySelector('.tgviz-map-panel');
  return {canvas: box(c.getBoundingClientRect()), boxes, frames, arrows, panel: box(panel.getBoundingClientRect()),
          transform: c.querySelector('.tgviz-map-stage').style.transform}; }"""


def on_map(page) -> dict:
  """The map's canvas and boxes on screen ([left, top, right, bottom], CSS px), its label size and the stage's transform,
  once what a resize set off is drawn."""
  settled(page)
  settled(page)  # (a resize: the canvas's observer, then the map drawn again in the next frame)
  return {**page.evaluate(ON_MAP), "px": page.evaluate(LABEL_PX, MAP)}


def test_a_small_map_opens_whole_and_follows_its_canvas(tmp_path, browser):
  """A program of a few kernels in a notebook's narrow column (the report at 1000x760: a canvas some 400 px wide beside
  the panel) opens whole and readable, not on the left end of a strip three times as wide; it opens again for its
  canvas's new size (smaller: readable on its first kernel; wider again: whole), also when it was hidden meanwhile, and
  not once the user has zoomed it."""
  with tgviz.capture() as trace: exec(CELL.split("\n", 1)[1], {})
  report = trace.to_html(tmp_path / "small.html")
  with new_page(browser, 1000, 760, offline=True) as page:
    page.goto(report.as_uri())
    page.wait_for_selector(f"{MAP}[open] .tgviz-map-canvas svg g.node", timeout=LIMIT)
    got = on_map(page)
    assert got["px"] >= 10.99 and all(inside(b, got["canvas"]) for b in got["boxes"].values()), got
    shoot(page, "programmap-small-report.png")
    page.set_viewport_size({"width": 1000, "height": 420})  # too low for it whole: readable, on its first kernel
    got = on_map(page)
    assert got["px"] >= 10.99 and inside(got["boxes"]["k0"], got["canvas"]), got
    assert not all(inside(b, got["canvas"]) for b in got["boxes"].values()), got
    page.locator(f"{MAP} .tgviz-sheet-close").click()  # hidden while the window grows, whole once shown again
    page.set_viewport_size({"width": 1000, "height": 760})
    page.locator(f"{MAP} > summary").click()
    got = on_map(page)
    assert got["px"] >= 10.99 and all(inside(b, got["canvas"]) for b in got["boxes"].values()), got
    page.set_viewport_size({"width": 1600, "height": 1000})
    got = on_map(page)
    assert got["px"] >= 10.99 and all(inside(b, got["canvas"]) for b in got["boxes"].values()), got
    c = got["canvas"]  # zoomed by the user: a resize leaves the view as it is
    page.mouse.move((c[0] + c[2]) / 2, (c[1] + c[3]) / 2)
    page.mouse.wheel(0, -200)
    zoomed = on_map(page)["transform"]
    page.set_viewport_size({"width": 1400, "height": 1000})
    assert on_map(page)["transform"] == zoomed
    assert not page.errors


def test_a_map_in_a_narrow_sheet_has_its_width_and_f_fits_it(attention_trace, tmp_path, browser):
  """In a notebook's column (the report at 1000x760) the map is as wide as its sheet, its panel under it (beside it,
  the hint took 380 px of a 720 px sheet: an attention block's map showed two of its 36 boxes); f, with the map open,
  fits the map whole (it fitted the step graph hidden under the sheet instead, shrinking it to 4 px labels)."""
  report = attention_trace.to_html(tmp_path / "attention.html")
  with new_page(browser, 1000, 760, offline=True) as page:
    page.goto(report.as_uri())
    page.wait_for_selector(f"{MAP}[open] .tgviz-map-canvas svg g.node", timeout=LIMIT)
    got = on_map(page)
    sheet = page.locator(f"{MAP} > .tgviz-sheet").bounding_box()
    panel = page.locator(".tgviz-map-panel").bounding_box()
    canvas = got["canvas"]
    assert canvas[2] - canvas[0] >= sheet["width"] - 20 and panel["y"] >= canvas[3] - 1, (canvas, sheet, panel)
    stage = page.locator(".tgviz-stage").evaluate("s => s.style.transform")
    page.locator(f"{MAP} .tgviz-map-head").click()
    page.keyboard.press("f")
    got = on_map(page)
    assert all(inside(b, got["canvas"]) for b in got["boxes"].values()), got
    assert page.locator(".tgviz-stage").evaluate("s => s.style.transform") == stage
    shoot(page, "programmap-narrow-fit.png")
    assert not page.errors


def check_widget(page, root, shot: str, fuse: bool) -> None:
  """A notebook's widget opens on the map; the kernel that writes the .contiguous()'s buffer says so in its panel, with
  the user's line; "what if they fused?" (JupyterLab) runs the schedule again: the buffer gone, a kernel fewer."""
  root.locator(f"{MAP}[open] .tgviz-map-canvas svg g.node").first.wait_for(timeout=LIMIT)
  panel = root.locator(".tgviz-map-panel")
  contiguous = panel.locator(".tgviz-map-buffer", has_text="a .contiguous() on line 3")
  for key in root.locator(".tgviz-map-canvas g.node[data-node^='k']").evaluate_all("ns => ns.map(n => n.dataset.node)"):
    click_box(page, key)  # (a small program: every kernel its own box)
    if contiguous.count() and "ends here because it writes" in panel.inner_text(): break
  assert "Cell In[" in root.locator(".tgviz-map-canvas svg").text_content()  # the user's lines as the notebook names them
  assert contiguous.count() and "y = (x * 2 + 1).contiguous()" in contiguous.first.inner_text()
  assert contiguous.first.locator(".tgviz-reason").inner_text() == "user"
  shoot(page, shot)
  if not fuse: return
  contiguous.first.locator("button:text-is('what if they fused?')").click()
  answer = contiguous.first.locator(".tgviz-map-fused")
  answer.wait_for(timeout=LIMIT)
  assert "the buffer is gone with contiguous lifted" in answer.inner_text()
  sides = answer.locator(".tgviz-map-fused-side ol")
  assert sides.nth(1).locator("li").count() == sides.nth(0).locator("li").count() - 1
  shoot(page, shot.replace(".png", "-fused.png"))


def test_jupyterlab_opens_on_the_map(lab, page):
  url, token, root = lab
  (root / "programmap.ipynb").write_text(notebook("%load_ext tgviz", CELL))
  page.goto(f"{url}/lab/workspaces/programmap/tree/programmap.ipynb?token={token}&reset")
  run_all(page, 2)
  check_widget(page, page.locator(".tgviz-root").first, "programmap-lab.png", fuse=True)
  assert not page.errors


def test_notebook7_opens_on_the_map(nb7, page):
  url, token, root = nb7
  (root / "programmap7.ipynb").write_text(notebook("%load_ext tgviz", CELL))
  page.goto(f"{url}/notebooks/programmap7.ipynb?token={token}")
  run_all(page, 2)
  page.errors.clear()  # (Notebook 7 itself raises "reading 'schema'" while it loads its settings)
  check_widget(page, page.locator(".tgviz-root").first, "programmap-nb7.png", fuse=False)
  assert not page.errors




def cut_at_sides(got: dict, sides: tuple[int, ...] = (0, 2)) -> list[str]:
  """The boxes the canvas's left or right edge (sides: 0 left, 2 right) cuts (part in view, part not), of those in its
  height."""
  c = got["canvas"]
  return [k for k, b in got["boxes"].items()
          if b[3] > c[1] and b[1] < c[3] and any(b[0] < c[x] - 0.5 and b[2] > c[x] + 0.5 for x in sides)]


def cut_labels(got: dict, sides: tuple[int, ...] = (0, 2)) -> list[str]:
  """The arrows' labels the canvas's left or right edge (sides: 0 left, 2 right) cuts, of those in its height."""
  c = got["canvas"]
  return [a[4] for a in got["arrows"] if a[3] > c[1] and a[1] < c[3] and any(a[0] < c[x] - 0.5 and a[2] > c[x] + 0.5 for x in sides)]


def top_band(got: dict) -> float:
  """How far (CSS px) below the canvas's top the first box or frame's name in view starts."""
  c = got["canvas"]
  return min(b[1] for b in [*got["boxes"].values(), *got["frames"]] if b[3] > c[1] and b[1] < c[3] and b[2] > c[0] and b[0] < c[2]) - c[1]


def check_opening(page, root, shot: str, cut_right: int = 0, labels: bool = False) -> dict:
  """The map opens readable, no box cut at its canvas's sides nor a frame's name at its top (labels: nor an arrow's label
  at its sides, where the map is not too wide for that: MNIST's has arrows round its sides), what it shows starting at
  the canvas's top (within its 10 px margin: no empty band above it); a panel under the map takes only its hint's room
  until a click fills it, the box clicked staying in view; f then fits it whole, filling the canvas across or down, and
  the map stays whole as a click fills the panel (cut_right: as many boxes may be cut at its right edge, where the map
  goes on). Returns what it opened on."""
  root.locator(f"{MAP}[open] .tgviz-map-canvas svg g.node").first.wait_for(timeout=LIMIT)
  got = on_map(page)
  c, panel = got["canvas"], got["panel"]
  shoot(page, shot)
  assert got["px"] >= 10.99 and not cut_at_sides(got, (0,)) and len(cut_at_sides(got, (2,))) <= cut_right, got
  # nor an arrow's label (the buffer it carries, "float[8,8,13" read as a shape: the attention map opened with two cut)
  assert not labels or not cut_labels(got), (cut_labels(got), got)
  assert not [f for f in got["frames"] if f[1] < c[1] - 0.5 < f[3] - 1], got  # (a name cut at the top)
  assert top_band(got) <= 12, got
  root.locator(f"{MAP} .tgviz-map-head").click(position={"x": 4, "y": 4})
  page.keyboard.press("f")
  fitted = on_map(page)
  svg = root.locator(f"{MAP} .tgviz-map-canvas svg").bounding_box()
  assert all(inside(b, fitted["canvas"]) for b in fitted["boxes"].values()), fitted
  assert svg["width"] >= c[2] - c[0] - 1 or svg["height"] >= c[3] - c[1] - 1, (svg, c)
  shoot(page, shot.replace(".png", "-f.png"))
  if panel[1] >= c[3] - 1:  # under the map: the hint's two lines, not a third of the sheet (the canvas had 450 of 680 px in Lab)
    assert panel[3] - panel[1] <= 0.12 * (panel[3] - c[1]), got
    key = next(k for k, b in fitted["boxes"].items() if k.startswith("k") and inside(b, fitted["canvas"]))
    click_box(page, key)
    clicked = on_map(page)
    assert clicked["panel"][3] - clicked["panel"][1] >= 80 and inside(clicked["boxes"][key], clicked["canvas"]), clicked
    # f holds as the panel takes its room: the map whole in the smaller canvas (it opened again on its start, undoing f:
    # the kernel to shift-click for "why did they not fuse?" off screen)
    assert all(inside(b, clicked["canvas"]) for b in clicked["boxes"].values()), clicked
  return got


def test_the_attention_map_opens_uncut_in_the_report(tmp_path, browser):
  """The attention block's map in the report: at 1000x900 its canvas starts near the top of the page and has most of
  its width (beside a 380 px panel it had 411 px, and opened with boxes cut at both sides; f fitted it to 4 px labels);
  at 1000x900 and 1600x1000 it opens with no box nor arrow label cut at its sides, and f fills its canvas."""
  with tgviz.capture() as trace: exec(ATTENTION, {})
  report = trace.to_html(tmp_path / "attention.html")
  for width, height in ((1000, 900), (1600, 1000)):
    with new_page(browser, width, height, offline=True) as page:
      page.goto(report.as_uri())
      got = check_opening(page, page, f"programmap-attention-{width}.png", labels=True)
      c = got["canvas"]
      if width == 1000: assert c[1] <= 0.12 * height and c[2] - c[0] >= 0.75 * width, c
      assert not page.errors


def test_a_long_chain_opens_with_most_of_its_boxes_on_screen(attention_trace, tmp_path, browser):
  """The attention block with its backward (36 boxes, chained through tinygrad's random counter) in the report at
  1600x1000: its map opened with 4 boxes readable, the rest in a strip off to the right and the canvas's lower part
  empty; laid out in bands, one under the other, it opens readable on a third of its boxes or more, none cut at its
  left, top or bottom."""
  report = attention_trace.to_html(tmp_path / "attention-bw.html")
  for width, height, part in ((1600, 1000, 3),):
    with new_page(browser, width, height, offline=True) as page:
      page.goto(report.as_uri())
      got = check_opening(page, page, f"programmap-attention-bw-{width}.png", cut_right=1)
      whole = [k for k, b in got["boxes"].items() if inside(b, got["canvas"])]
      assert len(got["boxes"]) > 30 and len(whole) >= len(got["boxes"]) / part, (width, len(whole), got)
      assert not page.errors


def test_the_reports_keys_work_before_any_click(tmp_path, browser):
  """The report is the widget's page: its keys work as it opens, before a click gives it the focus (new-user pass 8
  pressed f on the report's map and nothing happened)."""
  with tgviz.capture() as trace: exec(ATTENTION, {})
  report = trace.to_html(tmp_path / "keys.html")
  with new_page(browser, 1000, 900, offline=True) as page:
    page.goto(report.as_uri())
    page.wait_for_selector(f"{MAP}[open] .tgviz-map-canvas svg g.node", timeout=LIMIT)
    before = on_map(page)
    assert not all(inside(b, before["canvas"]) for b in before["boxes"].values())  # (it opens readable, not whole)
    page.keyboard.press("f")
    fitted = on_map(page)
    assert all(inside(b, fitted["canvas"]) for b in fitted["boxes"].values()), fitted
    assert not page.errors


def test_the_attention_map_opens_uncut_in_jupyterlab(lab, browser):
  """The attention block's map in a JupyterLab notebook (1400x1000, as the user had it) opens with no box cut at its
  canvas's sides (it opened on the first box's column, cut at both), and f fills its canvas."""
  with new_page(browser, 1400, 1000) as page:
    open_in_lab(page, lab, "attnmap", "%load_ext tgviz", "%%tgviz -o attn\n" + ATTENTION)
    run_all(page, 2)
    check_opening(page, page.locator(".tgviz-root").first, "programmap-attention-lab.png", labels=True)
    assert not page.errors


def test_the_users_map_opens_from_its_top_in_jupyterlab(lab, browser):
  """The new user's attention cell in JupyterLab with the file browser open, its widget some 850 px wide as the user's
  (at 1400x1000 their browser panel was wider than a fresh Lab's: 1290 px gives the widget that width): its map opens
  from its top, readable, not zoomed in (it opened with some 70-100 px empty above the map; at 1.5x on a few boxes)."""
  with new_page(browser, 1290, 1000) as page:
    open_in_lab(page, lab, "usermap", "%load_ext tgviz", "%%tgviz\n" + NU_ATTENTION)
    # (JupyterLab's app is there once its page has loaded: on a loaded machine, seconds after the page opened)
    page.wait_for_function("window.jupyterapp?.shell !== undefined", timeout=LIMIT)
    page.evaluate("window.jupyterapp.shell.activateById('filebrowser')")
    run_all(page, 2)
    got = check_opening(page, page.locator(".tgviz-root").first, "programmap-user-lab.png")
    assert got["px"] < 13.5, got
    assert not page.errors


def test_the_mnist_map_opens_uncut_in_the_report(mnist, browser):
  """The MNIST step's map in the report at 1366x768 (a laptop's screen) opens readable from its top with no box cut at
  its canvas's left, top or bottom (it opened with one cut at the left and one at the bottom), at most one at its right,
  where the map goes on (a window from the map's top that cuts none there shows a corner of it empty at any scale up
  to 1.5; cutting none, it opened 150 px down), and f fills its canvas."""
  _, report = mnist
  with new_page(browser, 1366, 768, offline=True) as page:
    page.goto(report.as_uri())
    got = check_opening(page, page, "programmap-mnist-1366.png", cut_right=1)
    c = got["canvas"]
    cut = [k for k, b in got["boxes"].items() if b[2] > c[0] and b[0] < c[2]
           and any(b[1] < y - 0.5 and b[3] > y + 0.5 for y in (c[1], c[3]))]
    assert not cut, got  # (at its sides: check_opening)
    assert not page.errors


# the new user's attention cell (nu4's notebook, cell 2)
NU_ATTENTION = """from tinygrad import Tensor
x = Tensor.randn(2, 6, 16).realize()
wq, wk, wv = [Tensor.randn(16, 16) for _ in range(3)]
q, k, v = x @ wq, x @ wk, x @ wv
out = (q @ k.transpose(-1, -2) / 4).softmax(-1) @ v
out.realize()"""


def test_the_map_opens_from_its_top_readable(mnist, tmp_path, browser):
  """The map opens from its top (its first box or frame's name in the canvas's 10 px margin), readable, not zoomed in:
  the MNIST report at 1000x900 opened with 324 px empty above the map (to cut no box at its edges); the new user's
  attention cell, in a canvas as wide as JupyterLab's widget beside the file browser (the report at 860x1000), opened
  at 1.5x (15 px labels) on 7 of its 23 boxes, a band empty above them."""
  Tensor.manual_seed(0)
  with tgviz.capture() as trace: exec(NU_ATTENTION, {})
  for report, width, height, least in ((mnist[1], 1000, 900, 15), (trace.to_html(tmp_path / "nu.html"), 860, 1000, 12)):
    with new_page(browser, width, height, offline=True) as page:
      page.goto(report.as_uri())
      page.wait_for_selector(f"{MAP}[open] .tgviz-map-canvas svg g.node", timeout=LIMIT)
      got = on_map(page)
      shoot(page, f"programmap-top-{width}.png")
      c = got["canvas"]
      whole = [k for k, b in got["boxes"].items() if inside(b, c)]
      assert top_band(got) <= 12 and 10.99 <= got["px"] < 13.5 and len(whole) >= least, (width, len(whole), got)
      assert not page.errors


UNDER = """() => { const m = document.querySelector('.tgviz-map-minimap'), o = m.getBoundingClientRect();
  const under = [...document.querySelectorAll('.tgviz-map-canvas g.node[data-node]')].filter((n) => {
    const r = n.getBoundingClientRect(); return r.left < o.right && r.right > o.left && r.top < o.bottom && r.bottom > o.top;
  });
  return {shown: !m.hidden, under: under.map((n) => n.textContent), under_keys: under.map((n) => n.dataset.node)}; }"""


def test_the_maps_overview_covers_no_box_it_opens_on(mnist, browser):
  """The MNIST step's map in the report at 1000x900, wider than its canvas: its overview (in a corner of the canvas)
  covers none of the boxes the map opens on (bottom right, it covered the step's output box and the 20 kernels of
  opt.step()); a kernel clicked, the panel under the map fills and the map opens again on its lower canvas, its overview
  still over no box (it covered "copy 32 B")."""
  _, report = mnist
  with new_page(browser, 1000, 900, offline=True) as page:
    page.goto(report.as_uri())
    page.wait_for_selector(f"{MAP}[open] .tgviz-map-canvas svg g.node", timeout=LIMIT)
    before = on_map(page)
    shoot(page, "programmap-overview-clear.png")
    got = page.evaluate(UNDER)
    assert got["shown"] and not got["under"], got
    key = next(k for k in before["boxes"] if k.startswith("k"))
    click_box(page, key)
    page.wait_for_function("() => document.querySelector('.tgviz-map-panel').getBoundingClientRect().height >= 80", timeout=LIMIT)
    after = on_map(page)
    assert after["canvas"][3] < before["canvas"][3], (before["canvas"], after["canvas"])
    shoot(page, "programmap-overview-clear-clicked.png")
    got = page.evaluate(UNDER)
    assert got["shown"] and not got["under"], got
    assert not page.errors


def test_a_box_comes_clear_of_the_overview_in_any_corner(tmp_path, browser):
  """The attention block's map in the report puts its overview in the canvas's corner where it covers the fewest boxes
  (which, at a window's size, varies with its boxes' labels: the top left at 1536x864 here); in each corner met until
  the top left, a box dragged under it and clicked is panned out from under it, on
  screen (the pan went only left or up, which takes nothing clear of an overview at the top left: it stayed under it)."""
  Tensor.manual_seed(0)  # (its RNG seeded anew: the map draws the seeding kernels whatever captures ran before)
  with tgviz.capture(profile=False) as trace: exec(ATTENTION, {})  # (untimed: labels without times)
  report = trace.to_html(tmp_path / "attention.html")
  corners = set()
  for width, height in ((1366, 768), (1536, 864), (1024, 768), (1000, 900), (850, 850), (1250, 950), (1600, 1000)):
    with new_page(browser, width, height, offline=True) as page:
      page.goto(report.as_uri())
      page.wait_for_selector(f"{MAP}[open] .tgviz-map-canvas svg g.node", timeout=LIMIT)
      got = on_map(page)
      c, mini = got["canvas"], page.locator(".tgviz-map-minimap").bounding_box()
      corners.add(("top" if mini["y"] - c[1] < 20 else "bottom") + (" left" if mini["x"] - c[0] < 20 else " right"))
      key = next(k for k, b in got["boxes"].items() if k.startswith("k") and inside(b, c))
      box = got["boxes"][key]
      # drag the map so that the box's top left corner lies at the overview's middle
      start = ((c[0] + c[2]) / 2, (c[1] + c[3]) / 2)
      page.mouse.move(*start)
      page.mouse.down()
      page.mouse.move(start[0] + mini["x"] + mini["width"] / 2 - box[0], start[1] + mini["y"] + mini["height"] / 2 - box[1], steps=5)
      page.mouse.up()
      assert key in page.evaluate(UNDER)["under_keys"], (width, on_map(page))
      click_box(page, key)
      page.wait_for_function("() => document.querySelector('.tgviz-map-panel h4')", timeout=LIMIT)
      got = on_map(page)
      shoot(page, f"programmap-overview-clear-{width}.png")
      assert inside(got["boxes"][key], got["canvas"]) and key not in page.evaluate(UNDER)["under_keys"], (width, got)
      assert not page.errors
    if "top left" in corners: break
  assert "top left" in corners, corners


def test_a_retimed_kernels_panel_gives_its_time_in_the_run_and_re_timed(tmp_path, offline):
  """A kernel re-timed after the run (as `tgviz run` and "time the slowest again" do): its panel on the map gives both
  figures, each saying what it is, the one of the kernel table beside the launches' ("6.46 µs (median of 1 launch in
  the run; re-timed after it, warm: 1.36 µs, median of 16 runs)", with ", not settled" where the runs stopped before
  the median settled, as on a busy machine), not a median that disagrees with the table's."""
  with tgviz.capture() as trace: workloads.attention_cell()
  trace.retime()
  prog = trace.program()
  calls = [c for c in prog.kernels if c.kernel is not None and c.kernel.timing is not None and c.kernel.timing.source == "re-timed"]
  assert calls and len(prog.kernels) <= 24  # (every kernel its own box)
  offline.goto(trace.to_html(tmp_path / "index.html").as_uri())
  offline.wait_for_selector(f"{MAP}[open] .tgviz-map-canvas svg g.node", timeout=LIMIT)
  for call in calls[:3]:
    click_box(offline, f"k{call.index}")
    t = call.kernel.timing
    runs = len(call.times_us)
    says = (f"{time_text(call.time_us)} (median of {runs} launch{'es' if runs != 1 else ''} in the run; re-timed after it, "
            f"warm: {time_text(t.median_us)}, median of {t.n} runs{', not settled' if t.stable is False else ''})")
    offline.wait_for_function("(s) => document.querySelector('.tgviz-map-panel').textContent.includes(s)", arg=says, timeout=LIMIT)
  shoot(offline, "programmap-retimed-panel.png")
  assert not offline.errors
