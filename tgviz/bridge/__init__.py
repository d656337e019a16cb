"""The one module of tgviz that knows tinygrad's internals.

Everything tinygrad-version-specific lives here: the default OpenCL-on-PoCL device, switching
rewrite tracking on and off around a block, the caches that must be cleared so a block traces
the same way twice, reading tinygrad's tracking globals into records a Trace owns, replaying a
step match by match exactly as ``tinygrad.viz.serve`` does, turning a UOp into plain node
data for drawing, and saving and opening trace files (tinygrad's own rewrites.pkl too). The rest
of tgviz talks to the records and node data, never to tinygrad.
"""
from __future__ import annotations

import atexit
import bisect
import difflib
import functools
import gc
import glob
import gzip
import hashlib
import importlib.metadata
import linecache
import os
import pickle
import re
import shutil
import sys
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

SUPPORTED_TINYGRAD = "0.14.0"


class UnsupportedTinygrad(ImportError):
  """The installed tinygrad is not the version tgviz reads the internals of."""


def _check_version() -> None:
  try: found = importlib.metadata.version("tinygrad")
  except importlib.metadata.PackageNotFoundError:
    raise UnsupportedTinygrad(f"tinygrad is not installed; tgviz needs tinygrad=={SUPPORTED_TINYGRAD} "
                              f"(pip install tinygrad=={SUPPORTED_TINYGRAD})") from None
  if found != SUPPORTED_TINYGRAD:
    raise UnsupportedTinygrad(f"tgviz supports tinygrad {SUPPORTED_TINYGRAD} only, found tinygrad {found}: "
                              f"pip install tinygrad=={SUPPORTED_TINYGRAD}")


_ENV_BEFORE = {k: os.environ.get(k) for k in ("OPENCL_PATH", "DEV")}


def _setup_default_device() -> None:
  """Make tinygrad's CL device run on PoCL from pip: point OPENCL_PATH at pyopencl's bundled ICD loader and
  load pyopencl first (without that early import the ICD loader segfaults). DEV defaults to CL."""
  try:
    import pyopencl  # before tinygrad opens the CL device
  except ImportError: return
  if "OPENCL_PATH" not in os.environ:
    libs = sorted(glob.glob(os.path.join(os.path.dirname(pyopencl.__file__), ".libs", "libOpenCL*.so*")))
    if libs: os.environ["OPENCL_PATH"] = libs[0]
  if not os.environ.get("DEV"): os.environ["DEV"] = "CL"


_check_version()
_setup_default_device()

from tinygrad import helpers, schedule, tensor  # noqa: E402
from tinygrad.dtype import dtypes  # noqa: E402
from tinygrad.helpers import DEV, Context, TracingKey, ansistrip, printable  # noqa: E402
from tinygrad.renderer import Renderer  # noqa: E402
from tinygrad.uop import ops  # noqa: E402
from tinygrad.uop.ops import (  # noqa: E402
  REWRITE_STACK_LIMIT,
  GroupOp,
  Ops,
  RewriteContext,
  TrackedPatternMatcher,
  UOp,
  UOpMetaClass,
  _rebuild_dtype,
)

from tgviz.graph import Graph, Node  # noqa: E402

if not DEV.device and os.environ.get("DEV"): DEV.value = os.environ["DEV"]  # tinygrad was imported before tgviz

# tinygrad's exit hook writes rewrites.pkl and may start the VIZ server: tgviz never lets it run.
if hasattr(ops, "print_match_stats"): atexit.unregister(ops.print_match_stats)

_TRACE_NUM = "_RECURSIVE_PROPERTY_trace_num"


def restore_environment() -> None:
  """Undo the device defaults tgviz set at import (OPENCL_PATH, DEV)."""
  for k, v in _ENV_BEFORE.items():
    if v is None: os.environ.pop(k, None)
    else: os.environ[k] = v
  DEV.value = _ENV_BEFORE["DEV"] or ""


def clang_missing() -> str | None:
  """A message when tinygrad's CPU device has no C compiler, else None."""
  if shutil.which("clang"): return None
  return ("clang was not found: tinygrad's CPU device compiles with clang, and tinygrad uses that device for some tensors "
          "even when another is the default (e.g. Tensor.arange(...).tolist()). Install it: sudo apt-get install clang")


def default_device() -> str:
  """The device a capture uses when none is given."""
  if DEV.device: return repr(DEV)
  from tinygrad import Device
  return Device.DEFAULT


# *** records a Trace owns ***

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
               runs: dict[bytes, list[float]] | None = None):
    self.groups, self.uop_fields = groups, uop_fields
    self.lines = lines  # rendered source -> per line, the trace numbers of its UOps; None: no line data (rewrites.pkl)
    self.runs = {} if runs is None else runs      # key of a kernel's SOURCE UOp -> device seconds of each launch (KernelTimer)
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

  def program(self, group: GroupRecord) -> Program | None:
    """The program a kernel group rendered (the last PROGRAM its linearize/render step produced), if it got that far."""
    found = None
    for step in group.steps:
      if step.name != _RENDER_STEP: continue
      for k in range(len(step.matches)):
        if (prg := _program_of(self.match_uops(step, k)[1])) is not None: found = prg
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
    along the chain that keeps nothing afterwards)."""
    rp = Replayer(self, step)
    for k in range(len(step.matches) + 1):
      with self._lock: g = rp.at(k)
      yield g

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

  def _replayer(self, step: StepRecord) -> Replayer:
    key = id(step)
    if (rp := self._replayers.get(key)) is None:
      rp = Replayer(self, step)
      if self._holds_live_buffers(step): return rp
      self._replayers[key] = rp
      while len(self._replayers) > self.REPLAYERS: self._replayers.popitem(last=False)
    self._replayers.move_to_end(key)
    return rp


_INF = float("inf")


def _fixpoint_cycle(values: dict[UOp, list[UOp]]) -> bool:
  """Whether following replacements (key -> each value it ever had, identity entries aside) can come back to a key."""
  state: dict[UOp, int] = {}  # 1: on the current path, 2: done
  for start in values:
    if start in state: continue
    stack = [(start, iter(set(values[start]) - {start}))]
    state[start] = 1
    while stack:
      u, nxt = stack[-1]
      for v in nxt:
        if v not in values: continue
        if (st := state.get(v)) == 1: return True
        if st is None:
          state[v] = 1
          stack.append((v, iter(set(values[v]) - {v})))
          break
      else:
        state[u] = 2
        stack.pop()
  return False


def opaque_call_bodies() -> list[str]:
  """The ops of a CALL's first source that make it opaque to a rewrite that does not enter calls (see Replayer)."""
  return sorted(o.name for o in UOp._OPAQUE_CALL_BODIES)


def page_replays(pairs: list[tuple[UOp, UOp]], table: NodeTable, rows: list[int]) -> int:
  """How many of a step's matches js/replay.js, the Replayer's one pass and chain on a report's node table, follows
  exactly as VIZ from the step's input and its matches' (node, replacement) pairs: up to the first replacement that
  changes a dtype (nodes rebuilt over it change theirs, which only tinygrad derives); none where those replacements
  hold a fixpoint cycle (where VIZ's replay stops at an error) or the step is big enough for REWRITE_STACK_LIMIT (rows:
  the input's and the replacements' rows in the table). The page refuses, with a message, what only the whole graph
  shows: a cyclic dependency, an opaque call body that holds a replaced node."""
  # the table's size bounds the step's, and mostly settles it; else count
  if 8 * len(table.rows) > REWRITE_STACK_LIMIT.value and 8 * table.reach(rows) > REWRITE_STACK_LIMIT.value: return 0
  n = next((i for i, (u0, u1) in enumerate(pairs) if u0.dtype is not u1.dtype), len(pairs))
  values: dict[UOp, list[UOp]] = {}
  for u0, u1 in pairs[:n]: values.setdefault(u0, []).append(u1)
  return 0 if _fixpoint_cycle(values) else n


class _Fallback(Exception):
  pass


