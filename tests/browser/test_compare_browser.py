"""Comparisons in a real browser: the CompareWidget in JupyterLab (two %%tgviz cells, the second --compare'd with the
first) and the HTML comparison page offline; the kernel tables of the trace widget and the report, sortable."""
import pytest
from harness import ARTIFACTS, new_page, open_in_lab, run_all
from workloads import EXAMPLES, example

import tgviz

CONV = (EXAMPLES / "conv2d_3x3.py").read_text()

ROWS = "document.querySelectorAll('.tgviz-pairs tbody tr')"
COLUMN = "(i) => [...document.querySelectorAll('.tgviz-pairs tbody tr')].map((r) => r.cells[i].textContent)"


@pytest.fixture
def page(browser):
  with new_page(browser, height=1100) as p: yield p


def _open_row(page, name: str) -> None:
  """Click the pair table's row that has kernel name on either side; wait for its diff and graphs."""
  row = page.locator(".tgviz-pairs tbody tr", has=page.locator("td", has_text=name)).first
  index = row.get_attribute("data-index")
  row.click()
  try: page.wait_for_function(f"document.querySelector('.tgviz-pair').dataset.index === '{index}'", timeout=120_000)
  except Exception as e:
    raise AssertionError(f"pair {name} did not open: {page.locator('.tgviz-compare .tgviz-status').inner_text()!r}") from e
  page.wait_for_selector(".tgviz-pair:not([hidden]) .tgviz-landmark svg g.node", timeout=60_000)


def test_compare_widget_in_jupyterlab(lab, page):
  open_in_lab(page, lab, "compare", "%load_ext tgviz", "%%tgviz -o general\n" + CONV,
              "%%tgviz -o winograd --env WINO=1 --compare general\n" + CONV)
  run_all(page, 3)
  page.wait_for_selector(".tgviz-compare .tgviz-pairs tbody tr", timeout=180_000)
  # the trace widget of the first cell: its kernel table, sortable; a row opens that kernel's first step
  kernels = page.locator(".tgviz-kernels").first
  kernels.locator("summary").click()
  names = kernels.locator("tbody tr td:first-child").all_inner_texts()
  assert names == ["E_2 #1", "E_6_3_2", "E_2 #2", "E_3_3", "r_4_4_3_3"]  # same-named kernels told apart
  kernels.locator("th", has_text="FLOPs").click()  # first click: the most FLOPs first
  assert kernels.locator("tbody tr td:first-child").first.inner_text() == "E_6_3_2"
  kernels.locator("tbody tr", has_text="r_4_4_3_3").click()
  page.wait_for_function("document.querySelector('.tgviz-code-head').innerText.startsWith('r_4_4_3_3')", timeout=30_000)
  # the second cell's comparison: pairs, then the kernels only one side has
  assert page.evaluate(COLUMN, 0) == ["ast"] * 4 + ["only a"] + ["only b"] * 3
  assert page.evaluate(COLUMN, 2)[-3:] == ["E_6_6 #1", "E_6_6 #2", "E_4_4"] and page.evaluate(COLUMN, 3)[:4] == ["same"] * 4
  assert "general vs winograd" in page.locator(".tgviz-compare .tgviz-summary").inner_text()
  _open_row(page, "r_4_4_3_3")
  detail = page.locator(".tgviz-pair")
  assert "only in general" in detail.locator(".tgviz-diff").inner_text()
  sides = detail.locator(".tgviz-pair-side")
  assert sides.nth(0).get_attribute("data-kernel") == "r_4_4_3_3" and "no such kernel" in sides.nth(1).inner_text()
  assert [s.get_attribute("data-step") for s in sides.nth(0).locator(".tgviz-landmark").all()] == ["View Base AST", "View Program"]
  _open_row(page, "E_6_3_2")
  assert "the same code on both sides" in detail.locator(".tgviz-diff").inner_text()
  assert detail.locator(".tgviz-pair-side .tgviz-landmark svg").count() == 4  # both kernels' landmark graphs, side by side
  page.locator(".tgviz-pairs th", has_text="winograd total µs").click()  # sort by side b's measured time: the blank a-only row last
  assert page.evaluate(COLUMN, 2)[-1] == "–"
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  page.locator(".tgviz-compare").screenshot(path=str(ARTIFACTS / "compare-widget.png"))
  assert not page.errors


def test_comparison_page_offline(tmp_path, browser):
  traces = []
  for env in ({}, {"IMAGE": 1}):
    with tgviz.capture(env=env) as t: example("conv2d_3x3.py")
    traces.append(t)
  path = tgviz.compare(*traces, labels=("general", "IMAGE=1")).to_html(tmp_path / "index.html")
  ctx = browser.new_context(viewport={"width": 1500, "height": 1100}, offline=True)
  page, requests, errors = ctx.new_page(), [], []
  page.on("request", lambda r: requests.append(r.url))
  page.on("pageerror", lambda e: errors.append(str(e)))
  page.goto(path.as_uri())
  page.wait_for_selector(".tgviz-pairs tbody tr", timeout=30_000)
  assert page.evaluate(f"{ROWS}.length") == 4 + 1 + 3
  _open_row(page, "E_6_2_3")
  diff = page.locator(".tgviz-diff")
  assert diff.locator(".add").count() > 0 and diff.locator(".del").count() > 0 and "+++ E_6_2_3" in diff.inner_text()
  assert [s.get_attribute("data-kernel") for s in page.locator(".tgviz-pair-side").all()] == ["E_6_3_2", "E_6_2_3"]
  page.locator(".tgviz-pairs th", has_text="general FLOPs").click()  # sortable: the most FLOPs first, the b-only rows last
  flops = page.evaluate(COLUMN, 10)  # after how, the names, code, the runs and their times
  values = [int(v.replace(",", "")) for v in flops if v != "–"]
  assert values == sorted(values, reverse=True) and flops[-3:] == ["–"] * 3
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  page.screenshot(path=str(ARTIFACTS / "compare-report.png"))
  assert all(u.startswith(("file:", "blob:", "data:")) for u in requests), requests
  assert not errors
  ctx.close()


def test_report_kernel_table(tutorial_trace, tmp_path, page):
  tutorial_trace.to_html(tmp_path / "index.html")
  page.goto((tmp_path / "index.html").as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=30_000)
  page.locator(".tgviz-kernels summary").click()
  rows = page.locator(".tgviz-kernels tbody tr")
  assert rows.count() == len(tutorial_trace.kernels)
  names = page.locator(".tgviz-kernels tbody tr td:first-child").all_inner_texts()
  assert names == [k.display_name for k in tutorial_trace.kernels] and "E_3 #2" in names
  page.locator(".tgviz-kernels th", has_text="bytes").click()  # numbers sort numerically, the biggest first
  column = page.locator(".tgviz-kernels th").all_inner_texts().index("bytes") + 1
  moved = [int(v.replace(",", "")) for v in page.locator(f".tgviz-kernels tbody tr td:nth-child({column})").all_inner_texts()]
  assert moved == sorted(moved, reverse=True) and sorted(moved) == sorted(r["bytes"] for r in tutorial_trace.kernel_table())
  page.locator(".tgviz-kernels tbody tr", has_text="r_2_2_2_2").click()
  page.wait_for_function("document.querySelector('.tgviz-step.selected')?.innerText.startsWith('View Base AST') && "
                         "document.querySelector('.tgviz-code-head').innerText.startsWith('r_2_2_2_2')", timeout=30_000)
  assert not page.errors
