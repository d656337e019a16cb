"""A kernel below its source: the linearized program the renderer consumed, as tinygrad's print_uops lists it, and the
compiled binary, as the device's own compiler disassembles it (objdump for the CPU backends).

Owns: reading both from a rendered PROGRAM UOp (its LINEAR and BINARY sources) and running tinygrad's own print_uops
and Compiler.disassemble, which print, into text; saying in one line why there is no machine code where tinygrad can
give none. It records nothing and keeps no UOp.
"""
from __future__ import annotations

import contextlib
import io
import re
import shutil
from collections.abc import Callable

from tinygrad.device import Compiler
from tinygrad.helpers import ansistrip
from tinygrad.uop.ops import Ops, UOp


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


def disassemble(device: str, lib: bytes | None) -> tuple[str, str | None]:
  """The disassembly of a kernel's binary by its device's compiler, and None; or "" and one line saying why there is none."""
  if device.split(":")[0].upper() == "NULL": return "", "a NULL device compiles and runs nothing: there is no machine code"
  if lib is None: return "", "no binary was recorded for this kernel: tinygrad did not compile it inside the capture"
  from tinygrad import Device
  try: compiler = Device[device].renderer.compiler
  except Exception as e: return "", f"the {device} device cannot be opened here ({type(e).__name__}: {e}), so its compiler cannot disassemble"
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
