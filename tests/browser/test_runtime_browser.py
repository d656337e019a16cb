"""The run's tabs (timeline, memory, roofline: js/runview.js) in a real browser, as a user sees them: in the HTML report
(the tutorial, and a 1,000-step TinyJit training loop), in `tgviz run`'s report, in JupyterLab and in Notebook 7. The
timeline counts the kernel table's launches, its slowest box opens that kernel, the memory peak is trace.memory()'s (and
tinygrad's own high-water mark), the roofline has a point per kernel that ran, and a click opens it."""
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import workloads
from harness import ARTIFACTS, LIMIT, TUTORIAL, ctrl_wheel, new_page, notebook, open_in_lab, run_all, settled, stalled, undisturbed
from helpers import counting_memory

import tgviz
from tgviz.trace.trace import Trace
from tgviz.trace.units import time_text
from tgviz.views import run as runview

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "scripts" / "tutorial_conv2d.py"
CANVAS = ".tgviz-tl-canvas"


def captured(fn):
  """A trace of fn, with tinygrad's own memory high-water mark over the capture (GlobalCounters.mem_used)."""
  from tinygrad.helpers import GlobalCounters
  start = GlobalCounters.mem_used
  with counting_memory() as marks, tgviz.capture() as trace: fn()
  return trace, max(marks, default=start) - start


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
  """The HTML reports of the tutorial and of a 1,000-step TinyJit training loop, each with its trace and tinygrad's
  high-water mark."""
  out = tmp_path_factory.mktemp("runtabs")
  found = {}
  for name, fn in (("tutorial", workloads.tutorial), ("jit_train", lambda: workloads.jit_train(1000))):
    trace, high = captured(fn)
    found[name] = (trace.to_html(out / f"{name}.html"), trace, high)
  return found


@pytest.fixture
def page(browser):
  with new_page(browser, 1500, 1000, offline=True) as p: yield p


def kernel_table(page) -> list[dict]:
  """The kernel table's rows as the user reads them: kernel and runs (opened, read, closed again)."""
  page.locator(".tgviz-kernels > summary").click()
  heads = page.locator(".tgviz-kernels thead th").all_inner_texts()
  cells = page.eval_on_selector_all(".tgviz-kernels tbody tr", "rs => rs.map(r => [...r.cells].map(c => c.textContent))")
  page.locator(".tgviz-kernels > summary").click()
  rows = [dict(zip(heads, c, strict=True)) for c in cells]
  for r in rows: r["runs"] = int(r["runs"].replace(",", "")) if r["runs"] != "–" else 0
  return rows


def open_tab(page, tab: str) -> None:
  if not page.locator(".tgviz-run[open]").count(): page.locator(".tgviz-run > summary").click()
  page.locator(f".tgviz-run-tab[data-tab='{tab}']").click()
  page.wait_for_selector(f".tgviz-run-pane[data-tab='{tab}'] > div", timeout=LIMIT)


def code_head_after(page, action, name: str) -> None:
  """Do action (a click on a kernel); then the sheet is closed and the kernel's steps are open: its code's head names it."""
  action()
  page.wait_for_function("(n) => document.querySelector('.tgviz-code-head').innerText.startsWith(n + ' ·')", arg=name, timeout=LIMIT)
  assert not page.locator(".tgviz-run[open]").count()
  assert page.locator(".tgviz-step.selected").count() == 1


