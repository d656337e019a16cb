"""The one module of tgviz that knows tinygrad's internals.

Everything tinygrad-version-specific lives here: the default OpenCL-on-PoCL device, switching
rewrite tracking on and off around a block, the caches that must be cleared so a block traces
the same way twice, reading tinygrad's tracking globals into records a Trace owns, replaying a
step match by match exactly as ``tinygrad.viz.serve`` does, and turning a UOp into plain node
data for drawing. The rest of tgviz talks to the records and node data, never to tinygrad.
"""
from __future__ import annotations

import atexit
import functools
import glob
import importlib.metadata
import os
import re
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

SUPPORTED_TINYGRAD = "0.14.0"


class UnsupportedTinygrad(ImportError):
  """The installed tinygrad is not the version tgviz reads the internals of."""


def _check_version() -> None:
  try: found = importlib.metadata.version("tinygrad")
  except importlib.metadata.PackageNotFoundError:
    raise UnsupportedTinygrad(f"tinygrad is not installed; tgviz needs tinygrad=={SUPPORTED_TINYGRAD} "
                              f"(pip install tinygrad=={SUPPORTED_TINYGRAD})") from None
  if found != SUPPORTED_TINYGRAD:
    raise UnsupportedTinygrad(f"tgviz supports tinygrad {SUPPORTED_TINYGRAD} only, found tinygrad {found}: "
                              f"pip install tinygrad=={SUPPORTED_TINYGRAD}")


_ENV_BEFORE = {k: os.environ.get(k) for k in ("OPENCL_PATH", "DEV")}


def _setup_default_device() -> None:
  """Make tinygrad's CL device run on PoCL from pip: point OPENCL_PATH at pyopencl's bundled ICD loader and
  load pyopencl first (without that early import the ICD loader segfaults). DEV defaults to CL."""
  try:
    import pyopencl  # before tinygrad opens the CL device
  except ImportError: return
  if "OPENCL_PATH" not in os.environ:
    libs = sorted(glob.glob(os.path.join(os.path.dirname(pyopencl.__file__), ".libs", "libOpenCL*.so*")))
    if libs: os.environ["OPENCL_PATH"] = libs[0]
  if not os.environ.get("DEV"): os.environ["DEV"] = "CL"


_check_version()
_setup_default_device()

from tinygrad.dtype import dtypes  # noqa: E402
from tinygrad.helpers import DEV, Context, TracingKey, ansistrip, printable  # noqa: E402
from tinygrad.renderer import Renderer  # noqa: E402
from tinygrad.uop import ops  # noqa: E402
from tinygrad.uop.ops import GroupOp, Ops, RewriteContext, TrackedPatternMatcher, UOp, UOpMetaClass  # noqa: E402

from tgviz.graph import Graph, Node  # noqa: E402

if not DEV.device and os.environ.get("DEV"): DEV.value = os.environ["DEV"]  # tinygrad was imported before tgviz

# tinygrad's exit hook writes rewrites.pkl and may start the VIZ server: tgviz never lets it run.
if hasattr(ops, "print_match_stats"): atexit.unregister(ops.print_match_stats)

_TRACE_NUM = "_RECURSIVE_PROPERTY_trace_num"


def restore_environment() -> None:
  """Undo the device defaults tgviz set at import (OPENCL_PATH, DEV)."""
  for k, v in _ENV_BEFORE.items():
    if v is None: os.environ.pop(k, None)
    else: os.environ[k] = v
  DEV.value = _ENV_BEFORE["DEV"] or ""


def clang_missing() -> str | None:
  """A message when tinygrad's CPU device has no C compiler, else None."""
  if shutil.which("clang"): return None
  return ("clang was not found: tinygrad's CPU device compiles with clang, and tinygrad uses that device for some tensors "
          "even when another is the default (e.g. Tensor.arange(...).tolist()). Install it: sudo apt-get install clang")


def default_device() -> str:
  """The device a capture uses when none is given."""
  if DEV.device: return repr(DEV)
  from tinygrad import Device
  return Device.DEFAULT


