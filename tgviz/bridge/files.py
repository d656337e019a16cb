"""Saving and opening trace files: tgviz's own, tinygrad's rewrites.pkl and its profile.pkl.

Owns: the file format (a gzip of a pickled header (with the run times and the launch that failed), then the records, the
UOp table and the run's profile records), its
version checks, checking a
file's contents have the shapes a Recording reads, and pointing a trace's tinygrad source locations at this machine's
tinygrad. Files are unpickled only through safe_pickle. It must not capture anything; what it reads is a Recording like
any capture's.
"""
from __future__ import annotations

import functools
import gzip
import os
import pickle
from typing import Any

from tinygrad.dtype import DType
from tinygrad.helpers import Context
from tinygrad.uop import ops
from tinygrad.uop.ops import Ops

from tgviz.bridge import safe_pickle
from tgviz.bridge.env import SUPPORTED_TINYGRAD
from tgviz.bridge.events import (
  DeviceRecord,
  ExecRecord,
  MemRecord,
  Profile,
  RangeRecord,
  SpanRecord,
  SyncRecord,
  is_profile_dump,
  profile_of,
)
from tgviz.bridge.recording import Recording
from tgviz.bridge.records import GroupRecord, StepRecord, groups_from
from tgviz.bridge.safe_pickle import Refused
from tgviz.bridge.spans import host_spans

TRACE_FORMAT, TRACE_VERSION = "tgviz-trace", 3
_READS_VERSIONS = (1, 2, 3)                 # version 1 had no source lines, version 2 no profile records
_GZIP_MAGIC = b"\x1f\x8b"
_HEADER = ("format", "version", "tinygrad", "runs", "patterns", "retimed", "settled", "failed")  # the header's keys that are not a trace's meta


class TraceFileError(ValueError):
  """A file tgviz cannot open as a trace: not a trace, or one saved for another file format or tinygrad version."""


def save_recording(path: str | os.PathLike, rec: Recording, meta: dict[str, Any]) -> None:
  """Write rec to path: gzip of a pickled header (format, version, tinygrad version and meta), then the records and the
  UOp table (plain fields, as tinygrad's VIZ pickles them), the rendered lines' UOps and the run's profile records; the
  kernels' run times in the header."""
  header = {"format": TRACE_FORMAT, "version": TRACE_VERSION, "tinygrad": SUPPORTED_TINYGRAD, "runs": rec.runs,
            "patterns": rec.patterns, "retimed": rec.retimed, "settled": rec.retimed_stable, "failed": rec.failed, **meta}
  try: body = pickle.dumps((rec.groups, rec.uop_fields, rec.lines, rec.profile), protocol=pickle.HIGHEST_PROTOCOL)
  except Exception as e: raise TraceFileError(f"this trace cannot be saved: {type(e).__name__}: {e}") from e
  with gzip.open(path, "wb", compresslevel=6) as f:
    pickle.dump(header, f, protocol=pickle.HIGHEST_PROTOCOL)
    f.write(body)


# what a user who opened something else can open instead
_MAKE_ONE = ("A trace is made by `tgviz run --save script.py` (DIR/trace.tgviz), trace.save(path) after tgviz.capture(), or "
             f"tinygrad {SUPPORTED_TINYGRAD} itself run with VIZ=-1 (rewrites.pkl in its temp folder) or PROFILE=1 (profile.pkl)")


def load_recording(path: str | os.PathLike, trusted: bool = False) -> tuple[Recording, dict[str, Any]]:
  """Read a trace file: one saved by tgviz (see save_recording), or tinygrad's own dumps: the rewrites.pkl that ``VIZ=-1``
  (or TRACK_MATCH_STATS=2) writes at exit, or the profile.pkl of ``PROFILE=1`` (a trace of the run without rewrites).
  Returns the recording and the header's meta (device, error, traceback, env). The file is unpickled with safe_pickle,
  which runs nothing from it (trusted: with plain pickle, for a tinygrad dump that holds more than a trace should).
  Raises TraceFileError for anything else, OSError when the file cannot be read."""
  with open(path, "rb") as f: magic = f.read(2)
  if magic == _GZIP_MAGIC: return _load_saved(path, trusted)
  try:
    # trusted: may load libraries, as VIZ's loader
    with open(path, "rb") as f, Context(DEBUG=0): obj = safe_pickle.load(f, trusted, os.path.getsize(path))
  except Refused as e:
    raise TraceFileError(f"{path} names {e}, which tgviz does not let a trace file run or make; nothing in the file was run. "
                         "If it is tinygrad's own dump of a run you trust, open it trusting it: tgviz.load(path, trusted=True), "
                         "or tgviz open --trust") from None
  except Exception as e:
    raise TraceFileError(f"{path} is neither a tgviz trace nor tinygrad's rewrites.pkl or profile.pkl "
                         f"(or one written by a tinygrad other than {SUPPORTED_TINYGRAD}): {type(e).__name__}: {e}. "
                         f"{_MAKE_ONE}") from e
  if is_profile_dump(obj): return _load_profile(path, obj)
  if not isinstance(obj, ops.RewriteTrace):
    raise TraceFileError(f"{path} holds a pickled {type(obj).__name__}, not a tgviz trace or tinygrad's rewrites.pkl or "
                         f"profile.pkl. {_MAKE_ONE}")
  try:
    groups = groups_from(obj.keys, obj.rewrites, {})
    _check(groups, obj.uop_fields, None)
  except Exception as e:
    raise TraceFileError(f"{path} is a tinygrad rewrites.pkl tgviz cannot read (tgviz reads those of tinygrad {SUPPORTED_TINYGRAD}): "
                         f"{type(e).__name__}: {e}") from e
  device = ", ".join(dict.fromkeys(g.device for g in groups if g.device)) or "unknown device"
  return Recording(relocated(groups), obj.uop_fields), {"device": f"{device} (tinygrad's rewrites.pkl)"}


