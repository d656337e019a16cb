"""Compiles in tinygrad's worker pool, traced: with PARALLEL of 3 or more a capture compiles its kernels in tinygrad's
compile workers as a plain run does (below that, in its own process: see POOL_FROM); each worker records its kernel's
rewrites as the capture would have, and the capture merges what the workers recorded in task order, so the trace is
the one a PARALLEL=0 capture gives.

Owns: ParallelCompiles (the capture's patch: the pool lower_and_compile gets runs traced_compile, and each task's records
are merged), traced_compile (one task in a worker: tgviz's recorders on around tinygrad's own _compile_kernel, what they
recorded returned as plain data; MissRecorder) and the merge, which also takes the workers' results of tinygrad's cached
rewriting helpers into the capture's caches. The workers stay tinygrad's: a task puts its patches on and takes them all off again, so between
tasks and after the capture the pool is the plain kind. It must not decide when it is entered (capture.Tracker does).
"""
from __future__ import annotations

import gc
import importlib
import itertools
import sys
import types
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from multiprocessing.pool import ExceptionWithTraceback  # type: ignore[attr-defined]  # (the pool's own, untyped)
from typing import Any

from tinygrad import helpers
from tinygrad.codegen import to_program_cache
from tinygrad.engine import realize, worker
from tinygrad.helpers import Context, TracingKey
from tinygrad.renderer import Renderer
from tinygrad.uop import ops
from tinygrad.uop.ops import TrackedGraphRewrite, UOp, UOpMetaClass

from tgviz.bridge.attempts import MatchRecorder, PatternStats
from tgviz.bridge.opts import OptStepRecorder
from tgviz.bridge.origins import OriginRecorder
from tgviz.bridge.recorders import LineRecorder, Patch, StackRecorder, StepRecorder

# PARALLEL below this compiles in the capture's own process. A pool of 2 (tinygrad's default on 2 cores) gains nothing
# there: its workers start (and import tinygrad) as the run goes, beside a capture that keeps one core busy; the
# ResNet step, PARALLEL=0 against 2 on 2 cores: plain 5.1 s against 7.1, captured 6.0 s against 9.4
POOL_FROM = 3
_TRACE_NUM = "_RECURSIVE_PROPERTY_trace_num"
_MAX_FRAMES = 30                            # tinygrad's get_stacktrace keeps this many
_OUTSIDE = 0                                # a task's first group: rewrites outside any of tinygrad's groups land there
# a task numbers the UOps it makes from a block of its own, far above the numbers the capture's process gives: a task's
# table joins the capture's as it is, its sources (its own, or the AST's, numbered here) still below their users
_BLOCK = 1 << 32
_BLOCKS = itertools.count(1 << 8)


@dataclass
class TaskRecord:
  """What one compile task recorded, numbered as the capture's table: tinygrad's tracked groups (a kernel's renderer
  left out, ``kernel`` says which) and steps, the UOps the task made, what each step returned (by group and step
  index), the lines each rendered source maps to, the opts' steps, the rewriting helpers' misses (MissRecorder), and
  each pattern's attempts (MatchRecorder.stats)."""
  keys: list[TracingKey]
  kernel: list[bool]
  ctxs: list[list[TrackedGraphRewrite]]
  fields: dict[int, tuple]
  out: dict[tuple[int, int], int]
  lines: dict[str, list[tuple[int, ...]]]
  opt_steps: dict[int, list]
  calls: list[list]
  patterns: dict[tuple[str, int], PatternStats] = field(default_factory=dict)