class Replayer:
  """Exact random access to the graphs of tinygrad's VIZ replay of one step (tinygrad/viz/serve.py get_full_rewrite):
  any graph in one pass over the nodes above what was replaced (see "Random access"), a whole replay match by match
  along the chain, each match only revisiting the nodes above its own replacement.

  VIZ: replaces = {}; for each match k: replaces[u0_k] = u1_k; new = next.substitute(replaces, walk, enter_calls);
  graph_k = new (or REWRITE_ERROR on RuntimeError, then stop); if not bottom_up: next = new.

  UOp.substitute(D) is graph_rewrite(sink, _substitute, D, bottom_up=True, walk, enter_calls) with D's identity
  entries dropped. As a function of one node (RewriteContext memoizes on the node, so it is one), it is
    unified (walk=False): R(n) = m := fixpoint of D from n (a cycle raises RuntimeError);
                          s' = R(src) of m's srcs (an opaque call body, see below, kept as is);
                          m if s' == m.src else R(UOp(m.op, _rebuild_dtype(m, s'), s', m.arg, m.tag))
    walk:                 W(n) = D[n] if n in D else n rebuilt on W(srcs) (no fixpoint, no re-visit)
  An opaque call body (src[0] of a FUNCTION, or of a CALL whose src[0] is in UOp._OPAQUE_CALL_BODIES, unless
  enter_calls) is not rewritten. If no key of D is reachable from n, R(n) = W(n) = n: only nodes above a key get
  visited. `keytime[n]` = the first match index at which some key reachable from n entered `replaces` (memoized for
  the step), so "n is clean at k" is keytime[n] > k, an O(1) test.

  What this fast path does not model exactly (a fixpoint cycle, a cyclic dependency, an opaque call body that contains
  a key, a UOp constructor error, a graph big enough for REWRITE_STACK_LIMIT) raises _Fallback, and that one graph is
  computed by tinygrad's own substitute on the exact same inputs, so the result, or the exception, is tinygrad's.

  bottom_up=False: graph_k = S_{D_k}(graph_{k-1}), computed forward from the last computed graph; every graph is kept
  (they share structure through hash-consing). bottom_up=True: graph_k = S_{D_k}(graph_0), also computed in order,
  since VIZ stops at the first REWRITE_ERROR. The per-key value history (hist) rebuilds D_k exactly for the fallback.

  Random access (bottom_up=False, walk=False): graph_k = S_{D_k}(graph_0) in one pass, without the chain, as long as
  no key of D_k lies below another key of D_k and every key has one value (k < self.direct_below). Why: graph_{k-1}
  holds no key of D_{k-1} (S is a fixpoint), so S_{D_k}(graph_{k-1}) only differs from graph_{k-1} where match k's key
  u0_k is; with no key below another, u0_k sits in graph_{k-1} exactly where S_{D_k}(graph_0) meets it, rebuilt
  over the same ancestors; by induction the chain and the single pass agree. tinygrad's top-down rewrite (sources
  first, then the node) only ever matches a node whose sources are already rewritten, so its keys never lie below one
  another and every match of a step is reached this way; a step where they do is replayed by the chain from the last
  graph computed at random (tests check both against VIZ's replay).
  bottom_up=True: graph_k = S_{D_k}(graph_0) by definition; only VIZ's stop at the first REWRITE_ERROR needs the
  graphs before k. The replay's RuntimeErrors are a fixpoint cycle (then D_k's keys and values hold a cycle, and so
  do all the keys and values of the step) and REWRITE_STACK_LIMIT (ruled out by the number of nodes the step has):
  where neither can happen, any graph is one pass too.
  """

  CHAIN_AHEAD = 16                          # at most this many matches ahead of the chain, extend it rather than jump

  def __init__(self, rec: Recording, step: StepRecord):
    self.n = len(step.matches)
    self.walk, self.enter_calls, self.bottom_up = step.walk, step.enter_calls, step.bottom_up
    self.g0 = rec.before(step)
    self.pairs = rec.match_pairs(step)  # (u0, u1) of each match
    # key -> first k (1-based: graph k is after match k) it is in replaces; and its value history
    self.first: dict[UOp, int] = {}
    self.hist: dict[UOp, tuple[list[int], list[UOp]]] = {}
    first, hist = self.first, self.hist
    for k, (u0, u1) in enumerate(self.pairs, 1):
      if (h := hist.get(u0)) is None:
        first[u0], hist[u0] = k, ([k], [u1])
      else:
        h[0].append(k); h[1].append(u1)
    self.keytime: dict[UOp, float] = {}
    self.graphs: list[UOp | None] = [self.g0] + [None] * self.n  # bottom_up=False: the chain, computed lazily
    self.error_at: int | None = None  # first k whose graph is a REWRITE_ERROR (replay stops there)
    self.cur_dict: dict[UOp, UOp] = {}  # bottom_up=False: replaces after match self.cur_k
    self.cur_k = 0
    # size of the graph substitute walks (an upper bound: opaque bodies counted), for the REWRITE_STACK_LIMIT guard.
    # bottom_up=False: node -> number of edges into it from the current chain graph (root pinned), kept by churn.
    # Kept only once the step has seen enough nodes for the limit to matter (len(keytime) bounds every graph).
    self.cnt: dict[UOp, int] = {}
    self.size = 0
    self.counting = False
    self._direct_below: int | None = None

  # *** the public API ***

  def at(self, k: int) -> UOp:
    """The graph after the first k matches (k=0: the input), as VIZ's replay; a failed replay stops at its
    REWRITE_ERROR, which every later k returns too."""
    if not 0 <= k <= self.n: raise IndexError(k)
    if self.error_at is not None and k >= self.error_at: return self.graphs[self.error_at]
    if self.graphs[k] is not None: return self.graphs[k]
    # the chain allocates ~30 UOps per match and frees few: Python's cyclic GC would rescan the heap many times
    was = gc.isenabled()
    gc.disable()
    try:
      # a few matches ahead of the chain (stepping through matches, a whole replay): the chain, match by match;
      # further: one pass from the input, and the chain goes on from there
      if not self.walk and not self.cur_k < k <= self.cur_k + self.CHAIN_AHEAD:
        target = k if k < self.direct_below else self.direct_below - 1  # from there on, only the chain is exact
        if self._direct(target) is None:
          if k <= self.cur_k: self._jump(0)  # graph k is behind the chain: the chain again, from the input
        elif target > self.cur_k: self._jump(target)
        if (g := self.graphs[k]) is not None: return g
      return self._at(k)
    finally:
      if was: gc.enable()

  @property
  def direct_below(self) -> int:
    """Every graph k below this is S_{D_k}(graph_0), one pass (see the class docstring). bottom_up=False: the first k
    at which a key lies below another key of D_k, or a key gets a second value. bottom_up=True: all of them, unless
    the step's keys and values hold a cycle or the step is big enough for REWRITE_STACK_LIMIT (then none)."""
    if self._direct_below is None:
      found = self.n + 1
      if self.bottom_up:
        if self._has_fixpoint_cycle() or 8 * self._node_bound() > REWRITE_STACK_LIMIT.value: found = 1
      else:
        kt, ktf = self.keytime, self._kt
        for u, (ks, _) in self.hist.items():
          if len(ks) > 1 and ks[1] < found: found = ks[1]
          below = _INF
          for x in (u.src[1:] if self._opaque(u) else u.src):
            if (t := kt.get(x)) is None: t = ktf(x)
            if t < below: below = t
          if below < _INF: found = min(found, max(ks[0], int(below)))
      self._direct_below = found
    return self._direct_below

  def _has_fixpoint_cycle(self) -> bool:
    return _fixpoint_cycle({u: vs for u, (_, vs) in self.hist.items()})

  def _node_bound(self) -> int:
    """At least the number of nodes one substitute of this step can touch, halved: the input's and the values'."""
    seen: set[UOp] = set()
    stack = [self.g0, *(u1 for _, u1 in self.pairs)]
    while stack:
      if (u := stack.pop()) in seen: continue
      seen.add(u)
      stack.extend(u.src)
    return len(seen)

  def _direct(self, k: int) -> UOp | None:
    """graph_k in one pass from graph_0 (k < direct_below), kept; None where that pass can't be sure (the chain
    decides then)."""
    if self.graphs[k] is not None: return self.graphs[k]
    try: g = self._unified(self.g0, k, self._replaces(k).get, direct=True)
    except Exception: return None  # _Fallback, or anything unexpected: the chain, which falls back to tinygrad
    self.graphs[k] = g
    return g

  def _replaces(self, k: int) -> dict[UOp, UOp]:
    """D_k: each key's last value by match k (VIZ's replaces after match k)."""
    return {u: vs[-1] if ks[-1] <= k else vs[bisect.bisect_right(ks, k) - 1] for u, (ks, vs) in self.hist.items() if ks[0] <= k}

  def _jump(self, k: int) -> None:
    """Continue the chain from graph k (computed exactly): replaces as after match k, and the node count for the
    REWRITE_STACK_LIMIT guard started afresh from that graph when needed."""
    self.cur_dict = dict(self.pairs[:k])
    self.cur_k = k
    self.cnt, self.size, self.counting = {}, 0, False

  def _at(self, k):
    # forward from the last computed graph. bottom_up=False: graph_j = S_{D_j}(graph_{j-1}). bottom_up=True:
    # graph_j = S_{D_j}(g0), independent of the others, but VIZ stops at the first REWRITE_ERROR, so the graphs
    # before k are computed too (in order, once) to know whether one failed.
    while self.cur_k < k:
      j = self.cur_k + 1
      u0, u1 = self.pairs[j - 1]
      self.cur_dict[u0] = u1
      g = self._sub(self.g0 if self.bottom_up else self.graphs[j - 1], j, self.cur_dict.get)
      self.graphs[j], self.cur_k = g, j
      if g.op is Ops.REWRITE_ERROR:
        self.error_at = j
        return g
      if self.counting and not self.bottom_up and g is not self.graphs[j - 1]:
        self._incr(g)
        self._decr(self.graphs[j - 1])
    return self.graphs[k]

  def _incr(self, n):
    cnt, stack = self.cnt, [n]
    while stack:
      x = stack.pop()
      c = cnt.get(x, 0)
      cnt[x] = c + 1
      if c == 0:
        self.size += 1
        stack.extend(x.src)

  def _decr(self, n):
    cnt, stack = self.cnt, [n]
    while stack:
      x = stack.pop()
      if (c := cnt[x] - 1): cnt[x] = c
      else:
        del cnt[x]
        self.size -= 1
        stack.extend(x.src)

  # *** one substitute ***

  def _sub(self, g: UOp, k: int, get) -> UOp:
    """g.substitute(D_k, walk, enter_calls), where get(u) is D_k.get(u) (before dropping identity entries)."""
    try:
      return (self._walk if self.walk else self._unified)(g, k, get)
    except _Fallback:
      pass
    except Exception:  # anything unexpected: let tinygrad decide
      pass
    try:
      return g.substitute(self._replaces(k), walk=self.walk, enter_calls=self.enter_calls)
    except RuntimeError as e:
      return UOp(Ops.REWRITE_ERROR, arg=f"{type(e).__name__}: {e}")

  def _opaque(self, m: UOp) -> bool:
    return not self.enter_calls and (m.op is Ops.FUNCTION or (m.op is Ops.CALL and m.src[0].op in UOp._OPAQUE_CALL_BODIES))

  def _kt(self, root: UOp) -> float:
    """keytime: the first k at which a key of replaces is reachable from root (opaque call bodies excluded)."""
    kt = self.keytime
    if (t := kt.get(root)) is not None: return t
    first, enter_calls = self.first, self.enter_calls
    stack, expanded = [root], set()  # a node is expanded (its sources pushed), then done once they are
    while stack:
      if (n := stack[-1]) in kt:
        stack.pop()
        continue
      srcs = n.src[1:] if (not enter_calls and (n.op is Ops.FUNCTION or (n.op is Ops.CALL and n.src[0].op in UOp._OPAQUE_CALL_BODIES))) \
        else n.src
      if n not in expanded:
        expanded.add(n)
        stack.extend(srcs)
      else:
        stack.pop()
        t = first.get(n, _INF)
        for s in srcs:
          if (ts := kt[s]) < t: t = ts
        kt[n] = t
    return kt[root]

  def _unified(self, root: UOp, k: int, get, direct: bool = False) -> UOp:
    # res holds R(n) for the dirty nodes visited (keytime <= k); a clean node is its own result and is not stored
    ktd, ktf, opaque_ok, first = self.keytime, self._kt, not self.enter_calls, self.first
    FUNCTION, CALL, BODIES = Ops.FUNCTION, Ops.CALL, UOp._OPAQUE_CALL_BODIES
    res: dict[UOp, UOp] = {}
    busy: set[UOp] = set()
    t = ktd.get(root)
    if (t if t is not None else ktf(root)) > k: return root
    stack: list[tuple[UOp, int, UOp | None]] = [(root, 0, None)]
    pop, push, rget = stack.pop, stack.append, res.get
    while stack:
      n, stage, m = pop()
      if stage == 0:
        if n in res: continue
        if n in busy: raise _Fallback("cyclic dependency")
        busy.add(n)
        m, seen = n, None
        while (v := get(m)) is not None and v is not m:
          if seen is None: seen = {n}
          if v in seen: raise _Fallback("fixpoint cycle")
          seen.add(v); m = v
        srcs = m.src
        if opaque_ok and (m.op is FUNCTION or (m.op is CALL and srcs[0].op in BODIES)):
          t = ktd.get(srcs[0])
          if (t if t is not None else ktf(srcs[0])) <= k: raise _Fallback("opaque call body holds a key")
          srcs = srcs[1:]
        push((n, 1, m))
        for s in reversed(srcs):
          if s in res: continue
          t = ktd.get(s)
          if (t if t is not None else ktf(s)) <= k: push((s, 0, None))
      elif stage == 1:
        srcs = m.src
        new = tuple(map(rget, srcs, srcs))
        if opaque_ok and (m.op is FUNCTION or (m.op is CALL and srcs[0].op in BODIES)): new = (srcs[0], *new[1:])
        if new == srcs:
          res[n] = m
          busy.discard(n)
        else:
          for a, b in zip(srcs, new, strict=True):
            if a.dtype is not b.dtype:
              dt = _rebuild_dtype(m, new)
              break
          else: dt = m.dtype
          nn = UOp(m.op, dt, new, m.arg, m.tag)
          push((n, 2, nn))
          if (t := ktd.get(nn)) is None:
            t = first.get(nn, _INF)  # keytime of nn: its srcs' are all known (results, or clean)
            for x in (new[1:] if opaque_ok and (nn.op is FUNCTION or (nn.op is CALL and new[0].op in BODIES)) else new):
              if (tx := ktd.get(x)) is None: tx = ktf(x)
              if tx < t: t = tx
            ktd[nn] = t
          if t <= k: push((nn, 0, None))
      else:
        res[n] = rget(m, m)
        busy.discard(n)
    # tinygrad's stack holds at most ~4 entries per node it touches: the input graph and what we touched here
    if 4 * (len(ktd) + len(res)) > REWRITE_STACK_LIMIT.value:
      if direct: raise _Fallback("graph too big to rule out REWRITE_STACK_LIMIT without the chain")
      if not self.counting:  # start counting the input graph's nodes exactly, then keep the count by churn
        self.counting = True
        self._incr(root)
      if 4 * (self.size + len(res)) > REWRITE_STACK_LIMIT.value: raise _Fallback("graph too big to rule out REWRITE_STACK_LIMIT")
    return res[root]

  def _walk(self, root: UOp, k: int, get) -> UOp:
    kt = self._kt
    res: dict[UOp, UOp] = {}
    stack: list[tuple[UOp, bool]] = [(root, False)]
    while stack:
      n, done = stack.pop()
      if n in res: continue
      if not done:
        if kt(n) > k:
          res[n] = n
          continue
        if (v := get(n)) is not None and v is not n:
          res[n] = v
          continue
        if self._opaque(n) and kt(n.src[0]) <= k: raise _Fallback("opaque call body holds a key")
        stack.append((n, True))
        stack.extend((s, False) for s in reversed(n.src[1:] if self._opaque(n) else n.src) if s not in res)
      else:
        srcs = n.src
        if self._opaque(n): new = (srcs[0], *(res[s] for s in srcs[1:]))
        else: new = tuple(res[s] for s in srcs)
        res[n] = UOp(n.op, _rebuild_dtype(n, new), new, n.arg, n.tag) if new != srcs else n
    return res[root]


