"""Background threads with a bound: :class:`Worker` runs requests on a few threads, in order, a newer request of a
kind superseding the older (the widgets' "latest request wins"), with a bound on what waits and a clean shutdown.

Owns only the threads and the queue; each request runs under its own :class:`tgviz.work.cancel.Cancel` token, which a
superseding request cancels.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import TypeVar

from tgviz.work.cancel import Cancel, Cancelled, under

R = TypeVar("R")


class Busy(RuntimeError):
  """Too many requests are waiting already."""


class Worker:
  """`threads` background threads (one: requests run one at a time, in order). submit(fn, kind, key) runs fn() on one
  of them under a token of its own; a newer request of the same kind supersedes it: dropped if it has not started, its
  token cancelled if it runs (fn sees it through tgviz.work.cancel: a child process it waits on is killed). Requests
  without a kind all run; key (what a request asks for) is what under_way compares. At most `bound` requests wait
  (None: no bound, for work whose amount the caller bounds); past it, submit raises Busy. Use as a context manager, or call shutdown()."""

  def __init__(self, name: str, threads: int = 1, bound: int | None = 16) -> None:
    self.bound = bound
    self._pool = ThreadPoolExecutor(threads, thread_name_prefix=name)
    self._lock = threading.RLock()  # (a future cancelled under it calls _ended at once, which takes it too)
    self._latest: dict[str, tuple[Future, Cancel, object]] = {}  # by kind: the latest request's future, token and key
    self._waiting = 0
    self._open: set[Future] = set()   # every request not ended yet

  def submit(self, fn: Callable[[], R], kind: str | None = None, key: object = None) -> Future[R]:
    token = Cancel()
    with self._lock:
      if kind is not None and (older := self._latest.pop(kind, None)) is not None:
        if older[0].cancel(): self._waiting -= 1   # not started: dropped
        older[1].cancel()
      if self.bound is not None and self._waiting >= self.bound:
        raise Busy(f"{self._waiting} requests are waiting already: try again when they are done")
      self._waiting += 1
      future = self._pool.submit(self._run, fn, token)
      if kind is not None: self._latest[kind] = (future, token, key)
      self._open.add(future)
    future.add_done_callback(self._ended)
    return future

  def under_way(self, kind: str, key: object) -> bool:
    """Whether the latest request of kind asks for key and has not ended (a request asked again, no answer having come,
    is left to answer rather than started over)."""
    with self._lock: latest = self._latest.get(kind)
    return latest is not None and latest[2] == key and not latest[0].done()

  def _ended(self, future: Future) -> None:
    with self._lock: self._open.discard(future)

  def drain(self, timeout: float | None = None) -> bool:
    """Wait until every request submitted so far has ended (answered, superseded or failed); False past timeout."""
    with self._lock: pending = list(self._open)
    return not wait(pending, timeout).not_done

  def _run(self, fn: Callable[[], R], token: Cancel) -> R:
    with self._lock: self._waiting -= 1
    if token.cancelled: raise Cancelled("cancelled before it started")
    with under(token): return fn()

  def shutdown(self, wait: bool = True, drop: bool = True) -> None:
    """Drop what has not started and cancel what runs (drop=False: let every request run), and (wait) let it end."""
    if drop:
      with self._lock:
        for _, token, _ in self._latest.values(): token.cancel()
    self._pool.shutdown(wait=wait, cancel_futures=drop)

  def __enter__(self) -> Worker:
    return self

  def __exit__(self, *exc: object) -> None:
    self.shutdown()
