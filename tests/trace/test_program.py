"""trace.program(): the kernels and the buffers between them, each buffer's reason, why(), what if they fused.

On programs tgviz was not tuned for (softmax, layernorm, an attention block, conv + batchnorm, an Adam step, the MNIST
step, a split reduce, a user's .contiguous()), every buffer between two kernels has a reason other than "other"; the
map's edges are tinygrad's own dataflow (the buffers each launch wrote and read, from its profile events); and each
reason agrees with what tinygrad did: the schedule run again with that condition lifted makes no such buffer."""
from collections import Counter, defaultdict

import pytest
import workloads

import tgviz
from tgviz.trace.fusion import Fusion, lift_for
from tgviz.trace.program import REASONS

PROGRAMS = {"softmax": workloads.softmax, "layernorm": workloads.layernorm, "attention": workloads.attention,
            "conv_bn": workloads.conv_bn, "adam": workloads.adam_train, "big_sum": workloads.big_sum,
            "contiguous": workloads.contiguous}
# the MNIST step (examples/scripts/mnist_train_step.py): the session's capture of it (conftest's mnist_trace), which
# other files of this process ask for too
NAMES = [*PROGRAMS, pytest.param("mnist", marks=pytest.mark.slow)]
_traces: dict[str, tgviz.Trace] = {}


def traced(name: str, request: pytest.FixtureRequest | None = None) -> tgviz.Trace:
  if name == "mnist":
    assert request is not None
    return request.getfixturevalue("mnist_trace")
  if name not in _traces:
    with tgviz.capture() as trace: PROGRAMS[name]()
    assert trace.error is None
    _traces[name] = trace
  return _traces[name]


def tinygrad_dataflow(trace: tgviz.Trace) -> tuple[list, set[tuple[int, int, int]]]:
  """tinygrad's own dataflow: its launches (kernels and copies, in order) and (writer launch, reader launch, buffer
  number) for every buffer a launch read after another wrote it, from its profile events (trace.memory()'s buffers,
  the launches that wrote and read each)."""
  launches = [x for x in trace.timeline() if x.kind in ("kernel", "copy")]
  reads, writes = defaultdict(set), defaultdict(set)
  for b in trace.memory().buffers:
    for x in b.reads: reads[id(x)].add(b.num)
    for x in b.writes: writes[id(x)].add(b.num)
  now: dict[int, int] = {}
  flow = set()
  for i, x in enumerate(launches):
    flow |= {(now[n], i, n) for n in reads[id(x)] if n in now}
    now.update(dict.fromkeys(writes[id(x)], i))
  return launches, flow


@pytest.mark.parametrize("name", NAMES)
def test_every_buffer_between_kernels_has_a_reason(name, request):
  program = traced(name, request).program()
  assert program.kernels and program.boundaries and not program.notes
  for b in program.boundaries:
    assert b.reason in REASONS and b.reason != "other", str(b)
    assert b.detail and b.writer is not None and b.readers
  assert {b.reason for b in program.buffers if b.writer is None} <= {"input"}
  assert {b.reason for b in program.buffers if b.writer is not None and not b.readers} == {"output"}
  assert sum(program.counts().values()) == sum(bool(k.writes) for k in program.kernels)


@pytest.mark.parametrize("name", NAMES)
def test_map_edges_are_tinygrads_dataflow(name, request):
  trace = traced(name, request)
  program = trace.program()
  launches, flow = tinygrad_dataflow(trace)
  at, j = {}, 0  # each kernel of the program is a launch of it, in run order
  for k in program.kernels:
    while j < len(launches) and not (launches[j].kind == k.kind and (k.kernel is None or launches[j].kernel is k.kernel)): j += 1
    assert j < len(launches), f"{k.name} was not launched"
    at[k.index], j = j, j + 1
  mine = {(at[b.writer.index], at[r.index], b.run) for b in program.buffers if b.writer is not None for r in b.readers}
  ran = set(at.values())
  assert mine == {f for f in flow if f[0] in ran and f[1] in ran}


@pytest.mark.parametrize("name", ["softmax", "conv_bn", "adam"])
def test_buffers_say_what_tinygrad_allocated(name):
  trace = traced(name)
  allocated = {b.num: b for b in trace.memory().buffers}
  for b in trace.program().buffers:
    if b.run in allocated:
      assert b.nbytes == allocated[b.run].nbytes and b.dtype == allocated[b.run].dtype.removeprefix("dtypes."), str(b)


LIFTED_NAMES = [n for n in NAMES if not (isinstance(n, str) and n in ("layernorm",))]


