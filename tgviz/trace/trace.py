"""tgviz's model of what tinygrad's compiler did: Trace -> groups -> steps -> matches, and kernels.

Built from what :mod:`tgviz.bridge` recorded; reading it needs no knowledge of tinygrad's internals. The graphs it
hands out (``Step.before()`` etc.) are tinygrad ``UOp`` objects, the very ones tinygrad computed. Pictures, reports and
the capture itself build on this package (see :mod:`tgviz.api` for the public classes); it imports none of them.
"""
from __future__ import annotations

import fnmatch
import functools
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Self

from tgviz import bridge as tg
from tgviz.trace import program as programs
from tgviz.trace import run as runtime
from tgviz.trace.kernel import Kernel, display_names
from tgviz.trace.steps import Event, Rule, Step, rebuilt_event


@dataclass(eq=False)
class Group:
  """What tinygrad tracked under one name: a schedule, one kernel's codegen, or other work."""
  index: int
  name: str
  kind: str
  steps: list[Step] = field(default_factory=list)
  stack: tuple = ()
  kernel: Kernel | None = None
  display_name: str = ""
  """The name the UI shows: a kernel's name, numbered where kernels share it ("E_2 #1", "E_2 #2", in compile order; see
  display_names); else the group's name."""

  def __post_init__(self) -> None:
    self.display_name = self.display_name or self.name

  @property
  def match_count(self) -> int:
    return sum(len(s.matches) for s in self.steps)

  def __repr__(self) -> str:
    return f"<Group {self.name!r} {self.kind} steps={len(self.steps)} matches={self.match_count}>"


