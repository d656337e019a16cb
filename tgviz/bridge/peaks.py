"""A device's peak compute and memory bandwidth, as tinygrad's own kernels reach them: measured once, cached per device.

Owns: the small benchmark (for FLOP/s the best of a big float32 matmul and a float32 chain of multiply-adds, FLOPs
counted as tinygrad counts them for its kernels; a big elementwise copy for bytes/s; each grown until
it runs long enough to time, timed by the device as a capture times launches: recorders.KernelTimer; the launch floor,
a one-element kernel's least time; the device's compute units), the device's identity it
is cached under, and the cache, a JSON file in the user's cache folder (``TGVIZ_CACHE_DIR``, else
``$XDG_CACHE_HOME/tgviz``, else ``~/.cache/tgviz``). It never runs inside a capture (the benchmark would land in the
trace) and knows nothing of traces.
"""
from __future__ import annotations

import contextlib
import datetime
import fcntl
import hashlib
import json
import os
import platform
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from tinygrad.helpers import Context, GlobalCounters

from tgviz.bridge.env import SUPPORTED_TINYGRAD
from tgviz.bridge.events import is_null_device
from tgviz.bridge.profiler import running
from tgviz.bridge.recorders import KernelTimer

CACHE_FILE = "device_peaks.json"
MATMUL_SECONDS, COPY_SECONDS = 0.02, 0.005   # a benchmark grows until one run takes this long
MIN_SECONDS = 0.001                           # a compute benchmark's size counts for the peak from this time on
MAX_MATMUL, MAX_COPY = 4096, 1 << 28          # ... or reaches this size (elements: n of n x n, floats copied)
CHAIN, MAX_CHAIN = 32, 1 << 22                # multiply-adds per element of the elementwise compute benchmark; its most elements
LAUNCHES = 20                                 # launches of a one-element kernel, the least of which is the launch floor
VERSION = 5                                   # of the benchmark: peaks cached by an older one are measured again


def cache_dir(where: str | os.PathLike | None = None) -> Path:
  """Where the peaks are cached: where, else TGVIZ_CACHE_DIR, else $XDG_CACHE_HOME/tgviz, else ~/.cache/tgviz."""
  if where is not None: return Path(where)
  if (d := os.environ.get("TGVIZ_CACHE_DIR")): return Path(d)
  return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "tgviz"


def identity(device: str) -> str:
  """The key a device's peaks are cached under: tinygrad's device, its runtime class and the hardware's name (or a hash of
  its architecture string), and the machine."""
  from tinygrad import Device
  dev = Device[device]
  what = getattr(dev, "device_name", "") or hashlib.sha1(str(dev.arch or "").encode()).hexdigest()[:12]
  return f"{dev.device} {type(dev).__name__} {what} on {platform.node()}"


def _device_seconds(timer: KernelTimer) -> float:
  return sum(sum(v) for v in timer.runs.values())


def _best(fn: Any, timer: KernelTimer, reps: int = 3) -> tuple[float, int]:
  """The least device time of reps runs of fn (its kernels' launches together), and the FLOPs tinygrad counts for one
  run (GlobalCounters.global_ops: its estimate, as the roofline's kernels are counted)."""
  best, ops = float("inf"), 0
  for _ in range(reps):
    before, ops_before = _device_seconds(timer), GlobalCounters.global_ops
    fn()
    best, ops = min(best, _device_seconds(timer) - before), int(GlobalCounters.global_ops - ops_before)
  return best, ops


def _grown(make: Callable[[int], Callable[[], Any]], n: int, limit: int, factor: int, seconds: float, timer: KernelTimer,
           fastest: bool = False) -> tuple[int, float, int]:
  """fn = make(n) timed (_best), n grown by factor until one run takes seconds or n reaches limit: (n, seconds, ops) of
  the last size, or (fastest) of the size that ran the most ops a second, of those that ran at least MIN_SECONDS (a
  smaller matmul can fit the caches a bigger one does not)."""
  tried = []
  while True:
    s, ops = _best(make(n), timer)
    tried.append((n, s, ops))
    if s >= seconds or n >= limit: break
    n *= factor
  if not fastest: return tried[-1]
  return max((t for t in tried if t[1] >= MIN_SECONDS or t is tried[-1]), key=lambda t: t[2] / t[1] if t[1] > 0 else 0.0)


def _matmul(device: str) -> Callable[[int], Callable[[], Any]]:
  from tinygrad import Tensor
  def make(n: int) -> Callable[[], Any]:
    a, b = (Tensor.ones(n, n, device=device).contiguous().realize() for _ in range(2))
    return lambda: (a @ b).realize()
  return make


def _chain(device: str, dtype: Any) -> Callable[[int], Callable[[], Any]]:
  """An elementwise chain of CHAIN multiply-adds per element, one kernel reading and writing each element once: as
  compute-bound as an elementwise kernel gets)."""
  from tinygrad import Tensor
  def make(m: int) -> Callable[[], Any]:
    x = Tensor.ones(m, dtype=dtype, device=device).contiguous().realize()
    def run() -> Any:
      y = x
      for _ in range(CHAIN): y = y * 3 + 1
      return y.realize()
    return run
  return make


def compute_units(device: str) -> int | None:
  """How many compute units the device runs a kernel's threads on: OpenCL's CL_DEVICE_MAX_COMPUTE_UNITS, the CPU
  device's threads (tinygrad's NUM_CPU_THREADS); None where tinygrad does not say."""
  import ctypes

  from tinygrad import Device
  from tinygrad.helpers import NUM_CPU_THREADS
  dev = Device[device]
  if (cl_dev := getattr(dev, "cl_dev", None)) is not None:
    from tinygrad.runtime.autogen import opencl as cl
    units = ctypes.c_uint32()
    if cl.clGetDeviceInfo(cl_dev, cl.CL_DEVICE_MAX_COMPUTE_UNITS, ctypes.sizeof(units), ctypes.byref(units), None) == 0: return units.value
    return None
  return int(NUM_CPU_THREADS.value) if dev.device.split(":")[0] == "CPU" else None


