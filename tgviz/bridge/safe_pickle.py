"""Reading pickles from files someone else made, without running code from them.

Owns: the one list of globals a trace file may name (tgviz's records, tinygrad's dtypes, enums and small dataclasses:
what real traces hold, each harmless to call with any arguments) and the restricted unpickler that allows nothing else,
as ``torch.load(weights_only=True)`` does. A refused global raises Refused before anything in the file is called. It
bounds the memory an unpickling may take by the file's size, so a damaged or crafted file cannot exhaust the machine.
It knows no file format: files.py says what a trace is.
"""
from __future__ import annotations

import contextlib
import enum
import functools
import gzip
import importlib
import pickle
import threading
from collections.abc import Iterator
from typing import IO, Any

try:
  import resource
except ImportError:  # not on Windows: unpickling is unbounded there
  resource = None  # type: ignore[assignment]

from tinygrad.helpers import Target
from tinygrad.renderer import Renderer

# module -> the names in it a trace may hold: found in the traces of every example, of model-sized training steps, of
# NULL devices' renderers, and in tinygrad's own rewrites.pkl and profile.pkl of the same runs
ALLOWED: dict[str, tuple[str, ...]] = {
  "decimal": ("Decimal",),                  # tinygrad's profile timestamps
  "tgviz.bridge.events": ("DeviceRecord", "ExecRecord", "MemRecord", "Profile", "RangeRecord", "SpanRecord", "SyncRecord"),
  "tgviz.bridge.decisions": ("Realized", "ScheduleRecord"),
  "tgviz.bridge.records": ("GroupRecord", "StepRecord", "Origin", "Opt", "BeamSearch", "Candidate"),
  "tinygrad.codegen.opt": ("Opt", "OptOps"),
  "tinygrad.device": ("ProfileDeviceEvent", "ProfileGraphEntry", "ProfileGraphEvent", "ProfileProgramEvent"),
  "tinygrad.dtype": ("AddrSpace", "ConstFloat", "DType", "InvalidType"),
  "tinygrad.helpers": ("Metadata", "ProfilePointEvent", "ProfileRangeEvent", "Target", "TracingKey"),
  "tinygrad.renderer": ("Estimates",),
  "tinygrad.schedule.indexing": ("BufferizeOpts",),
  "tinygrad.uop": ("Ops",),
  "tinygrad.uop.ops": ("AxisType", "CallInfo", "KernelInfo", "ParamArg", "ProgramInfo", "RewriteTrace", "TrackedGraphRewrite", "UOp"),
}
# traces saved before the bridge was a package name its records here; before the records were all in records.py, BEAM's
# search and opts were in beam.py and opts.py
MOVED = {("tgviz._tinygrad", n): ("tgviz.bridge.records", n) for n in ("GroupRecord", "StepRecord", "Origin")} | \
  {("tgviz.bridge.beam", n): ("tgviz.bridge.records", n) for n in ("BeamSearch", "Candidate")} | \
  {("tgviz.bridge.opts", "Opt"): ("tgviz.bridge.records", "Opt")}
# tinygrad's rewrites.pkl holds each kernel's renderer, whose constructor loads its compiler (a C compiler, nvrtc, comgr):
# it is read as a bare instance of its class that holds only its target, which is all a trace reads of it
RENDERER_MODULES = ("tinygrad.renderer.cstyle", "tinygrad.renderer.ptx", "tinygrad.renderer.llvmir", "tinygrad.renderer.wgsl")
# what an unpickling may add to the process's data memory: a real trace takes about 40x its (gzipped) file size
MEMORY_BASE, MEMORY_PER_FILE_BYTE = 2**30, 256
_bounding = threading.Lock()  # the bound is the process's: one unpickling at a time sets and puts it back


class Refused(pickle.UnpicklingError):
  """The pickle names a global a trace does not hold; nothing in it was called."""

  def __init__(self, module: str, name: str):
    super().__init__(f"{module}.{name}")
    self.module, self.name = module, name


def _bare_renderer(cls: type, target: Any) -> Renderer:
  if not isinstance(target, Target): raise pickle.UnpicklingError(f"a {cls.__name__} whose target is a {type(target).__name__}")
  ren: Renderer = object.__new__(cls)
  ren.target = target
  return ren


def _enum_member(cls: Any, name: Any) -> enum.Enum:
  """getattr(cls, name) as newer Pythons pickle an enum member by name: only a member of an allowed enum."""
  if not (isinstance(cls, type) and issubclass(cls, enum.Enum) and isinstance(name, str) and name in cls.__members__):
    raise pickle.UnpicklingError(f"getattr({cls!r}, {name!r}) is not an enum member")
  return cls[name]


class SafeUnpickler(pickle.Unpickler):
  """An Unpickler that resolves only the globals in ALLOWED (and bare renderers, and enum members by name); any other
  raises Refused before it is called."""

  def find_class(self, module: str, name: str) -> Any:
    module, name = MOVED.get((module, name), (module, name))
    if name in ALLOWED.get(module, ()): return getattr(importlib.import_module(module), name)
    if module == "builtins" and name == "getattr": return _enum_member
    if module in RENDERER_MODULES:
      cls = getattr(importlib.import_module(module), name, None)
      if isinstance(cls, type) and issubclass(cls, Renderer) and cls.__module__ == module: return functools.partial(_bare_renderer, cls)
    raise Refused(module, name)


def _data_bytes() -> int | None:
  """The process's data memory now (Linux's VmData), or None where it cannot be read."""
  try:
    with open("/proc/self/status") as f: return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmData:"))
  except (OSError, StopIteration, ValueError): return None


@contextlib.contextmanager
def _bounded_memory(extra: int) -> Iterator[None]:
  """At most `extra` more bytes of data memory for this process inside (RLIMIT_DATA; unbounded off Linux). An unpickler
  allocates what a pickle asks for before it can tell the pickle is wrong: one flipped bit turns an opcode into a memo
  index of a billion, and CPython's unpickler fills a 20 GB table. Bounded, the allocation fails at once (MemoryError)."""
  if resource is None: yield; return
  with _bounding:
    now, old = _data_bytes(), resource.getrlimit(resource.RLIMIT_DATA)
    if now is None: yield; return
    bound = now + extra if old[0] == resource.RLIM_INFINITY else min(old[0], now + extra)
    if old[1] != resource.RLIM_INFINITY: bound = min(bound, old[1])
    resource.setrlimit(resource.RLIMIT_DATA, (bound, old[1]))
    try: yield
    finally: resource.setrlimit(resource.RLIMIT_DATA, old)


def load(f: IO[bytes] | gzip.GzipFile, trusted: bool = False, file_size: int = 0) -> Any:
  """One pickle from f, through SafeUnpickler (trusted: plain pickle, which can run code the file carries), taking at most
  MEMORY_BASE + MEMORY_PER_FILE_BYTE * file_size (the file's size on disk) of memory: a pickle asking for more raises
  UnpicklingError."""
  unpickler = pickle.Unpickler(f) if trusted else SafeUnpickler(f)
  extra = MEMORY_BASE + MEMORY_PER_FILE_BYTE * file_size
  try:
    with _bounded_memory(extra): return unpickler.load()
  except MemoryError:
    raise pickle.UnpicklingError(f"it asks for more memory than a file of {file_size:,} bytes can need "
                                 f"({extra >> 20:,} MiB): damaged, or made to exhaust memory") from None