# *** capture ***

def _all_subclasses(cls: type) -> list[type]:
  out = []
  for sub in cls.__subclasses__(): out += [sub, *_all_subclasses(sub)]
  return out


class _SourceOnlyCompilers:
  """For NULL:<renderer> captures: a renderer whose compiler library is missing here (nvrtc, comgr, ...) still renders
  its source; compiling becomes a no-op, since the NULL device never runs the binary."""

  def __enter__(self) -> None:
    import tinygrad.runtime.support.compiler_amd
    import tinygrad.runtime.support.compiler_cuda  # noqa: F401
    from tinygrad.device import Compiler
    self.saved = {c: c.__dict__["__init__"] for c in _all_subclasses(Compiler) if "__init__" in c.__dict__}
    for cls, init in self.saved.items(): cls.__init__ = self._tolerant(init, Compiler)

  @staticmethod
  def _tolerant(init, base):
    def __init__(self, *args, **kwargs):
      try: init(self, *args, **kwargs)
      except Exception as e:
        base.__init__(self, None)
        self.compile = lambda src: src.encode()
        self.tgviz_missing = f"{type(self).__name__} unavailable ({e}); source rendered, not compiled"
    return __init__

  def __exit__(self, *exc) -> None:
    for cls, init in self.saved.items(): cls.__init__ = init

