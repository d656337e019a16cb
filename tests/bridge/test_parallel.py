"""Captures with tinygrad's compile workers (PARALLEL of 3 or more): each kernel compiles in one of tinygrad's worker processes,
traced there, and the trace is the one PARALLEL=0 gives: the same kernels in the same order, the same steps, matches,
graphs (before, at the last match, after), code, line map, stacks and origins; the program's outputs unchanged; the
workers plain again afterwards. Real tinygrad, its real worker pool, the real PoCL and CPU devices."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import workloads
from tinygrad import Context
from tinygrad.engine import worker

import tgviz
from tgviz.bridge import node_key, parallel

ROOT = Path(__file__).resolve().parents[2]


def seen(trace: tgviz.Trace) -> list:
  """What a user sees of a trace, in order: per group its name, kind, stack and (a kernel's) origins, code, launch
  dimensions, line map and opts' steps; per step its name, depth, where it ran and each match's pattern; for a kernel's
  steps also the graphs before, at the last match and after (by node key: the same in every run and process for graphs
  that hold no buffers, which a kernel's codegen never does; tinygrad's "precompile kernels", which lands in the last
  kernel's group, does)."""
  out: list = []
  for g in trace.groups:
    k = g.kernel
    out.append([g.display_name, g.kind, [list(f[:3]) for f in g.stack]])
    if k is not None:
      out.append([[[o.op, o.backward, o.file, o.line] for o in k.origins], k.source, list(k.global_size), k.local_size and list(k.local_size),
                  k.line_keys, [[str(o), s.index if s is not None else None] for o, s in k.opt_steps]])
    for s in g.steps:
      out.append([s.name, s.depth, list(s.loc), [list(m.loc) for m in s.matches]])
      if k is not None and not any(u.op.name == "BUFFER" for u in s.before().toposort()):
        out.append([node_key(s.before()), node_key(s.at(len(s.matches))), node_key(s.after())])
  return out


def train_step() -> list[np.ndarray]:
  """One SGD step of a small MLP (16-8-4, batch 4): the loss and both weights after the step."""
  return [t.numpy() for t in workloads.mlp_train((16, 8, 4), 4)]


def captured(workers: int, merged: list[int]) -> tuple[tgviz.Trace, list[np.ndarray], int]:
  """The train step captured with PARALLEL=workers: its trace, its outputs and how many kernels the workers compiled."""
  before = len(merged)
  with tgviz.capture(env={"PARALLEL": workers}) as trace: out = train_step()  # one line: the kernels' stacks pass here
  assert trace.error is None
  return trace, out, len(merged) - before


@pytest.fixture
def merged(monkeypatch) -> list[int]:
  """Per compile task whose records a capture merged (a kernel compiled in a worker), how many of the steps the worker
  made were left out: those of a call to a cached rewriting helper (a reshape's index math, say) that the capture's
  cache would have answered, had the kernel compiled there (the worker compiled with empty caches)."""
  hidden: list[int] = []
  hits = parallel.ParallelCompiles._hits
  def counting(self, calls):
    found = hits(self, calls)
    hidden.append(sum(map(len, found.values())))
    return found
  monkeypatch.setattr(parallel.ParallelCompiles, "_hits", counting)
  return hidden


def test_compiles_in_the_workers_give_the_trace_of_compiles_in_the_capture(merged):
  plain = train_step()
  (serial, serial_out, none), (parallel_trace, parallel_out, compiled) = [captured(workers, merged) for workers in (0, 3)]
  # the workers compiled the kernels (all but those compiled one at a time, which tinygrad never sends to its pool), and
  # made steps a compile here would not have made
  assert none == 0 and compiled >= len(parallel_trace.kernels) - 3 and len(parallel_trace.kernels) >= 8
  assert sum(merged) > 10
  assert [k.name for k in serial.kernels] == [k.name for k in parallel_trace.kernels]
  assert seen(serial) == seen(parallel_trace)
  assert sum(len(s.matches) for s in parallel_trace.steps) > 1000
  for a, b, c in zip(plain, serial_out, parallel_out, strict=True):  # bit for bit
    assert a.tobytes() == b.tobytes() == c.tobytes()


def test_a_pool_of_two_compiles_in_the_capture(merged):
  """PARALLEL=2 (tinygrad's default on 2 cores) compiles in the capture's process, which is faster there (see
  parallel.POOL_FROM): no task merged, the same trace and outputs."""
  (serial, serial_out, _), (two, two_out, compiled) = [captured(workers, merged) for workers in (0, 2)]
  assert compiled == 0 and seen(two) == seen(serial)
  assert all(a.tobytes() == b.tobytes() for a, b in zip(serial_out, two_out, strict=True))


def test_the_workers_are_plain_again_after_the_capture():
  with tgviz.capture(env={"PARALLEL": 3}) as trace: workloads.mlp()
  assert len(trace.kernels) > 3
  with Context(PARALLEL=3): pool = worker.get_worker_pool()  # the capture's pool (tinygrad makes it once)
  assert pool is not None
  state = ("(lambda ops, pm, helpers, indexing: (ops.TRACK_MATCH_STATS.value, ops.tracked_keys, ops.uop_fields, "
           "pm.rewrite is pm.__dict__['rewrite'], helpers.get_stacktrace.__module__, indexing._apply_reshape.__wrapped__.__code__.co_name))"
           "(__import__('tinygrad.uop.ops').uop.ops, __import__('tinygrad.uop.ops').uop.ops.TrackedPatternMatcher.__bases__[0], "
           "__import__('tinygrad.helpers').helpers, __import__('tinygrad.schedule.indexing').schedule.indexing)")
  for got in pool.map(eval, [state] * 8, chunksize=1):
    assert got == (0, [], {}, True, "tinygrad.helpers", "_apply_reshape")
  # and a plain run compiles in them, with the right answer
  expected = train_step()
  with Context(PARALLEL=3): again = train_step()
  assert all(a.tobytes() == b.tobytes() for a, b in zip(expected, again, strict=True))


SCRIPT = """
import json, runpy, sys
import numpy as np
import tgviz
sys.path[:0] = [{tests!r}, {here!r}]
from test_parallel import seen
with tgviz.capture(env={{"PARALLEL": int(sys.argv[1])}}) as trace: ns = runpy.run_path({script!r}, run_name="__main__")
assert trace.error is None
print(json.dumps({{"seen": seen(trace), "loss": float(ns["value"]), "kernels": len(trace.kernels)}}))
"""


@pytest.mark.slow
def test_the_mnist_step_traced_with_4_workers_is_the_trace_of_parallel_0(tmp_path):
  """Each in a fresh process: tinygrad makes its pool once, of PARALLEL's size then (3 workers: the MLP test above)."""
  script = tmp_path / "run.py"
  script.write_text(SCRIPT.format(tests=str(ROOT / "tests"), here=str(Path(__file__).parent),
                                  script=str(workloads.EXAMPLES / "mnist_train_step.py")))
  env = {**os.environ, "PYTHONPATH": str(ROOT), "DEV": "CPU"}
  runs = {}
  for workers in (0, 4):
    r = subprocess.run([sys.executable, str(script), str(workers)], capture_output=True, text=True, timeout=900, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    runs[workers] = json.loads(r.stdout.strip().splitlines()[-1])
  assert runs[0]["kernels"] > 50
  for workers in (4,):
    assert runs[workers]["loss"] == runs[0]["loss"]
    assert runs[workers]["seen"] == runs[0]["seen"]
