"""A capture's patches come off tinygrad exactly once, in reverse order, whatever raises: a failure injected into each
patch on entry (before it sets anything, or partway through its attributes) or on exit leaves every tinygrad attribute
the capture touches the original object again, tinygrad's settings and tracking tables as they were, and a plain
realize working."""
import pytest
from tinygrad import Tensor
from tinygrad.helpers import ContextVar
from tinygrad.uop import ops

import tgviz
from tgviz.bridge import attempts, beam, capture, opts, origins, parallel, profiler, recorders, spans

PATCHES = [capture.TrackingTables, attempts.MatchRecorder, recorders.StepRecorder, recorders.StackRecorder,
           recorders.LineRecorder, origins.OriginRecorder, recorders.SourceOnlyCompilers, recorders.KernelTimer,
           profiler.Profiler, beam.BeamRecorder, opts.OptStepRecorder, parallel.ParallelCompiles, spans.SpanRecorder]
SETTINGS = ("TRACK_MATCH_STATS", "VIZ", "PARALLEL", "DEV", "PROFILE")
ABSENT = object()


def program() -> None:
  x = Tensor.arange(9).reshape(1, 1, 3, 3).float()
  assert x.conv2d(Tensor.ones(1, 1, 2, 2)).sum().item() == 64.0


@pytest.fixture(scope="module")
def touched():
  """Every (class or module, attribute) a capture patches, on the default device and on a NULL device (whose
  source-only compilers patch more), found by running real captures."""
  found: dict[tuple[int, str], tuple[object, str]] = {}
  enter = recorders.Patch.__enter__
  def spy(self):
    out = enter(self)
    for target, name, _ in self._undo: found[(id(target), name)] = (target, name)
    return out
  recorders.Patch.__enter__ = spy
  try:
    for device in (None, "NULL:CUDA:sm_90"):
      with tgviz.capture(device=device) as trace: block()
      assert trace.kernels
  finally: recorders.Patch.__enter__ = enter
  kinds = {type(t).__name__ if not isinstance(t, type) else t.__name__ for t, _ in found.values()}
  assert {"PatternMatcher", "TrackedPatternMatcher", "RewriteContext", "CStyleLanguage", "Metadata", "module", "ContextVar", "Buffer",
          "_TinyJit", "CLDevice", "Scheduler"} <= kinds, kinds
  return list(found.values())


def block() -> None:
  """What runs captured: no read-back, which a NULL device cannot give."""
  Tensor.arange(9).reshape(1, 1, 3, 3).float().conv2d(Tensor.ones(1, 1, 2, 2)).realize()


def state(touched) -> dict:
  from tinygrad.device import Buffer, Compiled
  from tinygrad.helpers import cpu_events
  return {"attrs": [vars(t).get(n, ABSENT) for t, n in touched],
          "events": [(id(x), len(x)) for x in (cpu_events, Compiled.profile_events, Buffer.profile_events)],
          "tables": [getattr(ops, g) for g in ("tracked_keys", "tracked_ctxs", "uop_fields", "_name_cnt", "active_group", "active_rewrites")],
          "settings": [ContextVar._cache[s].value for s in SETTINGS if s in ContextVar._cache]}


def assert_restored(before: dict, touched) -> None:
  after = state(touched)
  for (t, n), a, b in zip(touched, before["attrs"], after["attrs"], strict=True): assert a is b, f"{getattr(t, '__name__', t)}.{n} left patched"
  for a, b in zip(before["tables"], after["tables"], strict=True): assert a is b, "tinygrad's tracking tables left replaced"
  assert before["settings"] == after["settings"], "tinygrad's settings left changed"
  assert before["events"] == after["events"], "tinygrad's profile event lists left holding the capture's events"
  program()  # a plain realize still works, untracked
  assert not ops.active_rewrites and not ops.active_group and not ops.tracked_ctxs


def _raise(*_args, **_kwargs):
  raise RuntimeError("injected")


class Refusing:
  """An object none of whose attributes can be set."""
  __setattr__ = _raise


@pytest.mark.parametrize("patch", PATCHES, ids=lambda p: p.__name__)
@pytest.mark.parametrize("where", ["enter", "partway", "exit"])
def test_an_injected_failure_leaves_tinygrad_as_it_was(patch, where, touched, monkeypatch):
  if where == "enter": monkeypatch.setattr(patch, "__enter__", _raise)
  elif where == "partway":  # the patch's own attributes set, then one that cannot be: it undoes what it set
    own = patch.patches
    monkeypatch.setattr(patch, "patches", lambda self: [*own(self), (Refusing(), {"cannot_be_set": 1})])
  else:  # the patch comes off, then its exit raises: the patches entered before it still come off
    own_exit = patch.__exit__
    def failing_exit(self, *exc):
      own_exit(self, *exc)
      raise RuntimeError("injected")
    monkeypatch.setattr(patch, "__exit__", failing_exit)
  device = "NULL:CUDA:sm_90" if patch is recorders.SourceOnlyCompilers else None
  before = state(touched)
  with pytest.raises(RuntimeError, match="injected"), tgviz.capture(device=device) as trace: block()
  monkeypatch.undo()
  assert_restored(before, touched)
  if where == "exit":  # the block ran: its trace is kept, up to the failure
    assert trace.kernels


def test_a_failure_in_the_block_and_in_an_undo_restores_everything(touched, monkeypatch):
  monkeypatch.setattr(recorders.LineRecorder, "_restore", lambda self: (recorders.Patch._restore(self), _raise()))
  before = state(touched)
  with pytest.raises(RuntimeError, match="injected"), tgviz.capture(): raise ZeroDivisionError  # the undo's error, from the block's
  monkeypatch.undo()
  assert_restored(before, touched)


def test_a_patch_that_fails_to_come_off_still_puts_back_the_rest():
  class A: x, y = 1, 2
  class Refuses(recorders.Patch):
    def patches(self): return [(A, {"x": 10}), (A, {"y": 20})]
  p = Refuses()
  with p: assert (A.x, A.y) == (10, 20)
  p._undo = [(A, "x", 1), (Refusing(), "nothing", 0), (A, "y", 2)]  # the middle one cannot be put back
  with pytest.raises(RuntimeError, match="injected"): p._restore()
  assert (A.x, A.y) == (1, 2)
