"""The patches a capture puts on tinygrad, one class per patch, each a Patch: entered and undone exactly once.

Owns: what each graph_rewrite returned (StepRecorder), light call stacks (StackRecorder), which UOps each rendered line
comes from (LineRecorder), each launch's device time (KernelTimer), and source-only compilers for NULL devices.
It must not decide when they are entered (that is capture.Tracker's job) nor build records from what they recorded.
"""
from __future__ import annotations

import functools
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from tinygrad import helpers, schedule, tensor
from tinygrad.uop import ops
from tinygrad.uop.ops import Ops, RewriteContext, UOp

_ABSENT = object()


class Patch:
  """Sets attributes of tinygrad's classes or modules for a block, and puts back exactly what was there (an attribute a
  class only inherited is removed again). What it set before an error on entry is undone at once; an error putting
  one attribute back still puts back the others, then raises."""

  def patches(self) -> list[tuple[Any, dict[str, Any]]]:
    """(class or module, {attribute: value while patched}) pairs, set in order."""
    raise NotImplementedError

  def __enter__(self) -> Patch:
    self._undo: list[tuple[Any, str, Any]] = []
    try:
      for target, attrs in self.patches():
        for name, value in attrs.items():
          old = vars(target).get(name, _ABSENT)
          setattr(target, name, value)
          self._undo.append((target, name, old))
    except BaseException:
      self._restore()
      raise
    return self

  def __exit__(self, *exc: object) -> None:
    self._restore()

  def _restore(self) -> None:
    error: BaseException | None = None
    while self._undo:
      target, name, old = self._undo.pop()
      try:
        if old is _ABSENT: delattr(target, name)
        else: setattr(target, name, old)
      except BaseException as e: error = error or e
    if error is not None: raise error


def _all_subclasses(cls: type) -> list[type]:
  out = []
  for sub in cls.__subclasses__(): out += [sub, *_all_subclasses(sub)]
  return out


class SourceOnlyCompilers(Patch):
  """For NULL:<renderer> captures: a renderer whose compiler library is missing here (nvrtc, comgr, ...) still renders
  its source; compiling becomes a no-op, since the NULL device never runs the binary."""

  def patches(self) -> list[tuple[Any, dict[str, Any]]]:
    import tinygrad.runtime.support.compiler_amd
    import tinygrad.runtime.support.compiler_cuda  # noqa: F401
    from tinygrad.device import Compiler
    return [(c, {"__init__": self._tolerant(c.__dict__["__init__"], Compiler)}) for c in _all_subclasses(Compiler) if "__init__" in c.__dict__]

  @staticmethod
  def _tolerant(init, base):
    def __init__(self, *args, **kwargs):
      try: init(self, *args, **kwargs)
      except Exception as e:
        base.__init__(self, None)
        self.compile = lambda src: src.encode()
        self.tgviz_missing = f"{type(self).__name__} unavailable ({e}); source rendered, not compiled"
    return __init__


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


class LineRecorder(Patch):
  """Records, while tinygrad's C-style renderers (CStyleLanguage: OpenCL, CPU/clang, CUDA, HIP, Metal, WGSL) render, which
  UOps each line of a kernel's source comes from: the UOp the renderer wrote the line for, plus the UOps inlined into it
  (CStyleLanguage._render writes one line per UOp it does not inline; it inlines one whose table entry is the very text
  rendered for it). Kernel parameters and the kernel's SINK belong to the signature line; a UOp written into no line
  (a GROUP, a NOOP) to the lines of its users. ``lines``: source -> per line, the trace numbers of its UOps."""

  def __init__(self) -> None:
    self.lines: dict[str, list[tuple[int, ...]]] = {}

  def patches(self) -> list[tuple[Any, dict[str, Any]]]:
    from tinygrad.renderer.cstyle import CStyleLanguage
    recorder, orig_render, orig_full = self, CStyleLanguage._render, CStyleLanguage.render
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
    return [(CStyleLanguage, {"_render": _render, "render": render})]


def _map_lines(src: str, uops: list[UOp], log: list[tuple[UOp, str]], names: dict, body: list[str]) -> list[tuple[int, ...]]:
  """Per line of src, the trace numbers of the UOps behind it (see LineRecorder)."""
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


