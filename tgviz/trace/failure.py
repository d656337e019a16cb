"""Where tinygrad failed inside a capture: the rewrite step and match where a pattern raised, or the kernel that failed to
compile or to run, with the UOp it failed on, the exception and its traceback.

Owns finding it (:func:`failure`) from what the trace recorded: the REWRITE_ERROR match tinygrad's tracking keeps of a
pattern that raised, and the launch the capture saw raise (a kernel whose runtime failed to build, which is where OpenCL
compiles, or whose launch raised). A failure is the trace's own error only: a pattern that raised and was caught by
tinygrad, or an error in the user's code, is none.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from tgviz import bridge as tg
from tgviz.trace.kernel import Kernel
from tgviz.trace.steps import Step
from tgviz.trace.trace import Trace

_COMPILER_LINE = re.compile(r"\S+\.\w+:(\d+):\d+: ")  # where a C compiler places its first message: file.cl:4:44 (clang, PoCL)


@dataclass(frozen=True)
class Failure:
  """Where tinygrad failed. kind: "rewrite" (a pattern raised in a rewrite step), "compile" (a kernel's code did not
  compile) or "run" (a kernel's launch raised); step: where to look (the rewrite step, else the kernel's program: its
  last step); match: the match it was at (None: the whole step); node: the node key of the UOp it failed on (the one the
  pattern was matching; the kernel's SOURCE or PROGRAM for a compile or a launch); line: the code line the compiler
  named (from 1), if any; error: "Type: message"; traceback: the exception's traceback as the capture kept it."""
  kind: str
  step: Step
  match: int | None
  node: str | None
  error: str
  traceback: str
  line: int | None = None

  @property
  def kernel(self) -> Kernel | None:
    """The kernel it failed in (None for a schedule's rewrite)."""
    return self.step.group.kernel

  def summary(self) -> str:
    """One line: where it failed and why (the message's first line; a compiler's, its first message)."""
    first = self.error.splitlines()[0] if self.error else ""
    if (said := _COMPILER_LINE.search(self.error)) is not None:
      first = f"{first.split(':')[0]}: {self.error[said.end():].splitlines()[0]}"
    if self.kind == "rewrite":
      at = f" at match {self.match + 1} of {len(self.step.matches)}" if self.match is not None else ""
      return f"a rewrite failed in {self.step.path}{at}: {first}"
    line = f" (line {self.line} of its code)" if self.line is not None else ""
    return f"kernel {self.step.group.display_name} failed to {self.kind}{line}: {first}"


def _said(error: BaseException) -> set[tuple[str, str]]:
  """(type name, message) of an exception and of those it was raised from or during."""
  out: set[tuple[str, str]] = set()
  todo: list[BaseException | None] = [error]
  seen: set[int] = set()
  while todo:
    if (e := todo.pop()) is None or id(e) in seen: continue
    seen.add(id(e))
    out.add((type(e).__name__, str(e)))
    todo += [e.__cause__, e.__context__]
  return out


def _split(text: str) -> tuple[str, str]:
  name, _, message = text.partition("\n")
  return name, message


def _program_step(k: Kernel) -> Step:
  """A kernel's program: its View Program step (else its last)."""
  steps = k.group.steps
  return next((s for s in steps if s.name == tg.KERNEL_LANDMARKS[1]), steps[-1])


def failure(trace: Trace) -> Failure | None:
  """Where tinygrad failed in the capture that ended with trace.error; None when it did not end by an error, or the
  error is not one tinygrad raised in a rewrite, a compile or a launch."""
  if trace.error is None or trace._rec is None: return None
  said, tb = _said(trace.error), trace.traceback or ""
  if (failed := trace._rec.failed) is not None and _split(failed[1]) in said:
    key, text, kind = failed
    k = next((k for k in trace.kernels if k._program is not None and k._program.source_key == key and k.group.steps), None)
    if k is not None:
      step = _program_step(k)
      nodes = tg.toposort(step.before())
      node = next((u for u in nodes if tg.op_name(u) == "SOURCE"), None) if kind == "compile" else None
      name, message = _split(text)
      said_at = _COMPILER_LINE.search(message) if kind == "compile" else None
      line = int(said_at.group(1)) if said_at else None
      return Failure(kind, step, None, tg.node_key(node if node is not None else step.before()), f"{name}: {message}", tb, line)
  for s in reversed(list(trace.steps)):  # the innermost rewrite that raised is the last one started
    for match in reversed(s.matches):
      if match.is_error and (err := _split(tg.error_text(match.uops()[1]))) in said:
        name, message = err
        kind = "compile" if name == "CompileError" else "rewrite"
        said_at = _COMPILER_LINE.search(message) if kind == "compile" else None
        return Failure(kind, s, match.index, s.match_keys[match.index][0], f"{name}: {message}", tb,
                       int(said_at.group(1)) if said_at else None)
  return None