class TaskTables(Patch):
  """tinygrad's tracking tables, fresh for one task, and its UOp numbers from the task's own block; the AST's nodes keep
  the numbers the capture gave them. On exit the numbers the worker's live UOps cache are dropped again."""

  def __init__(self, ast: UOp, numbers: list[int], first: int) -> None:
    self.ast, self.numbers, self.first = ast, numbers, first
    self.keys: list[TracingKey] = []
    self.ctxs: list[list] = []
    self.fields: dict[int, tuple] = {}

  def patches(self) -> list[tuple[Any, dict[str, Any]]]:
    return [(ops, {"tracked_keys": self.keys, "tracked_ctxs": self.ctxs, "uop_fields": self.fields, "_name_cnt": {},
                   "active_group": [], "active_rewrites": [], "ucount": itertools.count(self.first)})]

  def __enter__(self) -> TaskTables:
    super().__enter__()
    try:
      for u, n in zip(self.ast.toposort(), self.numbers, strict=True): u.__dict__[_TRACE_NUM] = n
    except BaseException:
      self.__exit__()
      raise
    return self

  def __exit__(self, *exc: object) -> None:
    try: super().__exit__(*exc)
    finally:
      for ref in list(UOpMetaClass.ucache.values()):
        if (u := ref()) is not None: u.__dict__.pop(_TRACE_NUM, None)


def _shim(*args: Any, _tgviz_miss: Any = None, **kwargs: Any) -> Any:
  """The code a cached helper runs while MissRecorder watches it: its miss handed to the recorder."""
  return _tgviz_miss(args, kwargs)


def _cache_key(args: tuple, kwargs: dict) -> Any:
  """The key functools' C cache stores a call's result under (None: a call with keywords, not followed)."""
  if kwargs: return None
  return args[0] if len(args) == 1 and type(args[0]) in (int, str) else args


def cache_dict(cache: Any) -> dict | None:
  """The dict an unbounded functools cache (functools.cache) keeps its results in, by _cache_key; None for a bounded one
  (its dict holds the links of its LRU list)."""
  if cache.cache_parameters()["maxsize"] is not None: return None
  return next((d for d in gc.get_referents(cache) if type(d) is dict and d is not cache.__dict__), None)


class MissRecorder:
  """In a compile worker, for one task: tinygrad's caches of helpers that run graph rewrites emptied, and each miss noted
  (the function the cache calls runs _shim's code meanwhile: the module globals that name the cache, which tinygrad's
  compiled patterns copy, are left alone), as a tree of [cache index, key, result, group, first step, end step, inner
  misses] in ``calls``."""

  def __init__(self, caches: list[Any]) -> None:
    self.caches = caches
    self.calls: list[list] = []
    self._open: list[list] = []              # the misses running now, innermost last
    self._undo: list[tuple[Any, Any, Any]] = []

  def __enter__(self) -> MissRecorder:
    try:
      for i, cache in enumerate(self.caches):
        cache.cache_clear()
        fn = cache.__wrapped__
        if cache_dict(cache) is None or not isinstance(fn, types.FunctionType) or fn.__closure__ is not None: continue
        own = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__)
        own.__kwdefaults__ = fn.__kwdefaults__
        self._undo.append((fn, fn.__code__, fn.__kwdefaults__))
        fn.__code__, fn.__kwdefaults__ = _shim.__code__, {"_tgviz_miss": self._miss(i, own)}
    except BaseException:
      self.__exit__()
      raise
    return self

  def __exit__(self, *exc: object) -> None:
    while self._undo:
      fn, code, kwdefaults = self._undo.pop()
      fn.__code__, fn.__kwdefaults__ = code, kwdefaults

  def _miss(self, i: int, fn: Any) -> Any:
    opened = self._open
    def miss(args: tuple, kwargs: dict) -> Any:
      if (key := _cache_key(args, kwargs)) is None: return fn(*args, **kwargs)
      g = ops.active_group[-1] if ops.active_group else len(ops.tracked_ctxs) - 1
      call = [i, key, None, g, len(ops.tracked_ctxs[g]), 0, []]
      opened.append(call)
      try: call[2] = fn(*args, **kwargs)
      finally: opened.pop()
      call[5] = len(ops.tracked_ctxs[g])
      (opened[-1][6] if opened else self.calls).append(call)
      return call[2]
    return miss


Job = tuple[tuple[int, tuple[UOp, Renderer], dict], list[tuple[str, str]], list[int], int]


