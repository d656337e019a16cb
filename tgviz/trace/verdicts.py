"""Which limit a kernel ran into, and how close it came: memory, compute, or latency / launch (too little work to fill
the device), with the fraction of its roof it reached.

The roofline model with each kernel's own work: its float work (tinygrad's FLOPs estimate less its integer ALU ops,
which no float roof bounds: they are counted apart) at the device's float32 compute roof, its bytes (tinygrad's
estimate) at the memory roof; the larger of the two times is the least the kernel can take, and that over its measured
median is the fraction of the roof it reached. A kernel far below its roof with fewer threads than the device has
compute units, or within a few launch floors of the device's emptiest kernel, is latency-bound. Owns Verdict and
verdict(); draws nothing.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
  from tgviz.trace.kernel import Kernel
  from tgviz.trace.retime import Timing
  from tgviz.trace.run import DevicePeaks

LATENCY_FRACTION = 0.1   # below this fraction of its roof a kernel with little work is latency-bound
LAUNCH_FLOORS = 4        # ... little work: it ran within this many of the device's launch floors, or on fewer threads than units


@dataclass(frozen=True)
class Verdict:
  """A kernel's limit: ``bound`` "memory", "compute" or "latency"; ``fraction`` of its roof reached (the least time its
  work can take at the device's peaks, over its median); ``why``: the numbers behind it, in words."""
  bound: str
  fraction: float
  why: str
  float_flops: int
  int_ops: int


def verdict(kernel: Kernel, timing: Timing | None, peaks: DevicePeaks | None) -> Verdict | None:
  """The kernel's verdict from its measured time and the device's peaks; None without either, or without tinygrad's
  estimates of its FLOPs and bytes."""
  if timing is None or peaks is None or kernel.flops is None or kernel.bytes is None or timing.median_us <= 0: return None
  flops, nbytes, t = kernel.float_flops, kernel.bytes, timing.median_us * 1e-6
  if flops is None: flops = kernel.flops
  ints = kernel.flops - flops
  t_compute = flops / (peaks.gflops * 1e9) if peaks.gflops else 0.0
  t_memory = nbytes / (peaks.gbs * 1e9) if peaks.gbs else 0.0
  fraction = max(t_compute, t_memory) / t
  apart = f"; {ints:,} integer ops apart" if ints else ""
  threads = math.prod(kernel.global_size or (1,)) * math.prod(kernel.local_size or (1,))
  floors = timing.median_us / peaks.launch_us if peaks.launch_us else None
  few = peaks.units is not None and threads < peaks.units
  if fraction < LATENCY_FRACTION and (few or (floors is not None and floors < LAUNCH_FLOORS)):
    units = f" for {peaks.units} compute units" if peaks.units is not None else ""
    floor = f", {floors:.1f}x the device's launch floor ({peaks.launch_us:.1f} µs)" if floors is not None else ""
    plural = "s" if threads != 1 else ""
    return Verdict("latency", fraction, f"latency/launch-bound: {threads:,} thread{plural}{units}, {flops:,} FLOPs and {nbytes:,} B "
                   f"in {timing.median_us:,.1f} µs{floor}; {fraction:.1%} of its roof{apart}", flops, ints)
  bound = "compute" if t_compute >= t_memory else "memory"
  got = f"{flops / t / 1e9:,.2f} of {peaks.gflops:,.1f} GFLOP/s" if bound == "compute" else f"{nbytes / t / 1e9:,.2f} of {peaks.gbs:,.1f} GB/s"
  return Verdict(bound, fraction, f"{bound}-bound at {fraction:.1%} of its roof ({got}){apart}", flops, ints)
