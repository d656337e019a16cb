"""Folding: how many fewer nodes a kernel's codegen steps draw folded (index arithmetic as expressions, lanes as ×N).

Run: python benchmarks/fold_ratio.py [WORKLOAD ...]   (workloads: conv, grouped, attention, transformer; default all)
Target: the codegen steps (a kernel's steps from View Base AST to View Program) of index-heavy kernels (conv,
attention) draw at least 3x fewer nodes folded than raw.

For each kernel, its top-level codegen steps: the nodes of the graph each rewrites (its input, as a picture of it alone
shows it: nothing marked) raw and folded; the smallest, median and largest ratio, how many steps reach 3x, the View
landmarks and the graph the expander made (index arithmetic over vectors of constants: `{0,1,2}.reshape((3,1))*8`).
A whole step's before/after picture of a step that rewrites most of the graph folds little, by design: a changed node
is never folded away (the single matches' pictures mark a few nodes each and fold like the input).
"""
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import workloads

import tgviz
from tgviz import bridge as tg
from tgviz.draw import fold as F
from tgviz.draw.scene import make_scene

TARGET = 3.0
SMALL = 100  # kernels whose codegen graphs stay under this many nodes are summed up in one line


WORKLOADS = {
  "conv": lambda: workloads.example("tutorial_conv2d.py"),
  "grouped": lambda: workloads.example("conv2d_variants.py"),
  "attention": workloads.attention,
  "transformer": lambda: workloads.example("transformer_block.py"),
}


def counts(step: tgviz.Step) -> tuple[int, int]:
  """Raw and folded nodes of the step's input graph, drawn alone."""
  g = tg.to_graph(step.before(), step.call_notes)
  scene = make_scene(g, g, set(), set(), {})
  return len(scene.nodes), len(F.fold(scene).nodes)


def codegen_steps(group) -> list[tgviz.Step]:
  """A kernel's top-level steps from View Base AST to View Program."""
  names = [s.name for s in group.steps]
  if "View Base AST" not in names or "View Program" not in names: return []
  first, last = names.index("View Base AST"), names.index("View Program")
  return [s for s in group.steps[first:last + 1] if s.depth == 0]


def main() -> None:
  names = sys.argv[1:] or list(WORKLOADS)
  for name in names:
    with tgviz.capture() as trace: WORKLOADS[name]()
    print(f"== {name}: {len(trace.kernels)} kernels; per kernel its codegen steps' input graphs, raw -> folded nodes")
    small: list[float] = []
    for g in trace.groups:
      if g.kernel is None or not (steps := codegen_steps(g)): continue
      st = time.perf_counter()
      rows = [(s.name, *counts(s)) for s in steps]
      took = time.perf_counter() - st
      ratios = [raw / folded for _, raw, folded in rows]
      big = max(rows, key=lambda r: r[1])
      if big[1] < SMALL: small += ratios; continue
      at = [n for (n, _, _), r in zip(rows, ratios, strict=True) if r >= TARGET]
      print(f"  {g.display_name}: {len(rows)} steps, the biggest {big[1]} -> {big[2]} nodes ({big[0]}); ratio min "
            f"{min(ratios):.1f}x, median {statistics.median(ratios):.1f}x, max {max(ratios):.1f}x; {len(at)} of {len(rows)} at "
            f"{TARGET:g}x or more" + (f" (from {at[0]})" if at else "") + f"; {took * 1e3 / len(rows):.0f} ms a step")
      for i, ((sname, raw, folded), r) in enumerate(zip(rows, ratios, strict=True)):
        if i and rows[i - 1][0] == "expander": sname = "after expander"  # index math over vectors of constants
        if sname.startswith("View") or sname == "after expander": print(f"      {sname:16s} {raw:5d} -> {folded:4d}  {r:4.1f}x")
    if small: print(f"  the kernels under {SMALL} nodes: ratio min {min(small):.1f}x, median {statistics.median(small):.1f}x, "
                    f"max {max(small):.1f}x over {len(small)} steps")


if __name__ == "__main__":
  main()
