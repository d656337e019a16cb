"""The core: capture() traces the real tinygrad compiler into a faithful Trace."""
import dataclasses
import gc
import random
import sys

import pytest
import workloads
from tinygrad import Tensor
from tinygrad.helpers import Context, TracingKey, cpu_events, printable
from tinygrad.uop import ops
from tinygrad.uop.ops import Ops, PatternMatcher, RewriteTrace, TrackedGraphRewrite, UOp, UPat, graph_rewrite
from tinygrad.viz import serve

import tgviz


def test_tutorial_conv2d_kernel_with_opencl_source(tutorial_trace):
  names = [k.name for k in tutorial_trace.kernels]
  assert "r_2_2_2_2" in names
  k = tutorial_trace.kernels[names.index("r_2_2_2_2")]
  assert k.device == "CL" and k.renderer == "OpenCLRenderer"
  assert "__kernel void r_2_2_2_2(" in k.source
  assert k.group.kind == "kernel" and k.group.name == "r_2_2_2_2"
  assert len(k.global_size) == 3


def test_tutorial_groups_and_landmarks(tutorial_trace):
  kinds = {g.kind for g in tutorial_trace.groups}
  assert {"schedule", "kernel"} <= kinds
  conv = next(g for g in tutorial_trace.groups if g.name == "r_2_2_2_2")
  names = [s.name for s in conv.steps]
  for landmark in ("View Base AST", "View Output AST", "linearize/render", "View Program"):
    assert landmark in names
  assert any(s.name == "View Kernel Graph" for s in tutorial_trace.steps)
  assert conv.stack, "call stack recorded while VIZ is on"
  nested = [s for s in conv.steps if s.depth > 0]
  assert nested, "sub-rewrites are nested"
  step = next(s for s in conv.steps if s.matches)
  m = step.matches[0]
  assert m.loc[0].endswith(".py") and m.loc[1] > 0 and m.source and m.time >= 0
  assert step.loc[0].endswith(".py") and step.loc[1] > 0


def test_an_unnamed_rewrite_is_named_in_the_tree_by_what_it_rewrote(tutorial_trace):
  """tinygrad names a graph_rewrite called without a name after the function: "lower all index dtypes" held fourteen
  steps all called "graph_rewrite" (new-user pass 10). The tree's row says what it rewrote (the input's op, and a small
  input written out), its tooltip and the step's title where it was called too (the tinygrad file and line its step
  recorded: weak.py's lowering of weak index dtypes, one call per node, the same in every row of them)."""
  from pathlib import Path

  from tgviz.views import protocol as P
  unnamed = [s for s in tutorial_trace.steps if s.name == "graph_rewrite"]
  assert unnamed and all("tinygrad" in Path(s.loc[0]).parts for s in unnamed)
  rows = {r["key"]: r for g in P.tree(tutorial_trace) for r in g["steps"]}
  for s in unnamed:  # (pass 11 read 22 rows of "graph_rewrite · weak.py:66" as one)
    row, where = rows[P.step_key(s)]["name"], f"graph_rewrite {Path(s.loc[0]).name}:{s.loc[1]}"
    assert row.startswith(s.before().op.name) and rows[P.step_key(s)]["where"] == where
    assert s.path.endswith(f" / {row} · {where}")  # (the graph's title)
    if s.before().op.name == "CONST":  # a constant's row says which (pass 13 read five "graph_rewrite CON…" rows alike)
      assert row == f"CONST {s.before().arg}"
  # one kernel's rewrites of different small inputs read differently, in its own rows ("ADD (lidx1+56)", "ADD (lidx1+24)")
  for g in tutorial_trace.groups:
    small = {s.before(): rows[P.step_key(s)]["name"] for s in unnamed if s.group is g and len(s.before().toposort()) <= 4}
    assert len(set(small.values())) == len(small), sorted(small.values())
  named = next(s for s in tutorial_trace.steps if s.name == "View Base AST")
  assert rows[P.step_key(named)]["name"] == "View Base AST" and "where" not in rows[P.step_key(named)]  # a name tinygrad gave stays
  # a name tinygrad gave several steps of a kernel says what each rewrote where it is small: the tutorial's kernel
  # rewrote eight reshapes' indices, one SINK of them each, "reshape" eight times (pass 18)
  conv = next(g for g in tutorial_trace.groups if g.display_name == "r_2_2_2_2")
  reshapes = [s for s in conv.steps if s.name == "reshape"]
  assert len(reshapes) == 8
  for s in reshapes:
    assert rows[P.step_key(s)]["name"] == f"reshape {', '.join(x.render(simplify=False) for x in s.before().src)}", rows[P.step_key(s)]
    assert "where" not in rows[P.step_key(s)] and s.label == rows[P.step_key(s)]["name"]
  assert len({rows[P.step_key(s)]["name"] for s in reshapes}) == 8, [rows[P.step_key(s)]["name"] for s in reshapes]


