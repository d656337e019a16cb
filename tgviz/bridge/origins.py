"""Which Tensor operations each kernel computes, and the user's line that called each one (a kernel's origins).

Owns OriginRecorder, the Patch that ties tinygrad's op metadata to kernels, and _user_frame (the user's own frame in a
call stack). It must not decide when it is entered (capture.Tracker does) nor turn origins into views.
"""
from __future__ import annotations

import functools
import inspect
import linecache
import os
import sys
import weakref
from typing import Any

from tinygrad import tensor
from tinygrad.uop import ops
from tinygrad.uop.ops import GroupOp, Ops, RewriteContext, UOp

from tgviz.bridge.recorders import Patch
from tgviz.bridge.records import Origin

_SKIPPED_DIRS = tuple(os.path.dirname(os.path.abspath(m.__file__)) + os.sep for m in (ops, os))  # tinygrad's, the stdlib
_TGVIZ_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # tgviz, not only its bridge

# UOps that name memory, not a computation: a kernel that reads a buffer does not compute what made it
_STORAGE = frozenset({Ops.BUFFER, Ops.PARAM, Ops.AFTER, Ops.MSTACK, Ops.MSELECT})
# ops that say how to keep a value, not what it is, and the Tensor methods that make them
_MARKERS = {Ops.CONTIGUOUS: "contiguous", Ops.CONTIGUOUS_BACKWARD: "contiguous_backward", Ops.DETACH: "detach"}


_NOT_USERS = (os.path.dirname(_SKIPPED_DIRS[0].rstrip(os.sep)) + os.sep, _TGVIZ_DIR, _SKIPPED_DIRS[1])


def _users(frame: Any) -> bool:
  """Whether a frame runs the user's own code (not tinygrad's, tgviz's or the standard library's). Code made from a
  string is the user's where the user's code ran it (exec of a cell's text), not where a library did (a dataclass's
  generated __init__ that tinygrad calls)."""
  fn = frame.f_code.co_filename
  if fn == "<string>":
    while frame is not None and frame.f_code.co_filename == "<string>": frame = frame.f_back
    return frame is None or _users(frame)
  return not (fn.startswith(_NOT_USERS) or fn.startswith("<frozen"))


def _user_call(frame) -> tuple[Any, Any]:
  """The innermost frame of the user's own code from frame out (None: none), and the frame it called there (None:
  frame is the user's own)."""
  called = None
  while frame is not None and not _users(frame): called, frame = frame, frame.f_back
  return frame, called


def _user_frame(frame):
  """The innermost frame of the user's own code from frame out."""
  return _user_call(frame)[0]


def _called_name(called: Any) -> str | None:
  """The Tensor function the user's code called, where its frame is that of one tinygrad does not wrap with its op
  metadata (Tensor.rand, a mixin's classmethod): the methods it runs inside make their own (rand's _threefry_random_bits, cat,
  __getitem__, ...), which would name tinygrad's internals for the user's one call. None elsewhere (a wrapped method's
  Metadata is already the one the user called)."""
  if called is None or called.f_code is _WRAPPER: return None
  name = called.f_code.co_name
  fn = inspect.getattr_static(tensor.Tensor, name, None)  # (rand is a classmethod of a mixin)
  return name if getattr(getattr(fn, "__func__", fn), "__code__", None) is called.f_code else None


_WRAPPER = tensor._metadata_wrapper(len).__code__  # the frame of a Tensor method tinygrad wraps


def _storage(u: UOp) -> bool:
  """Whether u is memory or a view of it (a movement op on memory): what a kernel reads, not what it computes."""
  return _viewed(u).op in _STORAGE


@functools.cache
def _remove_bufferize() -> Any:
  from tinygrad.schedule import rangeify
  return rangeify.remove_bufferize.__code__


def _inlining(frame: Any, depth: int = 6) -> bool:
  """Whether the rewrite called from frame runs for rangeify's remove_bufferize (a few frames out)."""
  code = _remove_bufferize()
  for _ in range(depth):
    if frame is None: return False
    if frame.f_code is code: return True
    frame = frame.f_back
  return False


def _kernel_sink(u: UOp) -> UOp | None:
  """The AST of the kernel a CALL runs (None for any other UOp)."""
  if u.op is Ops.CALL and u.src and (s := u.src[0]).op is Ops.SINK and isinstance(s.arg, ops.KernelInfo): return s
  return None