def _load_profile(path: str | os.PathLike, events: list[Any]) -> tuple[Recording, dict[str, Any]]:
  """tinygrad's profile.pkl: its events as a recording of the run alone (no rewrites)."""
  try:
    prof = profile_of(events, source="profile.pkl")
    prof.spans = host_spans(events)
    _check([], {}, None, None, None, prof)
  except Exception as e:
    raise TraceFileError(f"{path} is a tinygrad profile.pkl tgviz cannot read (tgviz reads those of tinygrad {SUPPORTED_TINYGRAD}): "
                         f"{type(e).__name__}: {e}") from e
  device = ", ".join(dict.fromkeys([x.device for x in prof.execs] + [x.device for x in prof.ranges])) or "unknown device"
  return Recording([], {}, profile=prof), {"device": f"{device} (tinygrad's profile.pkl)"}


def _load_saved(path: str | os.PathLike, trusted: bool) -> tuple[Recording, dict[str, Any]]:
  try:
    size = os.path.getsize(path)
    with gzip.open(path, "rb") as f:
      try: header = safe_pickle.load(f, trusted, size)
      except Refused: raise
      except Exception: header = None
      if not isinstance(header, dict) or header.get("format") != TRACE_FORMAT:
        raise TraceFileError(f"{path} is a gzip file but not a tgviz trace")
      if (v := header.get("version")) not in _READS_VERSIONS:
        raise TraceFileError(f"{path} is a tgviz trace in file format version {v}; this tgviz reads version {TRACE_VERSION}: "
                             f"open it with the tgviz that saved it")
      if (tv := header.get("tinygrad")) != SUPPORTED_TINYGRAD:
        raise TraceFileError(f"{path} was saved with tinygrad {tv}; this tgviz reads traces of tinygrad {SUPPORTED_TINYGRAD} "
                             f"(its graphs are tinygrad UOps): open it where tinygrad=={tv} and a tgviz for it are installed")
      with Context(DEBUG=0): body = safe_pickle.load(f, trusted, size)
      if not isinstance(body, tuple) or len(body) != v + 1: raise ValueError("unexpected contents")
      groups, fields, *rest = body
      lines, profile = [*rest, None, None][:2]
      meta = {k: v for k, v in header.items() if k not in _HEADER}
      _check(groups, fields, lines, header.get("runs"), meta, profile, header.get("failed"))
      _check_counts(header.get("patterns"), header.get("retimed"), header.get("settled"))
  except TraceFileError: raise
  except Refused as e:
    raise TraceFileError(f"{path} names {e}, which a tgviz trace never holds: refused, and nothing in the file was run "
                         "(a file made to run code when opened?)") from None
  except Exception as e: raise TraceFileError(f"{path} is not a readable tgviz trace: {type(e).__name__}: {e}") from e
  rec = Recording(relocated(groups), fields, lines, header.get("runs"), profile, header.get("patterns"), header.get("retimed"),
                  header.get("failed"))
  rec.retimed_stable.update(header.get("settled") or {})
  return rec, meta


