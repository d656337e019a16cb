"""A self-contained HTML trace browser: the widget's own frontend running on recorded pictures.

No server, no kernel, no network: the page embeds the widget's JavaScript and CSS and every picture, gzipped, and a
small stand-in for the widget model answers the frontend's requests from them.
"""
from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path
from typing import Callable

from tgviz import layout as L
from tgviz import viewer
from tgviz.trace import Trace
from tgviz.widget import static_file

DEFAULT_MATCH_PICTURES = 20  # per-match pictures are kept for steps with at most this many matches

_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{{margin:16px;font-family:system-ui,sans-serif}} h1{{font-size:18px}} {css}</style></head>
<body><h1>{title}</h1><div id="tgviz"></div>
<script type="application/octet-stream" id="tgviz-data">{data}</script>
<script type="module">
const widgetSource = {js};
const url = URL.createObjectURL(new Blob([widgetSource], {{type: "text/javascript"}}));
const widget = (await import(url)).default;
const b64 = document.getElementById("tgviz-data").textContent.trim();
const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
const text = await new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"))).text();
const data = JSON.parse(text);
const state = {{...data.state}}, handlers = {{}}, changed = new Set();
const emit = (ev, msg) => (handlers[ev] || []).forEach((cb) => cb(msg));
function answer() {{
  const [g, s] = state.selected, m = state.match;
  if (state.view !== "auto") return emit("msg:custom", {{type: "error",
    message: "the report holds the pictures as first shown; for the full graph use step.svg(view='full') in Python"}});
  emit("msg:custom", data.pictures[`${{g}}:${{s}}:${{m}}`] || {{type: "error",
    message: "this match is not in the report: tgviz run --matches N keeps pictures of steps with up to N matches"}});
}}
const model = {{
  get: (k) => state[k],
  set: (k, v) => {{ state[k] = v; changed.add(k); }},
  save_changes() {{ const any = ["selected", "match", "view"].some((k) => changed.has(k)); changed.clear();
                    emit("change:selected"); if (any) queueMicrotask(answer); }},
  on: (ev, cb) => {{ (handlers[ev] ||= []).push(cb); }},
  send(msg) {{
    if (msg.type === "ready") queueMicrotask(answer);
    if (msg.type === "export") {{
      const svg = document.querySelector(".tgviz-stage svg");
      const [g, s] = state.selected, name = `tgviz-${{g}}-${{s}}-${{state.match + 1}}.svg`;
      const a = Object.assign(document.createElement("a"), {{href: URL.createObjectURL(new Blob([svg.outerHTML],
        {{type: "image/svg+xml"}})), download: name}});
      a.click();
      emit("msg:custom", {{type: "exported", paths: [name + " (downloaded)"]}});
    }}
  }},
}};
widget.render({{model, el: document.getElementById("tgviz")}});
</script></body></html>
"""


def to_html(trace: Trace, path: str | Path, title: str = "tgviz trace", max_nodes: int = L.DEFAULT_MAX_NODES,
            match_pictures: int = DEFAULT_MATCH_PICTURES, progress: Callable[[int, int], None] | None = None) -> Path:
  """Write one self-contained HTML file to browse the trace (tree, graphs, code) with no server, kernel or network.
  Every step's picture is included, and the per-match pictures of steps with at most match_pictures matches.
  progress(done, total) is called as pictures are drawn. Returns the path."""
  steps = [s for g in trace.groups for s in g.steps]
  todo = [(s, -1) for s in steps] + [(s, m) for s in steps if len(s.matches) <= match_pictures for m in range(len(s.matches))]
  pictures = {}
  for i, (s, m) in enumerate(todo):
    pictures[f"{s.group.index}:{s.index}:{m}"] = viewer.step_message(trace, s.group.index, s.index, m, max_nodes=max_nodes)
    if progress is not None: progress(i + 1, len(todo))
  g, s = viewer.first_selection(trace)
  state = {"tree": viewer.tree(trace), "selected": [g, s], "match": -1, "view": "auto", "code_css": viewer.code_css(),
           "summary": trace.summary(), "error": trace.traceback or ""}
  blob = base64.b64encode(gzip.compress(json.dumps({"state": state, "pictures": pictures}).encode(), 6, mtime=0)).decode()
  page = _PAGE.format(title=L.text(title), css=static_file("widget.css").read_text(), data=blob,
                      js=json.dumps(static_file("widget.js").read_text()).replace("</", "<\\/"))
  out = Path(path)
  out.parent.mkdir(parents=True, exist_ok=True)
  out.write_text(page, encoding="utf-8")
  return out
