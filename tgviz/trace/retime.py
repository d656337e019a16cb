"""Run times a user can trust: a kernel's time as a spread (median, min, max over n runs), from its launches inside the
capture or from timing it again afterwards (warm, as many runs as give a stable median), a single cold launch said to
be one, and two times compared against their noise.

Owns Timing, retime (the kernels timed again, their times kept in the trace, saved with it) and compare_times. Each
launch of the capture belongs to one kernel: kernels that compiled to the same program share its launches, which count
for the first of them (``Kernel.program_kernels``). tinygrad's side of the runs is :mod:`tgviz.bridge`'s
``time_program``; this module draws nothing.
"""
from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tgviz import bridge as tg

if TYPE_CHECKING:
  from tgviz.trace.kernel import Kernel
  from tgviz.trace.trace import Trace

RELIABLE = 10     # launches in the capture from which a kernel's own times are taken as they are (fewer: re-time it)
SLOWEST = 5       # kernels retime() times again by default, the slowest in the capture with fewer than RELIABLE launches


@dataclass(frozen=True)
class Timing:
  """A kernel's measured device time: each run's µs and where they come from, "capture" (its launches inside the capture,
  the first of them cold: the device's first run of the kernel) or "re-timed" (after the capture: warm-up launches, then
  timed ones until the median settled, see tgviz.bridge.time_program)."""
  times_us: tuple[float, ...]
  source: str
  stable: bool | None = None                # re-timed: whether the median settled before a bound stopped the runs

  @property
  def n(self) -> int:
    return len(self.times_us)

  @property
  def median_us(self) -> float:
    return statistics.median(self.times_us)

  @property
  def min_us(self) -> float:
    return min(self.times_us)

  @property
  def max_us(self) -> float:
    return max(self.times_us)

  @property
  def cold(self) -> bool:
    """A single launch inside the capture: the device's first run of the kernel (its program loaded, caches cold), no
    measurement of what it takes warm."""
    return self.source == "capture" and self.n == 1

  def text(self) -> str:
    """As the table and the timeline say it: "median 12.3 µs (min 11.9, max 13.1; 40 runs, re-timed)", or "2,028 µs (1
    cold launch)"."""
    if self.cold: return f"{self.times_us[0]:,.1f} µs (1 cold launch)"
    what = "re-timed" + ("" if self.stable is not False else ", not settled") if self.source == "re-timed" else \
           "launches in the capture, the first cold"
    return f"median {self.median_us:,.1f} µs (min {self.min_us:,.1f}, max {self.max_us:,.1f}; {self.n} runs, {what})"


def timing(kernel: Kernel) -> Timing | None:
  """The kernel's time: re-timed where it was (trace.retime), else its launches in the capture; None where it did not
  run, or its launches count for another kernel of the same program."""
  if kernel.trace is not None and kernel.program_kernels[:1] != [kernel]: return None
  prog = kernel._program
  rec = kernel.trace._rec if kernel.trace is not None else None
  if prog is not None and rec is not None and (again := rec.retimed.get(prog.source_key)):
    return Timing(tuple(t * 1e6 for t in again), "re-timed", rec.retimed_stable.get(prog.source_key))
  times = kernel.run_times
  return Timing(tuple(t * 1e6 for t in times), "capture") if times else None


def candidates(trace: Trace, slowest: int = SLOWEST) -> list[Kernel]:
  """The kernels retime() times by default: of those that ran fewer than RELIABLE times, the slowest (by their time in
  the capture, in total), at most slowest of them."""
  ran = [(sum(t.times_us), k) for k in trace.kernels if (t := timing(k)) is not None and t.source == "capture" and t.n < RELIABLE]
  return [k for _, k in sorted(ran, key=lambda x: -x[0])[:slowest]]


def retime(trace: Trace, kernels: Iterable[Kernel] | None = None, slowest: int = SLOWEST, **how: float) -> list[Kernel]:
  """Time kernels again (default: candidates(trace, slowest)), each on its own after warm-up launches, as many runs as
  give a stable median (how: tgviz.bridge.time_program's warmup, max_runs, budget, rel); their times are kept in the
  trace (and saved with it) and replace the capture's in timing(), the kernel table, the roofline and comparisons.
  Returns the kernels timed. A kernel with no program or on a NULL device is skipped."""
  rec = trace._rec
  done: list[Kernel] = []
  if rec is None: return done
  for k in candidates(trace, slowest) if kernels is None else list(kernels):
    if k._program is None or k._program_uop is None or tg.is_null_device(k.device) or not k.group.steps: continue
    got = tg.time_program(k._program_uop, k.group.steps[0].before(), k.device, **how)  # type: ignore[arg-type]
    rec.retimed[k._program.source_key] = got.times
    rec.retimed_stable[k._program.source_key] = got.stable
    done.append(k)
  return done


def compare_times(a: Timing | None, b: Timing | None) -> str | None:
  """How two kernels' times compare: "cold" (either is a single cold launch: no measurement to compare), "within noise"
  (each median inside the other's min-max spread), else "b faster" or "b slower"; None where either did not run."""
  if a is None or b is None: return None
  if a.cold or b.cold: return "cold"
  if a.min_us <= b.median_us <= a.max_us or b.min_us <= a.median_us <= b.max_us: return "within noise"
  return "b faster" if b.median_us < a.median_us else "b slower"
