"""The message of the code column's *access* tab (``js/access.js``): what each thread of a kernel reads and writes.

The kernel's global buffers (their tensors' shapes, drawn as grids of elements) and its accesses at both stages (its
View Base AST: what each output element reads; its final program: what each thread reads and writes), each access with
its pattern and the plain table of its index and mask (tgviz.bridge.access's: tinygrad's own index UOps). The page
evaluates that table itself (``js/port/access.js``, the twin of tgviz.trace.access's evaluation) for every hover, so the
message is small and the HTML report holds it per kernel. The widget sends it when the tab asks.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from tgviz.trace.trace import Kernel, Trace
from tgviz.views.messages import AccessBuffer, AccessEntry, AccessMsg, AccessStage, AccessVar, ErrorMsg
from tgviz.views.protocol import error_message, step_of

STAGES = ("ast", "program")


def access_message(kernel: Kernel) -> AccessMsg:
  """The access tab of a kernel (Kernel.accesses' tables and patterns; no counting: the page counts); where tgviz cannot
  read them, the tab's note says why."""
  try: return _message(kernel)
  except Exception as e:
    return AccessMsg(type="access", kernel=kernel.display_name, buffers=[], stages=[],
                     note=f"tgviz could not read this kernel's accesses ({type(e).__name__}: {e})")


def _message(kernel: Kernel) -> AccessMsg:
  ka = kernel.access_model
  stages: list[AccessStage] = []
  shapes: dict[int, AccessBuffer] = {}
  for stage in STAGES:
    if (table := ka.tables.get(stage)) is None: continue
    entries = []
    for n, (a, (pattern, stride)) in enumerate(zip(table.accesses, ka.patterns(stage), strict=True)):
      entries.append(AccessEntry(number=n, kind=cast(Any, a.kind), slot=a.slot, pattern=cast(Any, pattern),
                                 stride=stride, width=a.width, index=a.index, valid=a.valid, vars=list(a.vars), loops=list(a.loops),
                                 feeds=list(a.feeds), data=a.data, index_text=a.index_text, valid_text=a.valid_text or None, keys=list(a.keys)))
      shapes.setdefault(a.slot, AccessBuffer(slot=a.slot, shape=list(ka.shape(a.slot, a.numel)), dtype=a.dtype, numel=a.numel,
                                             tensor=ka.tensor(a.slot)))
    stages.append(AccessStage(stage=cast(Any, stage), nodes=[(op, kind, list(src), arg) for op, kind, src, arg in table.nodes],
                              vars=[AccessVar(name=v.name, size=v.size, kind=v.kind) for v in table.vars], accesses=entries))
  note = "; ".join(f"{s}: {why}" for s, why in ka.notes.items()) or None
  if not stages and note is None: note = "tgviz saw neither this kernel's AST nor its program: no accesses to read"
  return AccessMsg(type="access", kernel=kernel.display_name, buffers=[shapes[s] for s in sorted(shapes)], stages=stages, note=note)


def answer_later(trace: Trace, request: dict) -> Callable[[], AccessMsg | ErrorMsg]:
  """The widget's answer to an AccessRequest, to compute in the background: the tab's message, or an error message."""
  def answer() -> AccessMsg | ErrorMsg:
    try:
      kernel = step_of(trace, str(request.get("step"))).group.kernel
      if kernel is None: raise KeyError("this step's group compiled no kernel")
      return access_message(kernel)
    except Exception as e: return error_message(f"access: {type(e).__name__}: {e}")
  return answer