def _launch_floor(device: str, timer: KernelTimer) -> float:
  """The device time of the least of LAUNCHES launches of a one-element kernel (x + 1): what any launch costs."""
  from tinygrad import Tensor
  x = Tensor.ones(1, device=device).contiguous().realize()
  least = float("inf")
  for _ in range(LAUNCHES):
    before = _device_seconds(timer)
    (x + 1).realize()
    least = min(least, _device_seconds(timer) - before)
  return least


def measure(device: str) -> dict[str, Any]:
  """Run the benchmark on device: the best GFLOP/s (as tinygrad counts FLOPs) of float32 work (a matmul, a multiply-add
  chain: the compute roof of the float kernels a model runs; an integer chain measures nothing, tinygrad folds it), at
  the fastest of the sizes tried that ran at least a millisecond, and the GB/s of an elementwise copy (x + 1: each
  element read once and written once) at the first size that runs long enough to time, each the best of 3 runs; the
  launch floor (the least device time of a one-element kernel) and the device's compute units."""
  from tinygrad import Tensor, dtypes
  timer = KernelTimer()
  with Context(DEBUG=0, BEAM=0), timer:
    n, s, ops = _grown(_matmul(device), 256, MAX_MATMUL, 2, MATMUL_SECONDS, timer, fastest=True)
    computes = [(ops / s / 1e9, f"float32 matmul {n}x{n}")]
    m, s, ops = _grown(_chain(device, dtypes.float32), 1 << 16, MAX_CHAIN, 4, COPY_SECONDS, timer, fastest=True)
    computes.append((ops / s / 1e9, f"float32 chain of {CHAIN} multiply-adds over {m:,} elements"))
    def copy(m: int) -> Callable[[], Any]:
      x = Tensor.ones(m, device=device).contiguous().realize()
      return lambda: (x + 1).realize()
    m, t, _ = _grown(copy, 1 << 22, MAX_COPY, 4, COPY_SECONDS, timer)
    floor = _launch_floor(device, timer)
  gflops, best = max(computes)
  # each figure said once: the roofs' numbers are beside it (gflops, gbs), the others' GFLOP/s here
  others = ", ".join(f"{what.split(' of ')[0].split(' over ')[0]} {g:,.1f} GFLOP/s" for g, what in computes if what != best)
  return {"gflops": gflops, "gbs": 2 * m * 4 / t / 1e9, "launch_us": floor * 1e6,
          "units": compute_units(device),
          "how": f"compute: {best}, better than {others}; memory: x+1 over {m * 4 / 2**20:.0f} MiB; launch: the least of "
                 f"{LAUNCHES} one-element launches",
          "measured": datetime.date.today().isoformat(), "tinygrad": SUPPORTED_TINYGRAD, "version": VERSION}


def _read(path: Path) -> dict[str, Any]:
  try: data = json.loads(path.read_text())
  except (OSError, ValueError): return {}
  return data if isinstance(data, dict) else {}


def _cached(got: Any, device: str) -> dict[str, Any] | None:
  if not (isinstance(got, dict) and isinstance(got.get("gflops"), (int, float)) and isinstance(got.get("gbs"), (int, float))
          and got.get("version") == VERSION): return None
  return {"device": device, "gflops": float(got["gflops"]), "gbs": float(got["gbs"]), "how": str(got.get("how", "")),
          "measured": str(got.get("measured", "")), "cached": True, "launch_us": float(got.get("launch_us") or 0.0), "units": got.get("units")}


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
  """The cache held by one process at a time while it measures: two processes measuring at once would each cache, and
  show, figures of their own (a report and its early copy, written side by side, would differ)."""
  try:
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = open(path.with_suffix(".lock"), "w")  # noqa: SIM115 (closed below, with its lock)
  except OSError:  # an unwritable cache folder: no lock to hold, nothing will be cached either
    yield
    return
  with lock:
    fcntl.flock(lock, fcntl.LOCK_EX)
    yield


def device_peaks(device: str, where: str | os.PathLike | None = None, measure_now: bool = True) -> tuple[dict[str, Any] | None, str | None]:
  """The device's peaks from the cache, else measured now (measure_now) and cached: a dict (device, gflops, gbs, how,
  measured, cached), or None and why there is none. Processes sharing a cache measure a device once: the others wait."""
  if is_null_device(device): return None, "a NULL device runs nothing: it has no peaks"
  try: key = f"{identity(device)} (benchmark v{VERSION})"  # (one tgviz's peaks beside another's, of another benchmark)
  except Exception as e: return None, f"the device cannot be opened here ({type(e).__name__}: {e})"
  path = cache_dir(where) / CACHE_FILE
  if (got := _cached(_read(path).get(key), device)) is not None: return got, None
  if not measure_now: return None, f"not measured yet (cached in {path})"
  if running(): return None, "a capture is running: the peaks are measured outside one (call roofline() after the capture)"
  with _locked(path):
    if (got := _cached(_read(path).get(key), device)) is not None: return got, None  # measured while this one waited
    found = measure(device)
    try:
      data = _read(path)
      data[key] = found
      with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, suffix=".tmp") as f: json.dump(data, f, indent=1)
      os.replace(f.name, path)
    except OSError: pass  # an unwritable cache: measured again next time
  return {"device": device, "gflops": found["gflops"], "gbs": found["gbs"], "how": found["how"], "measured": found["measured"],
          "cached": False, "launch_us": found["launch_us"], "units": found["units"]}, None
