"""What tinygrad's scheduler decided about each buffer it made, recorded while it decides.

Owns ScheduleRecorder, the Patch on tinygrad's ``schedule/`` and ``tensor.py`` that notes, with little work during the
run, why each buffer between kernels exists: ``transform_to_call`` making a buffer for a realized Tensor or a
``.contiguous()`` (records.Realized "output" / "contiguous"); ``run_rangeify``'s realize map (which rule of
``pm_generate_realize_map`` or which line of ``run_rangeify`` put a value in it, the axes, the consumers); the buffer
``create_bufferize_and_index_srcs`` staged for it; what ``remove_bufferize`` found when asked to inline it (the buffers
inlining would read, whether it reduces over one); and which buffer ``bufferize_to_store`` made of it. tinygrad's
pattern functions run with a copy of their module's globals, so these are observed where their own code calls out
(a class's constructor, UOp's methods, the realize map) by the calling frame. Reading them into kernels and buffers is
tgviz.trace.program's job; it must not decide when it is entered (capture.Tracker does).
"""
from __future__ import annotations

import functools
import linecache
import sys
import weakref
from typing import TYPE_CHECKING, Any

from tinygrad.uop import ops
from tinygrad.uop.ops import Ops, UOp, UOpMetaClass

from tgviz.bridge.decisions import Realized, ScheduleRecord
from tgviz.bridge.origins import _user_frame
from tgviz.bridge.recorders import Patch
from tgviz.bridge.records import Origin

if TYPE_CHECKING:
  from tgviz.bridge.origins import OriginRecorder

# the realize map's rules, by the function of tinygrad's schedule/indexing.py that set an entry
_RULES = {"realize": "contiguous", "realize_srcs": "device", "realize_store_after_src": "hazard", "realize_custom_kernel_srcs": "custom"}


@functools.cache
def _lines() -> dict[str, Any]:
  """Where tinygrad decides, in its own source: the two lines of run_rangeify that put a value in the realize map (its
  consumers' ranges differ; ranges end at it), the code objects of the functions observed, and the lines of
  remove_bufferize that keep a buffer."""
  from tinygrad.schedule import indexing, rangeify
  # (the files' lines as linecache holds them: inspect's getsourcelines tokenizes the file to find a function's end,
  # a few ms of a first capture; the function's code says its lines)
  found = [i for i, ln in enumerate(linecache.getlines(str(indexing.__file__)), 1) if "rctx.realize_map[x] = _realize_axis" in ln]
  code, file = rangeify.remove_bufferize.__code__, str(rangeify.__file__)
  last = max(ln for _, _, ln in code.co_lines() if ln is not None)
  rb_lines = linecache.getlines(file)[code.co_firstlineno - 1:last]
  def at(text: str) -> tuple[str, int]:
    return (file, code.co_firstlineno + next(i for i, ln in enumerate(rb_lines) if text in ln))
  return {"consumers": found[0], "ending": found[1], "remove_bufferize": rangeify.remove_bufferize.__code__,
          "stage": indexing.create_bufferize_and_index_srcs.__code__, "limit": rangeify._limit_bufs.__code__,
          "store": rangeify.bufferize_to_store.__code__, "always": at("ALWAYS_RUN_OPS"), "cost": at("len(accessed_buffers) > 3"),
          "reduce": at("if buffer_in_reduce:")}


_WRAPPERS = frozenset({"_wrapper", "__wrapper", "wrapper", "inner", "wrapped"})


def _asked_by(frame: Any) -> Origin | None:
  """The user's line that started a schedule, with the tinygrad function it called (realize, numpy, step, ...)."""
  if (user := _user_frame(frame)) is None: return None
  called = frame
  while frame is not user:  # the outermost of tinygrad's functions inside the user's frame, decorators' wrappers left out
    if frame.f_code.co_name not in _WRAPPERS: called = frame
    frame = frame.f_back
  file = user.f_code.co_filename
  return Origin(called.f_code.co_name, False, file, user.f_lineno, linecache.getline(file, user.f_lineno).strip())


def _plain_shape(u: UOp) -> tuple[int | str, ...]:
  try: return tuple(s if isinstance(s, int) else str(s) for s in (u.shape or ()))
  except Exception: return ()


def _base_buffer(u: UOp) -> UOp | None:
  while u.op is not Ops.BUFFER:
    if not u.src: return None
    u = u.src[0]
  return u


