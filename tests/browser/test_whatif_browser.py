"""What if (#25) in a real browser: the shown kernel's opts and the what-if sheet in JupyterLab and Notebook 7 (the editor
retries the kernel and the retry opens as a comparison; a refused opt says tinygrad's message), and the HTML report,
read-only: the opts, the retries made before it was written, BEAM's candidates as a table and a scatter."""
import re

import pytest
from harness import ARTIFACTS, TUTORIAL, new_page, notebook, open_in_lab, run_all
from test_notebook7_browser import run_from_tree

import tgviz

OPTS_LINE = "opts (heuristic): UNROLL(1, 0) · UNROLL(0, 0) · LOCAL(0, 2) · LOCAL(0, 2) what if…"


@pytest.fixture
def page(browser):
  with new_page(browser, height=1100) as p: yield p


def _open_conv(page) -> None:
  """Open the conv's kernel from the kernel table (its opts in the table's last column) and wait for its opts line."""
  table = page.locator(".tgviz-kernels").first
  table.locator("summary").click()
  row = table.locator("tbody tr", has_text="r_2_2_2_2")
  assert row.locator("td").last.inner_text() == "UNROLL(1, 0) · UNROLL(0, 0) · LOCAL(0, 2) · LOCAL(0, 2) (heuristic)"
  row.click()
  page.wait_for_function(f"document.querySelector('.tgviz-opts-line')?.innerText === {OPTS_LINE!r}", timeout=60_000)
  # each opt links to the rewrite step its application made
  page.locator(".tgviz-opt-link", has_text="LOCAL(0, 2)").nth(1).click()
  page.wait_for_function("document.querySelector('.tgviz-step.selected')?.innerText.startsWith('shift (3,) 2 local')", timeout=60_000)


REFUSAL = ("tinygrad refused UPCAST(0, 3): 3 does not divide the axis's size, {size} (an amount must divide it; 0 takes the "
           "whole axis). Try an opt from the + add list of the what-if editor (kernel.allowed_opts() in Python): tinygrad accepts those here.")


def check_refusal(sheet, kernel: str, size: int) -> None:
  """A refused opt (UPCAST by 3 of an axis of size) is said once, as a sentence (what, why, what to try), as text: no
  Python repr of tinygrad's (UOp(...)), no markup; its entry in the retries' list only says it was refused."""
  status = sheet.locator(".tgviz-whatif-status")
  assert status.inner_text() == REFUSAL.format(size=size) and status.locator("*").count() == 0
  text = sheet.inner_text()
  assert text.count("does not divide") == 1 and "UOp(" not in text and "can't divide" not in text, text
  assert sheet.locator(".tgviz-retry-result.refused").inner_text() == f"retry of {kernel} with UPCAST(0, 3): refused"


def check_time_labels(sheet, runs: int, by: str) -> None:
  """Each time says what it is: the retry's entry the median of its runs, the comparison the runs and their total."""
  summary = sheet.locator(".tgviz-retry-result.same").first.inner_text()
  median = re.search(rf"median of {runs} runs ([\d.]+) µs -> ([\d.]+) µs \(same inputs\)$", summary)
  assert median, summary
  th = sheet.locator(".tgviz-whatif-compare .tgviz-pairs th")
  heads = [t.split("\n")[0].rstrip(" ▲▼") for t in th.all_inner_texts()]  # a column's label, then its sides' names
  at = heads.index("runs")  # right after the code column, on screen, each side's value one above the other
  assert heads[at - 1: at + 2] == ["code", "runs", "total µs"], heads
  assert [th.nth(at + i).locator("button").all_inner_texts() for i in (0, 1)] == [[f"original ({by})", "retry"]] * 2
  cells = sheet.locator(".tgviz-whatif-compare .tgviz-pairs tbody tr").first.locator("td")
  sides = [cells.nth(at + i).locator(".side") for i in (0, 1)]
  assert [int(t) for t in sides[0].all_inner_texts()] == [runs, runs]
  assert all(s.nth(i).is_visible() and s.nth(i).bounding_box()["x"] + s.nth(i).bounding_box()["width"]
             <= sheet.page.viewport_size["width"] for s in sides for i in (0, 1))
  total_a, total_b = (float(t.replace(",", "")) for t in sides[1].all_inner_texts())  # over half the runs took the median or longer
  least = (runs // 2 + 1) * 0.99
  assert total_a >= least * float(median.group(1)) and total_b >= least * float(median.group(2)), (cells, summary)


def _retry_in_sheet(page, shot: str) -> None:
  """Open the sheet from the opts line; retry with no opts (the comparison opens, outputs match), then with an amount
  tinygrad refuses (its message, no comparison); the sheet's screenshot to ARTIFACTS/shot."""
  page.locator(".tgviz-opts-line .tgviz-what-if").click()
  sheet = page.locator(".tgviz-whatif-sheet")
  page.wait_for_function("/allowed/.test(document.querySelector('.tgviz-opt-add')?.options[0].text)", timeout=60_000)
  assert sheet.locator(".tgviz-opt").count() == 4
  sheet.locator(".tgviz-opts-none").click()
  assert sheet.locator(".tgviz-opt").count() == 0
  sheet.locator(".tgviz-retry").click()
  page.wait_for_selector(".tgviz-whatif-compare .tgviz-pairs tbody tr", timeout=120_000)
  assert sheet.locator(".tgviz-whatif-compare .tgviz-pairs tbody tr td").first.inner_text() == "given"
  assert "original (heuristic) vs retry" in sheet.locator(".tgviz-whatif-compare .tgviz-summary").inner_text()
  page.wait_for_selector(".tgviz-retry-result.same", timeout=30_000)
  assert "retry of r_2_2_2_2 with no opts: r_2_2_2_2, outputs match" in sheet.locator(".tgviz-retry-result").first.inner_text()
  check_time_labels(sheet, 5, "heuristic")
  sheet.locator(".tgviz-whatif-compare .tgviz-pairs tbody tr").first.click()  # the pair: the code diff, both kernels' graphs
  page.wait_for_selector(".tgviz-whatif-compare .tgviz-pair:not([hidden]) .tgviz-landmark svg g.node", timeout=60_000)
  # an opt tinygrad refuses: UPCAST by 3 of an axis of 2
  sheet.locator(".tgviz-opt-add").select_option(label="UPCAST(0, 0)")
  sheet.locator(".tgviz-opt-amount").fill("3")
  sheet.locator(".tgviz-opt-amount").dispatch_event("change")
  sheet.locator(".tgviz-retry").click()
  page.wait_for_selector(".tgviz-retry-result.refused", timeout=60_000)
  check_refusal(sheet, "r_2_2_2_2", 2)
  assert sheet.locator(".tgviz-whatif-compare .tgviz-pairs").count() == 0
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  sheet.screenshot(path=str(ARTIFACTS / shot))


def test_what_if_in_jupyterlab(lab, page):
  open_in_lab(page, lab, "whatif", "%load_ext tgviz", TUTORIAL)
  run_all(page, 2)
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=180_000)
  _open_conv(page)
  _retry_in_sheet(page, "whatif-lab.png")
  assert not page.errors