def _check_counts(patterns: Any, retimed: Any, settled: Any) -> None:
  """That a file's pattern counts (location -> attempts.PatternStats.plain) and re-timings (SOURCE key -> seconds, and
  whether each settled) have their shapes (absent from files saved before they were kept)."""
  loc = lambda x: isinstance(x, tuple) and len(x) == 2 and isinstance(x[0], str) and isinstance(x[1], int)  # noqa: E731
  if patterns is not None and not (isinstance(patterns, dict) and all(
      loc(k) and isinstance(v, tuple) and len(v) == 5 and all(isinstance(x, (int, float)) for x in v) for k, v in patterns.items())):
    raise ValueError("unexpected contents: the pattern counts")
  if retimed is not None and not (isinstance(retimed, dict) and all(
      isinstance(k, bytes) and isinstance(v, list) and all(isinstance(x, float) for x in v) for k, v in retimed.items())):
    raise ValueError("unexpected contents: the re-timings")
  if settled is not None and not (isinstance(settled, dict) and all(isinstance(k, bytes) and isinstance(v, bool) for k, v in settled.items())):
    raise ValueError("unexpected contents: the re-timings' settling")


def _check(groups: Any, fields: Any, lines: Any, runs: Any = None, meta: Any = None, profile: Any = None, failed: Any = None) -> None:
  """That what a file held has the shapes a Recording reads (a damaged file fails here, not later in a picture):
  ValueError saying what is wrong."""
  def need(ok: bool, what: str) -> None:
    if not ok: raise ValueError(f"unexpected contents: {what}")
  def loc(x: Any) -> bool: return isinstance(x, tuple) and len(x) == 2 and isinstance(x[0], str) and isinstance(x[1], int)
  need(isinstance(groups, list) and all(isinstance(g, GroupRecord) and isinstance(g.name, str) and isinstance(g.kind, str)
                                        and isinstance(g.steps, list) and isinstance(g.stack, tuple) for g in groups), "groups")
  need(isinstance(fields, dict), "the UOp table")
  for n, f in fields.items():
    need(isinstance(n, int) and isinstance(f, tuple) and len(f) == 5 and isinstance(f[0], Ops) and isinstance(f[1], DType)
         and isinstance(f[2], tuple) and all(s in fields for s in f[2]), f"UOp {n!r}")
  for g in groups:
    for s in g.steps:
      need(isinstance(s, StepRecord) and isinstance(s.name, str) and isinstance(s.depth, int) and loc(s.loc) and s.sink in fields
           and isinstance(s.matches, list) and (s.out is None or s.out in fields), "a step")
      need(all(isinstance(m, tuple) and len(m) == 4 and m[0] in fields and m[1] in fields and loc(m[2]) and isinstance(m[3], (int, float))
               for m in s.matches), f"a match of {s.name!r}")
  need(lines is None or (isinstance(lines, dict) and all(isinstance(v, list) for v in lines.values())), "the source lines")
  need(runs is None or (isinstance(runs, dict) and all(isinstance(v, list) for v in runs.values())), "the run times")
  need(failed is None or (isinstance(failed, tuple) and len(failed) == 3 and isinstance(failed[0], bytes)
                          and all(isinstance(x, str) for x in failed[1:])), "the failed launch")
  if meta is not None:
    err = meta.get("error")
    need(err is None or (isinstance(err, tuple) and len(err) == 2 and all(isinstance(x, str) for x in err)), "the error")
    need(isinstance(meta.get("traceback"), (str, type(None))) and isinstance(meta.get("env", {}), (dict, type(None))), "the header")
  if profile is not None:
    p = profile
    need(isinstance(p, Profile) and all(isinstance(x, (int, float)) for x in (p.start, p.end, p.graphs)), "the profile")
    for name, cls in (("execs", ExecRecord), ("ranges", RangeRecord), ("mem", MemRecord), ("syncs", SyncRecord), ("devices", DeviceRecord)):
      need(isinstance(xs := getattr(p, name), list) and all(isinstance(x, cls) for x in xs), f"the profile's {name}")
    need(all(isinstance(e.st, (int, float)) and isinstance(e.bufs, tuple) and all(isinstance(b, int) for b in e.bufs)
             and isinstance(e.outs, tuple) and isinstance(e.ins, tuple) and isinstance(e.key, bytes) for e in p.execs), "a launch")
    need(all(isinstance(r.st, (int, float)) and isinstance(r.en, (int, float)) for r in p.ranges), "a device span")
    need(all(m.kind in ("alloc", "free") and isinstance(m.num, int) and isinstance(m.size, int) and isinstance(m.itemsize, int)
             for m in p.mem), "a buffer event")
    need(isinstance(p.views, dict) and isinstance(p.progs, dict) and isinstance(p.jits, list) and isinstance(p.mem_before, dict),
         "the profile's tables")
    need(isinstance(spans := getattr(p, "spans", []), list) and all(
      isinstance(x, SpanRecord) and isinstance(x.name, str) and isinstance(x.st, float) and isinstance(x.en, float)
      and (x.group is None or isinstance(x.group, int)) and (x.step is None or isinstance(x.step, int)) for x in spans), "a compile span")


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
