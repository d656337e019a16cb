"""What the comparison's frontend (``js/compare.js``) shows, for the CompareWidget and the HTML comparison page.

State: ``summary`` (text), ``labels`` (the two sides' names), ``sides`` (per side: label, kernels, steps, matches,
rewrite_ms), ``rows`` (the kernel table, its values naming a side named by its label (said): pairs, then the kernels
only one side has, then a row per group of kernels computing the same user ops, ``kind`` "group", its runs, times, FLOPs
and bytes summed, the rows of its kernels naming it in ``under``; a row's ``index`` is its position),
``steps`` (every step name whose match counts differ: a, b; the biggest difference first), ``code_css``. The frontend asks for a row
with ``{"type": "pair", "index": i}`` and gets a PairMsg: the code diff and, per side, the kernel's landmark graphs as SVG
and its highlighted code (a kernel of a group: beside the first of its counterparts, no diff).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tgviz import bridge as tg
from tgviz.draw.scene import DEFAULT_MAX_NODES
from tgviz.draw.svg import text as escaped
from tgviz.trace.comparison import Comparison, KernelPair
from tgviz.trace.steps import Step
from tgviz.trace.trace import Kernel
from tgviz.views.assets import COMPARE_CSS, esm, script_safe, styles
from tgviz.views.highlight import code_css, highlight_code
from tgviz.views.messages import Landmark, PairMsg, PairSide
from tgviz.views.picture import picture


def entries(cmp: Comparison) -> list[tuple[Kernel | None, Kernel | None]]:
  """The kernel table's rows as (kernel of a, kernel of b): pairs, then the kernels only a has, then only b."""
  return [*((p.a, p.b) for p in cmp.pairs), *((k, None) for k in cmp.only_a), *((None, k) for k in cmp.only_b)]


SUMMED = ("runs", "time_us", "flops", "bytes")  # a group row's columns: its kernels' values summed per side


def _group_row(cmp: Comparison, rows: list[dict[str, Any]], group: int) -> dict[str, Any]:
  members = [r for r in rows if r["group"] == group]
  def total(key: str) -> float | None:
    values = [r[key] for r in members if r[key] is not None]
    return round(sum(values), 3) if values else None
  return {"kind": "group", "how": "same ops", "name": cmp.groups[group].label, "group": group, "code": "–",
          **{f"{side}_{key}": total(f"{side}_{key}") for side in "ab" for key in SUMMED}}


def _launch(k: dict[str, Any], side: str) -> str | None:
  if k[f"{side}_name"] is None: return None
  def dims(v: list[int] | None) -> str: return f"[{','.join(map(str, v))}]" if v is not None else "–"
  return f"{dims(k[f'{side}_global_size'])} {dims(k[f'{side}_local_size'])}"  # compact: the table fits the widget


def _code(pair: KernelPair | None) -> str:
  if pair is None: return "–"
  return "same" if pair.identical else "+{} −{}".format(*pair.lines_changed)


def said(value: str | None, labels: tuple[str, str]) -> str | None:
  """A kernel_table value that names a side by its letter ("b slower", "only a") as the page names the sides, by their
  labels ("retry slower", "only in general"); any other value as it is."""
  la, lb = labels
  return {"b faster": f"{lb} faster", "b slower": f"{lb} slower", "only a": f"only in {la}", "only b": f"only in {lb}"}.get(value or "", value)


