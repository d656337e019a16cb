"""The search's answer as the trace browser shows it (a SearchMsg), from the trace's search index (tgviz.trace.search).

The widget asks Python (search_message); the HTML report's page answers the same from the index the report stores
(``js/port/search.js`` searchMessage, the port of this module's functions, held equal by tests/views/test_js_parity.py).
"""
from __future__ import annotations

from typing import Any

from tgviz.trace import search as S
from tgviz.trace.steps import CellLabel
from tgviz.trace.trace import Trace
from tgviz.views.messages import SearchHit, SearchMsg

SHOWN = 50  # hits of one kind a message lists (its counts say how many there are)


def hit_info(index: dict[str, Any], row: S.Row) -> SearchHit:
  """A hit (a row of tgviz.trace.search.find) as the panel shows it: where it is by the tree's names, and its step's key
  (protocol.step_key)."""
  kind, g, s, m, line, text, node, count = row
  group = index["groups"][g][0]
  where = f"{group} / {index['names'][index['steps'][g][s]]}" if s is not None else group
  return SearchHit(kind=kind, group=g, step=f"{g}:{s}" if s is not None else None, match=m, line=line, node=node, count=count,
                   text=text, where=where)


def message(index: dict[str, Any], text: str) -> SearchMsg:
  """The answer to a search of text in an index: the first SHOWN hits of each kind, how many of each there are, and the
  groups a user's op found is in (the kernels that compute it: the tree shows them whole; a step, a UOp, a rule or a
  code line found is a row of the tree or of its kernel, which the tree's own filter by name keeps or not)."""
  rows = S.find(index, text)
  counts: dict[str, int] = {}
  hits = []
  for row in rows:
    counts[row[0]] = n = counts.get(row[0], 0) + 1
    if n <= SHOWN: hits.append(hit_info(index, row))
  return SearchMsg(type="search", text=text, total=len(rows), counts=counts, hits=hits, groups=sorted({row[1] for row in rows if row[0] == "origin"}))


def search_message(trace: Trace, text: str, cell_label: CellLabel | None = None) -> SearchMsg:
  """The answer to the browser's search of text in the trace, the user's lines named as elsewhere (a notebook's cells by
  cell_label: tgviz.trace.steps.place)."""
  return message(S.index(trace, cell_label), text)
