"""The program a trace ran, as kernels and buffers, with the reason tinygrad's scheduler made every buffer.

Owns Program (``trace.program()``): each call of the block's schedules in run order (a ProgramKernel: a kernel's launch
or a copy) and each Buffer between them (one state of one of tinygrad's buffers: the call that wrote it, the calls that
read it, its shape, dtype and bytes) with its reason from a fixed vocabulary (REASONS), in words, and the user's line
where there is one; ``Program.why(a, b)``: the buffers between two kernels. Built from what the bridge recorded (the
schedules' calls, bridge.linear; the scheduler's decisions, bridge.schedule), when first asked for; the words for each
reason are :mod:`tgviz.trace.reasons`'. Draws and sends nothing.
"""
from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

from tgviz import bridge as tg
from tgviz.trace import reasons
from tgviz.trace.kernel import Kernel, no_such_kernel
from tgviz.trace.units import bytes_text, copy_text

REASONS = reasons.REASONS


@dataclass(eq=False)
class ProgramKernel:
  """One call of the block's schedules, in run order: a kernel's launch (``kernel``: the trace's Kernel) or a copy."""
  index: int
  kind: str                                 # "kernel", "copy" or "other"
  name: str                                 # the kernel's display name, or what else it is (see call_name)
  schedule: int                             # which of the block's schedules (0-based: one per realize) it ran in
  kernel: Kernel | None = None
  drawn: int = -1                           # the trace number of what its CALL calls in the schedule's graphs (-1: unknown)
  reads: list[Buffer] = field(default_factory=list)
  writes: list[Buffer] = field(default_factory=list)
  own: list[tg.Origin] | None = None        # a later call's own lines (see _own_lines)

  @property
  def origins(self) -> list[tg.Origin]:
    """The Tensor operations it computes and the user's lines that called them: its kernel's origins, those of the call
    it was compiled for; a later call whose values were asked for on other lines has those ops on its own lines."""
    return self.own if self.own is not None else self.kernel.origins if self.kernel is not None else []

  @property
  def times_us(self) -> list[float]:
    """The measured device time (µs) of each launch of its kernel inside the capture (every call of that kernel)."""
    return [t * 1e6 for t in self.kernel.run_times] if self.kernel is not None else []

  @property
  def time_us(self) -> float | None:
    """The median device time of its kernel's launches (µs), None where it did not run (a NULL device)."""
    return statistics.median(t) if (t := self.times_us) else None

  @property
  def reasons(self) -> list[str]:
    """Why the kernel ends where it does: the reasons of the buffers it writes, each once, in order."""
    return list(dict.fromkeys(b.reason for b in self.writes))

  def __repr__(self) -> str:
    return f"<ProgramKernel #{self.index} {self.name} reads={len(self.reads)} writes={len(self.writes)}>"


@dataclass(eq=False)
class Buffer:
  """One state of one of tinygrad's buffers in the block: written by ``writer`` (None: it came from before the block),
  read by ``readers``. ``reason`` is one of REASONS, ``detail`` the rest in words, ``line`` the user's (file, line)
  where there is one, ``rule`` the line of tinygrad that decided and ``tinygrad`` its own words for it."""
  num: int                                  # tinygrad's number for the buffer (its ParamArg slot)
  trace_num: int                            # the trace number of its BUFFER UOp
  version: int                              # the n-th write of this buffer in the block (0: as it came in)
  shape: tuple[int | str, ...]
  dtype: str
  nbytes: int
  device: str
  writer: ProgramKernel | None = None
  readers: list[ProgramKernel] = field(default_factory=list)
  reason: str = "other"
  detail: str = ""
  line: tuple[str, int] | None = None
  source: str = ""                          # the text of the user's line
  rule: tuple[str, int] | None = None
  tinygrad: str = ""
  ops: tuple[str, ...] = ()                 # the Tensor operations of the value it holds, where the scheduler recorded them
  run: int | None = None                    # the number the run's profile events (trace.memory(), the launches) give it

  @property
  def between(self) -> bool:
    """Whether it lies between two kernels of the block (a writer and at least one reader)."""
    return self.writer is not None and bool(self.readers)

  @property
  def label(self) -> str:
    """Shape, dtype and size as an edge says them: "float[4,8] 128 B"."""
    return f"{self.dtype}[{','.join(map(str, self.shape))}] {bytes_text(self.nbytes)}"

  def __str__(self) -> str:
    ends = f"{self.writer.name if self.writer else 'before the block'} -> {', '.join(r.name for r in self.readers) or 'after the block'}"
    return f"{self.label} ({ends}): {self.reason}: {self.detail}"

  def __repr__(self) -> str:
    return f"<Buffer {self.num}.{self.version} {self.label} {self.reason}>"