def check_timeline(page, rows: list[dict], shot: str) -> str:
  """The timeline: its kernel launches are the kernel table's; wheel zooms, a drag pans, hover names a box, the slowest
  box opens its kernel. Returns what it logged (its draw times)."""
  open_tab(page, "timeline")
  page.wait_for_selector(f"{CANVAS}[data-draws]", timeout=LIMIT)
  count = page.locator(".tgviz-tl-count")
  assert int(count.get_attribute("data-kernels")) == sum(r["runs"] for r in rows) > 0
  launches = count.inner_text()
  assert launches == f"{int(count.get_attribute('data-launches')):,} launches"
  canvas = page.locator(CANVAS)
  first_ms = canvas.get_attribute("data-first-ms")
  box = canvas.bounding_box()
  view = canvas.get_attribute("data-view")
  page.mouse.move(box["x"] + box["width"] * 0.7, box["y"] + box["height"] / 2)
  ctrl_wheel(page, -400)  # zoom in around the pointer (in a notebook the plain wheel scrolls it)
  page.wait_for_function(f"document.querySelector('{CANVAS}').dataset.view !== '{view}'", timeout=LIMIT)
  zoomed = eval(canvas.get_attribute("data-view"))
  assert zoomed[1] - zoomed[0] < eval(view)[1] - eval(view)[0]
  before = canvas.get_attribute("data-view")
  page.mouse.down()
  page.mouse.move(box["x"] + box["width"] * 0.5, box["y"] + box["height"] / 2, steps=5)
  page.mouse.up()
  page.wait_for_function(f"document.querySelector('{CANVAS}').dataset.view !== '{before}'", timeout=LIMIT)
  panned = eval(canvas.get_attribute("data-view"))
  assert panned[0] > zoomed[0] and panned[1] - panned[0] == pytest.approx(zoomed[1] - zoomed[0])  # dragged left: later times
  draw_ms = canvas.get_attribute("data-draw-ms")
  page.locator(".tgviz-tl-fit").click()
  # the slowest launch: zoomed to, hovered (named), then clicked: its kernel's steps open
  slowest = page.locator(".tgviz-tl-slowest .tgviz-link").first
  name = re.match(r"1\. (.+) [\d.]+ (?:ns|µs|ms|s)$", slowest.inner_text()).group(1)
  slowest.click()
  settled(page)
  page.wait_for_function(f"document.querySelector('{CANVAS}').dataset.slowest", timeout=LIMIT)
  assert_short_ticks(canvas)  # zoomed in deep, far from the run's start
  x, y, w, h = eval(canvas.get_attribute("data-slowest"))
  box = canvas.bounding_box()
  page.mouse.move(box["x"] + x + w / 2, box["y"] + y + h / 2)
  tip = page.locator(".tgviz-tl-tip")
  tip.wait_for(state="visible", timeout=LIMIT)
  assert tip.inner_text().startswith(name + " (kernel) on ") and "slowest #1" in tip.inner_text() and "duration" in tip.inner_text()
  assert re.search(r"\n[\d.,]+ GFLOP/s, [\d.,]+ GB/s \(tinygrad's estimates\)", tip.inner_text())  # as VIZ's FLOPS and B/s
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  page.screenshot(path=str(ARTIFACTS / shot))
  code_head_after(page, lambda: page.mouse.click(box["x"] + x + w / 2, box["y"] + y + h / 2), name)
  return f"timeline of {launches}: built and first drawn in {first_ms} ms, a zoomed or dragged frame drawn in {draw_ms} ms"


def assert_short_ticks(canvas) -> None:
  """The time axis's labels read at a glance however deep the zoom: at most 4 digits before the point (times from the
  run's start, or, zoomed in deep, the first tick's time and the others' "+" offsets from it), never "564060 µs"."""
  ticks = json.loads(canvas.get_attribute("data-ticks"))
  assert len(ticks) >= 2 and all(re.fullmatch(r"\+?\d{1,4}(\.\d+)? (ns|µs|ms|s)", t) for t in ticks), ticks