class _LoggingRewriter:
  """Stands in for a C-style renderer's string_rewrite while it renders: logs each UOp with the text rendered for it."""

  def __init__(self, pm, log: list[tuple[UOp, str]], names: list[dict]):
    self.pm, self.log, self.names = pm, log, names

  def rewrite(self, u: UOp, ctx=None):
    if not self.names: self.names.append(ctx.r)  # the renderer's UOp -> name-or-expression table
    text = self.pm.rewrite(u, ctx=ctx)
    self.log.append((u, text))
    return text

  def __getattr__(self, name: str): return getattr(self.pm, name)


class _LineRecorder:
  """Records, while tinygrad's C-style renderers (CStyleLanguage: OpenCL, CPU/clang, CUDA, HIP, Metal, WGSL) render, which
  UOps each line of a kernel's source comes from: the UOp the renderer wrote the line for, plus the UOps inlined into it
  (CStyleLanguage._render writes one line per UOp it does not inline; it inlines one whose table entry is the very text
  rendered for it). Kernel parameters and the kernel's SINK belong to the signature line; a UOp written into no line
  (a GROUP, a NOOP) to the lines of its users. ``lines``: source -> per line, the trace numbers of its UOps."""

  def __init__(self) -> None:
    self.lines: dict[str, list[tuple[int, ...]]] = {}

  def __enter__(self) -> None:
    from tinygrad.renderer.cstyle import CStyleLanguage
    self.cls, self.saved = CStyleLanguage, (CStyleLanguage._render, CStyleLanguage.render)
    recorder, orig_render, orig_full = self, *self.saved
    def _render(ren, uops):
      log: list[tuple[UOp, str]] = []
      names: list[dict] = []
      own = ren.__dict__.get("string_rewrite")  # HIP sets its own per instance
      ren.string_rewrite = _LoggingRewriter(ren.string_rewrite, log, names)
      try: ret = orig_render(ren, uops)
      finally:
        if own is None: del ren.string_rewrite
        else: ren.string_rewrite = own
      ren._tgviz_rendered = (uops, log, names[0] if names else {}, ret[1])
      return ret
    def render(ren, uops):
      src = orig_full(ren, uops)
      if (seen := ren.__dict__.pop("_tgviz_rendered", None)) is not None:
        try: recorder.lines[src] = _map_lines(src, *seen)
        except Exception: pass  # a renderer this mapping does not understand: its kernel says its lines are unmapped
      return src
    CStyleLanguage._render, CStyleLanguage.render = _render, render

  def __exit__(self, *exc) -> None:
    self.cls._render, self.cls.render = self.saved


def _map_lines(src: str, uops: list[UOp], log: list[tuple[UOp, str]], names: dict, body: list[str]) -> list[tuple[int, ...]]:
  """Per line of src, the trace numbers of the UOps behind it (see _LineRecorder)."""
  n_lines = len(src.splitlines())
  start = src.find("\n".join(body)) if body else -1
  if body and start < 0: raise ValueError("the rendered body is not in the source")
  first = src.count("\n", 0, start)          # 0-based line of the body's first line
  written = [u for u, text in log if names.get(u) is not text]
  if len(written) != len(body): raise ValueError("the renderer wrote lines tgviz cannot tell apart")
  named = set(written) | {u for u in uops if u.op is Ops.PARAM}
  per_line: list[list[UOp]] = [[] for _ in range(n_lines)]
  def inlined(u: UOp) -> list[UOp]:
    out, stack, seen = [u], list(u.src), {u}
    while stack:
      if (s := stack.pop()) in seen or s in named: continue
      seen.add(s)
      out.append(s)
      stack.extend(s.src)
    return out
  line = first
  for u, entry in zip(written, body, strict=True):
    for i in range(entry.count("\n") + 1): per_line[line + i] += inlined(u)
    line += entry.count("\n") + 1
  # the signature: the first line naming the function (or the body's line before)
  sig = next((i for i, ln in enumerate(src.splitlines()) if "(" in ln and any(ln.find(names.get(p, "\0")) >= 0 for p in uops if p.op is Ops.PARAM)),
             max(first - 1, 0))
  per_line[sig] += [u for u in uops if u.op in (Ops.PARAM, Ops.SINK)]
  lines_of: dict[UOp, dict[int, None]] = {}  # UOp -> the lines it is behind, in order
  for i, ln in enumerate(per_line):
    for u in ln: lines_of.setdefault(u, {})[i] = None
  users: dict[UOp, list[UOp]] = {}
  for x in dict.fromkeys([*uops, *lines_of]):
    for s in x.src: users.setdefault(s, []).append(x)
  for u in reversed(uops):                    # users come after their sources: a UOp joins its users' lines
    if u in lines_of: continue
    if (joined := sorted({i for user in users.get(u, ()) for i in lines_of.get(user, ())})):
      for i in joined: per_line[i].append(u)
      lines_of[u] = dict.fromkeys(joined)
  return [tuple(dict.fromkeys(x.trace_num for x in ln)) for ln in per_line]


_SKIPPED_DIRS = tuple(os.path.dirname(os.path.abspath(m.__file__)) + os.sep for m in (ops, os))  # tinygrad's, the stdlib
_TGVIZ_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # tgviz, not only its bridge


def _user_frame(frame):
  """The innermost frame of the user's own code (not tinygrad's, tgviz's or the standard library's) from frame out."""
  tinygrad_dir = os.path.dirname(_SKIPPED_DIRS[0].rstrip(os.sep)) + os.sep
  while frame is not None:
    fn = frame.f_code.co_filename
    if not (fn.startswith((tinygrad_dir, _TGVIZ_DIR, _SKIPPED_DIRS[1])) or fn in ("<string>",) or fn.startswith("<frozen")): return frame
    frame = frame.f_back
  return None