class Program:
  """The block's program: ``kernels`` in run order, ``buffers`` (every state written or read), ``notes`` on what could
  not be read (an older trace, a schedule of nested functions, a multi-device call)."""

  def __init__(self, kernels: list[ProgramKernel], buffers: list[Buffer], notes: list[str], schedules: list[tg.Origin | None] | None = None,
               groups: list[int | None] | None = None, schedule_groups: list[int] | None = None):
    self.kernels, self.buffers, self.notes = kernels, buffers, notes
    self._groups = groups or []
    self._schedule_groups = schedule_groups or []  # per schedule, the index of the "Schedule ..." group that ran it
    self.schedules = schedules or []
    """Per schedule (ProgramKernel.schedule), the user's line that asked for it and the tinygrad function it called
    (realize, numpy, backward, ...): None where tgviz did not see it."""

  @property
  def boundaries(self) -> list[Buffer]:
    """The buffers between two kernels of the block."""
    return [b for b in self.buffers if b.between]

  def counts(self) -> dict[str, int]:
    """Kernels by cause: how many kernels have each reason first among the buffers they write, in REASONS order."""
    found = Counter(k.reasons[0] for k in self.kernels if k.reasons)
    return {r: found[r] for r in REASONS if found[r]}

  def runs_schedule(self, group: int) -> bool:
    """Whether that group of the trace is the "Schedule ..." group that ran a schedule (not the Callify group before it,
    whose calls are the same)."""
    return group in self._schedule_groups

  def callify_group(self, schedule: int) -> int | None:
    """The index (in the trace's groups) of the group in which tinygrad turned schedule's Tensors into a call (its
    transform_to_call: where the tensor graph it scheduled is), None where unknown."""
    return self._groups[schedule] if 0 <= schedule < len(self._groups) else None

  def calls_of(self, group: int) -> list[ProgramKernel]:
    """The calls of the schedules tinygrad made in that group of the trace (its "Schedule ..." group, or the "Callify
    ..." group before it), in run order: [] for any other group, or where its calls could not be read."""
    return [k for k in self.kernels if k.schedule < len(self._schedule_groups)
            and group in (self._schedule_groups[k.schedule], self.callify_group(k.schedule))]

  def kernel_causes(self) -> dict[int, list[str]]:
    """Per kernel (by its group's index in the trace), the reasons of the buffers its calls write, each once: why it
    ends where it does (the kernel table's cause column)."""
    out: dict[int, list[str]] = {}
    for k in self.kernels:
      if k.kernel is not None: out[k.kernel.group.index] = list(dict.fromkeys(out.get(k.kernel.group.index, []) + k.reasons))
    return out

  def kernel(self, x: Any) -> ProgramKernel:
    """A kernel of the program: a ProgramKernel, a trace Kernel (its first call), its index, or text naming one kernel
    as Kernel.named takes it (its first call): its name or display name ("E_2 #2"), a glob of them, its key or a prefix
    of at least 4 hex digits; or a call's own name ("E_2 #2 (call 2 of 4)", a copy's). KeyError where the text names no
    kernel, or several."""
    if isinstance(x, ProgramKernel): return x
    if isinstance(x, int) and not isinstance(x, bool):
      if 0 <= x < len(self.kernels): return self.kernels[x]
      raise IndexError(f"the program has {len(self.kernels)} kernels, not one numbered {x}")
    if not isinstance(x, str):
      if (k := next((k for k in self.kernels if k.kernel is not None and k.kernel is x), None)) is not None: return k
      raise KeyError(f"{x!r} is no kernel of this program: give a Kernel of this trace, a call's index in trace.program().kernels, or a name")
    if (call := next((k for k in self.kernels if k.name == x), None)) is not None: return call  # "E_2 #2 (call 2 of 4)"
    # each kernel by its first call (calls of one kernel are one kernel here; a copy's call is its own)
    first: dict[int, ProgramKernel] = {}
    for k in self.kernels:
      if (k.kernel is not None and k.kernel.named(x)) or (k.kernel is None and k.name == x): first.setdefault(id(k.kernel or k), k)
    if len(first) == 1: return next(iter(first.values()))
    names = [k.name for k in first.values()]
    if names:
      raise KeyError(f"{x!r} names {len(names)} kernels ({', '.join(names[:8])}{', ...' if len(names) > 8 else ''}): name one by "
                     "its display name (as the kernel table shows it) or its key")
    raise no_such_kernel(x, [k.kernel.display_name if k.kernel is not None else k.name for k in self.kernels], "the program")

  def why(self, a: Any, b: Any) -> list[Buffer]:
    """The buffers between two kernels (either order): those one writes and the other reads; where there are none,
    those along the shortest chain of kernels from the earlier to the later. [] when no data flows between them."""
    ka, kb = sorted((self.kernel(a), self.kernel(b)), key=lambda k: k.index)
    if ka is kb: return []
    if (direct := [buf for buf in ka.writes if kb in buf.readers]): return direct
    prev: dict[int, tuple[ProgramKernel, Buffer]] = {}
    todo, seen = [ka], {ka.index}
    while todo:
      nxt = []
      for k in todo:
        for buf in k.writes:
          for r in buf.readers:
            if r.index in seen or r.index > kb.index: continue
            seen.add(r.index)
            prev[r.index] = (k, buf)
            nxt.append(r)
      todo = nxt
    if kb.index not in prev: return []
    path, k = [], kb
    while k is not ka:
      k, buf = prev[k.index]
      path.append(buf)
    return path[::-1]

  def __repr__(self) -> str:
    return f"<Program {len(self.kernels)} kernels, {len(self.boundaries)} buffers between them>"


