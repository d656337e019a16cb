"""What the HTML report's page holds of a trace, as data: each step's graphs as rows of its segment's node table (the
graphs the page cannot replay itself stored, see tg.page_replays), its panels' text, the patterns its matches name,
and the tables' contents, stored once and in pieces; each piece of data a compressed chunk the page decodes when it needs
it. Owns the data's shape (``js/report.js`` reads it); the page around it is :mod:`tgviz.report.writer`'s.
"""
from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import zstandard

from tgviz import bridge as tg
from tgviz.trace.steps import Step, where
from tgviz.views import protocol as P
from tgviz.views.picture import SIDES, sides


def chunk(name: str, data: Any) -> str:
  """One piece of the page's data: JSON, zstd-compressed, base64, in an inert <script> element the page decodes on
  demand (js/report.js decoder)."""
  # zstd level 8: the GPT step's data 4.50 MB in 0.32 s, where gzip at level 4 made 5.81 MB in 0.26 s (level 9, 5.16 MB
  # in 2.05 s); zstd's level 9 and up gain under 1% for 20% more time and up. (A compressor made for each: forked
  # writers and threads call this.)
  blob = base64.b64encode(zstandard.ZstdCompressor(level=8).compress(json.dumps(data, separators=(",", ":")).encode())).decode()
  return f'<script type="application/octet-stream" id="tgviz-{name}">{blob}</script>\n'


def unchunk(payload: str) -> Any:
  """What a chunk's <script> element holds (its text), decoded: the inverse of chunk, as the page reads it."""
  return json.loads(zstandard.ZstdDecompressor().decompress(base64.b64decode(payload)))



SEGMENT = 32  # consecutive steps of a group share one node table, one chunk the page decodes whole to draw one
FORGET_EVERY = 32  # stored graphs of a step, between two times its table lets go of the UOps of the graphs behind
# past a step's first dtype change, where the page does not derive the rebuilt nodes' dtypes (tg.page_replays), every
# so many matches a graph is stored though the page could chain to it: the
# page chains from the nearest graph it has, some 1 ms a match (the ResNet step's busiest step, opened: 1.9 s chaining
# 1,900 matches to its last graph, 0.64 s before it chained any)
CHECKPOINT = 128
# a step the page can neither replay nor chain (too big for it: see tg.page_replays) stores every later graph, each made
# by tinygrad's own substitute over the whole graph: at most this many nodes in all (the graphs of its first matches).
# A big model's schedule step (5,190 such matches over 21,900 nodes, 0.1 s a graph) held a report worker 14 minutes
# and 3 GB; the rest of its matches' graphs are Python's to show (Step.at, the widget). At 4 million nodes (182 graphs
# of that step) gpt-big's two such steps were its report's biggest piece: 32 s of a worker and 8.2 MB of the 43, for
# 3.5% of their graphs; at 1 million, 9.5 s and 2.0 MB, for 0.9%
STORE_NODES = 1_000_000


