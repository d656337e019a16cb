"""The messages of the code column's *uops* and *asm* tabs (``js/program.js``), and the functions that build them.

A kernel below its source: the linearized program its renderer consumed (one row per UOp, numbered as tinygrad's
print_uops numbers them, each with its node key, so a row links to its node in the codegen graph and, through the
kernel's line map, to its code lines), and its machine code (each row with the source lines it was compiled from, where
the CPU device's clang can say). The widget sends them when a tab asks (the asm tab's line table costs a compile); the
HTML report holds both per kernel (``program_data``). Every text goes as plain strings the frontend sets as text.
"""
from __future__ import annotations

from collections.abc import Callable

from tgviz import bridge as tg
from tgviz.draw.graph import FAMILIES
from tgviz.trace.trace import Kernel, Trace
from tgviz.views.messages import AsmMsg, AsmRow, ErrorMsg, UopRow, UopsMsg
from tgviz.views.protocol import error_message, step_of


def uops_message(kernel: Kernel) -> UopsMsg:
  """The uops tab of a kernel: tinygrad's print_uops rows of Kernel.program_uops."""
  rows = [UopRow(n=n, op=op, family=fam, fill=FAMILIES.get(fam, FAMILIES["other"])[0], ranges=rng, dtype=dt, srcs=srcs, arg=arg, key=key)
          for n, (op, rng, dt, srcs, arg, key, fam) in enumerate(tg.program_rows(kernel.program_uops))]
  return UopsMsg(type="uops", kernel=kernel.display_name, rows=rows,
                 note=None if rows else "no linearized program: tinygrad's compile of this kernel stopped before linearizing it")


def asm_message(kernel: Kernel) -> AsmMsg:
  """The asm tab of a kernel: the lines of Kernel.disassembly, each with its source lines (Kernel.disassembly_lines: on
  the CPU device, a second compile with -g, made here)."""
  text = kernel.disassembly
  lines = kernel.disassembly_lines if text else None
  rows = [AsmRow(text=t, lines=lines[i] if lines is not None else []) for i, t in enumerate(text.splitlines())]
  return AsmMsg(type="asm", kernel=kernel.display_name, rows=rows, note=kernel.disassembly_note,
                lines_note=kernel.disassembly_lines_note if text else None)


def program_data(kernel: Kernel) -> dict[str, UopsMsg | AsmMsg]:
  """What the HTML report holds of a kernel for the two tabs: both messages."""
  return {"uops": uops_message(kernel), "asm": asm_message(kernel)}


REQUESTS = ("uops", "asm")  # ProgramRequest's types


def answer_later(trace: Trace, request: dict) -> Callable[[], UopsMsg | AsmMsg | ErrorMsg]:
  """The widget's answer to a ProgramRequest, in two parts: this call does what prints (tinygrad's disassembler prints,
  and its stdout is taken while it does: the caller's thread should be the one cells run on, so no cell's output goes
  with it) and returns the rest (the -g compile, slow), which gives the tab's message, or an error message."""
  kind = request.get("type")
  try:
    kernel = step_of(trace, str(request.get("step"))).group.kernel
    if kernel is None: raise KeyError("this step's group compiled no kernel")
    if kind == "asm": _ = kernel.disassembly
  except Exception as e:
    failed = error_message(f"{kind}: {type(e).__name__}: {e}")
    return lambda: failed
  def rest() -> UopsMsg | AsmMsg | ErrorMsg:
    try: return uops_message(kernel) if kind == "uops" else asm_message(kernel)
    except Exception as e:  # the tab says so, in place of its rows
      why = f"tgviz could not read this kernel's {'linearized program' if kind == 'uops' else 'machine code'} ({type(e).__name__}: {e})"
      if kind == "uops": return UopsMsg(type="uops", kernel=kernel.display_name, rows=[], note=why)
      return AsmMsg(type="asm", kernel=kernel.display_name, rows=[], note=why, lines_note=None)
  return rest
