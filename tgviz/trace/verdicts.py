"""Which limit a kernel ran into, and how close it came: memory, compute, or latency / launch (too little work to fill
the device), with the fraction of its roof it reached.

The roofline model with each kernel's own work: its float work (tinygrad's FLOPs estimate less its integer ALU ops,
which no float roof bounds: they are counted apart) at the device's float32 compute roof, its bytes (tinygrad's
estimate) at the memory roof; the larger of the two times is the least the kernel can take, and that over its measured
median is the fraction of the roof it reached. A kernel far below its roof with fewer threads than the device has
compute units (fewer workgroups, where it has workgroups: one runs on one unit), or within a few launch floors of the
device's emptiest kernel, is latency-bound. Owns DevicePeaks (a
device's peaks as the roofline draws them: tgviz.bridge measures them), Verdict and verdict(); draws nothing.
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from tgviz import bridge as tg
from tgviz.trace.units import percent_text, time_text

LATENCY_FRACTION = 0.1   # below this fraction of its roof a kernel with little work is latency-bound
FAR = "below roofs"      # the limit of a kernel far below both roofs (Verdict.far)
LAUNCH_FLOORS = 4        # ... little work: it ran within this many of the device's launch floors, or on fewer threads than units


@dataclass
class DevicePeaks:
  """What tinygrad's own kernels reach on a device, measured once by a small benchmark (the best of a big matmul and
  chains of multiply-adds for FLOP/s, a big elementwise copy for bytes/s) and cached per device; where a kernel of the
  run was faster than the benchmark, the compute roof is that kernel's GFLOP/s (``benchmark_gflops`` keeps the
  benchmark's, ``how`` says so)."""
  device: str
  gflops: float
  gbs: float
  how: str                                  # what was measured
  measured: str                             # when (ISO date)
  cached: bool                              # read from the cache rather than measured now
  benchmark_gflops: float = 0.0             # what the benchmark reached (gflops: the roof, maybe a faster kernel's)
  launch_us: float = 0.0                    # the launch floor: the least device time of a one-element kernel
  units: int | None = None                  # compute units (OpenCL's), or the CPU device's threads; None: unknown

  def beaten(self, fastest: tuple[str, float], quickest: tuple[str, float] | None) -> list[str]:
    """Take the run's kernels over the benchmark where they did better, and say so (the notes returned): the benchmark
    is a floor on the compute roof, so a kernel's float work faster than it (fastest: its name and float GFLOP/s) is
    the roof; the launch floor a bound from above, so a kernel whose median is less (quickest: its name and median)
    is the floor. The floor is cached from the first run on the device, maybe on a busier machine than this one."""
    notes, (name, fast) = [], fastest
    if fast > self.gflops:
      self.gflops, self.how = fast, f"{name}, the fastest kernel of the run (the benchmark: {self.how})"
      notes.append(f"{self.device}: the compute roof is {name}'s {fast:,.1f} GFLOP/s of float work, above the "
                   f"benchmark's {self.benchmark_gflops:,.1f}")
    if quickest is not None and 0 < quickest[1] < self.launch_us:
      notes.append(f"{self.device}: the launch floor is {quickest[0]}'s median of {time_text(quickest[1])}, below the "
                   f"benchmark's {time_text(self.launch_us)} (measured {self.measured})")
      self.launch_us = quickest[1]
    return notes

  @property
  def ridge(self) -> float:
    """The intensity (FLOPs per byte) where the memory roof meets the compute roof."""
    return self.gflops / self.gbs if self.gbs else float("inf")


def device_peaks(device: str, cache_dir: Any = None, measure: bool = True) -> tuple[DevicePeaks | None, str | None]:
  """The device's peaks (cached, else measured now when measure is set), or None and why not."""
  found, why = tg.device_peaks(device, cache_dir, measure)
  if found is None: return None, why
  return DevicePeaks(found["device"], found["gflops"], found["gbs"], found["how"], found["measured"], found["cached"], found["gflops"],
                     found["launch_us"], found["units"]), None