def test_rows_that_would_read_alike_are_numbered():
  """Where a step's input is too big to write out in its row, rows of one group could still read alike (pass 19: 52 rows
  of "ADD" in an MNIST kernel, "reshape" 47 times in a schedule): those are numbered in the group's order, "ADD #2";
  every row of a group then reads differently, and a row that was unique stays as it was."""
  with tgviz.capture() as trace: workloads.mlp_train((64, 32, 10), 8)
  numbered = 0
  for g in trace.groups:
    rows = [s.row[0] for s in g.steps]
    assert len(set(rows)) == len(rows), (g.display_name, rows)
    named = {s.name for s in g.steps if [x.name for x in g.steps].count(s.name) > 1}
    own = [s.own_row(s.name in named)[0] for s in g.steps]
    for what in {w for w in own if own.count(w) > 1}:
      assert [r for r, o in zip(rows, own, strict=True) if o == what] == [f"{what} #{k}" for k in range(1, own.count(what) + 1)]
      numbered += 1
    assert all(r == o for r, o in zip(rows, own, strict=True) if own.count(o) == 1)
    assert all(s.label.startswith(s.row[0]) for s in g.steps)  # (titles and paths say the same)
  assert numbered >= 2, "the premise: rows alike in this trace (a schedule's reshapes, a kernel's CMPLTs)"


def test_call_stacks_are_those_tinygrads_viz_shows():
  with tgviz.capture() as trace:
    Tensor.ones(4, 4).contiguous().sum(1).realize(); here = sys._getframe().f_lineno
  kernel = next(g for g in trace.groups if g.kind == "kernel")
  assert all(len(f) == 4 and f[3] == printable(f[:2]) for f in kernel.stack)  # (file, line, function, its source text)
  assert (__file__, here, "test_call_stacks_are_those_tinygrads_viz_shows",
          "Tensor.ones(4, 4).contiguous().sum(1).realize(); here = sys._getframe().f_lineno") in kernel.stack
  # tinygrad's profiler keeps its own stacks whole while a capture runs
  with Context(PROFILE=1), tgviz.capture():
    events = len(cpu_events)
    Tensor.ones(4, 4).contiguous().sum(1).realize()
  keys = [e.name for e in cpu_events[events:] if isinstance(e.name, TracingKey) and e.name.tb]
  assert keys and all(len(f) == 4 for k in keys for f in k.tb)


def test_tutorial_arange_cases_are_traced(tutorial_trace):
  # the three arange cases realize on the device: each non-empty one is a kernel of its length
  names = [k.name for k in tutorial_trace.kernels]
  assert names.count("E_3") == 2


def test_summary_names_kernels(tutorial_trace):
  """The summary counts the kernels, and the other groups by what they are (the tree's SCHEDULE rows), not "groups"
  that count the kernels again."""
  text = tutorial_trace.summary()
  schedules = sum(g.kind == "schedule" for g in tutorial_trace.groups)
  assert text.startswith(f"tgviz trace on CL: {len(tutorial_trace.kernels)} kernels, {schedules} schedule groups, ") and "r_2_2_2_2" in text
  assert "r_2_2_2_2" in repr(tutorial_trace)


@pytest.fixture(autouse=True, scope="module")
def _viz_without_json():
  """tinygrad's replay also renders every graph to JSON and Python text for its web page; that is display only, and
  slow on big graphs. The graphs (the '_sink' of each replayed step) are computed exactly as before."""
  saved = serve.uop_to_json, serve.pystr
  serve.uop_to_json, serve.pystr = (lambda data, x: {}), (lambda u: "")
  yield
  serve.uop_to_json, serve.pystr = saved