def state(cmp: Comparison) -> dict[str, Any]:
  """The frontend's state of a comparison (see the module's docstring)."""
  rows = cmp.kernel_table()
  pairs: list[KernelPair | None] = [*cmp.pairs, *[None] * (len(rows) - len(cmp.pairs))]
  for i, (row, pair, (ka, kb)) in enumerate(zip(rows, pairs, entries(cmp), strict=True)):
    # a kernel under a group of the same ops is in one side, not "only in" it: the other side computes them too
    inside = {"only a": f"in {cmp.labels[0]}", "only b": f"in {cmp.labels[1]}"}
    how = said(row["how"], cmp.labels) if row["group"] is None else inside.get(row["how"], row["how"])
    row.update(index=i, code=_code(pair), a_launch=_launch(row, "a"), b_launch=_launch(row, "b"),
               how=how, time=said(row["time"], cmp.labels),
               a_name=ka.display_name if ka else None, b_name=kb.display_name if kb else None)  # as each side names it
    if row["group"] is not None: row["under"] = len(rows) + row["group"]  # its group's row, after the kernels' rows
  rows += [{**_group_row(cmp, rows, g), "index": len(rows) + g} for g in range(len(cmp.groups))]
  sides = [{"label": label, "kernels": c.kernels, "steps": c.steps, "matches": c.matches, "rewrite_ms": round(c.rewrite_time * 1e3, 2)}
           for label, c in zip(cmp.labels, cmp.counts, strict=True)]
  return {"summary": cmp.summary(), "labels": list(cmp.labels), "sides": sides, "rows": rows, "code_css": code_css(),
          "steps": [{"name": d.name, "a": d.a, "b": d.b} for d in cmp.step_deltas]}


def _side(k: Kernel | None, max_nodes: int) -> PairSide | None:
  if k is None: return None
  steps: dict[str, Step] = {}
  for s in k.group.steps: steps.setdefault(s.name, s)
  graphs = [Landmark(step=n, svg=picture(steps[n], side="before", max_nodes=max_nodes).svg) for n in tg.KERNEL_LANDMARKS if n in steps]
  head = f"{k.display_name} · {k.device} ({k.renderer}) · global {list(k.global_size)} · local {list(k.local_size) if k.local_size else '–'}"
  return PairSide(name=k.display_name, head=head, html=highlight_code(k.source, k.renderer) if k.source else "", graphs=graphs)


def pair_message(cmp: Comparison, index: int, max_nodes: int = DEFAULT_MAX_NODES) -> PairMsg:
  """Row index of the kernel table opened: the code diff, and per side the kernel's landmark graphs and code (IndexError
  for a row the table does not have)."""
  a, b = entries(cmp)[index]
  diff = cmp.pairs[index].code_diff if a is not None and b is not None else ""
  group = cmp.group_of(a) if a is not None else cmp.group_of(b) if b is not None else None
  if group is not None: a, b = a or group.a[0], b or group.b[0]  # beside the first kernel of the other side computing its ops
  return PairMsg(type="pair", index=index, diff=diff, sides=[_side(a, max_nodes), _side(b, max_nodes)])


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{{margin:16px;font-family:system-ui,sans-serif}} h1{{font-size:18px}} {css}</style></head>
<body><h1>{title}</h1><div id="tgviz"></div>
<script type="application/json" id="tgviz-compare">{data}</script>
<script type="module">
const mod = await import(URL.createObjectURL(new Blob([{module}], {{type: "text/javascript"}})));
mod.open(JSON.parse(document.getElementById("tgviz-compare").textContent), document.getElementById("tgviz"));
</script></body></html>
"""


def write_comparison(cmp: Comparison, path: str | Path, title: str | None = None, max_nodes: int = DEFAULT_MAX_NODES) -> Path:
  """Write the self-contained HTML page of a comparison (no server, kernel or network): the state and every pair's
  message, and the frontend. title: default "tgviz comparison: <label a> vs <label b>". Returns the path."""
  if title is None: title = "tgviz comparison: {} vs {}".format(*cmp.labels)
  out = Path(path)
  out.parent.mkdir(parents=True, exist_ok=True)
  data = {"state": state(cmp), "pairs": [pair_message(cmp, i, max_nodes) for i in range(len(entries(cmp)))]}
  css = styles(*COMPARE_CSS)
  out.write_text(_PAGE.format(title=escaped(title), css=css, data=script_safe(json.dumps(data, separators=(",", ":"))),
                              module=script_safe(json.dumps(esm("compare.js")))), encoding="utf-8")
  return out
