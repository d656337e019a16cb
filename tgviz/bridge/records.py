"""What a capture or a trace file holds, as records a Trace owns.

Owns every record type a trace holds but the run's (events.Profile's): StepRecord, GroupRecord, Origin, Program,
Opt (one of tinygrad's opts in plain fields), Candidate and BeamSearch (BEAM's search as beam.BeamRecorder saw it) and
Recording (tinygrad's tracking table of plain UOp fields, rebuilt into UOps when looked at); reading tinygrad's tracked groups into records,
and the names tinygrad gives its steps. It never patches tinygrad and never keeps a live UOp or Buffer strongly: a
Trace must change no refcount tinygrad relies on.
"""
from __future__ import annotations

import builtins
import functools
import itertools
import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from tinygrad.codegen.opt import Opt as TinyOpt
from tinygrad.codegen.opt import OptOps
from tinygrad.helpers import TracingKey, ansistrip, printable
from tinygrad.renderer import Renderer
from tinygrad.uop import ops
from tinygrad.uop.ops import Ops, UOp, UOpMetaClass

from tgviz.bridge.events import Profile
from tgviz.bridge.replay import Replayer
from tgviz.bridge.uops import node_key

# step names tinygrad gives its "View ..." snapshots (graphs shown, not rewritten), the most telling first
SNAPSHOT_PREFIX = "View "
LANDMARKS = ("View Base AST", "View Program", "View Output AST", "View Kernel Graph")
KERNEL_LANDMARKS = ("View Base AST", "View Program")  # a kernel's first graph (its AST) and its final program
_RENDER_STEP = "linearize/render"           # the step whose matches produce the rendered PROGRAM


def render_step_index(step_names: list[str]) -> int | None:
  """The index of the step that rendered a kernel's code, among its group's step names (None if it never rendered)."""
  return next((i for i, n in enumerate(step_names) if n == _RENDER_STEP), None)


def is_snapshot(step_name: str) -> bool:
  return step_name.startswith(SNAPSHOT_PREFIX)


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
  c_style: bool = False                     # rendered by a C-style renderer (CStyleLanguage), whose lines tgviz maps
  search: BeamSearch | None = None          # a kernel's BEAM search, as beam.BeamRecorder saw it
  opt_steps: tuple = ()                     # (Opt, index of the step it made) per opt application (opts.OptStepRecorder)
  schedule: Any = None                      # a decisions.ScheduleRecord: what the scheduler decided in this group


@dataclass(frozen=True)
class Origin:
  """A Tensor operation a kernel computes (tinygrad's own op metadata, e.g. conv2d, with its backward flag) and the line
  of the user's code that called it (file None when the call was made before the capture)."""
  op: str
  backward: bool
  file: str | None
  line: int | None
  source: str


class _WeakUOps:
  """Trace number -> UOp, held weakly: a dict of plain weak references, dead ones dropped as it grows (a
  WeakValueDictionary's per-item callback costs about as much as building the UOp)."""

  def __init__(self) -> None:
    self._refs: dict[int, weakref.ref[UOp]] = {}
    self._limit = 1 << 16

  def get(self, num: int) -> UOp | None:
    return r() if (r := self._refs.get(num)) is not None else None

  def put(self, refs: dict[int, weakref.ref[UOp]]) -> None:
    """Keep these (weak references to the UOps with those numbers)."""
    self._refs.update(refs)
    if len(self._refs) > self._limit:
      self._refs = {n: r for n, r in self._refs.items() if r() is not None}
      self._limit = max(1 << 16, 2 * len(self._refs))

  def clear(self) -> None:
    self._refs.clear()


