"""What a capture or a trace file holds, as records a Trace owns.

Owns every record type a trace holds but the run's (events.Profile's): StepRecord, GroupRecord, Origin, Program,
Opt (one of tinygrad's opts in plain fields), Candidate and BeamSearch (BEAM's search as beam.BeamRecorder saw it);
reading tinygrad's tracked groups into records, and the names tinygrad gives its steps (``recording`` holds them with
the UOp table). It never patches tinygrad and never keeps a live UOp or Buffer strongly: a
Trace must change no refcount tinygrad relies on.
"""
from __future__ import annotations

import builtins
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tinygrad.codegen.opt import Opt as TinyOpt
from tinygrad.codegen.opt import OptOps
from tinygrad.helpers import TracingKey, ansistrip, printable
from tinygrad.renderer import Renderer
from tinygrad.uop.ops import Ops, UOp

# step names tinygrad gives its "View ..." snapshots (graphs shown, not rewritten), the most telling first
SNAPSHOT_PREFIX = "View "
LANDMARKS = ("View Base AST", "View Program", "View Output AST", "View Kernel Graph")
KERNEL_LANDMARKS = ("View Base AST", "View Program")  # a kernel's first graph (its AST) and its final program
RENDER_STEP = "linearize/render"           # the step whose matches produce the rendered PROGRAM


def render_step_index(step_names: list[str]) -> int | None:
  """The index of the step that rendered a kernel's code, among its group's step names (None if it never rendered)."""
  return next((i for i, n in enumerate(step_names) if n == RENDER_STEP), None)


def is_snapshot(step_name: str) -> bool:
  return step_name.startswith(SNAPSHOT_PREFIX)


def is_unnamed(step_name: str) -> bool:
  """A graph_rewrite called without a name: tinygrad names its step after the function (rewrite_group's fn)."""
  return step_name == "graph_rewrite"


# renderer class name -> pygments lexer of the code it writes
_LEXERS = {"OpenCLRenderer": "c", "IntelRenderer": "c", "ClangRenderer": "c", "ClangJITRenderer": "c", "CUDARenderer": "cuda",
           "HIPRenderer": "cpp", "MetalRenderer": "cpp", "WGSLRenderer": "wgsl", "LLVMRenderer": "llvm",
           "CPULLVMRenderer": "llvm", "AMDLLVMRenderer": "llvm", "QCOMRenderer": "c", "NullRenderer": "c"}


def lexer_name(renderer: str) -> str:
  """The pygments lexer for the code a renderer (by class name) writes."""
  return _LEXERS.get(renderer, "c")




# *** a kernel's opts and BEAM's search (bridge.opts and bridge.beam read and record them) ***

OPT_OPS = tuple(o.name for o in OptOps)   # the opts tinygrad knows, by name


class OptRefused(ValueError):
  """tinygrad refused an opt on this kernel (its KernelOptError), or the opt is not one tinygrad knows."""


@dataclass(frozen=True)
class Opt:
  """One of tinygrad's kernel optimizations: op (UPCAST, LOCAL, UNROLL, GROUP, GROUPTOP, TC, THREAD, PADTO, SWAP,
  NOLOCALS), the axis it works on and its amount (0: the whole axis; a tuple for TC)."""
  op: str
  axis: int | None = None
  arg: int | tuple | None = None

  def __str__(self) -> str:
    return self.op if self.axis is None and self.arg is None else f"{self.op}({self.axis}, {self.arg})"  # UPCAST(0, 4)

  @classmethod
  def of(cls, x: Any) -> Opt:
    """An Opt from an Opt, tinygrad's Opt, or a tuple (op name, axis, amount); ValueError (OptRefused) for anything else."""
    if isinstance(x, Opt): return x
    if isinstance(x, TinyOpt): return cls(x.op.name, x.axis, x.arg)
    if isinstance(x, (tuple, list)) and 1 <= len(x) <= 3 and isinstance(x[0], str):
      op = x[0].upper()
      if op not in OPT_OPS: raise OptRefused(f"{x[0]!r} is not one of tinygrad's opts: {', '.join(OPT_OPS)}")
      return cls(op, *x[1:])
    raise OptRefused(f"{x!r} is not an opt: write (op, axis, amount), e.g. ('UPCAST', 0, 4)")

  def tinygrad(self) -> TinyOpt:
    return TinyOpt(OptOps[self.op], self.axis, self.arg)