def traced_compile(job: Job) -> tuple[int, UOp | None, TaskRecord, Any]:
  """One of lower_and_compile's tasks (with the rewriting helpers' names, the numbers of the AST's nodes in toposort
  order and the first number of the task's block), run in a worker under tgviz's recorders: (index, program or None,
  what it recorded, the error it raised or None). Like the capture, a task starts from empty caches: tinygrad's program
  cache (the worker's may hold this kernel from before) and the rewriting helpers' (MissRecorder)."""
  task, names, numbers, first = job
  to_program_cache.clear()
  ast, renderer = task[1]
  tables, lines, opts = TaskTables(ast, numbers, first), LineRecorder(), OptStepRecorder()
  calls = MissRecorder([getattr(importlib.import_module(module), name) for module, name in names])
  steps = StepRecorder(OriginRecorder())     # (a kernel's origins are the capture's to find: it saw the lines that made them)
  prg, error, matches = None, None, MatchRecorder()
  with ExitStack() as stack:
    for patch in (tables, matches, steps, Context(TRACK_MATCH_STATS=2, VIZ=-1), StackRecorder(), lines, opts, calls):
      stack.enter_context(patch)
    ops.add_trace_group(TracingKey("outside", tb=None))
    try: prg = realize._compile_kernel(task)[1]
    except Exception as e: error = ExceptionWithTraceback(e, e.__traceback__)
    out = {(g, k): u.trace_num for g, group in enumerate(tables.ctxs) for k, s in enumerate(group)
           if (ref := steps.io.get(id(s))) is not None and (u := ref()) is not None}
    kernel = [key.ret is renderer for key in tables.keys]
    keys = [replace(key, ret=None) if is_kernel else key for key, is_kernel in zip(tables.keys, kernel, strict=True)]
    record = TaskRecord(keys, kernel, tables.ctxs, tables.fields, out, lines.lines, opts.steps, calls.calls, matches.stats())
  return task[0], prg, record, error


class _TracedPool:
  """The pool lower_and_compile gets inside a capture: its compile tasks run traced_compile in tinygrad's pool, in task
  order, each task's records merged before its program is handed on."""

  def __init__(self, pool: Any, parallel: ParallelCompiles) -> None:
    self.pool, self.parallel = pool, parallel

  def imap_unordered(self, func: Any, tasks: Any) -> Any:
    if func is not realize._compile_kernel: return self.pool.imap_unordered(func, tasks)
    todo = list(tasks)
    # the stack of a PARALLEL=0 compile outside _compile_kernel: lower_and_compile's frame and those calling it
    outer = helpers.get_stacktrace(sys._getframe(0)) or ()
    asts = [list(t[1][0].toposort()) for t in todo]
    jobs = [(t, self.parallel.names, [u.trace_num for u in ast], _BLOCK * next(_BLOCKS)) for t, ast in zip(todo, asts, strict=True)]
    return self._merged(todo, asts, self.pool.imap(traced_compile, jobs), outer)

  def _merged(self, todo: list, asts: list[list[UOp]], results: Any, outer: tuple) -> Any:
    for i, prg, record, error in results:
      self.parallel.merge(record, asts[i], todo[i][1][1], outer)
      if error is not None: raise error
      yield i, prg


