"""The HTML report: one self-contained page to browse a trace, every step and every match, with no server or network.

Graphs are stored as data, not pictures: a table of the nodes of a run of steps (shared nodes once; each step adds the
rows its graphs need), each step's input, its matches' nodes and replacements, and what the rewrite returned. The page
computes the graph after each match itself (``js/port/replay.js``, the port of the Replayer, exact as far as
``tg.page_replays`` says; the graphs it cannot make are stored) and lays them out: ``js/port/picture.js`` and ``js/port/layout.js``
turn a selection into the same DOT text and SVG as :mod:`tgviz.views.picture` and :mod:`tgviz.draw`, and graphviz compiled
to WebAssembly (``js/vendor/graphviz.js``, the same Graphviz as the Python side) places the nodes. Each segment's
data (its steps and their node table, its rows packed: tg.pack_rows), each piece of the tables' contents, and each
group's call stack and kernel code, is compressed apart (zstd) and decoded only when looked at; ``js/report.js`` stands
in for the widget model and answers the widget's own frontend with ``js/port/protocol.js``'s ports of :mod:`tgviz.views.protocol`.
tests/views/test_js_parity.py runs those ports in node on this module's data and holds them equal to the Python.
"""
from __future__ import annotations

import base64
import contextlib
import gc
import gzip
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from tgviz import bridge as tg
from tgviz.draw import fold as F
from tgviz.draw import ranks as R
from tgviz.draw.dot import CHAR_W, COMPRESS_TO, COUNT_H, FAST_ABOVE, LINE_H, MAX_COLUMNS, PAD
from tgviz.draw.graph import FAMILIES
from tgviz.draw.scene import DEFAULT_MAX_NODES, FOCUS_HOPS, MAX_FAN_IN
from tgviz.draw.svg import MARKS, STYLE
from tgviz.draw.svg import text as escaped
from tgviz.report.contents import Contents, chunk, lacking, pattern_index, pattern_rows, segments, step_data, step_fields
from tgviz.trace import search as S
from tgviz.trace.steps import Step
from tgviz.trace.trace import Trace
from tgviz.views import access as AV
from tgviz.views import failure as FV
from tgviz.views import program as PV
from tgviz.views import programmap as PM
from tgviz.views import protocol as P
from tgviz.views import run as runview
from tgviz.views import whatif as W
from tgviz.views.assets import BROWSER_CSS, esm, styles
from tgviz.views.highlight import code_css
from tgviz.work import forked

