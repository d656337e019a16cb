"""What a person sees of a graph, measured in the HTML report in headless Chromium at 1600x1000 (issue: "See the whole
graph, readably"). For an attention block (forward and backward), the tests' CNN and the transformer block example:

- opening: of the nodes of each kernel step of up to 150 nodes, the share on screen with labels at 11 px or more, as
  the step opens (target: at least 60%);
- busiest steps: whether the match's own marked nodes are on screen at the last match (End) and after `z` (target: yes);
- code lines: of the statement lines of the busiest kernel (a dozen tried), those whose UOps are marked on screen once
  clicked (target: all);
- layout: the widest aspect ratio (width / height) of the focused view of the biggest steps (target: about 4 or less).

Run: .venv/bin/python benchmarks/view_fit.py  (a few minutes)
"""
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import workloads
from playwright.sync_api import sync_playwright

import tgviz
from tgviz import bridge as tg
from tgviz.draw.dot import layout
from tgviz.draw.scene import DEFAULT_MAX_NODES, cap_fan_in, focus
from tgviz.views import picture as PI
from tgviz.views import protocol as P

READABLE_SHARE = """() => { const c = document.querySelector('.tgviz-canvas').getBoundingClientRect();
  const t = document.querySelector('.tgviz-stage svg g.side g.node text tspan');
  const px = t ? parseFloat(getComputedStyle(t).fontSize) * t.getBoundingClientRect().height / t.getBBox().height : 0;
  const ns = [...document.querySelectorAll('.tgviz-stage svg g.side g.node')];
  const keys = new Set(ns.map((n) => n.dataset.node)), seen = new Set();
  for (const n of ns) { const r = n.getBoundingClientRect();
    if (r.left >= c.left - 1 && r.right <= c.right + 1 && r.top >= c.top - 1 && r.bottom <= c.bottom + 1) seen.add(n.dataset.node); }
  return [px >= 10.95 ? seen.size : 0, keys.size, px]; }"""
MARKED_ON_SCREEN = """(sel) => { const c = document.querySelector('.tgviz-canvas').getBoundingClientRect();
  const ns = [...document.querySelectorAll(sel)];
  return [ns.length, ns.filter((n) => { const r = n.getBoundingClientRect();
    return r.right > c.left && r.left < c.right && r.bottom > c.top && r.top < c.bottom; }).length]; }"""


def shown(page, key: str, match: str = "") -> None:
  page.wait_for_function("([k, m]) => { const s = document.querySelector('.tgviz-stage'); "
                         "return s.dataset.step === k && s.dataset.match === m && s.querySelector('svg g.node'); }",
                         arg=[key, match], timeout=120_000)
  page.wait_for_timeout(150)


def measure(name: str, trace: tgviz.Trace, page, out: Path) -> None:
  html = trace.to_html(out / name / "index.html")
  page.goto(html.as_uri())
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=120_000)
  # opening views of the kernel steps of up to 150 (drawn) nodes
  small = [s for s in trace.steps if s.group.kind == "kernel" and 10 <= len(cap_fan_in(PI.scene_of(s, None)).nodes) <= 150]
  small = small[:: max(1, len(small) // 15)]
  shares = []
  for s in small:
    page.locator(".tgviz-filter").fill("")
    page.locator(f".tgviz-step[data-key='{P.step_key(s)}']").click()
    shown(page, P.step_key(s))
    seen, total, _ = page.evaluate(READABLE_SHARE)  # (the label size: seen is 0 unless 11 px or more)
    shares.append((seen / total, total, s.path))
  # the busiest steps: the match's marked nodes at the last match and after z
  busy = []
  for s in sorted(trace.steps, key=lambda s: -len(s.matches))[:2]:
    page.locator(f".tgviz-step[data-key='{P.step_key(s)}']").click()
    shown(page, P.step_key(s))
    page.locator(".tgviz-title").click()
    page.keyboard.press("End")
    shown(page, P.step_key(s), str(len(s.matches) - 1))
    sel = ".tgviz-stage g.side g.node.added, .tgviz-stage g.side g.node.removed, .tgviz-stage g.side g.node.changed"
    end = page.evaluate(MARKED_ON_SCREEN, sel)
    page.keyboard.press("z")
    page.wait_for_timeout(150)
    busy.append((s.name, len(s.matches), end, page.evaluate(MARKED_ON_SCREEN, sel)))
  # code lines of the busiest kernel
  kernel = max((k for k in trace.kernels if k.line_keys), key=lambda k: len(tg.toposort(k.codegen_step.before())))
  lines, src = kernel.line_keys or [], kernel.source.splitlines()
  statements = [n for n, t in enumerate(src, 1) if t.strip().endswith(";") and lines[n - 1]]
  base = kernel.group.steps[0]
  page.locator(f".tgviz-step[data-key='{P.step_key(base)}']").click()
  shown(page, P.step_key(base))
  ok = 0
  tried = statements[:: max(1, len(statements) // 12)]
  for n in tried:
    page.locator(f".tgviz-code [data-line='{n}']").click()
    try:
      page.wait_for_function("() => document.querySelectorAll('.tgviz-stage g.side g.node.hl-line').length > 0", timeout=60_000)
      page.wait_for_timeout(100)
      ok += page.evaluate(MARKED_ON_SCREEN, ".tgviz-stage g.side g.node.hl-line")[1] > 0
    except Exception: pass
    page.locator(f".tgviz-code [data-line='{n}']").click()
  # layout aspect of the focused views of the biggest steps
  aspects = []
  for s in sorted(trace.steps, key=lambda s: -len(cap_fan_in(PI.scene_of(s, None)).nodes))[:8]:
    lay = layout(focus(cap_fan_in(PI.scene_of(s, None)), DEFAULT_MAX_NODES), None)
    aspects.append(lay.width / lay.height)
  opening = sorted(shares)
  print(f"{name:12s} opening: median {opening[len(opening) // 2][0]:.0%}, worst {opening[0][0]:.0%} of nodes on screen readable "
        f"({len(opening)} steps of 10-150 nodes; target 60%); the worst three: " +
        ", ".join(f"{path} ({total} nodes) {share:.0%}" for share, total, path in opening[:3]))
  for step, n, end, z in busy:
    print(f"{'':12s} busiest {step} ({n} matches): at End {end[1]}/{end[0]} marked nodes on screen, after z {z[1]}/{z[0]} (target >= 1)")
  print(f"{'':12s} code lines of {kernel.name}: {ok}/{len(tried)} clicked statement lines show their UOps on screen (target all)")
  print(f"{'':12s} widest focused layout of the 8 biggest steps: {max(aspects):.1f}:1 (target about 4:1)")


def main() -> None:
  traces = {}
  for name, fn in (("attention", workloads.attention), ("cnn", workloads.cnn),
                   ("transformer", lambda: workloads.example("transformer_block.py"))):
    with tgviz.capture() as traces[name]: fn()
  with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
    browser = pw.chromium.launch(executable_path=shutil.which("chromium"), args=["--no-sandbox"])
    page = browser.new_page(viewport={"width": 1600, "height": 1000})
    for name, trace in traces.items(): measure(name, trace, page, Path(tmp))
    browser.close()


if __name__ == "__main__":
  main()
