"""The report's writer holds a bounded part of a big step: a step whose graphs the report stores (from a replacement
that changes a dtype on, where the page cannot derive the dtypes of the nodes rebuilt over it, see
tgviz.bridge.page_replays: every one of a bottom-up rewrite's, a few of a top-down one's) is written one graph at a
time, its node table letting go of the UOps of the graphs behind it (NodeTable.forget), with the same rows as if it had
kept them. Real tinygrad: the attention block's devectorize2 steps, thousands of matches each."""
import gc

from tinygrad.uop.ops import UOpMetaClass

from tgviz import bridge as tg
from tgviz.bridge import replay
from tgviz.report.writer import Writer, step_data


def _stored_step(trace, kernel: str):
  return next(s for s in trace.steps if s.group.display_name == kernel and s.name == "devectorize2")


def test_a_table_that_forgets_makes_the_rows_of_one_that_keeps(attention_trace):
  """Rows by UOp (kept) and rows of UOps let go of and made again (found by key): the same table, row for row."""
  step = _stored_step(attention_trace, "E_2_6_6")
  kept = tg.NodeTable(tg.NodeCache(attention_trace.call_notes))
  roots = [kept.add(g) for g in step.replay()]
  for every in (1, 7):
    forgetting = tg.NodeTable(tg.NodeCache(attention_trace.call_notes))
    again = []
    for n, g in enumerate(step.replay(), 1):  # the graphs behind die: their UOps are made anew where they come back
      again.append(forgetting.add(g))
      if n % every == 0: forgetting.forget(g)
    assert again == roots and forgetting.rows == kept.rows and forgetting.contents == kept.contents, every
  assert len(kept.rows) > 5 * len(tg.toposort(step.before()))  # the step's graphs are many: much for the table to forget


def test_a_top_down_step_stores_the_graphs_of_few_matches(attention_trace, monkeypatch):
  """A step whose replacements change dtypes stores no graph but its input: the page derives the dtypes of the nodes
  rebuilt over them (tests/views/test_js_parity.py). Where it cannot (a GETTUPLE, say, in the step's table), a
  top-down step stores, past its first such replacement, only the graphs of the matches that rebuild a node over a
  source of another dtype (the page chains to the others)."""
  step = _stored_step(attention_trace, "r_2_6_6_8")
  data = step_data(step, tg.NodeTable(tg.NodeCache(attention_trace.call_notes)), Writer(attention_trace).patterns)
  assert data["computed"] == len(step.matches) > 3000 and data["stored"] is None and len(data["graphs"]) == 1
  monkeypatch.setattr(replay, "page_derives", lambda uops, pairs: False)
  data = step_data(step, tg.NodeTable(tg.NodeCache(attention_trace.call_notes)), Writer(attention_trace).patterns)
  assert len(step.matches) - data["computed"] > 3000 and len(data["graphs"]) - 1 == len(data["stored"]) < 100


def test_writing_a_stored_step_holds_a_bounded_part_of_it(attention_trace, monkeypatch):
  """step_data of a step whose every graph past its first dtype change is stored (as a bottom-up rewrite's are; here
  the same step, told the page can neither derive its dtypes nor chain): once written, the table it wrote into holds the UOps of about one graph,
  not of every graph it stored (the GPT's schedule step: 340,000 rows, 1.1 GB)."""
  step = _stored_step(attention_trace, "r_2_6_6_8")
  page_replays = tg.page_replays
  monkeypatch.setattr(replay, "page_derives", lambda uops, pairs: False)
  monkeypatch.setattr(tg, "page_replays", lambda *args: (page_replays(*args)[0], False))
  gc.collect()
  alive = len(UOpMetaClass.ucache)
  table = tg.NodeTable(tg.NodeCache(attention_trace.call_notes))
  data = step_data(step, table, Writer(attention_trace).patterns)
  held = len(UOpMetaClass.ucache) - alive
  stored = len(data["graphs"]) - 1
  assert stored > 0.9 * len(step.matches) > 3000
  assert len(table.rows) > 50_000 and held < len(table.rows) / 20, (len(table.rows), held)


def test_a_uop_made_again_over_a_differently_tagged_source_gets_its_own_row():
  """tinygrad's UOp.key leaves out tags: a graph let go of whose node differs from a later one only in a source's tag
  (the MLP step's "stage to store" retags RANGEs) must not lend it its row, whose sources are the other UOps."""
  from tinygrad.dtype import dtypes
  from tinygrad.uop.ops import UOp
  a = UOp.const(3, dtypes.int)
  untagged, tagged = (a + a), (a + a).replace(tag=())
  before, after = untagged * 5, tagged * 5
  assert before.key == after.key and before is not after  # what makes the two alike to a table that finds rows by key
  table = tg.NodeTable(tg.NodeCache({}))
  row_before = table.add(before)
  table.forget(a)
  row_after = table.add(after)
  assert row_after != row_before and table.rows[row_after][3] != table.rows[row_before][3]
  assert table.add(untagged * 5) == row_before  # made again exactly: found, the same row