def check_memory(page, peak: int, shot: str, trace=None) -> None:
  """The memory tab: its peak is tinygrad's; it opens on the window the timeline opens on; wheel zooms and a drag pans
  as the timeline's; hover at the peak says the bytes in use then and the buffers allocated then (trace: the trace
  shown, to check them against its memory())."""
  mem = trace.memory() if trace is not None else None
  open_tab(page, "timeline")  # the window the timeline opens on (its button back to it)
  opening = page.locator(".tgviz-tl-opening")
  (opening if opening.is_visible() else page.locator(".tgviz-tl-launches")).click()
  page.wait_for_selector(".tgviz-tl-opening.active, .tgviz-tl-launches.active", timeout=LIMIT)
  window = json.loads(page.locator(CANVAS).get_attribute("data-view"))
  open_tab(page, "memory")
  shown = page.locator(".tgviz-mem-peak")
  assert int(shown.get_attribute("data-bytes")) == peak > 0
  assert shown.inner_text().startswith(f"{peak:,} B") or f"({peak:,} B)" in shown.inner_text()
  assert page.locator(".tgviz-mem-table tbody tr").count() > 0
  tab = page.locator(".tgviz-mem").inner_text()  # one byte rule: binary units only (tinygrad's copy names say "24.50 KB")
  assert not re.search(r"\d ?(KB|MB|GB|kB)\b", tab), tab
  if mem is not None: check_buffer_names(page, mem)
  canvas = page.locator(".tgviz-mem-canvas")
  page.wait_for_function("document.querySelector('.tgviz-mem-canvas').dataset.peakX", timeout=LIMIT)
  assert json.loads(canvas.get_attribute("data-view")) == pytest.approx(window)  # the timeline's window
  box = canvas.bounding_box()
  if not 80 < float(canvas.get_attribute("data-peak-x")) < box["width"]:  # the peak outside that window: the whole run
    page.locator(".tgviz-mem-fit").click()
    page.wait_for_selector(".tgviz-mem-fit.active", timeout=LIMIT)
  # the "peak … at …" label whole inside the chart, beside the peak's marker, not across it
  (l0, l1), px = json.loads(canvas.get_attribute("data-peak-label")), float(canvas.get_attribute("data-peak-x"))
  assert 0 < l0 < l1 <= box["width"] - 2 and (l1 < px - 4 or l0 > px + 4), (l0, l1, px, box["width"])
  for _ in range(3):  # zoom in around the peak
    view = canvas.get_attribute("data-view")
    page.mouse.move(box["x"] + float(canvas.get_attribute("data-peak-x")), box["y"] + box["height"] / 2)
    ctrl_wheel(page, -300)
    page.wait_for_function(f"document.querySelector('.tgviz-mem-canvas').dataset.view !== '{view}'", timeout=LIMIT)
  v0, v1 = json.loads(canvas.get_attribute("data-view"))
  assert v0 > 0 and v1 - v0 < json.loads(view)[1] - json.loads(view)[0]
  assert_short_ticks(canvas)
  page.mouse.move(box["x"] + float(canvas.get_attribute("data-peak-x")) + 1, box["y"] + box["height"] / 2)
  tip = page.locator(".tgviz-mem-tip")
  tip.wait_for(state="visible", timeout=LIMIT)
  at, in_use, alive = float(tip.get_attribute("data-t")), int(tip.get_attribute("data-in-use")), json.loads(tip.get_attribute("data-alive"))
  assert tip.inner_text().startswith("at ") and f"{len(alive)} buffers allocated" in tip.inner_text() and alive
  if mem is not None:  # what trace.memory() says of that time
    assert in_use == next(e.in_use for e in reversed(mem.events) if round(e.t_us, 3) <= at)
    assert sorted(alive) == sorted(b.num for b in mem.buffers if round(b.alloc_us, 3) <= at and (b.free_us is None or at < round(b.free_us, 3)))
    names = {b.num: f"{b.dtype} × {b.size:,} #{i}" for i, b in enumerate(mem.buffers, 1)}  # the tip names them short too
    assert all(names[n] in tip.inner_text() for n in alive[:12]) and not any(str(n) in tip.inner_text() for n in alive)
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  page.screenshot(path=str(ARTIFACTS / shot))
  before = canvas.get_attribute("data-view")
  page.mouse.move(box["x"] + box["width"] * 0.7, box["y"] + box["height"] / 2)  # (the peak may be anywhere in view)
  page.mouse.down()
  page.mouse.move(box["x"] + box["width"] * 0.3, box["y"] + box["height"] / 2, steps=5)
  page.mouse.up()
  page.wait_for_function(f"document.querySelector('.tgviz-mem-canvas').dataset.view !== '{before}'", timeout=LIMIT)
  panned = json.loads(canvas.get_attribute("data-view"))
  assert panned[1] - panned[0] == pytest.approx(v1 - v0) and panned[0] > v0  # dragged left: later times
  link = page.locator(".tgviz-mem-table .tgviz-link").first
  code_head_after(page, link.click, link.inner_text())


