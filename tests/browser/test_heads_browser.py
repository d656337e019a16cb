"""Heads as a user reads them in the HTML report: the roofline's says each thing once (its axes, then each device's
peaks, their benchmark's date once), no phrase or figure twice in a line."""
import re

import pytest
import workloads
from harness import ARTIFACTS, LIMIT, new_page
from test_runtime_browser import open_tab

import tgviz


@pytest.fixture(scope="module")
def report(tmp_path_factory):
  with tgviz.capture() as trace: workloads.tutorial()
  return trace, trace.to_html(tmp_path_factory.mktemp("heads") / "index.html")


@pytest.fixture
def page(browser):
  with new_page(browser, 1500, 1000, offline=True) as p: yield p


def repeated(line: str, n: int = 2) -> list[str]:
  """The runs of n words (or a figure alone) that a line says more than once."""
  words = re.findall(r"[\w.,/+-]+", line.lower())
  grams = [" ".join(words[i:i + n]) for i in range(len(words) - n + 1)] + [w for w in words if re.fullmatch(r"\d[\d.,]*\d", w)]
  return sorted({g for g in grams if grams.count(g) > 1})


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