class ParallelCompiles(Patch):
  """While a capture runs, the worker pool lower_and_compile compiles in (PARALLEL >= POOL_FROM, several kernels, no BEAM) runs
  traced_compile, and each task's records join the capture's tables in task order: groups and steps appended as
  tinygrad appends them, but for the steps of a helper's call that would have been a cache hit here (see _hits); the
  task's UOps into the capture's table; outputs in ``out`` (id(step) -> trace number), lines, origins and opts' steps in
  the recorders the capture hands over, the patterns' attempts in ``patterns``. ``caches``: tinygrad's caches of helpers
  that run graph rewrites. ``serial``: compile in the capture's own process instead (as PARALLEL=0)."""

  def __init__(self, origins: OriginRecorder, lines: LineRecorder, opts: OptStepRecorder, caches: list[Any]) -> None:
    self.origins, self.lines, self.opts, self.serial = origins, lines, opts, False
    self.caches, self.names = caches, [(c.__module__, c.__name__) for c in caches]  # how a worker finds them
    self.out: dict[int, int] = {}
    self.patterns: dict[tuple[str, int], PatternStats] = {}

  def patches(self) -> list[tuple[Any, dict[str, Any]]]:
    return [(realize, {"get_worker_pool": self._pool})]

  def _pool(self) -> _TracedPool | None:
    if self.serial or helpers.PARALLEL.value < POOL_FROM or (pool := worker.get_worker_pool()) is None: return None
    return _TracedPool(pool, self)

  def merge(self, rec: TaskRecord, ast: list[UOp], renderer: Renderer, outer: tuple) -> None:
    """One task's records (its AST's nodes in toposort order, its renderer) into the capture's tables, as if the task had
    run here."""
    ops.uop_fields.update(rec.fields)
    hidden, depth = self._hits(rec.calls), len(ops.active_rewrites)
    for g, (key, kernel, steps) in enumerate(zip(rec.keys, rec.kernel, rec.ctxs, strict=True)):
      if g == _OUTSIDE:
        if not steps: continue
        dest = ops.active_group[-1] if ops.active_group else len(ops.tracked_ctxs) - 1
      else:
        ops.add_trace_group(replace(key, ret=renderer if kernel else key.ret, tb=_joined(key.tb, outer)))
        dest = len(ops.tracked_ctxs) - 1
      group, gone = ops.tracked_ctxs[dest], hidden.get(g, set())
      index = []                              # the task's step index -> its index here (a hidden step's: the next one's)
      for k, s in enumerate(steps):
        index.append(len(group))
        if k in gone: continue
        group.append(step := replace(s, depth=s.depth + depth) if depth else s)
        if (o := rec.out.get((g, k))) is not None: self.out[id(step)] = o
      index.append(len(group))
      # the graph a kernel's group starts from is its AST, whose origins are found here
      root = next((s.sink for k, s in enumerate(steps) if k not in gone), None)
      if g != _OUTSIDE and (u := next((u for u in ast if root is not None and u.trace_num == root), None)) is not None:
        self.origins.note(dest, u)
      if g in rec.opt_steps: self.opts.steps.setdefault(dest, []).extend((o, index[k]) for o, k in rec.opt_steps[g])
    self.lines.lines.update(rec.lines)
    for loc, st in rec.patterns.items():
      if (have := self.patterns.get(loc)) is None: self.patterns[loc] = st
      else: have.add(st)

  def _hits(self, calls: list[list]) -> dict[int, set[int]]:
    """A task's helper calls taken in order against the capture's caches: a call already cached here would have been a
    hit, its steps (its inner calls' too) never made (group -> step indices); a miss is cached here, and its inner calls
    taken in turn."""
    hidden: dict[int, set[int]] = {}
    dicts = [cache_dict(c) for c in self.caches]
    todo = list(reversed(calls))
    while todo:
      i, key, result, g, start, end, inner = todo.pop()
      if (results := dicts[i]) is None: continue
      if key in results: hidden.setdefault(g, set()).update(range(start, end))
      else:
        results[key] = result
        todo.extend(reversed(inner))
    return hidden


def _joined(tb: tuple[tuple, ...] | None, outer: tuple) -> tuple[tuple, ...] | None:
  """A worker's stack, from its innermost frame to _compile_kernel's, then the capture's own from lower_and_compile out:
  the stack a PARALLEL=0 compile has (cut at as many frames)."""
  if tb is None: return None
  inner = next((i for i, f in enumerate(tb) if f[2] == "_compile_kernel" and f[0] == realize.__file__), None)
  if inner is None: return tb
  return (*tb[:inner + 1], *outer)[:_MAX_FRAMES]