@dataclass
class Candidate:
  """One candidate BEAM tried: its opts, the round of the search, whether it compiled, and its time (seconds; None where
  BEAM did not time it: it did not compile, or its binary was one already timed, or it took far more compute)."""
  opts: tuple[Opt, ...]
  round: int
  compiled: bool
  time: float | None = None


@dataclass
class BeamSearch:
  """BEAM's search for one kernel: its width (BEAM=N), whether the result cache answered (then there are no candidates),
  the candidates in the order it tried them, and the opts it chose."""
  amount: int
  cached: bool = False
  candidates: list[Candidate] = field(default_factory=list)
  winner: tuple[Opt, ...] = ()

  @property
  def timed(self) -> list[Candidate]:
    """The candidates BEAM timed (those its DEBUG=2 log counts)."""
    return [c for c in self.candidates if c.time is not None]


@dataclass
class StepRecord:
  """One tracked graph_rewrite (or rewrite_group function) call."""
  name: str
  depth: int
  loc: tuple[str, int]
  sink: int                                 # trace number of the input graph
  matches: list[tuple[int, int, tuple[str, int], float]]
  bottom_up: bool
  walk: bool
  enter_calls: bool
  out: int | None = None                    # trace number of what tinygrad's rewrite returned, if it lived to the end


@dataclass
class GroupRecord:
  name: str
  kind: str                                 # "schedule", "kernel" or "other"
  steps: list[StepRecord]
  stack: tuple[tuple[str, int, str, str], ...]
  device: str = ""
  renderer: str = ""
  origins: tuple[Origin, ...] = ()          # a kernel's Tensor operations, and the user's lines that called them
  # per node of a kernel's AST (in toposort order): which of origins made it (indices; a node none made: its users')
  node_origins: tuple[tuple[int, ...], ...] = ()
  c_style: bool = False                     # rendered by a C-style renderer (CStyleLanguage), whose lines tgviz maps
  search: BeamSearch | None = None          # a kernel's BEAM search, as beam.BeamRecorder saw it
  opt_steps: tuple = ()                     # (Opt, index of the step it made) per opt application (opts.OptStepRecorder)
  schedule: Any = None                      # a decisions.ScheduleRecord: what the scheduler decided in this group


@dataclass(frozen=True)
class Origin:
  """A Tensor operation a kernel computes (tinygrad's own op metadata, e.g. conv2d, with its backward flag) and the line
  of the user's code that called it (file None when the call was made before the capture); calls: the Tensor methods it
  called in turn, in the order first called (sparse_categorical_crossentropy: log_softmax, ...), which tinygrad's
  metadata leaves out (empty in traces of older tgviz)."""
  op: str
  backward: bool
  file: str | None
  line: int | None
  source: str
  calls: tuple[str, ...] = ()


def main_origin(origins: Sequence[Origin]) -> Origin | None:
  """The origin a kernel is known by, of those at a user's line: the line most of its Tensor ops were called from, the
  last called of those tied (origins are in the order the user's code called them: what a kernel stores is called last,
  a conv after the randn it fuses). None where none has a line."""
  lined = [o for o in origins if o.file and o.line]
  if not lined: return None
  count = Counter((o.file, o.line) for o in lined)
  return max(reversed(lined), key=lambda o: count[(o.file, o.line)])


@dataclass(frozen=True)
class Program:
  """What a kernel's renderer produced: the function name, its source and launch dimensions; tinygrad's estimates of its
  FLOPs and of the bytes it moves (None where tinygrad made none, or they are symbolic); the key its launches are timed
  under (see KernelTimer); its estimate of the bytes it moves to and from local memory (lds)."""
  name: str
  source: str
  global_size: tuple[int, ...]
  local_size: tuple[int, ...] | None
  flops: int | None = None
  bytes: int | None = None
  source_key: builtins.bytes = b""  # (the field above shadows the type)
  lds: int | None = None            # tinygrad's estimate of the bytes it moves to and from local memory and registers


