"""A report's segments written while `tgviz run` still runs its script, on a core the capture leaves idle.

A capture that compiles in its own process (below PARALLEL=3: see bridge.parallel) keeps one core busy, and a report's
segments (each run of a group's steps, its graphs replayed and tabled: report.Writer.segment) are most of the work
after it. So now and then, between two rewrites (Tracker.quiet), the capture forks a writer: it takes what was
recorded so far (Tracker.snapshot) and writes the segments of the groups that no later rewrite can add to, each to
a file: the kernels' first, then the schedules' (a schedule closes before any of its kernels does, and its biggest
steps are a writer's longest segments: written then, they fill a core that would wait). When the run ends,
the report takes each such segment whose every input is what the whole trace gives (Writer.segment_check: the same
steps, panels, matches and outputs, at the same index): that is the very chunk a worker would write then.
(A kernel's CALL note is in no segment: both a row's label and the one the page derives have it, or neither.) The
others (the last kernels', any whose output was dropped since) are written after the run as before.
Each writer also highlights its kernels' code and links their asm (remembered.Remembered hands those over), and
draws the SVG files asked for of its kernels' steps (tinygrad's landmarks, by default), taken where their segment is
and the step's title is the same; a schedule's pictures wait for the whole trace (their CALL nodes' labels name
kernels compiled later).

Once the script has ended, one more writer takes the whole trace and writes what is left while `tgviz run` times
and retries kernels (EarlySegments.after), until the report is written: the kernels' first, then the schedules'; then
it checks the segments the run's writers wrote against the whole trace (a file each: whether it holds), and writes the
groups' chunks and the search index (none of which those times and retries change), so that the report's process
need not make them once they are done.

Owns: when to fork (one writer at a time, some steps and a second after the last), what a writer does, and taking its
segments back. It must not change a byte of the report (tests/report/test_early.py).
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tgviz.report import writer as report
from tgviz.trace import asm
from tgviz.trace import kernel as K
from tgviz.trace.trace import Trace
from tgviz.views import picture as V
from tgviz.views import protocol as P
from tgviz.views.highlight import highlight_code
from tgviz.work import forked
from tgviz.work.remembered import Remembered


class EarlySegments:
  """Segments written during a capture, for its report: ``with EarlySegments() as early:``, in it
  ``with early.during(trace):`` inside the capture's block (trace: the one capture() yields), then
  ``writer.write(..., written=early.take(writer))``. on=False, on one core, or where fork is unavailable: nothing is
  written early, and take() gives nothing. pictures=(max_nodes, landmarks): the writers also draw the SVG files of
  their kernels' steps (tinygrad's landmarks only, or all), as picture.step_svg draws them; take() leaves them in
  ``svgs`` (SVG text by step key)."""

  EVERY = 1.0                               # seconds between two forks, at least: each costs the capture its page faults
  MIN_STEPS = 32                            # outermost rewrites between two forks, at least

  def __init__(self, on: bool = True, pictures: tuple[int, bool] | None = None) -> None:
    self.on = on and forked.cores() > 1
    self.pictures = pictures
    self.svgs: dict[str, str] = {}          # the SVG files drawn early and taken, by step key
    self.forks = 0                          # writers forked
    self.written = self.taken = 0           # segments written early; of those, taken into the report
    self.kernels = 0                        # kernels whose code was highlighted and asm linked early
    self._dir: Path | None = None
    self._child: forked.Child | None = None
    self._steps, self._last = 0, 0.0
    self._trace: Trace | None = None
    self._owner = 0                         # the capture's process

  def __enter__(self) -> EarlySegments:
    return self

  def __exit__(self, *exc: object) -> None:
    if self._dir is not None: shutil.rmtree(self._dir, ignore_errors=True)

  @contextlib.contextmanager
  def during(self, trace: Trace) -> Iterator[None]:
    """Fork writers while the block runs (between the capture's rewrites); the last one still writing at its end is
    stopped (what it wrote stays)."""
    tracker = trace.tracker
    if not self.on or tracker is None:
      yield
      return
    self._trace, self._dir, self._last = trace, Path(tempfile.mkdtemp(prefix="tgviz-early-")), time.perf_counter()
    self._owner = os.getpid()
    tracker.quiet(self._quiet)
    try: yield
    finally:
      tracker.quiet(None)
      if self._child is not None: self._child.stop()
      self._child = None

  def _quiet(self) -> None:
    self._steps += 1
    if self._steps < self.MIN_STEPS or time.perf_counter() - self._last < self.EVERY: return
    if os.getpid() != self._owner: return   # a process the script forked, which inherited the capture's patches
    if self._child is not None and self._child.running(): return  # still writing
    self._steps, self._last = 0, time.perf_counter()
    self._child = forked.Child(self._write)  # at nice 10: never slower for the capture, on a busier machine
    self.forks += 1

  def after(self, trace: Trace) -> None:
    """Once the capture has ended (trace: what it recorded): one more writer, of the whole trace, writes what those of
    the run did not get to (the last kernels' segments, tabs and pictures, a schedule's), while this process times
    and retries kernels; take() stops it where it got to."""
    if not self.on: return
    if self._dir is None: self._dir = Path(tempfile.mkdtemp(prefix="tgviz-early-"))
    self._child = forked.Child(lambda: self._write(trace))
    self.forks += 1

  def _write(self, whole: Trace | None = None) -> None:
    """In the forked writer: every closed group's segments not written yet, a file each, the kernels' first (their
    tabs and SVG files after each), then the schedules'; a schedule's SVG files only once the capture has ended (whole:
    its trace, every group closed; else what the running capture recorded so far)."""
    assert self._dir is not None
    # its scratch files (a -g listing's build, ...) where the run removes them: a writer stopped midway leaves them
    tempfile.tempdir = str(self._dir)
    if whole is None:
      assert self._trace is not None and self._trace.tracker is not None
      snap = self._trace.tracker.snapshot()
      trace = type(self._trace)(self._trace.device)
      trace.fill(snap.recording)
      closed, fresh = snap.closed, snap.fresh
    else: trace, closed, fresh = whole, None, _EVERY_NUMBER
    writer = report.Writer(trace)
    for i in sorted(range(len(writer.segments)), key=lambda i: writer.segments[i][0].group.kind != "kernel"):  # kernels first
      seg = writer.segments[i]
      group = seg[0].group
      if closed is not None and group.index not in closed: continue
      keys = [P.step_key(s) for s in seg]
      if not (path := self._dir / f"s-{_name(keys)}.json").exists():
        text, contents, short = writer.segment(i)
        _put(path, {"keys": keys, "index": i, "text": text, "contents": contents, "lacking": short, "fresh": fresh,
                    "check": writer.segment_check(i, fresh)})
        if whole is not None: _put(_verdict(path), {"holds": True})  # (written from the whole trace: the report's own)
      if i + 1 < len(writer.segments) and writer.segments[i + 1][0].group is group: continue
      if (k := group.kernel) is not None and k.source and not (path := self._dir / f"k-{_name([k.source])}.json").exists():
        _put(path, _kernel_work(k))       # after its group's last segment: its code, highlighted, and asm, linked
      # a schedule's pictures wait for the whole trace: its CALL nodes' labels name kernels compiled later
      if self.pictures is None or (whole is None and group.kind != "kernel"): continue
      max_nodes, landmarks = self.pictures
      for s in group.steps:               # and its SVG files
        if (landmarks and not s.is_snapshot) or (path := self._dir / f"v-{_name([P.step_key(s)])}.json").exists(): continue
        _put(path, {"key": P.step_key(s), "title": s.title(), "svg": V.step_svg(s, max_nodes=max_nodes)})
    if whole is not None: self._rest(writer)

  def _rest(self, writer: report.Writer) -> None:
    """In the writer after the run, its segments written: whether each segment the run's writers wrote holds (a c- file
    beside it), every group's chunks, the search index's chunk; each a file, for take()."""
    assert self._dir is not None
    keys = _segment_keys(writer)
    for path in sorted(self._dir.glob("s-*.json")):
      if not (verdict := _verdict(path)).exists(): _put(verdict, {"holds": _holds(writer, keys, json.loads(path.read_text()))})
    for i in range(len(writer.trace.groups)):
      if not (path := self._dir / f"g-{i}.json").exists(): _put(path, {"chunks": writer.group_chunks(i)})
    if not (path := self._dir / "search.json").exists(): _put(path, {"chunk": writer.search_chunk()})

  def take(self, writer: report.Writer) -> report.Written:
    """What was written early that `writer` (of the whole trace) would write alike: segments (Writer.segment's, by
    index), groups' chunks, the search index. The kernels' code highlighted and asm linked early are given to
    highlight_code and asm.linked."""
    out = report.Written()
    if self._dir is None: return out
    keys = _segment_keys(writer)
    read: set[Path] = set()
    self._read(writer, keys, out, read, last=False)   # (what is there already, while the writer after the run goes on)
    if self._child is not None: self._child.stop()  # (where it got to)
    self._child = None
    self._read(writer, keys, out, read, last=True)
    self.taken = len(out.segments)
    for path in self._dir.glob("g-*.json"): out.groups[int(path.stem[2:])] = json.loads(path.read_text())["chunks"]
    if (path := self._dir / "search.json").exists(): out.search = json.loads(path.read_text())["chunk"]
    return out

  def _read(self, writer: report.Writer, keys: dict[tuple[str, ...], int], out: report.Written, read: set[Path],
            last: bool) -> None:
    """take()'s reading of the files not read yet: segments (into out, by index, where they hold: as the writer after
    the run found, else checked here, the last time; before, such a segment is left to that writer), kernels' tabs, SVG
    files (those whose step's segment holds and whose title is the same)."""
    assert self._dir is not None
    for path in sorted(set(self._dir.glob("s-*.json")) - read):
      if not (verdict := _verdict(path)).exists() and not last: continue
      read.add(path)
      data = json.loads(path.read_text())
      self.written += 1
      if json.loads(verdict.read_text())["holds"] if verdict.exists() else _holds(writer, keys, data):
        out.segments[data["index"]] = data["text"], data["contents"], data["lacking"]
    for path in sorted(set(self._dir.glob("k-*.json")) - read):
      read.add(path)
      for name, results in json.loads(path.read_text()).items():
        for key, result in results.items(): _REMEMBERED[name].give(key, tuple(result) if isinstance(result, list) else result)
      self.kernels += 1
    steps = {P.step_key(s): s for i in out.segments for s in writer.segments[i]}
    for path in sorted(set(self._dir.glob("v-*.json")) - read):
      data = json.loads(path.read_text())
      if (s := steps.get(data["key"])) is None: continue  # (its segment may be read later)
      read.add(path)
      if s.title() == data["title"]: self.svgs[data["key"]] = data["svg"]


def _segment_keys(writer: report.Writer) -> dict[tuple[str, ...], int]:
  """Each of the writer's segments, by its steps' keys -> its index."""
  return {tuple(P.step_key(s) for s in seg): i for i, seg in enumerate(writer.segments)}


def _holds(writer: report.Writer, keys: dict[tuple[str, ...], int], data: dict[str, Any]) -> bool:
  """Whether a segment written early (its file's data) is the writer's: the same steps at the same index (its chunk is
  named by it, and a group before its own, open then, may have more segments now), the same check."""
  i = keys.get(tuple(data["keys"]))
  return i is not None and i == data["index"] and data["check"] == writer.segment_check(i, data["fresh"])


def _verdict(path: Path) -> Path:
  """The file beside a segment's that says whether it holds (the writer after the run's check)."""
  return path.with_name("c" + path.name[1:])


def _kernel_work(k: K.Kernel) -> dict[str, dict[str, Any]]:
  """A kernel's code highlighted, its binary disassembled and its asm linked to its lines (the slow parts of its report
  chunks), as made() gives them and give() takes them."""
  highlight_code(k.source, k.renderer)
  _ = k.disassembly_lines
  made = {name: fn.made() for name, fn in _REMEMBERED.items()}
  made["dis"] = {key: r for key, r in made["dis"].items() if r[0]}  # none that failed here: the report's process tries again
  return made


_EVERY_NUMBER = 1 << 62  # `fresh` of the whole trace: every trace number was given in it

_REMEMBERED: dict[str, Remembered] = {"html": highlight_code, "asm": asm.linked, "dis": K.disassembled}


def _put(path: Path, data: dict[str, Any]) -> None:
  """A file, whole or not there (a writer may be stopped at any point)."""
  (tmp := path.with_suffix(".tmp")).write_text(json.dumps(data))
  tmp.replace(path)


def _name(keys: list[str]) -> str:
  """A segment's file name, from its steps' keys."""
  return hashlib.sha1(" ".join(keys).encode()).hexdigest()