def check_buffer_names(page, mem) -> None:
  """The buffers alive at the peak are named short and readable: "float × 69,696 #50" (a size, not written as a shape
  "float[...]" is, its thousands grouped), n their place in the run's allocations
  (trace.memory().buffers), tinygrad's long id (2**40 and up) on hover only; each name whole on screen."""
  rows = page.locator(".tgviz-mem-table tbody tr")
  place = {b.num: (i, b) for i, b in enumerate(mem.buffers, 1)}
  shown = rows.evaluate_all("""rs => rs.map(r => { const c = r.cells[0], range = document.createRange(); range.selectNodeContents(c);
    return {num: Number(r.dataset.num), text: c.innerText, title: c.title,
            fits: range.getBoundingClientRect().right <= c.getBoundingClientRect().right + 1}; })""")
  assert shown
  for row in shown:
    i, b = place[row["num"]]
    assert row["text"] == f"{b.dtype} × {b.size:,} #{i}" and "[" not in row["text"] and len(row["text"]) <= 24 and row["fits"], row
    assert row["title"] == f"tinygrad's buffer id: {b.num}" and str(b.num) not in row["text"]
  print(f"\nmemory table: {len(shown)} buffers named as {shown[0]['text']!r} (was {shown[0]['num']})")


def check_roofline(page, rows: list[dict], shot: str) -> None:
  open_tab(page, "roofline")
  ran = {r["kernel"] for r in rows if r["runs"]}
  points = page.locator(".tgviz-roof-point")
  assert points.count() == len(ran) == int(page.locator(".tgviz-roof-count").get_attribute("data-ran")) > 0
  # each roof named: by a label beside it, or where the points leave it no room (the run's fastest kernel on the compute
  # roof: a loaded run's timings put it there), on hover, its line's title (the head names the peaks too, below)
  named = page.locator(".tgviz-roof-label").all_text_contents() + page.locator(".tgviz-roof-line > title").all_text_contents()
  assert page.locator(".tgviz-roof-line").count() >= 1 and any("GFLOP/s" in t for t in named) and any("GB/s" in t for t in named), named
  assert re.search(r"[\d.]+ GFLOP/s, [\d.]+ GB/s", page.locator(".tgviz-roof-peak").first.inner_text())
  point = points.last
  point.hover()
  hover = page.locator(".tgviz-roof-hover").inner_text()
  name = hover.split(" on ")[0]
  assert name in ran, (hover, ran)
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  page.screenshot(path=str(ARTIFACTS / shot))
  code_head_after(page, point.click, name)