@dataclass(frozen=True)
class Verdict:
  """A kernel's limit: ``bound`` "memory", "compute" or "latency"; ``fraction`` of its roof reached (the least time its
  work can take at the device's peaks, over its median); ``why``: the numbers behind it, in words; ``floors``: its
  median in the device's launch floors (its emptiest kernel's time; None where not measured), what says how far a
  latency-bound kernel is from the least any kernel takes; ``busy``: where too few workgroups (or threads), not the launch
  floor, made it latency-bound, the compute units they keep busy and the device's."""
  bound: str
  fraction: float
  why: str
  float_flops: int
  int_ops: int
  floors: float | None = None
  busy: tuple[int, int] | None = None

  @property
  def far(self) -> bool:
    """Far below both roofs though its work could fill the device: neither limits it (``bound`` is the nearer)."""
    return self.bound != "latency" and self.fraction < LATENCY_FRACTION

  @property
  def label(self) -> str:
    """The limit in a few words, as the kernel table's limit column and the program map's panel show it: "memory 45%",
    "latency 4.5× floor" (its median in launch floors), "latency 65×, 1/2 units" (too few workgroups: the units they
    keep busy of the device's, and still how many floors), "below roofs 0.12%" (``far``). Each figure keeps its unit on
    its line (non-breaking spaces): a narrow column wraps between them, two lines at most, none wider than before."""
    if self.bound == "latency":
      # (the floors to 2 places, as the kernel table's row has them, then to 1 place, or whole from 10)
      f = None if self.floors is None else Decimal(round(self.floors, 2))
      x = None if f is None else f.quantize(Decimal(1) if f >= 9.95 else Decimal("0.1"), ROUND_HALF_UP)
      if self.busy: return ("latency" if x is None else f"latency\u00a0{x}×,") + f" {self.busy[0]}/{self.busy[1]}\u00a0units"
      return "latency" if x is None else f"latency {x}×\u00a0floor"
    return f"{FAR if self.far else self.bound} {percent_text(self.fraction)}"


def _rate(x: float) -> str:
  """A rate reached: 2 places, or 2 significant figures under 0.1 ("0.0019", not "0.00", beside a roof of 17.2)."""
  return f"{x:,.2f}" if x >= 0.1 or x == 0 else f"{x:.2g}"


def verdict(flops: int, float_flops: int | None, nbytes: int, threads: int, median_us: float, peaks: DevicePeaks,
            groups: int | None = None) -> Verdict:
  """A kernel's verdict: its estimates (tinygrad's FLOPs, their float work, bytes), its threads (global x local size),
  its measured median, the device's peaks; its workgroups (the global size, None for a device without them)."""
  if float_flops is None: float_flops = flops
  ints, t = flops - float_flops, median_us * 1e-6
  t_compute = float_flops / (peaks.gflops * 1e9) if peaks.gflops else 0.0
  t_memory = nbytes / (peaks.gbs * 1e9) if peaks.gbs else 0.0
  fraction = max(t_compute, t_memory) / t
  apart = f"; {ints:,} integer ops apart" if ints else ""
  floors = median_us / peaks.launch_us if peaks.launch_us else None
  # a workgroup runs on one compute unit: a kernel of fewer workgroups than units leaves the others idle
  idle = peaks.units is not None and groups is not None and groups < peaks.units
  few = idle or (peaks.units is not None and groups is None and threads < peaks.units)
  plural = "s" if threads != 1 else ""
  units = f" for {peaks.units} compute units" if peaks.units is not None else ""
  spread = f"{groups:,} workgroup{'s' if groups != 1 else ''} of {threads // groups:,} thread{'s' if threads // groups != 1 else ''}{units} " \
           f"(it runs on at most {groups} of them)" if idle and groups else f"{threads:,} thread{plural}{units}"
  near = floors is not None and floors < LAUNCH_FLOORS
  if fraction < LATENCY_FRACTION and (few or near):
    floor = f", {floors:.1f}× the device's launch floor ({time_text(peaks.launch_us)})" if floors is not None else ""
    busy = (groups if idle and groups else threads, peaks.units) if not near and peaks.units is not None else None
    # near the floor, launching is what it costs; far above it, its work runs on too few units, one after another
    head = "latency/launch-bound" if near or floors is None else "latency-bound, too little parallel work"
    return Verdict("latency", fraction, f"{head}: {spread}, {float_flops:,} float FLOPs and "
                   f"{nbytes:,} B in {time_text(median_us)}{floor}; {percent_text(fraction)} of its roof{apart}", float_flops, ints, floors, busy)
  bound = "compute" if t_compute >= t_memory else "memory"
  got = f"{_rate(float_flops / t / 1e9)} of {peaks.gflops:,.1f} GFLOP/s" if bound == "compute" else \
        f"{_rate(nbytes / t / 1e9)} of {peaks.gbs:,.1f} GB/s"
  # the memory roof is a copy's over 64 MiB, far past the caches: a kernel whose few bytes stay in them passes it (the
  # compute roof is the fastest kernel's, the benchmark's or the run's, which none passes)
  above = f"; above its roof: the memory roof is measured on data far bigger than the caches, and this kernel's " \
          f"{nbytes:,} B stay in them" if fraction > 1 and bound == "memory" else ""
  # far below both roofs, with work enough to fill the device, neither limits it: the nearer roof is said as such
  head = f"{bound}-bound at {percent_text(fraction)} of its roof" if fraction >= LATENCY_FRACTION else \
         f"far below its roofs: {percent_text(fraction)} of its roof, the {bound} roof the nearer"
  return Verdict(bound, fraction, f"{head} ({got}){apart}" + (f"; {spread}" if idle else "") + above, float_flops, ints, floors)