def _reduce_text(r: UOp) -> str:
  """A rangeified REDUCE as people read it: its op and how many elements it reduces ("ADD over 8")."""
  n = 1
  for rng in r.src[1:]:
    if rng.op is Ops.RANGE and rng.src and rng.src[0].op is Ops.CONST: n *= rng.src[0].arg
  op = r.arg[0] if isinstance(r.arg, tuple) else r.arg
  return f"{getattr(op, 'name', op)} over {n}"


class _RealizeMap(dict):
  """run_rangeify's realize map, noting who put each value in it first: the rule (see _RULES and _lines) and, for
  run_rangeify's own lines, the consumers it saw."""

  def __init__(self, *args: Any) -> None:
    super().__init__(*args)
    self.why: dict[UOp, tuple[str, tuple[str, int], tuple]] = {}

  def __setitem__(self, key: UOp, value: Any) -> None:
    if key not in self.why:
      f = sys._getframe(1)
      code, consumers = f.f_code, ()
      if code.co_name == "run_rangeify":
        lines = _lines()
        rule = "consumers" if f.f_lineno == lines["consumers"] else "ending" if f.f_lineno == lines["ending"] else "other"
        consumers = tuple(f.f_locals.get("consumer_map", {}).get(key, ()))
      else: rule = _RULES.get(code.co_name, "other")
      self.why[key] = (rule, (code.co_filename, f.f_lineno), consumers)
    super().__setitem__(key, value)


class _Spies(Patch):
  """Patches set for a while inside a capture (ScheduleRecorder's on UOp.toposort and ParamArg, which codegen calls
  most: on only while a schedule is made)."""

  def __init__(self, attrs: list[tuple[Any, dict[str, Any]]]) -> None:
    self.attrs = attrs

  def patches(self) -> list[tuple[Any, dict[str, Any]]]:
    return self.attrs