# *** records a Trace owns ***

@dataclass
class StepRecord:
  """One tracked graph_rewrite (or rewrite_group function) call."""
  name: str
  depth: int
  loc: tuple[str, int]
  sink: int                                 # trace number of the input graph
  matches: list[tuple[int, int, tuple[str, int], float]]
  bottom_up: bool
  walk: bool
  enter_calls: bool
  inp: UOp | None = None                    # the input tinygrad rewrote, when recorded
  out: UOp | None = None                    # the UOp tinygrad's rewrite returned, when it returned


@dataclass
class GroupRecord:
  name: str
  kind: str                                 # "schedule", "kernel" or "other"
  steps: list[StepRecord]
  stack: tuple[tuple[str, int, str, str], ...]
  device: str = ""
  renderer: str = ""


@dataclass
class Recording:
  """Everything one capture recorded; owns its UOp table, so it outlives later captures."""
  groups: list[GroupRecord]
  uop_fields: dict[int, tuple]
  _uops: dict[int, UOp] = field(default_factory=dict)

  def uop(self, num: int) -> UOp:
    """The UOp with trace number num, rebuilt as tinygrad's VIZ does (hash-consing makes it the same object)."""
    if (u := self._uops.get(num)) is not None: return u
    need, stack = set(), [num]
    while stack:                            # iterative: graphs can be deeper than Python's recursion limit
      if (n := stack.pop()) in need or n in self._uops: continue
      need.add(n)
      stack.extend(self.uop_fields[n][2])
    for n in sorted(need):                  # tinygrad numbers sources before their users
      op, dtype, src, arg, *rest = self.uop_fields[n]
      self._uops[n] = UOp(op, dtype, tuple(self._uops[s] for s in src), arg, *rest)
    return self._uops[num]

  def before(self, step: StepRecord) -> UOp:
    return step.inp if step.inp is not None else self.uop(step.sink)

  def match_uops(self, step: StepRecord, k: int) -> tuple[UOp, UOp]:
    u0, u1, _, _ = step.matches[k]
    return self.uop(u0), self.uop(u1)

  def program(self, group: GroupRecord) -> Program | None:
    """The program a kernel group rendered (the last PROGRAM its linearize/render step produced), if it got that far."""
    found = None
    for step in group.steps:
      if step.name != _RENDER_STEP: continue
      for k in range(len(step.matches)):
        if (prg := _program_of(self.match_uops(step, k)[1])) is not None: found = prg
    return found

  def replay(self, step: StepRecord) -> Iterator[UOp]:
    """The graph after each match of step, in order: the algorithm of tinygrad.viz.serve.get_full_rewrite."""
    next_sink, replaces = self.before(step), {}
    for k in range(len(step.matches)):
      u0, u1 = self.match_uops(step, k)
      replaces[u0] = u1
      try: new_sink = next_sink.substitute(replaces, walk=step.walk, enter_calls=step.enter_calls)
      except RuntimeError as e:
        yield UOp(Ops.REWRITE_ERROR, arg=f"{type(e).__name__}: {e}")
        return
      yield new_sink
      if not step.bottom_up: next_sink = new_sink


# *** capture ***

def _all_subclasses(cls: type) -> list[type]:
  out = []
  for sub in cls.__subclasses__(): out += [sub, *_all_subclasses(sub)]
  return out


class _SourceOnlyCompilers:
  """For NULL:<renderer> captures: a renderer whose compiler library is missing here (nvrtc, comgr, ...) still renders
  its source; compiling becomes a no-op, since the NULL device never runs the binary."""

  def __enter__(self) -> None:
    import tinygrad.runtime.support.compiler_amd
    import tinygrad.runtime.support.compiler_cuda  # noqa: F401
    from tinygrad.device import Compiler
    self.saved = {c: c.__dict__["__init__"] for c in _all_subclasses(Compiler) if "__init__" in c.__dict__}
    for cls, init in self.saved.items(): cls.__init__ = self._tolerant(init, Compiler)

  @staticmethod
  def _tolerant(init, base):
    def __init__(self, *args, **kwargs):
      try: init(self, *args, **kwargs)
      except Exception as e:
        base.__init__(self, None)
        self.compile = lambda src: src.encode()
        self.tgviz_missing = f"{type(self).__name__} unavailable ({e}); source rendered, not compiled"
    return __init__

  def __exit__(self, *exc) -> None:
    for cls, init in self.saved.items(): cls.__init__ = init

