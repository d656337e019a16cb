"""Helpers the tests of several layers share: tinygrad's own counts to hold tgviz's figures to, and a synthetic profile."""
import contextlib
from decimal import Decimal

from tinygrad import dtypes
from tinygrad.device import Buffer, ProfileDeviceEvent, ProfileGraphEntry, ProfileGraphEvent
from tinygrad.helpers import GlobalCounters, ProfilePointEvent, ProfileRangeEvent, TracingKey

import tgviz


def kernel_launches(trace: tgviz.Trace) -> int:
  return sum(row["runs"] for row in trace.kernel_table())


@contextlib.contextmanager
def counting_memory():
  """tinygrad's own memory counter (GlobalCounters.mem_used) read after every allocation: yields the readings."""
  marks, allocate = [], Buffer.allocate
  def counted(self, *args, **kwargs):
    out = allocate(self, *args, **kwargs)
    marks.append(GlobalCounters.mem_used)
    return out
  Buffer.allocate = counted
  try: yield marks
  finally: Buffer.allocate = allocate


def synthetic_events() -> list:
  """A GPU's profile as tinygrad writes it: a device with its clock offset, launches (exec) timed by the device's own
  spans, a copy, a graph batch, buffers allocated and freed (a DISK one too)."""
  D = Decimal
  def exec_(n, name, bufs, outs, ins, ts): return ProfilePointEvent("NV", "exec", n, {"var_vals": {}, "bufs": bufs, "name": name,
                                                                                         "outputs": outs, "inputs": ins}, ts=D(ts))
  def alloc(n, dev, dt, sz, ts): return ProfilePointEvent(dev, "alloc", n, {"dtype": dt, "sz": sz}, ts=D(ts))
  def free(n, dev, ts): return ProfilePointEvent(dev, "free", n, ts=D(ts))
  return [exec_(0, "\x1b[36mr_4\x1b[0m", [1, 2], (0,), (1,), 1000),
          exec_(1, "\x1b[33mcopy       16 B,  PYTHON <- NV\x1b[0m", [3, 1], (0,), (1,), 1300),
          exec_(2, "\x1b[36mbatched 2\x1b[0m", [1, 2], (), (), 2000),
          ProfileDeviceEvent("NV", D(-500)), ProfileRangeEvent("NV", "r_4", D(1600), D(1700), b"p1"),
          ProfileRangeEvent("NV:SDMA:0", TracingKey("NV -> TINY", ret=16), D(1800), D(1850)),
          ProfileGraphEvent([ProfileGraphEntry("NV", "r_4", 0, 1, b"p1"), ProfileGraphEntry("NV", "E_2", 2, 3, b"p2")], [],
                            [D(2600), D(2650), D(2650), D(2700)]),
          alloc(1, "NV", dtypes.float, 16, 900), alloc(2, "NV", dtypes.half, 64, 950), alloc(3, "PYTHON", dtypes.float, 4, 1250),
          free(3, "PYTHON", 1400), free(1, "NV", 2800), alloc(4, "DISK", dtypes.uint8, 1000, 2900), alloc(5, "NV", dtypes.float, 8, 2950)]


TIME = r"-?[\d.]+ (?:ns|µs|ms|s)"  # a duration as tgviz.trace.units.time_text (and the page's fmtTime) writes it


def read_time(text: str) -> float:
  """A duration as tgviz writes it ("9.64 µs", "1.23 ms"), back in µs."""
  value, unit = text.split(" ")
  return float(value) * {"ns": 1e-3, "µs": 1.0, "ms": 1e3, "s": 1e6}[unit]
