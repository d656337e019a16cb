"""Why a buffer lies between two kernels, in the fixed vocabulary and in words: the reading of what tinygrad's scheduler
decided (bridge.schedule's records) into a reason.

Owns REASONS (user, output, input, copy, device, ranges, cost, reduce, other) and explain(): from where the writing call
had the buffer (one the schedule made, by slot; one passed in, by position) and what the scheduler recorded about it,
the reason, its detail, the user's line, tinygrad's deciding line and tinygrad's own words. Nothing here guesses: a
buffer whose decision was not recorded is "other", saying so. Used by :mod:`tgviz.trace.program`.
"""
from __future__ import annotations

from dataclasses import dataclass

from tgviz import bridge as tg

REASONS = ("user", "output", "input", "copy", "device", "ranges", "cost", "reduce", "other")
"""Why a buffer exists: the user asked for it (a .contiguous(), a realize read again later, an .assign()); it is an
output of the block; it came from before the block; a copy between devices; a multi-device op; its consumers iterate it
differently (run_rangeify); inlining it would read too many buffers (remove_bufferize's cost); it reduces over a buffer
(remove_bufferize keeps a reduce, or split_reduceop split one); any other rule."""

INPUT = "from before the block: written outside it (or made by numpy or Python lists) and read here"

def output_text(detail: str) -> str:
  """An output's detail: what made it, and that the block reads it no more."""
  return "an output of the block (no kernel of the block reads it after)" + (f"; {detail}" if detail else "")


def _line(origins: tuple[tg.Origin, ...] | list[tg.Origin], op: str | None = None) -> tg.Origin | None:
  return next((o for o in origins if o.file is not None and o.line and (op is None or o.op == op)), None)


def _at(o: tg.Origin | None) -> str:
  """Where in the user's code, in a detail's words (Buffer.line says the file): " on line 12: y = x.contiguous()"."""
  if o is None or not o.file: return ""
  return f" on line {o.line}" + (f": {o.source}" if o.source else "")


def _ops(origins: tuple[tg.Origin, ...]) -> str:
  names = list(dict.fromkeys(o.op + (" bw" if o.backward else "") for o in origins))
  return ", ".join(names[:4]) + (", ..." if len(names) > 4 else "")


def _axes(r: tg.Realized) -> str:
  if not r.axes or len(r.axes) == len(r.shape): return f"all of {_shape(r.shape)}"
  return f"axis {', '.join(map(str, r.axes))} of {_shape(r.shape)}" if len(r.axes) == 1 else \
    f"axes {', '.join(map(str, r.axes))} of {_shape(r.shape)}"


def _shape(s: tuple[int | str, ...]) -> str:
  return "(" + ", ".join(map(str, s)) + ")"


def _readers(r: tg.Realized) -> str:
  names = [", ".join(ops) if ops else op.lower() for op, ops in r.consumers]
  return "; ".join(dict.fromkeys(names)) or "its readers"


def _ranges(r: tg.Realized) -> str:
  if r.why == "ending":
    return f"its value is read back across ranges its readers end (a reduce's result used at every element it reduced: " \
           f"run_rangeify realized {_axes(r)}; PCONTIG=2 keeps the ranges open)"
  return f"its readers ({_readers(r)}) iterate it with different ranges (run_rangeify realized {_axes(r)}; PCONTIG=2 " \
         f"merges ranges that agree)"


_STAGE_WORDS = {"consumers": "run_rangeify: consumers' ranges differ", "ending": "run_rangeify: ranges end here",
                "split": "split_reduceop", "copy": "a COPY of a moved view needs it contiguous (earliest_rewrites)",
                "device": "pm_generate_realize_map: realize_srcs of MSELECT/MSTACK", "hazard":
                "pm_generate_realize_map: realize_store_after_src", "custom": "pm_generate_realize_map: realize_custom_kernel_srcs",
                "limit": "pm_limit_bufs", "contiguous": "pm_generate_realize_map: CONTIGUOUS"}
_KEPT_WORDS = {"cost": "remove_bufferize: len(accessed_buffers) > 3", "reduce": "remove_bufferize: buffer_in_reduce",
               "always": "remove_bufferize: not removable"}