class Recording:
  """Everything one capture recorded: plain fields only (op, dtype, source trace numbers, arg and tag of each UOp, as
  tinygrad's VIZ keeps them), never a live UOp or Buffer, so a Trace changes no refcount tinygrad relies on."""

  REPLAYERS = 8                             # steps whose replayed graphs are kept (most recently used)

  def __init__(self, groups: list[GroupRecord], uop_fields: dict[int, tuple], lines: dict[str, list[tuple[int, ...]]] | None = None,
               runs: dict[bytes, list[float]] | None = None, profile: Profile | None = None):
    self.groups, self.uop_fields = groups, uop_fields
    self.lines = lines  # rendered source -> per line, the trace numbers of its UOps; None: no line data (rewrites.pkl)
    self.runs = {} if runs is None else runs      # key of a kernel's SOURCE UOp -> device seconds of each launch (KernelTimer)
    self.profile = profile  # the run: tinygrad's profile events as records (None: a trace without them, e.g. rewrites.pkl)
    # rebuilt UOps, held weakly: a rebuilt UOp is the live one while tinygrad still holds it (hash-consing), and a
    # strong cache would then keep its Buffer alive (tinygrad's ops.buffers is keyed weakly by the BUFFER UOp)
    self._uops = _WeakUOps()
    self._replayers: OrderedDict[int, Replayer] = OrderedDict()
    # UOps are built (and replays advanced) by one thread at a time: two threads building the same UOp at once could
    # each get their own object, and the replays' caches are not thread-safe (the report and SVGs are written at once)
    self._lock = threading.RLock()

  def uop(self, num: int) -> UOp:
    """The UOp with trace number num, rebuilt from the table as tinygrad's VIZ does (hash-consing makes it the very
    object tinygrad computed, while anything still holds that)."""
    if (u := self._uops.get(num)) is not None: return u
    return self.uops([num])[0]

  def uops(self, nums: list[int]) -> list[UOp]:
    """Several UOps by trace number (as uop), built in one walk that shares what they share."""
    with self._lock: return self._build(nums)

  def _build(self, nums: list[int]) -> list[UOp]:
    built: dict[int, UOp] = {}              # strong while building: the weak cache could drop a source mid-build
    cached, fields = self._uops._refs, self.uop_fields
    need, stack = set(), list(nums)
    while stack:                            # what is not cached, down to what is
      if (n := stack.pop()) in need or n in built: continue
      if (r := cached.get(n)) is not None and (u := r()) is not None: built[n] = u
      else:
        need.add(n)
        stack.extend(fields[n][2])
    # tinygrad numbers a graph in toposort order (UOp.trace_num is a recursive_property): sources before their users.
    # Each is made as tinygrad's constructor makes it, through its hash-consing cache, without the checks the
    # constructor made when tinygrad made these (dtype derivation, SPEC); the cache's weak reference is kept too
    ucache, new, refs, src_of = UOpMetaClass.ucache, type.__call__, {}, built.__getitem__
    for n in sorted(need):
      op, dtype, src, arg, tag = fields[n]
      key = (op, dtype, tuple(map(src_of, src)), arg, tag)
      if (ref := ucache.get(key)) is None or (u := ref()) is None:
        u = new(UOp, *key)
        ucache[key] = ref = weakref.ref(u)
      built[n], refs[n] = u, ref
    self._uops.put(refs)
    return [built[n] for n in nums]

  def before(self, step: StepRecord) -> UOp:
    return self.uop(step.sink)

  def returned(self, step: StepRecord) -> UOp | None:
    """What tinygrad's rewrite returned; None when it did not return (it raised), or when nothing held the result any
    more when the capture ended (then VIZ's replay, Step.at, is the graph)."""
    return self.uop(step.out) if step.out is not None else None

  def match_failed(self, step: StepRecord, k: int) -> bool:
    """Whether the pattern of match k raised (tinygrad records a REWRITE_ERROR as its replacement)."""
    return self.uop_fields[step.matches[k][1]][0] is Ops.REWRITE_ERROR

  def match_pairs(self, step: StepRecord) -> list[tuple[UOp, UOp]]:
    """Each match's (node, replacement), built in one walk."""
    uops = iter(self.uops([n for u0, u1, _, _ in step.matches for n in (u0, u1)]))
    return list(zip(uops, uops, strict=False))

  def match_uops(self, step: StepRecord, k: int) -> tuple[UOp, UOp]:
    u0, u1, _, _ = step.matches[k]
    return self.uop(u0), self.uop(u1)

  def only(self, group: GroupRecord, runs: dict[bytes, list[float]] | None = None) -> Recording:
    """This recording with one of its groups alone (the UOp table and lines shared; no profile), with these run times
    (default: its own)."""
    return Recording([group], self.uop_fields, self.lines, self.runs if runs is None else runs)

  def program_uop(self, group: GroupRecord) -> UOp | None:
    """The last PROGRAM a kernel group's linearize/render step produced that holds its rendered source, if it got that far."""
    found = None
    for step in group.steps:
      if step.name != _RENDER_STEP: continue
      for k in range(len(step.matches)):
        if (u := self.match_uops(step, k)[1]).op is Ops.PROGRAM and any(s.op is Ops.SOURCE for s in u.src): found = u
    return found


  @functools.cached_property
  def call_notes(self) -> dict[str, str]:
    """Node key of a kernel's AST -> the line its CALL nodes in schedule graphs add to their label: the kernel's
    Tensor operations (e.g. "ops: conv2d, relu")."""
    notes = {}
    for g in self.groups:
      if g.kind == "kernel" and g.origins and g.steps:
        ops_ = dict.fromkeys(o.op + (" bw" if o.backward else "") for o in g.origins)
        notes[node_key(self.uop(g.steps[0].sink))] = "ops: " + ", ".join(ops_)
    return notes

  def source_lines(self, source: str) -> list[tuple[UOp, ...]] | None:
    """For each line of a rendered kernel source, the UOps behind it (see _LineRecorder); None when the capture did not
    see it rendered by a C-style renderer."""
    if self.lines is None or (nums := self.lines.get(source)) is None: return None
    return [tuple(self.uop(n) for n in line) for line in nums]

  def run_times(self, program: Program) -> list[float]:
    """The device seconds of each launch of a program during the capture (none when it never ran, e.g. on NULL)."""
    return self.runs.get(program.source_key, [])

  def replay(self, step: StepRecord) -> Iterator[UOp]:
    """Every graph of a step in order, the input first, then the graph after each match (as Recording.at, in one pass
    along the chain, holding one graph at a time: see Replayer.each)."""
    graphs = self.new_replayer(step).each()
    while True:
      with self._lock: g = next(graphs, None)
      if g is None: return
      yield g

  def later_graphs(self, step: StepRecord, after: int) -> Iterator[tuple[int, UOp, bool]]:
    """The graphs of a step past its first `after` matches, one at a time along the chain, each as (k, the graph after
    match k, whether only tinygrad derives it from the graph before: see Replayer.tinygrad_only)."""
    replayer = self.new_replayer(step)
    graphs = replayer.each(after)  # (graph `after` in one pass where it can: the chain starts there)
    for k in itertools.count(after):
      with self._lock: g = next(graphs, None)
      if g is None: return
      if k > after: yield k, g, k in replayer.tinygrad_only

  def _holds_live_buffers(self, step: StepRecord) -> bool:
    """Whether the step's graph reaches a BUFFER UOp that has a device Buffer now (tinygrad maps them weakly)."""
    seen, stack = set(), [step.sink]
    while stack:
      if (n := stack.pop()) in seen: continue
      seen.add(n)
      if self.uop_fields[n][0] is Ops.BUFFER and self.uop(n) in ops.buffers: return True
      stack.extend(self.uop_fields[n][2])
    return False

  def at(self, step: StepRecord, k: int) -> UOp:
    """The graph after the first k matches of step, exactly as tinygrad's VIZ replays it (see Replayer). The replays
    of the few most recently used steps are kept, so stepping through a step's matches is instant; not while the graph
    reaches a live device buffer, which a kept replay would keep alive."""
    if k == 0: return self.before(step)  # no replay needed
    with self._lock: return self._replayer(step).at(k)

  def new_replayer(self, step: StepRecord) -> Replayer:
    """A Replayer of step on its own (not one of the kept ones)."""
    return Replayer(self.before(step), self.match_pairs(step), step.bottom_up, step.walk, step.enter_calls)

  def _replayer(self, step: StepRecord) -> Replayer:
    key = id(step)
    if (rp := self._replayers.get(key)) is None:
      rp = self.new_replayer(step)
      if self._holds_live_buffers(step): return rp
      self._replayers[key] = rp
      while len(self._replayers) > self.REPLAYERS: self._replayers.popitem(last=False)
    self._replayers.move_to_end(key)
    return rp



