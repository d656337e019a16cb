"""tgviz's model of what tinygrad's compiler did: Trace -> groups -> steps -> matches, and kernels.

Built from what :mod:`tgviz.bridge` recorded; reading it needs no knowledge of tinygrad's internals. The graphs it
hands out (``Step.before()`` etc.) are tinygrad ``UOp`` objects, the very ones tinygrad computed. Pictures, reports and
the capture itself build on this module (see :mod:`tgviz.api` for the public classes); it imports none of them.
"""
from __future__ import annotations

import fnmatch
import functools
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Self

from tgviz import asm, runtime
from tgviz import bridge as tg
from tgviz.remembered import Remembered
from tgviz.steps import Event, Rule, Step, rebuilt_event

KERNEL_COLUMNS = ("name", "device", "global_size", "local_size", "flops", "bytes", "runs", "time_us")  # Trace.kernel_table
disassembled = Remembered(tg.disassemble)  # by device and binary (objdump, on the CPU device; tgviz.early hands them over)


def display_names(names: list[str | None]) -> list[str | None]:
  """Names told apart: a name more than one entry has gets its number among them, from 1, in order ("E_2 #1", "E_2 #2");
  None (not a kernel) stays None."""
  counts = Counter(n for n in names if n is not None)
  seen: Counter[str] = Counter()
  out: list[str | None] = []
  for n in names:
    if n is not None and counts[n] > 1: seen[n] += 1; out.append(f"{n} #{seen[n]}")
    else: out.append(n)
  return out