class Trace:
  """Everything tinygrad's compiler did inside one capture block."""

  step_type: ClassVar[type[Step]] = Step   # the class of the steps the trace makes (tgviz.api's adds pictures)
  kernel_type: ClassVar[type[Kernel]] = Kernel  # the class of its kernels (tgviz.api's can be retried with other opts)
  tracker: tg.Tracker | None = None  # while its capture() block runs (tgviz.report.early writes from what it recorded so far)

  def __init__(self, device: str):
    self.device = device
    self.env: dict[str, Any] = {}            # the tinygrad Context settings of the capture (capture(env=...))
    self.error: BaseException | None = None
    self.traceback: str | None = None
    self._rec: tg.Recording | None = None

  def fill(self, rec: tg.Recording) -> None:
    """Take over what a capture recorded. Groups, steps and kernels are made when first asked for, so that a capture
    costs nothing past tinygrad's own tracking."""
    self._rec = rec
    for name in ("groups", "kernels", "_runtime", "_program"): self.__dict__.pop(name, None)

  def save(self, path: str | Path) -> Path:
    """Write this trace to path (gzip-compressed; ``.tgviz`` is a good suffix), to open later, or elsewhere, with
    :func:`tgviz.load`: groups, steps, matches, graphs, kernels and the error that ended the capture, if one did.
    Opening it needs the same tinygrad version."""
    err = self.error
    meta = {"device": self.device, "error": (type(err).__name__, str(err)) if err is not None else None, "traceback": self.traceback,
            "env": self.env}
    tg.save_recording(path, self._rec if self._rec is not None else tg.Recording([], {}), meta)
    return Path(path)

  @classmethod
  def load(cls, path: str | Path, trusted: bool = False) -> Self:
    """A trace read from a file :meth:`save` wrote, or from tinygrad's own rewrites.pkl (see :func:`tgviz.load`)."""
    rec, meta = tg.load_recording(path, trusted)
    trace = cls(meta.get("device") or "")
    if (err := meta.get("error")) is not None:  # the original exception class may not exist here: one of the same name
      trace.error = type(err[0], (Exception,), {"__module__": "tgviz.saved"})(err[1])
    trace.traceback, trace.env = meta.get("traceback"), meta.get("env") or {}
    trace.fill(rec)
    return trace

  @functools.cached_property
  def groups(self) -> list[Group]:
    """What tinygrad tracked, in compile order: schedules, kernels' codegen, other work."""
    groups: list[Group] = []
    if (rec := self._rec) is None: return groups
    for gi, graw in enumerate(rec.groups):
      group = Group(gi, graw.name, graw.kind, stack=graw.stack)
      group.steps = [self.step_type(group, si, sraw.name, sraw.depth, sraw.loc, _rec=rec, _raw=sraw) for si, sraw in enumerate(graw.steps)]
      if graw.kind == "kernel":
        group.kernel = self.kernel_type(group, graw.device, graw.renderer, functools.partial(rec.program_uop, graw),
                                        rec.source_lines if rec.lines is not None else None, graw.origins, rec.run_times,
                                        graw.c_style, graw.search, self, graw.opt_steps)
      groups.append(group)
    for g, label in zip(groups, display_names([g.name if g.kind == "kernel" else None for g in groups]), strict=True):
      if label is not None: g.display_name = label
    return groups

  @functools.cached_property
  def kernels(self) -> list[Kernel]:
    """The compiled kernels, in compile order."""
    return [g.kernel for g in self.groups if g.kernel is not None]

  @property
  def call_notes(self) -> dict[str, str]:
    """What each kernel's CALL node in schedule graphs says of the kernel (see Step.call_notes)."""
    return self._rec.call_notes if self._rec is not None else {}

  @property
  def steps(self) -> Iterator[Step]:
    """Every step of every group, in compile order."""
    for g in self.groups: yield from g.steps

  def find(self, name: str, kernel: str | None = None) -> Step:
    """The first step called name (in the kernel of that name, if given)."""
    for g in self.groups:
      if kernel is not None and (g.kernel is None or g.kernel.name != kernel): continue
      for s in g.steps:
        if s.name == name: return s
    raise KeyError(f"no step {name!r}" + (f" in kernel {kernel!r}" if kernel else ""))

  def select(self, kernel: str | None = None, step: str | None = None, landmarks: bool = False) -> list[Step]:
    """Steps of the kernels whose name matches the glob pattern kernel (None: every group, schedules too) and whose
    name contains step (case-insensitive; None: all); only tinygrad's 'View ...' landmarks if landmarks is set."""
    return [s for g in self.groups for s in g.steps
            if (kernel is None or (g.kernel is not None and fnmatch.fnmatch(g.kernel.name, kernel)))
            and (step is None or step.lower() in s.name.lower()) and (not landmarks or s.is_snapshot)]

  def history(self, uop: Any, group: Group | None = None) -> list[Event]:
    """The life of a node (a UOp of one of this trace's graphs) across the compile, in order: where it is first seen
    (as a step's input, or made by a match, and from which node), the steps it lives through, and where it is rewritten
    away. group: look in that group's steps only (faster; a kernel's codegen nodes live in its own group)."""
    if group is not None and not isinstance(group, Group):
      raise TypeError(f"group must be a Group (one of trace.groups, or kernel.group), not {type(group).__name__} {group!r}")
    events: list[Event] = []
    for g in [group] if group is not None else self.groups:
      for s in g.steps:
        before = set(tg.toposort(s.before()))
        here = uop in before
        if here and not events: events.append(Event("input", s))
        made = replaced = False
        for m, (u0, u1) in zip(s.matches, s.pairs(), strict=True):  # built in one walk (Match.uops rebuilds each)
          if u0 is uop:
            events.append(Event("replaced", s, m.index, u1))
            replaced, here = True, False
          elif not here and tg.reaches(u1, uop, before):
            events.append(Event("created", s, m.index, u0))
            made = here = True
        if uop in set(tg.toposort(s.after())):
          if not here and not made and s.matches: events.append(rebuilt_event(s, uop))
          events.append(Event("lives", s))
        elif (here or uop in before) and not replaced: events.append(Event("removed", s))
    return events

  def rules(self, sort: str = "count") -> list[Rule]:
    """Every pattern that fired, with its count, total time and the steps it fired in, most frequent first (sort="time":
    slowest first). Counts sum to the trace's number of matches. Like tinygrad's TRACK_MATCH_STATS=2 table, per trace."""
    if sort not in ("count", "time"): raise ValueError(f"sort must be 'count' or 'time', not {sort!r}")
    found: dict[tuple[str, int], Rule] = {}
    for s in self.steps:
      for k, (_, _, loc, t) in enumerate(s._raw.matches):
        if (r := found.get(loc)) is None: found[loc] = r = Rule(loc, 0, 0.0, [], s.matches[k])
        r.count += 1
        r.time += t
        if not r.steps or r.steps[-1] is not s: r.steps.append(s)
    return sorted(found.values(), key=(lambda r: (-r.count, -r.time)) if sort == "count" else (lambda r: (-r.time, -r.count)))

  @functools.cached_property
  def _program(self) -> programs.Program:
    return programs.build(self._rec, self.kernels)

  def program(self) -> programs.Program:
    """The block's program as kernels and buffers (see :class:`tgviz.trace.program.Program`): every call of its schedules
    in run order (``.kernels``) and every buffer between them (``.buffers``: writer, readers, shape, dtype, nbytes), each
    with the reason tinygrad's scheduler made it (``.reason``, one of user, output, input, copy, device, ranges, cost,
    reduce, other; ``.detail``; ``.line``). Read from the trace when first asked for."""
    return self._program

  def why(self, a: Any, b: Any) -> list[programs.Buffer]:
    """The buffers between two kernels (a Kernel, its index in :meth:`program`, or its display name), with their reasons:
    why tinygrad did not fuse them (see :meth:`tgviz.trace.program.Program.why`)."""
    return self._program.why(a, b)

  def kernel_table(self) -> list[dict[str, Any]]:
    """One plain row per kernel, in compile order (``pandas.DataFrame(trace.kernel_table())`` makes a table of it):
    name, device, global_size, local_size, tinygrad's estimates flops and bytes (None where it made none), runs (launches
    inside the capture), time_us (their measured device time in total, µs; None when it did not run) and causes (why
    it ends where it does: the reasons of the buffers its calls write, see :meth:`program`)."""
    causes = self.program().kernel_causes()
    return [{**k.table_row(), "causes": causes.get(k.group.index, [])} for k in self.kernels]

  @functools.cached_property
  def _runtime(self) -> tuple[runtime.Timeline, runtime.Memory]:
    prof = self._rec.profile if self._rec is not None else None
    wanted = {e.key for e in prof.execs if e.key} | set(prof.progs.values()) if prof is not None else set()
    by_key: dict[bytes, Kernel] = {}
    for k in self.kernels if wanted else []:
      if k._program is not None and k._program.source_key in wanted: by_key.setdefault(k._program.source_key, k)
    return runtime.build(prof, by_key)

  def timeline(self) -> runtime.Timeline:
    """Every kernel launch, copy and synchronize of the run, in start order, on one lane per device (see
    :class:`tgviz.trace.run.Timeline`): start and duration in µs from the start of the capture, name, kind, the kernel it
    runs, and which TinyJit run it belongs to (its captured batch, replay 0, or the n-th replay). From tinygrad's own
    profile events, with the device times a capture measures; empty for a trace without them (tinygrad's rewrites.pkl)."""
    return self._runtime[0]

  def memory(self) -> runtime.Memory:
    """The buffers allocated and freed over the run, with size and dtype, the launches that wrote and read each, the peak
    and the buffers alive at it (see :class:`tgviz.trace.run.Memory`)."""
    return self._runtime[1]

  def roofline(self, peaks: bool = True, cache_dir: str | Path | None = None) -> runtime.Roofline:
    """The kernels that ran, by arithmetic intensity (tinygrad's FLOPs / bytes estimates) and achieved GFLOP/s, against
    each device's peak compute and bandwidth: measured once by a small tinygrad benchmark and cached per device (in
    cache_dir, else TGVIZ_CACHE_DIR, else ~/.cache/tgviz); peaks=False leaves them out (see :class:`tgviz.trace.run.Roofline`)."""
    return runtime.roofline(self.kernels, peaks, cache_dir)

  def summary(self) -> str:
    """A plain-text summary: kernels, groups, steps, matches."""
    n_steps = sum(len(g.steps) for g in self.groups)
    n_matches = sum(g.match_count for g in self.groups)
    lines = [f"tgviz trace on {self.device}: {len(self.kernels)} kernel{'s' if len(self.kernels) != 1 else ''}, "
             f"{len(self.groups)} groups, {n_steps} steps, {n_matches} matches"]
    lines += [f"  kernel {k.display_name}  global={k.global_size} local={k.local_size}" for k in self.kernels]
    if self.error is not None: lines.append(f"  stopped by {type(self.error).__name__}: {self.error}")
    return "\n".join(lines)

  __str__ = summary

  def __repr__(self) -> str:
    return f"<Trace {len(self.kernels)} kernels [{', '.join(k.display_name for k in self.kernels)}], {len(self.groups)} groups, " \
           f"{sum(len(g.steps) for g in self.groups)} steps{', error' if self.error is not None else ''}>"

