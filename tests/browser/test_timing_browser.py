"""Where the time goes, as a user finds it in a real browser: in the report of a training step and a TinyJit loop, the
timeline's compiler lanes (tinygrad's TINY and USER spans) and the capture's time in numbers, a kernel's codegen span
opening its steps (three actions from the report); the kernel table's compile column, medians with their spread, cold
single launches and limits; the rules tab's attempts, self time and the patterns that never match; the roofline's
names clear of its points. In JupyterLab, "time the slowest again" re-times kernels and the table says so; in
Notebook 7 the compiler lanes. Screenshots beside VIZ's profiler (shared/anchors/turn4/viz-tiny-lane-compile-time.png):
timing-*.png."""
import json
import re
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest
import workloads
from harness import ARTIFACTS, LIMIT, new_page, notebook, open_in_lab, run_all
from tinygrad import Tensor

import tgviz
from tgviz.trace.retime import AT_MOST, SLOWEST
from tgviz.trace.steps import where
from tgviz.trace.units import percent_text, time_text

CANVAS = ".tgviz-tl-canvas"
TRAIN = """%%tgviz
import sys
sys.path.insert(0, {tests!r})
import workloads
loss, w1, w2 = workloads.mlp_train((64, 32, 10), 8)
"""


def train() -> None:
  workloads.mlp_train((64, 32, 10), 8)
  workloads.jit_train(4)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
  """The report of a training step and a TinyJit loop of one, its slowest kernels that ran once timed again (as `tgviz
  run` does)."""
  with tgviz.capture() as trace: train()
  trace.retime(slowest=2, budget=0.3)
  return trace.to_html(tmp_path_factory.mktemp("timing") / "index.html"), trace


@pytest.fixture
def page(browser):
  with new_page(browser, 1600, 1000, offline=True) as p: yield p


def table(page) -> list[dict]:
  """The kernel table's rows as read on screen, by header."""
  heads = [t.rstrip(" ▲▼") for t in page.locator(".tgviz-kernels thead th").all_inner_texts()]
  cells = page.eval_on_selector_all(".tgviz-kernels tbody tr", "rs => rs.map(r => [...r.cells].map(c => [c.textContent, c.title]))")
  return [dict(zip(heads, row, strict=True)) for row in cells]