def program_of(u: UOp) -> Program | None:
  """What a rendered PROGRAM UOp says of its kernel (None for another UOp)."""
  if u.op is not Ops.PROGRAM: return None
  src = next((s for s in u.src if s.op is Ops.SOURCE), None)
  if src is None: return None
  info, est = u.arg, getattr(u.src[0].arg, "estimates", None)  # the kernel's SINK carries tinygrad's Estimates
  def plain(x: Any) -> int | None: return x if isinstance(x, int) else None
  return Program(info.function_name, src.arg, tuple(info.global_size),
                 tuple(info.local_size) if info.local_size is not None else None,
                 flops=plain(est.ops) if est is not None else None, bytes=plain(est.mem) if est is not None else None,
                 source_key=src.key, lds=plain(est.lds) if est is not None else None)


def starts_schedule(group_name: str) -> bool:
  """Whether a schedule group starts a schedule of its own: tinygrad schedules in two groups, Callify then Schedule."""
  return group_name.startswith("Callify")


def _kind(key: TracingKey) -> str:
  if isinstance(key.ret, Renderer): return "kernel"
  if key.display_name.startswith(("Schedule", "Callify")): return "schedule"
  return "other"

def _stack(tb: tuple[tuple, ...] | None) -> tuple[tuple[str, int, str, str], ...]:
  """A TracingKey's stack as tinygrad's get_stacktrace makes it: (file, line, function, source text) per frame."""
  return tuple(f if len(f) == 4 else (*f, printable(f[:2])) for f in tb or ())


def kept_groups(keys: list[TracingKey], ctxs: list[list]) -> list[int]:
  """The tracked groups a recording keeps, by index: all but tgviz's own "capture" group while nothing landed in it."""
  return [i for i, (key, steps) in enumerate(zip(keys, ctxs, strict=True)) if steps or key.display_name != "capture"]


def groups_from(keys: list[TracingKey], ctxs: list[list], out: dict[int, int], origins: dict[int, tuple[Origin, ...]] | None = None,
                searches: dict[int, BeamSearch] | None = None, opt_steps: dict[int, list] | None = None,
                schedules: dict[int, Any] | None = None, node_origins: dict[int, tuple[tuple[int, ...], ...]] | None = None) -> list[GroupRecord]:
  """Records of tinygrad's tracked groups and their steps (out: id(step) -> trace number of what it returned; origins:
  tracked group index -> its kernel's origins; searches: -> its BEAM search; opt_steps: -> its opts' steps; schedules:
  -> its scheduler decisions; node_origins: -> which origins made each node of its AST). tgviz's
  own "capture" group is skipped
  when nothing landed in it."""
  from tinygrad.renderer.cstyle import CStyleLanguage
  groups = []
  kept = set(kept_groups(keys, ctxs))
  for i, (key, steps) in enumerate(zip(keys, ctxs, strict=True)):
    if i not in kept: continue
    recs = []
    for s in steps:
      recs.append(StepRecord(s.name, s.depth, s.loc, s.sink, s.matches, s.bottom_up, s.walk, s.enter_calls, out.get(id(s))))
    ren = key.ret if isinstance(key.ret, Renderer) else None
    groups.append(GroupRecord(ansistrip(key.display_name), _kind(key), recs, _stack(key.tb),
                              device=ren.target.device if ren is not None else "", renderer=type(ren).__name__ if ren else "",
                              origins=(origins or {}).get(i, ()), c_style=isinstance(ren, CStyleLanguage),
                              search=(searches or {}).get(i), opt_steps=tuple((opt_steps or {}).get(i, ())),
                              schedule=(schedules or {}).get(i), node_origins=(node_origins or {}).get(i, ())))
  return groups