class Kernel:
  """One compiled kernel: its generated device code, launch dimensions, tinygrad's estimates and measured run times (read
  from the trace when first asked for)."""

  def __init__(self, group: Group, device: str, renderer: str, program: Callable[[], Any],
               lines: Callable[[str], list[tuple[Any, ...]] | None] | None = None, origins: tuple[tg.Origin, ...] = (),
               run_times: Callable[[tg.Program], list[float]] | None = None, c_style: bool = False,
               search: tg.BeamSearch | None = None, trace: Trace | None = None, opts_seen: tuple = ()):
    self.group, self.device, self.renderer, self._load, self._lines = group, device, renderer, program, lines
    self.trace = trace      # the trace the kernel is part of
    self.search = search    # BEAM's search for this kernel (candidates, their times, the winner), None without one
    self._opts_seen = opts_seen  # each opt application of its codegen with the index of the step it made
    self._c_style = c_style  # rendered by one of tinygrad's C-style renderers, whose lines tgviz maps (lines: None when
                             # the trace has no line data at all, e.g. tinygrad's rewrites.pkl)
    self._run_times = run_times
    self.origins: list[tg.Origin] = list(origins)
    """The Tensor operations this kernel computes (tinygrad's op metadata: op name, backward flag) and the line of the
    user's code that called each (file, line, source; file None for a call made before the capture)."""

  @functools.cached_property
  def _program_uop(self) -> Any:
    return self._load()  # the PROGRAM UOp holding the rendered source (None if the compile stopped before rendering)

  @functools.cached_property
  def _program(self) -> tg.Program | None:
    return tg.program_of(self._program_uop) if self._program_uop is not None else None

  @functools.cached_property
  def program_uops(self) -> list[Any]:
    """The linearized program the renderer consumed: its UOps in order, as tinygrad's print_uops lists them (see
    :meth:`print_uops`); empty if the compile stopped before that."""
    return tg.linear_uops(self._program_uop) if self._program_uop is not None else []

  def print_uops(self) -> str:
    """tinygrad's print_uops listing of :attr:`program_uops`: one line per UOp, numbered as tinygrad numbers them."""
    return "\n".join(tg.print_uops(self.program_uops))

  @functools.cached_property
  def _disassembly(self) -> tuple[str, str | None]:
    lib = tg.binary(self._program_uop) if self._program_uop is not None else None
    return disassembled(self.device, lib) if lib is not None else tg.disassemble(self.device, None)

  @property
  def disassembly(self) -> str:
    """The kernel's machine code as its device's compiler disassembles the binary tinygrad compiled (objdump for the CPU
    backends); "" where tinygrad can give none (see :attr:`disassembly_note`)."""
    return self._disassembly[0]

  @property
  def disassembly_note(self) -> str | None:
    """Why there is no disassembly (a NULL device, a driver's own binary format, ...); None where there is one."""
    return self._disassembly[1]

  @functools.cached_property
  def _asm_lines(self) -> tuple[list[list[int]] | None, str | None]:
    if not self.disassembly: return None, self.disassembly_note
    debug, why = tg.debug_listing(self.device, self.source)
    return asm.linked(self.disassembly, debug) if debug else (None, f"Assembly is not linked to lines: {why}.")

  @property
  def disassembly_lines(self) -> list[list[int]] | None:
    """For each line of :attr:`disassembly`, the lines of :attr:`source` (from 1) its instruction was compiled from:
    read from the line table of the source compiled again with -g (the CPU device's clang only; done on first access,
    never on the run). [] for a line that is no instruction or has no line; None where there is no line table
    (:attr:`disassembly_lines_note` says why)."""
    return self._asm_lines[0]

  @property
  def disassembly_lines_note(self) -> str | None:
    """Why :attr:`disassembly_lines` is None, or which instructions have no line; None when every one has."""
    return self._asm_lines[1]

  @property
  def name(self) -> str:
    """The kernel's function name (the group's name if it was never rendered)."""
    return self._program.name if self._program is not None else self.group.name

  @property
  def source(self) -> str:
    """The generated device code ("" if the compile stopped before rendering)."""
    return self._program.source if self._program is not None else ""

  @property
  def display_name(self) -> str:
    """The name the widget, the report and the summaries show: :attr:`name`, numbered in compile order where kernels of
    the trace share it (``E_2 #1``, ``E_2 #2``); :attr:`name` stays tinygrad's."""
    return self.group.display_name

  @property
  def global_size(self) -> tuple[int, ...]:
    return self._program.global_size if self._program is not None else ()

  @property
  def local_size(self) -> tuple[int, ...] | None:
    return self._program.local_size if self._program is not None else None

  @functools.cached_property
  def lines(self) -> list[tuple[Any, ...]] | None:
    """For each line of :attr:`source` (``lines[0]`` is line 1), the UOps behind it: the UOp the renderer wrote the line
    for and the UOps inlined into it; the kernel's parameters belong to the signature line. None when the line mapping is
    unknown (:attr:`lines_note` says why): the renderer is not a C-style one (LLVM, PTX, ...), or tgviz did not see the
    kernel rendered (e.g. the trace is tinygrad's own rewrites.pkl)."""
    return self._lines(self.source) if self.source and self._lines is not None else None

  @property
  def lines_note(self) -> str | None:
    """Why :attr:`lines` is None, for the code panel (None when the lines are mapped or there is no code)."""
    if not self.source or self.lines is not None: return None
    if self.renderer and not self._c_style:
      return f"Lines are not linked to UOps: this kernel's renderer ({self.renderer}) is not a C-style one, and tgviz maps " \
             f"the lines of C-style renderers only."
    if self._lines is None:
      return "Lines are not linked to UOps: tgviz did not see this kernel rendered (the trace was not recorded by a tgviz " \
             "capture: tinygrad's own rewrites.pkl, or a trace file of an older tgviz)."
    return "Lines are not linked to UOps: tgviz did not see this kernel rendered inside the capture, or could not map its lines."

  @functools.cached_property
  def line_keys(self) -> list[list[str]] | None:
    """Per line of the source, the node keys of the UOps behind it (see lines), each once; None as for lines."""
    return [list(dict.fromkeys(tg.node_key(u) for u in line)) for line in self.lines] if self.lines is not None else None

  def line_numbers(self, uop: Any) -> list[int]:
    """The source lines (1-based) a UOp is behind."""
    return [i for i, line in enumerate(self.lines or [], 1) if uop in line]

  @property
  def codegen_step(self) -> Step | None:
    """The kernel's final codegen step: the graph its renderer consumed (the step before the one that rendered it)."""
    i = tg.render_step_index([s.name for s in self.group.steps])
    return self.group.steps[i - 1] if i else None

  @property
  def flops(self) -> int | None:
    """tinygrad's estimate of the kernel's floating point (and integer ALU) operations; None where it made none."""
    return self._program.flops if self._program is not None else None

  @property
  def bytes(self) -> int | None:
    """tinygrad's estimate of the bytes the kernel moves to and from memory (each byte once); None where it made none."""
    return self._program.bytes if self._program is not None else None

  @property
  def run_times(self) -> list[float]:
    """The device time, in seconds, of each launch of this kernel inside the capture, as tinygrad measured it (empty
    when it did not run there, e.g. on a NULL device or in a loaded rewrites.pkl)."""
    if self._program is None or self._run_times is None: return []
    return self._run_times(self._program)

  @property
  def opts(self) -> list[tg.Opt]:
    """The optimizations tinygrad applied to this kernel, in order (its KernelInfo.applied_opts: UPCAST, LOCAL, UNROLL,
    GROUP, TC, ... with axis and amount); who chose them: :attr:`opts_by`."""
    return list(tg.applied_opts(self._program_uop)) if self._program_uop is not None else []

  @property
  def opt_steps(self) -> list[tuple[tg.Opt, Step | None]]:
    """Each of :attr:`opts` with the rewrite step its application made (a ``shift ...`` substitute; None where tgviz did
    not see it applied, e.g. in a trace of an older tgviz)."""
    return [(o, self.group.steps[i] if i is not None and i < len(self.group.steps) else None)
            for o, i in tg.opt_steps(tuple(self.opts), list(self._opts_seen))]

  @property
  def opts_by(self) -> str:
    """Who chose :attr:`opts`: "heuristic", "BEAM", "BEAM cache", "user" (a retry's), "given" or "none"."""
    if not self.group.steps: return "none"
    return tg.chooser(self.group.steps[0].before(), tuple(self.opts), self.search.cached if self.search is not None else None)

  @functools.cached_property
  def ast_key(self) -> str:
    """The identity of the AST this kernel compiled (its first graph): equal for the same kernel in any trace."""
    return tg.structural_key(self.group.steps[0].before()) if self.group.steps else ""

  def table_row(self) -> dict[str, Any]:
    """This kernel as a row of :meth:`Trace.kernel_table`."""
    times = self.run_times
    return dict(zip(KERNEL_COLUMNS, (self.name, self.device, list(self.global_size), list(self.local_size) if self.local_size is not None
                                     else None, self.flops, self.bytes, len(times), round(sum(times) * 1e6, 3) if times else None), strict=True))

  def __repr__(self) -> str:
    return f"<Kernel {self.name} on {self.device} ({self.renderer}) global={self.global_size} local={self.local_size}>"


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
    for name in ("groups", "kernels", "_runtime"): self.__dict__.pop(name, None)

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

  def kernel_table(self) -> list[dict[str, Any]]:
    """One plain row per kernel, in compile order (``pandas.DataFrame(trace.kernel_table())`` makes a table of it):
    name, device, global_size, local_size, tinygrad's estimates flops and bytes (None where it made none), runs (launches
    inside the capture) and time_us (their measured device time in total, µs; None when it did not run)."""
    return [k.table_row() for k in self.kernels]

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
    :class:`tgviz.runtime.Timeline`): start and duration in µs from the start of the capture, name, kind, the kernel it
    runs, and which TinyJit run it belongs to (its captured batch, replay 0, or the n-th replay). From tinygrad's own
    profile events, with the device times a capture measures; empty for a trace without them (tinygrad's rewrites.pkl)."""
    return self._runtime[0]

  def memory(self) -> runtime.Memory:
    """The buffers allocated and freed over the run, with size and dtype, the launches that wrote and read each, the peak
    and the buffers alive at it (see :class:`tgviz.runtime.Memory`)."""
    return self._runtime[1]

  def roofline(self, peaks: bool = True, cache_dir: str | Path | None = None) -> runtime.Roofline:
    """The kernels that ran, by arithmetic intensity (tinygrad's FLOPs / bytes estimates) and achieved GFLOP/s, against
    each device's peak compute and bandwidth: measured once by a small tinygrad benchmark and cached per device (in
    cache_dir, else TGVIZ_CACHE_DIR, else ~/.cache/tgviz); peaks=False leaves them out (see :class:`tgviz.runtime.Roofline`)."""
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