def test_where_the_compile_time_goes_in_three_actions(report, page):
  """Open the run's tabs (1), show the whole run (2): the compiler's lanes and the capture's time in numbers; click the
  longest kernel codegen span (3): that kernel's steps open."""
  path, trace = report
  page.goto(path.as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  page.locator(".tgviz-run > summary").click()                                    # 1
  page.wait_for_selector(f"{CANVAS}[data-draws]", timeout=LIMIT)
  tot = trace.compile_times().totals
  line = page.locator(".tgviz-tl-compile").inner_text()
  assert line == tot.summary() and f"capture {time_text(tot.wall_us)}" in line and "not covered" in line
  # it opens on the loop's replays (its steady state)
  assert page.locator(".tgviz-tl-replays.active").count() == 1
  page.screenshot(path=str(ARTIFACTS / "timing-timeline-replays.png"))
  page.locator(".tgviz-tl-fit").click()                                            # 2
  page.wait_for_function(f"(c => c.dataset.codegen && JSON.parse(c.dataset.view)[0] === 0)(document.querySelector('{CANVAS}'))", timeout=LIMIT)
  canvas = page.locator(CANVAS)
  x, y, w, h = json.loads(canvas.get_attribute("data-codegen"))
  step = canvas.get_attribute("data-codegen-step")
  group = trace.groups[int(step.split(":")[0])]
  assert group.kernel is not None
  span = trace.compile_times().groups[group.index]
  box = canvas.bounding_box()
  page.mouse.move(box["x"] + x + w / 2, box["y"] + y + h / 2)
  tip = page.locator(".tgviz-tl-tip")
  tip.wait_for(state="visible", timeout=LIMIT)
  assert tip.inner_text().startswith(f"{span.name} (a kernel's codegen) on TINY") and "click: its steps" in tip.inner_text()
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  page.screenshot(path=str(ARTIFACTS / "timing-compiler-lanes.png"))
  page.mouse.click(box["x"] + x + w / 2, box["y"] + y + h / 2)                     # 3
  page.wait_for_function("(n) => document.querySelector('.tgviz-code-head').innerText.startsWith(n + ' ·')", arg=group.kernel.display_name,
                         timeout=LIMIT)
  assert not page.locator(".tgviz-run[open]").count()
  assert not page.errors


def test_each_time_says_what_it_is_and_the_kernel_tables_rows_are_one_line(report, page):
  """A kernel re-timed after the run: the timeline's slowest list gives its launch in the run (trace.timeline()'s) and,
  beside it, its re-timed median (kernel.timing's, the kernel table's median); the table's cells of its times say in
  their tooltips what each is ("… µs: the median of N runs re-timed after the run (warm); the run's launch took … µs").
  Every row of the table one line high; no program column where no kernels share a program."""
  path, trace = report
  retimed = [k for k in trace.kernels if (t := k.timing) is not None and t.source == "re-timed"]
  assert retimed  # (with one launch in the run, or several: said either way)
  page.goto(path.as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  page.locator(".tgviz-kernels > summary").click()
  rows = {r["kernel"][0]: r for r in table(page)}
  assert all(len(k.program_kernels) == 1 for k in trace.kernels) and "program" not in next(iter(rows.values()))
  for k in retimed:
    t, row, runs = k.timing, rows[k.display_name], len(k.run_times)
    total = sum(k.run_times) * 1e6
    run = f"the run's launch took {time_text(total)}" if runs == 1 else f"the run's {runs} launches took {time_text(total)} in total"
    unsettled = ", not settled" if t.stable is False else ""  # (a bound stopped its runs first: said as tgviz run says it)
    says = f"{time_text(t.median_us)}: the median of {t.n} runs re-timed after the run (warm{unsettled}); {run}"
    assert row["median"] == [time_text(t.median_us), says] and row["runs"] == [str(runs), says], row
    assert row["total"][1] == says and row["spread"][1] == says and row["spread"][0].endswith(f", {t.n} re-runs{unsettled}"), row
  heights = page.eval_on_selector_all(".tgviz-kernels tbody tr", "rs => rs.map((r) => r.getBoundingClientRect().height)")
  line = page.eval_on_selector(".tgviz-kernels tbody td", "c => parseFloat(getComputedStyle(c).lineHeight) || 13")
  assert max(heights) - min(heights) < 1 and max(heights) < 2 * line, (min(heights), max(heights), line)
  opts = page.locator(".tgviz-kernels tbody tr").first.locator("td").last  # a long text cut short: whole in its tooltip
  assert opts.get_attribute("title") == opts.text_content()
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  page.screenshot(path=str(ARTIFACTS / "timing-kernel-table-one-line.png"))
  page.locator(".tgviz-kernels > summary").click()
  page.locator(".tgviz-run > summary").click()
  page.wait_for_selector(f"{CANVAS}[data-draws]", timeout=LIMIT)
  slowest = page.locator(".tgviz-tl-slowest")
  assert slowest.inner_text().startswith("slowest launches in the run: ")
  launches = sorted((x for x in trace.timeline().launches if x.kind == "kernel" and x.duration_us is not None), key=lambda x: -x.duration_us)
  links = slowest.locator(".tgviz-link")
  assert links.count() == min(5, len(launches))
  for i in range(links.count()):
    x, link = launches[i], links.nth(i)
    assert link.inner_text() == f"{i + 1}. {x.kernel.display_name} {time_text(x.duration_us)}"
    note = link.evaluate("b => b.nextElementSibling?.classList.contains('tgviz-tl-retimed') ? b.nextElementSibling.textContent : null")
    t = x.kernel.timing
    assert note == (f"(re-timed: {time_text(t.median_us)} median of {t.n})" if t.source == "re-timed" else None), (note, x.kernel)
  assert any(x.kernel in retimed for x in launches[:links.count()])
  page.screenshot(path=str(ARTIFACTS / "timing-slowest-retimed.png"))
  assert not page.errors


def test_the_kernel_tables_times_compile_and_limits(report, page):
  path, trace = report
  page.goto(path.as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  page.locator(".tgviz-kernels > summary").click()
  rows = table(page)
  expected = trace.kernel_table(peaks=True)  # (the report measured the peaks, cached: the rows' limits are the page's)
  assert [r["kernel"][0] for r in rows] == [k.display_name for k in trace.kernels]
  compiled = {r["kernel"]: r["total_us"] for r in trace.compile_table()}
  peaks = trace.roofline().peaks
  for row, want, k in zip(rows, expected, trace.kernels, strict=True):
    assert row["compile, all"][0] == time_text(compiled[k.display_name])
    if want["cold"]:  # (and says so on hover: new-user pass 8 found no tooltip on a cold row's times)
      assert row["median"][0].startswith("❄ ") and row["spread"][0] == "❄ 1 cold launch"
      assert row["median"][1].startswith(f"{time_text(want['median_us'])}: its one launch in the run, cold"), row
    # which figure is which, plainly: its launches in the run (the runs column's count), or its re-runs after the run
    if want["timed"] == "re-timed":
      assert row["spread"][0].endswith(f", {want['timed_runs']} re-runs{', not settled' if want['settled'] is False else ''}")
    elif not want["cold"] and want["median_us"] is not None:
      assert row["spread"][0].endswith(f", {want['timed_runs']} launches") and row["runs"][0] == str(want["timed_runs"]), row
    if want["bound"] is not None:
      # (its header says what the fraction is of: "latency 0.020%" under "limit" read as a bare figure); a latency-bound
      # kernel's is how far above the device's launch floor it is: a roof's "0.0%" of it said nothing
      limit = row["limit, % of roof"]
      floors = want["launch_floors"]  # (rounded to 2 places in the row: the figure said is of 2 or 1 digits)
      figure = floors is not None and Decimal(floors).quantize(Decimal(1) if floors >= 9.95 else Decimal("0.1"), ROUND_HALF_UP)
      far = want["bound"] != "latency" and want["roof_fraction"] < 0.1  # ("memory 0.12%" read as memory-bound)
      # (the fraction itself: the row's roof_fraction has 4 figures, and 0.88496 said as 88% reads 0.885 as 89%)
      fraction = k.verdict(peaks[k.device]).fraction
      roof = f"{'below roofs' if far else want['bound']} {percent_text(fraction)}"
      assert want["roof_fraction"] == float(f"{fraction:.4g}")
      said = f"latency {figure}×\u00a0floor" if want["bound"] == "latency" else roof
      if busy := want["busy_units"]:  # too few workgroups, as well as how far above the floor ("1 of 2 units" hid 65×)
        said = f"latency\u00a0{figure}×, {busy[0]}/{busy[1]}\u00a0units"
      assert limit[0] == said and limit[1] == want["why"], limit
  assert any(r["timed"] == "re-timed" for r in expected) and any(r["cold"] for r in expected)
  assert {r["bound"] for r in expected} >= {"latency"} and any(r["busy_units"] for r in expected)
  head = page.locator(".tgviz-kernels th", has_text="compile, all")  # all its compiling: not the timeline's device compile
  assert 'the timeline\'s "device compile" is that last part only' in head.get_attribute("title")
  head.click()  # the slowest to compile first
  first = page.locator(".tgviz-kernels tbody tr").first.locator("td").first.inner_text()
  assert first == max(trace.compile_table(), key=lambda r: r["total_us"])["kernel"]
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  page.screenshot(path=str(ARTIFACTS / "timing-kernel-table.png"))
  assert not page.errors


def test_a_median_that_did_not_settle_says_so(tmp_path, page):
  """A kernel re-timed until a bound stopped its runs before the median settled (tgviz run prints "450 µs (288 runs, not
  settled)"): the report's kernel table says so beside its spread, and in its times' tooltips."""
  x = Tensor.rand(64, 64).realize()
  with tgviz.capture() as trace: (x @ x).realize()
  (k,) = trace.kernels
  trace.retime([k], max_runs=12, rel=-1.0)  # (no spread is within a negative share of the median: 12 runs, never settled)
  assert k.timing.n == 12 and k.timing.stable is False
  page.goto(trace.to_html(tmp_path / "index.html").as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  page.locator(".tgviz-kernels > summary").click()
  (row,) = table(page)
  assert row["spread"][0].endswith(", 12 re-runs, not settled"), row
  assert row["median"][1].startswith(f"{time_text(k.timing.median_us)}: the median of 12 runs re-timed after the run (warm, not settled); "), row
  assert trace.kernel_table()[0]["settled"] is False  # (in Python, as the row the page shows)
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  page.screenshot(path=str(ARTIFACTS / "timing-not-settled.png"))
  assert not page.errors


def test_the_rules_tab_counts_every_attempt(report, page):
  path, trace = report
  page.goto(path.as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  page.locator(".tgviz-rules-toggle").click()
  page.wait_for_selector(".tgviz-rules tr.tgviz-rule", timeout=LIMIT)
  heads = page.locator(".tgviz-rules > table th").all_inner_texts()
  assert heads == ["count", "matched", "attempts", "rate", "self", "failed", "in steps", "steps", "pattern"]
  top = trace.rules()[0]
  cells = page.locator(".tgviz-rules tr.tgviz-rule").first.locator("td").all_inner_texts()
  assert cells[:3] == [str(top.count), f"{top.matched:,}", f"{top.attempts:,}"]
  never = [r for r in trace.rules(unmatched=True) if not r.matched]
  summary = page.locator(".tgviz-rules-never > summary").inner_text()
  assert summary.startswith(f"never matched: {len(never)} patterns") and "pure overhead" in summary
  page.locator(".tgviz-rules-never > summary").click()
  costliest = max(never, key=lambda r: r.failed_us)
  first = page.locator(".tgviz-rule-never").first
  assert costliest.source.split("\n")[0] in first.inner_text()
  page.locator(".tgviz-rules > table th", has_text="self").click()  # the most time in its own attempts first
  top_self = next(r for r in trace.rules(sort="self") if r.count or r.matched)
  assert page.locator(".tgviz-rules tr.tgviz-rule").first.get_attribute("title").startswith(where(*top_self.loc) + ":")
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  page.screenshot(path=str(ARTIFACTS / "timing-rules.png"))
  assert not page.errors


def test_the_roofline_names_the_slowest_clear_of_the_points(report, page):
  path, trace = report
  page.goto(path.as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  page.locator(".tgviz-run > summary").click()
  page.locator(".tgviz-run-tab[data-tab='roofline']").click()
  page.wait_for_selector(".tgviz-roof-point", timeout=LIMIT)
  names = page.locator(".tgviz-roof-name")
  assert names.count() >= 4
  points = page.eval_on_selector_all(".tgviz-roof-point", "ps => ps.map(p => ['cx', 'cy', 'r'].map(a => Number(p.getAttribute(a))))")
  boxes = [json.loads(b) for b in names.evaluate_all("ns => ns.map(n => n.dataset.box)")]
  # on screen: each name's drawn box (its text's bounding box) clear of every point and of the other names
  drawn = names.evaluate_all("ns => ns.map(n => { const b = n.getBBox(); return [b.x, b.y, b.width, b.height]; })")
  for (bx, by, bw, bh) in drawn:
    assert all(cx + r < bx or cx - r > bx + bw or cy + r < by or cy - r > by + bh for cx, cy, r in points), (bx, by, bw, bh)
  for i, a in enumerate(drawn):
    for b in drawn[i + 1:]: assert a[0] + a[2] <= b[0] or b[0] + b[2] <= a[0] or a[1] + a[3] <= b[1] or b[1] + b[3] <= a[1], (a, b)
  assert len(boxes) == len(drawn)
  slowest = max((k for k in trace.kernels if k.run_times), key=lambda k: sum(k.run_times))
  assert slowest.display_name in names.all_text_contents()
  point = page.locator(".tgviz-roof-point[data-verdict='latency']").first
  point.dispatch_event("pointerenter")  # (another point may lie over it: hovered as the user would reach it)
  # within 4 launch floors it is the launch that costs; far above, its work on too few units (pass 11: "launch-bound" at 53×)
  said = page.locator(".tgviz-roof-hover").inner_text()
  assert "latency/launch-bound:" in said or "latency-bound, too little parallel work:" in said, said
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  page.screenshot(path=str(ARTIFACTS / "timing-roofline.png"))
  assert not page.errors


def test_time_again_in_jupyterlab(lab, browser):
  """The kernel table's "time the slowest again": kernels re-timed warm until the slowest are warm medians (at most
  AT_MOST x SLOWEST of them), their rows say so."""
  tests = str(Path(__file__).resolve().parents[1])
  with new_page(browser, 1600, 1100) as page:
    open_in_lab(page, lab, "timing", "%load_ext tgviz", TRAIN.format(tests=tests))
    run_all(page, 2)
    page.locator(".tgviz-root").wait_for(timeout=LIMIT)
    page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
    page.locator(".tgviz-kernels > summary").click()
    before = table(page)
    assert any(r["spread"][0] == "❄ 1 cold launch" for r in before) and not any("re-run" in r["spread"][0] for r in before)
    page.locator(".tgviz-retime").click()
    page.wait_for_function("[...document.querySelectorAll('.tgviz-kernels tbody tr')].some(r => r.innerText.includes('re-runs'))",
                           timeout=LIMIT)
    after = table(page)
    retimed = [r for r in after if "re-runs" in r["spread"][0]]  # "min – max, 16 re-runs": re-timed after the run
    assert 1 <= len(retimed) <= AT_MOST * SLOWEST and all(not r["median"][0].startswith("❄") for r in retimed)
    assert all(int(re.search(r"(\d+) re-runs", r["spread"][0]).group(1)) >= 10 for r in retimed)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "timing-retimed-lab.png"))
    assert not page.errors


def test_compiler_lanes_in_notebook7(nb7, browser):
  url, token, root = nb7
  (root / "timing7.ipynb").write_text(notebook("%load_ext tgviz", TRAIN.format(tests=str(Path(__file__).resolve().parents[1]))))
  with new_page(browser, 1600, 1100) as page:
    page.goto(f"{url}/notebooks/timing7.ipynb?token={token}")
    run_all(page, 2)
    page.locator(".tgviz-root").wait_for(timeout=LIMIT)
    page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
    page.errors.clear()  # (Notebook 7 itself raises "reading 'schema'" while it loads its settings)
    page.locator(".tgviz-run > summary").click()
    page.wait_for_selector(f"{CANVAS}[data-draws]", timeout=LIMIT)
    page.locator(".tgviz-tl-fit").click()
    page.wait_for_function(f"(c => c.dataset.codegen && JSON.parse(c.dataset.view)[0] === 0)(document.querySelector('{CANVAS}'))", timeout=LIMIT)
    assert "kernels' codegen" in page.locator(".tgviz-tl-compile").inner_text()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "timing-compiler-lanes-notebook7.png"))
    assert not page.errors


@pytest.mark.slow
def test_the_gpt_steps_compiler_lanes_beside_viz(gpt_run, page):
  """`tgviz run` on the GPT training step: its report's TINY lane, as VIZ's (shared/anchors/turn4/viz-tiny-lane-compile-
  time.png): each kernel's do_to_program span with its time, a click opening its steps; the kernel table's runs the
  timeline's launches (kernels sharing a program counted once), its slowest kernels re-timed."""
  out, stdout = gpt_run
  assert "timed again in" in stdout and "re-timed" in stdout
  page.goto((out / "index.html").as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  page.locator(".tgviz-kernels > summary").click()
  rows = table(page)
  assert any(r["program"][0].startswith("its launches are counted in ") for r in rows)  # E_8_4 #3's launches are E_8_4 #2's
  runs = sum(int(r["runs"][0].replace(",", "") or 0) for r in rows if r["runs"][0] != "–")
  page.locator(".tgviz-kernels > summary").click()
  page.locator(".tgviz-run > summary").click()
  page.wait_for_selector(f"{CANVAS}[data-draws]", timeout=LIMIT)
  assert int(page.locator(".tgviz-tl-count").get_attribute("data-kernels")) == runs
  page.locator(".tgviz-tl-fit").click()
  page.wait_for_function(f"(c => c.dataset.codegen && JSON.parse(c.dataset.view)[0] === 0)(document.querySelector('{CANVAS}'))", timeout=LIMIT)
  canvas = page.locator(CANVAS)
  x, y, w, h = json.loads(canvas.get_attribute("data-codegen"))
  box = canvas.bounding_box()
  page.mouse.move(box["x"] + x + w / 2, box["y"] + y + h / 2)
  tip = page.locator(".tgviz-tl-tip")
  tip.wait_for(state="visible", timeout=LIMIT)
  assert re.match(r"do_to_program for \S+ \(a kernel's codegen\) on TINY\nstart .* · duration ", tip.inner_text())
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  page.screenshot(path=str(ARTIFACTS / "timing-gpt-compiler-lanes.png"))
  assert not page.errors