def test_what_if_in_notebook7(nb7, browser):
  url, token, root = nb7
  (root / "whatif7.ipynb").write_text(notebook("%load_ext tgviz", TUTORIAL))
  ctx = browser.new_context(viewport={"width": 1600, "height": 1100})
  try:
    page = run_from_tree(ctx, url, token, "whatif7.ipynb", timeout=180_000)
    _open_conv(page)
    _retry_in_sheet(page, "whatif-nb7.png")
    assert not page.errors
  finally: ctx.close()


def test_what_if_in_the_report(tmp_path, page):
  from tinygrad import Tensor
  a, b = Tensor.rand(8, 8, device="CPU").realize(), Tensor.rand(8, 8, device="CPU").realize()
  with tgviz.capture("CPU", env={"BEAM": 2, "CACHELEVEL": 0}) as trace: (a @ b).realize()
  (k,) = trace.kernels
  retried = k.retry([])
  assert retried.same
  k.retry([("UPCAST", 0, 3)])  # refused: the report lists it too
  trace.to_html(tmp_path / "index.html")
  page.goto((tmp_path / "index.html").as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=60_000)
  page.locator(".tgviz-kernels summary").click()
  page.locator(".tgviz-kernels tbody tr", has_text=k.name).click()
  line = f"opts (BEAM): {' · '.join(map(str, k.opts))} what if…"
  page.wait_for_function(f"document.querySelector('.tgviz-opts-line')?.innerText === {line!r}", timeout=30_000)
  page.locator(".tgviz-opts-line .tgviz-what-if").click()
  sheet = page.locator(".tgviz-whatif-sheet")
  assert sheet.locator(".tgviz-opts-editor").count() == 0 and "read-only" in sheet.inner_text()  # no kernel to retry with
  results = sheet.locator(".tgviz-retry-result")
  assert results.count() == 2 and "outputs match" in results.nth(0).inner_text() and "refused" in results.nth(1).inner_text()
  results.nth(1).click()  # the refusal, said once
  check_refusal(sheet, k.display_name, 8)
  sheet.screenshot(path=str(ARTIFACTS / "whatif-report-refused.png"))
  results.nth(0).click()
  page.wait_for_selector(".tgviz-whatif-compare .tgviz-pairs tbody tr", timeout=30_000)
  check_time_labels(sheet, 5, "BEAM")
  # BEAM's candidates: every one in the table, the timed ones in the scatter, its choice marked
  assert sheet.locator(".tgviz-beam tbody tr").count() == len(k.search.candidates)
  assert sheet.locator(".tgviz-beam-scatter circle").count() == len(k.search.timed)
  assert sheet.locator(".tgviz-beam-scatter circle.winner").count() >= 1
  sheet.locator(".tgviz-beam th", has_text="time (µs)").click()  # sortable: the slowest first, the untimed last
  times = sheet.locator(".tgviz-beam tbody tr td:nth-child(5)").all_inner_texts()
  shown = [float(t.replace(",", "")) for t in times if t != "–"]
  assert shown == sorted(shown, reverse=True) and len(shown) == len(k.search.timed)
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  sheet.screenshot(path=str(ARTIFACTS / "whatif-report.png"))
  # one sheet at a time, and Escape closes the open one: what if… gives way to the kernel table and the run's tabs
  sheets = {name: page.locator(f"details.tgviz-{name}") for name in ("whatif", "kernels", "run")}
  def shown() -> list[str]: return [n for n, d in sheets.items() if d.evaluate("d => d.open")]
  assert shown() == ["whatif"]
  sheets["kernels"].locator("> summary").click()
  assert shown() == ["kernels"]
  sheets["run"].locator("> summary").click()
  assert shown() == ["run"]
  sheets["whatif"].locator("> summary").click()  # the top line's (the run's sheet covers the kernel's own line)
  assert shown() == ["whatif"]
  page.locator(".tgviz-root.tgviz-page").focus()
  page.keyboard.press("Escape")
  assert shown() == []
  assert not page.errors
