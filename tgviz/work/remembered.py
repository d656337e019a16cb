"""Results of slow pure functions of text (or bytes), kept by a digest of their arguments, and handed between processes: a writer
forked during a capture (tgviz.report.early) highlights and links each finished kernel's code, and the report's writer takes
its results instead of doing the same work again. Owns only that memo; it knows nothing of what the functions do."""
from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from typing import Generic, TypeVar

R = TypeVar("R")


class Remembered(Generic[R]):
  """fn(*texts), computed once per distinct arguments while this process keeps the result (the `limit` latest). key(*texts)
  names a call; made() and give(key, result) hand results from one process to another."""

  def __init__(self, fn: Callable[..., R], limit: int = 256) -> None:
    self.fn, self.limit = fn, limit
    self._results: dict[str, R] = {}
    self._made: dict[str, R] = {}
    functools.update_wrapper(self, fn)

  @staticmethod
  def key(*texts: str | bytes) -> str:
    h = hashlib.sha256()
    for t in texts: h.update(t.encode() if isinstance(t, str) else t); h.update(b"\0")
    return h.hexdigest()

  def __call__(self, *texts: str | bytes) -> R:
    key = self.key(*texts)
    if (known := self._results.get(key)) is not None: return known
    result = self._results[key] = self._made[key] = self.fn(*texts)
    while len(self._results) > self.limit:
      old = next(iter(self._results))
      del self._results[old]
      self._made.pop(old, None)  # (made() is asked for only in a writer: elsewhere it would keep every result)
    return result

  def made(self) -> dict[str, R]:
    """The results computed here since the last call, by key (to give to another process)."""
    made, self._made = self._made, {}
    return made

  def give(self, key: str, result: R) -> None:
    self._results[key] = result


def remembered(limit: int = 256) -> Callable[[Callable[..., R]], Remembered[R]]:
  """A decorator: the function, Remembered."""
  return lambda fn: Remembered(fn, limit)
