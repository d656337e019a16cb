"""What each thread reads: the evaluation of a kernel's index UOps in Python, and the access tab's hover in a real browser.

Run: .venv/bin/python benchmarks/access_speed.py
- Python (tgviz.bridge.access.evaluate, numpy): a matmul 128x128 @ 128x64, whose View Base AST runs over 128*64*128 =
  1,048,576 points: every access's index and mask evaluated over the whole iteration space (all ranges, not only the
  access's own); kernel.accesses() and buffer_use() (each access over its own ranges, counted); kernel.reads() of 200
  output elements. Target (issue #39): the 1-million-point space in under a second.
- The page (Debian's Chromium, 1600x1000, the HTML report): a matmul 256x256 @ 256x256, its output a 256x256 buffer:
  a hover over an output element, the handler's own time on the page's clock, from the mousemove to its grids redrawn
  (it is synchronous: readsOf over the reduce range, the cells that change repainted; the browser composites them in
  its next frame); the first hover separately (it also evaluates the store over its 65,536 points, once). Target: a
  hover under 50 ms.
Each figure is the median of its runs, the slowest said too.
"""
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "browser"))
from harness import USER_BROWSER, chromium  # noqa: E402

import tgviz  # noqa: E402
from tgviz import bridge as tg  # noqa: E402

HOVER = """(e) => {
  const canvas = document.querySelector('.tgviz-access-buffer canvas'), b = canvas.tgvizCell(e), r = canvas.getBoundingClientRect();
  const ev = new MouseEvent('mousemove', {clientX: r.left + b.x + b.size / 2, clientY: r.top + b.y + b.size / 2, bubbles: true});
  const t0 = performance.now();
  canvas.dispatchEvent(ev);
  return [performance.now() - t0, document.querySelector('.tgviz-access-status').textContent];
}"""


def python_side() -> None:
  from tinygrad import Tensor
  a, b = Tensor.rand(128, 128).realize(), Tensor.rand(128, 64).realize()
  with tgviz.capture() as trace: (a @ b).realize()
  k = trace.kernels[-1]
  table = k.access_model.tables["ast"]
  points = int(np.prod([v.size for v in table.vars]))
  grid = np.indices([v.size for v in table.vars])  # every variable's value at every point: nothing left to broadcasting
  env = {i: grid[i] for i in range(len(table.vars))}
  roots = [n for a in table.accesses for n in (a.index, a.valid) if n is not None]
  runs = []
  for _ in range(5):
    t0 = time.perf_counter()
    vals = tg.evaluate(table.nodes, roots, env)
    assert all(v.size == points for v in vals)  # every point's value made
    runs.append(time.perf_counter() - t0)
  print(f"{k.name}: {len(table.accesses)} accesses over the whole space of {points:,} points: {statistics.median(runs) * 1e3:.0f} ms "
        f"(median of 5, slowest {max(runs) * 1e3:.0f} ms; target < 1000 ms)")
  t0 = time.perf_counter()
  k.accesses(), k.buffer_use()
  print(f"  kernel.accesses() and buffer_use(), counted: {(time.perf_counter() - t0) * 1e3:.0f} ms (once per kernel, then kept)")
  outs = np.random.default_rng(0).integers(0, 128 * 64, 200)
  t0 = time.perf_counter()
  for e in outs: k.reads(int(e))
  print(f"  kernel.reads(e): {(time.perf_counter() - t0) / len(outs) * 1e3:.2f} ms per output element (mean of 200; the first one "
        "also inverts the store)")


def page_side() -> None:
  from tinygrad import Tensor
  a, b = Tensor.rand(256, 256).realize(), Tensor.rand(256, 256).realize()
  with tgviz.capture() as trace: (a @ b).realize()
  k = trace.kernels[-1]
  with tempfile.TemporaryDirectory() as tmp:
    trace.to_html(Path(tmp) / "index.html")
    with chromium(USER_BROWSER) as browser:
      page = browser.new_page(viewport={"width": 1600, "height": 1000})
      page.goto((Path(tmp) / "index.html").as_uri())
      page.wait_for_selector(".tgviz-stage svg g.node", timeout=60_000)
      group = page.locator(".tgviz-group.kind-kernel", has=page.locator("summary", has_text=k.name))
      if group.get_attribute("open") is None: group.locator("summary").click()
      group.locator(".tgviz-step").first.click()
      page.locator(".tgviz-tab-access").click()
      page.wait_for_selector(".tgviz-access-buffer canvas", timeout=60_000)
      page.wait_for_timeout(500)
      n = page.evaluate("() => { const c = document.querySelector('.tgviz-access-buffer canvas'); return [c.width, c.height]; }")
      first, status = page.evaluate(HOVER, 0)
      times = [page.evaluate(HOVER, int(e))[0] for e in np.random.default_rng(1).integers(0, 256 * 256, 60)]
      print(f"{k.name} in the report's access tab, its output 256x256 drawn {n[0]}x{n[1]} px: first hover {first:.0f} ms "
            f"(it also inverts the store, once), then {statistics.median(times):.1f} ms per hover "
            f"(median of 60, slowest {max(times):.1f} ms; target < 50 ms)")
      print(f"  it says: {status}")


if __name__ == "__main__":
  python_side()
  page_side()
