"""README's "Where is what" as a user follows it in the report of the tutorial (1500x1000): every control it names in
the widget's column is on screen, where it says: the kernel table, the run's tabs and what if… at the top right, the
tree on the left, the code column's tabs on the right, Export SVG over the graph, the timeline's launches / whole run."""
import re
from pathlib import Path

from harness import ARTIFACTS, LIMIT, new_page

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()
ON_SCREEN = """(e) => { const r = e.getBoundingClientRect();
  return r.width > 0 && r.height > 0 && r.left >= 0 && r.top >= 0 && r.right <= innerWidth && r.bottom <= innerHeight; }"""


def test_the_maps_controls_are_where_it_says(tutorial_trace, tmp_path, browser):
  start = README.index("## Where is what")
  section = README[start:README.index("\n## ", start + 1)]
  named = set(re.findall(r"\*([^*|]+)\*", section))
  assert {"kernel table", "timeline · memory · roofline", "what if…", "Export SVG", "code · uops · asm · access"} <= named, named
  tutorial_trace.to_html(tmp_path / "index.html")
  with new_page(browser, 1500, 1000) as page:
    page.goto((tmp_path / "index.html").as_uri())
    page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
    width = page.viewport_size["width"]
    top_right = {"kernel table": ".tgviz-kernels > summary", "timeline · memory · roofline": ".tgviz-run > summary",
                 "what if…": ".tgviz-whatif > summary"}
    for label, sel in top_right.items():
      box = page.locator(sel).first
      assert label in box.inner_text() and box.evaluate(ON_SCREEN), label
      assert box.bounding_box()["x"] > width / 2 and box.bounding_box()["y"] < 40, label  # top right
    export = page.locator(".tgviz-export")
    assert export.inner_text() == "Export SVG" and export.evaluate(ON_SCREEN)
    assert page.locator(".tgviz-tree").bounding_box()["x"] < width / 4  # the tree on the left
    tabs = page.locator(".tgviz-code-tabs .tgviz-tab")
    assert tabs.all_inner_texts() == ["code", "uops", "asm", "access"] and all(t.evaluate(ON_SCREEN) for t in tabs.all())
    assert tabs.first.bounding_box()["x"] > width / 2  # the code column, right
    page.locator(".tgviz-run > summary").click()
    page.wait_for_selector(".tgviz-tl-canvas[data-draws]", timeout=LIMIT)
    for sel, text in ((".tgviz-tl-launches", "launches"), (".tgviz-tl-fit", "whole run")):
      assert page.locator(sel).inner_text() == text and page.locator(sel).evaluate(ON_SCREEN)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "readme-map-timeline.png"))
    assert not page.errors