_REWRITING = {"graph_rewrite", "substitute", "simplify"}


def _clear_caches() -> None:
  """Drop tinygrad's schedule and program caches, and the functools caches of helpers that run graph rewrites (e.g.
  apply_movement_op), so a block traces the same way every time. Caches of compiled patterns are kept: clearing them
  would rebuild pattern matchers, which tinygrad's PatternMatcher.__add__ cache then keeps forever."""
  for name, mod in list(sys.modules.items()):
    if not name.startswith("tinygrad.") or mod is None: continue
    for obj in list(vars(mod).values()):
      if not isinstance(obj, functools._lru_cache_wrapper) or obj.__module__ != name: continue
      code = getattr(obj.__wrapped__, "__code__", None)
      if code is not None and _REWRITING & set(code.co_names): obj.cache_clear()
  from tinygrad.codegen import to_program_cache
  from tinygrad.schedule import schedule_cache
  schedule_cache.clear()
  to_program_cache.clear()


def _drop_trace_nums() -> None:
  """Live UOps cache their trace number; once the table they index is handed over, the numbers must go."""
  for ref in list(UOpMetaClass.ucache.values()):
    if (u := ref()) is not None: u.__dict__.pop(_TRACE_NUM, None)


def _kind(key: TracingKey) -> str:
  if isinstance(key.ret, Renderer): return "kernel"
  if key.display_name.startswith(("Schedule", "Callify")): return "schedule"
  return "other"


_GLOBALS = ("tracked_keys", "tracked_ctxs", "uop_fields", "_name_cnt", "active_group", "active_rewrites")