@pytest.mark.parametrize("name", LIFTED_NAMES)
def test_reasons_agree_with_tinygrad(name, request):
  """For every condition a reason names (cost, reduce, ranges, split), the schedule run again with it lifted makes
  fewer kernels, and fewer buffers of each dtype and shape that condition kept, for it: each either gone or kept by the
  next of tinygrad's checks (a buffer kept for cost can be kept for reduce once cost is lifted), counted against the
  schedule run again as it was. tinygrad's decision was that one. A .contiguous() is lifted one at a time: taken out,
  its buffer is gone. A question after one about the same schedule reuses its run as scheduled. Each condition once, in
  the smallest schedule that has it (the MNIST step's reduce in its 8-kernel schedule, not again in its 77-kernel one:
  that run again was 55 of the test's 100 s)."""
  trace = traced(name, request)
  size = Counter(k.schedule for k in trace.program().kernels)
  found_in: dict[str, dict[int, list]] = defaultdict(lambda: defaultdict(list))
  for b in trace.program().boundaries:
    if (lift := _lift(b)) is not None: found_in[lift][b.writer.schedule].append(b)
  assert found_in, "nothing to lift in this program"
  kinds = {(sch, lift): at[sch] for lift, at in found_in.items() for sch in [min(at, key=lambda sch: size[sch])]}
  last = None
  for (schedule, lift), found in kinds.items():
    f = trace.fuse(found[0])
    assert f.error is None, f.traceback
    if last is not None and last[0] == schedule: assert f.before is last[1]
    last = (schedule, f.before)
    assert f.lift == lift and len(f.after.program().kernels) < len(f.before.program().kernels), f.summary()
    if lift == "contiguous":
      assert f.gone, f.summary()
      continue
    def kept(t, lift=lift): return Counter((b.dtype, b.shape) for b in t.program().boundaries if _lift(b) == lift)
    before, after = kept(f.before), kept(f.after)
    assert before, f.summary()
    for sig, n in before.items(): assert after[sig] < n, f"{name}: lifting {lift} kept {sig} for it still ({f.summary()})"


def _lift(b) -> str | None:
  try: return lift_for(b)
  except ValueError: return None


def test_why_names_the_users_contiguous():
  trace = traced("contiguous")
  program = trace.program()
  contiguous = next(b for b in program.boundaries if b.reason == "user" and "y = y.contiguous()" in b.source)
  reader = contiguous.readers[0]
  found = trace.why(contiguous.writer.kernel, reader.index)
  assert found == [contiguous]
  assert contiguous.line is not None and contiguous.line[0].endswith("workloads.py") and ".contiguous()" in contiguous.detail
  assert trace.why(reader.index, contiguous.writer.index) == [contiguous]  # either order
  assert trace.why(reader.index, reader.index) == []
  first = program.kernels[0]  # the ones() realized before: the chain from it to the reader goes through the contiguous
  chain = trace.why(first.index, reader.index)
  assert chain and chain[0].writer is first and chain[-1] is contiguous


def test_why_takes_a_kernel_as_the_report_names_it(tutorial_trace):
  """why() takes a kernel by its display name, a glob, its key or a prefix of it, as the kernel table's tooltip says (a
  new user's key prefix and glob were refused); a name two kernels share is refused with both named, not taken as the
  first (it was, silently)."""
  program = tutorial_trace.program()
  e3 = [k for k in tutorial_trace.kernels if k.name == "E_3"]
  assert [k.display_name for k in e3] == ["E_3 #1", "E_3 #2"]
  first_call = {k.kernel.display_name: k for k in reversed(program.kernels) if k.kernel is not None}
  for k in tutorial_trace.kernels:
    if k.display_name not in first_call: continue
    for name in (k.display_name, k.key, k.short_key, k.key[:4]):
      assert program.kernel(name) is first_call[k.display_name], name
  assert program.kernel("r_2_*").kernel.name == "r_2_2_2_2"
  a, b = first_call["E_3 #1"], first_call["E_3 #2"]
  assert tutorial_trace.why(e3[0].short_key, "E_3 #2") == tutorial_trace.why(a, b)
  with pytest.raises(KeyError, match=r"'E_3' names 2 kernels \(E_3 #1, E_3 #2\)"): tutorial_trace.why("E_3", "r_2_2_2_2")
  with pytest.raises(KeyError, match="display name, a glob of names, or its key"): tutorial_trace.why("zzz", "E_4")


