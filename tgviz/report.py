"""The HTML report: one self-contained page to browse a trace, the widget's own frontend on recorded pictures.

No server, no kernel, no network: the page embeds the frontend (``js/widget.js``, ``js/report.js``, ``js/widget.css``)
and the protocol's picture messages, gzipped; ``report.js`` stands in for the widget model and answers from them.
"""
from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Callable
from pathlib import Path

from tgviz import layout as L
from tgviz import protocol as P
from tgviz.assets import static_file
from tgviz.highlight import code_css
from tgviz.model import Trace

DEFAULT_MATCH_PICTURES = 20  # per-match pictures are kept for steps with at most this many matches

_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{{margin:16px;font-family:system-ui,sans-serif}} h1{{font-size:18px}} {css}</style></head>
<body><h1>{title}</h1><div id="tgviz"></div>
<script type="application/octet-stream" id="tgviz-data">{data}</script>
<script type="module">
const load = (src) => import(URL.createObjectURL(new Blob([src], {{type: "text/javascript"}})));
const [widget, report] = await Promise.all([load({widget_js}), load({report_js})]);
await report.open(widget, document.getElementById("tgviz"), document.getElementById("tgviz-data").textContent);
</script></body></html>
"""


def _js(name: str) -> str:
  """A frontend file as a JS string literal that is safe inside a <script> element."""
  return json.dumps(static_file(name).read_text()).replace("</", "<\\/")


def write_report(trace: Trace, path: str | Path, title: str = "tgviz trace", max_nodes: int = L.DEFAULT_MAX_NODES,
                 match_pictures: int = DEFAULT_MATCH_PICTURES, progress: Callable[[int, int], None] | None = None) -> Path:
  """Write one self-contained HTML file to browse the trace (tree, graphs, code) with no server, kernel or network.
  Every step's picture is included, and the per-match pictures of steps with at most match_pictures matches.
  progress(done, total) is called as pictures are drawn. Returns the path."""
  steps = list(trace.steps)
  todo = [(s, None) for s in steps] + [(s, m) for s in steps if len(s.matches) <= match_pictures for m in range(len(s.matches))]
  pictures = []
  for i, (s, m) in enumerate(todo):
    pictures.append(P.picture_message(trace, P.step_key(s), m, max_nodes=max_nodes))
    if progress is not None: progress(i + 1, len(todo))
  state = {"tree": P.tree(trace), "selected": P.first_selection(trace), "match": None, "view": "auto",
           "code_css": code_css(), "summary": trace.summary(), "error": trace.traceback or ""}
  blob = base64.b64encode(gzip.compress(json.dumps({"state": state, "pictures": pictures}).encode(), 6, mtime=0)).decode()
  page = _PAGE.format(title=L.text(title), css=static_file("widget.css").read_text(), data=blob,
                      widget_js=_js("widget.js"), report_js=_js("report.js"))
  out = Path(path)
  out.parent.mkdir(parents=True, exist_ok=True)
  out.write_text(page, encoding="utf-8")
  return out