def step_data(step: Step, table: tg.NodeTable, patterns: dict[tuple[str, int], int]) -> dict[str, Any]:
  """A step as the page draws it, its graphs rows of its segment's table (step_data adds those that are new: a step's
  graphs are mostly those of the step before it): the input's row, each match's node and replacement (row ids), what
  the rewrite returned (after), the panels' text and each match's [pattern, µs, whether it raised]; a pattern is its
  index in the report's `patterns` (see pattern_index). The graphs after each of the first `computed` matches are not
  stored: js/port/replay.js computes them exactly from those (`replay`: the rewrite's options; see tg.page_replays). Past
  them, either the page goes on along the chain from the graphs stored of the matches listed in `stored` (those whose
  step only tinygrad derives: Step.later_graphs; and every CHECKPOINT-th and the last, so that the page chains at most
  CHECKPOINT matches to any), or, `stored` null, every later graph is stored, up to STORE_NODES nodes in all (`graphs`
  then ends before the last match: the page says the others are not in the report). `graphs`: the input's root, then
  the stored graphs' roots; `after` is null when it is the replay's last (or, the graphs cut short, not stored)."""
  pairs = step.pairs()
  graphs = [table.add(step.before())]
  refs = [[table.add(u0), table.add(u1)] for u0, u1 in pairs]
  returned = step.returned()
  after = table.add(returned) if returned is not None else None
  computed, chain = tg.page_replays(pairs, table, [graphs[0], *(i for p in refs for i in p)], step.options["bottom_up"])
  stored: list[int] | None = None
  if computed < len(pairs):
    stored = []
    most = None if chain else max(1, STORE_NODES // len(tg.toposort(step.before())))  # graphs stored, at most
    for k, g, derived in step.later_graphs(computed):
      if chain and not derived and k % CHECKPOINT and k < len(pairs): continue  # the page chains to it
      if most is not None and len(stored) == most: break
      graphs.append(table.add(g))
      stored.append(k)
      if len(stored) % FORGET_EVERY == 0: table.forget(g)  # one graph's UOps held at a time, not hundreds of graphs'
    if after is None and stored and stored[-1] == len(pairs): after = graphs[-1]
  return {**step_fields(step, patterns), "graphs": graphs, "after": after, "replay": step.options if computed or chain else None,
          "computed": computed, "stored": None if stored is None or not chain else stored, "pairs": refs}


def lacking(steps: dict[str, dict[str, Any]]) -> dict[str, list]:
  """Of a segment's steps as step_data gives them (by key), those whose last graph the page cannot make: too big to
  store every graph (stored null, graphs cut short), and their output not stored either; each [the matches after which
  it can, the matches, its name in titles]. A node panel follows a node through every step of its group to each one's
  last graph: the page says at once that it cannot (the report's "lacking"), rather than after replaying the steps
  before (gpt-big's schedule: 927 steps, seconds)."""
  out = {}
  for key, s in steps.items():
    kept = s["computed"] + len(s["graphs"]) - 1 if s["stored"] is None else len(s["pairs"])
    if s["after"] is None and kept < len(s["pairs"]): out[key] = [kept, len(s["pairs"]), s["info"]["name"]]
  return out


def step_fields(step: Step, patterns: dict[tuple[str, int], int]) -> dict[str, Any]:
  """What step_data holds of a step besides its graphs: its panel (without the call stack, the group's, stored once
  with it, nor its group's name and its title, which the page takes from the tree: see tgviz.report.early), its sides, its
  group, its matches."""
  info = {k: v for k, v in P.step_info(step).items() if k not in ("stack", "group", "title")}
  return {"info": info, "sides": list(SIDES[sides(step)]), "group": step.group.index,
          "matches": [[patterns[m.loc], round(m.time * 1e6, 2), m.is_error] for m in step.matches]}


def pattern_index(steps: list[Step]) -> dict[tuple[str, int], int]:
  """Each pattern the steps' matches name -> its index in the report's `patterns`, in the order they first fire."""
  return {loc: i for i, loc in enumerate(dict.fromkeys(m.loc for s in steps for m in s.matches))}


def pattern_rows(patterns: dict[tuple[str, int], int]) -> list[list]:
  """The patterns the steps' matches name, each once: [file, line, "file.py:line", source]; the page makes each match's
  panel (protocol.match_info, without the diff) from them."""
  return [[file, line, where(file, line), tg.pattern_source((file, line))] for file, line in patterns]


def segments(steps: list[Step]) -> list[list[Step]]:
  """Runs of at most SEGMENT consecutive steps of one group."""
  out: list[list[Step]] = []
  for s in steps:
    if not out or s.group is not out[-1][-1].group or len(out[-1]) == SEGMENT: out.append([])
    out[-1].append(s)
  return out


class Contents:
  """The contents of the report's node tables, each stored once (segments share most of theirs): a segment's table
  refers to them through its map, segment -> the ids of its own contents in order (filled in segment order: the same
  ids whoever wrote which segment). They are stored in pieces of consecutive ids, some piece_bytes of JSON each, that
  the page decodes as a segment needs them (an LSTM's are 4.9 MB, kernel binaries among them; its first step needs a
  few kB)."""

  def __init__(self, piece_bytes: int = 1 << 16) -> None:
    self.items: list[list] = []
    self.maps: dict[str, list[int]] = {}
    self.piece_bytes = piece_bytes
    self._ids: dict[str, int] = {}
    self._sizes: list[int] = []

  def add(self, segment: int, contents: list[list]) -> None:
    """A segment's contents, in order: each new one stored, the segment's map made."""
    ids = []
    for c in contents:
      text = json.dumps(c)
      if (n := self._ids.get(text)) is None:
        n = self._ids[text] = len(self.items)
        self.items.append(c)
        self._sizes.append(len(text))
      ids.append(n)
    self.maps[str(segment)] = ids

  def chunks(self) -> Iterator[tuple[str, Any]]:
    """The "contents" chunk, {maps, pieces: the first id of each piece}, then each piece's, "c-<piece>": its contents."""
    starts: list[int] = []
    size = 0
    for i, n in enumerate(self._sizes):
      if not starts or size + n > self.piece_bytes: starts.append(i); size = 0
      size += n
    yield "contents", {"maps": self.maps, "pieces": starts}
    for p, start in enumerate(starts): yield f"c-{p}", self.items[start:starts[p + 1] if p + 1 < len(starts) else None]

