"""A compiled kernel run again on its own, to time it: warm-up launches, then as many timed launches as give a stable
median; and the split of a kernel's FLOPs (tinygrad's estimate) into float and integer work.

Owns: time_program (a PROGRAM launched on inputs of its AST's shapes, each launch timed by the device as the capture's
KernelTimer times them, until the median's 95% interval is narrow or a bound is reached) and float_ops (tinygrad's
Estimates.from_uops over the program's ALU work of float dtype alone). It never runs inside a capture (its launches would
land in the trace) and knows nothing of traces.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
from tinygrad.codegen.opt.postrange import args_from_ast
from tinygrad.dtype import dtypes
from tinygrad.engine.realize import run_linear
from tinygrad.helpers import Context
from tinygrad.renderer import Estimates
from tinygrad.uop.ops import GroupOp, Ops, UOp

from tgviz.bridge.machine import linear_uops
from tgviz.bridge.opts import _filled, _random
from tgviz.bridge.profiler import running
from tgviz.bridge.recorders import KernelTimer

WARMUP, MIN_RUNS, MAX_RUNS = 3, 10, 400       # launches not timed; the fewest timed, the most
BUDGET = 1.0                                   # seconds of launching a kernel may take, warm-up included
STABLE = 0.02                                  # the median's 95% interval, as a fraction of it, that is stable enough


@dataclass
class Retimed:
  """A kernel timed again: each timed launch's device seconds, the warm-up launches before them, and whether the median
  settled (its 95% interval within STABLE of it) before a bound (MAX_RUNS, BUDGET) stopped the runs."""
  times: list[float] = field(default_factory=list)
  warmup: int = 0
  stable: bool = False


def median_interval(times: list[float]) -> tuple[float, float]:
  """The 95% interval of the median of times (order statistics, the binomial's normal approximation)."""
  xs, n = sorted(times), len(times)
  half = 0.98 * math.sqrt(n)
  lo, hi = max(0, math.floor(n / 2 - half)), min(n - 1, math.ceil(n / 2 + half))
  return xs[lo], xs[hi]


def _settled(times: list[float], rel: float) -> bool:
  if len(times) < MIN_RUNS: return False
  lo, hi = median_interval(times)
  med = float(np.median(times))
  return med > 0 and (hi - lo) / 2 <= rel * med


def time_program(program: UOp, ast: UOp, device: str, warmup: int = WARMUP, max_runs: int = MAX_RUNS, budget: float = BUDGET,
                 rel: float = STABLE, seed: int = 0) -> Retimed:
  """Launch a compiled PROGRAM (of ast) on random inputs of its buffers' shapes (seeded): warmup launches untimed, then
  timed ones (the device's own timer, as the kernel table's) until the median settles (see Retimed), max_runs are
  timed, or budget seconds have passed (at least MIN_RUNS are timed). RuntimeError inside a capture."""
  if running(): raise RuntimeError("a capture is running: kernels are timed again outside one")
  shapes, var_vals = args_from_ast(ast, device)
  rng = np.random.default_rng(seed)
  bufs = [_filled(device, s, _random(rng, s)) for s in shapes]
  call = UOp(Ops.LINEAR, src=(program.call(*[UOp.from_buffer(b) for b in bufs]),))
  out, timer, start = Retimed(warmup=warmup), KernelTimer(), time.perf_counter()
  with timer, Context(CACHELEVEL=0):  # (the CL runtime compiles through tinygrad's cache: see opts.compile_with)
    for _ in range(warmup): run_linear(call, var_vals, update_stats=False)
    timer.runs.clear()
    while True:
      run_linear(call, var_vals, update_stats=False)
      out.times = [t for ts in timer.runs.values() for t in ts]
      out.stable = _settled(out.times, rel)
      if out.stable or len(out.times) >= max_runs: break
      if len(out.times) >= MIN_RUNS and time.perf_counter() - start > budget: break
  return out


def _float_work(u: UOp) -> bool:
  """An ALU op on floats: its result's dtype, or its first operand's (a comparison of floats), is a float."""
  return dtypes.is_float(u.dtype) or (bool(u.src) and dtypes.is_float(u.src[0].dtype))


def float_ops(program: UOp) -> int | None:
  """The part of a kernel's FLOPs estimate that is float work: tinygrad's Estimates.from_uops (as do_estimates runs it,
  index arithmetic left out) over the program's UOps without its integer ALU ops (the rest of the estimate is integer
  work: hashes, masks). None where the program has no linear UOps or the count is symbolic."""
  uops = linear_uops(program)
  if not uops: return None
  est = Estimates.from_uops(tuple(u for u in uops if u.op not in GroupOp.ALU or _float_work(u)), ignore_indexing=True)
  return est.ops if isinstance(est.ops, int) else None
