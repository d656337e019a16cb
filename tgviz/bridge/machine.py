"""A kernel below its source: the linearized program the renderer consumed, as tinygrad's print_uops lists it, and the
compiled binary, as the device's own compiler disassembles it (objdump for the CPU backends).

Owns: reading both from a rendered PROGRAM UOp (its LINEAR and BINARY sources) and running tinygrad's own print_uops
and Compiler.disassemble, which print, into text; the columns of a print_uops row; saying in one line why there is no
machine code where tinygrad can give none; and, for the view, compiling a kernel's source again with the CPU device's
clang flags plus -g, for the line table objdump reads from it (its listing kept in tinygrad's disk cache): when a view
asks, or, for a report that will show every kernel's (ListingBuilds), in the background as the run compiles each. It
records nothing and keeps no UOp.
"""
from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path

from tinygrad.device import Compiler
from tinygrad.helpers import ansistrip, diskcache_get, diskcache_put, getenv
from tinygrad.runtime.support.compiler_cpu import ClangCompiler
from tinygrad.uop.ops import Ops, UOp, multirange_str

from tgviz.bridge.recorders import Patch
from tgviz.bridge.uops import family, node_key, plain_arg
from tgviz.work.threads import Worker


def linear_uops(prg: UOp) -> list[UOp]:
  """The linearized UOps a PROGRAM's renderer consumed, in order (none before it was linearized)."""
  return next((list(s.src) for s in prg.src if s.op is Ops.LINEAR), [])


def binary(prg: UOp) -> bytes | None:
  """The compiled binary of a PROGRAM, if it was compiled."""
  return next((s.arg for s in prg.src if s.op is Ops.BINARY), None)


def _printed(fn: Callable[..., object], *args: object) -> str:
  """What a tinygrad function that prints prints, without its colours."""
  out = io.StringIO()
  with contextlib.redirect_stdout(out): fn(*args)
  return ansistrip(out.getvalue())


def print_uops(uops: list[UOp]) -> list[str]:
  """tinygrad's print_uops listing of uops, one line per UOp numbered as tinygrad numbers them, without its colours."""
  from tinygrad.uop.render import print_uops as tinygrads
  return _printed(tinygrads, uops).splitlines()


def program_rows(uops: list[UOp]) -> list[tuple[str, str, str, list[int | str], str, str, str]]:
  """Each UOp of a linearized program in the columns tinygrad's print_uops prints, without colours: op, the ranges it is
  inside, dtype, its sources (by number; a constant by its value, "--" for one outside the list) and arg (a kernel
  name's colour codes, printed as escapes, left out); then its node key and op family."""
  index = {u: i for i, u in enumerate(uops)}
  return [(str(u.op), multirange_str(u.ranges), str(u.dtype),
           [(index[x] if x.op is not Ops.CONST else f"{x.val}") if x in index else "--" for x in u.src],  # as print_uops
           plain_arg(str(u.arg)), node_key(u), family(u)) for u in uops]


def _compiler(device: str) -> tuple[Compiler | None, str | None]:
  """The device's compiler, or None and why it cannot be had."""
  from tinygrad import Device
  try: return Device[device].renderer.compiler, None
  except Exception as e: return None, f"the {device} device cannot be opened here ({type(e).__name__}: {e})"


def disassemble(device: str, lib: bytes | None) -> tuple[str, str | None]:
  """The disassembly of a kernel's binary by its device's compiler, and None; or "" and one line saying why there is none."""
  if device.split(":")[0].upper() == "NULL": return "", "a NULL device compiles and runs nothing: there is no machine code"
  if lib is None: return "", "no binary was recorded for this kernel: tinygrad did not compile it inside the capture"
  compiler, why = _compiler(device)
  if compiler is None: return "", f"{why}, so its compiler cannot disassemble"
  if type(compiler).disassemble is Compiler.disassemble:
    return "", (f"tinygrad's {type(compiler).__name__} for {device} has no disassembler: the binary is the driver's own "
                "format (PoCL's, on the default CL device); the CPU device (--device CPU) shows its machine code")
  try: printed = _printed(compiler.disassemble, lib)
  except (OSError, RuntimeError) as e:  # the CPU compilers shell out to objdump
    why = str(e).splitlines()[0] if str(e) else type(e).__name__
    hint = "" if shutil.which("objdump") else ": objdump is missing (apt-get install binutils)"
    return "", f"disassembling failed ({why}){hint}"
  # objdump names the temporary file tinygrad wrote the binary to: only its format is worth showing
  text = re.sub(r"^\S+:\s+file format", "file format", printed.strip("\n"), count=1)
  return (text, None) if text.strip() else ("", f"tinygrad's {type(compiler).__name__} printed no disassembly for this binary")


def clang_command(compiler: ClangCompiler, *extra: str) -> list[str]:
  """The command tinygrad's ClangCompiler.compile runs (C source on stdin, an ELF object on stdout), with extra flags
  before the input. tests/views/test_program_view.py holds it to tinygrad's: without extra flags it rebuilds the very binary."""
  return [getenv("CC", "clang"), "-c", "-x", "c", "-O2", "-fPIC", "-ffreestanding", "-fno-math-errno", "-nostdlib", "-fno-ident",
          f"--target={compiler.arch}-none-unknown-elf", *compiler.args, *extra, "-", "-o", "-"]


