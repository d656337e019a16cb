"""Replaying one step exactly as tinygrad's VIZ does, with random access to any match.

Owns: the Replayer (the graph after match k from a step's input graph and its matches' (node, replacement) pairs), the
fixpoint-cycle test, and how far the report's page (js/port/replay.js, this module's port) may replay a step itself
(page_replays) and which ops make a call opaque to a rewrite (opaque_call_bodies). It knows no Recording,
trace file or capture: it is given UOps and gives UOps, and where its fast path cannot be exact it asks tinygrad's own
substitute.
"""
from __future__ import annotations

import bisect
import functools
import gc
from collections.abc import Callable, Iterator
from typing import Any, cast

from tinygrad.uop.ops import REWRITE_STACK_LIMIT, Ops, UOp, _rebuild_dtype

from tgviz.bridge.rebuilt_dtypes import page_derives
from tgviz.bridge.uops import NodeTable

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


class _Fallback(Exception):
  pass


def _constants(srcs: tuple[UOp, ...]) -> bool:
  """Whether a STACK over these sources is a vector of constants, whose text a node over it shows (tinygrad renders
  it: the page, which labels the nodes it rebuilds itself, cannot)."""
  return all(s.op is Ops.CONST for s in srcs)


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

  def __init__(self, g0: UOp, pairs: list[tuple[UOp, UOp]], bottom_up: bool, walk: bool, enter_calls: bool):
    """g0: the step's input graph; pairs: each match's (node, replacement); the flags: the step's graph_rewrite's."""
    self.n = len(pairs)
    self.walk, self.enter_calls, self.bottom_up = walk, enter_calls, bottom_up
    self.g0, self.pairs = g0, pairs
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
    self._kept: set[UOp] | None = None      # each(): the nodes whose keytimes it keeps (the input's and the matches')
    # the matches whose step along the chain rebuilt a node whose dtype or text only tinygrad derives (over a source of
    # another dtype or a new vector of constants), or that tinygrad's substitute made: js/port/replay.js cannot chain to them
    self.tinygrad_only: set[int] = set()
    self._derives = False

  # *** the public API ***

  def at(self, k: int) -> UOp:
    """The graph after the first k matches (k=0: the input), as VIZ's replay; a failed replay stops at its
    REWRITE_ERROR, which every later k returns too."""
    if not 0 <= k <= self.n: raise IndexError(k)
    if self.error_at is not None and k >= self.error_at: return cast(UOp, self.graphs[self.error_at])
    if (g := self.graphs[k]) is not None: return g
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
        if (g := self.graphs[k]) is not None: return self._keep(k, g)
      if k <= self.cur_k: self._jump(max(j for j in range(k) if self.graphs[j] is not None))  # let go of: see _keep
      return self._keep(k, self._at(k))
    finally:
      if was: gc.enable()

  KEEP = 64                                 # graphs a Replayer keeps at most; past that it keeps the last few asked
  CHECKPOINTS = 16                          # and, where only the chain makes graph k, this many spread over the step

  def _keep(self, k: int, g: UOp) -> UOp:
    """g, graph k; past KEEP graphs kept, let go of all but the input, the chain's head, k and a replay error (stepping
    through a whole-model schedule step would keep 1,500 graphs of 5,000 nodes): asked again, one is computed again.
    Where that takes the chain (a walk, or past direct_below), every n/CHECKPOINTS-th graph is kept too, for the chain
    to go on from: stepping back through a 110-match walk step chained from the input at each step, 0.63 s a step."""
    if len(self.graphs) - self.graphs.count(None) > self.KEEP:
      keep = {0, k, self.cur_k, self.error_at}
      if self.walk or k >= self.direct_below: keep.update(range(0, self.n + 1, -(-self.n // self.CHECKPOINTS)))
      self.graphs = [x if j in keep else None for j, x in enumerate(self.graphs)]
      self._forget(*(x for x in self.graphs if x is not None))
    return g

  FORGET_EVERY = 32                         # each() drops what the graphs behind it made, every so many matches

  def each(self, start: int = 0) -> Iterator[UOp]:
    """Every graph in order from graph `start` on (at(start), at(start + 1), ...) along the chain, holding only the
    graph the next is made from, not all of them (graphs it has passed are not kept: use a Replayer made for it).
    Graph `start` is made in one pass from the input where that is exact (see at)."""
    yield self.at(start)
    for k in range(start + 1, self.n + 1):
      g = self.at(k)
      if k > 1 and self.error_at is None: self.graphs[k - 1] = None
      yield g
      if k % self.FORGET_EVERY == 0: self._forget(g)

  def _forget(self, *graphs: UOp) -> None:
    """Keep the keytimes of the nodes of these graphs, the input and the matches only (graphs passed by or let go of:
    the keytimes of the nodes rebuilt for them would keep those alive)."""
    if (kept := self._kept) is None:
      kept = self._kept = set()
      for r in (self.g0, *(u for p in self.pairs for u in p)): kept.update(r.toposort(gate=lambda u: u not in kept))
    live = {u for g in graphs for u in g.toposort(gate=lambda u: u not in kept)}
    self.keytime = {u: t for u, t in self.keytime.items() if u in live or u in kept}

  @property
  def direct_below(self) -> int:
    """Every graph k below this is S_{D_k}(graph_0), one pass (see the class docstring). bottom_up=False: the first k
    at which a key lies below another key of D_k, or a key gets a second value. bottom_up=True: all of them, unless
    the step's keys and values hold a cycle or the step is big enough for REWRITE_STACK_LIMIT (then none)."""
    if self._direct_below is None:
      found = self.n + 1
      if self.bottom_up:
        if self._has_fixpoint_cycle() or not self.small: found = 1
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

  @functools.cached_property
  def small(self) -> bool:
    """Whether no substitute of this step can come near REWRITE_STACK_LIMIT: any graph of the step is at most the
    input's and the values' nodes (a rebuilt node takes the place of one of them), and a substitute touches at most
    that graph and as many rebuilt nodes, some 4 stack entries each (as page_replays reckons)."""
    return 8 * self._node_bound() <= REWRITE_STACK_LIMIT.value

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
      self._derives = False
      g = self._sub(self.g0 if self.bottom_up else cast(UOp, self.graphs[j - 1]), j, self.cur_dict.get)
      if self._derives: self.tinygrad_only.add(j)
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
    self._derives = True
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
    FUNCTION, CALL, BODIES, STACK = Ops.FUNCTION, Ops.CALL, UOp._OPAQUE_CALL_BODIES, Ops.STACK
    res: dict[UOp, UOp] = {}
    busy: set[UOp] = set()
    t = ktd.get(root)
    if (t if t is not None else ktf(root)) > k: return root
    stack: list[tuple[UOp, int, Any]] = [(root, 0, None)]  # (node, stage, its fixpoint m or rebuild nn; None at stage 0)
    pop, push = stack.pop, stack.append
    rget = cast("Callable[[UOp, UOp], UOp]", res.get)  # always with a default
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
              dt, self._derives = _rebuild_dtype(m, new), True
              break
          else: dt = m.dtype
          nn = UOp(m.op, dt, new, m.arg, m.tag)
          if nn.op is STACK and not self._derives and _constants(new): self._derives = True
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
    if 4 * (len(ktd) + len(res)) > REWRITE_STACK_LIMIT.value and not self.small:
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
        if new != srcs and ((n.op is Ops.STACK and _constants(new)) or any(a.dtype is not b.dtype for a, b in zip(srcs, new, strict=True))):
          self._derives = True
        res[n] = UOp(n.op, _rebuild_dtype(n, new), new, n.arg, n.tag) if new != srcs else n
    return res[root]


# *** how far the report's page (js/port/replay.js) replays a step itself ***

def opaque_call_bodies() -> list[str]:
  """The ops of a CALL's first source that make it opaque to a rewrite that does not enter calls (see Replayer)."""
  return sorted(o.name for o in UOp._OPAQUE_CALL_BODIES)


def page_replays(pairs: list[tuple[UOp, UOp]], table: NodeTable, rows: list[int], bottom_up: bool) -> tuple[int, bool]:
  """How many of a step's matches js/port/replay.js, the Replayer's one pass and chain on a report's node table, follows
  exactly as VIZ from the step's input and its matches' (node, replacement) pairs alone: all of them, the dtypes of
  the nodes rebuilt over a replacement that changes a dtype derived as tinygrad derives them (js/port/dtypes.js), but
  where the page cannot label a node it may rebuild (rebuilt_dtypes.page_derives: then up to the first such
  replacement); none where those replacements hold a fixpoint cycle (where VIZ's replay stops at an error) or the step
  is big enough for REWRITE_STACK_LIMIT (rows: the input's and the replacements' rows in the table). And whether it
  follows the later ones along the chain (a top-down rewrite: each graph made from the one before), given the graphs
  of the matches whose step only tinygrad derives (Replayer.tinygrad_only); else the report stores every later graph.
  The page refuses, with a message, what only the whole graph shows: a cyclic dependency, an opaque call body that
  holds a replaced node."""
  # the table's size bounds the step's, and mostly settles it; else count
  if 8 * len(table.rows) > REWRITE_STACK_LIMIT.value and 8 * table.reach(rows) > REWRITE_STACK_LIMIT.value: return 0, False
  n = next((i for i, (u0, u1) in enumerate(pairs) if u0.dtype is not u1.dtype), len(pairs))
  if n < len(pairs) and page_derives(table.stacks, pairs): n = len(pairs)
  values: dict[UOp, list[UOp]] = {}
  for u0, u1 in pairs[:n]: values.setdefault(u0, []).append(u1)
  return (0, False) if _fixpoint_cycle(values) else (n, not bottom_up)
