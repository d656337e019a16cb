"""`tgviz run` writes an index.html that works in a browser with no network and no kernel."""
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from harness import ARTIFACTS

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "scripts" / "tutorial_conv2d.py"


@pytest.fixture(scope="module")
def report(tmp_path_factory):
  out = tmp_path_factory.mktemp("report")
  proc = subprocess.run([sys.executable, "-m", "tgviz", "run", str(EXAMPLE), "--out", str(out)], capture_output=True,
                        text=True, timeout=600)
  assert proc.returncode == 0, proc.stderr
  assert "r_2_2_2_2" in proc.stdout and f"report: {(out / 'index.html').resolve()}" in proc.stdout
  return out


def test_report_svgs_are_valid(report):
  svgs = list((report / "svg").glob("*.svg"))  # by default, tinygrad's "View ..." landmarks of every group
  assert any("r_2_2_2_2--" in p.name and "View_Base_AST" in p.name for p in svgs)
  assert all("--" in p.name and p.name.split("--")[1][4:].startswith("View_") for p in svgs), [p.name for p in svgs]
  for p in svgs[:: max(1, len(svgs) // 20)]: ET.parse(p)


def test_report_opens_offline(report, browser):
  ctx = browser.new_context(viewport={"width": 1500, "height": 1000}, offline=True)
  page = ctx.new_page()
  requests = []
  page.on("request", lambda r: requests.append(r.url))
  page.goto((report / "index.html").as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=30_000)
  assert "r_2_2_2_2" in page.locator(".tgviz-tree").inner_text()
  assert "__kernel" in page.locator(".tgviz-code").inner_text()
  page.locator(".tgviz-step:not(.empty)", has_text="devectorize2").first.click()
  page.wait_for_function("document.querySelector('.tgviz-title').innerText.includes('devectorize2')", timeout=10_000)
  page.locator(".tgviz-title").click()
  page.keyboard.press("ArrowRight")
  page.wait_for_function("document.querySelector('.tgviz-stage').dataset.match === '0'", timeout=10_000)
  assert page.locator(".tgviz-pattern").count() == 1
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  page.screenshot(path=str(ARTIFACTS / "report.png"))
  assert all(u.startswith(("file:", "blob:", "data:")) for u in requests), requests
  ctx.close()