def _viz_replay(step, raw=None):
  """tinygrad's own VIZ replay of a step (or of raw, a step record of the same trace): the graph after each match
  (index 0 is the input)."""
  raw = step._raw if raw is None else raw
  tgr = TrackedGraphRewrite(raw.loc, raw.sink, raw.matches, raw.name, raw.depth, raw.bottom_up, raw.walk, raw.enter_calls)
  data = serve.VizData(RewriteTrace([], [], step._rec.uop_fields))
  return [d["_sink"] for d in serve.get_full_rewrite(data, tgr)]


def _check_faithful(trace, up_to):
  """Every graph of every step of up to `up_to` matches, asked in random order as a user jumps around, is VIZ's."""
  steps = [s for s in trace.steps if len(s.matches) <= up_to]
  assert steps
  rng = random.Random(0)
  for step in steps:
    viz = _viz_replay(step)
    assert step.before() is viz[0], step
    assert step.after() is viz[-1], step
    ks = list(range(len(step.matches) + 1))
    rng.shuffle(ks)
    for k in ks: assert step.at(k) is viz[k], (step, k)
    if step._raw.out is not None: assert step.after() is step._rec.returned(step._raw)


def test_random_access_when_a_key_lies_above_an_earlier_one(tutorial_trace):
  """A match list tinygrad's top-down rewrite does not make (a later match's node holds an earlier match's node): the
  one-pass shortcut for graph k would replace the later node at once, while VIZ's replay has already rebuilt it away.
  Graphs from there on come from the replay chain, and every graph, in any order, is still VIZ's."""
  step = max((s for s in tutorial_trace.steps if not s._raw.bottom_up and not s._raw.walk), key=lambda s: len(s.matches))
  raw, rec = step._raw, step._rec
  mid = len(raw.matches) // 2
  assert mid >= 2 and step.at(mid) is not step.before()  # the input's root is gone by then: the chain leaves it alone
  extra = (raw.sink, raw.matches[0][1], raw.matches[0][2], 0.0)  # the input's root, replaced at match mid + 1
  odd = dataclasses.replace(raw, matches=[*raw.matches[:mid], extra, *raw.matches[mid:]], out=None)
  viz = _viz_replay(step, odd)
  assert viz[mid + 1] is viz[mid]  # in VIZ's replay, the extra match changes nothing
  rp = rec.new_replayer(odd)
  assert rp.direct_below == mid + 1
  ks = list(range(len(odd.matches) + 1))
  random.Random(1).shuffle(ks)
  for k in ks: assert rp.at(k) is viz[k], k


def test_faithful_to_viz_replay_tutorial(tutorial_trace):
  _check_faithful(tutorial_trace, up_to=10**9)


@pytest.mark.slow
def test_faithful_to_viz_replay_cnn(cnn_trace):
  """Every step up to 1,000 matches (1,453 of 1,455; the two devectorize2 of 2,770 matches took 140 of the test's 230 s:
  a step that big is the attention's devectorize2 below, graph by graph and 300 graphs at random)."""
  _check_faithful(cnn_trace, up_to=1000)


def test_random_access_stops_at_a_replay_error_like_viz(tutorial_trace):
  """A bottom-up step whose replaces come back to a key (a fixpoint cycle): VIZ's replay stops at the REWRITE_ERROR of
  that match, and so does every graph from there on, asked in any order; also after a later match replaces the
  whole input, so that a graph computed on its own would not meet the cycle."""
  step = max((s for s in tutorial_trace.steps if s._raw.bottom_up and not s._raw.walk), key=lambda s: len(s.matches))
  raw, fields = step._raw, step._rec.uop_fields
  mid = len(raw.matches) // 2
  u0, u1, loc, _ = raw.matches[0]
  leaf = next(n for n, f in fields.items() if not f[2] and n not in (u0, u1) and all(n != m[0] for m in raw.matches))
  cycle = dataclasses.replace(raw, matches=[*raw.matches[:mid], (u1, u0, loc, 0.0), *raw.matches[mid:], (raw.sink, leaf, loc, 0.0)],
                              out=None)
  viz = _viz_replay(step, cycle)
  assert len(viz) == mid + 2 and viz[-1].op is Ops.REWRITE_ERROR and "fixed_point" in viz[-1].arg
  rp = step._rec.new_replayer(cycle)
  ks = list(range(len(cycle.matches)))
  random.Random(2).shuffle(ks)
  for k in [len(cycle.matches), *ks]:  # the last graph first: nothing has met the cycle yet
    if k <= mid: assert rp.at(k) is viz[k], k
    else: assert rp.at(k).op is Ops.REWRITE_ERROR and "fixed_point" in rp.at(k).arg, k
  streamed = list(step._rec.new_replayer(cycle).each())  # a whole replay in one pass stops there too
  assert len(streamed) == len(cycle.matches) + 1 and all(g is v for g, v in zip(streamed, viz[:mid + 1], strict=False))
  assert all(g.op is Ops.REWRITE_ERROR and "fixed_point" in g.arg for g in streamed[mid + 1:])


