"""What if (#25) in a real browser: the shown kernel's opts and the what-if sheet in JupyterLab and Notebook 7 (the editor
retries the kernel and the retry opens as a comparison; a refused opt says tinygrad's message), and the HTML report,
read-only: the opts, the retries made before it was written, BEAM's candidates as a table and a scatter."""
import re

import pytest
from harness import ARTIFACTS, ATTENTION, LIMIT, TUTORIAL, new_page, notebook, open_in_lab, run_all, shown_labels_px
from helpers import TIME, read_time
from test_notebook7_browser import run_from_tree

import tgviz
from tgviz.trace.retime import APART, NOISE
from tgviz.trace.whatif import BESIDE

OPTS_LINE = "opts (heuristic): UNROLL(1, 0) · UNROLL(0, 0) · LOCAL(0, 2) · LOCAL(0, 2) what if…"


@pytest.fixture
def page(browser):
  with new_page(browser, height=1100) as p: yield p


def _open_conv(page) -> None:
  """Open the conv's kernel from the kernel table (its opts in the table's last column) and wait for its opts line."""
  table = page.locator(".tgviz-kernels").first
  table.locator("summary").click()
  row = table.locator("tbody tr", has_text="r_2_2_2_2")
  opts = row.locator("td").last.inner_text()  # (each opt's own space a no-break one: the cell wraps between opts)
  assert opts.replace("\u00a0", " ") == "UNROLL(1, 0) · UNROLL(0, 0) · LOCAL(0, 2) · LOCAL(0, 2) (heuristic)", opts
  row.click()
  page.wait_for_function(f"document.querySelector('.tgviz-opts-line')?.innerText === {OPTS_LINE!r}", timeout=LIMIT)
  # each opt says what it does, amount 0 spelled out, and which of tinygrad's steps shows it (pass 18: "UPCAST(0, 0)"
  # read as unexplained)
  assert page.locator(".tgviz-opt-link").first.get_attribute("title") == \
    'UNROLL(1, 0): the loop over reduce axis 1 unrolled whole; tinygrad\'s step "shift (1,) 2 unroll" shows it (click)'
  assert page.locator(".tgviz-opt-link").nth(2).get_attribute("title").startswith("LOCAL(0, 2): 2 threads of a workgroup along axis 0; ")
  # each opt links to the rewrite step its application made
  page.locator(".tgviz-opt-link", has_text="LOCAL(0, 2)").nth(1).click()
  page.wait_for_function("document.querySelector('.tgviz-step.selected')?.innerText.startsWith('shift (3,) 2 local')", timeout=LIMIT)


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
  """Each time says what it is, and the retry's entry (the selected) and its comparison agree: the entry gives each side's median of
  its launches and the speedup, or "within noise" where the comparison's time column says so; the comparison the
  launches timed, their total (its tooltip: "total over N launches") and the same medians, each cell saying "median of N"."""
  summary = sheet.locator(".tgviz-retry-result.selected").inner_text()  # (the entry whose comparison is open)
  median = re.search(rf"{runs} launches each \({re.escape(BESIDE)}\): median ({TIME}) \(min – max {TIME} – {TIME}\) -> ({TIME}) "
                     rf"\({TIME} – {TIME}\), (?:([\d.]+)x (faster|slower) \({re.escape(APART)}\)|within noise \({re.escape(NOISE)}\))$", summary)
  assert median, summary
  th = sheet.locator(".tgviz-whatif-compare .tgviz-pairs th")
  heads = [t.split("\n")[0].rstrip(" ▲▼") for t in th.all_inner_texts()]  # a column's label, then its sides' names
  at = heads.index("launches")  # right after the code column, on screen, each side's value one above the other
  assert heads[at - 1: at + 2] == ["code", "launches", "total"] and "median" in heads and "runs" not in heads, heads
  assert [th.nth(at + i).locator("button").all_inner_texts() for i in (0, 1)] == [[f"original ({by})", "retry"]] * 2
  cells = sheet.locator(".tgviz-whatif-compare .tgviz-pairs tbody tr").first.locator("td")
  sides = [cells.nth(at + i).locator(".side") for i in (0, 1)]
  assert [int(t) for t in sides[0].all_inner_texts()] == [runs, runs]
  assert [sides[1].nth(i).get_attribute("title") for i in (0, 1)] == [f"total over {runs} launches"] * 2
  assert all(s.nth(i).is_visible() and s.nth(i).bounding_box()["x"] + s.nth(i).bounding_box()["width"]
             <= sheet.page.viewport_size["width"] for s in sides for i in (0, 1))
  total_a, total_b = (read_time(t) for t in sides[1].all_inner_texts())  # over half the runs took the median or longer
  medians = cells.nth(heads.index("median")).locator(".side")  # the same medians as the entry, as it writes them
  assert medians.all_inner_texts() == [f"{median.group(1 + i)} (median of {runs})" for i in (0, 1)], (medians.all_inner_texts(), summary)
  assert all(re.fullmatch(rf"median of {runs} launches: min {TIME}, max {TIME}(; re-timed: after the capture, warm(, not settled)?)?",
                          medians.nth(i).get_attribute("title")) for i in (0, 1))
  texts = [*sides[0].all_inner_texts(), *sides[1].all_inner_texts(), *medians.all_inner_texts()]
  least = (runs // 2 + 1) * 0.99
  a, b = (read_time(median.group(i)) for i in (1, 2))
  assert total_a >= least * a and total_b >= least * b, (texts, summary)
  time = cells.nth(heads.index("time")).inner_text()  # the comparison's word on the times: the entry's
  assert time == (f"retry {median.group(4)}" if median.group(3) else "within noise"), (time, summary)
  if not median.group(3): return
  x = float(median.group(3)) if median.group(4) == "faster" else 1 / float(median.group(3))  # a / b, of the unrounded medians
  assert a * 0.995 / (b * 1.005) - 0.01 <= x <= a * 1.005 / (b * 0.995) + 0.01, summary  # (each shown to 3 significant figures)


def check_comparison_reads(sheet, by: str, shot: str) -> None:
  """The retry's comparison, open on its pair: both kernels' graphs open readable, labels of 11 CSS px or more (the
  trace browser's readable size), each graph's box showing some of them whole; the words name the sides by what they
  are (the original, the retry), never "a" or "b"."""
  sheet.page.wait_for_selector(".tgviz-whatif-compare .tgviz-pair:not([hidden]) .tgviz-landmark svg g.side g.node", timeout=LIMIT)
  shown = shown_labels_px(sheet)
  assert len(shown) >= 2 and all(shown) and min(px for box in shown for px in box) >= 11, shown
  heads = sheet.locator(".tgviz-whatif-compare .tgviz-pair-head").all_inner_texts()
  assert [t.split(": ")[0] for t in heads] == [f"original ({by})", "retry"], heads
  th = sheet.locator(".tgviz-whatif-compare .tgviz-pairs th")
  at = [t.split("\n")[0].rstrip(" ▲▼") for t in th.all_inner_texts()].index("time")
  assert th.nth(at).get_attribute("title").startswith(f"retry faster or slower than original ({by}); ")
  time = sheet.locator(".tgviz-whatif-compare .tgviz-pairs tbody tr").first.locator("td").nth(at).inner_text()
  assert time in ("retry faster", "retry slower", "within noise", "cold"), time
  text = sheet.locator(".tgviz-whatif-compare").inner_text()
  assert not re.search(r"\b(b faster|b slower|only a|only b)\b", text), text
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  sheet.locator(".tgviz-whatif-compare .tgviz-pair-sides").screenshot(path=str(ARTIFACTS / shot))


def _retry_in_sheet(page, shot: str) -> None:
  """Open the sheet from the opts line; retry with no opts (the comparison opens, outputs match), then with an amount
  tinygrad refuses (its message, no comparison); the sheet's screenshot to ARTIFACTS/shot."""
  page.locator(".tgviz-opts-line .tgviz-what-if").click()
  sheet = page.locator(".tgviz-whatif-sheet")
  page.wait_for_function("/allowed/.test(document.querySelector('.tgviz-opt-add')?.options[0].text)", timeout=LIMIT)
  assert sheet.locator(".tgviz-opt").count() == 4
  sheet.locator(".tgviz-opts-none").click()
  assert sheet.locator(".tgviz-opt").count() == 0
  sheet.locator(".tgviz-retry").click()
  page.wait_for_selector(".tgviz-whatif-compare .tgviz-pairs tbody tr", timeout=LIMIT)
  assert sheet.locator(".tgviz-whatif-compare .tgviz-pairs tbody tr td").first.inner_text() == "given"
  assert "original (heuristic) vs retry" in sheet.locator(".tgviz-whatif-compare .tgviz-summary").inner_text()
  page.wait_for_selector(".tgviz-retry-result.same", timeout=LIMIT)
  assert "retry of r_2_2_2_2 with no opts: r_2_2_2_2, outputs match" in sheet.locator(".tgviz-retry-result").first.inner_text()
  check_time_labels(sheet, 5, "heuristic")
  sheet.locator(".tgviz-whatif-compare .tgviz-pairs tbody tr").first.click()  # the pair: the code diff, both kernels' graphs
  check_comparison_reads(sheet, "heuristic", shot.replace(".png", "-compare.png"))
  # an opt tinygrad refuses: UPCAST by 3 of an axis of 2
  sheet.locator(".tgviz-opt-add").select_option(label="UPCAST(0, 0)")
  sheet.locator(".tgviz-opt-amount").fill("3")
  sheet.locator(".tgviz-opt-amount").dispatch_event("change")
  sheet.locator(".tgviz-retry").click()
  page.wait_for_selector(".tgviz-retry-result.refused", timeout=LIMIT)
  check_refusal(sheet, "r_2_2_2_2", 2)
  assert sheet.locator(".tgviz-whatif-compare .tgviz-pairs").count() == 0
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  sheet.screenshot(path=str(ARTIFACTS / shot))


def test_what_if_in_jupyterlab(lab, page):
  open_in_lab(page, lab, "whatif", "%load_ext tgviz", TUTORIAL)
  run_all(page, 2)
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  _open_conv(page)
  _retry_in_sheet(page, "whatif-lab.png")
  assert not page.errors


def test_what_if_in_notebook7(nb7, browser):
  url, token, root = nb7
  (root / "whatif7.ipynb").write_text(notebook("%load_ext tgviz", TUTORIAL))
  ctx = browser.new_context(viewport={"width": 1600, "height": 1100})
  try:
    page = run_from_tree(ctx, url, token, "whatif7.ipynb", timeout=LIMIT)
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
  # its medians apart by less than the launches' spread (as a busy machine measures a retry that changes little):
  # within noise, its entry says as its comparison does (it said "1.03x slower")
  retried.run.times_a[:] = [t * 1e-6 for t in (1, 2, 3, 4, 5)]  # (in place: the comparison's traces hold them too)
  retried.run.times_b[:] = [t * 1e-6 for t in (1.1, 2.1, 3.1, 4.1, 5.1)]
  k.retry([("UPCAST", 0, 3)])  # refused: the report lists it too
  trace.to_html(tmp_path / "index.html")
  page.goto((tmp_path / "index.html").as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  page.locator(".tgviz-kernels summary").click()
  page.locator(".tgviz-kernels tbody tr", has_text=k.name).click()
  line = f"opts (BEAM): {' · '.join(map(str, k.opts))} what if…"
  page.wait_for_function(f"document.querySelector('.tgviz-opts-line')?.innerText === {line!r}", timeout=LIMIT)
  page.locator(".tgviz-opts-line .tgviz-what-if").click()
  sheet = page.locator(".tgviz-whatif-sheet")
  assert sheet.locator(".tgviz-opts-editor").count() == 0 and "read-only" in sheet.inner_text()  # no kernel to retry with
  results = sheet.locator(".tgviz-retry-result")
  assert results.count() == 2 and "outputs match" in results.nth(0).inner_text() and "refused" in results.nth(1).inner_text()
  results.nth(1).click()  # the refusal, said once
  check_refusal(sheet, k.display_name, 8)
  sheet.screenshot(path=str(ARTIFACTS / "whatif-report-refused.png"))
  results.nth(0).click()
  page.wait_for_selector(".tgviz-whatif-compare .tgviz-pairs tbody tr", timeout=LIMIT)
  assert results.nth(0).inner_text().endswith(f"({BESIDE}): median 3.00 µs (min – max 1.00 µs – 5.00 µs) -> 3.10 µs (1.10 µs – 5.10 µs), "
                                              f"within noise ({NOISE})"), results.nth(0).inner_text()
  check_time_labels(sheet, 5, "BEAM")
  check_comparison_reads(sheet, "BEAM", "whatif-report-compare.png")
  # BEAM's candidates: every one in the table, the timed ones in the scatter, its choice marked
  assert sheet.locator(".tgviz-beam tbody tr").count() == len(k.search.candidates)
  assert sheet.locator(".tgviz-beam-scatter circle").count() == len(k.search.timed)
  assert sheet.locator(".tgviz-beam-scatter circle.winner").count() >= 1
  sheet.locator(".tgviz-beam th", has_text="time").click()  # sortable: the slowest first, the untimed last
  times = sheet.locator(".tgviz-beam tbody tr td:nth-child(5)").all_inner_texts()
  shown = [read_time(t) for t in times if t != "–"]
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


def test_the_retries_tgviz_run_writes_answer_what_if_in_the_report(tmp_path, page, monkeypatch):
  """tgviz run retries the slowest kernels (--what-if 2): in the report, their what-if sheet opens on the first retry,
  its times and speedup in its entry, its comparison and code diff open; a kernel without retries opens it on the
  slowest kernel's, saying so."""
  from tgviz import cli
  from tgviz.trace import whatif
  monkeypatch.setattr(whatif, "WHAT_IF_LEAST", 600.0)  # (all its retries made on a busy machine too: see test_whatif.py)
  (script := tmp_path / "matmul.py").write_text("from tinygrad import Tensor\nTensor.manual_seed(0)\n"
                                                "a, b = Tensor.randn(32, 32).realize(), Tensor.randn(32, 32).realize()\n(a @ b).realize()\n")
  status, trace = cli.run(script, tmp_path / "report", None, 300, [], "none")
  retried = [k for k in trace.kernels if k.retries]
  plain = next(k for k in trace.kernels if not k.retries)
  assert status == 0 and len(retried) == 2 and max(len(k.retries) for k in retried) >= 2  # (the matmul's: no opts, one size up)
  page.goto((tmp_path / "report" / "index.html").as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  for k in retried:
    page.locator(".tgviz-kernels summary").click()  # (opening the what-if sheet closes the kernel table's)
    page.locator(".tgviz-kernels tbody tr", has_text=k.display_name).first.click()
    page.wait_for_function(f"document.querySelector('.tgviz-code-head')?.innerText.startsWith({k.name!r})", timeout=LIMIT)
    page.locator(".tgviz-opts-line .tgviz-what-if").click()
    sheet = page.locator(".tgviz-whatif-sheet")
    assert "what other opts do, measured when this report was written (tgviz run --what-if)" in sheet.inner_text()
    results = sheet.locator(".tgviz-retry-result")
    assert results.count() == len(k.retries) >= 1 and results.first.inner_text().startswith(f"retry of {k.display_name} with no opts: ")
    for i in range(results.count()):
      assert re.search(rf"5 launches each \({re.escape(BESIDE)}\): median {TIME} \(min – max {TIME} – {TIME}\) -> {TIME} \({TIME} – {TIME}\), "
                       rf"([\d.]+x (faster|slower) \({re.escape(APART)}\)|within noise \({re.escape(NOISE)}\))$",
                       results.nth(i).inner_text()), results.nth(i).inner_text()
    # of the three retries, those it did not make are said, each with why
    not_tried = sheet.locator(".tgviz-not-tried")
    assert not_tried.count() == (1 if k.not_tried else 0) and all(t in not_tried.inner_text() for t in k.not_tried)
    assert len(k.retries) + len(k.not_tried) == 3, (len(k.retries), k.not_tried)
    # it opens on the retry that tells most (the largest change in time beyond noise): selected, its comparison open on
    # the pair, the code diff on screen
    assert "selected" in results.nth(k.retries.index(whatif.most_telling(k.retries))).get_attribute("class")
    page.wait_for_selector(".tgviz-whatif-compare .tgviz-pair:not([hidden]) .tgviz-diff", timeout=LIMIT)
    check_time_labels(sheet, 5, "heuristic")
    diff = sheet.locator(".tgviz-whatif-compare .tgviz-pair:not([hidden]) .tgviz-diff")
    assert diff.locator(".add").count() + diff.locator(".del").count() > 0 and diff.is_visible()
    if results.count() > 1:  # another retry (the matmul's one size up; BEAM's pick where its search found one): its comparison
      results.nth(1).click()
      page.wait_for_function("document.querySelectorAll('.tgviz-retry-result.selected').length === 1 && "
                             "document.querySelectorAll('.tgviz-retry-result')[1].classList.contains('selected')", timeout=LIMIT)
      page.wait_for_selector(".tgviz-whatif-compare .tgviz-pair:not([hidden]) .tgviz-diff", timeout=LIMIT)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    sheet.screenshot(path=str(ARTIFACTS / f"whatif-run-report-{k.name}.png"))
    sheet.locator(".tgviz-sheet-close").click()
  # a kernel tgviz run did not retry: the sheet opens on the retries of the slowest kernel retried (an answer at once),
  # saying which kernel it shows, its most telling retry's comparison open; the other kernel retried a click away
  slowest, other = sorted(retried, key=lambda k: -(k.total_us or 0.0))
  page.locator(".tgviz-kernels summary").click()
  page.locator(".tgviz-kernels tbody tr", has_text=plain.display_name).first.click()
  page.wait_for_function(f"document.querySelector('.tgviz-code-head')?.innerText.startsWith({plain.name!r})", timeout=LIMIT)
  page.locator(".tgviz-opts-line .tgviz-what-if").click()
  sheet = page.locator(".tgviz-whatif-sheet")
  assert sheet.locator(".tgviz-sheet-head").inner_text().startswith(f"what if {slowest.display_name} had other opts? ")
  assert sheet.locator(".tgviz-retried-instead").inner_text() == instead_note(slowest.display_name, plain.display_name, plain.not_tried)
  results = sheet.locator(".tgviz-retry-result")
  assert results.count() == len(slowest.retries) and results.first.inner_text().startswith(f"retry of {slowest.display_name} with no opts: ")
  assert "selected" in results.nth(slowest.retries.index(whatif.most_telling(slowest.retries))).get_attribute("class")
  page.wait_for_selector(".tgviz-whatif-compare .tgviz-pair:not([hidden]) .tgviz-diff", timeout=LIMIT)
  check_time_labels(sheet, 5, "heuristic")
  assert sheet.locator(".tgviz-whatif-compare .tgviz-pair:not([hidden]) .tgviz-diff").is_visible()
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  sheet.screenshot(path=str(ARTIFACTS / "whatif-run-report-not-retried.png"))
  elsewhere = sheet.locator(".tgviz-retried-elsewhere")
  assert elsewhere.inner_text() == f"also retried: {other.display_name}"
  elsewhere.locator(".tgviz-link", has_text=other.display_name).click()
  page.wait_for_function(f"document.querySelector('.tgviz-code-head')?.innerText.startsWith({other.name!r})", timeout=LIMIT)
  page.wait_for_selector(".tgviz-whatif-sheet .tgviz-retry-result.selected", timeout=LIMIT)  # the sheet open on one of its retries
  assert sheet.locator(".tgviz-sheet-head").inner_text().startswith(f"what if {other.display_name} had other opts? ")
  assert sheet.locator(".tgviz-retried-instead").count() == 0
  assert not page.errors


def instead_note(shown: str, selected: str, not_tried: list[str]) -> str:
  """What the report's what-if sheet says where the kernel shown was not retried: whose retries it shows instead, and
  why the selected one was not retried where tgviz run said why (its not_tried)."""
  why = "; ".join(not_tried) if not_tried else ("not among the slowest kernels by warm device time, which tgviz run --what-if retries: a re-timed "
                                                  "median times its launches, else its launches in the run")
  return (f"shown: the retries of {shown}, the slowest kernel retried when this report was written (the kernel shown, "
          f"{selected}, was not retried: {why})")


def test_the_reports_what_if_says_which_of_the_slowest_kernels_were_not_retried_and_why(tmp_path, page):
  """tgviz run --what-if N asks about the N slowest kernels; where its time ran out before a kernel's retries, the sheet
  names that kernel with why, a click away (a new user's --what-if 2 retried one kernel and said nothing of the second);
  a kernel it never asked about says so ("not among the slowest"), not a bare "was not retried"."""
  from tinygrad import Tensor

  from tgviz.trace.whatif import what_ifs
  a = Tensor.rand(16, 16, device="CPU").realize()
  with tgviz.capture("CPU") as trace: (a @ a).realize(); (a + 1).realize(); (a * 3).sum().realize()
  assert len(trace.kernels) == 3
  assert not what_ifs(trace, 2, budget=1e-9)  # (no time: the two slowest asked about, neither retried)
  asked, never = sorted(trace.kernels, key=lambda k: -(k.total_us or 0.0))[:2], sorted(trace.kernels, key=lambda k: -(k.total_us or 0.0))[2]
  assert all(k.not_tried and not k.retries for k in asked) and not never.not_tried
  shown = asked[0]
  shown.retry([])  # (an answer the page can show: the slowest kernel's retry with no opts)
  trace.to_html(tmp_path / "index.html")
  page.goto((tmp_path / "index.html").as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  sheet = page.locator(".tgviz-whatif-sheet")
  for selected in (never, asked[1]):
    page.locator(".tgviz-kernels summary").click()
    page.locator(".tgviz-kernels tbody tr", has_text=selected.display_name).first.click()
    page.wait_for_function(f"document.querySelector('.tgviz-code-head')?.innerText.startsWith({selected.name!r})", timeout=LIMIT)
    page.locator(".tgviz-opts-line .tgviz-what-if").click()
    assert sheet.locator(".tgviz-retried-instead").inner_text() == instead_note(shown.display_name, selected.display_name, selected.not_tried)
    skipped = sheet.locator(".tgviz-not-retried")
    if selected is never:  # the other one asked about and not retried, with why
      assert skipped.inner_text() == f"not retried: {asked[1].display_name} ({'; '.join(asked[1].not_tried)})"
      assert "would run out before it ended" in skipped.inner_text()
    else: assert skipped.count() == 0  # (its why is the line above)
    sheet.locator(".tgviz-sheet-close").click()
  assert not page.errors


def test_the_reports_what_if_opens_on_the_retry_that_tells_most(tmp_path, page):
  """Of a kernel's retries, the report's sheet opens on the one that changed the time most beyond noise (here the
  second: the first's medians lie within each other's spread), not on the first; each entry's times are the retry's
  own (Retry.times_us), the original said to be timed beside that retry; the top lines say whose retries are shown."""
  from tinygrad import Tensor

  from tgviz.trace.units import time_text
  from tgviz.trace.whatif import most_telling, what_ifs
  a, b = Tensor.rand(8, 8, device="CPU").realize(), Tensor.rand(8, 8, device="CPU").realize()
  with tgviz.capture("CPU") as trace: (a @ b).realize(); (a + 1).realize()
  k, plain = trace.kernels
  noise, telling = k.retry([]), k.retry([k.allowed_opts()[0]])
  assert noise.same and telling.same
  # (in place: the comparisons' traces hold them too) the first within noise, the second 6x faster; the original timed
  # again beside each retry, its medians differ
  noise.run.times_a[:], noise.run.times_b[:] = ([t * 1e-6 for t in ts] for ts in ((370, 375, 376, 380, 390), (372, 380, 388, 390, 395)))
  telling.run.times_a[:], telling.run.times_b[:] = ([t * 1e-6 for t in ts] for ts in ((380, 384, 386, 390, 400), (60, 61, 62, 63, 64)))
  assert most_telling(k.retries) is telling
  # the what-if of tgviz run with no time left: plain is not retried, and why is said (--what-if 2 left the second
  # slowest kernel's sheet saying only "was not retried")
  assert not what_ifs(trace, 2, budget=1e-9) and plain.not_tried and not plain.retries
  trace.to_html(tmp_path / "index.html")
  page.goto((tmp_path / "index.html").as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  page.locator(".tgviz-kernels summary").click()
  page.locator(".tgviz-kernels tbody tr", has_text=plain.name).click()
  page.wait_for_function(f"document.querySelector('.tgviz-code-head')?.innerText.startsWith({plain.name!r})", timeout=LIMIT)
  page.locator(".tgviz-opts-line .tgviz-what-if").click()
  sheet = page.locator(".tgviz-whatif-sheet")
  assert sheet.locator(".tgviz-sheet-head").inner_text().startswith(f"what if {k.display_name} had other opts? ")
  assert sheet.locator(".tgviz-retried-instead").inner_text() == instead_note(k.display_name, plain.display_name, plain.not_tried)
  assert "would run out before it ended" in sheet.locator(".tgviz-retried-instead").inner_text()
  page.wait_for_selector(".tgviz-whatif-compare .tgviz-pair:not([hidden]) .tgviz-diff", timeout=LIMIT)
  results = sheet.locator(".tgviz-retry-result")
  assert results.count() == 2 and "selected" not in results.nth(0).get_attribute("class")
  assert "selected" in results.nth(1).get_attribute("class")
  for r, entry in zip((noise, telling), results.all_inner_texts(), strict=True):
    x, (ta, tb) = r.speedup, r.times_us()
    speed = "within noise" if r is noise else f"{x:.2f}x faster"
    rule = NOISE if r is noise else APART
    assert re.search(rf"\({re.escape(BESIDE)}\): median {re.escape(time_text(ta))} \(min – max {TIME} – {TIME}\) -> "
                     rf"{re.escape(time_text(tb))} \({TIME} – {TIME}\), {re.escape(speed)} \({re.escape(rule)}\)$", entry), entry
  check_time_labels(sheet, 5, "heuristic")  # the comparison open is the selected entry's, its medians the entry's
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  sheet.screenshot(path=str(ARTIFACTS / "whatif-report-most-telling.png"))
  assert not page.errors


def test_what_if_in_a_notebook_names_the_kernels_that_took_the_time(lab, page):
  """The attention block: the kernel the user is on (the one that took least of the run's time, say) is not what they
  want to speed up. Its what-if sheet names the three kernels that took most of the run's device time, slowest first,
  each a click from its retries' editor, each with the kernel table's total (its figure, said to be: not a re-timed
  median times the launches); on one of those three, the sheet still names them, that one marked as shown."""
  open_in_lab(page, lab, "whatif-slowest", "%load_ext tgviz", "%%tgviz\n" + ATTENTION)
  run_all(page, 2)
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  table = page.locator(".tgviz-kernels").first
  table.locator("summary").click()
  table.locator(".tgviz-retime").click()  # re-timed medians: the table's total stays its launches' in the run
  page.wait_for_function("[...document.querySelectorAll('.tgviz-kernels tbody tr')].some(r => r.innerText.includes('re-runs'))",
                         timeout=LIMIT)
  total = "[...r.closest('table').tHead.rows[0].cells].findIndex(c => c.dataset.key === 'time_us')"  # (its column)
  totals = dict(page.eval_on_selector_all(".tgviz-kernels tbody tr", f"rs => rs.map(r => [r.cells[0].textContent, r.cells[{total}].textContent])"))
  total = table.locator("th[data-key='time_us']")
  total.click()  # sorted by total time (again: the other way), the least last
  if total.get_attribute("data-sort") != "desc": total.click()
  table.locator("th[data-key='time_us'][data-sort='desc']").wait_for(timeout=LIMIT)
  least = table.locator("tbody tr").last
  name = least.locator("td").first.inner_text()
  least.click()  # (until the view is on it, the opts line is the kernel shown before: a run under load clicked that one)
  page.wait_for_function("(n) => document.querySelector('.tgviz-code-head')?.innerText.startsWith(n + ' ')", arg=name, timeout=LIMIT)
  page.locator(".tgviz-opts-line .tgviz-what-if").click()
  hint = page.locator(".tgviz-whatif-sheet .tgviz-slowest")
  hint.wait_for(timeout=LIMIT)
  links = hint.locator("button").all_inner_texts()
  assert len(links) == 3 and not any(t.startswith(name + " ") for t in links), (name, links)
  assert all(t == f"{t.rsplit(' (', 1)[0]} ({totals[t.rsplit(' (', 1)[0]]})" for t in links), (links, totals)
  assert hint.inner_text().startswith("most of the run's device time (the kernel table's total): "), hint.inner_text()
  times = [read_time(re.search(r"\((.+)\)$", t).group(1)) for t in links]
  assert times == sorted(times, reverse=True), links
  slowest = links[0].rsplit(" (", 1)[0]
  hint.locator("button").first.click()
  page.wait_for_function(f"document.querySelector('.tgviz-whatif-sheet .tgviz-sheet-head')?.textContent.startsWith('what if {slowest} had')",
                         timeout=LIMIT)
  # on the slowest itself, the sheet still names the three, itself marked, the other two a click away
  page.wait_for_function("(s) => document.querySelector('.tgviz-whatif-sheet .tgviz-slowest-shown')?.textContent.startsWith(s + ' (')",
                         arg=slowest, timeout=LIMIT)
  assert hint.locator("button").all_inner_texts() == links[1:], (links, hint.inner_text())
  assert hint.locator(".tgviz-slowest-shown").inner_text() == f"{links[0]}: this one"
  page.screenshot(path=str(ARTIFACTS / "whatif-slowest.png"))
  assert not page.errors