def debug_listing(device: str, source: str) -> tuple[str, str | None]:
  """objdump's disassembly with line numbers (-d -l) of a kernel's source compiled again by the device's clang with its
  flags plus -g, and None; or "" and one line saying why there is none. Slow (a compile): for a view that asks; kept in
  tinygrad's disk cache beside its binaries, so the same kernel's is built once."""
  if device.split(":")[0].upper() == "NULL": return "", "a NULL device compiles nothing"
  compiler, why = _compiler(device)
  if compiler is None: return "", why
  if not isinstance(compiler, ClangCompiler):
    return "", f"line info comes from clang -g, and {device} compiles with tinygrad's {type(compiler).__name__}, not clang"
  cmd = clang_command(compiler, "-g")
  if (known := _listings.get((tuple(cmd), source))) is not None: return known
  # a build started ahead; in a process forked since, only one that had ended (no thread there finishes the others)
  if (started := _started.get((tuple(cmd), source))) is not None and (os.getpid() == _PID or started.done()):
    del _started[(tuple(cmd), source)]
    listing, why = started.result()
  elif (cached := _cached(cmd, source)) is not None: listing, why = cached, None
  else: listing, why = _build(cmd, source)
  if why is None: _cache(cmd, source, listing)
  _remember((tuple(cmd), source), (listing, why))
  return listing, why


def _remember(key: tuple[tuple[str, ...], str], listing: tuple[str, str | None]) -> None:
  _listings[key] = listing
  while len(_listings) > _KEEP_LISTINGS: del _listings[next(iter(_listings))]


# the listings this process has had, the latest few: asked again they are not read again (a report's writer has them
# all before its workers fork, and they inherit them)
_KEEP_LISTINGS = 256
_listings: dict[tuple[tuple[str, ...], str], tuple[str, str | None]] = {}


def _build(cmd: list[str], source: str) -> tuple[str, str | None]:
  """The -g build and its objdump listing (two child processes; no tinygrad state: any thread may run it)."""
  try:
    obj = subprocess.run(cmd, input=source.encode(), capture_output=True, check=True, timeout=120).stdout
    with tempfile.TemporaryDirectory() as d:
      (path := Path(d) / "kernel.o").write_bytes(obj)
      listing = subprocess.run(["objdump", "-d", "-l", str(path)], capture_output=True, check=True, text=True, timeout=120).stdout
  except (OSError, subprocess.SubprocessError) as e:
    err = getattr(e, "stderr", None)
    detail = (err.decode(errors="replace") if isinstance(err, bytes) else err or str(e)).strip().splitlines()
    return "", f"compiling the kernel again with -g for its line info failed ({detail[0] if detail else type(e).__name__})"
  return listing, None


# -g builds started ahead (ListingBuilds), by clang command and source: debug_listing takes each once
_started: dict[tuple[tuple[str, ...], str], Future[tuple[str, str | None]]] = {}


class ListingBuilds(Patch):
  """For a report, which shows every kernel's asm tab with its line info: while entered, each kernel that the CPU
  device's clang compiles in this process (a capture compiles in-process on 2 cores, see parallel.ParallelCompiles)
  has its -g build started at once, in background threads (clang and objdump are child processes, on a core the run
  leaves idle), and debug_listing takes the result; one in tinygrad's disk cache is read at once (a process forked from
  this one, tgviz.report.early's, cannot read the cache but has what was read). On exit it waits for the builds still
  running. On a first run of a model, the report would otherwise wait for some 65 ms of clang a kernel."""

  def __init__(self, threads: int = max(1, min(4, (os.cpu_count() or 2) - 1))) -> None:
    self.threads = threads

  def patches(self) -> list[tuple[object, dict[str, object]]]:
    # (no bound on what waits: one build per kernel the run compiles, which the run bounds)
    compile_cached, pool = ClangCompiler.compile_cached, Worker("tgviz-listing", self.threads, bound=None)
    def compiled(compiler: ClangCompiler, src: str) -> bytes:
      lib = compile_cached(compiler, src)
      cmd = clang_command(compiler, "-g")
      key = (tuple(cmd), src)
      if key not in _started and key not in _listings and _db_ok():
        # (one in tinygrad's disk cache is had now: a process forked from this one cannot read that cache)
        if (cached := _cached(cmd, src)) is not None: _remember(key, (cached, None))
        else: _started[key] = pool.submit(lambda: _build(cmd, src))
      return lib
    self._pool = pool
    return [(ClangCompiler, {"compile_cached": compiled})]

  def __exit__(self, *exc: object) -> None:
    super().__exit__(*exc)
    # the last few builds end here: no thread may be left running when the report's workers fork (a forked worker
    # holding the write end of clang's stdin would leave clang, and this thread, waiting for the end of its input)
    self._pool.shutdown(wait=True, drop=False)


_LISTINGS = "tgviz_debug_listing"  # tinygrad's disk cache table of the -g builds' listings, by clang command and source


def _cached(cmd: list[str], source: str) -> str | None:
  """A -g build's listing from tinygrad's disk cache (where tinygrad keeps its compiled binaries; CACHELEVEL=0 turns
  both off), or None. A clang build takes ~80 ms a kernel: a report of a real model waits seconds for them. Only on
  the main thread of the process that imported this (_db_ok): tinygrad's one sqlite connection serves only the thread
  that opened it, and opened on another (the widget's), it would refuse tinygrad's own compiles after."""
  if not _db_ok(): return None
  try: return diskcache_get(_LISTINGS, {"cmd": " ".join(cmd), "src": source})
  except Exception: return None  # the cache cannot be read: build it


def _cache(cmd: list[str], source: str, listing: str) -> None:
  if _db_ok():
    with contextlib.suppress(Exception): diskcache_put(_LISTINGS, {"cmd": " ".join(cmd), "src": source}, listing)


_PID = os.getpid()


def _db_ok() -> bool:
  """Whether tinygrad's sqlite connection may be used here: on the main thread, not in a process forked since (a
  report's workers: a connection must not cross a fork)."""
  return threading.current_thread() is threading.main_thread() and os.getpid() == _PID
