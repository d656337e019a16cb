"""One compiled kernel of a trace: its device code, launch dimensions, tinygrad's estimates, its opts and who chose them,
its program below the source (linearized UOps, machine code and the lines each instruction came from), and its
measured run times, each read from the trace when first asked for.

Owns the Kernel; its Group and Trace are :mod:`tgviz.trace.trace`'s (a kernel names its group and trace: a
parent/child reference inside this package, for types only).
"""
from __future__ import annotations

import fnmatch
import functools
import math
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tgviz import bridge as tg
from tgviz.trace import asm, verdicts
from tgviz.trace import retime as timings
from tgviz.trace.access import Access, Buffer, KernelAccess, Reads, trace_params
from tgviz.trace.steps import Step
from tgviz.work.remembered import Remembered

if TYPE_CHECKING:
  from tgviz.trace.trace import Group, Trace

SHORT_KEY = 8  # hex digits of a kernel's key shown beside its name (as tinygrad's VIZ labels a CALL with its AST's key)
KERNEL_COLUMNS = ("name", "device", "global_size", "local_size", "flops", "bytes", "runs", "time_us",  # Trace.kernel_table
                  "median_us", "min_us", "max_us", "timed_runs", "timed", "cold", "settled", "bound", "roof_fraction",
                  "launch_floors", "busy_units", "limit", "why", "compile_total_us", "shares", "counted_in", "key")
disassembled = Remembered(tg.disassemble)  # by device and binary (objdump, on the CPU device; tgviz.report.early hands them over)


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


def no_such_kernel(text: str, names: list[str], where: str) -> KeyError:
  """The error for a kernel's name that names none of these (where: "the program", "the trace"), listing some of them."""
  names = list(dict.fromkeys(names))
  return KeyError(f"no kernel {text!r} in {where} (kernels: {', '.join(names[:12])}{', ...' if len(names) > 12 else ''}): "
                  "name one by its display name, a glob of names, or its key (at least 4 hex digits)")


