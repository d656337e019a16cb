"""What if: one kernel compiled again with other optimizations, run on the same inputs as the original, compared with it.

Owns: the Kernel of :mod:`tgviz.api`'s traces (``kernel.allowed_opts()``, ``kernel.retry(opts)``, ``kernel.beam_table()``)
and Retry, what a retry gives: its own trace (traced like any capture: its rewrite steps, graphs and code), the times of
both kernels measured on the same inputs, whether their outputs match, and the comparison of the two (code diff, steps
side by side, time, FLOPs, bytes) with tgviz's compare view. tinygrad's side of it is :mod:`tgviz.bridge.opts`; this
module draws nothing itself (:mod:`tgviz.api` adds ``Retry.to_html``).
"""
from __future__ import annotations

import functools
import math
import statistics
import time
import traceback
from collections.abc import Iterable
from typing import Any, ClassVar

from tgviz import bridge as tg
from tgviz.trace import kernel as model
from tgviz.trace.comparison import Comparison
from tgviz.trace.retime import APART, NOISE, compare_times, timing_of
from tgviz.trace.trace import Trace
from tgviz.trace.units import time_text

BEAM_COLUMNS = ("index", "round", "opts", "compiled", "time_us", "winner")  # Kernel.beam_table
BEAM_WIDTH, BEAM_SECONDS = 2, 3.0  # what_ifs' BEAM: a narrow search, stopped after some seconds a kernel
BEAM_SHARE, BEAM_LEAST = 0.05, 0.5  # tgviz run's: a kernel's search at most this share of the run, but this long at least
WHAT_IFS = 2  # tgviz run's --what-if: the slowest kernels retried
WHAT_IF_SHARE, WHAT_IF_LEAST = 0.1, 2.0  # tgviz run's retries, all told: at most this share of the run (this long at least)
BESIDE = "same inputs, the original timed beside this retry"  # how a retry's summary says where its two medians come from
SIZED = ("UPCAST", "UNROLL", "LOCAL", "GROUP", "GROUPTOP", "THREAD")  # the opts whose amount can be one size up


