"""A kernel's optimizations (tinygrad's OptOps) as data, and a kernel compiled and run again with other ones.

Owns: reading the opts a kernel's PROGRAM applied and who chose them (from
its AST's KernelInfo), the opts tinygrad allows next on a kernel's axes (the actions BEAM tries), compiling a kernel's AST
with given opts (``KernelInfo(opts_to_apply=...)``; a refused opt raises OptRefused with tinygrad's message), and running
two programs of one AST on the same inputs, each launch timed as the capture's KernelTimer times them, their outputs
compared. It must not start a capture (the caller traces the compile) nor build tgviz's model of what it returns.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from tinygrad import Device
from tinygrad.codegen import to_program
from tinygrad.codegen.opt import KernelOptError
from tinygrad.codegen.opt.postrange import Scheduler, args_from_ast
from tinygrad.device import Buffer
from tinygrad.dtype import _to_np_dtype, dtypes
from tinygrad.engine.realize import run_linear
from tinygrad.helpers import Context, ansistrip
from tinygrad.uop import ops
from tinygrad.uop.ops import KernelInfo, Ops, UOp

from tgviz.bridge.recorders import KernelTimer, Patch
from tgviz.bridge.records import Opt, OptRefused


def opts_of(opts: Any) -> tuple[Opt, ...]:
  """A list of opts in any form Opt.of takes."""
  return tuple(Opt.of(o) for o in opts)


def applied_opts(program: UOp | None) -> tuple[Opt, ...]:
  """The opts a rendered PROGRAM's kernel applied, in order (its SINK's KernelInfo.applied_opts)."""
  if program is None or program.op is not Ops.PROGRAM or not isinstance(info := program.src[0].arg, KernelInfo): return ()
  return opts_of(info.applied_opts)


def opts_text(program: UOp | None) -> str:
  """The opts a rendered PROGRAM's kernel applied as tinygrad's DEBUG=3 prints them (the tuple of its Opts); "" for none."""
  if program is None or program.op is not Ops.PROGRAM or not isinstance(info := program.src[0].arg, KernelInfo): return ""
  return str(info.applied_opts) if info.applied_opts else ""


def chooser(ast: UOp, applied: tuple[Opt, ...], beam_cached: bool | None) -> str:
  """Who chose a kernel's opts, from its base AST: "user" (KernelInfo.opts_to_apply), "BEAM", "BEAM cache" (BEAM's result
  cache answered; beam_cached: what the search recorder saw, None where it saw no search), "given" (the AST came
  optimized), "heuristic" (tinygrad's hand-coded optimizations) or "none" (nothing applied: NOOPT, or none fitted)."""
  info = ast.arg if isinstance(ast.arg, KernelInfo) else None
  if info is not None and info.opts_to_apply is not None: return "user"
  if info is not None and info.beam >= 1: return "BEAM cache" if beam_cached else "BEAM"
  if ast.tag is not None or (info is not None and info.applied_opts): return "given"
  return "heuristic" if applied else "none"


def allowed_opts(ast: UOp, device: str, before: Any = ()) -> list[Opt]:
  """The single opts tinygrad accepts on this kernel after the opts before (BEAM's actions that apply): what an opts
  editor offers. OptRefused where the opts before are refused."""
  from tinygrad.codegen.opt.search import get_kernel_actions
  k = scheduler(ast, device, opts_of(before))
  with Context(TRACK_MATCH_STATS=0): acted = get_kernel_actions(k, include_0=False)
  return list(dict.fromkeys(Opt.of(s.applied_opts[-1]) for s in acted.values()))


class _Ready(Exception):
  """Raised in place of apply_opts, with the AST it was given (see opts_ast)."""


@functools.lru_cache(maxsize=64)
def opts_ast(ast: UOp, device: str) -> UOp:
  """The AST tinygrad applies a kernel's opts to: its base AST after the rewrites codegen runs before apply_opts (load
  collapse, split ranges, simplify ranges, ...), which may merge or split its axes: an opt's axis counts those (the
  base AST's own axes refused the opts tinygrad had applied: "don't upcast more than 16"). Made by tinygrad's own
  full_rewrite_to_sink, stopped where it calls apply_opts, untracked."""
  import tinygrad.codegen as codegen
  def stop(sink: UOp, *args: Any, **kwargs: Any) -> UOp: raise _Ready(sink)
  was = codegen.apply_opts
  codegen.apply_opts = stop  # type: ignore[assignment]  # (raises: the sink it is given is what we want)
  try:
    with Context(TRACK_MATCH_STATS=0): codegen.full_rewrite_to_sink(ast, Device[device].renderer)
  except _Ready as ready: return ready.args[0]
  finally: codegen.apply_opts = was
  return ast  # (codegen did not optimize it: its base AST is what opts apply to)


def scheduler(ast: UOp, device: str, opts: tuple[Opt, ...]) -> Scheduler:
  """tinygrad's Scheduler of a kernel's base AST on device (its opts_ast) with these opts applied; OptRefused where it
  refuses one."""
  k = Scheduler(opts_ast(ast, device), Device[device].renderer)
  k.convert_loop_to_global()
  with Context(TRACK_MATCH_STATS=0):
    for o in opts:
      try: k.apply_opt(o.tinygrad())
      except KernelOptError as e: raise OptRefused(f"tinygrad refused {o}: {_said(e)}") from None
  return k


def refusal(ast: UOp, device: str, opts: Any) -> str | None:
  """Why tinygrad refuses these opts on this kernel (its message), or None where it accepts them all (nothing is
  compiled: a quick check before a retry)."""
  try: scheduler(ast, device, opts_of(opts))
  except OptRefused as e: return str(e)
  return None


def compile_with(ast: UOp, device: str, opts: Any) -> UOp:
  """The kernel's base AST compiled for device with exactly these opts (() for none), as tinygrad compiles it; raises
  OptRefused with tinygrad's message, naming the opt, where it refuses one (tried first, untracked, on its own)."""
  wanted = opts_of(opts)
  scheduler(ast, device, wanted)
  info = ast.arg if isinstance(ast.arg, KernelInfo) else KernelInfo()
  ast = ast.replace(arg=replace(info, opts_to_apply=tuple(o.tinygrad() for o in wanted), applied_opts=(), beam=0), tag=None)
  # CACHELEVEL=0: tinygrad's compile cache is an SQLite connection of the thread that opened it, and a widget retries
  # in its worker thread; a retry is compiled anew anyway
  try:
    with Context(CACHELEVEL=0): return to_program(ast, Device[device].renderer)
  except KernelOptError as e: raise OptRefused(f"tinygrad refused the opts {', '.join(map(str, wanted)) or '(none)'}: {_said(e)}") from None


def _said(e: KernelOptError) -> str:
  """tinygrad's message for a refused opt, without its terminal colours."""
  return ansistrip(str(e)) or "not allowed on this kernel"


@dataclass
class PairRun:
  """Two programs of one AST run on the same inputs: each launch's device time (seconds), and their outputs compared."""
  times_a: list[float] = field(default_factory=list)
  times_b: list[float] = field(default_factory=list)
  same: bool = False                        # every output equal within tolerance (float: rtol 1e-3, atol 1e-4; half 1e-2)
  max_diff: float = 0.0                     # the largest absolute difference over the outputs
  outputs: int = 0                          # how many output buffers were compared


def _random(rng: np.random.Generator, b: Buffer) -> np.ndarray:
  """Inputs: normal floats; 0 or 1 for integers and bools (safe as indices into any buffer)."""
  npdt = _to_np_dtype(b.dtype)
  if npdt is None: raise ValueError(f"tgviz cannot fill a {b.dtype} buffer with inputs")
  if dtypes.is_float(b.dtype): return rng.standard_normal(b.size).astype(npdt)
  return rng.integers(0, 2, b.size).astype(npdt)


def _filled(device: str, b: Buffer, data: np.ndarray) -> Buffer:
  out = Buffer(device, b.size, b.dtype).ensure_allocated()
  return out.copy_from(Buffer("PYTHON", b.size, b.dtype, opaque=memoryview(bytearray(data.tobytes()))))


def run_pair(a: UOp, b: UOp, ast: UOp, device: str, runs: int = 5, seed: int = 0, warmup: int = 1) -> PairRun:
  """Run programs a and b (compiled from ast) runs times each on the same random inputs (seeded), each output buffer
  starting from the same contents, after warmup launches each that are not timed (the first launch of a program is
  cold); time every launch with KernelTimer (the device's own timer, as the kernel table)."""
  shapes, var_vals = args_from_ast(ast, device)
  rng = np.random.default_rng(seed)
  init = [_random(rng, s) for s in shapes]
  outs = sorted(set(a.arg.outs) | set(b.arg.outs))
  shared = [_filled(device, s, d) if i not in outs else None for i, (s, d) in enumerate(zip(shapes, init, strict=True))]
  result = PairRun(outputs=len(outs))
  got = []
  for prg, times in ((a, result.times_a), (b, result.times_b)):
    bufs = [x if x is not None else _filled(device, s, d) for x, s, d in zip(shared, shapes, init, strict=True)]
    call = UOp(Ops.LINEAR, src=(prg.call(*[UOp.from_buffer(x) for x in bufs]),))
    timer = KernelTimer()
    with Context(CACHELEVEL=0):  # (the CL runtime compiles through tinygrad's cache: see compile_with)
      for _ in range(warmup): run_linear(call, var_vals, update_stats=False)
      with timer:
        for _ in range(runs): run_linear(call, var_vals, update_stats=False)
    times += [t for ts in timer.runs.values() for t in ts]
    got.append([bufs[i].numpy().copy() for i in outs])
  close = []
  for x, y, s in zip(got[0], got[1], [shapes[i] for i in outs], strict=True):
    rtol, atol = (1e-2, 1e-2) if s.dtype.itemsize <= 2 and dtypes.is_float(s.dtype) else (1e-3, 1e-4)
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    result.max_diff = max(result.max_diff, float(np.nanmax(np.abs(x64 - y64), initial=0.0)))
    close.append(bool(np.allclose(x64, y64, rtol=rtol, atol=atol, equal_nan=True)))
  result.same = all(close)
  return result


class OptStepRecorder(Patch):
  """Which rewrite step each applied opt made: Scheduler.apply_opt's first tracked step (its ``shift ...`` substitute)
  per successful call, in order (``steps``: the tracked group index -> [(Opt, step index in the group)]). Opts that add
  no step (SWAP, NOLOCALS, a refused trial) point at the step that follows."""

  def __init__(self) -> None:
    self.steps: dict[int, list[tuple[Opt, int]]] = {}

  def patches(self) -> list[tuple[Any, dict[str, Any]]]:
    apply, steps = Scheduler.apply_opt, self.steps
    def apply_opt(k, opt, append_opt=True):
      g = ops.active_group[-1] if ops.active_group else len(ops.tracked_ctxs) - 1
      first = len(ops.tracked_ctxs[g]) if 0 <= g < len(ops.tracked_ctxs) else -1
      ret = apply(k, opt, append_opt)
      if first >= 0 and append_opt and ops.TRACK_MATCH_STATS.value >= 2: steps.setdefault(g, []).append((Opt.of(opt), first))
      return ret
    return [(Scheduler, {"apply_opt": apply_opt})]


def opt_steps(applied: tuple[Opt, ...], seen: list[tuple[Opt, int]]) -> tuple[tuple[Opt, int | None], ...]:
  """The applied opts, each with the step its application made: matched in order against the applications seen."""
  out, i = [], 0
  for o in applied:
    j = next((j for j in range(i, len(seen)) if seen[j][0] == o), None)
    out.append((o, seen[j][1] if j is not None else None))
    if j is not None: i = j + 1
  return tuple(out)
