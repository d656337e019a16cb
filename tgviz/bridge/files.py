"""Saving and opening trace files: tgviz's own and tinygrad's rewrites.pkl.

Owns: the file format (a gzip of a pickled header, then the records and the UOp table), its version checks, and
pointing a trace's tinygrad source locations at this machine's tinygrad. It must not capture anything; what it reads
is a Recording like any capture's.
"""
from __future__ import annotations

import functools
import gzip
import os
import pickle
from typing import Any

from tinygrad.helpers import Context
from tinygrad.uop import ops

from tgviz.bridge.env import SUPPORTED_TINYGRAD
from tgviz.bridge.records import GroupRecord, Recording, groups_from

TRACE_FORMAT, TRACE_VERSION = "tgviz-trace", 2
_READS_VERSIONS = (1, 2)                    # version 1 had no source lines
_GZIP_MAGIC = b"\x1f\x8b"


class TraceFileError(ValueError):
  """A file tgviz cannot open as a trace: not a trace, or one saved for another file format or tinygrad version."""


def save_recording(path: str | os.PathLike, rec: Recording, meta: dict[str, Any]) -> None:
  """Write rec to path: gzip of a pickled header (format, version, tinygrad version and meta), then the records and the
  UOp table (plain fields, as tinygrad's VIZ pickles them) and the rendered lines' UOps; the kernels' run times in the header."""
  header = {"format": TRACE_FORMAT, "version": TRACE_VERSION, "tinygrad": SUPPORTED_TINYGRAD, "runs": rec.runs, **meta}
  try: body = pickle.dumps((rec.groups, rec.uop_fields, rec.lines), protocol=pickle.HIGHEST_PROTOCOL)
  except Exception as e: raise TraceFileError(f"this trace cannot be saved: {type(e).__name__}: {e}") from e
  with gzip.open(path, "wb", compresslevel=6) as f:
    pickle.dump(header, f, protocol=pickle.HIGHEST_PROTOCOL)
    f.write(body)


def load_recording(path: str | os.PathLike) -> tuple[Recording, dict[str, Any]]:
  """Read a trace file: one saved by tgviz (see save_recording), or tinygrad's own tracking dump, the rewrites.pkl that
  ``VIZ=-1`` (or TRACK_MATCH_STATS=2) writes at exit. Returns the recording and the header's meta (device, error,
  traceback). Unpickling runs code: open only files you trust. Raises TraceFileError for anything else, OSError when the
  file cannot be read."""
  with open(path, "rb") as f: magic = f.read(2)
  if magic == _GZIP_MAGIC: return _load_saved(path)
  try:
    with open(path, "rb") as f, Context(DEBUG=0): obj = pickle.load(f)  # unpickling may load libraries (as VIZ's loader)
  except Exception as e:
    raise TraceFileError(f"{path} is neither a tgviz trace nor tinygrad's rewrites.pkl "
                         f"(or one written by a tinygrad other than {SUPPORTED_TINYGRAD}): {type(e).__name__}: {e}") from e
  if not isinstance(obj, ops.RewriteTrace):
    raise TraceFileError(f"{path} holds a pickled {type(obj).__name__}, not a tgviz trace or tinygrad's rewrites.pkl")
  try: groups = groups_from(obj.keys, obj.rewrites, {})
  except Exception as e:
    raise TraceFileError(f"{path} is a tinygrad rewrites.pkl tgviz cannot read (tgviz reads those of tinygrad {SUPPORTED_TINYGRAD}): "
                         f"{type(e).__name__}: {e}") from e
  device = ", ".join(dict.fromkeys(g.device for g in groups if g.device)) or "unknown device"
  return Recording(relocated(groups), obj.uop_fields), {"device": f"{device} (tinygrad's rewrites.pkl)"}


def _load_saved(path: str | os.PathLike) -> tuple[Recording, dict[str, Any]]:
  try:
    with gzip.open(path, "rb") as f:
      try: header = pickle.load(f)
      except Exception: header = None
      if not isinstance(header, dict) or header.get("format") != TRACE_FORMAT:
        raise TraceFileError(f"{path} is a gzip file but not a tgviz trace")
      if (v := header.get("version")) not in _READS_VERSIONS:
        raise TraceFileError(f"{path} is a tgviz trace in file format version {v}; this tgviz reads version {TRACE_VERSION}: "
                             f"open it with the tgviz that saved it")
      if (tv := header.get("tinygrad")) != SUPPORTED_TINYGRAD:
        raise TraceFileError(f"{path} was saved with tinygrad {tv}; this tgviz reads traces of tinygrad {SUPPORTED_TINYGRAD} "
                             f"(its graphs are tinygrad UOps): open it where tinygrad=={tv} and a tgviz for it are installed")
      with Context(DEBUG=0): body = pickle.load(f)
      if not isinstance(body, tuple) or len(body) != (2 if v == 1 else 3): raise ValueError("unexpected contents")
      groups, fields, *lines = body
  except TraceFileError: raise
  except Exception as e: raise TraceFileError(f"{path} is not a readable tgviz trace: {type(e).__name__}: {e}") from e
  meta = {k: v for k, v in header.items() if k not in ("format", "version", "tinygrad", "runs")}
  return Recording(relocated(groups), fields, lines[0] if lines else None, header.get("runs")), meta


def relocated(groups: list[GroupRecord]) -> list[GroupRecord]:
  """Point source locations inside a tinygrad that is not here (a trace from another machine) at this tinygrad's files,
  the same version's, so patterns and call sites still show their source lines."""
  root = os.path.dirname(os.path.dirname(os.path.abspath(ops.__file__)))  # this tinygrad package
  @functools.cache
  def here(fn: str) -> str:
    if os.path.exists(fn) or (i := fn.replace("\\", "/").rfind("/tinygrad/")) < 0: return fn
    return cand if os.path.exists(cand := os.path.join(root, fn.replace("\\", "/")[i + len("/tinygrad/"):])) else fn
  def loc(lc: tuple[str, int]) -> tuple[str, int]:
    return lc if (fn := here(lc[0])) == lc[0] else (fn, lc[1])
  for g in groups:
    for s in g.steps:
      s.loc = loc(s.loc)
      if any(here(m[2][0]) != m[2][0] for m in s.matches): s.matches = [(u0, u1, loc(lc), t) for u0, u1, lc, t in s.matches]
  return groups