class Tracker:
  """Switches tinygrad's rewrite tracking on for a block and hands back what it recorded.

  Use as a context manager; ``recording`` is set on exit, also when the block raised."""

  def __init__(self, device: str | None = None):
    self.device = device
    self.recording: Recording | None = None

  def __enter__(self) -> Tracker:
    if ops.active_rewrites or ops.active_group:
      raise RuntimeError("tgviz: a capture cannot start inside a running tinygrad rewrite or another capture")
    _clear_caches()
    self._saved = {g: getattr(ops, g) for g in _GLOBALS}
    # Under tinygrad's own tracking (VIZ / TRACK_MATCH_STATS set at import) its UOp table stays in use, so the trace
    # numbers live UOps cache stay valid: the capture shares that table. Otherwise the capture gets a table of its own.
    self._shared = bool(ops.uop_fields)
    ops.tracked_keys, ops.tracked_ctxs, ops._name_cnt = [], [], {}
    if not self._shared: ops.uop_fields = {}
    ops.active_group, ops.active_rewrites = [], []
    self._io: dict[int, tuple[Any, UOp, UOp | None]] = {}
    self._saved_methods = (ops.PatternMatcher.rewrite, RewriteContext.unified_rewrite, RewriteContext.walk_rewrite)
    ops.PatternMatcher.rewrite = TrackedPatternMatcher.rewrite
    RewriteContext.unified_rewrite = self._recording(RewriteContext.unified_rewrite)
    RewriteContext.walk_rewrite = self._recording(RewriteContext.walk_rewrite)
    ctx: dict[str, Any] = {"TRACK_MATCH_STATS": 2, "VIZ": -1, "PARALLEL": 0}
    if self.device is not None: ctx["DEV"] = self.device
    self._context = Context(**ctx)
    self._context.__enter__()
    self._compilers = _SourceOnlyCompilers() if default_device().upper().startswith("NULL") else None
    if self._compilers is not None: self._compilers.__enter__()
    # our own group first, so rewrites outside any tinygrad group land in this capture and nowhere else
    ops.add_trace_group(TracingKey("capture", tb=None))
    return self

  def _recording(self, method):
    io = self._io
    def wrapped(rctx, root, *args, **kwargs):
      tracked = ops.TRACK_MATCH_STATS.value >= 2 and ops.active_rewrites
      step = ops.active_rewrites[-1] if tracked else None
      # a rewrite without patterns (tinygrad's "View ..." snapshots) returns its input: skip walking the graph
      empty = all(pm is None or not pm.patterns for pm in (rctx.pm, rctx.bpm))
      ret = root if empty else method(rctx, root, *args, **kwargs)
      if step is not None and id(step) not in io: io[id(step)] = (step, root, ret)
      return ret
    wrapped.__wrapped__ = method
    return wrapped

  def __exit__(self, *exc) -> None:
    try:
      if self._compilers is not None: self._compilers.__exit__(*exc)
      self._context.__exit__(*exc)
      ops.PatternMatcher.rewrite, RewriteContext.unified_rewrite, RewriteContext.walk_rewrite = self._saved_methods
      keys, ctxs, fields = ops.tracked_keys, ops.tracked_ctxs, ops.uop_fields
      for g, v in self._saved.items(): setattr(ops, g, v)
      self.recording = Recording(self._groups(keys, ctxs), fields)
    finally:
      self._io = {}
      if not self._shared: _drop_trace_nums()

  def _groups(self, keys: list[TracingKey], ctxs: list[list]) -> list[GroupRecord]:
    groups = []
    for key, steps in zip(keys, ctxs, strict=True):
      if not steps and key.display_name == "capture": continue
      recs = []
      for s in steps:
        _, inp, out = self._io.get(id(s), (None, None, None))
        recs.append(StepRecord(s.name, s.depth, s.loc, s.sink, s.matches, s.bottom_up, s.walk, s.enter_calls, inp, out))
      ren = key.ret if isinstance(key.ret, Renderer) else None
      groups.append(GroupRecord(ansistrip(key.display_name), _kind(key), recs, tuple(key.tb or ()),
                                device=ren.target.device if ren is not None else "", renderer=type(ren).__name__ if ren else ""))
    return groups


# *** reading UOps, for the rest of tgviz ***

def pattern_source(loc: tuple[str, int]) -> str:
  """The source line of the pattern defined at loc."""
  return printable(loc)


def is_error(u: UOp) -> bool:
  return u.op is Ops.REWRITE_ERROR


def error_text(u: UOp) -> str:
  return str(u.arg)


# step names tinygrad gives its "View ..." snapshots (graphs shown, not rewritten), the most telling first
SNAPSHOT_PREFIX = "View "
LANDMARKS = ("View Base AST", "View Program", "View Output AST", "View Kernel Graph")
_RENDER_STEP = "linearize/render"           # the step whose matches produce the rendered PROGRAM


def is_snapshot(step_name: str) -> bool:
  return step_name.startswith(SNAPSHOT_PREFIX)


# renderer class name -> pygments lexer of the code it writes
_LEXERS = {"OpenCLRenderer": "c", "IntelRenderer": "c", "ClangRenderer": "c", "ClangJITRenderer": "c", "CUDARenderer": "cuda",
           "HIPRenderer": "cpp", "MetalRenderer": "cpp", "WGSLRenderer": "wgsl", "LLVMRenderer": "llvm",
           "CPULLVMRenderer": "llvm", "AMDLLVMRenderer": "llvm", "QCOMRenderer": "c", "NullRenderer": "c"}


def lexer_name(renderer: str) -> str:
  """The pygments lexer for the code a renderer (by class name) writes."""
  return _LEXERS.get(renderer, "c")


@dataclass(frozen=True)
class Program:
  """What a kernel's renderer produced: the function name, its source and launch dimensions."""
  name: str
  source: str
  global_size: tuple[int, ...]
  local_size: tuple[int, ...] | None