@functools.cache
def _waiting(exec_context: type) -> type:
  """run_linear's context with every launch waiting and returning its time (made once: a dataclass costs 0.5 ms)."""
  @dataclass
  class Waiting(exec_context):  # type: ignore[valid-type,misc]
    def __post_init__(self): self.wait = True
  return Waiting


class KernelTimer(Patch):
  """Records the device run time of every kernel launch in a block, as tinygrad measures it for DEBUG=2: a launch that
  waits for completion returns its time from the device's own profiling (OpenCL's profiling event start and end, HCQ
  timestamps). Inside the block every launch waits; that changes when a kernel finishes, never what it computes.
  ``runs``: the key of the kernel's SOURCE UOp -> seconds of each launch."""

  def __init__(self) -> None:
    self.runs: dict[bytes, list[float]] = {}

  def patches(self) -> list[tuple[Any, dict[str, Any]]]:
    from tinygrad.engine import realize
    exec_context, track_stats, runs = realize.ExecContext, realize.track_stats, self.runs

    def timed(ctx, call, st, ets):
      src = next((s for s in call.src[0].src if s.op is Ops.SOURCE), None) if call.src[0].op is Ops.PROGRAM else None
      # a NULL device runs nothing and reports a made-up time (1 ms): no time is better than a wrong one
      if src is not None and not any(str(dev).split(":")[0] == "NULL" for dev, _ in realize.get_call_kernels(call)) \
         and (times := [t for t in ets if t is not None]):
        runs.setdefault(src.key, []).extend(times)
      return track_stats(ctx, call, st, ets)

    return [(realize, {"ExecContext": _waiting(exec_context), "track_stats": timed})]



class RewriteWatcher(Protocol):
  """What StepRecorder tells of each tracked rewrite (origins.OriginRecorder): one that walked its graph (also an untracked
  one nested in it, tracked=False), or one without patterns that returned its input (seen)."""

  def rewritten(self, rctx: RewriteContext, root: UOp, tracked: bool = True) -> None: ...
  def seen(self, root: UOp) -> bool: ...


class StepRecorder(Patch):
  """What each tracked graph_rewrite returned (``io``: id(step) -> a weak reference: a UOp kept here would keep its graph
  and Buffers alive while the capture runs), and the op metadata each rewrite carries over (origins). A rewrite without
  patterns (tinygrad's "View ..." snapshots) returns its input without walking the graph."""

  def __init__(self, origins: RewriteWatcher) -> None:
    self.io: dict[int, weakref.ref[UOp]] = {}
    self.origins = origins
    self.quiet: Callable[[], None] | None = None  # called as each outermost tracked rewrite's walk ends (Tracker.quiet)

  def patches(self) -> list[tuple[Any, dict[str, Any]]]:
    return [(RewriteContext, {"unified_rewrite": self._recording(RewriteContext.unified_rewrite),
                              "walk_rewrite": self._recording(RewriteContext.walk_rewrite)})]

  def _recording(self, method):
    io, origins = self.io, self.origins
    def wrapped(rctx, root, *args, **kwargs):
      tracked = ops.TRACK_MATCH_STATS.value >= 2 and ops.active_rewrites
      step = ops.active_rewrites[-1] if tracked else None
      empty = (rctx.pm is None or not rctx.pm.patterns) and (rctx.bpm is None or not rctx.bpm.patterns)
      ret = root if empty else method(rctx, root, *args, **kwargs)
      # (id(step) is stable: ops.tracked_ctxs holds every step until the capture ends)
      if step is not None and id(step) not in io: io[id(step)] = weakref.ref(ret)
      # an untracked rewrite inside a tracked one (tinygrad's unnamed substitutes: remove_bufferize putting a buffer's
      # value into its reader) rebuilds UOps too: the watcher decides which it follows
      if not empty and (tracked or ops.active_rewrites): origins.rewritten(rctx, root, tracked=bool(tracked))
      elif tracked: origins.seen(root)
      if tracked and self.quiet is not None and len(ops.active_rewrites) == 1: self.quiet()
      return ret
    wrapped.__wrapped__ = method
    return wrapped


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



class StackRecorder(Patch):
  """Under VIZ every TracingKey takes the stack with its source text, also the many only tinygrad's profiler would show;
  without the profiler only the groups' stacks are kept (_frames), and their text is read at the end (records._stack)."""

  def patches(self) -> list[tuple[Any, dict[str, Any]]]:
    return [] if helpers.PROFILE else [(helpers, {"get_stacktrace": _frames})]
