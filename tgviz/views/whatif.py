"""What the trace browser's what-if panel (``js/whatif.js``) shows, for the widget and the HTML report.

State ``whatif``: per kernel, by its display name, an OptsInfo: the opts applied (as [op, axis, amount] and as text),
who chose them, BEAM's candidates (Kernel.beam_table's rows, and whether its cache answered), and the retries made so
far (each a RetryMsg). Messages: the frontend asks ``{"type": "allowed", "kernel": name, "before": [[op, axis, amount],
...]}`` (the opts tinygrad allows next) and ``{"type": "retry", "kernel": name, "opts": [...]}`` (the kernel compiled and
run again with those opts); the answers are an AllowedMsg and a RetryMsg, whose ``compare`` is what ``js/compare.js``
shows of the retry's comparison (its state and its one pair). Bad input is answered with an ``error``, never raised.
An ``error`` is a sentence for the user (``refusal``): what was refused and why, in tinygrad's words made readable (no
UOp reprs), and what to try; the panel shows it once, the retry's entry in the list only says "refused".
"""
from __future__ import annotations

import re
import weakref
from typing import Any, cast

from tgviz.trace import whatif
from tgviz.trace.trace import Kernel, Trace
from tgviz.views import compare as V
from tgviz.views import protocol as P
from tgviz.views.messages import AllowedMsg, BeamRow, OptsInfo, OptSpec, RetryMsg

TRY = "Try an opt from the + add list of the what-if editor (kernel.allowed_opts() in Python): tinygrad accepts those here."
_REWORDED = (  # tinygrad's KernelOptError texts (codegen/opt/postrange.py) -> readable reasons
  (re.compile(r"(\d+) can't divide UOp\(Ops\.CONST, [^,]+, arg=(\d+), src=\(\)\)\s*in[\s\d]*$"),
   r"\1 does not divide the axis's size, \2 (an amount must divide it; 0 takes the whole axis)"),
  (re.compile(r"invalid axis on axis=(\d+) op=<OptOps\.(\w+): \d+> self\.shape_len=(\d+)$"),
   r"this kernel has no axis \1 for \2 (its shape has \3 axes, numbered from 0)"),
  (re.compile(r"don't upcast more than (\d+)$"), r"tinygrad upcasts at most \1 elements"),
)


def refusal(error: str) -> str:
  """A retry's error as the user reads it: tinygrad's refusal reworded where its text is Python's (UOp reprs, enum
  reprs), any remaining UOp repr reduced to its value, and what to try."""
  head, sep, why = error.partition(": ") if error.startswith("tinygrad refused ") else ("", "", error)
  for pattern, reason in _REWORDED:
    if pattern.search(why): why = pattern.sub(reason, why); break
  why = re.sub(r"UOp\(Ops\.CONST, [^,]+, arg=([^,]+), src=\(\)\)", r"\1", why).strip()
  return f"{head}{sep}{why.rstrip('.')}. {TRY}"


def _plain(opts: list[Any]) -> list[OptSpec]:
  return [cast(OptSpec, [o.op, o.axis, list(o.arg) if isinstance(o.arg, tuple) else o.arg]) for o in opts]  # (JSON has no tuples)


def _opts(raw: Any) -> list[Any]:
  """[[op, axis, amount], ...] from the page, as Kernel.retry takes them (a TC's amount list back to a tuple)."""
  if not isinstance(raw, list): raise ValueError("opts must be a list of [op, axis, amount]")
  return [tuple(tuple(x) if isinstance(x, list) else x for x in o) if isinstance(o, list) else o for o in raw]


_MESSAGES: weakref.WeakKeyDictionary[whatif.Retry, RetryMsg] = weakref.WeakKeyDictionary()  # each laid out once


def retry_message(r: whatif.Retry) -> RetryMsg:
  """A retry as the panel shows it, with its comparison's state and pair (the pair's graphs laid out once per retry)."""
  if (msg := _MESSAGES.get(r)) is not None: return msg
  compare = None
  if r.retried is not None and r.original is not None:
    cmp = r.comparison()
    compare = {"state": V.state(cmp), "pairs": [V.pair_message(cmp, 0)]}
  summary, error = r.summary(), r.error
  if error is not None and r.retried is None:  # the list says refused or failed; the reason is the panel's, once
    refused = error.startswith("tinygrad refused ")
    summary = f"retry of {r.kernel.display_name} with {', '.join(map(str, r.opts)) or 'no opts'}: {'refused' if refused else 'failed'}"
    if refused: error = refusal(error)
  _MESSAGES[r] = msg = RetryMsg(type="retried", kernel=r.kernel.display_name, opts=[str(o) for o in r.opts], summary=summary,
                                 error=error, same=r.same, times_us=list(r.times_us()), compare=compare)
  return msg


def opts_info(k: Kernel) -> OptsInfo:
  s, retries = k.search, k.retries if isinstance(k, whatif.Kernel) else []
  telling = whatif.most_telling(retries)
  return OptsInfo(opts=_plain(k.opts), text=[str(o) for o in k.opts], by=k.opts_by, beam=cast(list[BeamRow], whatif.beam_rows(k)),
                  steps=[P.step_key(s) if s is not None else None for _, s in k.opt_steps],
                  beam_cached=s.cached if s is not None else None,
                  retries=[retry_message(r) for r in retries], opening=retries.index(telling) if telling is not None else None,
                  not_tried=list(k.not_tried) if isinstance(k, whatif.Kernel) else [], total_us=k.total_us)


def state(trace: Trace) -> dict[str, OptsInfo]:
  """The ``whatif`` state: every kernel's OptsInfo by display name."""
  return {k.display_name: opts_info(k) for k in trace.kernels}


def _kernel(trace: Trace, name: Any) -> whatif.Kernel:
  k = next((k for k in trace.kernels if k.display_name == name), None)
  if not isinstance(k, whatif.Kernel): raise ValueError(f"no kernel {name!r} to retry in this trace")
  return k


def allowed_message(trace: Trace, content: dict) -> AllowedMsg:
  """The opts tinygrad accepts next on a kernel after the opts given (an error where it refuses those)."""
  name = str(content.get("kernel"))
  try: opts = _plain(_kernel(trace, name).allowed_opts(_opts(content.get("before", []))))
  except ValueError as e:
    return AllowedMsg(type="allowed", kernel=name, opts=[], error=refusal(str(e)) if str(e).startswith("tinygrad refused ") else str(e))
  return AllowedMsg(type="allowed", kernel=name, opts=opts, error=None)


def retry(trace: Trace, content: dict) -> RetryMsg:
  """Retry a kernel with the opts asked (see Kernel.retry); a refused opt or bad input is the answer's error."""
  name = str(content.get("kernel"))
  try: k, opts = _kernel(trace, name), _opts(content.get("opts", []))
  except ValueError as e:
    return RetryMsg(type="retried", kernel=name, opts=[], summary=str(e), error=str(e), same=False, times_us=[None, None], compare=None)
  return retry_message(k.retry(opts))