class _OriginRecorder:
  """Which Tensor operations each kernel computes, and the user's line that called each one.

  tinygrad tags the UOps a Tensor method makes with op metadata (its Metadata: name, backward), but its scheduler's
  rewrites make new UOps without it. While a capture runs, this carries each UOp's metadata over to what the rewrite
  turned it into (RewriteContext.replace: every visited UOp -> its result) and to the few new UOps just below that
  result, through the schedule's rewrites to the kernel ASTs; a kernel's origins are the metadata found in the AST its
  codegen starts from. The Metadata tinygrad makes meanwhile are mapped to the user's line that made them (for a
  backward op, the line that asked for the gradient). Held weakly: no UOp is kept alive."""

  BELOW = 3                                  # levels of new UOps under a rewrite's result that inherit its metadata

  def __init__(self) -> None:
    self.made: dict[int, tuple[Any, str | None, int | None]] = {}  # id(Metadata) -> (it, kept so ids stay unique; file, line)
    self.carried: weakref.WeakKeyDictionary[UOp, tuple] = weakref.WeakKeyDictionary()
    self.groups: dict[int, tuple[Origin, ...]] = {}  # kernel group index -> origins
    self.kinds: dict[int, bool] = {}                 # group index -> whether it is a kernel's codegen

  def __enter__(self) -> None:
    from tinygrad.helpers import Metadata
    self.cls, self.saved, made = Metadata, Metadata.__init__, self.made
    self.marker = tensor._METADATA.get()  # the Tensor method running (none, outside one)
    init = self.saved
    def __init__(m, *args, **kwargs):
      init(m, *args, **kwargs)
      f = _user_frame(sys._getframe(1))
      made[id(m)] = (m, *((f.f_code.co_filename, f.f_lineno) if f is not None else (None, None)))
    Metadata.__init__ = __init__

  def __exit__(self, *exc) -> None:
    self.cls.__init__ = self.saved
    # a Tensor method that raised leaves tinygrad's marker of the running method set (its wrapper puts the old one back
    # only when it returns), and every op after it would be taken for part of that method: put it back
    if tensor._METADATA.get() is not self.marker: tensor._METADATA.set(self.marker)

  def _meta(self, u: UOp) -> tuple:
    # a source-less UOp (CONST, BUFFER, RANGE, ...) is shared by every graph that uses it: its metadata says nothing
    if not u.src: return ()
    ref = weakref.ref(u)  # one reference for both weak dicts' lookups (a UOp's plain weak reference is made once)
    return self.carried.data.get(ref) or ops.all_metadata.data.get(ref) or ()

  def seen(self, root: UOp) -> bool:
    """Note the graph a group starts from (a kernel's AST: its origins). Whether the group is a kernel's codegen."""
    g = ops.active_group[-1] if ops.active_group else len(ops.tracked_ctxs) - 1
    if (kernel := self.kinds.get(g)) is not None: return kernel
    kernel = self.kinds[g] = root.op is Ops.SINK and isinstance(root.arg, ops.KernelInfo)
    if kernel:
      found = {id(m): m for u in root.toposort() for m in self._meta(u)}
      self.groups[g] = tuple(dict.fromkeys(self._origin(m) for m in found.values()))
    return kernel

  def _origin(self, m: Any) -> Origin:
    """A Metadata's origin: the user's line that made it (its text read only now, for the few a kernel shows)."""
    file, line = self.made[id(m)][1:] if id(m) in self.made else (None, None)
    return Origin(m.name, m.backward, file, line, linecache.getline(file, line).strip() if file is not None and line else "")

  def rewritten(self, rctx: RewriteContext, root: UOp) -> None:
    """Carry metadata over a graph rewrite outside kernels' codegen (which starts from a finished AST)."""
    if self.seen(root) or not (replace := rctx.replace): return
    meta_of, carried, results = self._meta, self.carried, None
    for n, r in replace.items():
      if r is n or not (meta := meta_of(n)): continue
      if results is None: results = set(replace.values())
      stack = [(r, 0)]
      while stack:
        x, level = stack.pop()
        if x.src and (have := meta_of(x)) is not meta:
          held = {id(h) for h in have}  # by identity: equal Metadata of two calls are two origins
          if (missing := tuple(m for m in meta if id(m) not in held)): carried[x] = have + missing
        if level < self.BELOW: stack.extend((s, level + 1) for s in x.src if s not in replace and s not in results)


@functools.cache
def _waiting(exec_context: type) -> type:
  """run_linear's context with every launch waiting and returning its time (made once: a dataclass costs 0.5 ms)."""
  @dataclass
  class Waiting(exec_context):  # type: ignore[valid-type,misc]
    def __post_init__(self): self.wait = True
  return Waiting


class KernelTimer:
  """Records the device run time of every kernel launch in a block, as tinygrad measures it for DEBUG=2: a launch that
  waits for completion returns its time from the device's own profiling (OpenCL's profiling event start and end, HCQ
  timestamps). Inside the block every launch waits; that changes when a kernel finishes, never what it computes.
  ``runs``: the key of the kernel's SOURCE UOp -> seconds of each launch."""

  def __enter__(self) -> None:
    from tinygrad.engine import realize
    self.runs: dict[bytes, list[float]] = {}
    self._realize, self._saved = realize, (realize.ExecContext, realize.track_stats)
    exec_context, track_stats = self._saved
    runs = self.runs

    Waiting = _waiting(exec_context)

    def timed(ctx, call, st, ets):
      src = next((s for s in call.src[0].src if s.op is Ops.SOURCE), None) if call.src[0].op is Ops.PROGRAM else None
      # a NULL device runs nothing and reports a made-up time (1 ms): no time is better than a wrong one
      if src is not None and not any(str(dev).split(":")[0] == "NULL" for dev, _ in realize.get_call_kernels(call)) \
         and (times := [t for t in ets if t is not None]):
        runs.setdefault(src.key, []).extend(times)
      return track_stats(ctx, call, st, ets)

    realize.ExecContext, realize.track_stats = Waiting, timed

  def __exit__(self, *exc) -> None:
    self._realize.ExecContext, self._realize.track_stats = self._saved


def settings(env: dict[str, Any]) -> dict[str, Any]:
  """tinygrad Context settings (e.g. {"WINO": "1"}) checked against tinygrad's own variables and converted to their types;
  ValueError says which name or value is wrong and what to do."""
  from tinygrad.helpers import ContextVar
  out = {}
  for name, value in env.items():
    var = ContextVar._cache.get(name)
    if var is None:
      close = difflib.get_close_matches(name, ContextVar._cache, n=3)
      raise ValueError(f"tinygrad has no setting {name!r}" + (f" (did you mean {', '.join(close)}?)" if close else "") +
                       "; use a tinygrad Context variable such as WINO, IMAGE, BEAM, DEBUG")
    if isinstance(var.value, int) and not isinstance(value, int):
      try: value = int(value)
      except (TypeError, ValueError): raise ValueError(f"tinygrad's {name} takes an integer, not {value!r} (e.g. {name}=1)") from None
    out[name] = value
  return out


def parse_settings(items: list[str]) -> dict[str, Any]:
  """["WINO=1", "IMAGE=2"] as checked settings (see settings); ValueError for an item that is not NAME=VALUE."""
  env = {}
  for item in items:
    name, eq, value = item.partition("=")
    if not eq or not name.strip(): raise ValueError(f"{item!r} is not a setting: write NAME=VALUE, e.g. WINO=1")
    env[name.strip()] = value.strip()
  return settings(env)


def context(env: dict[str, Any]) -> Context:
  """A tinygrad Context that applies checked settings (see settings) for a block."""
  return Context(**settings(env))


_REWRITING = {"graph_rewrite", "substitute", "simplify"}


@functools.lru_cache(maxsize=1)
def _rewriting_caches(_modules: int) -> list[functools._lru_cache_wrapper]:
  """The functools caches of tinygrad helpers that run graph rewrites; found again when more modules are loaded."""
  found = []
  for name, mod in list(sys.modules.items()):
    if not name.startswith("tinygrad.") or mod is None: continue
    for obj in list(vars(mod).values()):
      if not isinstance(obj, functools._lru_cache_wrapper) or obj.__module__ != name: continue
      code = getattr(obj.__wrapped__, "__code__", None)
      if code is not None and _REWRITING & set(code.co_names): found.append(obj)
  return found


def _clear_caches() -> None:
  """Drop tinygrad's schedule and program caches, and the functools caches of helpers that run graph rewrites (e.g.
  apply_movement_op), so a block traces the same way every time. Caches of compiled patterns are kept: clearing them
  would rebuild pattern matchers, which tinygrad's PatternMatcher.__add__ cache then keeps forever."""
  for cache in _rewriting_caches(len(sys.modules)): cache.cache_clear()
  from tinygrad.codegen import to_program_cache
  from tinygrad.schedule import schedule_cache
  schedule_cache.clear()
  to_program_cache.clear()


def _drop_trace_nums() -> None:
  """Live UOps cache their trace number; once the table they index is handed over, the numbers must go."""
  for ref in list(UOpMetaClass.ucache.values()):
    if (u := ref()) is not None: u.__dict__.pop(_TRACE_NUM, None)


def _kind(key: TracingKey) -> str:
  if isinstance(key.ret, Renderer): return "kernel"
  if key.display_name.startswith(("Schedule", "Callify")): return "schedule"
  return "other"


_PLAIN_MATCHER = TrackedPatternMatcher.__bases__[0]  # tinygrad's PatternMatcher (ops.PatternMatcher is the tracked one under VIZ)


