"""A schedule of a trace run again, from the trace alone, with one of the scheduler's conditions lifted: what if two
kernels had fused.

Owns LIFTS, Lifted (the Patch that lifts one condition: tinygrad's own setting where it has one, PCONTIG=2 for the
ranges run_rangeify realizes, SPLIT_REDUCEOP=0 for split_reduceop; else remove_bufferize observed where its own code
calls out and told otherwise: no buffer read inside its reduces, no buffers counted against inlining) and rerun(): the
tensor graph a schedule started from (its "View Tensor Graph" step, rebuilt from the trace's table), every buffer in it
replaced by a fresh one filled with seeded random values (the user's buffers are never touched), the user's
``.contiguous()`` taken out where asked, then scheduled and run as Tensor.realize does, inside the running capture.
"""
from __future__ import annotations

import sys
from typing import Any

import numpy as np
from tinygrad.device import Buffer
from tinygrad.dtype import AddrSpace
from tinygrad.helpers import Context
from tinygrad.uop.ops import Ops, UOp

from tgviz.bridge.opts import _filled, _random
from tgviz.bridge.recorders import Patch
from tgviz.bridge.recording import Recording
from tgviz.bridge.records import GroupRecord
from tgviz.bridge.schedule import _lines

LIFTS = {"ranges": "PCONTIG=2: run_rangeify keeps ranges its consumers agree on open, and ranges ending at a reduce",
         "cost": "remove_bufferize counts no buffers against inlining (its len(accessed_buffers) > 3 check)",
         "reduce": "remove_bufferize finds no buffer read inside a reduce (its buffer_in_reduce check)",
         "split": "SPLIT_REDUCEOP=0: split_reduceop leaves large reduces whole",
         "contiguous": "the user's .contiguous() taken out of the program"}
_SETTINGS = {"ranges": {"PCONTIG": 2}, "split": {"SPLIT_REDUCEOP": 0}}


class Lifted(Patch):
  """One of LIFTS lifted for a block (the schedule and compile caches off: the block schedules and compiles anew): "cost" and "reduce" by
  remove_bufferize's calls to UOp.toposort (where its own code asks them); "ranges" and "split" by tinygrad's settings;
  "contiguous" and None lift nothing here (see rerun)."""

  def __init__(self, lift: str | None):
    if lift is not None and lift not in LIFTS: raise ValueError(f"{lift!r} is not one of {', '.join(LIFTS)}")
    self.lift = lift
    # CACHELEVEL=0: tinygrad's compile cache is an SQLite connection of the thread that opened it, and a widget runs this
    # in its worker thread (as bridge.opts.compile_with)
    self._ctx = Context(SCACHE=0, CACHELEVEL=0, **_SETTINGS.get(lift or "", {}))

  def patches(self) -> list[tuple[Any, dict[str, Any]]]:
    if self.lift not in ("cost", "reduce"): return []
    toposort, rb, lift = UOp.toposort, _lines()["remove_bufferize"], self.lift

    def lifted(self: UOp, gate: Any = None, enter_calls: bool = True) -> Any:
      f: Any = sys._getframe(1)
      while f is not None and f.f_code is not rb and f.f_code.co_name.startswith("recorded"): f = f.f_back  # past tgviz's own wrappers
      if f is None or f.f_code is not rb: return toposort(self, gate, enter_calls)
      name = getattr(gate, "__name__", "")
      if lift == "reduce" and name == "buf_gate": return toposort(self, None, enter_calls)  # no buffer seen inside a reduce
      out = toposort(self, gate, enter_calls)
      if lift == "cost" and name == "red_gate": f.f_locals["accessed_buffers"].clear()  # (its list: cleared in place)
      return out
    return [(UOp, {"toposort": lifted})]

  def __enter__(self) -> Lifted:
    self._ctx.__enter__()
    try: return super().__enter__()  # type: ignore[return-value]
    except BaseException:
      self._ctx.__exit__(None, None, None)
      raise

  def __exit__(self, *exc: object) -> None:
    try: super().__exit__(*exc)
    finally: self._ctx.__exit__(*exc)


def _step(group: GroupRecord, name: str) -> Any:
  step = next((s for s in group.steps if s.name == name), None)
  if step is None: raise ValueError(f"{group.name} has no {name!r} step: tgviz cannot run this schedule again")
  return step


def _fresh(u: UOp, rng: np.random.Generator) -> UOp:
  """A new buffer like the BUFFER u (same device, size, dtype), filled with seeded random values."""
  device = u.arg.device if isinstance(u.arg.device, str) else None
  if device is None: raise ValueError("a multi-device buffer: tgviz cannot run this schedule again")
  template = Buffer(device, u.max_numel(), u.dtype)
  data = _random(rng, template)
  if device.startswith(("NPY", "PYTHON", "DISK", "TINYFS")):  # a numpy or Python buffer: a copy from the host
    buf = Buffer("PYTHON", template.size, u.dtype, opaque=memoryview(bytearray(data.tobytes())))
  else: buf = _filled(device, template, data)
  return UOp.from_buffer(buf)


def rerun(rec: Recording, callify: GroupRecord, contiguous: tuple | None = None, seed: int = 0) -> None:
  """Schedule and run, in the running capture, the tensor graph the Callify group ``callify`` started from, on fresh
  buffers (seeded random values); contiguous: the tag transform_to_call numbered a .contiguous() with (records.Realized.tag),
  that .contiguous() taken out. Lift a condition around it with Lifted."""
  from tinygrad.engine.realize import run_linear
  from tinygrad.schedule import create_linear_with_vars
  from tinygrad.tensor import transform_to_call
  big = rec.uop(_step(callify, "View Tensor Graph").sink)
  rng = np.random.default_rng(seed)
  if contiguous is not None:  # (first: the buffers under it are replaced next)
    numbered = _step(callify, "number the uops")  # (its matches tag each UOp it numbers: the untagged one is the user's)
    found = next((u0 for u0, u1, _, _ in numbered.matches if rec.uop_fields[u1][4] == contiguous), None)
    u = rec.uop(found) if found is not None else None
    if u is None or u.op is not Ops.CONTIGUOUS or u not in big.toposort():
      raise ValueError("tgviz did not find that .contiguous() in the schedule's tensor graph")
    big = big.substitute({u: u.src[0]})
  rng = np.random.default_rng(seed)
  subs = {u: _fresh(u, rng) for u in big.toposort() if u.op is Ops.BUFFER and getattr(u.arg, "slot", -1) >= 0
          and getattr(u.arg, "addrspace", None) is AddrSpace.GLOBAL}
  call, _ = transform_to_call(big.substitute(subs))
  linear, var_vals = create_linear_with_vars(call)
  run_linear(linear, var_vals)
