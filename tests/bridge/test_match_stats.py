"""Every pattern's attempts and matches, as a capture counts them, are tinygrad's own: TRACK_MATCH_STATS=2's counts
(its match_stats, what its exit report prints as "matches / attempts") for the same program run plainly in a fresh
process, pattern by pattern; and a pattern's self time leaves out the rewrites its function runs."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tinygrad import Tensor
from tinygrad.uop.ops import Ops, PatternMatcher, UPat, graph_rewrite

import tgviz

ROOT = Path(__file__).resolve().parents[2]

# programs of this test's own, not the workloads tgviz was tuned on: an argmax over a where, a cumsum, a strided conv
# with a bias and a softmax over it, a gather
PROGRAM = """
from tinygrad import Tensor, dtypes
def program():
  Tensor.manual_seed(1)
  x = Tensor.randn(6, 10)
  ix = (x > 0).where(x, -x * 2).argmax(axis=1)
  c = x.cumsum(1)
  img, w = Tensor.randn(1, 2, 9, 9), Tensor.randn(3, 2, 3, 3)
  y = img.conv2d(w, bias=Tensor.ones(3), stride=2).softmax(1)
  g = Tensor.arange(20).reshape(4, 5)[Tensor([3, 0, 2])]
  Tensor.realize(ix, c, y, g)
  return [ix.tolist(), y.sum().item(), g.tolist()]
"""

CHILD = """
import json, sys
sys.path.insert(0, {root!r})
from tinygrad.uop import ops
from tgviz.bridge.capture import clear_caches
import tgviz
{program}
program()                      # warm: the device opened, every pattern compiled
if {plain}:
  clear_caches()               # the cold caches a capture starts from
  before = {{p: list(v) for p, v in ops.match_stats.items()}}
  program()
  out = {{}}
  for p, v in ops.match_stats.items():
    b = before.get(p, [0, 0])
    o = out.setdefault(f"{{p.location[0]}}:{{p.location[1]}}", [0, 0])
    o[0] += v[0] - b[0]; o[1] += v[1] - b[1]
else:
  with tgviz.capture() as trace: program()
  out = {{f"{{r.loc[0]}}:{{r.loc[1]}}": [r.matched, r.attempts] for r in trace.rules(unmatched=True)}}
  out["_recorded"] = [[f"{{r.loc[0]}}:{{r.loc[1]}}", r.count] for r in trace.rules()]
print(json.dumps(out))
"""


def counts(plain: bool) -> dict:
  env = {**os.environ, "PARALLEL": "0"}
  if plain: env["TRACK_MATCH_STATS"] = "2"
  else: env.pop("TRACK_MATCH_STATS", None)
  code = CHILD.format(root=str(ROOT), program=PROGRAM, plain=plain)
  out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True, cwd=ROOT)
  return json.loads(out.stdout.strip().splitlines()[-1])


def test_attempts_and_matches_are_track_match_stats_counts():
  plain, captured = counts(plain=True), counts(plain=False)
  recorded = dict(captured.pop("_recorded"))
  plain = {loc: v for loc, v in plain.items() if v[1]}  # the patterns tried (its report prints those)
  assert len(plain) > 100 and sum(v[1] for v in plain.values()) > 10_000
  assert captured == plain, {loc: (plain.get(loc), captured.get(loc)) for loc in set(plain) | set(captured) if plain.get(loc) != captured.get(loc)}
  # the matches the steps recorded are some of them: the rest were in rewrites tinygrad does not track (simplify)
  assert all(n <= captured[loc][0] for loc, n in recorded.items())
  assert sum(recorded.values()) < sum(v[0] for v in captured.values())
  assert any(m == 0 for m, _ in captured.values())  # patterns tried that never matched


INNER = PatternMatcher([(UPat(Ops.ADD, name="x"), lambda x: x.src[0] * 1 if x.src[0].op is Ops.MUL else None)])


def lower(x):
  """A pattern's function that rewrites a graph of its own, then returns None (no match)."""
  chain = x.src[0]
  for i in range(300): chain = chain * (i + 2) + chain  # a graph to walk
  graph_rewrite(chain, INNER, name="inner rewrite")


OUTER = PatternMatcher([(UPat(Ops.SINK, name="x"), lower)])


def test_a_patterns_self_time_leaves_out_the_rewrites_it_runs():
  """A pattern whose function rewrites a graph of its own (as tinygrad's lower_sink_to_linear does) is charged its
  attempts' time less that rewrite's; the nested rewrite is a step of its own, with its span."""
  with tgviz.capture() as trace:
    graph_rewrite(Tensor.ones(4).uop.sink(), OUTER, name="outer rewrite")
  rule = next(r for r in trace.rules(unmatched=True) if r.loc == OUTER.patterns[0][0].location)
  assert rule.attempts == 1 and rule.matched == 0 and rule.first is None  # tried once, returned None
  step = next(s for s in trace.steps if s.name == "inner rewrite")
  outer_step = next(s for s in trace.steps if s.name == "outer rewrite")
  assert step.time_us is not None and step.time_us > 0
  # all of the attempt's time is in failed_us (inclusive, as tinygrad's); its self time leaves the inner rewrite out
  assert rule.failed_us >= step.time_us - 1
  assert rule.self_time_us < rule.failed_us - step.time_us / 2
  # the outer step's self time leaves the nested step out too
  nested = [s for s in outer_step.group.steps if s.depth == outer_step.depth + 1]
  assert step in nested and outer_step.time_us >= step.time_us
  assert outer_step.self_time_us == pytest.approx(outer_step.time_us - sum(s.time_us for s in nested), abs=0.01)


def test_counts_survive_save_and_load(tmp_path):
  with tgviz.capture() as trace: (Tensor.randn(4, 5).softmax(1) * 3).realize()
  assert trace.kernels and list(trace.steps)
  trace.save(tmp_path / "t.tgviz")
  again = tgviz.load(tmp_path / "t.tgviz")
  row = lambda r: (r.loc, r.count, r.matched, r.attempts, r.self_time_us, r.failed_us)  # noqa: E731
  assert [row(r) for r in again.rules(unmatched=True)] == [row(r) for r in trace.rules(unmatched=True)]
  assert any(r.attempts and r.count for r in again.rules())
  assert all(s.time_us == t.time_us for s, t in zip(again.steps, trace.steps, strict=True))
  assert again.compile_table() == trace.compile_table()