@dataclass(frozen=True)
class Program:
  """What a kernel's renderer produced: the function name, its source and launch dimensions; tinygrad's estimates of its
  FLOPs and of the bytes it moves (None where tinygrad made none, or they are symbolic); the key its launches are timed
  under (see KernelTimer)."""
  name: str
  source: str
  global_size: tuple[int, ...]
  local_size: tuple[int, ...] | None
  flops: int | None = None
  bytes: int | None = None
  source_key: builtins.bytes = b""  # (the field above shadows the type)


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
                 source_key=src.key)


def _kind(key: TracingKey) -> str:
  if isinstance(key.ret, Renderer): return "kernel"
  if key.display_name.startswith(("Schedule", "Callify")): return "schedule"
  return "other"

def _stack(tb: tuple[tuple, ...] | None) -> tuple[tuple[str, int, str, str], ...]:
  """A TracingKey's stack as tinygrad's get_stacktrace makes it: (file, line, function, source text) per frame."""
  return tuple(f if len(f) == 4 else (*f, printable(f[:2])) for f in tb or ())


def groups_from(keys: list[TracingKey], ctxs: list[list], out: dict[int, int], origins: dict[int, tuple[Origin, ...]] | None = None,
                searches: dict[int, BeamSearch] | None = None, opt_steps: dict[int, list] | None = None,
                schedules: dict[int, Any] | None = None) -> list[GroupRecord]:
  """Records of tinygrad's tracked groups and their steps (out: id(step) -> trace number of what it returned; origins:
  tracked group index -> its kernel's origins; searches: -> its BEAM search; opt_steps: -> its opts' steps; schedules:
  -> its scheduler decisions). tgviz's
  own "capture" group is skipped
  when nothing landed in it."""
  from tinygrad.renderer.cstyle import CStyleLanguage
  groups = []
  for i, (key, steps) in enumerate(zip(keys, ctxs, strict=True)):
    if not steps and key.display_name == "capture": continue
    recs = []
    for s in steps:
      recs.append(StepRecord(s.name, s.depth, s.loc, s.sink, s.matches, s.bottom_up, s.walk, s.enter_calls, out.get(id(s))))
    ren = key.ret if isinstance(key.ret, Renderer) else None
    groups.append(GroupRecord(ansistrip(key.display_name), _kind(key), recs, _stack(key.tb),
                              device=ren.target.device if ren is not None else "", renderer=type(ren).__name__ if ren else "",
                              origins=(origins or {}).get(i, ()), c_style=isinstance(ren, CStyleLanguage),
                              search=(searches or {}).get(i), opt_steps=tuple((opt_steps or {}).get(i, ())),
                              schedule=(schedules or {}).get(i)))
  return groups