class OriginRecorder(Patch):
  """Which Tensor operations each kernel computes, and the user's line that called each one.

  tinygrad tags the UOps a Tensor method makes with op metadata (its Metadata: name, backward), but its scheduler's
  rewrites make new UOps without it. While a capture runs, this carries each UOp's metadata over to what the rewrite
  turned it into (RewriteContext.replace: every visited UOp -> its result) and to the few new UOps just below that
  result (not from an op dropped for its source: DETACH(x) -> x leaves x's own), and over remove_bufferize's inlining of
  a buffer's value into its reader (randn fused into a conv). A kernel's origins are the metadata of the body the
  scheduler split it from (its STORE, before the buffers it reads become the AST's PARAMs): what it computes, not the
  ops that made the buffers it reads (memory and views of it take no carried metadata). UOps of Tensors tinygrad makes
  without _apply_uop (mixins, constructors, the optimizer's buffers, assign's STORE) are given the running method's
  Metadata or one named after what the user's line called. Carried metadata is kept per schedule (tinygrad's UOps are shared by equal value, and a
  UOp rebuilt by a later schedule must not keep an earlier one's ops), except what the tensors' own UOps carry between
  schedules (a lazy Tensor rebuilt on a realized one). The Metadata tinygrad makes meanwhile are mapped to the user's
  line that made them (for a backward op, the line that asked for the gradient), and to the Tensor methods called
  inside each (which tinygrad makes no Metadata of). Held weakly: no UOp is kept alive."""

  BELOW = 3                                  # levels of new UOps under a rewrite's result that inherit its metadata

  def __init__(self) -> None:
    # id(Metadata) -> (it, kept so ids stay unique; file, line; the Tensor function the user called, see _called_name;
    # how many were made before it)
    self.made: dict[int, tuple[Any, str | None, int | None, str | None, int]] = {}
    self.calls: dict[int, dict[str, None]] = {}  # id(Metadata) -> the Tensor methods called inside its method, in order
    self.carried: weakref.WeakKeyDictionary[UOp, tuple] = weakref.WeakKeyDictionary()  # by the tensors' own rewrites
    self.scoped: weakref.WeakKeyDictionary[UOp, tuple] = weakref.WeakKeyDictionary()   # by the running schedule's
    self.kernels: weakref.WeakKeyDictionary[UOp, tuple] = weakref.WeakKeyDictionary()  # a kernel's AST -> its metadata
    # UOps two Tensor method calls made (equal UOps are one), and what was rewritten from them: their metadata names
    # every call that made them, of which a kernel names only those its other UOps name (see _computed)
    self.shared: weakref.WeakKeyDictionary[UOp, None] = weakref.WeakKeyDictionary()
    self.groups: dict[int, tuple[Origin, ...]] = {}  # kernel group index -> origins
    self.nodes: dict[int, tuple[tuple[int, ...], ...]] = {}  # kernel group index -> per node of its AST (see _nodes)
    self.kinds: dict[int, bool] = {}                 # group index -> whether it is a kernel's codegen
    self._mapping = False                            # in tinygrad's _apply_map_to_tensors (the tensors' own UOps)
    self._assign: Any = None                         # the Metadata of the Tensor.assign running
    self._inlined: list[tuple[int, dict[UOp, UOp]]] = []  # (id(step), what remove_bufferize inlined in that rewrite)

  def patches(self) -> list[tuple[Any, dict[str, Any]]]:
    from tinygrad.helpers import Metadata
    made, init, calls, running, rec = self.made, Metadata.__init__, self.calls, tensor._METADATA, self
    carried, made_again, apply_uop = self.carried, self._made_again, inspect.unwrap(tensor.Tensor._apply_uop).__code__
    transform, apply_map = tensor.transform_to_call, tensor._apply_map_to_tensors
    self.marker = running.get()  # the Tensor method running (none, outside one)
    def __init__(m, *args, **kwargs):
      init(m, *args, **kwargs)
      f, called = _user_call(sys._getframe(1))
      made[id(m)] = (m, *((f.f_code.co_filename, f.f_lineno) if f is not None else (None, None)), _called_name(called), len(made))
    # tinygrad's Tensor method wrapper asks which method runs before it makes one's Metadata, and calls a method that
    # runs inside another (log_softmax inside sparse_categorical_crossentropy) without any: such a call is noted here as
    # one the running method made (its Metadata is unchanged; the UOps it makes are the running method's, as they are).
    # _apply_uop asks it for the Metadata it then gives the UOp it made, in place of any earlier one (see _made_again)
    def get():
      m = running.state
      if m is None: return m
      if (f := sys._getframe(1)).f_code is _WRAPPER: calls.setdefault(id(m), {})[f.f_locals["fn"].__name__] = None
      elif f.f_code is apply_uop and (u := f.f_locals["new_uop"]) not in (t.uop for t in f.f_locals["srcs"]): made_again(u, m)
      return m
    tensor_init, unnamed = tensor.Tensor.__init__, self._unnamed
    # tinygrad gives metadata only to the UOps its Tensor methods make through Tensor._apply_uop: one a Tensor is made
    # of otherwise (a mixin's method, the constructor, a classmethod such as zeros, the optimizer's own Tensors) takes
    # the running method's, or that of the tinygrad function the user's code called; not a marker another method puts
    # on a value (tolist's CONTIGUOUS would name its line in the kernel that computes the value), only the user's own
    def Tensor__init__(t, *args, **kwargs):
      tensor_init(t, *args, **kwargs)
      if (u := getattr(t, "uop", None)) is None or not u.src: return
      if u in carried or u in ops.all_metadata:
        if (m := running.state) is not None and (u.op not in _MARKERS or m.name == _MARKERS[u.op]): made_again(u, m)
        return
      if (m := running.state) is None: m = unnamed(sys._getframe(1))
      if m is not None and (u.op not in _MARKERS or m.name == _MARKERS[u.op]): carried[u] = (m,)
    # Tensor.assign makes its STORE itself: it takes assign's metadata (a copy kernel that only stores names it)
    raw_assign, store = tensor.Tensor.assign.__wrapped__, UOp.store  # (functools.wraps keeps the method tinygrad wrapped)
    def assign(t, x):
      was, rec._assign = rec._assign, running.state
      try: return raw_assign(t, x)
      finally: rec._assign = was
    def UOp_store(u, *args, **kwargs):
      ret = store(u, *args, **kwargs)
      if rec._assign is not None and ret not in carried and ret not in ops.all_metadata: carried[ret] = (rec._assign,)
      return ret
    def transform_to_call(big_sink):
      rec.scoped = weakref.WeakKeyDictionary()  # a new schedule: what the last one carried is not this one's
      return transform(big_sink)
    def _apply_map_to_tensors(*args, **kwargs):
      was, rec._mapping = rec._mapping, True
      try: return apply_map(*args, **kwargs)
      finally: rec._mapping = was
    return [(Metadata, {"__init__": __init__}), (running, {"get": get}),
            (tensor, {"transform_to_call": transform_to_call, "_apply_map_to_tensors": _apply_map_to_tensors}),
            (tensor.Tensor, {"__init__": Tensor__init__, "assign": functools.wraps(raw_assign)(tensor._metadata_wrapper(assign))}),
            (UOp, {"store": UOp_store})]

  @staticmethod
  def _unnamed(frame: Any) -> Any:
    """A Metadata for what the user's code called, outside any Tensor method: named after the tinygrad function it
    called (zeros, Adam, a class it made: SGD), "Tensor" for the constructor called by the user, at the user's line.
    None where no user's frame called it."""
    from tinygrad.helpers import Metadata
    frame, called = _user_call(frame)  # frame is Tensor.__init__'s caller: called None when the user's code made the Tensor
    if frame is None: return None
    name = "Tensor" if called is None else called.f_code.co_name
    if name == "__init__": name = type(called.f_locals.get("self")).__name__
    return Metadata(name=name)

  def _made_again(self, u: UOp, m: Any) -> None:
    """Tensor method call m made u, which may be a UOp another call made already (equal UOps are one: two randn build
    the same key from the seed): u is then both calls', and marked shared."""
    had = self.carried.get(u) or ops.all_metadata.get(u)
    if had and all(h is not m for h in had): self.carried[u], self.shared[u] = (*had, m), None

  def __exit__(self, *exc: object) -> None:
    super().__exit__(*exc)
    # a Tensor method that raised leaves tinygrad's marker of the running method set (its wrapper puts the old one back
    # only when it returns), and every op after it would be taken for part of that method: put it back
    if tensor._METADATA.get() is not self.marker: tensor._METADATA.set(self.marker)

  def _meta(self, u: UOp) -> tuple:
    # a source-less UOp (CONST, BUFFER, RANGE, ...) is shared by every graph that uses it: its metadata says nothing
    if not u.src: return ()
    ref = weakref.ref(u)  # one reference for the weak dicts' lookups (a UOp's plain weak reference is made once)
    return self.scoped.data.get(ref) or self.carried.data.get(ref) or ops.all_metadata.data.get(ref) or ()

  def _computed(self, body: UOp) -> tuple:
    """The metadata of what a kernel body computes: its UOps up to the memory it reads (the AFTER of a buffer another
    kernel writes, a realized buffer), each Metadata once. A shared UOp names only the calls this body's other UOps
    name (x's draw computes the key w's draw made too, but only for x), or all of its own where they name none."""
    found: dict[int, Any] = {}
    unsure: list[tuple] = []
    for u in body.toposort(gate=lambda x: x.op not in _STORAGE):
      if not (meta := self._meta(u)): continue
      if u in self.shared: unsure.append(meta)
      else: found.update((id(m), m) for m in meta)
    for meta in unsure:
      if not any(id(m) in found for m in meta): found.update((id(m), m) for m in meta)
    return tuple(found.values())

  def seen(self, root: UOp) -> bool:
    """Note the graph a group starts from (a kernel's AST: its origins). Whether the group is a kernel's codegen."""
    g = ops.active_group[-1] if ops.active_group else len(ops.tracked_ctxs) - 1
    if (kernel := self.kinds.get(g)) is not None: return kernel
    return self.note(g, root)

  def note(self, g: int, root: UOp) -> bool:
    """Note the graph tracked group g starts from (see seen; a compile worker's group is noted when merged)."""
    kernel = self.kinds[g] = root.op is Ops.SINK and isinstance(root.arg, ops.KernelInfo)
    if kernel:
      # an AST the scheduler did not split from a body (a custom kernel): what its own UOps carry
      found = self.kernels.get(root)
      if found is None: found = self._computed(root)
      # in the order the user's code called them: what the kernel stores is what was called last (a conv after the
      # randn it fuses), and the lines read in order
      def order(m: Any) -> int: return self.made[id(m)][4] if id(m) in self.made else -1  # (made before the capture: first)
      self.groups[g] = tuple(dict.fromkeys(self._origin(m) for m in sorted(found, key=order)))
      self.nodes[g] = self._nodes(root, self.groups[g])
    return kernel

  def _nodes(self, ast: UOp, origins: tuple[Origin, ...]) -> tuple[tuple[int, ...], ...]:
    """Per node of a kernel's AST, in toposort order: which of the kernel's origins made it (indices), from the metadata
    its UOps carry (a UOp two calls made, of the kernel's calls only); a node none made (a REDUCE the scheduler built, an
    INDEX, a RANGE) takes its users' (the conv's REDUCE is the conv's: its STORE is), else its sources' (a STORE that
    the AST's END and SINK use: what it stores)."""
    at = {o: i for i, o in enumerate(origins)}
    of: dict[int, int | None] = {}
    def index(m: Any) -> int | None:
      if id(m) not in of: of[id(m)] = at.get(self._origin(m))
      return of[id(m)]
    topo = list(ast.toposort())
    made = [{i for m in self._meta(u) if (i := index(m)) is not None} for u in topo]
    row = {u: n for n, u in enumerate(topo)}
    users: dict[int, list[int]] = {}
    for n, u in enumerate(topo):
      for s in u.src: users.setdefault(row[s], []).append(n)
    for n in range(len(topo) - 1, -1, -1):  # users come after their sources: a node's are done before it
      if not made[n]: made[n] = set().union(*(made[k] for k in users.get(n, ())))
    for n, u in enumerate(topo):  # none by its users either (a STORE under the AST's END and SINK): its sources'
      if not made[n]: made[n] = set().union(*(made[row[s]] for s in u.src))
    return tuple(tuple(sorted(m)) for m in made)

  def _origin(self, m: Any) -> Origin:
    """A Metadata's origin: the user's line that made it (its text read only now, for the few a kernel shows)."""
    file, line, called = self.made[id(m)][1:4] if id(m) in self.made else (None, None, None)
    # named after the user's call, one origin for all of it (the methods tinygrad ran inside are its internals); not a
    # gradient's (gradient and backward are not wrapped either: "__matmul__, backward" says more than "gradient")
    if m.backward: called = None
    return Origin(called or m.name, m.backward, file, line, linecache.getline(file, line).strip() if file is not None and line else "",
                  () if called else tuple(self.calls.get(id(m), ())))

  def rewritten(self, rctx: RewriteContext, root: UOp, tracked: bool = True) -> None:
    """Carry metadata over a graph rewrite outside kernels' codegen (which starts from a finished AST); of the untracked
    ones nested in a rewrite, over remove_bufferize's only (a buffer's value put into the kernel that reads it: the
    reader then computes the ops that made it, as the conv that randn's Box-Muller is fused into)."""
    if not tracked:
      # the rewrite it runs in has not carried its own metadata yet: what it inlines is carried once that one has
      if _inlining(sys._getframe(1)) and rctx.replace and ops.active_rewrites:
        self._inlined.append((id(ops.active_rewrites[-1]), {n: r for n, r in rctx.replace.items() if r is not n}))
      return
    if self.seen(root) or not (replace := rctx.replace): return
    meta_of, carried, kernels, results = self._meta, self.carried if self._mapping else self.scoped, self.kernels, None
    for n, r in replace.items():
      if r is n: continue
      if (sink := _kernel_sink(r)) is not None and _kernel_sink(n) is None:  # a kernel split from its body
        kernels[sink] = _joined(kernels.get(sink, ()), self._computed(n))
        continue
      if n in kernels and r.op is Ops.SINK: kernels[r] = _joined(kernels.get(r, ()), kernels[n])  # a kernel's AST rebuilt
      # an op dropped for one of its sources (DETACH(x) -> x) added nothing to it: x keeps its own ops (and x, shared
      # by its other users, must not take the dropped op's)
      if any(r is s or replace.get(s) is r for s in n.src): continue
      # a view that the rewrite made into the op it views, the view pushed into it: of a reduce (the next line's conv2d
      # reshaping a max_pool2d's max), the reduce's ops where it has any, not the view's; of any op, where the view has
      # none of its own (sum's permute of relu's WHERE, made a WHERE by rangeify: relu's). (Not a view's own over any
      # op: a conv's view of x, which a line before cast and realized, pushed into a new CAST, is the conv's.)
      own = meta_of(n)
      pushed = n.op in GroupOp.Movement and (v := _viewed(n)).op is r.op and (r.op is Ops.REDUCE or not own)
      if not (meta := (meta_of(v) if pushed else ()) or own): continue
      if results is None: results = set(replace.values())
      stack = [(r, 0)]
      while stack:
        x, level = stack.pop()
        # memory (and views of it) holds what a kernel wrote, and its readers do not compute that: only what is below
        # it (the STORE of a buffer's AFTER) takes the metadata
        if x.src and not _storage(x) and (have := meta_of(x)) is not meta and (missing := _missing(have, meta)):
          carried[x] = have + missing
          if not have and n in self.shared: self.shared[x] = None
        # below: new UOps, and under memory one the rewrite met that has no metadata of its own (the STORE of a new
        # buffer's AFTER: the write that computes it)
        if level < self.BELOW:
          stack.extend((s, level + 1) for s in x.src if (s not in replace and s not in results) or (_storage(x) and not meta_of(s)))
    step = id(ops.active_rewrites[-1]) if ops.active_rewrites else None
    inlined = [pairs for s, pairs in self._inlined if s == step]
    self._inlined = [(s, pairs) for s, pairs in self._inlined if s != step]
    made_from = {r: n for n, r in replace.items() if r is not n} if inlined else {}
    for pairs in inlined:
      for n, r in pairs.items():
        # the inlined UOp (a result of this rewrite: its metadata is that of the UOp this rewrite made it of) -> its
        # copy in the reader, and what this rewrite made of that copy
        if not (meta := meta_of(n) or ((m := made_from.get(n)) is not None and meta_of(m))): continue
        for x in dict.fromkeys((r, replace.get(r, r))):
          if x.src and not _storage(x) and (missing := _missing(have := meta_of(x), meta)): carried[x] = have + missing


def _viewed(u: UOp) -> UOp:
  """What a view (movement ops) is a view of."""
  while u.op in GroupOp.Movement and u.src: u = u.src[0]
  return u


def _missing(have: tuple, meta: tuple) -> tuple:
  """The Metadata of meta not in have, by identity: equal Metadata of two calls are two origins."""
  held = {id(h) for h in have}
  return tuple(m for m in meta if id(m) not in held)


def _joined(have: tuple, more: tuple) -> tuple:
  return have + _missing(have, more)
