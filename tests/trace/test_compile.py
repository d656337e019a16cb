"""Where the compile time goes, from tinygrad's own spans: each step's time and self time, per kernel its share of the
schedule, codegen, render and device compile (render and compile are tinygrad's own match times of its
linearize/render step), and the capture's wall time split into parts that add up to it, with what no span covers."""
import time

import pytest
import workloads
from tinygrad.codegen import pm_to_program

import tgviz


@pytest.fixture(scope="module")
def train_step():
  """A training step of an MLP (forward, backward, SGD), with the wall time around its capture block."""
  st = time.perf_counter()
  with tgviz.capture() as trace: workloads.mlp_train((64, 32, 10), 8)
  return trace, (time.perf_counter() - st) * 1e6


def test_each_step_has_its_span_and_nests(tutorial_trace):
  """Every step has tinygrad's span of it (a capture compiles in its own process below PARALLEL=3): its time, its self
  time (its time less the steps nested directly in it), and nested steps inside their parent."""
  ct = tutorial_trace.compile_times()
  for g in tutorial_trace.groups:
    span = ct.groups.get(g.index)
    if g.name == "capture": assert span is None  # tgviz's own group (rewrites outside tinygrad's groups): no span of its own
    else: assert span is not None and g.name in span.name, (g, span)  # "do_to_program for E_4_4", "Schedule 2 Kernels n1"
    for s in g.steps:
      assert s.time_us is not None and s.time_us >= s.self_time_us >= -0.01, s
      assert ct.step(g.index, s.index).name == s.name
      children = []
      for t in g.steps[s.index + 1:]:
        if t.depth <= s.depth: break
        if t.depth == s.depth + 1: children.append(t)
      assert s.self_time_us == pytest.approx(s.time_us - sum(t.time_us for t in children), abs=0.01)
    # (tinygrad puts a rewrite run outside any group into the last group made: its span lies outside the group's)
    inside = [ct.step(g.index, s.index) for s in g.steps if s.depth == 0]
    inside = [x for x in inside if span is not None and span.start_us <= x.start_us and x.end_us <= span.end_us]
    assert sum(x.time_us for x in inside) <= (span.time_us if span is not None else 0.0)


def test_the_compile_table_and_the_wall_time_add_up(train_step):
  trace, outer_us = train_step
  ct, rows = trace.compile_times(), trace.compile_table()
  tot = ct.totals
  assert [r["kernel"] for r in rows] == [k.display_name for k in trace.kernels]
  for r, k in zip(rows, trace.kernels, strict=True):
    parts = r["schedule_us"] + r["codegen_us"] + r["render_us"] + r["compile_us"] + r["first_launch_us"]
    assert r["total_us"] == pytest.approx(parts, abs=0.01)
    first = next(x for x in trace.timeline().kernels() if x.kernel is k) if k.run_times else None  # its first launch
    assert (r["first_launch_us"] > 0) == (first is not None)
    # render and compile are tinygrad's own times of those matches (do_render, do_compile) in its linearize/render step
    render = next(s for s in k.group.steps if s.name == "linearize/render")
    stage = {p.location: fn.__name__ for p, fn in pm_to_program.patterns}  # do_linearize, do_render, do_compile, ...
    times = {stage[m.loc].removeprefix("do_"): m.time * 1e6 for m in render.matches}
    assert r["render_us"] == pytest.approx(times["render"], abs=0.01) and r["compile_us"] == pytest.approx(times["compile"], abs=0.01)
    assert r["codegen_us"] > 0 and r["schedule_us"] > 0
  # every schedule's time is in the rows (this step compiles after each of its schedules) and every kernel's codegen
  assert tot.unassigned_us == 0
  assert sum(r["total_us"] for r in rows) == pytest.approx(tot.schedule_us + tot.codegen_us + tot.first_launches_us, rel=0,
                                                           abs=0.0005 * len(rows) + 1e-6)  # rows rounded to 0.001 µs
  # the parts add up to the capture's wall time; what no span covers is less than a tenth of it
  assert tot.compiler_us + tot.tensor_us + tot.uncovered_us == pytest.approx(tot.wall_us, rel=1e-9)
  assert 0 <= tot.uncovered_us < 0.1 * tot.wall_us, tot.summary()
  assert 0 < tot.first_launches_us < tot.launches_us < tot.tensor_us
  assert tot.wall_us <= outer_us  # the profiler's window, inside the capture block
  assert "not covered" in tot.summary()
  assert [r["compile_total_us"] for r in trace.kernel_table()] == [r["total_us"] for r in rows]  # the kernel table's compile column


def test_a_capture_without_its_profile_has_no_times():
  with tgviz.capture(profile=False) as trace: workloads.softmax()
  assert all(s.time_us is None and s.self_time_us is None for s in trace.steps)
  assert all(r["total_us"] is None for r in trace.compile_table()) and trace.compile_table()
  assert trace.compile_times().totals.wall_us == 0


def test_kernels_compiled_while_a_tinyjit_captures_count_as_codegen():
  """A TinyJit compiles its kernels inside its own span (tinygrad's "JIT 19 calls"): they count as kernels' codegen,
  the JIT's span less them as other work."""
  with tgviz.capture() as trace: workloads.jit_train(3)
  ct = trace.compile_times()
  tot, spans = ct.totals, [ct.groups[k.group.index] for k in trace.kernels]
  assert any(s.depth > 0 and s.parent is not None and s.parent.name.startswith("JIT") for s in spans)
  assert tot.codegen_us == pytest.approx(sum(s.time_us for s in spans), rel=1e-9)
  rows = trace.compile_table()
  # each row's total is rounded to 0.001 µs, so their sum may be off by half of that per row
  assert sum(r["total_us"] for r in rows) == pytest.approx(tot.schedule_us - tot.unassigned_us + tot.codegen_us + tot.first_launches_us,
                                                           rel=0, abs=0.0005 * len(rows) + 1e-6)
  assert tot.compiler_us + tot.tensor_us + tot.uncovered_us == pytest.approx(tot.wall_us, rel=1e-9) and tot.other_us >= 0
