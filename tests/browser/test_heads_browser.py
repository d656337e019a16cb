"""Heads as a user reads them in the HTML report: the roofline's says each thing once (its axes, then each device's
peaks, their benchmark's date once), no phrase or figure twice in a line; the comparison page's two graphs of a pair
look alike (neither shows a title or legend the other does not; one legend for both)."""
import re

import pytest
import workloads
from harness import ARTIFACTS, LIMIT, new_page
from test_runtime_browser import open_tab
from test_units_browser import TIME
from workloads import example

import tgviz


@pytest.fixture(scope="module")
def report(tmp_path_factory):
  with tgviz.capture() as trace: workloads.tutorial()
  return trace, trace.to_html(tmp_path_factory.mktemp("heads") / "index.html")


@pytest.fixture
def page(browser):
  with new_page(browser, 1500, 1000, offline=True) as p: yield p


def repeated(line: str, n: int = 2) -> list[str]:
  """The runs of n words that a line says more than once, and the figures it says twice: before the same word
  ("31.1 GFLOP/s, ... 31.1 GFLOP/s") or once bare ("31.1 GFLOP/s (...: 31.1)"). One value before two different words
  is two things (a device's 20 GB/s, measured, and its benchmark's 20 launches: a CI run's page that said each once)."""
  words = re.findall(r"[\w.,/+-]+", line.lower())
  grams = [" ".join(words[i:i + n]) for i in range(len(words) - n + 1)]
  # each figure with the word after it (its unit), "" where none follows
  figures = [(w, words[i + 1].rstrip(".,") if i + 1 < len(words) and not re.fullmatch(r"[\d.,]+", words[i + 1]) else "")
             for i, w in enumerate(words) if re.fullmatch(r"\d[\d.,]*\d", w)]
  twice = {f for i, (f, unit) in enumerate(figures)
           if any(g == f and (u == unit or "" in (u, unit)) for j, (g, u) in enumerate(figures) if j != i)}
  return sorted({g for g in grams if grams.count(g) > 1} | twice)


def test_the_roofline_head_says_each_thing_once(report, page):
  trace, path = report
  page.goto(path.as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  open_tab(page, "roofline")
  head = page.locator(".tgviz-roof-head")
  peaks = page.locator(".tgviz-roof-peak").all_inner_texts()
  assert peaks and all(re.match(r"\w+: [\d.,]+ GFLOP/s, [\d.,]+ GB/s, ridge [\d.,]+ FLOP/B", p) for p in peaks), peaks
  lines = head.inner_text().splitlines()
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  page.screenshot(path=str(ARTIFACTS / "heads-roofline.png"))
  assert all(not repeated(ln) for ln in lines), [(ln, repeated(ln)) for ln in lines]
  dates = {pk.measured for pk in trace.roofline().peaks.values()}
  assert all(head.inner_text().count(d) == 1 for d in dates), head.inner_text()  # the date once, not on each device's line


# what of each landmark box's graph shows on screen: its title, banner and legend, each drawn inside the box or not
SHOWN = """() => [...document.querySelectorAll('.tgviz-pair .tgviz-landmark-svg')].map((b) => {
  const r = b.getBoundingClientRect();
  const seen = (e) => { if (!e || !e.getClientRects().length) return false; const q = e.getBoundingClientRect();
    return q.right > r.left && q.left < r.right && q.bottom > r.top && q.top < r.bottom; };
  const svg = b.querySelector('svg');
  return [b.closest('.tgviz-landmark').dataset.step, b.closest('.tgviz-pair-side').dataset.kernel,
          ['text.title', 'text.banner', 'g.legend', 'g.side > text.title'].filter((s) => seen(svg.querySelector(':scope > ' + s)))]; })"""


def test_a_pairs_two_graphs_look_alike(tmp_path, page):
  traces = []
  for env in ({}, {"IMAGE": 1}):
    with tgviz.capture(env=env) as t: example("conv2d_3x3.py")
    traces.append(t)
  path = tgviz.compare(*traces, labels=("general", "IMAGE=1")).to_html(tmp_path / "index.html")
  page.goto(path.as_uri())
  page.wait_for_selector(".tgviz-pairs tbody tr", timeout=LIMIT)
  # (and its sides' rewrite times read as every duration does: 3 significant figures, tests/browser/test_units_browser.py)
  rewrite = page.eval_on_selector_all(".tgviz-counts tbody tr", "rs => rs.map((r) => r.cells[4].textContent)")
  assert len(rewrite) == 2 and all(re.fullmatch(TIME, t) for t in rewrite), rewrite
  paired = page.locator(".tgviz-pairs tbody tr").filter(has=page.locator("td:first-child", has_text=re.compile(r"^(ast|name)$")))
  assert paired.count() >= 4
  for i in range(paired.count()):  # every pair of kernels, one on each side
    row = paired.nth(i)
    index = row.get_attribute("data-index")
    row.click()
    page.wait_for_function(f"document.querySelector('.tgviz-pair').dataset.index === '{index}'", timeout=LIMIT)
    page.wait_for_selector(".tgviz-pair:not([hidden]) .tgviz-landmark svg g.side g.node", timeout=LIMIT)
    shown = page.evaluate(SHOWN)
    by_step: dict[str, list] = {}
    for step, _kernel, parts in shown: by_step.setdefault(step, []).append(parts)
    assert all(len(sides) == 2 and sides[0] == sides[1] for sides in by_step.values()), (index, shown)
    legend = page.locator(".tgviz-pair .tgviz-pair-legend")  # one legend for both sides, its families named
    assert legend.count() == 1 and legend.is_visible() and "load / index" in legend.text_content()
    page.locator(".tgviz-pair").screenshot(path=str(ARTIFACTS / f"heads-compare-pair-{i}.png"))


def test_a_pairs_legend_wraps_whole_in_a_narrow_column(tmp_path, browser):
  """In a notebook's column (some 760 px), the pair's colour legend wraps: every item, swatch and name, whole inside the
  pair's box (it was one long graph, cut at "rewr")."""
  traces = []
  for env in ({}, {"IMAGE": 1}):
    with tgviz.capture(env=env) as t: example("conv2d_3x3.py")
    traces.append(t)
  path = tgviz.compare(*traces, labels=("general", "IMAGE=1")).to_html(tmp_path / "index.html")
  with new_page(browser, 760, 900, offline=True) as page:
    page.goto(path.as_uri())
    page.wait_for_selector(".tgviz-pairs tbody tr", timeout=LIMIT)
    page.locator(".tgviz-pairs tbody tr").first.click()
    page.wait_for_selector(".tgviz-pair:not([hidden]) .tgviz-landmark svg g.side g.node", timeout=LIMIT)
    legend = page.locator(".tgviz-pair .tgviz-pair-legend")
    legend.scroll_into_view_if_needed()
    items = legend.evaluate("""l => { const box = l.closest('.tgviz-pair').getBoundingClientRect();
      return [...l.querySelectorAll('g.node')].map((g) => { const r = g.getBoundingClientRect(), s = g.closest('svg').getBoundingClientRect();
        return {name: g.textContent, left: r.left, right: r.right, svg: s.right, box: box.right}; }); }""")
    names = [i["name"] for i in items]
    assert "load / index" in names and any(n.startswith("rewr") for n in names) and len(names) >= 10, names
    assert all(i["right"] <= i["svg"] + 0.5 and i["right"] <= i["box"] + 0.5 for i in items), items
    page.locator(".tgviz-pair .tgviz-hint").last.screenshot(path=str(ARTIFACTS / "heads-compare-legend-narrow.png"))
    assert not page.errors