class ScheduleRecorder(Patch):
  """Records the scheduler's decisions of a capture (``groups``: tracked group index -> its ScheduleRecord; see the
  module's docstring). Holds no UOp past the schedule that made it."""

  def __init__(self, origins: OriginRecorder) -> None:
    self.origins = origins
    self.groups: dict[int, ScheduleRecord] = {}
    self._ctx: Any = None                                # the realize map's IndexingContext of the running schedule
    self._spies: _Spies | None = None                    # its spies on UOp.toposort and ParamArg, on while it is made
    self._ctx_group = ScheduleRecord()                   # and the record of its group
    self._ctx_split: list[tuple] = []                    # and what split_reduceop made contiguous before it
    self._staged: dict[int, tuple[Any, UOp, UOp | None]] = {}  # id(BufferizeOpts) -> (it, the value staged, its consumer)
    self._asked: dict[int, list] = {}                    # id(BufferizeOpts) -> remove_bufferize's [reads, reduces, in a reduce]
    self._stored: dict[int, int] = {}                    # internal buffer slot -> id(BufferizeOpts)
    # id(BufferizeOpts) of an earlier schedule's STAGE -> the one staged here it stands for: tinygrad makes one UOp of
    # equal ones, and where an equal STAGE is still alive (a graph of an earlier schedule kept by the user, or by a view of
    # a trace), a STAGE rebuilt here is that one, its arg the earlier BufferizeOpts (equal to the one staged here)
    self._alias: dict[int, int] = {}
    self._split: list[tuple] = []                        # what split_reduceop made contiguous: (shape, dtype)
    self._made: dict[int, UOp] = {}                      # buffer number -> the CONTIGUOUS transform_to_call made it for
    self._last = ScheduleRecord()                        # the record of the latest transform_to_call (its launches follow)
    self._contiguous_at: weakref.WeakKeyDictionary[UOp, tuple[str, int]] = weakref.WeakKeyDictionary()  # Tensor.contiguous's line

  def _group(self) -> ScheduleRecord:
    g = ops.active_group[-1] if ops.active_group else len(ops.tracked_ctxs) - 1
    return self.groups.setdefault(g, ScheduleRecord())

  def _origins(self, u: UOp) -> tuple:
    try: return tuple(dict.fromkeys(self.origins._origin(m) for m in self.origins._meta(u)))
    except Exception: return ()

  def patches(self) -> list[tuple[Any, dict[str, Any]]]:
    from tinygrad import tensor
    from tinygrad.engine import realize
    from tinygrad.helpers import PCONTIG
    from tinygrad.schedule import indexing, rangeify
    from tinygrad.uop.ops import ParamArg
    rec, lines = self, _lines()
    base_ctx, transform, empty_like, contiguous, toposort = indexing.IndexingContext, tensor.transform_to_call, UOp.empty_like, \
      UOp.contiguous, UOp.toposort
    tensor_contiguous, run_linear = tensor.Tensor.contiguous, tensor.run_linear
    opts_init, param_init, resolve = indexing.BufferizeOpts.__init__, ParamArg.__init__, realize.resolve_params
    make_uop = UOpMetaClass.__call__
    split_code, contig_code, rb_code = rangeify.split_reduceop.__code__, tensor.replace_contig_with_store_after.__code__, lines["remove_bufferize"]

    class RecordingContext(base_ctx):  # type: ignore[valid-type,misc]
      def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.realize_map: _RealizeMap = _RealizeMap(self.realize_map)
        rec._close()
        rec._ctx, rec._ctx_group, rec._ctx_split, rec._split = self, rec._group(), rec._split, []
        # the spies on what codegen calls most, only while this schedule is made (see _close)
        rec._spies = _Spies([(ParamArg, {"__init__": recorded_param}), (UOp, {"toposort": recorded_toposort}),
                             (UOpMetaClass, {"__call__": recorded_uop})])
        rec._spies.__enter__()

    def recorded_opts(self, *args, **kwargs):
      opts_init(self, *args, **kwargs)
      code = (f := sys._getframe(1)).f_code
      if code is lines["stage"] or code is lines["limit"]:
        rec._staged[id(self)] = (self, f.f_locals["s"], f.f_locals["x"] if code is lines["stage"] else None)

    def recorded_uop(cls, op, dtype=None, src=(), arg=None, tag=None, *args, **kwargs):
      ret = make_uop(cls, op, dtype, src, arg, tag, *args, **kwargs)
      if op is Ops.STAGE and ret.arg is not arg and (key := rec._alias.get(id(arg), id(arg))) in rec._staged: rec._alias[id(ret.arg)] = key
      return ret

    def recorded_param(self, *args, **kwargs):
      param_init(self, *args, **kwargs)
      if (f := sys._getframe(1)).f_code is lines["store"] and (x := f.f_locals.get("x")) is not None: rec._stored[self.slot] = rec._staged_key(x)

    def recorded_toposort(self, *args, **kwargs):
      out = toposort(self, *args, **kwargs)
      if (f := sys._getframe(1)).f_code is rb_code:
        loc, gate = f.f_locals, kwargs.get("gate")
        key = rec._staged_key(loc["buf"])
        if getattr(gate, "__name__", "") == "buf_gate":
          if key in rec._asked: rec._asked[key][2] = bool(loc.get("buffer_in_reduce"))
        else: rec._asked[key] = [len(dict.fromkeys(loc["accessed_buffers"])), tuple(_reduce_text(r) for r in loc["reduces"]), None, PCONTIG.value > 2]
      return out

    def recorded_transform(big_sink):
      rec._made = {}
      try:
        ret, bmap = transform(big_sink)
        outs = {b.arg.slot for x in big_sink.src if (v := bmap.get(x, bmap.get(x.base))) is not None and (b := _base_buffer(v)) is not None}
        made_for = {b.arg.slot: x for x, v in bmap.items() if (b := _base_buffer(v)) is not None}  # the Tensor's own UOp
        group = rec._last = rec.groups.setdefault(len(ops.tracked_ctxs) - 1, ScheduleRecord())
        group.asked = _asked_by(sys._getframe(1))
        for num, u in rec._made.items():
          x = made_for.get(num)
          why = "output" if num in outs else "contiguous" if x is not None and x.op is Ops.CONTIGUOUS else \
            "copy" if x is not None and x.op is Ops.COPY else "output"
          called = rec._contiguous_at.get(x) if why == "contiguous" and x is not None else None  # the user's .contiguous() line
          at = (Origin("contiguous", False, *called, linecache.getline(called[0], called[1]).strip()),) if called else ()
          group.made[num] = Realized(why, shape=_plain_shape(u), dtype=u.dtype.name,
                                     origins=at + (rec._origins(u) or rec._origins(u.src[0])), tag=u.tag)
      finally: rec._made = {}
      return ret, bmap

    def recorded_resolve(call, inputs):
      out = resolve(call, inputs)
      for u in out:  # (called as a launch is profiled: the number the profile's event gives the buffer is made here anyway)
        if u.op is Ops.BUFFER and (b := ops.buffers.get(u)) is not None and hasattr(b, "trace_num"): rec._last.buffers[u.arg.slot] = b.trace_num
      return out

    def recorded_empty_like(self, *args, **kwargs):
      ret = empty_like(self, *args, **kwargs)
      if sys._getframe(1).f_code is contig_code and (b := _base_buffer(ret)) is not None: rec._made[b.arg.slot] = self
      return ret

    def recorded_run(*args, **kwargs):
      rec._close()  # the schedule is made: its decisions filed, its UOps let go of before it runs
      return run_linear(*args, **kwargs)

    def recorded_tensor_contiguous(self, *args, **kwargs):
      ret = tensor_contiguous(self, *args, **kwargs)
      if ret is not self and (f := _user_frame(sys._getframe(1))) is not None:
        rec._contiguous_at[ret.uop] = (f.f_code.co_filename, f.f_lineno)
      return ret

    def recorded_contiguous(self, *args, **kwargs):
      ret = contiguous(self, *args, **kwargs)
      if sys._getframe(1).f_code is split_code: rec._split.append((ret.shape, ret.dtype))
      return ret

    return [(indexing, {"IndexingContext": RecordingContext}), (tensor, {"transform_to_call": recorded_transform, "run_linear": recorded_run}),
            (realize, {"resolve_params": recorded_resolve}),
            (indexing.BufferizeOpts, {"__init__": recorded_opts}),
            (UOp, {"empty_like": recorded_empty_like, "contiguous": recorded_contiguous}),
            (tensor.Tensor, {"contiguous": recorded_tensor_contiguous})]

  def __exit__(self, *exc: object) -> None:
    try: super().__exit__(*exc)
    finally: self._close()

  def _staged_key(self, buf: UOp) -> int:
    """The key of the staging that made the STAGE buf: the id of its BufferizeOpts, or of the one it stands for."""
    return self._alias.get(key := id(buf.arg), key)

  def _close(self) -> None:
    """File the decisions of the schedule made last (one get_kernel_graph) in its group, and let go of its UOps: when
    Tensor.realize runs it, when the next one starts, when the capture ends."""
    if self._spies is not None: self._spies.__exit__(None, None, None)
    if self._ctx is not None: self._ctx_group.stages.append(self._decisions(self._ctx.realize_map))
    self._ctx, self._staged, self._asked, self._stored, self._ctx_split, self._spies = None, {}, {}, {}, [], None
    self._alias = {}

  def _realized(self, s: UOp, consumer: UOp | None, rm: _RealizeMap) -> Realized:
    """What rangeify realized, as it realized it: the rule that put s in the realize map, refined for the CONTIGUOUS
    the scheduler itself makes (split_reduceop's, a COPY's source, an assign that reads its own target); "limit" for a
    value limit_bufs staged."""
    rule, loc, consumers = rm.why.get(s, ("limit" if consumer is None else "other", None, ()))
    if rule == "contiguous" and consumer is not None:
      if consumer.op is Ops.COPY: rule = "copy"
      elif consumer.op is Ops.STORE: rule = "hazard"
      elif (s.shape, s.dtype) in self._ctx_split: rule = "split"
    axes = rm.get(s)
    return Realized(rule, shape=_plain_shape(s), dtype=s.dtype.name, axes=tuple(axes) if isinstance(axes, list) else (),
                    consumers=tuple((c.op.name, tuple(o.op for o in self._origins(c))) for c in consumers),
                    origins=self._origins(s), rule=loc)

  def _decisions(self, rm: _RealizeMap) -> dict[int, Realized]:
    """The schedule's internal buffers by slot, each with rangeify's reason and remove_bufferize's verdict: "always"
    (not asked: never removable), "cost" (asked, and it stopped at the count of buffers), "reduce" (it went on to the
    reduce check, which kept it)."""
    lines, out = _lines(), {}
    for slot, key in self._stored.items():
      staged = self._staged.get(key)
      r = self._realized(staged[1], staged[2], rm) if staged is not None else Realized("other")
      if (asked := self._asked.get(key)) is None: kept = "always"
      elif asked[2] is None and not asked[3]: kept = "cost"
      else: kept = "reduce"
      out[slot] = Realized(r.why, kept, r.shape, r.dtype, r.axes, r.consumers, asked[1] if asked else (), asked[0] if asked else 0,
                           r.origins, r.rule, lines[kept])
    return out