def _recording_rewrite(self, uop: UOp, ctx=None):
  """PatternMatcher.rewrite while a capture runs: tinygrad's TrackedPatternMatcher.rewrite, which records each match in
  the running graph_rewrite with its time (a pattern that raises as a REWRITE_ERROR), without its per-pattern counters
  and timers (ops.match_stats, read only by tinygrad's exit report, which tgviz never lets run) and with the plain
  matcher's cached set of source ops: the same matches, for less than tinygrad's own tracking costs."""
  if (ler := uop.__dict__.get("_src_ops")) is None: uop.__dict__["_src_ops"] = ler = {u.op for u in uop.src}
  for p, match, early_reject in self.pdict.get(uop.op, ()):
    if not early_reject.issubset(ler): continue
    st = time.perf_counter()
    try: ret = match(uop, ctx)
    except Exception as e:
      if ops.TRACK_MATCH_STATS.value >= 2 and ops.active_rewrites:
        err = UOp(Ops.REWRITE_ERROR, src=uop.src, arg=f"{type(e).__name__}\n{e}")
        ops.active_rewrites[-1].matches.append((uop.trace_num, err.trace_num, p.location, 0))
      raise
    if ret is not None and ret is not uop:
      et = time.perf_counter() - st
      if ops.TRACK_MATCH_STATS.value >= 2 and isinstance(ret, UOp) and ops.active_rewrites:
        ops.active_rewrites[-1].matches.append((uop.trace_num, ret.trace_num, p.location, et))
      return ret
  return None


_GLOBALS = ("tracked_keys", "tracked_ctxs", "uop_fields", "_name_cnt", "active_group", "active_rewrites")


class Tracker:
  """Switches tinygrad's rewrite tracking on for a block and hands back what it recorded.

  Use as a context manager; ``recording`` is set on exit, also when the block raised."""

  def __init__(self, device: str | None = None):
    self.device = device
    self.recording: Recording | None = None

  def __enter__(self) -> Tracker:
    if ops.active_rewrites or ops.active_group:
      raise RuntimeError("tgviz: a capture cannot start inside a running tinygrad rewrite or another capture")
    _clear_caches()
    self._saved = {g: getattr(ops, g) for g in _GLOBALS}
    # Under tinygrad's own tracking (VIZ / TRACK_MATCH_STATS set at import) its UOp table stays in use, so the trace
    # numbers live UOps cache stay valid: the capture shares that table. Otherwise the capture gets a table of its own.
    self._shared = bool(ops.uop_fields)
    ops.tracked_keys, ops.tracked_ctxs, ops._name_cnt = [], [], {}
    if not self._shared: ops.uop_fields = {}
    ops.active_group, ops.active_rewrites = [], []
    # id(step) -> what the rewrite returned, weakly: a UOp kept here would keep its graph and Buffers alive while the
    # capture runs; those still alive at the end are numbered then (numbering every one would cost capture time)
    self._io: dict[int, weakref.ref[UOp]] = {}
    self._lines, self._origins = _LineRecorder(), _OriginRecorder()
    self._saved_methods = (_PLAIN_MATCHER.rewrite, TrackedPatternMatcher.rewrite, RewriteContext.unified_rewrite, RewriteContext.walk_rewrite)
    _PLAIN_MATCHER.rewrite = TrackedPatternMatcher.rewrite = _recording_rewrite
    RewriteContext.unified_rewrite = self._recording(RewriteContext.unified_rewrite)
    RewriteContext.walk_rewrite = self._recording(RewriteContext.walk_rewrite)
    ctx: dict[str, Any] = {"TRACK_MATCH_STATS": 2, "VIZ": -1, "PARALLEL": 0}
    if self.device is not None: ctx["DEV"] = self.device
    self._context = Context(**ctx)
    self._context.__enter__()
    # under VIZ every TracingKey takes the stack with its source text, also the many only tinygrad's profiler would
    # show; without the profiler only the groups' stacks are kept, and their text is read at the end (see _stack)
    self._stacktrace = helpers.get_stacktrace
    if not helpers.PROFILE: helpers.get_stacktrace = _frames
    self._lines.__enter__()
    self._origins.__enter__()
    self._compilers = _SourceOnlyCompilers() if default_device().upper().startswith("NULL") else None
    if self._compilers is not None: self._compilers.__enter__()
    self._timer = KernelTimer()
    self._timer.__enter__()
    # our own group first, so rewrites outside any tinygrad group land in this capture and nowhere else
    ops.add_trace_group(TracingKey("capture", tb=None))
    return self

  def _recording(self, method):
    io, origins = self._io, self._origins
    def wrapped(rctx, root, *args, **kwargs):
      tracked = ops.TRACK_MATCH_STATS.value >= 2 and ops.active_rewrites
      step = ops.active_rewrites[-1] if tracked else None
      # a rewrite without patterns (tinygrad's "View ..." snapshots) returns its input: skip walking the graph
      empty = (rctx.pm is None or not rctx.pm.patterns) and (rctx.bpm is None or not rctx.bpm.patterns)
      ret = root if empty else method(rctx, root, *args, **kwargs)
      # (id(step) is stable: ops.tracked_ctxs holds every step until the capture ends)
      if step is not None and id(step) not in io: io[id(step)] = weakref.ref(ret)
      if tracked and not empty: origins.rewritten(rctx, root)
      elif tracked: origins.seen(root)
      return ret
    wrapped.__wrapped__ = method
    return wrapped

  def __exit__(self, *exc) -> None:
    try:
      self._timer.__exit__(*exc)
      if self._compilers is not None: self._compilers.__exit__(*exc)
      self._lines.__exit__(*exc)
      self._origins.__exit__(*exc)
      self._context.__exit__(*exc)
      helpers.get_stacktrace = self._stacktrace
      _PLAIN_MATCHER.rewrite, TrackedPatternMatcher.rewrite, RewriteContext.unified_rewrite, RewriteContext.walk_rewrite = self._saved_methods
      keys, ctxs, fields = ops.tracked_keys, ops.tracked_ctxs, ops.uop_fields
      out = {sid: u.trace_num for sid, ref in self._io.items() if (u := ref()) is not None}  # numbered in this table
      for g, v in self._saved.items(): setattr(ops, g, v)
      self.recording = Recording(_groups(keys, ctxs, out, self._origins.groups), fields, self._lines.lines, self._timer.runs)
    finally:
      self._io = {}
      if not self._shared: _drop_trace_nums()


# where tinygrad makes a TracingKey only its profiler shows: every Tensor method a user calls, each realize's map, the
# scheduler's two phases
_PROFILE_ONLY = frozenset({tensor._metadata_wrapper(lambda: None).__code__, tensor._apply_map_to_tensors.__code__,
                           schedule.create_schedule.__code__})


def _frames(frm, max_frames: int = 30) -> tuple[tuple[str, int, str], ...] | None:
  """tinygrad's get_stacktrace without the source text of each frame; none for a key only tinygrad's profiler shows."""
  if (caller := frm.f_back) is not None and caller.f_code in _PROFILE_ONLY: return None
  out = []
  for _ in range(max_frames):
    if (frm := frm.f_back) is None: break
    out.append(((code := frm.f_code).co_filename, frm.f_lineno, code.co_name))
  return tuple(out)


def _stack(tb: tuple[tuple, ...] | None) -> tuple[tuple[str, int, str, str], ...]:
  """A TracingKey's stack as tinygrad's get_stacktrace makes it: (file, line, function, source text) per frame."""
  return tuple(f if len(f) == 4 else (*f, printable(f[:2])) for f in tb or ())


def _groups(keys: list[TracingKey], ctxs: list[list], out: dict[int, int], origins: dict[int, tuple[Origin, ...]] | None = None) \
    -> list[GroupRecord]:
  """Records of tinygrad's tracked groups and their steps (out: id(step) -> trace number of what it returned; origins:
  tracked group index -> its kernel's origins). tgviz's own "capture" group is skipped when nothing landed in it."""
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
                              origins=(origins or {}).get(i, ()), c_style=isinstance(ren, CStyleLanguage)))
  return groups


# *** reading UOps, for the rest of tgviz ***

def pattern_source(loc: tuple[str, int]) -> str:
  """The source line of the pattern defined at loc."""
  return printable(loc)


def error_text(u: UOp) -> str:
  return str(u.arg)


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
  source_key: bytes = b""


