"""Run times a user can trust: a kernel's time as a spread (median, min, max over n runs), from its launches inside the
capture or from timing it again afterwards (warm, as many runs as give a stable median), a single cold launch said to
be one, and two times compared against their noise.

Owns Timing, timing_of (a kernel's, from its launches and its re-timing) and compare_times; ``Trace.retime`` times
kernels again (tinygrad's side of it is :mod:`tgviz.bridge`'s ``time_program``) and keeps their times in the trace.
Each launch of the capture belongs to one kernel: kernels that compiled to the same program share its launches, which
count for the first of them (``Kernel.program_kernels``). This module draws nothing.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass

from tgviz.trace.units import plural, time_text

RELIABLE = 10     # launches in the capture from which a kernel's own times are taken as they are (fewer: re-time it)
SLOWEST = 5       # retime() by default: until this many of the slowest kernels by device time are warm medians
AT_MOST = 3       # ... timing again at most this many times SLOWEST kernels (cold launches that rank among the slowest)


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
    """As the table and the timeline say it: "median 12.3 µs (min 11.9 µs, max 13.1 µs; 40 runs, re-timed)", or "2.03
    ms (1 cold launch)" (times as tgviz.trace.units.time_text writes them)."""
    if self.cold: return f"{time_text(self.times_us[0])} (1 cold launch)"
    what = "re-timed" + ("" if self.stable is not False else ", not settled") if self.source == "re-timed" else \
           "launches in the capture, the first cold"
    return f"median {time_text(self.median_us)} (min {time_text(self.min_us)}, max {time_text(self.max_us)}; {plural(self.n, 'run')}, {what})"


def untrusted(t: Timing | None) -> bool:
  """Whether a kernel's time needs timing again: fewer than RELIABLE launches in the capture, the first of them cold."""
  return t is not None and t.source == "capture" and t.n < RELIABLE


def timing_of(capture: list[float], retimed: list[float] | None, stable: bool | None = None) -> Timing | None:
  """A kernel's Timing from its launches in the capture and its re-timing (seconds; the re-timing where there is one);
  None where there is neither."""
  if retimed: return Timing(tuple(t * 1e6 for t in retimed), "re-timed", stable)
  return Timing(tuple(t * 1e6 for t in capture), "capture") if capture else None


NOISE = "a median inside the other's min – max"  # compare_times's rule for "within noise", as the texts state it
APART = "each median outside the other's min – max"  # ... for faster or slower


def compare_times(a: Timing | None, b: Timing | None) -> str | None:
  """How two kernels' times compare: "cold" (either is a single cold launch: no measurement to compare), "within noise"
  (NOISE: either median inside the other's min-max spread), else "b faster" or "b slower"; None where either did not run."""
  if a is None or b is None: return None
  if a.cold or b.cold: return "cold"
  if a.min_us <= b.median_us <= a.max_us or b.min_us <= a.median_us <= b.max_us: return "within noise"
  return "b faster" if b.median_us < a.median_us else "b slower"