def build(rec: tg.Recording | None, compiled: list[Kernel]) -> Program:
  """The program of a trace (see Program), from its recording and its compiled kernels."""
  kernels: list[ProgramKernel] = []
  buffers: list[Buffer] = []
  notes: list[str] = []
  schedules: list[tg.Origin | None] = []
  if rec is None: return Program(kernels, buffers, notes)
  by_ast = {k.group.steps[0]._raw.sink: k for k in compiled if k.group.steps}  # (a kernel's first graph is the AST it compiled)
  made: dict[int, tg.Realized] = {}
  run_nums: dict[int, int] = {}
  decided: dict[int, dict[int, tg.Realized]] = {}
  current: dict[int, Buffer] = {}                 # buffer number -> its state now
  versions: Counter[int] = Counter()
  n_schedule, asked, callify, groups, schedule_groups = 0, None, None, [], []
  first_calls: dict[int, ProgramKernel] = {}      # a kernel's first call, by id(kernel)
  for gi, graw in enumerate(rec.groups):
    if graw.name.startswith("Callify"): callify, asked = gi, None
    if graw.schedule is not None:
      made.update(graw.schedule.made)
      run_nums.update(graw.schedule.buffers)
      if graw.schedule.asked is not None: asked = graw.schedule.asked  # (transform_to_call's group, just before)
    if not graw.name.startswith("Schedule"): continue
    scheds = tg.schedule_calls(rec, graw)
    if not scheds and graw.steps: notes.append(f"{graw.name}: its calls could not be read (a schedule of nested functions, "
                                               "or a trace without its schedule's steps)")
    for sc in scheds:
      if sc.linear not in decided and graw.schedule is not None and graw.schedule.stages: decided[sc.linear] = graw.schedule.stages[0]
      stages = decided.get(sc.linear, {})
      schedules.append(asked)
      groups.append(callify)
      schedule_groups.append(gi)
      for call in sc.calls:
        pk = ProgramKernel(len(kernels), call.kind, "", n_schedule, by_ast.get(call.ast) if call.kind == "kernel" else None, call.drawn)
        pk.name = pk.kernel.display_name if pk.kernel is not None else call_name(call)
        kernels.append(pk)
        # a kernel compiled for another schedule's Tensors: its origins' lines are that schedule's, this one was asked here
        one = first_calls.setdefault(id(pk.kernel), pk) if pk.kernel is not None else pk
        later = one.schedule != pk.schedule
        writer = pk.origins if not later or asked is None or not asked.line else \
          [replace(o, file=asked.file, line=asked.line, source=asked.source) for o in pk.origins]
        for i in call.reads:
          info = call.args[i]
          if (buf := current.get(info.num)) is None:
            buf = current[info.num] = _buffer(info, 0, None)
            buffers.append(buf)
          if pk not in buf.readers: buf.readers.append(pk)
          pk.reads.append(buf)
        for i in call.writes:
          info = call.args[i]
          versions[info.num] += 1
          buf = current[info.num] = _buffer(info, versions[info.num], pk)
          why = reasons.explain(call.kind, call.origin[i] if i < len(call.origin) else None, stages, made.get(info.num), asked,
                                info.device, writer)
          buf.reason, buf.detail, buf.line, buf.source, buf.rule, buf.tinygrad = why.reason, why.detail, why.line, why.source, why.rule, why.tinygrad
          if why.shape: buf.shape = why.shape
          buf.ops = reasons.value_ops(call.origin[i] if i < len(call.origin) else None, stages, made.get(info.num))
          buffers.append(buf)
          pk.writes.append(buf)
        if later: _own_lines(pk, one)
      n_schedule += 1
  calls = Counter(id(k.kernel) for k in kernels if k.kernel is not None)
  seen: Counter[int] = Counter()
  for k in kernels:  # a kernel launched more than once: each call named
    if k.kernel is not None and calls[id(k.kernel)] > 1:
      seen[id(k.kernel)] += 1
      k.name += f" (call {seen[id(k.kernel)]} of {calls[id(k.kernel)]})"
  for buf in buffers:  # what comes from before the block, and what nothing in the block reads again
    buf.run = run_nums.get(buf.num)
    if buf.writer is None: buf.reason, buf.detail = "input", reasons.INPUT
    elif not buf.readers: buf.reason, buf.detail = "output", reasons.output_text(buf.detail)
  return Program(kernels, buffers, notes, schedules, groups, schedule_groups)