def _program_of(u: UOp) -> Program | None:
  if u.op is not Ops.PROGRAM: return None
  src = next((s for s in u.src if s.op is Ops.SOURCE), None)
  if src is None: return None
  info = u.arg
  return Program(info.function_name, src.arg, tuple(info.global_size),
                 tuple(info.local_size) if info.local_size is not None else None)


_FAMILY = {Ops.LOAD: "load", Ops.INDEX: "load", Ops.STAGE: "load", Ops.STORE: "store", Ops.REDUCE: "reduce",
           Ops.ALLREDUCE: "reduce", Ops.RANGE: "range", Ops.END: "range", Ops.SPECIAL: "range", Ops.IF: "range",
           Ops.ENDIF: "range", Ops.BUFFER: "buffer", Ops.PARAM: "buffer", Ops.GETADDR: "buffer", Ops.CALL: "kernel",
           Ops.FUNCTION: "kernel", Ops.PROGRAM: "kernel", Ops.LINEAR: "kernel", Ops.SOURCE: "kernel", Ops.BINARY: "kernel",
           Ops.CUSTOM_FUNCTION: "kernel", Ops.CONST: "const", Ops.REWRITE_ERROR: "error",
           **dict.fromkeys(GroupOp.Movement, "movement"), **dict.fromkeys(GroupOp.ALU, "alu")}
_LINE, _ARG_LINES = 60, 4


_ANSI_REPR = re.compile(r"\\x1b\[[0-9;]*m")  # colour codes inside a repr'd string, e.g. a KernelInfo name


def _clip(text: str, lines: int) -> list[str]:
  all_lines = _ANSI_REPR.sub("", ansistrip(text)).splitlines()
  out = [ln if len(ln) <= _LINE else ln[:_LINE - 1] + "…" for ln in all_lines[:lines]]
  return out + (["…"] if len(all_lines) > lines else [])


def _arg_text(u: UOp) -> str | None:
  if u.arg is None: return None
  if u.op is Ops.CONST: return f"{u.arg:g}" if isinstance(u.arg, float) else str(u.arg)
  if u.op in GroupOp.Movement:
    try: return str(u.marg)
    except Exception: pass
  if u.op is Ops.BINARY: return f"<{len(u.arg)} bytes>"
  return str(u.arg)


def _folded(u: UOp, root: UOp) -> bool:
  """Constants (and broadcasts of them) are folded into their users' labels, as tinygrad's VIZ does."""
  if u is root: return False
  if u.op is Ops.CONST: return True
  if u.op is Ops.STACK and all(s.op is Ops.CONST for s in u.src): return True
  return u.op in (Ops.RESHAPE, Ops.EXPAND) and len(u.src) >= 1 and _folded(u.src[0], root)


def to_graph(root: UOp) -> Graph:
  """The drawable graph of a UOp: readable labels, op families, constants folded into their users."""
  nodes: dict[str, Node] = {}
  edges: list[tuple[str, str]] = []
  for u in root.toposort():
    if _folded(u, root): continue
    label = [u.op.name]
    if (arg := _arg_text(u)) is not None: label += _clip(arg, 8 if u.op is Ops.SOURCE else _ARG_LINES)
    if u.dtype != dtypes.void: label.append(str(u.dtype).removeprefix("dtypes."))
    for i, s in enumerate(u.src):
      if not _folded(s, root): edges.append((node_key(s), node_key(u)))
      else:
        c = s
        while c.op is not Ops.CONST and c.op is not Ops.STACK and c.src: c = c.src[0]
        label.append(_clip(f"{c.op.name}{i} {_arg_text(c) if c.op is Ops.CONST else c.render()}", 1)[0])
    nodes[node_key(u)] = Node(node_key(u), u.op.name, _FAMILY.get(u.op, "other"), tuple(label))
  return Graph(nodes, tuple(dict.fromkeys(edges)), node_key(root))


def toposort(u: UOp) -> list[UOp]:
  return list(u.toposort())


def node_key(u: UOp) -> str:
  """A stable identity for a UOp: the same on every run for the same graph."""
  return u.key.hex()[:16]


def sources(u: UOp) -> tuple[UOp, ...]:
  return u.src