def _program_of(u: UOp) -> Program | None:
  if u.op is not Ops.PROGRAM: return None
  src = next((s for s in u.src if s.op is Ops.SOURCE), None)
  if src is None: return None
  info, est = u.arg, getattr(u.src[0].arg, "estimates", None)  # the kernel's SINK carries tinygrad's Estimates
  def plain(x: Any) -> int | None: return x if isinstance(x, int) else None
  return Program(info.function_name, src.arg, tuple(info.global_size),
                 tuple(info.local_size) if info.local_size is not None else None,
                 flops=plain(est.ops) if est is not None else None, bytes=plain(est.mem) if est is not None else None,
                 source_key=src.key)


_FAMILY = {Ops.LOAD: "load", Ops.INDEX: "load", Ops.STAGE: "load", Ops.STORE: "store", Ops.REDUCE: "reduce",
           Ops.ALLREDUCE: "reduce", Ops.RANGE: "range", Ops.END: "range", Ops.SPECIAL: "range", Ops.IF: "range",
           Ops.ENDIF: "range", Ops.BUFFER: "buffer", Ops.PARAM: "buffer", Ops.GETADDR: "buffer", Ops.CALL: "kernel",
           Ops.FUNCTION: "kernel", Ops.PROGRAM: "kernel", Ops.LINEAR: "kernel", Ops.SOURCE: "kernel", Ops.BINARY: "kernel",
           Ops.CUSTOM_FUNCTION: "kernel", Ops.CONST: "const", Ops.REWRITE_ERROR: "error",
           **dict.fromkeys(GroupOp.Movement, "movement"), **dict.fromkeys(GroupOp.ALU, "alu")}
_LINE, _ARG_LINES = 60, 4


_ANSI_REPR = re.compile(r"\\x1b\[[0-9;]*m")  # colour codes inside a repr'd string, e.g. a KernelInfo name


def _clip(text: str, lines: int) -> list[str]:
  all_lines = _ANSI_REPR.sub("", ansistrip(text)).splitlines()
  out = [_cut(ln) for ln in all_lines[:lines]]
  return out + (["…"] if len(all_lines) > lines else [])


def _arg_text(u: UOp) -> str | None:
  if u.arg is None: return None
  if u.op is Ops.CONST: return f"{u.arg:g}" if isinstance(u.arg, float) else str(u.arg)
  if u.op in GroupOp.Movement:
    try: return str(u.marg)
    except Exception: pass
  if u.op is Ops.BINARY: return f"<{len(u.arg)} bytes>"
  return str(u.arg)


def _foldable(u: UOp) -> bool:
  """Constants (and broadcasts of them) are folded into their users' labels, as tinygrad's VIZ does (unless one is the
  root of the graph drawn)."""
  if u.op is Ops.CONST: return True
  if u.op is Ops.STACK and all(s.op is Ops.CONST for s in u.src): return True
  return u.op in (Ops.RESHAPE, Ops.EXPAND) and len(u.src) >= 1 and _foldable(u.src[0])


def _base_label(u: UOp) -> list[str]:
  """The label lines that are the UOp's own: op, arg, dtype (a rebuild with new sources keeps them)."""
  label = [u.op.name]
  if (arg := _arg_text(u)) is not None: label += _clip(arg, 8 if u.op is Ops.SOURCE else _ARG_LINES)
  if u.dtype != dtypes.void: label.append(str(u.dtype).removeprefix("dtypes."))
  return label


def _fold_text(s: UOp) -> tuple[str, str]:
  """What a folded constant says in its user's label: the op of the constant (or vector of constants) under it, and
  the first line of its value."""
  c = s
  while c.op is not Ops.CONST and c.op is not Ops.STACK and c.src: c = c.src[0]
  text = _ANSI_REPR.sub("", ansistrip(_arg_text(c) if c.op is Ops.CONST else c.render()))
  return c.op.name, (text.splitlines() or [""])[0]


def _cut(line: str) -> str:
  return line if len(line) <= _LINE else line[:_LINE - 1] + "…"


def note_line(note: str) -> str:
  """A CALL node's note (see Recording.call_notes) as its label line."""
  return _clip(note, 1)[0]


def _node(u: UOp, notes: dict[str, str] | None = None) -> Node:
  """How a UOp is drawn: its op, arg and dtype, and one line per constant source folded into it ("CONST1 2.0": source
  1); a kernel's CALL also says the kernel's Tensor operations (notes: see Recording.call_notes). js/replay.js labels
  the nodes a report's page rebuilds the same way."""
  label = _base_label(u)
  for i, s in enumerate(u.src):
    if _foldable(s):
      head, first = _fold_text(s)
      label.append(_cut(f"{head}{i} {first}"))
  if notes and u.op is Ops.CALL and u.src and (note := notes.get(node_key(u.src[0]))): label.append(note_line(note))
  return Node(node_key(u), u.op.name, _FAMILY.get(u.op, "other"), tuple(label))


def to_graph(root: UOp, notes: dict[str, str] | None = None) -> Graph:
  """The drawable graph of a UOp: readable labels, op families, constants folded into their users (notes: see _node)."""
  nodes: dict[str, Node] = {}
  edges: list[tuple[str, str]] = []
  drawn: dict[UOp, str | None] = {}  # each UOp's key, None for a folded constant (sources come first)
  for u in root.toposort():
    folded = u is not root and _foldable(u)
    drawn[u] = None if folded else node_key(u)
    if folded: continue
    n = nodes[drawn[u]] = _node(u, notes)
    edges.extend((k, n.key) for s in u.src if (k := drawn[s]) is not None)
  return Graph(nodes, tuple(dict.fromkeys(edges)), node_key(root))


class NodeCache:
  """What the node tables of one report share: each UOp's row, label and content, computed once."""

  def __init__(self, notes: dict[str, str] | None = None) -> None:
    self.notes = notes
    self.drawn: dict[UOp, tuple] = {}       # UOp -> (key, family, label, fold, content, UOp.key)
    # label by what it is made of: a replay rebuilds a node many times over with new sources and the same label
    self.labels: dict[tuple, tuple[str, list[str]]] = {}
    self.contents: dict[tuple, list] = {}   # (op, dtype, arg, tag) -> [what its key hashes before its sources, base label]
    self.texts: dict[tuple, bytes] = {}     # the same text, encoded

  def clear(self) -> None:
    """Forget the UOps (bounded memory: later steps share few nodes with much older ones)."""
    self.drawn.clear()


class NodeTable:
  """Many graphs as one table of plain rows, shared nodes once (the HTML report's data; js/picture.js draws it and
  js/replay.js rebuilds nodes in it). A row: [key, family, label lines (the first is the op), source row ids (all of
  them, in order), fold, content id]; fold: what a folded constant says in its user's label ([op, first
  line of its value], see _fold_text), 0 for other nodes; content: index into `contents`, whose entries are [the text
  UOp.key hashes before its sources' keys, the label lines that are the UOp's own (see _base_label)]."""

  def __init__(self, cache: NodeCache) -> None:
    self.rows: list[list] = []
    self.contents: list[list] = []
    self._ids: dict[UOp, int] = {}
    self._content_ids: dict[tuple, int] = {}
    self._cache = cache

  def reach(self, roots: list[int]) -> int:
    """How many rows the graphs of these rows hold together."""
    seen, stack, rows = set(), list(roots), self.rows
    while stack:
      if (n := stack.pop()) in seen: continue
      seen.add(n)
      stack.extend(rows[n][3])
    return len(seen)

  def add(self, root: UOp) -> int:
    """The row id of root, adding it and whatever below it is new."""
    ids = self._ids
    if (i := ids.get(root)) is not None: return i
    cache, rows, content_ids = self._cache, self.rows, self._content_ids
    drawn = cache.drawn
    stack = [(root, False)]
    while stack:
      u, ready = stack.pop()
      if u in ids: continue
      if not ready:
        stack.append((u, True))
        stack.extend([(s, False) for s in u.src if s not in ids])
        continue
      if (d := drawn.get(u)) is None:
        below = [drawn[s] for s in u.src]  # the sources are in already
        arg = repr(u.arg) if isinstance(u.arg, float) else u.arg  # 0.0 == -0.0, drawn apart
        folded = tuple((i, s) for i, (s, e) in enumerate(zip(u.src, below, strict=True)) if e[3])  # constants its label folds in
        made_of = (u.op, u.dtype, type(arg), arg, folded, u.src[0] if u.op is Ops.CALL and u.src else None)
        if (lab := cache.labels.get(made_of)) is None:
          n = _node(u, cache.notes)
          lab = cache.labels[made_of] = (n.family, list(n.label))
        content = (u.op, u.dtype, type(arg), arg, u.tag)
        if content not in cache.contents:
          text = str((u.op, u.dtype, u.arg))
          cache.contents[content], cache.texts[content] = [text, _base_label(u)], text.encode()
        # UOp.key from its sources' keys, already here (tinygrad's property walks the whole graph below each new node)
        key = hashlib.sha256(cache.texts[content] + b"".join([e[5] for e in below])).digest()
        d = drawn[u] = (key.hex()[:12], lab[0], lab[1], list(_fold_text(u)) if _foldable(u) else 0, content, key)
      if (c := content_ids.get(d[4])) is None:
        c = content_ids[d[4]] = len(self.contents)
        self.contents.append(cache.contents[d[4]])
      ids[u] = len(rows)
      rows.append([d[0], d[1], d[2], [ids[s] for s in u.src], d[3], c])
    return ids[root]


