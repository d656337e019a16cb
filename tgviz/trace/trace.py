"""tgviz's model of what tinygrad's compiler did: Trace -> groups -> steps -> matches, and kernels.

Built from what :mod:`tgviz.bridge` recorded; reading it needs no knowledge of tinygrad's internals. The graphs it
hands out (``Step.before()`` etc.) are tinygrad ``UOp`` objects, the very ones tinygrad computed. Pictures, reports and
the capture itself build on this package (see :mod:`tgviz.api` for the public classes); it imports none of them.
"""
from __future__ import annotations

import collections
import functools
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Self

from tgviz import bridge as tg
from tgviz.trace import compile as compiling
from tgviz.trace import program as programs
from tgviz.trace import retime as timings
from tgviz.trace import run as runtime
from tgviz.trace.kernel import Kernel, display_names, no_such_kernel
from tgviz.trace.lives import Lives
from tgviz.trace.steps import Event, Lineage, Rule, Step, step_rows
from tgviz.trace.units import plural


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
  trace: Trace | None = field(default=None, repr=False)  # the trace it is part of

  def __post_init__(self) -> None:
    self.display_name = self.display_name or self.name

  @property
  def match_count(self) -> int:
    return sum(s.match_count for s in self.steps)

  @functools.cached_property
  def rows(self) -> list[tuple[str, str | None]]:
    """Its steps' rows in the tree, in order (Step.row): each says what the step is, rows alike numbered."""
    return step_rows(self.steps)

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
    self._fused_before: tuple[tuple[int, int], Trace] | None = None  # fusion.fuse's last run as scheduled, by (schedule, seed)
    self._lives = Lives()                   # history() and lineage(), with the nodes of the graphs they looked in

  def fill(self, rec: tg.Recording) -> None:
    """Take over what a capture recorded. Groups, steps and kernels are made when first asked for, so that a capture
    costs nothing past tinygrad's own tracking."""
    self._rec, self._fused_before, self._lives = rec, None, Lives()
    for name in ("groups", "kernels", "call_notes", "call_kernels", "_runtime", "_program_map", "_programs", "_compile"):
      self.__dict__.pop(name, None)

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
      group = Group(gi, graw.name, graw.kind, stack=graw.stack, trace=self)
      group.steps = [self.step_type(group, si, sraw.name, sraw.depth, sraw.loc, _rec=rec, _raw=sraw) for si, sraw in enumerate(graw.steps)]
      if graw.kind == "kernel":
        group.kernel = self.kernel_type(group, graw.device, graw.renderer, functools.partial(rec.program_uop, graw),
                                        rec.source_lines if rec.lines is not None else None, graw.origins, rec.run_times,
                                        graw.c_style, graw.search, self, graw.opt_steps, graw.node_origins)
      groups.append(group)
    for g, label in zip(groups, display_names([g.name if g.kind == "kernel" else None for g in groups]), strict=True):
      if label is not None: g.display_name = label
    return groups

  @functools.cached_property
  def kernels(self) -> list[Kernel]:
    """The compiled kernels, in compile order."""
    return [g.kernel for g in self.groups if g.kernel is not None]

  @functools.cached_property
  def call_notes(self) -> dict[str, str]:
    """Node key of what a CALL node in schedule graphs calls -> the line it adds to its label: what the call becomes.
    A kernel: its display name and its Tensor operations ("→ E_2 #2 · ops: conv2d, relu"; an AST compiled twice names
    the first kernel, the one a later schedule's call reuses); any other call of the program (trace.program()): its
    name there ("→ copy 128 B CL <- CPU", "→ a kernel compiled before the capture")."""
    notes: dict[str, str] = {}
    for key, k in self.call_kernels.items():
      ops = dict.fromkeys(o.op + (" bw" if o.backward else "") for o in k.origins)
      notes[key] = f"→ {k.display_name}" + (" · ops: " + ", ".join(ops) if ops else "")
    others = {pk.drawn: pk.name for pk in self.program().kernels if pk.kernel is None and pk.drawn >= 0}
    if others and self._rec is not None:
      for u, name in zip(self._rec.uops(list(others)), others.values(), strict=True): notes.setdefault(tg.node_key(u), f"→ {name}")
    return notes

  @functools.cached_property
  def call_kernels(self) -> dict[str, Kernel]:
    """Node key of a kernel's AST (what a CALL node in schedule graphs calls) -> the kernel it becomes: the first that
    compiled it (a later schedule's call of the same AST reuses its program)."""
    out: dict[str, Kernel] = {}
    for k in self.kernels:
      if k.group.steps: out.setdefault(tg.node_key(k.group.steps[0].before()), k)
    return out

  @property
  def steps(self) -> Iterator[Step]:
    """Every step of every group, in compile order."""
    for g in self.groups: yield from g.steps

  def find(self, name: str, kernel: str | Kernel | None = None) -> Step:
    """The first step called name; in the kernel given, if one is: a Kernel of this trace, or text naming it as
    Kernel.named takes it (its name or display name, "E_2 #2", its key or a prefix of it), or a glob of names ("r_*":
    the first kernel it names that has such a step). KeyError where there is no such step, or where a name that is no
    glob names several kernels that have one (three kernels called "E_2": say which, by "E_2 #2" or its key)."""
    groups = self.groups if kernel is None or isinstance(kernel, str) else [kernel.group]
    if isinstance(kernel, str) and not (groups := [g for g in groups if g.kernel is not None and g.kernel.named(kernel)]):
      raise no_such_kernel(kernel, [k.display_name for k in self.kernels], "the trace")
    having = [s for g in groups if (s := next((s for s in g.steps if s.name == name), None)) is not None]
    if isinstance(kernel, str) and len(having) > 1 and not any(c in kernel for c in "*?["):
      names = [s.group.kernel.display_name for s in having if s.group.kernel is not None]
      raise KeyError(f"{kernel!r} names {len(names)} kernels with a step {name!r} ({', '.join(names[:8])}{', ...' if len(names) > 8 else ''}): "
                     "name one by its display name (as trace.kernels and the kernel table show it), its key, or give the Kernel")
    if having: return having[0]
    said = kernel if isinstance(kernel, str) or kernel is None else kernel.display_name
    raise KeyError(f"no step {name!r}" + (f" in kernel {said!r}" if said else ""))

  def select(self, kernel: str | None = None, step: str | None = None, landmarks: bool = False) -> list[Step]:
    """Steps of the kernels named by kernel (a glob of their names, or their key: see Kernel.named; None: every group,
    schedules too) and whose name contains step (case-insensitive; None: all); only tinygrad's 'View ...' landmarks if
    landmarks is set."""
    return [s for g in self.groups for s in g.steps
            if (kernel is None or (g.kernel is not None and g.kernel.named(kernel)))
            and (step is None or step.lower() in s.name.lower()) and (not landmarks or s.is_snapshot)]

  def history(self, uop: Any, group: Group | None = None) -> list[Event]:
    """The life of a node (a UOp of one of this trace's graphs) across the compile, in order: where it is first seen
    (as a step's input, or made by a match, and from which node), the steps it lives through, and where it is rewritten
    away. group: look in that group's steps only (faster; a kernel's codegen nodes live in its own group)."""
    return self._lives.history(self._node(uop), self._steps_of(group))

  def lineage(self, uop: Any, group: Group | None = None, seen: tuple[Step, int] | None = None) -> Lineage:
    """Where a node came from, back to its creation (see :class:`tgviz.trace.steps.Lineage`): the rewrite that made it
    from an earlier node, the one that made that node, and so on, newest first, to the first UOp of the chain (in the
    graph a step started from; in a kernel's group its AST, with the kernel's Tensor ops and the user's lines, its
    ``origins``). group: as for :meth:`history`. seen: (step, k) where the node is in ``step.at(k)``, for a node that
    lives only inside a step (a match's picture shows it; neither the step's input nor its output holds it)."""
    return self._lives.lineage(self._node(uop), self._steps_of(group), seen)

  @staticmethod
  def _node(uop: Any) -> Any:
    if not tg.is_uop(uop):
      raise TypeError(f"uop must be a node of one of this trace's graphs (a UOp: from step.at(k), step.before(), kernel.ast's "
                      f"toposort()), not {type(uop).__name__} {uop!r:.60}")
    return uop

  def _steps_of(self, group: Group | None) -> list[Step]:
    if group is not None and not isinstance(group, Group):
      raise TypeError(f"group must be a Group (one of trace.groups, or kernel.group), not {type(group).__name__} {group!r}")
    return list(group.steps) if group is not None else list(self.steps)

  def rules(self, sort: str = "count", unmatched: bool = False) -> list[Rule]:
    """Every pattern that fired, with its count (matches recorded in the trace's steps), total time and the steps it
    fired in, most frequent first; counts sum to the trace's number of matches. Where the capture counted every attempt
    (not in tinygrad's dumps), each also has TRACK_MATCH_STATS=2's figures for the capture: ``matched`` (matches in every
    rewrite, the untracked simplifications too: patterns that fired only there are listed with count 0 and no first
    match), ``attempts``, ``match_rate``, ``self_time_us`` (its attempts' time less the rewrites nested in them),
    ``failed_us`` (time in attempts that did not match). unmatched: also the patterns tried that never matched (pure
    overhead). sort: "count", "time" (in recorded matches), "attempts", "self" (self time), "failed", "rate"; the most
    first (rate: the least)."""
    keys = {"count": lambda r: (-r.count, -r.time), "time": lambda r: (-r.time, -r.count),
            "attempts": lambda r: (-(r.attempts or 0), -r.count), "self": lambda r: (-(r.self_time_us or 0.0), -r.count),
            "failed": lambda r: (-(r.failed_us or 0.0), -r.count), "rate": lambda r: (r.match_rate if r.match_rate is not None else 2.0, -r.count)}
    if sort not in keys: raise ValueError(f"sort must be one of {', '.join(map(repr, keys))}, not {sort!r}")
    found: dict[tuple[str, int], Rule] = {}
    for s in self.steps:
      for k, (_, _, loc, t) in enumerate(s._raw.matches):
        if (r := found.get(loc)) is None: found[loc] = r = Rule(loc, 0, 0.0, [], s.matches[k])
        r.count += 1
        r.time += t
        if not r.steps or r.steps[-1] is not s: r.steps.append(s)
    for loc, st in (tg.stats_of(self._rec.patterns) if self._rec is not None and self._rec.patterns else {}).items():
      if (r := found.get(loc)) is None:
        if not (st.matches or unmatched): continue
        found[loc] = r = Rule(loc, 0, 0.0, [], None)
      r.attempts, r.matched = st.attempts, st.matches
      r.self_time_us, r.failed_us = round(st.self_time * 1e6, 3), round(st.fail_time * 1e6, 3)
    return sorted(found.values(), key=keys[sort])

  @functools.cached_property
  def _program_map(self) -> programs.Program:
    return programs.build(self._rec, self.kernels)

  def program(self) -> programs.Program:
    """The block's program as kernels and buffers (see :class:`tgviz.trace.program.Program`): every call of its schedules
    in run order (``.kernels``) and every buffer between them (``.buffers``: writer, readers, shape, dtype, nbytes), each
    with the reason tinygrad's scheduler made it (``.reason``, one of user, output, input, copy, device, ranges, cost,
    reduce, other; ``.detail``; ``.line``). Read from the trace when first asked for."""
    return self._program_map

  def why(self, a: Any, b: Any) -> list[programs.Buffer]:
    """The buffers between two kernels (a Kernel, its index in :meth:`program`, or its display name, a glob or its key:
    see :meth:`tgviz.trace.program.Program.kernel`), with their reasons: why tinygrad did not fuse them (see
    :meth:`tgviz.trace.program.Program.why`)."""
    return self._program_map.why(a, b)

  def kernel_table(self, peaks: bool = False, cache_dir: str | Path | None = None) -> list[dict[str, Any]]:
    """One plain row per kernel, in compile order (``pandas.DataFrame(trace.kernel_table())`` makes a table of it):
    name, device, global_size, local_size, tinygrad's estimates flops and bytes (None where it made none), runs (launches
    inside the capture: each launch counts for one kernel, the first of those that compiled to its program, whose
    ``shares`` lists the others; theirs say which row ``counted_in``) and time_us (their device time in total, µs; None
    when it did not run); its time as a spread, median_us, min_us, max_us over timed_runs, timed ("capture", or
    "re-timed" after trace.retime), cold (a single launch in the capture: no measurement of it warm) and settled
    (re-timed: whether its median settled before a bound stopped the runs; None where not re-timed); bound
    ("memory", "compute" or "latency"), roof_fraction, launch_floors (its median in the device's launch floors), busy_units,
    limit (those in a few words: Verdict.label) and why (see tgviz.trace.verdicts.Verdict) where the device's peaks were
    measured (peaks=True measures them once if they were not: a few seconds; see roofline); compile_total_us (its row of
    compile_table's total_us: all its compiling took, of which that row's compile_us is the device compile); key
    (tinygrad's key of its AST) and causes (why it ends where it does: the reasons of the buffers its calls write, see
    :meth:`program`)."""
    found = runtime.roofline(self.kernels, True, cache_dir, measure=peaks).peaks  # (the roofline's: a faster kernel's roof)
    compiled = {row["kernel"]: row["total_us"] for row in self.compile_table()}
    causes = self.program().kernel_causes()
    return [{**k.table_row(found, compiled.get(k.display_name)), "causes": causes.get(k.group.index, [])} for k in self.kernels]

  def program_kernels(self, source_key: bytes) -> list[Kernel]:
    """The kernels that compiled to the program of this SOURCE key, in compile order (see Kernel.program_kernels)."""
    return self._programs.get(source_key, [])

  @functools.cached_property
  def _programs(self) -> dict[bytes, list[Kernel]]:
    out: dict[bytes, list[Kernel]] = {}
    for k in self.kernels:
      if k._program is not None: out.setdefault(k._program.source_key, []).append(k)
    return out

  def compile_times(self) -> compiling.CompileTimes:
    """tinygrad's own spans of its compiler (the TINY lane: schedules, each kernel's codegen and its steps, render and
    device compile) and of the Tensor methods called (USER), nested, with ``totals`` (the capture's wall time split into
    what they cover, and what not): see :class:`tgviz.trace.compile.CompileTimes`. Empty for a trace without a profile."""
    return self._compile

  @functools.cached_property
  def _compile(self) -> compiling.CompileTimes:
    groups = [compiling.GroupInfo(g.index, g.kind, g.name) for g in self.groups]
    return compiling.compile_times(self._rec.profile if self._rec is not None else None, groups)

  def compile_table(self) -> list[dict[str, Any]]:
    """One plain row per kernel, in compile order: kernel (its display name), schedule_us (its share of the schedule
    that made it), codegen_us (its rewrites, linearize and the rest of its codegen), render_us, compile_us (the device
    compiler, tinygrad's disk cache included), first_launch_us (its program's first launch beyond its device time: a
    device that builds kernels when it first runs them, PoCL, does it there) and total_us, from tinygrad's spans (µs;
    None where there are none)."""
    return compiling.compile_rows(self._compile, [compiling.KernelInfo(k.group.index, k.display_name, k._program.source_key if k._program
                                                                         is not None and k.program_kernels[0] is k else None) for k in self.kernels])

  def retime(self, kernels: list[Kernel] | None = None, slowest: int = timings.SLOWEST, **how: float) -> list[Kernel]:
    """Time kernels again after the capture, each on its own: warm-up launches, then as many as give a stable median
    (see tgviz.bridge.time_program: warmup, max_runs, budget, rel). Default: until the ``slowest`` kernels by device time
    in the run (Kernel.warm_total_us) are all warm medians, those of them with fewer than 10 launches in the capture
    timed again (a cold first launch far above its warm time drops from them: the kernel that rises is timed too), at
    most ``timings.AT_MOST`` times ``slowest`` kernels. Their times replace the capture's wherever a kernel's time is
    shown and are saved with the trace. A kernel with no program, or on a NULL device, is skipped. Returns those timed."""
    if self._rec is None: return []
    if kernels is not None: return [k for k in kernels if self._retime_one(k, how)]
    done: list[Kernel] = []
    tried: set[int] = set()
    while todo := [k for k in sorted((k for k in self.kernels if k.timing is not None), key=lambda k: -(k.warm_total_us or 0.0))[:slowest]
                   if id(k) not in tried and timings.untrusted(k.timing)][:timings.AT_MOST * slowest - len(tried)]:
      tried.update(id(k) for k in todo)
      done += [k for k in todo if self._retime_one(k, how)]
    return done

  def _retime_one(self, k: Kernel, how: dict[str, float]) -> bool:
    """Time kernel k again (see retime), its times kept in the trace; False where it cannot run again."""
    rec = self._rec
    if rec is None or k._program is None or k._program_uop is None or tg.is_null_device(k.device) or not k.group.steps: return False
    got = tg.time_program(k._program_uop, k.group.steps[0].before(), k.device, **how)  # type: ignore[arg-type]
    rec.retimed[k._program.source_key], rec.retimed_stable[k._program.source_key] = got.times, got.stable
    return True

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

  def summary(self, kernels: bool = True) -> str:
    """A plain-text summary: kernels, the other groups by kind (the tree's rows: "4 schedule groups", not "16 groups"
    that counted the kernels again), steps, matches (kernels: and a line per kernel, its launch sizes)."""
    n_steps = sum(len(g.steps) for g in self.groups)
    n_matches = sum(g.match_count for g in self.groups)
    others = [plural(n, f"{kind} group") for kind, n in collections.Counter(g.kind for g in self.groups if g.kind != "kernel").items()]
    lines = [f"tgviz trace on {self.device}: " + ", ".join([plural(len(self.kernels), "kernel"), *others, plural(n_steps, "step"),
                                                           plural(n_matches, "match", "matches")])]
    lines += [f"  kernel {k.display_name}  global={k.global_size} local={k.local_size}" for k in self.kernels if kernels]
    if self.error is not None: lines.append(f"  stopped by {type(self.error).__name__}: {self.error}")
    return "\n".join(lines)

  __str__ = summary

  def __repr__(self) -> str:
    return f"<Trace {len(self.kernels)} kernels [{', '.join(k.display_name for k in self.kernels)}], {len(self.groups)} groups, " \
           f"{sum(len(g.steps) for g in self.groups)} steps{', error' if self.error is not None else ''}>"