def test_a_whole_replay_is_vizs_and_holds_one_graph_at_a_time(attention_trace):
  """Step.replay, every graph of a step in one pass (the report writes the graphs it stores from it), is VIZ's replay
  graph for graph, and holds about one graph at a time: the UOps alive while it runs stay far below what the step's
  graphs hold together (kept, the graphs of the GPT's whole-model schedule step took 1.1 GB of a report worker)."""
  step = next(s for s in attention_trace.steps if s.group.display_name == "r_2_6_6_8" and s.name == "devectorize2")
  viz = _viz_replay(step)
  assert all(g is v for g, v in zip(step.replay(), viz, strict=True))
  together = len(set().union(*(g.toposort() for g in viz)))
  del viz
  gc.collect()
  alive = len(ops.UOpMetaClass.ucache)
  peak = max(len(ops.UOpMetaClass.ucache) - alive for _ in step.replay())
  assert together > 50_000 and peak < together / 5, (together, peak)


def test_stepping_through_every_match_keeps_a_bounded_number_of_graphs(attention_trace):
  """A replay kept for stepping (Step.at, as the widget's slider steps) lets go of its graphs past Replayer.KEEP, and
  computes one let go of again when asked: stepping through all 4,106 matches, then jumping around, every graph is
  VIZ's, while the UOps alive stay far below what the step's graphs hold together."""
  step = next(s for s in attention_trace.steps if s.group.display_name == "r_2_6_6_8" and s.name == "devectorize2")
  viz = [v.key for v in _viz_replay(step)]  # the graphs by key: VIZ's own UOps die with its replay
  gc.collect()
  alive, rp = len(ops.UOpMetaClass.ucache), step._rec.new_replayer(step._raw)
  peak = 0
  for k in range(len(viz)):
    assert rp.at(k).key == viz[k], k
    peak = max(peak, len(ops.UOpMetaClass.ucache) - alive)
  assert len(viz) > 20 * rp.KEEP and len(rp.graphs) - rp.graphs.count(None) <= rp.KEEP + 1
  ks = list(range(len(viz)))
  random.Random(3).shuffle(ks)
  for k in ks[:300]: assert rp.at(k).key == viz[k], k
  assert peak < 20_000, peak  # all the step's graphs together: some 84,000 UOps