class Retry:
  """A kernel compiled again from its base AST with other opts (see :meth:`Kernel.retry`).

  ``ok``: it compiled and ran. ``error``: why not (tinygrad's message for a refused opt), else None. ``trace``: the
  retry's own trace (one kernel, ``retried``), ``run``: both kernels' launch times (s) on the same inputs and whether
  their outputs match (``same``)."""

  def __init__(self, kernel: model.Kernel, opts: tuple[tg.Opt, ...]):
    self.kernel, self.opts = kernel, opts
    self.error: str | None = None
    self.traceback: str | None = None
    self.trace: Trace | None = None
    self.original: Trace | None = None    # the original kernel alone, with the times measured here
    self.run: tg.PairRun | None = None
    self.why: str | None = None           # what the retry asks, where tgviz chose its opts ("BEAM's pick", see what_ifs)

  @property
  def ok(self) -> bool:
    return self.error is None and self.retried is not None

  @property
  def retried(self) -> model.Kernel | None:
    """The retry's kernel (None where it was refused or did not compile)."""
    return self.trace.kernels[-1] if self.trace is not None and self.trace.kernels else None

  @property
  def same(self) -> bool:
    """Whether the retry computed what the original did (every output within tolerance, on the same inputs)."""
    return self.run is not None and self.run.same

  def times_us(self) -> tuple[float | None, float | None]:
    """The median launch time (µs) of (the original, the retry), each run on the same inputs; None where not run."""
    def med(ts: list[float]) -> float | None: return round(statistics.median(ts) * 1e6, 3) if ts else None
    return (med(self.run.times_a), med(self.run.times_b)) if self.run is not None else (None, None)

  def comparison(self) -> Comparison:
    """The original kernel and its retry as a comparison (labels: who chose the original's opts, "retry"): code diff,
    steps side by side, time (on the same inputs), FLOPs, bytes.
    ValueError where there is no retry to compare (see error)."""
    if self.original is None or self.retried is None: raise ValueError(f"nothing to compare: {self.error or 'no retry'}")
    return Comparison(self.original, self.trace, self.labels, pairs=[(self.original.kernels[0], self.retried)])  # type: ignore[arg-type]

  @property
  def labels(self) -> tuple[str, str]:
    return f"original ({self.kernel.opts_by})", "retry"

  @property
  def speedup(self) -> float | None:
    """How many times faster the retry ran than the original (the ratio of their medians: above 1 faster, below 1
    slower); None where they did not both run."""
    a, b = self.times_us()
    return a / b if a and b else None

  @property
  def time_compared(self) -> str | None:
    """How the retry's time compares with the original's, as its comparison's table says it (``time``, see
    :func:`tgviz.trace.retime.compare_times`): "within noise" where a median lies inside the other's min-max spread
    (NOISE), else "b faster" or "b slower"; None where they did not both run."""
    return compare_times(timing_of([], self.run.times_a), timing_of([], self.run.times_b)) if self.run is not None else None

  def summary(self) -> str:
    """One line: the retry's opts (and those of the kernel's own it drops) and kernel, whether its outputs match, and
    each kernel's median launch time with its min – max (the original's timed beside this retry, on the same inputs),
    with the speedup, or "within noise" where the comparison's table says so (:attr:`time_compared`), each with its
    rule (NOISE, APART); or why there is no retry."""
    # the opts given replace the kernel's own: those it had and the retry lacks are said, or "UPCAST(0, 0)" reads as
    # added; where the retry keeps some of them and changes others (one size up), only the change is said
    dropped = [o for o in self.kernel.opts if o not in self.opts] if self.opts else []
    added = [o for o in self.opts if o not in self.kernel.opts]
    kept = bool(dropped and added) and len(added) < len(self.opts)
    shown = added if kept else self.opts
    head = f"retry of {self.kernel.display_name}" + (f" with {_opts_text(shown)}" if self.opts or self.error is None else "")
    head += f" in place of its own {_opts_text(dropped)}" if dropped else ""
    head += ", its other opts kept" if kept else ""
    head += f" ({self.why})" if self.why and self.opts else ""
    if self.error is not None: return f"{head}: {self.error}"
    a, b = self.times_us()
    k = self.retried
    verdict = "outputs match" if self.same else f"OUTPUTS DIFFER (max |diff| {self.run.max_diff:.3g})" if self.run else "not run"
    if self.run is None or a is None or b is None or (x := self.speedup) is None: return f"{head}: {k.name if k else '?'}, {verdict}"
    n, ta, tb = len(self.run.times_a), timing_of([], self.run.times_a), timing_of([], self.run.times_b)
    noise = self.time_compared == "within noise"
    speed = "within noise" if noise else f"{x:.2f}x faster" if x >= 1 else f"{1 / x:.2f}x slower"
    def spread(t: Any) -> str: return f"{time_text(t.min_us)} – {time_text(t.max_us)}" if t is not None else "–"
    # (each retry times the original again beside it: two retries of a kernel give it two medians, neither the table's;
    # the min – max says how far apart its launches were)
    return (f"{head}: {k.name if k else '?'}, {verdict}; {n} launches each ({BESIDE}): median {time_text(a)} (min – max "
            f"{spread(ta)}) -> {time_text(b)} ({spread(tb)}), {speed} ({NOISE if noise else APART})")

  __str__ = summary

  def __repr__(self) -> str:
    return f"<Retry {self.summary()}>"


def most_telling(retries: list[Retry]) -> Retry | None:
  """Of a kernel's retries, the one that tells most (the report's what-if sheet opens on it): of those with a
  comparison, one whose outputs match before one whose differ, then the largest change in time that is not within
  noise (the biggest speedup or slowdown, by the ratio of the medians), the first of equals; None where none has a
  comparison."""
  shown = [r for r in retries if r.retried is not None and r.original is not None]
  def telling(r: Retry) -> tuple[bool, float]:
    real = r.time_compared in ("b faster", "b slower") and r.speedup
    return r.same, abs(math.log(r.speedup)) if real and r.speedup else -1.0
  return max(shown, key=telling, default=None)


def _opts_text(opts: Iterable[tg.Opt]) -> str:
  return ", ".join(map(str, opts)) or "no opts"


def beam_rows(kernel: model.Kernel) -> list[dict[str, Any]]:
  """BEAM's candidates for a kernel as plain rows (see Kernel.beam_table); [] without a search."""
  s = kernel.search
  if s is None: return []
  def us(t: float | None) -> float | None: return round(t * 1e6, 3) if t is not None and t != float("inf") else None
  return [dict(zip(BEAM_COLUMNS, (i, c.round, [str(o) for o in c.opts], c.compiled, us(c.time), c.opts == s.winner), strict=True))
          for i, c in enumerate(s.candidates)]


