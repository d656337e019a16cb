"""A trace keeps no tinygrad Buffer alive: the checks of tinygrad's own test/null/test_gc.py and test_schedule_mem_used
(tinygrad 0.14), run plain and inside a capture, must give the same counts; and a kept Trace, even one whose graphs
were drawn, frees a tensor's buffers when the tensor goes."""
import contextlib
import gc
import weakref

import pytest
from tinygrad import Tensor
from tinygrad.device import Buffer
from tinygrad.engine.realize import run_linear
from tinygrad.helpers import GlobalCounters

import tgviz
from tgviz.bridge import GraphNodes


def bufs_allocated() -> int:
  gc.collect()
  return sum(1 for x in gc.get_objects() if isinstance(x, Buffer))


@pytest.fixture(params=["plain", "captured"])
def traced(request):
  """The block runs plain, or inside a capture whose Trace is kept for the rest of the test."""
  kept = []
  @contextlib.contextmanager
  def block():
    if request.param == "plain": yield; return
    with tgviz.capture() as trace: yield
    kept.append(trace)
  yield block
  assert request.param == "plain" or kept[0].groups, "the capture traced something"


def test_schedule_gc(traced):
  with traced():
    init = bufs_allocated()
    x = Tensor.ones(256).contiguous().realize()
    y = Tensor.ones(5, 5).contiguous()
    y.schedule_linear()
    del x, y
    assert bufs_allocated() - init == 0


def test_schedule_gc_with_inputs(traced):
  with traced():
    init = bufs_allocated()
    x = Tensor.ones(256).contiguous().realize()
    y = x + Tensor.ones(256).contiguous()
    del x
    run_linear(*y.linear_with_vars())
    assert bufs_allocated() - init == 1
    del y
    assert bufs_allocated() - init == 0


def test_toposort_blocks_gc(traced):
  with traced():
    init = bufs_allocated()
    x = Tensor.ones(4, 4).contiguous().realize() + 1
    assert bufs_allocated() - init == 1
    x.uop.toposort()
    del x
    assert bufs_allocated() - init == 0


def test_assign_refcount(traced):
  with traced():
    init = bufs_allocated()
    a = Tensor.full((4,), 1.).contiguous()
    a.realize()
    real_buf = a.uop.buffer
    assert real_buf.uop_refcount == 1
    a.assign(Tensor.full((4,), 2.))
    assert a.uop.src[0].buffer is real_buf
    a.realize()
    del a
    assert real_buf.uop_refcount == 0  # no UOp holds the Buffer any more
    assert bufs_allocated() - init == 1


def test_schedule_mem_used(traced):
  with traced():
    gc.collect()
    base = GlobalCounters.mem_used
    Tensor.ones(256).contiguous().realize()
    Tensor.ones(5, 5).contiguous().schedule_linear()
    gc.collect()
    assert GlobalCounters.mem_used - base == 0


def test_a_drawn_trace_frees_buffers_when_the_tensor_goes():
  init = bufs_allocated()
  with tgviz.capture() as trace:
    x = (Tensor.ones(64).contiguous() * 2).realize()
  assert bufs_allocated() - init >= 1
  for step in trace.steps:  # look at every graph while the tensor lives: rebuilt UOps are tinygrad's own
    step.before(); step.after()
    if step.matches: step.at(len(step.matches) // 2)
  trace.find("View Base AST").svg()
  # a node panel of the schedule's output, still open when the tensor goes: the schedule's last steps put the buffer in
  # (their inputs hold none: a replay kept for them kept its graphs, and the buffer, alive)
  schedule = next(g for g in trace.groups if g.kind == "schedule" and g.steps)
  node = schedule.steps[-1].after()
  trace.history(node, schedule), trace.lineage(node, schedule)
  del node
  del x
  assert bufs_allocated() - init == 0
  assert trace.kernels and all(s.after() is not None for s in trace.steps)  # the trace still redraws everything


def test_the_nodes_kept_for_a_nodes_history_keep_no_device_buffer():
  """GraphNodes (what history and lineage keep of the graphs they look in) keeps a graph's nodes, but not while the graph
  reaches a live device buffer: kept, a node panel of a schedule would keep the tensor's memory."""
  x = Tensor.ones(4).contiguous().realize()
  nodes, plain, held = GraphNodes(), (Tensor.ones(3).uop + 1).sink(), x.uop.sink()
  assert nodes.holds(plain, plain.src[0]) and nodes.holds(held, x.uop)
  kept, let_go = weakref.ref(plain), weakref.ref(held)
  del plain, held
  gc.collect()
  assert kept() is not None and let_go() is None


def test_what_the_process_held_is_out_of_full_collections_while_a_capture_runs():
  """The objects a process holds when a capture starts are out of the cyclic collector's collections until it ends
  (gc.freeze; a notebook's earlier traces: a full collection over a million objects took 0.9-1.0 s of a 3.5 s capture),
  also when the block raises; a process that froze its own objects keeps them frozen."""
  held = [[i] for i in range(10_000)]
  with tgviz.capture():
    assert gc.get_freeze_count() >= len(held)
    assert not any(x is held for x in gc.get_objects(generation=2))  # a full collection does not visit them
    Tensor.ones(4).contiguous().realize()
  assert gc.get_freeze_count() == 0
  with pytest.raises(ZeroDivisionError), tgviz.capture(): _ = 1 / 0
  assert gc.get_freeze_count() == 0
  gc.freeze()
  try:
    theirs = gc.get_freeze_count()
    with tgviz.capture(): Tensor.ones(4).contiguous().realize()
    assert gc.get_freeze_count() >= theirs
  finally: gc.unfreeze()
