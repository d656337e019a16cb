"""Work in forked processes that inherit the parent's memory (a trace, with everything it has built) instead of
receiving it pickled: :class:`Workers`, a pool (``tgviz run`` writes the report's steps and the SVG files on every
core), and :class:`Child`, one process that runs a function once, beside the parent, at a lower priority (the early
writers of tgviz.report.early).

Only on Linux, where fork is safe and cheap; elsewhere, and with no workers asked for, a pool's work runs in this
process, in order, with the same results. A worker that dies (killed, out of memory) loses nothing: what it was given is
done here instead. Owns only the processes; knows nothing of what they do.
"""
from __future__ import annotations

import gc
import multiprocessing
import os
import signal
import sys
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Generic, NoReturn, TypeVar

S = TypeVar("S")
A = TypeVar("A")
R = TypeVar("R")

MAX_WORKERS = 4                             # each worker holds its own caches: more costs memory for little time
FORKS = sys.platform == "linux"             # no fork on Windows; on macOS it is unsafe with the system's frameworks


def cores() -> int:
  """How many workers are worth starting: the cores this process may run on (at most MAX_WORKERS); 0 where fork is not
  available, or on a single core (the work then runs in this process)."""
  if not FORKS: return 0
  n = min(MAX_WORKERS, len(os.sched_getaffinity(0)))
  return n if n > 1 else 0


_state: Any = None                          # in a worker: what the parent held when it forked


def _start(state: Any) -> None:
  global _state
  _state = state
  # a worker lives as long as its pool, and the work handed out (a report's steps, pictures) makes millions of
  # short-lived objects and few cycles: the cyclic collector would only rescan them, over and over
  gc.disable()


def _call(fn: Callable[[Any, Any], Any], arg: Any) -> Any:
  return fn(_state, arg)


class Task(Generic[R]):
  """One piece of work handed to a worker (or to be done here); result() waits for it."""

  def __init__(self, future: Future | None, redo: Callable[[], R], workers: Workers | None = None):
    self._future, self._redo, self._workers = future, redo, workers

  def result(self) -> R:
    if self._future is None: return self._redo()
    try: return self._future.result()
    except BrokenProcessPool:
      if self._workers is not None and not self._workers.broken:
        self._workers.broken = True
        print("tgviz: a worker process died; its work and what was left is done in this process", file=sys.stderr)
      return self._redo()


class Workers(Generic[S]):
  """n forked processes, each holding `state` as it was when they started (at the first piece of work). fn(state, arg)
  runs in one of them: fn must be a module-level function and arg and its result picklable (they travel through a
  pipe); the state never does. n=0: everything runs in this process, lazily, in order. Use as a context manager."""

  def __init__(self, state: S, n: int):
    self.state = state
    self.broken = False                     # a worker died: what was handed out is redone here
    self._pool: ProcessPoolExecutor | None = None
    if n > 0 and FORKS:
      self._pool = ProcessPoolExecutor(n, mp_context=multiprocessing.get_context("fork"), initializer=_start, initargs=(state,))

  def submit(self, fn: Callable[[S, A], R], arg: A) -> Task[R]:
    """Start fn(state, arg) in a worker (without workers: run here when its result is asked for)."""
    def redo() -> R: return fn(self.state, arg)
    if self._pool is None: return Task(None, redo)
    # the first submit forks the workers: objects that exist now are frozen out of their collector's sight, so that
    # its passes neither scan nor copy the pages of what they inherit
    gc.freeze()
    try: future = self._pool.submit(_call, fn, arg)
    except BrokenProcessPool: return Task(None, redo)  # a worker died already (result() of its task says so)
    finally: gc.unfreeze()
    return Task(future, redo, self)

  def map(self, fn: Callable[[S, A], R], args: Iterable[A]) -> Iterator[R]:
    """fn(state, arg) for each arg, results in order; with workers, every piece starts now."""
    if self._pool is None: return (fn(self.state, a) for a in args)
    tasks = [self.submit(fn, a) for a in args]
    return (t.result() for t in tasks)

  def __enter__(self) -> Workers[S]:
    return self

  def __exit__(self, *exc: object) -> None:
    if self._pool is not None: self._pool.shutdown(wait=True, cancel_futures=True)


class Child:
  """fn() in a process forked now, at `nice` priority, that exits when fn returns (status 0) or raises (1), running no
  exit handler of this process (its buffered output, tinygrad's atexit) and holding none of its files (a pipe such as a
  compiler's stdin would otherwise stall its owner). Its cyclic garbage collector is off (see Workers). Only where
  FORKS; this process carries on at once."""

  def __init__(self, fn: Callable[[], object], nice: int = 10) -> None:
    if (pid := os.fork()) == 0: self._child(fn, nice)
    self.pid: int | None = pid

  @staticmethod
  def _child(fn: Callable[[], object], nice: int) -> NoReturn:
    status = 1
    try:
      os.closerange(3, os.sysconf("SC_OPEN_MAX"))
      gc.disable()
      os.nice(nice)
      fn()
      status = 0
    finally: os._exit(status)

  def running(self) -> bool:
    """Whether it still runs (an ended one is reaped)."""
    if self.pid is None: return False
    if os.waitpid(self.pid, os.WNOHANG)[0] == 0: return True
    self.pid = None
    return False

  def stop(self) -> None:
    """Kill it if it still runs (what it wrote stays), and reap it."""
    if self.pid is None: return
    try: os.kill(self.pid, signal.SIGKILL)
    except ProcessLookupError: pass
    os.waitpid(self.pid, 0)
    self.pid = None