class Kernel(model.Kernel):
  __doc__ = model.Kernel.__doc__

  retry_type: ClassVar[type[Retry]] = Retry  # the class of its retries (tgviz.api's can write themselves as HTML)

  @functools.cached_property
  def retries(self) -> list[Retry]:
    """The retries of this kernel made so far, in order (the HTML report shows them)."""
    return []

  @functools.cached_property
  def not_tried(self) -> list[str]:
    """What what_ifs did not retry this kernel with, and why (the report says it beside the retries it made)."""
    return []

  @property
  def base_ast(self) -> Any:
    """The AST this kernel was compiled from (its first graph, the View Base AST); None where the trace has no steps."""
    return self.group.steps[0].before() if self.group.steps else None

  def allowed_opts(self, before: Iterable[Any] = ()) -> list[tg.Opt]:
    """The single opts tinygrad accepts on this kernel's axes after the opts before (those BEAM would try): what to
    retry with. OptRefused (a ValueError) where tinygrad refuses the opts before."""
    return tg.allowed_opts(self.base_ast, self.device, before)

  def retry(self, opts: Iterable[Any] = (), runs: int = 5, seed: int = 0) -> Retry:
    """Compile this kernel again from its base AST with exactly these opts (``[]``: none) on the same device, traced like
    any capture; run it and the original runs times each on the same random inputs (seeded), time every launch with the
    device's own timer (as the kernel table), and compare their outputs. opts: tgviz's Opt, tinygrad's Opt, or tuples
    (op, axis, amount), e.g. ``[("UPCAST", 0, 4), ("LOCAL", 0, 8)]``. Never raises for a refused opt: the Retry's
    ``error`` says what tinygrad said. ``retry.comparison()`` (or ``tgviz.CompareWidget(retry.comparison())``) shows
    both side by side."""
    try: wanted = tg.opts_of(opts)
    except tg.OptRefused as e:
      r = self.retry_type(self, ())
      r.error = str(e)
      return r
    r = self.retry_type(self, wanted)
    self.retries.append(r)
    try: _run(self, r, runs, seed)
    except tg.OptRefused as e: r.error = str(e)
    except Exception as e:
      r.error, r.traceback = f"{type(e).__name__}: {e}", traceback.format_exc()
    return r

  def beam_table(self) -> list[dict[str, Any]]:
    """BEAM's candidates for this kernel, one plain row each in the order it tried them (see BEAM_COLUMNS): its round,
    its opts, whether it compiled, its time (µs; None: not timed) and whether it is the winner. Empty without BEAM (or
    where BEAM's cache answered: :attr:`search` says so)."""
    return beam_rows(self)


def _run(kernel: Kernel, r: Retry, runs: int, seed: int) -> None:
  """Compile (traced), run and time a retry; fill r."""
  trace = kernel.trace
  if (ast := kernel.base_ast) is None or kernel._program_uop is None or trace is None:
    raise ValueError(f"{kernel.display_name} has no base AST or program in this trace to retry")
  env = {k: v for k, v in trace.env.items() if k not in ("BEAM", "DEBUG")}
  tracker = tg.Tracker(kernel.device, profile=False)
  with tg.context(env), tracker: program = tg.compile_with(ast, kernel.device, r.opts)
  assert tracker.recording is not None
  new, old = tg.program_of(program), kernel._program
  if tg.is_null_device(kernel.device) or new is None or old is None:
    r.error = f"compiled, not run: the {kernel.device} device runs nothing"
  else:
    r.run = tg.run_pair(kernel._program_uop, program, ast, kernel.device, max(runs, 1), seed)
    tracker.recording.runs = tracker.recording.retimed = {new.source_key: r.run.times_b}  # (timed after a warm-up launch)
  r.trace = type(trace)(kernel.device)
  r.trace.env = env
  r.trace.fill(tracker.recording)
  if trace._rec is not None:
    r.original = type(trace)(kernel.device)
    times = {old.source_key: r.run.times_a} if r.run and old else {}
    r.original.fill(trace._rec.only(trace._rec.groups[kernel.group.index], times))
    assert r.original._rec is not None
    r.original._rec.retimed = times


