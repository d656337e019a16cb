"""Recording: everything one capture recorded, as the records of ``records`` and tinygrad's tracking table of plain UOp
fields, rebuilt into UOps when looked at (through tinygrad's hash-consing cache, held weakly) and replayed match by
match (``replay``). It never patches tinygrad and never keeps a live UOp or Buffer strongly: a Trace must change no
refcount tinygrad relies on.
"""
from __future__ import annotations

import itertools
import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterator

from tinygrad.uop import ops
from tinygrad.uop.ops import Ops, UOp, UOpMetaClass

from tgviz.bridge.events import Profile
from tgviz.bridge.records import RENDER_STEP, GroupRecord, Program, StepRecord
from tgviz.bridge.replay import Replayer

INPUT_TEXT_NODES, INPUT_TEXT_CHARS = 24, 40  # a step's input written out in its tree row: small enough to read there


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
               runs: dict[bytes, list[float]] | None = None, profile: Profile | None = None,
               patterns: dict[tuple[str, int], tuple] | None = None, retimed: dict[bytes, list[float]] | None = None,
               failed: tuple[bytes, str, str] | None = None):
    self.groups, self.uop_fields = groups, uop_fields
    # per pattern location, attempts.PatternStats.plain of every attempt in the capture (None: not counted, e.g. rewrites.pkl)
    self.patterns = patterns
    self.retimed = {} if retimed is None else retimed  # SOURCE key -> device seconds of each run of a re-timing (trace.retime)
    self.retimed_stable: dict[bytes, bool] = {}        # ... whether its median settled
    self.failed = failed  # the last launch that raised: (its kernel's SOURCE key, "Type\nmessage", "compile" | "run"); see MatchRecorder
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

  def input_op(self, step: StepRecord) -> str:
    """The op of the step's input graph's root (read from the recorded fields: no graph built)."""
    return self.uop_fields[step.sink][0].name

  def input_text(self, step: StepRecord) -> str | None:
    """The step's input as tinygrad writes a small expression ("(lidx1+56)", "32"; a SINK's sources, which have the
    form it lacks: "((0+1*1+2*0)%4)"), or None where it is bigger than a tree row can say (more than INPUT_TEXT_NODES UOps
    or INPUT_TEXT_CHARS characters) or has no such form."""
    fields, stack, seen = self.uop_fields, [step.sink], set[int]()
    while stack:                            # count the input's UOps from the fields, stopping past the limit
      if (n := stack.pop()) in seen: continue
      if len(seen) == INPUT_TEXT_NODES: return None
      seen.add(n)
      stack.extend(fields[n][2])
    u = self.before(step)
    try: text = ", ".join(s.render(simplify=False) for s in u.src) if u.op is Ops.SINK else u.render(simplify=False)
    except Exception: return None           # an op tinygrad's expression renderer has no rule for
    return text if isinstance(text, str) and len(text) <= INPUT_TEXT_CHARS else None

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
      if step.name != RENDER_STEP: continue
      for k in range(len(step.matches)):
        if (u := self.match_uops(step, k)[1]).op is Ops.PROGRAM and any(s.op is Ops.SOURCE for s in u.src): found = u
    return found


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
    """Whether the step's graphs reach a BUFFER UOp that has a device Buffer now (tinygrad maps them weakly): its input,
    or a match's replacement (a schedule's last steps put the buffers in: kept, its replay kept the tensor's memory)."""
    seen, stack = set(), [step.sink, *(m[1] for m in step.matches)]
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