def test_find_refuses_a_kernel_name_two_kernels_share(tutorial_trace):
  """find(step, kernel=...) takes a Kernel, or a name that names one; a name two kernels share is refused with both
  named, as why() does (a new user's kernel="E_2" took the first of three silently); a glob still takes the first."""
  e3 = [k for k in tutorial_trace.kernels if k.name == "E_3"]
  for k in e3:
    assert tutorial_trace.find("View Base AST", kernel=k).group is k.group
    assert tutorial_trace.find("View Base AST", kernel=k.display_name).group is k.group
  with pytest.raises(KeyError, match=r"'E_3' names 2 kernels with a step 'View Base AST' \(E_3 #1, E_3 #2\)"):
    tutorial_trace.find("View Base AST", kernel="E_3")
  assert tutorial_trace.find("View Base AST", kernel="E_3*").group is e3[0].group
  with pytest.raises(KeyError, match="no step 'nothing' in kernel 'E_3 #2'"): tutorial_trace.find("nothing", kernel=e3[1])
  with pytest.raises(KeyError, match=r"no kernel 'E_9' in the trace \(kernels: "): tutorial_trace.find("View Base AST", kernel="E_9")

def test_what_if_without_the_contiguous():
  trace = traced("contiguous")
  b = next(b for b in trace.program().boundaries if _lift(b) == "contiguous")
  f = trace.fuse(b)
  assert f.error is None and f.gone, f.summary()
  with tgviz.capture() as without: workloads.contiguous(keep=False)
  # the run without the .contiguous() makes the kernels the program written without it makes
  assert len(f.after.program().kernels) == len(without.program().kernels) - 1  # (less its ones(), realized before)
  assert "kernels 2 -> 1" in f.summary() and f.side("after")["buffers"] == 0


def test_fuse_refuses_what_tinygrad_has_no_condition_for():
  trace = traced("softmax")
  out = next(b for b in trace.program().buffers if b.reason == "output")
  with pytest.raises(ValueError, match="no condition"): trace.fuse(out)


def test_split_reduce_is_split_reduceop():
  program = traced("big_sum").program()
  split = [b for b in program.boundaries if b.reason == "reduce"]
  assert len(split) == 1 and split[0].tinygrad.startswith("split_reduceop") and split[0].shape == (256,)
  assert [k.kernel.name for k in program.kernels] == [k.name for k in traced("big_sum").kernels]


def test_saved_trace_keeps_the_reasons(tmp_path):
  trace = traced("softmax")
  loaded = tgviz.load(trace.save(tmp_path / "softmax.tgviz"))
  def reasons(t): return [(b.reason, b.detail, b.label, b.writer.index if b.writer else None) for b in t.program().buffers]
  assert reasons(loaded) == reasons(trace)


def test_reasons_hold_while_an_earlier_schedules_graphs_are_kept():
  """tinygrad makes one UOp of equal ones: a schedule made while equal graphs of an earlier one are alive (a user holding
  a step's graph; a node's history, which keeps the graphs it looked in) rebuilds its staged buffers as those earlier
  UOps, whose args are the earlier schedule's. The reasons are the same: the program captured again, and fuse's runs
  (the buffer asked about gone, its run as scheduled the program's buffers), with every graph of the first capture held.
  (Before: every buffer "other", its shape the flat buffer's, and fuse said "still made" of a buffer its run as
  scheduled did not make.)"""
  with tgviz.capture() as first: workloads.attention()
  held = [s.after() for s in first.steps]
  assert held
  def seen(t): return Counter((b.dtype, b.shape, b.reason) for b in t.program().boundaries)
  with tgviz.capture() as again: workloads.attention()
  assert seen(again) == seen(first) and "other" not in {b.reason for b in again.program().boundaries}
  b = next(b for b in again.program().boundaries if _lift(b) == "reduce")
  f = again.fuse(b)
  assert f.error is None and f.gone and seen(f.before) == seen(again), f.summary()


def test_a_fuse_whose_run_as_scheduled_made_no_such_buffer_compares_nothing():
  """Where the run as scheduled made no buffer of the asked one's dtype and shape (nothing to compare with), the answer
  says so, not "still made" with no reason (it read so before the recorder followed equal STAGEs, above)."""
  b = next(b for b in traced("attention").program().boundaries if _lift(b) == "reduce")
  f = Fusion(b, "reduce")
  f.before = f.after = traced("softmax")
  assert (b.dtype, b.shape) not in {(x.dtype, x.shape) for x in f.before.program().boundaries}
  assert f.gone is None and "not compared" in f.summary() and "still made" not in f.summary(), f.summary()
