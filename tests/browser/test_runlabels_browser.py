"""What the run views write beside what they draw, read as a new user reads it on the GPT training step's report (`tgviz
run`) at a laptop's 1366x900 and at 1000x900: the roofline's roof labels clear of the kernels' points, the timeline's
numbers of the slowest launches never over one another nor run together (one left out still named by its box's tip), and the kernel
table's rows of kernels that share a program saying in words where their launches are counted."""
import itertools
import json
import re
from pathlib import Path

import pytest
from harness import ARTIFACTS, LIMIT, new_page

CANVAS = ".tgviz-tl-canvas"
WIDTHS = [1366, 1000]


@pytest.fixture(scope="module")
def gpt(gpt_run) -> Path:
  """`tgviz run`'s report of the GPT training step (its slowest kernels re-timed, its devices' peaks measured)."""
  return gpt_run[0] / "index.html"


def opened(page, report: Path, tab: str | None = None) -> None:
  """The report, its run views open on tab (None: the kernel table open instead)."""
  page.goto(report.as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  if tab is None:
    page.locator(".tgviz-kernels > summary").click()
    return
  page.locator(".tgviz-run > summary").click()
  page.locator(f".tgviz-run-tab[data-tab='{tab}']").click()
  page.wait_for_selector(f".tgviz-run-pane[data-tab='{tab}'] > div", timeout=LIMIT)


def disjoint(a: list[float], b: list[float], gap: float = 0) -> bool:
  """Whether two boxes [x, y, width, height] have no area in common (and, side by side, gap px between them)."""
  return a[0] + a[2] + gap <= b[0] or b[0] + b[2] + gap <= a[0] or a[1] + a[3] <= b[1] or b[1] + b[3] <= a[1]


def meets_circle(box: list[float], cx: float, cy: float, r: float) -> bool:
  """Whether a box [x, y, width, height] and a disc meet: the box's point nearest to the centre lies within r."""
  nx, ny = min(max(cx, box[0]), box[0] + box[2]), min(max(cy, box[1]), box[1] + box[3])
  return (nx - cx) ** 2 + (ny - cy) ** 2 < r * r


@pytest.mark.parametrize("width", WIDTHS)
def test_roof_labels_cover_no_point(gpt, browser, width):
  """Each roof's label ("CL memory 25.7 GB/s") is written on the plot where no kernel's point is (its circle, stroke
  included), nor its roof's line or another label, at the roofline's text size."""
  with new_page(browser, width, 900, offline=True) as page:
    opened(page, gpt, "roofline")
    page.wait_for_selector(".tgviz-roof-point", timeout=LIMIT)
    labels = page.eval_on_selector_all(".tgviz-roof-label", """ns => ns.map(n => { const b = n.getBBox();
      return {text: n.textContent, box: [b.x, b.y, b.width, b.height], px: parseFloat(getComputedStyle(n).fontSize)}; })""")
    devices = page.eval_on_selector_all(".tgviz-roof-peak", "ps => ps.map(p => p.dataset.device)")
    assert sorted(x["text"].split(" ")[:2] for x in labels) == sorted([d, k] for d in devices for k in ("compute", "memory")), labels
    points = page.eval_on_selector_all(".tgviz-roof-point",
                                       "ps => ps.map(p => ['cx', 'cy', 'r', 'stroke-width'].map(a => Number(p.getAttribute(a))))")
    names = page.eval_on_selector_all(".tgviz-roof-name", "ns => ns.map(n => { const b = n.getBBox(); return [b.x, b.y, b.width, b.height]; })")
    lines = page.eval_on_selector_all(".tgviz-roof-line", "ls => ls.map(l => l.getAttribute('points').split(' ').map(p => p.split(',').map(Number)))")
    vw, vh = (float(v) for v in page.locator(".tgviz-roof-svg").get_attribute("viewBox").split()[2:])
    assert len(points) > 50
    for n, label in enumerate(labels):
      box = label["box"]
      assert label["px"] >= 11 and box[0] >= 0 and box[0] + box[2] <= vw and box[1] >= 0 and box[1] + box[3] <= vh, label
      covered = [p for p in points if meets_circle(box, p[0], p[1], p[2] + p[3] / 2)]
      assert not covered, (label, covered)
      assert all(disjoint(box, o["box"]) for o in labels[n + 1:]) and all(disjoint(box, b) for b in names), label
      for line in lines:  # (a line struck through a label would make it hard to read)
        for (x0, y0), (x1, y1) in itertools.pairwise(line):
          steps = int(max(abs(x1 - x0), abs(y1 - y0))) + 1
          assert not any(box[0] < x0 + (x1 - x0) * s / steps < box[0] + box[2] and box[1] < y0 + (y1 - y0) * s / steps < box[1] + box[3]
                         for s in range(steps + 1)), label
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.locator(".tgviz-roof-svg").screenshot(path=str(ARTIFACTS / f"runlabels-roofline-gpt-{width}.png"))
    assert not page.errors


@pytest.mark.parametrize("width", WIDTHS)
def test_slowest_launches_numbers_never_overlap(gpt, browser, width):
  """The timeline numbers the slowest kernel launches: the numbers written never overlap one another, as it opens and on
  the whole run (where the launches crowd together); one left out is still named by its box's tip ("slowest #n")."""
  with new_page(browser, width, 900, offline=True) as page:
    opened(page, gpt, "timeline")
    canvas = page.locator(CANVAS)
    page.wait_for_selector(f"{CANVAS}[data-marks]", timeout=LIMIT)
    listed = page.locator(".tgviz-tl-slowest .tgviz-link").count()
    for view in ("opening", "whole run"):
      if view == "whole run":
        before = canvas.get_attribute("data-view")
        page.locator(".tgviz-tl-fit").click()
        page.wait_for_function(f"document.querySelector('{CANVAS}').dataset.view !== '{before}'", timeout=LIMIT)
      marks = json.loads(canvas.get_attribute("data-marks"))
      ranks = sorted(r for r, _, _ in marks)
      # every slowest launch in view is outlined: all of them on the whole run, and as it opens unless the opening leaves
      # launches out (it says so: a pause on a busy machine can split the step's launches)
      if view == "whole run" or "left out of that view" not in page.locator(".tgviz-tl-shown").inner_text():
        assert ranks == list(range(1, listed + 1)), marks
      assert set(ranks) <= set(range(1, listed + 1)) and ranks, marks
      numbers = [label for _, _, label in marks if label]
      assert numbers and marks[0][2], marks  # the slowest in view is always numbered
      for n, a in enumerate(numbers):
        assert all(disjoint(a, b, 3) for b in numbers[n + 1:]), (view, marks)  # (a space apart: "5" and "4" not read as "54")
      ARTIFACTS.mkdir(parents=True, exist_ok=True)
      page.locator(".tgviz-tl-box").screenshot(path=str(ARTIFACTS / f"runlabels-timeline-gpt-{width}-{view.replace(' ', '-')}.png"))
      if view == "opening":
        box = canvas.bounding_box()
        for rank, (x, y, w, h), label in marks:
          if label: continue
          page.mouse.move(box["x"] + x + w / 2, box["y"] + y + h / 2)
          page.wait_for_function(f"(t => !t.hidden && t.innerText.includes(' · slowest #{rank}'))(document.querySelector('.tgviz-tl-tip'))",
                                 timeout=LIMIT)
        page.mouse.move(box["x"] + 2, box["y"] + 2)
    assert not page.errors


SHARED = re.compile(r"its launches are counted in (.+)'s row \(same program\)")


def test_kernel_table_says_where_a_shared_programs_launches_are_counted(gpt, browser):
  """A kernel that compiled to the same program as one before it (the GPT step's E_8_4 #3, E_8_4 #2's) runs 0 times in
  its row, which says in words that its launches are counted in that kernel's row; that row says it counts them.
  Sorted by runs, the rows stay whole and in order."""
  with new_page(browser, 1366, 900, offline=True) as page:
    opened(page, gpt)
    heads = [t.rstrip(" ▲▼") for t in page.locator(".tgviz-kernels thead th").all_inner_texts()]
    read = lambda: [dict(zip(heads, r, strict=True)) for r in page.eval_on_selector_all(  # noqa: E731
      ".tgviz-kernels tbody tr", "rs => rs.map(r => [...r.cells].map(c => c.innerText.replaceAll('\u00a0', ' ')))")]
    rows = read()
    by_name = {r["kernel"]: r for r in rows}
    shared = [(r, m.group(1)) for r in rows if (m := SHARED.fullmatch(r["program"]))]
    assert shared, [r["program"] for r in rows if r["program"]]
    for row, first in shared:
      assert row["runs"] == "0" and first in by_name and by_name[first]["runs"] != "0", (row, first)
      says = re.fullmatch(r"also counts (.+)'s launches \(same program\)", by_name[first]["program"])
      assert says and row["kernel"] in says.group(1).split("'s, "), by_name[first]
    assert not [r["program"] for r in rows if r["program"] and not SHARED.fullmatch(r["program"]) and "(same program)" not in r["program"]]
    cell = page.locator(".tgviz-kernels tbody tr", has=page.locator("td", has_text=re.compile(f"^{re.escape(shared[0][0]['kernel'])}$")))
    cell.locator("td").nth(heads.index("program")).scroll_into_view_if_needed()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "runlabels-kernel-table-gpt.png"))
    page.locator(".tgviz-kernels th", has_text=re.compile("^runs")).click()  # the most launches first, the shared ones' 0 last
    page.wait_for_selector(".tgviz-kernels th[data-sort='desc']", timeout=LIMIT)
    after = read()
    assert sorted(map(json.dumps, after)) == sorted(map(json.dumps, rows))
    runs = [int(r["runs"].replace(",", "")) for r in after if r["runs"] != "–"]
    assert runs == sorted(runs, reverse=True) and all(r["runs"] == "0" for r, _ in shared)
    assert not page.errors
