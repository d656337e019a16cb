"""What each schedule of a trace ran, read from the UOps it recorded: the calls in order, with their buffers.

Owns reading a schedule group's steps (tinygrad's ``schedule to linear``, ``resolve linear call`` and ``create COPY
kernels for SDMA`` rewrites) into plain records: ScheduleCalls (the LINEAR tinygrad cached for the schedule, its
buffers passed in) and Call (what one call of the LINEAR runs: a kernel's AST or a copy; the buffers it writes and reads,
as tinygrad's own numbers, with size, dtype and device; where each came from in the cached LINEAR: one of the
schedule's own buffers, by slot, or one passed in, by position). Only the recorded table's plain fields are read: no
UOp is rebuilt. It patches nothing.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tinygrad.uop.ops import Ops

from tgviz.bridge.recording import Recording
from tgviz.bridge.records import GroupRecord

_STEPS = ("schedule to linear", "resolve linear call", "create COPY kernels for SDMA")


@dataclass(frozen=True)
class BufferInfo:
  """One of tinygrad's buffers: its number (the ParamArg slot UOp.new_buffer gave it), the trace number of its BUFFER
  UOp (the number tinygrad's profile events name it by), its size in elements, dtype, item size and device."""
  num: int
  trace_num: int
  size: int
  dtype: str
  itemsize: int
  device: str

  @property
  def nbytes(self) -> int: return self.size * self.itemsize


@dataclass
class Call:
  """One call of a schedule: ``kind`` "kernel" (``ast``: the trace number of the kernel's AST), "copy" or "other";
  ``args`` its buffers in order, ``writes`` and ``reads`` indexes into them; ``origin`` per arg where the cached LINEAR
  had it: ("slot", n) a buffer the schedule made, ("param", i) the i-th buffer passed in, or None; ``drawn`` the trace
  number of what the CALL calls in the schedule's graphs (a copy's: the kernel tinygrad turns into its COPY at the end;
  -1 where unknown); ``op`` the name of the op it calls (SINK, COPY, BUFFER_VIEW, ...)."""
  kind: str
  ast: int
  args: list[BufferInfo]
  writes: tuple[int, ...]
  reads: tuple[int, ...]
  origin: list[tuple[str, int] | None] = field(default_factory=list)
  drawn: int = -1
  op: str = ""


@dataclass
class ScheduleCalls:
  """One schedule: ``linear`` the trace number of the LINEAR tinygrad cached for it (equal for a schedule cache hit),
  ``calls`` in the order they run."""
  linear: int
  calls: list[Call]


def _chain(step: Any, start: int) -> int:
  repl = {u0: u1 for u0, u1, _, _ in step.matches}
  seen = set()
  while start in repl and start not in seen:
    seen.add(start)
    start = repl[start]
  return start


def _buffer(fields: dict[int, tuple], num: int) -> BufferInfo | None:
  op, dtype, src, arg, _ = fields[num]
  if op is not Ops.BUFFER or not src: return None
  size = fields[src[0]][3]
  dev = arg.device if isinstance(arg.device, str) else ",".join(arg.device or ())
  return BufferInfo(arg.slot, num, size if isinstance(size, int) else 0, dtype.name, dtype.itemsize, dev)


def _io(fields: dict[int, tuple], ast: int) -> tuple[set[int], set[int]]:
  """The PARAM slots a kernel's AST stores to and loads from (an INDEX of a PARAM as a STORE's target is a write; as
  anything else's source, a read)."""
  writes: set[int] = set()
  reads: set[int] = set()
  seen, stack = set(), [ast]
  while stack:
    if (n := stack.pop()) in seen: continue
    seen.add(n)
    op, _, src, _, _ = fields[n]
    for i, s in enumerate(src):
      sop, _, ssrc, _, _ = fields[s]
      if sop is Ops.INDEX and ssrc and fields[ssrc[0]][0] is Ops.PARAM:
        (writes if op is Ops.STORE and i == 0 else reads).add(fields[ssrc[0]][3].slot)
      stack.append(s)
  return writes, reads


def schedule_calls(rec: Recording, group: GroupRecord) -> list[ScheduleCalls]:
  """The schedules a "Schedule ..." group of rec ran (one per LINEAR its ``schedule to linear`` step made), each as its
  calls; [] where the group lacks the steps (an older trace, or one tinygrad's rewrites.pkl holds)."""
  fields = rec.uop_fields
  steps = {s.name: s for s in group.steps if s.name in _STEPS}
  if len(steps) < len(_STEPS): return []
  to_linear, resolve, copies = (steps[n] for n in _STEPS)
  linears = [u1 for _, u1, _, _ in to_linear.matches if fields[u1][0] is Ops.LINEAR]
  if len(linears) != 1: return []  # a schedule of nested functions: not read here
  cached = fields[linears[0]][2]
  final = fields[_chain(resolve, resolve.sink)]
  if final[0] is not Ops.LINEAR or len(final[2]) != len(cached): return []
  calls = []
  for c0, cc in zip(final[2], cached, strict=True):
    c = _chain(copies, c0)
    ast, *bufs = fields[c][2]
    aop = fields[ast][0]
    args = [b for b in (_buffer(fields, n) for n in bufs) if b is not None]
    if len(args) != len(bufs): continue  # a multi-device call: not read here
    origin: list[tuple[str, int] | None] = []
    for n in fields[cc][2][1:]:
      op, _, _, arg, _ = fields[n]
      origin.append(("slot", arg.slot) if op is Ops.BUFFER else ("param", arg.slot) if op is Ops.PARAM else None)
    drawn = fields[c0][2][0] if fields[c0][2] else -1
    if aop is Ops.COPY: calls.append(Call("copy", ast, args, (0,), (1,), origin, drawn, aop.name))
    elif aop is Ops.SINK:
      w, r = _io(fields, ast)
      calls.append(Call("kernel", ast, args, tuple(sorted(w)), tuple(sorted(r)), origin, drawn, aop.name))
    else: calls.append(Call("other", ast, args, (), tuple(range(len(args))), origin, drawn, aop.name))
  return [ScheduleCalls(linears[0], calls)]