@pytest.mark.slow
def test_stepping_back_through_a_walk_step_goes_on_from_a_kept_graph(cnn_trace):
  """A walk step (substitute with walk=True: no graph in one pass, only the chain), stepped back from its last graph as
  the widget's slider does: each graph is VIZ's, and the chain goes on from one of the Replayer.CHECKPOINTS graphs it
  kept below, not from the input (a 118-match step took 0.16-0.6 s a step back)."""
  step = max((s for s in cnn_trace.steps if s._raw.walk), key=lambda s: len(s.matches))
  n, viz = len(step.matches), _viz_replay(step)
  rp, subs = step._rec.new_replayer(step._raw), []
  assert n > rp.KEEP
  sub = rp._sub
  def counted(*args):
    subs.append(args[1])
    return sub(*args)
  rp._sub = counted
  assert rp.at(n) is viz[n]
  for k in range(n - 1, -1, -1):
    subs.clear()
    assert rp.at(k) is viz[k], k
    assert len(subs) <= -(-n // rp.CHECKPOINTS), (k, subs)


def test_after_is_what_the_rewrite_returned():
  a = Tensor.ones(4).contiguous().realize()
  seen = []
  with tgviz.capture() as trace:
    sink = (a + 1).uop.sink()
    out = graph_rewrite(sink, PatternMatcher([(UPat(Ops.ADD, name="x"), lambda x: x.src[0] * 2)]), name="user rewrite")
    seen.append(out)
  step = trace.find("user rewrite")
  assert step.after() is seen[0] and step.before() is sink
  assert len(step.matches) == 1 and step.at(1) is seen[0]
  d = step.diff()
  assert any(b.op is Ops.ADD and a.op is Ops.MUL for b, a in d.changed)


def test_same_block_twice_same_counts():
  counts = []
  for _ in range(2):
    with tgviz.capture() as trace: workloads.tutorial()
    counts.append([(g.name, g.kind, [(s.name, s.depth, len(s.matches)) for s in g.steps]) for g in trace.groups])
  assert counts[0] == counts[1]


def test_globals_do_not_grow_and_old_traces_keep_working(tutorial_trace):
  before_len = (len(ops.tracked_keys), len(ops.tracked_ctxs), len(ops.uop_fields))
  old = None
  for i in range(50):
    with tgviz.capture() as trace: (Tensor.ones(3) * (i + 2)).realize()
    if old is None: old = trace
    assert (len(ops.tracked_keys), len(ops.tracked_ctxs), len(ops.uop_fields)) == before_len
  assert not any("_RECURSIVE_PROPERTY_trace_num" in r().__dict__ for r in list(ops.UOpMetaClass.ucache.values()) if r() is not None)
  for t in (old, tutorial_trace):
    for step in t.steps: step.before(); step.after()
    assert t.kernels[0].source


def test_dropping_a_trace_releases_it():
  import weakref
  with tgviz.capture() as trace: (Tensor.ones(5) + 3).realize()
  ref = weakref.ref(trace)
  del trace
  gc.collect()
  assert ref() is None


def _untracked():
  return ops.PatternMatcher.rewrite is not ops.TrackedPatternMatcher.rewrite and ops.TRACK_MATCH_STATS.value == 0 \
    and not ops.active_rewrites and not ops.active_group


def test_exception_keeps_trace_and_propagates():
  with pytest.raises(ZeroDivisionError), tgviz.capture() as trace:
    (Tensor.arange(6).reshape(2, 3).float() * Tensor.ones(2, 3)).sum(1).realize()
    print(1 / 0)
  assert isinstance(trace.error, ZeroDivisionError) and "ZeroDivisionError" in trace.traceback
  assert trace.kernels and trace.kernels[0].source
  assert "stopped by ZeroDivisionError" in trace.summary()
  assert _untracked()


def test_keyboard_interrupt_restores_tinygrad():
  with pytest.raises(KeyboardInterrupt), tgviz.capture() as trace:
    (Tensor.ones(2) + 1).realize()
    raise KeyboardInterrupt
  assert isinstance(trace.error, KeyboardInterrupt) and _untracked()


def test_rewrite_error_is_shown():
  def boom(x): raise ValueError("pattern exploded <b>")
  with pytest.raises(ValueError), tgviz.capture() as trace:
    graph_rewrite(UOp.const(1.0, Tensor.ones(1).dtype) + 2.0, PatternMatcher([(UPat(Ops.ADD, name="x"), boom)]), name="bad rewrite")
  step = trace.find("bad rewrite")
  assert step.matches[-1].is_error
  assert "pattern exploded <b>" in step.error


@pytest.mark.parametrize("device,marker", [("NULL:CUDA:sm_90", "__global__"), ("NULL:WGSL", "@compute")])
def test_null_device_renders_other_targets(device, marker):
  with tgviz.capture(device=device) as trace:
    x = Tensor.arange(9).reshape(1, 1, 3, 3).float()
    x.conv2d(Tensor.ones(1, 1, 2, 2)).realize()
  assert trace.device == device
  conv = [k for k in trace.kernels if k.name.startswith("r_")]
  assert conv and conv[0].device == "NULL"
  assert marker in conv[0].source and "__kernel" not in conv[0].source
