"""Layouts kept from run to run: dot's output by its DOT text, in an SQLite file under the user's cache folder.

Re-running a script (or a notebook cell) after a small change compiles mostly the same kernels, and their pictures ask
dot for the same layouts again: a GPT step's 350 landmark SVG files are some 10 s of dot's CPU, a third of `tgviz
run`'s report. dot is deterministic, so a layout is kept under the digest of its DOT text, its output format and the
engine that made it (its path, size and date: another graphviz lays out anew).

The file is ``$XDG_CACHE_HOME/tgviz/layouts.db`` (``~/.cache/tgviz/layouts.db``); ``TGVIZ_LAYOUT_CACHE`` names another,
or, empty, keeps none. It holds at most MAX_LAYOUTS (the oldest go first; some 5 kB each, compressed). A file that
cannot be read or written costs nothing but the time it would have saved: it is said once, and layouts are made
afresh. Only plain text is stored (dot's positions, read back as numbers): nothing in it runs. Each process opens its
own connection (the report's forked writers share the file, not a connection); its threads share that one.
"""
from __future__ import annotations

import os
import sqlite3
import sys
import threading
import zlib
from pathlib import Path

MAX_LAYOUTS = 10_000
_PRUNE_EVERY = 256  # layouts stored by a process between two checks of the file's size


def default_path() -> Path | None:
  """The file layouts are kept in (None: none kept): TGVIZ_LAYOUT_CACHE, else the user's cache folder's."""
  if (named := os.environ.get("TGVIZ_LAYOUT_CACHE")) is not None: return Path(named).expanduser() if named else None
  return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "tgviz" / "layouts.db"


class LayoutStore:
  """Layouts by key (bytes) in an SQLite file; get and put are safe from any thread and in any forked process."""

  def __init__(self, path: Path | None) -> None:
    self.path = path
    self._lock = threading.Lock()
    self._db: sqlite3.Connection | None = None
    self._pid = 0                       # the process self._db was opened in
    self._broken = path is None         # unusable here: nothing read or written any more
    self._stored = 0

  def get(self, key: bytes) -> str | None:
    """The layout kept under key, or None."""
    with self._lock:
      if (db := self._open()) is None: return None
      try: row = db.execute("SELECT out FROM layouts WHERE key = ?", (key,)).fetchone()
      except sqlite3.Error as e:
        self._fail(e)
        return None
    return zlib.decompress(row[0]).decode() if row is not None else None

  def put(self, key: bytes, out: str) -> None:
    """Keep a layout under key (the oldest let go of past MAX_LAYOUTS)."""
    blob = zlib.compress(out.encode(), 6)
    with self._lock:
      if (db := self._open()) is None: return
      try:
        db.execute("INSERT OR REPLACE INTO layouts (key, out) VALUES (?, ?)", (key, blob))
        self._stored += 1
        if (self._stored - 1) % _PRUNE_EVERY == 0:  # (the first time, then every so many)
          db.execute("DELETE FROM layouts WHERE rowid <= (SELECT MAX(rowid) FROM layouts) - ?", (MAX_LAYOUTS,))
      except sqlite3.Error as e: self._fail(e)

  def _open(self) -> sqlite3.Connection | None:
    if self._broken: return None
    if self._db is not None and self._pid == os.getpid(): return self._db
    assert self.path is not None
    try:
      self.path.parent.mkdir(parents=True, exist_ok=True)
      # (a connection made before a fork is the parent's: a forked writer opens its own; each statement commits)
      db = sqlite3.connect(self.path, timeout=10, check_same_thread=False, isolation_level=None)
      db.execute("PRAGMA journal_mode=WAL")  # readers do not wait for a writer
      db.execute("CREATE TABLE IF NOT EXISTS layouts (key BLOB PRIMARY KEY, out BLOB NOT NULL)")
    except (sqlite3.Error, OSError) as e:
      self._fail(e)
      return None
    self._db, self._pid = db, os.getpid()
    return db

  def _fail(self, e: Exception) -> None:
    self._broken = True
    print(f"tgviz: the layout cache {self.path} cannot be used ({type(e).__name__}: {e}); layouts are made afresh. "
          "Remove the file, or set TGVIZ_LAYOUT_CACHE to another file (empty: none)", file=sys.stderr)