def _own_lines(k: ProgramKernel, first: ProgramKernel) -> None:
  """A kernel's origins are those of the Tensors of its first call, which tinygrad compiled it for; k, a call of a later
  schedule, runs the same AST for other Tensors (a randn of the same shape for a second weight), asked for on other
  lines: where the lines of the buffers it writes are not its first call's, it has its kernel's ops (its AST computes
  them) on those lines (own)."""
  lines = {b.line: b.source for b in k.writes if b.line is not None}
  if k.kernel is not None and lines and lines.keys() != {b.line for b in first.writes if b.line is not None}:
    k.own = [replace(o, file=f, line=n, source=src) for (f, n), src in lines.items() for o in k.kernel.origins]


def call_name(call: tg.Call) -> str:
  """What a call that runs no kernel of the trace is, by name: a copy by its bytes and devices ("copy 128 B CL <- CPU",
  as tinygrad names its launch), a kernel compiled before the capture, or the op it calls ("BUFFER_VIEW call")."""
  if call.kind == "copy": return copy_text(call.args[0].nbytes, call.args[0].device, call.args[1].device)
  if call.kind == "kernel": return "a kernel compiled before the capture"
  return f"{call.op or 'other'} call"


def _buffer(info: tg.BufferInfo, version: int, writer: ProgramKernel | None) -> Buffer:
  return Buffer(info.num, info.trace_num, version, (info.size,), info.dtype, info.nbytes, info.device, writer)
