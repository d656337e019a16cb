"""Layouts kept from run to run: dot's output by its DOT text, a file each in the user's cache folder.

Re-running a script (or a notebook cell) after a small change compiles mostly the same kernels, and their pictures ask
dot for the same layouts again: a GPT step's 350 landmark SVG files are some 10 s of dot's CPU, a third of `tgviz
run`'s report. dot is deterministic, so a layout is kept under the digest of its DOT text, its output format and the
engine that made it (its path, size and date: another graphviz lays out anew).

The folder is ``$XDG_CACHE_HOME/tgviz/layouts`` (``~/.cache/tgviz/layouts``); ``TGVIZ_LAYOUT_CACHE`` names another,
or, empty, keeps none. It holds at most MAX_LAYOUTS files (those used longest ago go first; some 5 kB each,
compressed). A file each, written whole under a temporary name and renamed, so that the report's forked writers and
any other process share the folder with no lock and nothing open across a fork (SQLite's connections must not cross
one). A folder that cannot be written costs nothing but the time it would have saved: it is said once, and layouts
are made afresh; a damaged file is laid out again. Only plain text is kept (dot's positions, read back as numbers):
nothing in it runs.
"""
from __future__ import annotations

import os
import sys
import tempfile
import zlib
from pathlib import Path

MAX_LAYOUTS = 10_000
_PRUNE_EVERY = 256  # layouts kept by a process between two counts of the folder's files


def default_path() -> Path | None:
  """The folder layouts are kept in (None: none kept): TGVIZ_LAYOUT_CACHE, else the user's cache folder's."""
  if (named := os.environ.get("TGVIZ_LAYOUT_CACHE")) is not None: return Path(named).expanduser() if named else None
  return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "tgviz" / "layouts"


class LayoutStore:
  """Layouts by key (bytes) in a folder, a file each; get and put are safe from any thread and process."""

  def __init__(self, path: Path | None) -> None:
    self.path = path
    self._broken = path is None         # unusable here: nothing read or written any more
    self._kept = 0

  def get(self, key: bytes) -> str | None:
    """The layout kept under key, or None (also where its file is damaged)."""
    if self._broken: return None
    assert self.path is not None
    file = self.path / key.hex()
    try:
      out = zlib.decompress(file.read_bytes()).decode()
      os.utime(file)  # (used now: pruned last)
      return out
    except (OSError, zlib.error, UnicodeDecodeError): return None

  def put(self, key: bytes, out: str) -> None:
    """Keep a layout under key (those used longest ago let go of past MAX_LAYOUTS)."""
    if self._broken: return
    assert self.path is not None
    try:
      self.path.mkdir(parents=True, exist_ok=True)
      fd, tmp = tempfile.mkstemp(dir=self.path, prefix=".new-")
      with os.fdopen(fd, "wb") as f: f.write(zlib.compress(out.encode(), 6))
      os.replace(tmp, self.path / key.hex())
    except OSError as e:
      self._broken = True
      print(f"tgviz: layouts cannot be kept in {self.path} ({type(e).__name__}: {e}); they are made afresh. Give "
            "TGVIZ_LAYOUT_CACHE a folder you can write to (empty: none kept)", file=sys.stderr)
      return
    self._kept += 1
    if (self._kept - 1) % _PRUNE_EVERY == 0: self._prune()  # (the first time, then every so many)

  def _prune(self) -> None:
    assert self.path is not None
    files = []
    with os.scandir(self.path) as it:
      for e in it:
        try: files.append((e.stat().st_mtime_ns, e.path))
        except OSError: pass  # (let go of by another process meanwhile)
    if len(files) <= MAX_LAYOUTS: return
    for _, p in sorted(files)[:len(files) - MAX_LAYOUTS]:
      try: os.unlink(p)
      except OSError: pass