def _stage(r: tg.Realized) -> tuple[str, str]:
  """A buffer the schedule made: its reason and detail, from rangeify's rule and remove_bufferize's verdict."""
  if r.why == "split":
    return "reduce", f"tinygrad split a large reduce into two kernels to run it on more threads (split_reduceop: this holds " \
                     f"{_shape(r.shape)} partial results; SPLIT_REDUCEOP=0 keeps it one kernel)"
  if r.why == "copy": return "copy", "a copy moves contiguous memory only: tinygrad made the moved view contiguous first"
  if r.why == "device": return "device", "a multi-device op (MSELECT/MSTACK) reads its source from a buffer on each device"
  if r.why == "hazard":
    return "user", "an .assign() reads its own target (x.assign(f(x))): tinygrad computes the new value into a buffer first"
  if r.why == "custom": return "other", "an input of a custom kernel: tinygrad realizes every one"
  if r.why == "limit": return "cost", "the kernel would read more buffers than the device allows: tinygrad realized a source"
  if r.why in ("consumers", "ending"):
    if r.kept == "cost":
      return "cost", f"inlining it would make its readers read {r.reads} buffers (more than 3: remove_bufferize keeps it; " \
                     f"PCONTIG=3 lifts this); {_ranges(r)}"
    if r.kept == "reduce":
      red = ", ".join(dict.fromkeys(r.reduces)) or "a reduce"
      return "reduce", f"computing it takes a reduce over a buffer ({red}): inlining it would redo the reduce wherever it is " \
                       f"read (remove_bufferize keeps it); {_ranges(r)}"
    return "ranges", _ranges(r)
  return "other", f"tinygrad realized it ({_STAGE_WORDS.get(r.why, r.why)})"


def value_ops(origin: tuple[str, int] | None, stages: dict[int, tg.Realized], made: tg.Realized | None) -> tuple[str, ...]:
  """The Tensor operations of the value a written buffer holds, as the scheduler recorded them (its realized value's
  origins), each once: "softmax", "conv2d bw"."""
  r = stages.get(origin[1]) if origin is not None and origin[0] == "slot" else made if origin is not None else None
  return tuple(dict.fromkeys(o.op + (" bw" if o.backward else "") for o in r.origins)) if r is not None else ()


@dataclass(frozen=True)
class Explained:
  """Why a buffer exists: its reason (one of REASONS), the detail in words, the user's line (file, line) and its text,
  tinygrad's deciding line and its own words for the rule, and the shape where the scheduler knew it."""
  reason: str
  detail: str
  line: tuple[str, int] | None = None
  source: str = ""
  rule: tuple[str, int] | None = None
  tinygrad: str = ""
  shape: tuple[int | str, ...] | None = None


def _at_line(o: tg.Origin | None) -> tuple[tuple[str, int] | None, str]:
  return ((o.file, o.line), o.source) if o is not None and o.file and o.line else (None, "")


def explain(kind: str, origin: tuple[str, int] | None, stages: dict[int, tg.Realized], made: tg.Realized | None,
            asked: tg.Origin | None, device: str, writer_origins: list[tg.Origin]) -> Explained:
  """Why the buffer a call of kind ("kernel", "copy", ...) writes exists, from where the call's arg came from in the
  cached schedule (origin: ("slot", n) one the schedule made, ("param", i) one passed in), the schedule's decisions
  (stages: by slot), what transform_to_call made it for (made), the user's line that asked for the schedule, the
  copy's device and the writing kernel's origins."""
  if kind == "copy": return Explained("copy", f"a copy to {device}: tinygrad copies between devices in a call of its own", tinygrad="COPY")
  if origin is not None and origin[0] == "slot":
    if (r := stages.get(origin[1])) is None:
      return Explained("other", "a buffer the schedule made, whose decision tgviz did not see (a trace of an older tgviz?)")
    reason, detail = _stage(r)
    words = _STAGE_WORDS.get(r.why, r.why) + (f"; {_KEPT_WORDS[r.kept]}" if r.why in ("consumers", "ending") else "")
    shape = tuple(r.shape[a] for a in r.axes if a < len(r.shape)) if r.axes and len(r.axes) < len(r.shape) else r.shape
    if r.origins: detail += f"; it holds {_ops(r.origins)}"
    line, source = _at_line(_line(r.origins))
    return Explained(reason, detail, line, source, r.kept_at if r.kept in ("cost", "reduce") and r.why in ("consumers", "ending") else r.rule,
                     words, shape or None)
  if origin is None or origin[0] != "param": return Explained("other", "tgviz could not tell where this buffer came from")
  if made is not None and made.why == "copy":
    return Explained("copy", "data from the host (numpy, a Python list) copied to the device into a buffer of its own",
                     tinygrad="transform_to_call: a COPY from the host gets a buffer", shape=made.shape)
  if made is not None and made.why == "contiguous":
    where = _line(made.origins, "contiguous") or _line(made.origins)
    ops = tuple(o for o in made.origins if o.op != "contiguous")
    detail, words = f"a .contiguous(){_at(where)}" + (f" of {_ops(ops)}" if ops else ""), "transform_to_call: a CONTIGUOUS gets a buffer"
  elif made is not None:
    where = asked
    detail, words = f"realized by {asked.op}(){_at(asked)}" if asked else "a Tensor realized", "transform_to_call: a realized Tensor"
  else:
    where = _line(writer_origins, "assign") or _line(writer_origins) or asked
    ops_text = _ops(tuple(writer_origins))
    detail = "stored into its Tensor's own buffer (an assign" + (f": {ops_text}" if ops_text else "") + f"){_at(where)}"
    words = "AFTER(STORE): a store into the Tensor's buffer (assign)"
  line, source = _at_line(where)
  return Explained("user", detail, line, source, None, words, made.shape if made is not None else None)