class Kernel:
  """One compiled kernel: its generated device code, launch dimensions, tinygrad's estimates and measured run times (read
  from the trace when first asked for)."""

  def __init__(self, group: Group, device: str, renderer: str, program: Callable[[], Any],
               lines: Callable[[str], list[tuple[Any, ...]] | None] | None = None, origins: tuple[tg.Origin, ...] = (),
               run_times: Callable[[tg.Program], list[float]] | None = None, c_style: bool = False,
               search: tg.BeamSearch | None = None, trace: Trace | None = None, opts_seen: tuple = (),
               node_origins: tuple[tuple[int, ...], ...] = ()):
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
    self._node_origins = node_origins  # per node of its AST, in toposort order: indices into origins

  @functools.cached_property
  def _ast_made(self) -> list[tuple[Any, tuple[int, ...]]]:
    """Each node of the base AST with which of origins made it ([] where the trace does not say)."""
    if not self._node_origins or not self.group.steps: return []
    topo = tg.toposort(self.group.steps[0].before())
    if len(topo) != len(self._node_origins): return []  # (not the AST the capture saw: nothing to say)
    return list(zip(topo, self._node_origins, strict=True))

  def origins_of(self, uop: Any) -> list[tg.Origin] | None:
    """Which of the kernel's origins made a node of its AST (its base AST, the View Base AST's graph): the ops whose
    UOps it was made of, or where the scheduler made it (a REDUCE, an INDEX), those of the nodes that use it. None
    where uop is not in the AST, or the trace does not say (none made it; a trace of an older tgviz)."""
    made = next((m for u, m in self._ast_made if u is uop), None)
    return [self.origins[i] for i in made] if made else None

  def made_by(self, origin: int) -> list[Any]:
    """The nodes of the base AST that origins[origin] made (see origins_of): where a user's op is in the kernel."""
    return [u for u, m in self._ast_made if origin in m]

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
    when it did not run there, e.g. on a NULL device or in a loaded rewrites.pkl, and for a kernel whose program an
    earlier kernel compiled too: a launch runs a program, and counts for the first kernel of it, see program_kernels)."""
    if self._program is None or self._run_times is None or (self.trace is not None and self.program_kernels[0] is not self): return []
    return self._run_times(self._program)

  @property
  def total_us(self) -> float | None:
    """Its launches' device time inside the capture in total, µs (run_times summed: the kernel table's ``time_us``,
    "total", and the what-if sheet's); None where it did not run there."""
    times = self.run_times
    return round(sum(times) * 1e6, 3) if times else None

  @property
  def warm_total_us(self) -> float | None:
    """Its launches' device time in the run as far as it can be trusted, µs: where it was timed again
    (``trace.retime``), its warm median times its launches in the capture; else :attr:`total_us` (a single cold launch
    as it ran). What retime ranks the slowest kernels by."""
    t = self.timing
    return round(t.median_us * len(self.run_times), 3) if t is not None and t.source == "re-timed" else self.total_us

  @property
  def program_kernels(self) -> list[Kernel]:
    """The kernels of the trace that compiled to this kernel's program (the same device code: tinygrad's ASTs can differ
    where the code does not, a constant's dtype say), in compile order, this one among them; their launches are one
    program's, counted for the first (its run_times, the kernel table's runs)."""
    if self.trace is None or self._program is None: return [self]
    return self.trace.program_kernels(self._program.source_key) or [self]

  @functools.cached_property
  def float_flops(self) -> int | None:
    """The float work of :attr:`flops` (tinygrad's estimate without the integer ALU ops: hashes, masks, the index
    arithmetic it counts), which the float32 compute roof bounds; None where there is no program or it is symbolic."""
    return tg.float_ops(self._program_uop) if self._program_uop is not None else None

  @property
  def timing(self) -> timings.Timing | None:
    """Its measured time as a spread (median, min, max over n runs): re-timed where it was (``trace.retime``), else its
    launches inside the capture (one launch: ``timing.cold``); None where it did not run, or its launches count for an
    earlier kernel of its program."""
    if self.trace is not None and self.program_kernels[0] is not self: return None
    rec, key = self.trace._rec if self.trace is not None else None, self._program.source_key if self._program is not None else None
    again = rec.retimed.get(key) if rec is not None and key is not None else None
    return timings.timing_of(self.run_times, again, rec.retimed_stable.get(key) if rec is not None and key is not None else None)

  def retime(self, **how: float) -> timings.Timing | None:
    """Time this kernel again on its own (warm-up, then as many runs as give a stable median; see ``trace.retime``)."""
    if self.trace is not None: self.trace.retime([self], 1, **how)
    return self.timing

  def verdict(self, peaks: verdicts.DevicePeaks | None) -> verdicts.Verdict | None:
    """Which limit it ran into on a device of these peaks (``trace.roofline().peaks[device]``), by its measured median
    (see tgviz.trace.verdicts); None without peaks, a time, or tinygrad's estimates of its FLOPs and bytes."""
    t = self.timing
    if t is None or peaks is None or self.flops is None or self.bytes is None or t.median_us <= 0: return None
    threads = math.prod(self.global_size or (1,)) * math.prod(self.local_size or (1,))
    groups = math.prod(self.global_size or (1,)) if self.local_size is not None else None  # (a CPU kernel has none)
    return verdicts.verdict(self.flops, self.float_flops, self.bytes, threads, t.median_us, peaks, groups)

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
  def key(self) -> str:
    """The kernel's stable identity: tinygrad's key of the AST it compiled (its first graph), its KernelInfo (name,
    opts) left out, as tinygrad's VIZ links kernels (hex; the same kernel has it in any run, trace or process; "" for a
    kernel with no steps). Shown short (:attr:`short_key`) beside the name; accepted wherever a kernel is named."""
    return tg.kernel_key(self.group.steps[0].before()) if self.group.steps else ""

  @property
  def short_key(self) -> str:
    """The first 8 hex digits of :attr:`key`, as the widget, the report and ``tgviz show`` print it."""
    return self.key[:SHORT_KEY]

  def named(self, pattern: str) -> bool:
    """Whether pattern names this kernel: its name or display name ("E_2 #2"), either as a glob ("r_*"), or its key or a
    prefix of it of at least 4 hex digits."""
    if fnmatch.fnmatchcase(self.name, pattern) or fnmatch.fnmatchcase(self.display_name, pattern): return True
    return len(pattern) >= 4 and bool(self.key) and self.key.startswith(pattern.lower())

  @functools.cached_property
  def access_model(self) -> KernelAccess:
    """What accesses(), reads(), thread() and buffer_use() ask: the kernel's access tables at both stages (the plain
    tables of tinygrad's index UOps the widget's access tab evaluates too; see tgviz.trace.access)."""
    ast = next((s for s in self.group.steps if s.name == tg.KERNEL_LANDMARKS[0]), None)
    sink = ast.before() if ast is not None else None
    params = trace_params(self.trace).get(tg.node_key(sink), []) if self.trace is not None and sink is not None else []
    return KernelAccess(sink, self.program_uops, params)

  def accesses(self, stage: str | None = None) -> list[Access]:
    """Every LOAD and STORE of a global buffer: after the View Base AST (stage "ast": indices over the kernel's ranges),
    then in the final program (stage "program": over thread ids and loops, one per lane or vector); each with its buffer
    (slot, shape, dtype, the user's tensor where known), index and valid mask as tinygrad renders them, pattern
    ("contiguous", "strided" with its stride, "broadcast", "gather", "masked") and counts. See tgviz.trace.access."""
    return [a for s in ((stage,) if stage else ("ast", "program")) for a in self.access_model.accesses(s)]

  def reads(self, out_index: int | tuple[int, ...], slot: int | None = None) -> dict[int, Reads]:
    """The elements each buffer has read to compute the output element at out_index (a flat index, or coordinates in the
    output's shape) of the buffer stored to (slot; default the kernel's first store), over every reduce iteration,
    masked-off reads left out: {slot: Reads} (``.flat``: sorted flat indices, ``.coords``: in the buffer's shape).
    Evaluated from tinygrad's own index UOps of the View Base AST."""
    return self.access_model.reads(out_index, slot)

  def thread(self, **ids: int) -> dict[int, tuple[Reads, Reads]]:
    """What one thread of the final program reads and writes, per buffer: {slot: (reads, writes)}; ids by name
    (``k.thread(gidx0=1, lidx0=3)``; a thread id not given is 0, a loop not given runs whole, ``r0=2`` fixes the loop the
    code calls Ridx0 at 2: names as tinygrad renders them)."""
    return self.access_model.thread(ids)

  def buffer_use(self) -> list[Buffer]:
    """Each global buffer of the kernel and its use: elements read and written, reads (reuse: reads per element read),
    reads a valid mask turned off."""
    return self.access_model.buffers

  def table_row(self, peaks: dict[str, verdicts.DevicePeaks] | None = None, compile_total_us: float | None = None) -> dict[str, Any]:
    """This kernel as a row of :meth:`Trace.kernel_table` (peaks: per device, for its verdict; compile_total_us: its row
    of the compile table's total_us)."""
    times, t, same = self.run_times, self.timing, self.program_kernels
    v = self.verdict((peaks or {}).get(self.device))
    def us(x: float | None) -> float | None: return round(x, 3) if x is not None else None
    return dict(zip(KERNEL_COLUMNS, (
      self.name, self.device, list(self.global_size), list(self.local_size) if self.local_size is not None else None, self.flops,
      self.bytes, len(times), self.total_us, us(t.median_us if t else None), us(t.min_us if t else None),
      us(t.max_us if t else None), t.n if t else 0, t.source if t else None, t.cold if t else False, t.stable if t else None,
      v.bound if v else None, float(f"{v.fraction:.4g}") if v else None,
      round(v.floors, 2) if v is not None and v.floors is not None else None, list(v.busy) if v and v.busy else None,
      v.label if v else None, v.why if v else None, compile_total_us,
      [k.display_name for k in same if k is not self],
      same[0].display_name if same[0] is not self else None, self.key), strict=True))

  def __repr__(self) -> str:
    return f"<Kernel {self.name} on {self.device} ({self.renderer}) global={self.global_size} local={self.local_size}>"

