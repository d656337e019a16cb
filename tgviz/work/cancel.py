"""Cancelling background work: a token per request (:class:`Cancel`), the token of the work running on this thread
(:func:`current`), and child processes that a cancelled token kills (:func:`run_child`).

Owns only cancellation: what the work is, and what a cancelled request's caller does next, is the caller's. Imports
nothing of tgviz.
"""
from __future__ import annotations

import contextlib
import contextvars
import subprocess
import threading
from collections.abc import Iterator, Sequence


class Cancelled(Exception):
  """The work was cancelled: a newer request superseded it (see :class:`tgviz.work.threads.Worker`)."""


class Cancel:
  """One request's cancellation: cancel() marks it and kills the child processes it is waiting on (see run_child);
  work that loops can ask :meth:`check` between its pieces."""

  def __init__(self) -> None:
    self.cancelled = False
    self._lock = threading.Lock()
    self._children: set[subprocess.Popen] = set()

  def cancel(self) -> None:
    with self._lock:
      self.cancelled = True
      children = list(self._children)
    for p in children: p.kill()

  def check(self) -> None:
    """Raise Cancelled if the request was cancelled."""
    if self.cancelled: raise Cancelled("cancelled: a newer request superseded it")

  @contextlib.contextmanager
  def holding(self, child: subprocess.Popen) -> Iterator[None]:
    """While in the block, cancel() kills child (at once, if the request was cancelled already)."""
    with self._lock:
      self._children.add(child)
      if self.cancelled: child.kill()
    try: yield
    finally:
      with self._lock: self._children.discard(child)


_current: contextvars.ContextVar[Cancel | None] = contextvars.ContextVar("tgviz_cancel", default=None)


def current() -> Cancel | None:
  """The token of the request running on this thread (None outside a Worker's request)."""
  return _current.get()


@contextlib.contextmanager
def under(token: Cancel) -> Iterator[Cancel]:
  """Run the block as the request of token: current() gives it there."""
  reset = _current.set(token)
  try: yield token
  finally: _current.reset(reset)


def run_child(args: Sequence[str], text: str, timeout: float | None) -> tuple[int, str, str]:
  """Run a child process on text (its stdin) and give (return code, stdout, stderr). Past timeout seconds it is killed
  and TimeoutError raised; when the current request (current()) is cancelled meanwhile, it is killed and Cancelled
  raised."""
  token = current()
  with subprocess.Popen(list(args), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc, \
       token.holding(proc) if token is not None else contextlib.nullcontext():
    try: out, err = proc.communicate(text, timeout=timeout)
    except subprocess.TimeoutExpired:
      proc.kill()
      proc.communicate()
      raise TimeoutError(f"took longer than {timeout:.0f} s") from None
  if token is not None and token.cancelled: raise Cancelled("cancelled: a newer request superseded it")
  return proc.returncode, out, err