def op_name(u: UOp) -> str:
  return u.op.name


def node_details(u: UOp) -> dict[str, str]:
  """What the node panel shows of a UOp: op, dtype, the full arg and tag, and the node as tinygrad's Python (pyrender,
  as tinygrad's VIZ shows a graph; str() where pyrender refuses)."""
  try: py = u.pyrender()
  except Exception: py = str(u)
  return {"op": u.op.name, "dtype": str(u.dtype).removeprefix("dtypes."), "arg": ansistrip(repr(u.arg))[:4000],
          "tag": repr(u.tag), "python": ansistrip(py)[:20000]}


def toposort(u: UOp) -> list[UOp]:
  return list(u.toposort())


def structural_key(u: UOp) -> str:
  """The identity of a whole graph: equal for graphs of the same ops, args and structure, in any run or process."""
  return u.key.hex()


def node_key(u: UOp) -> str:
  """A stable identity for a UOp: the same on every run for the same graph."""
  return u.key.hex()[:12]  # 48 bits: no two nodes of one graph share it in practice; short keys keep reports small


def reaches(root: UOp, target: UOp, known: set[UOp]) -> bool:
  """Whether target is in root's graph, looking only below nodes not in known (a graph that does not hold target: what
  is in it cannot lead there)."""
  stack, seen = [root], set()
  while stack:
    if (u := stack.pop()) is target: return True
    if u in seen or u in known: continue
    seen.add(u)
    stack.extend(u.src)
  return False


def sources(u: UOp) -> tuple[UOp, ...]:
  return u.src


# *** saving and opening traces ***

TRACE_FORMAT, TRACE_VERSION = "tgviz-trace", 2
_READS_VERSIONS = (1, 2)                    # version 1 had no source lines
_GZIP_MAGIC = b"\x1f\x8b"


class TraceFileError(ValueError):
  """A file tgviz cannot open as a trace: not a trace, or one saved for another file format or tinygrad version."""


def save_recording(path: str | os.PathLike, rec: Recording, meta: dict[str, Any]) -> None:
  """Write rec to path: gzip of a pickled header (format, version, tinygrad version and meta), then the records and the
  UOp table (plain fields, as tinygrad's VIZ pickles them) and the rendered lines' UOps; the kernels' run times in the header."""
  header = {"format": TRACE_FORMAT, "version": TRACE_VERSION, "tinygrad": SUPPORTED_TINYGRAD, "runs": rec.runs, **meta}
  try: body = pickle.dumps((rec.groups, rec.uop_fields, rec.lines), protocol=pickle.HIGHEST_PROTOCOL)
  except Exception as e: raise TraceFileError(f"this trace cannot be saved: {type(e).__name__}: {e}") from e
  with gzip.open(path, "wb", compresslevel=6) as f:
    pickle.dump(header, f, protocol=pickle.HIGHEST_PROTOCOL)
    f.write(body)


def load_recording(path: str | os.PathLike) -> tuple[Recording, dict[str, Any]]:
  """Read a trace file: one saved by tgviz (see save_recording), or tinygrad's own tracking dump, the rewrites.pkl that
  ``VIZ=-1`` (or TRACK_MATCH_STATS=2) writes at exit. Returns the recording and the header's meta (device, error,
  traceback). Unpickling runs code: open only files you trust. Raises TraceFileError for anything else, OSError when the
  file cannot be read."""
  with open(path, "rb") as f: magic = f.read(2)
  if magic == _GZIP_MAGIC: return _load_saved(path)
  try:
    with open(path, "rb") as f, Context(DEBUG=0): obj = pickle.load(f)  # unpickling may load libraries (as VIZ's loader)
  except Exception as e:
    raise TraceFileError(f"{path} is neither a tgviz trace nor tinygrad's rewrites.pkl "
                         f"(or one written by a tinygrad other than {SUPPORTED_TINYGRAD}): {type(e).__name__}: {e}") from e
  if not isinstance(obj, ops.RewriteTrace):
    raise TraceFileError(f"{path} holds a pickled {type(obj).__name__}, not a tgviz trace or tinygrad's rewrites.pkl")
  try: groups = _groups(obj.keys, obj.rewrites, {})
  except Exception as e:
    raise TraceFileError(f"{path} is a tinygrad rewrites.pkl tgviz cannot read (tgviz reads those of tinygrad {SUPPORTED_TINYGRAD}): "
                         f"{type(e).__name__}: {e}") from e
  device = ", ".join(dict.fromkeys(g.device for g in groups if g.device)) or "unknown device"
  return Recording(_relocated(groups), obj.uop_fields), {"device": f"{device} (tinygrad's rewrites.pkl)"}


def _load_saved(path: str | os.PathLike) -> tuple[Recording, dict[str, Any]]:
  try:
    with gzip.open(path, "rb") as f:
      try: header = pickle.load(f)
      except Exception: header = None
      if not isinstance(header, dict) or header.get("format") != TRACE_FORMAT:
        raise TraceFileError(f"{path} is a gzip file but not a tgviz trace")
      if (v := header.get("version")) not in _READS_VERSIONS:
        raise TraceFileError(f"{path} is a tgviz trace in file format version {v}; this tgviz reads version {TRACE_VERSION}: "
                             f"open it with the tgviz that saved it")
      if (tv := header.get("tinygrad")) != SUPPORTED_TINYGRAD:
        raise TraceFileError(f"{path} was saved with tinygrad {tv}; this tgviz reads traces of tinygrad {SUPPORTED_TINYGRAD} "
                             f"(its graphs are tinygrad UOps): open it where tinygrad=={tv} and a tgviz for it are installed")
      with Context(DEBUG=0): body = pickle.load(f)
      if not isinstance(body, tuple) or len(body) != (2 if v == 1 else 3): raise ValueError("unexpected contents")
      groups, fields, *lines = body
  except TraceFileError: raise
  except Exception as e: raise TraceFileError(f"{path} is not a readable tgviz trace: {type(e).__name__}: {e}") from e
  meta = {k: v for k, v in header.items() if k not in ("format", "version", "tinygrad", "runs")}
  return Recording(_relocated(groups), fields, lines[0] if lines else None, header.get("runs")), meta


def _relocated(groups: list[GroupRecord]) -> list[GroupRecord]:
  """Point source locations inside a tinygrad that is not here (a trace from another machine) at this tinygrad's files,
  the same version's, so patterns and call sites still show their source lines."""
  root = os.path.dirname(os.path.dirname(os.path.abspath(ops.__file__)))  # this tinygrad package
  @functools.cache
  def here(fn: str) -> str:
    if os.path.exists(fn) or (i := fn.replace("\\", "/").rfind("/tinygrad/")) < 0: return fn
    return cand if os.path.exists(cand := os.path.join(root, fn.replace("\\", "/")[i + len("/tinygrad/"):])) else fn
  def loc(lc: tuple[str, int]) -> tuple[str, int]:
    return lc if (fn := here(lc[0])) == lc[0] else (fn, lc[1])
  for g in groups:
    for s in g.steps:
      s.loc = loc(s.loc)
      if any(here(m[2][0]) != m[2][0] for m in s.matches): s.matches = [(u0, u1, loc(lc), t) for u0, u1, lc, t in s.matches]
  return groups