_HEAD = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{{margin:0;overflow:hidden;font-family:system-ui,sans-serif}} {css}</style></head>
<body><div id="tgviz"></div>
"""
_TAIL = """<script type="module">
const U8 = Uint8Array, bytes = (b64) => (U8.fromBase64 ? U8.fromBase64(b64) : U8.from(atob(b64), (c) => c.charCodeAt(0)));
const text = (b64) => new Response(new Blob([bytes(b64)]).stream().pipeThrough(new DecompressionStream("gzip"))).text();
const load = async (b64) => import(URL.createObjectURL(new Blob([await text(b64)], {{type: "text/javascript"}})));
const [widget, graphviz, sha256, fzstd, report] = await Promise.all([{modules}].map(load));
await report.open({{widget, graphviz, sha256, fzstd}}, document.getElementById("tgviz"));
</script></body></html>
"""
MODULES = ("widget.js", "vendor/graphviz.js", "vendor/sha256.js", "vendor/fzstd.js", "report.js")  # report.js holds picture.js and replay.js


def _js(name: str) -> str:
  """A frontend module (its imports bundled in), gzipped, as a base64 JS string literal (safe inside a <script> element;
  _TAIL decodes it): the modules' 1.38 MB of text are 1.05 MB so, a third of the MNIST step's report."""
  return json.dumps(base64.b64encode(gzip.compress(esm(name).encode(), 9, mtime=0)).decode())


def config(max_nodes: int) -> dict[str, Any]:
  """The drawing constants of tgviz.draw, for js/port/picture.js: one source of truth for both sides."""
  return {"style": STYLE, "families": [[f, name] for f, (_, name) in FAMILIES.items()], "marks": list(MARKS),
          "charW": CHAR_W, "lineH": LINE_H, "pad": PAD, "countH": COUNT_H, "fastAbove": FAST_ABOVE, "maxFanIn": MAX_FAN_IN,
          "focusHops": FOCUS_HOPS, "maxNodes": max_nodes, "opaqueBodies": tg.opaque_call_bodies(), "nodesep": R.NODESEP,
          "ranksep": R.RANKSEP, "compressTo": COMPRESS_TO, "minRow": R.MIN_ROW, "maxRow": R.MAX_ROW, "maxStagger": R.MAX_STAGGER,
          "rowArea": R.ROW_AREA, "maxColumns": MAX_COLUMNS, "fold": F.config(), "opFamilies": tg.op_families(),
          "dtypes": tg.dtype_rules()}


@contextlib.contextmanager
def _no_gc() -> Iterator[None]:
  # replays make millions of short-lived UOps, and Python's cyclic collector would rescan the whole heap many times over
  # (forked workers run without it: see forked)
  collecting = gc.isenabled()
  gc.disable()
  try: yield
  finally:
    if collecting: gc.enable()


# a segment as written: its chunk, its table's contents, its steps whose last graph the page cannot make (Writer.segment)
SegmentText = tuple[str, list[list], dict[str, list]]


@dataclass
class Written:
  """What of a report was written before Writer.write, by other processes (tgviz.report.early): segments by index
  (Writer.segment's), groups' chunks by group index (Writer.group_chunks'), the search index's chunk (Writer.search_chunk's)."""
  segments: dict[int, SegmentText] = field(default_factory=dict)
  groups: dict[int, list[str]] = field(default_factory=dict)
  search: str | None = None


class Writer:
  """Writes one trace's report. The steps, a segment at a time, are the bulk of the work, and can go to forked
  workers (forked.Workers with this writer as their state): each segment is independent of the others, and each
  process keeps its own labels of the nodes it has seen (the output is the same whoever writes which segment)."""

  def __init__(self, trace: Trace, title: str = "tgviz trace", max_nodes: int = DEFAULT_MAX_NODES):
    self.trace, self.title, self.max_nodes = trace, title, max_nodes
    self.steps = list(trace.steps)
    self.segments = segments(self.steps)
    self.patterns = pattern_index(self.steps)
    self.cache = tg.NodeCache(trace.call_notes)  # nodes live on from step to step of a segment: each is labelled once
    self.notes = {k: tg.note_line(v) for k, v in trace.call_notes.items()}  # the CALL notes' label lines

  def state(self) -> dict[str, Any]:
    """The page's state: the widget's synced state (see tgviz.views.protocol), the drawing constants, the CALL notes."""
    trace = self.trace
    failure = FV.failure_info(trace)
    selected, match, sheet = FV.opening(trace, failure)
    return {"tree": P.tree(trace), "selected": selected, "match": match, "view": "auto",
            "code_css": code_css(), "summary": self.summary(), "kernels": P.kernel_rows(trace, peaks=True),
            "error": trace.traceback or "", "config": config(self.max_nodes),
            "notes": self.notes, "segments": {P.step_key(s): i for i, seg in enumerate(self.segments) for s in seg},
            "whatif": W.state(trace), "failure": failure, "opening": sheet}

  def head(self) -> list[str]:
    """The chunks the page reads first: its state, the rules, the run's tabs (timeline, memory, roofline) and the program
    map, what it opens on."""
    trace = self.trace
    return [chunk("state", self.state()), chunk("rules", P.rules_message(trace)), chunk("run", runview.run_message(trace)),
            chunk("programmap", PM.program_map(trace))]

  def summary(self) -> str:
    """The trace's summary under the page's title (the page shows its first line over the widget)."""
    text = self.trace.summary()
    return text if text.startswith(self.title) else f"{self.title} · {text}"

  def groups(self) -> Iterator[tuple[str, dict[str, Any]]]:
    """What every step of a group shows alike, per group with steps: its call stack, its kernel's code, a schedule's
    kernels; and per kernel its uops and asm tabs; (chunk name, data)."""
    for i in range(len(self.trace.groups)): yield from self.group(i)

  def group(self, i: int) -> Iterator[tuple[str, dict[str, Any]]]:
    """Group i's part of groups()."""
    g = self.trace.groups[i]
    if g.steps:
      yield f"g-{g.index}", {"stack": P.call_stack(g), "kernel": P.kernel_info(g), "produced": P.produced_kernels(self.trace, g),
                            "schedule": P.schedule_calls(self.trace, g)}
    if g.kernel is not None: yield f"p-{g.index}", PV.program_data(g.kernel)  # the uops and asm tabs
    if g.kernel is not None: yield f"x-{g.index}", cast(dict[str, Any], AV.access_message(g.kernel))  # the access tab

  def group_chunks(self, i: int) -> list[str]:
    """Group i's chunks, as the report stores them (see group)."""
    return [chunk(name, data) for name, data in self.group(i)]

  def search_chunk(self) -> str:
    """The search index's chunk (tgviz.trace.search; the page's js/port/search.js searches it)."""
    return chunk("search", S.index(self.trace))

  def segment_data(self, i: int) -> dict[str, Any]:
    """Segment i (consecutive steps of a group): each step's step_data by step key, and the node table they share, its
    rows packed (tg.pack_rows) with their contents; the page decodes it whole to draw any of its steps."""
    self.cache.clear()  # its UOps: a segment shares few with the one before, and they hold the replays' graphs alive
    table = tg.NodeTable(self.cache)
    steps = {P.step_key(s): step_data(s, table, self.patterns) for s in self.segments[i]}
    return {"steps": steps, "contents": table.contents, **tg.pack_rows(table.rows, table.contents, self.notes, table.key)}

  def segment(self, i: int) -> SegmentText:
    """The chunk of segment i, its table's contents (the report stores each once: see Contents), and its steps whose
    last graph the page cannot make (contents.lacking)."""
    data = self.segment_data(i)
    contents = data.pop("contents")
    return chunk(f"t-{i}", data), contents, lacking(data["steps"])

  def segment_check(self, i: int, fresh: int) -> str:
    """All that segment i's chunk is made of besides its steps' graphs (recorded once and for all): each step's key and
    step_fields, and what it returned: its trace number if below `fresh`, else its node key (tgviz.report.early compares a
    segment written from a capture's snapshot, whose `fresh` that is, with the trace's own)."""
    def returned(s: Step) -> list | None:
      if (num := s.returned_num) is None: return None
      return ["n", num] if num < fresh else ["k", tg.node_key(s.after())]  # (after: what it returned, here)
    return json.dumps([[P.step_key(s), step_fields(s, self.patterns), returned(s)] for s in self.segments[i]])

  def write(self, path: str | Path, workers: forked.Workers[Writer] | None = None,
            progress: Callable[[int, int], None] | None = None, written: Written | None = None,
            head: list[str] | None = None) -> Path:
    """Write the report to path (the steps by workers, if given: their state must be this writer; what `written` holds,
    as written already; head: head()'s chunks, made already). progress(done, total) is called as steps are written.
    Returns the path."""
    out, trace = Path(path), self.trace
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as f, _no_gc():
      for k in trace.kernels:  # the asm tabs' -g listings, had here: the workers are forked after it (see debug_listing)
        if k.source: tg.debug_listing(k.device, k.source)
      pool = workers or forked.Workers(self, 0)
      # with workers, all started now: the groups' chunks first (the biggest kernels' code, highlighted, and their asm
      # linked to it, take seconds), then the segments'
      early = written or Written()
      made = pool.map(_group, (i for i in range(len(trace.groups)) if i not in early.groups))
      groups = (early.groups[i] if i in early.groups else next(made) for i in range(len(trace.groups)))
      # the search index (seconds on a big trace: beside the others)
      search = pool.submit(_search, None) if early.search is None else None
      todo = pool.map(_segment, (i for i in range(len(self.segments)) if i not in early.segments))
      segments = (early.segments[i] if i in early.segments else next(todo) for i in range(len(self.segments)))
      f.write(_HEAD.format(title=escaped(self.title), css=styles(*BROWSER_CSS)))
      f.writelines(head if head is not None else self.head())
      for texts in groups: f.writelines(texts)
      done, contents, cut = 0, Contents(), {}
      for i, (segment, (text, own, short)) in enumerate(zip(self.segments, segments, strict=True)):
        f.write(text)
        contents.add(i, own)
        cut.update(short)
        done += len(segment)
        if progress is not None: progress(done, len(self.steps))
      f.writelines(chunk(name, data) for name, data in contents.chunks())
      f.write(chunk("patterns", pattern_rows(self.patterns)))
      f.write(chunk("lacking", cut))
      f.write(search.result() if search is not None else early.search or "")  # (search None: early.search is the chunk)
      f.write(_TAIL.format(modules=", ".join(_js(m) for m in MODULES)))
    return out


def _segment(writer: Writer, i: int) -> SegmentText:
  return writer.segment(i)


def _search(writer: Writer, _: None) -> str:
  return writer.search_chunk()


def _group(writer: Writer, i: int) -> list[str]:
  return writer.group_chunks(i)


def write_report(trace: Trace, path: str | Path, title: str = "tgviz trace", max_nodes: int = DEFAULT_MAX_NODES,
                 progress: Callable[[int, int], None] | None = None, workers: int = 0) -> Path:
  """Write one self-contained HTML file to browse the trace (tree, every step and match, the kernels' code) with no
  server, kernel or network. Steps are written a segment at a time, so a process holds the graphs of one segment at a
  time; workers > 0 writes them in that many forked processes (on Linux; see tgviz.work.forked), and this one writes their
  text to the file in order. progress(done, total) is called as steps are written. Returns the path."""
  writer = Writer(trace, title, max_nodes)
  with forked.Workers(writer, workers) as pool: return writer.write(path, pool, progress)