def test_report_tabs_on_the_tutorial(reports, page):
  path, trace, high = reports["tutorial"]
  page.goto(path.as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  rows = kernel_table(page)
  print(check_timeline(page, rows, "run-timeline-tutorial.png"))
  # the copies that read its results back (.numpy(), .tolist()) are no schedule's calls: the head says so after its counts
  outside = trace.timeline().outside_text()
  open_tab(page, "timeline")
  head = page.locator(".tgviz-tl-head").inner_text()
  assert outside.startswith("4 copies outside any schedule") and f"; {outside}) on " in head, head
  page.screenshot(path=str(ARTIFACTS / "run-timeline-head-tutorial.png"))
  assert trace.memory().peak == high
  check_memory(page, trace.memory().peak, "run-memory-tutorial.png", trace)
  check_roofline(page, rows, "run-roofline-tutorial.png")
  # Escape closes the sheet first, the widget keeps the focus
  open_tab(page, "timeline")
  page.locator(".tgviz-run-head").click()
  page.keyboard.press("Escape")
  assert not page.locator(".tgviz-run[open]").count()
  assert not page.errors


@pytest.mark.parametrize("name", ["tutorial", "jit_train"])
def test_timeline_opens_on_the_launches(reports, page, name):
  """The timeline opens on the launches' span (first start to last end, 2% either side), not on the whole run, which is
  mostly compile time before them; a TinyJit training loop on its replays' span (its steady state, what a user wants to
  see first); "whole run" (or f) shows all of it, f again the opening span, "launches" the launches' span."""
  path, trace, _ = reports[name]
  tl = trace.timeline()
  first, last = min(x.start_us for x in tl), max(x.end_us for x in tl)
  margin = max((last - first) * 0.02, 1)
  replays = [r for r in tl.jit_runs if r.replay > 0]
  o = runview.opening(tl)
  assert o is not None
  if replays:  # a training loop: it opens on its replays
    a, b = min(r.start_us for r in replays), max(r.end_us for r in replays)
    opening = [a - max((b - a) * 0.02, 1), b + max((b - a) * 0.02, 1)]
  elif (o["first"], o["last"]) == (0, len(tl.launches) - 1): opening = [first - margin, last + margin]
  else:  # the stretch of launches no wide gap splits (a loaded machine's pause can split the tutorial's; views.run.opening)
    opening = [o["start"] - max((o["end"] - o["start"]) * 0.02, 1), o["end"] + max((o["end"] - o["start"]) * 0.02, 1)]
  page.goto(path.as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  open_tab(page, "timeline")
  canvas = page.locator(CANVAS)
  page.wait_for_selector(f"{CANVAS}[data-draws]", timeout=LIMIT)
  view = lambda: json.loads(canvas.get_attribute("data-view"))  # noqa: E731
  assert view() == pytest.approx(opening, abs=0.01)
  split = not replays and (o["first"], o["last"]) != (0, len(tl.launches) - 1)  # (the opening's own button, then)
  assert page.locator(".tgviz-tl-replays.active" if replays else ".tgviz-tl-opening.active" if split else ".tgviz-tl-launches.active").count() == 1
  assert page.locator(".tgviz-tl-fit.active").count() == 0
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  page.screenshot(path=str(ARTIFACTS / f"run-timeline-opens-{name}.png"))
  whole = max(tl.duration_us, last)
  print(f"\n{name}: the launches span {(last - first) / whole:.0%} of the run ({(last - first) / 1e3:.1f} of {whole / 1e3:.1f} ms); "
        f"the timeline opens on it, {whole / (last - first + 2 * margin):.2f}x the whole run's scale")
  page.locator(".tgviz-run-head").click()  # the widget focused: f switches the timeline's view
  # each switch waited for by the view it must show (a loop's first launches may start at the run's first µs, where
  # the launches' span and the whole run's begin alike)
  def shows(span: list[float]) -> None:
    page.wait_for_function("([sel, want]) => JSON.parse(document.querySelector(sel).dataset.view)"
                           ".every((v, i) => Math.abs(v - want[i]) <= 0.01)", arg=[CANVAS, span], timeout=LIMIT)
  page.keyboard.press("f")
  shows([0, whole])
  assert page.locator(".tgviz-tl-fit.active").count() == 1
  page.keyboard.press("f")
  shows(opening)
  page.locator(".tgviz-tl-fit").click()
  shows([0, whole])
  page.locator(".tgviz-tl-launches").click()
  shows([first - margin, last + margin])
  assert not page.errors


@pytest.fixture(scope="module")
def mnist_report(tmp_path_factory):
  """The HTML report of the MNIST training step (examples/scripts/mnist_train_step.py: one Adam step, its loss read
  back after a compile of its own), and its trace."""
  def capture() -> Trace:
    with tgviz.capture() as trace: workloads.example("mnist_train_step.py")
    return trace
  trace = undisturbed(capture, _compile_gap_is_most, "the MNIST step")
  return trace.to_html(tmp_path_factory.mktemp("mnist") / "index.html"), trace


def _widest_gap(trace: Trace) -> tuple[int, float, float, float]:
  """The timeline's widest gap with no launch running: the index of the first launch after it, the start of the
  launches, the end of those before it, its width."""
  ls = trace.timeline().launches
  ends = [max(x.end_us for x in ls[:i]) for i in range(1, len(ls))]
  cut = max(range(len(ls) - 1), key=lambda i: ls[i + 1].start_us - ends[i]) + 1
  return cut, ls[0].start_us, ends[cut - 1], ls[cut].start_us - ends[cut - 1]


def _compile_gap_is_most(trace: Trace) -> bool:
  """The step's run as the test means it: the widest gap (the compile of the loss's .item()) most of the launches'
  span, the launches before it most of them and no stall of the machine among those (CI's machine once stalled 170 ms
  of their 211: the opening, rightly, split there too); a stall elsewhere takes the gap's share."""
  ls = trace.timeline().launches
  cut, start, _, gap = _widest_gap(trace)
  return gap > (max(x.end_us for x in ls) - start) * 2 / 3 and cut > len(ls) / 2 and stalled(trace, 0, cut) < 1 / 3


def widest_empty(page) -> float:
  """The widest stretch of the timeline's plot (a share of its width, from its left edge to the canvas's right) in
  which no device lane shows a launch, read from the canvas's pixels: a lane's middle row, each pixel column whose
  colour is not the lane's own (its most common one) a launch drawn."""
  return page.eval_on_selector(CANVAS, """(c) => {
    const ctx = c.getContext("2d"), dpr = c.width / c.getBoundingClientRect().width, left = Math.round(96 * dpr);
    const top = Number(c.dataset.lanesTop), drawn = new Uint8Array(c.width);
    for (let y = top + 15; (y + 15) * dpr <= c.height; y += 30) {
      const row = ctx.getImageData(0, Math.round(y * dpr), c.width, 1).data, seen = new Map();
      const key = (x) => row.slice(4 * x, 4 * x + 4).join();
      for (let x = left; x < c.width; x++) seen.set(key(x), (seen.get(key(x)) ?? 0) + 1);
      const bg = [...seen].sort((a, b) => b[1] - a[1])[0][0];
      for (let x = left; x < c.width; x++) if (key(x) !== bg) drawn[x] = 1;
    }
    let widest = 0, run = 0;
    for (let x = left; x < c.width; x++) { run = drawn[x] ? 0 : run + 1; widest = Math.max(widest, run); }
    return widest / (c.width - left);
  }""")


def test_a_single_training_steps_timeline_opens_on_its_launches(mnist_report, page):
  """A single training step (the MNIST one) opens on its launches spread across the canvas, not on all the launches'
  span (two slivers either side of the second of tinygrad compiling the loss's .item()); the head says which launches
  it shows and what that view leaves out; *whole run* (f) shows all of it, f again the opening."""
  path, trace = mnist_report
  n = len(trace.timeline())
  cut, start, end, gap = _widest_gap(trace)  # cut: the first launch after the widest gap, most of the launches' span
  page.goto(path.as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  open_tab(page, "timeline")
  canvas = page.locator(CANVAS)
  page.wait_for_selector(f"{CANVAS}[data-draws]", timeout=LIMIT)
  margin = (end - start) * 0.02
  assert json.loads(canvas.get_attribute("data-view")) == pytest.approx([start - margin, end + margin], abs=0.01)
  shown = page.locator(".tgviz-tl-shown")
  compiling = trace.compile_times().compiling_us(end, end + gap)  # tinygrad compiling the loss's kernels: most of the gap
  assert compiling > gap / 2
  assert shown.inner_text() == (f"opens on launches 1–{cut} of {n}, {time_text(round(start, 3))} to {time_text(round(end, 3))} into the "
                                f"run; left out of that view: {time_text(round(gap, 3))} with no launch after them ({time_text(round(compiling, 3))}"
                                f" of it tinygrad compiling: the TINY lane), then launches {cut + 1}–{n} · whole run (f): all of it")
  assert page.locator(".tgviz-tl-opening.active").inner_text() == f"launches 1–{cut}"
  empty = widest_empty(page)
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  page.screenshot(path=str(ARTIFACTS / "run-timeline-opens-mnist-step.png"))
  assert empty < 0.5, empty  # launches spread across it: no empty stretch half the canvas wide
  page.locator(".tgviz-run-head").click()  # the widget focused: f switches the timeline's view
  page.keyboard.press("f")
  page.wait_for_selector(".tgviz-tl-fit.active", timeout=LIMIT)
  assert widest_empty(page) > 0.5  # the whole run: the compile before the first launch and the gap
  page.screenshot(path=str(ARTIFACTS / "run-timeline-mnist-step-whole.png"))
  page.keyboard.press("f")
  page.wait_for_selector(".tgviz-tl-opening.active", timeout=LIMIT)
  assert widest_empty(page) == empty
  page.locator(".tgviz-tl-launches").click()  # all the launches: the two slivers and the gap between
  page.wait_for_selector(".tgviz-tl-launches.active", timeout=LIMIT)
  assert widest_empty(page) > 0.5
  page.screenshot(path=str(ARTIFACTS / "run-timeline-mnist-step-launches.png"))
  # the memory chart alike: on the step's launches, not on seconds of a flat line from the weights made as the script
  # began; its head says which
  open_tab(page, "memory")
  assert f"opens on the timeline's window: launches 1–{cut} of {n}" in page.locator(".tgviz-mem-shown").inner_text()
  check_memory(page, trace.memory().peak, "run-memory-mnist-step.png", trace)
  assert not page.errors


def test_report_tabs_on_a_1000_step_tinyjit_training_loop(reports, page):
  path, trace, high = reports["jit_train"]
  page.goto(path.as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  rows = kernel_table(page)
  assert sum(r["runs"] for r in rows) > 15_000
  # TinyJit: the captured batch once, its replays marked as such
  open_tab(page, "timeline")
  head = page.locator(".tgviz-tl-head").inner_text()
  assert "the captured batch, then 998 replays" in head, head
  page.wait_for_selector(f"{CANVAS}[data-draws]", timeout=LIMIT)
  canvas, (run,) = page.locator(CANVAS), [r for r in trace.timeline().jit_runs if r.replay == 0]
  page.locator(".tgviz-tl-launches").click()  # (it opens on the replays: the captured batch before them is in the launches' span)
  # the launches' span drawn (the band's box is the draw's that lit the button: the opening's margin can hold a sliver of
  # the batch, whose box a test reading it before the redraw hovered beside the band)
  page.wait_for_selector(".tgviz-tl-launches.active", timeout=LIMIT)
  page.wait_for_function(f"document.querySelector('{CANVAS}').dataset.batch", timeout=LIMIT)
  x, y, w, h = eval(canvas.get_attribute("data-batch"))  # the band over the lane: the captured batch, once
  box = canvas.bounding_box()
  page.mouse.move(box["x"] + x + w / 2, box["y"] + y + h / 2)
  tip = page.locator(".tgviz-tl-tip")
  assert tip.inner_text().startswith(f"TinyJit {trace.timeline().jits[0]}: the captured batch\n{run.launches} launches")
  page.mouse.click(box["x"] + x + w / 2, box["y"] + y + h / 2)  # zooms to it
  page.wait_for_function(f"JSON.parse(document.querySelector('{CANVAS}').dataset.view)[1] < {run.end_us * 1.5}", timeout=LIMIT)
  v0, v1 = eval(canvas.get_attribute("data-view"))
  assert v0 < run.start_us < run.end_us < v1 and v1 - v0 < 1.2 * (run.end_us - run.start_us) + 2
  print(check_timeline(page, rows, "run-timeline.png"))
  assert trace.memory().peak == high
  check_memory(page, trace.memory().peak, "run-memory.png", trace)
  check_roofline(page, rows, "run-roofline.png")
  assert not page.errors


def test_tgviz_runs_report_has_the_tabs(tmp_path, page):
  proc = subprocess.run([sys.executable, "-m", "tgviz", "run", str(EXAMPLE), "--out", str(tmp_path)], capture_output=True,
                        text=True, timeout=600)
  assert proc.returncode == 0, proc.stderr
  page.goto((tmp_path / "index.html").as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  rows = kernel_table(page)
  check_timeline(page, rows, "run-timeline-cli.png")
  open_tab(page, "memory")
  assert int(page.locator(".tgviz-mem-peak").get_attribute("data-bytes")) > 0
  open_tab(page, "roofline")
  assert page.locator(".tgviz-roof-point").count() == len([r for r in rows if r["runs"]]) > 0
  assert not page.errors


PEAK = "print('memory peak:', tgviz_trace.memory().peak)"


def test_tabs_in_jupyterlab(lab, browser):
  with new_page(browser, 1600, 1100) as page:
    open_in_lab(page, lab, "runtabs", "%load_ext tgviz", TUTORIAL, PEAK)
    run_all(page, 3)
    page.locator(".tgviz-root").wait_for(timeout=LIMIT)
    page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
    # the cell's output, not its source (the page holds "memory peak:" from the start, in the editor)
    printed = page.locator(".jp-OutputArea-output", has_text=re.compile(r"memory peak: \d+"))
    printed.wait_for(timeout=LIMIT)
    peak = int(re.search(r"memory peak: (\d+)", printed.inner_text()).group(1))
    rows = kernel_table(page)
    print(check_timeline(page, rows, "run-timeline-lab.png"))
    check_memory(page, peak, "run-memory-lab.png")
    check_roofline(page, rows, "run-roofline-lab.png")
    assert not page.errors


def test_timeline_in_notebook7(nb7, browser):
  url, token, root = nb7
  (root / "runtabs7.ipynb").write_text(notebook("%load_ext tgviz", TUTORIAL))
  with new_page(browser, 1600, 1100) as page:
    page.goto(f"{url}/notebooks/runtabs7.ipynb?token={token}")
    run_all(page, 2)
    page.locator(".tgviz-root").wait_for(timeout=LIMIT)
    page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
    page.errors.clear()  # from here on (Notebook 7 itself raises "reading 'schema'" while it loads its settings)
    rows = kernel_table(page)
    print(check_timeline(page, rows, "run-timeline-notebook7.png"))
    assert not page.errors