def what_ifs(trace: Trace, slowest: int, beam_seconds: float = BEAM_SECONDS, budget: float | None = None) -> list[Retry]:
  """For the `slowest` kernels by device time (Kernel.warm_total_us: re-timed warm where trace.retime timed them, a cold
  first launch not taken for a slow kernel), the retries that answer "what would other opts do?" where
  no Python is at hand (the HTML report shows each kernel's retries): no opts, one size up of an opt applied (see
  one_size_up), and BEAM's pick (width BEAM_WIDTH, searching beam_seconds at most; not where BEAM chose the opts
  already); each once, none that repeats the opts applied. No retry is begun that would end past `budget` seconds
  (None: no limit), going by the kernel's codegen and compile in the run (a retry compiles, runs and is traced whole:
  a big kernel's can take many seconds, and cannot be stopped midway). Returns them in
  order (a failed one says why in its error); what a kernel was not retried with is said, with why, in its
  ``not_tried``."""
  ran = [k for k in trace.kernels if isinstance(k, Kernel) and k.run_times and k.base_ast is not None]
  done: list[Retry] = []
  start = time.perf_counter()
  # what a retry is expected to take: its kernel's codegen and device compile in the run (a retry does both again)
  costs = {r["kernel"]: ((r["codegen_us"] or 0) + (r["compile_us"] or 0)) / 1e6 for r in trace.compile_table()} if budget is not None else {}

  def spent(k: Kernel) -> bool:
    return budget is not None and time.perf_counter() - start + costs.get(k.display_name, 0.0) >= budget

  for k in sorted(ran, key=lambda k: -(k.warm_total_us or 0.0))[:max(slowest, 0)]:
    tried, beam = {tuple(k.opts)}, f"width {BEAM_WIDTH}, {beam_seconds:.3g} s at most"
    # (why: the retry's label; label: the same said of a retry not made; opts: what makes its opts, and why there are none)
    for why, label, make in (("no opts", "no opts", lambda k: ((), "")),
                             ("one size up", "one size up", lambda k: (one_size_up(k), "no opt applied whose amount tinygrad takes doubled")),
                             (f"BEAM's pick: {beam}", f"BEAM's pick ({beam})", lambda k: beam_pick(k, beam_seconds))):
      if spent(k):  # (before BEAM's search too: it takes its seconds)
        left = max(0.0, (budget or 0.0) - (time.perf_counter() - start))
        k.not_tried.append(f"{label}: the what-if's {budget or 0:.1f} s would run out before it ended ({left:.2f} s left, and "
                           f"the kernel's codegen and compile took {costs.get(k.display_name, 0.0):.2f} s in the run)")
        continue
      opts, missing = make(k)
      if opts is None:
        k.not_tried.append(f"{label}: {missing}")
        continue
      if opts in tried:
        k.not_tried.append(f"{label}: {'the opts applied' if opts == tuple(k.opts) else 'the same opts as a retry above'}")
        continue
      tried.add(opts)
      (r := k.retry(opts)).why = why
      if r.retried is None and (r.error or "").startswith("tinygrad refused "):
        k.retries.remove(r)  # (opts the base AST accepts that tinygrad's compile, on the AST it reshaped, refuses: no answer)
        k.not_tried.append(f"{label}: tinygrad's compile refused {', '.join(map(str, opts))}")
        continue
      done.append(r)
  return done


def what_if_seconds(run_seconds: float) -> float:
  """How long tgviz run's retries may take, all told, after a run of run_seconds: WHAT_IF_SHARE of it, WHAT_IF_LEAST at
  least (what_ifs begins no retry that its kernel's compile in the run says would end past it)."""
  return max(WHAT_IF_LEAST, WHAT_IF_SHARE * run_seconds)


def beam_seconds(run_seconds: float) -> float:
  """How long what_ifs' BEAM searches a kernel after a run of run_seconds (tgviz run): BEAM_SHARE of the run, between
  BEAM_LEAST and BEAM_SECONDS, so that the report's retries cost a small part of what the run did."""
  return min(BEAM_SECONDS, max(BEAM_LEAST, BEAM_SHARE * run_seconds))


def one_size_up(k: Kernel) -> tuple[tg.Opt, ...] | None:
  """The kernel's opts with one amount doubled (UPCAST 4 -> 8, LOCAL 8 -> 16, ...): the last opt whose doubled amount
  tinygrad accepts; None where there is none."""
  opts = tuple(k.opts)
  for i in reversed(range(len(opts))):
    o = opts[i]
    if o.op not in SIZED or not isinstance(o.arg, int) or o.arg < 2: continue
    bigger = (*opts[:i], tg.Opt(o.op, o.axis, o.arg * 2), *opts[i + 1:])
    if tg.refusal(k.base_ast, k.device, bigger) is None: return bigger
  return None


def beam_pick(k: Kernel, seconds: float) -> tuple[tuple[tg.Opt, ...] | None, str]:
  """The opts BEAM picks for the kernel in a short search (see tgviz.bridge.beam_pick), or None and why not: where BEAM
  chose its opts already, on a NULL device, or where the search failed."""
  if k.opts_by.startswith("BEAM"): return None, "BEAM chose the opts applied"
  if tg.is_null_device(k.device): return None, "a NULL device runs nothing to time"
  if seconds <= 0: return None, "no time given to search"
  try: return tg.beam_pick(k.base_ast, k.device, BEAM_WIDTH, seconds), ""
  except Exception as e: return None, f"the search failed here ({type(e).__name__})"  # (the other retries still answer)
