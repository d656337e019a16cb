"""BEAM's search as it ran: every candidate it compiled and timed for a kernel, and what its result cache answered.

Owns: BeamRecorder, the Patch on tinygrad's ``codegen/opt/search.py`` that records them (as records.Candidate and
records.BeamSearch): around ``beam_search`` (the kernel's group, the result cache's answer, the winner),
``_try_compile`` (each candidate's opts and whether it compiled) and ``_time_program`` (its time, the least of BEAM's
timings, as BEAM ranks it). The search's own compiles and opt trials run untracked (hundreds of candidates are not the
kernel's rewrites); the winner's opts are then applied again, tracked, on a fresh copy of the kernel, as tinygrad
itself does when its cache answers, so the kernel's trace shows each opt's rewrite. It must not decide when it is
entered (capture.Tracker does).
"""
from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import Any

from tinygrad import Device
from tinygrad.codegen import to_program
from tinygrad.helpers import Context
from tinygrad.uop import ops
from tinygrad.uop.ops import KernelInfo, UOp

from tgviz.bridge.opts import applied_opts, opts_of
from tgviz.bridge.recorders import Patch
from tgviz.bridge.records import BeamSearch, Candidate, Opt


def _no_pool() -> None: return None


class BeamRecorder(Patch):
  """Records each BEAM search of a capture (``searches``: the tracked group index of the kernel -> its BeamSearch)."""

  def __init__(self) -> None:
    self.searches: dict[int, BeamSearch] = {}
    self._now: BeamSearch | None = None
    self._round = -1

  def patches(self) -> list[tuple[Any, dict[str, Any]]]:
    from tinygrad.codegen.opt import search
    beam_search, try_compile, time_program, cache_get = search.beam_search, search._try_compile, search._time_program, search.diskcache_get

    def recorded_search(s, rawbufs, var_vals, amt, *args, **kwargs):
      group = ops.active_group[-1] if ops.active_group else len(ops.tracked_ctxs) - 1
      self._now, self._round = (found := BeamSearch(amt)), -1
      try:
        with Context(TRACK_MATCH_STATS=0): best = beam_search(s, rawbufs, var_vals, amt, *args, **kwargs)
      finally: self._now = None
      found.winner = opts_of(best.applied_opts)
      self.searches[group] = found
      ret = s.copy()  # the winner's opts again, tracked, as tinygrad applies a cached result
      for o in best.applied_opts[len(s.applied_opts):]: ret.apply_opt(o)
      return ret

    def recorded_compile(x):
      i, ret = try_compile(x)
      if (now := self._now) is not None:
        if i == 0: self._round += 1  # (candidates compile in order: no worker pool)
        now.candidates.append(Candidate(opts_of(x[1].applied_opts), self._round, ret is not None))
      return i, ret

    def recorded_time(*args, **kwargs):
      tms = time_program(*args, **kwargs)
      if (now := self._now) is not None and now.candidates: now.candidates[-1].time = min(tms) if tms else math.inf
      return tms

    def recorded_cache_get(table, key):
      val = cache_get(table, key)
      if table == "beam_search" and self._now is not None: self._now.cached = val is not None
      return val

    # candidates compile in the capture's process, in order, where _try_compile sees them (a capture keeps the user's
    # PARALLEL for kernels' compiles only: see parallel.ParallelCompiles)
    return [(search, {"beam_search": recorded_search, "_try_compile": recorded_compile, "_time_program": recorded_time,
                      "diskcache_get": recorded_cache_get, "get_worker_pool": _no_pool})]


class _Budget(Patch):
  """BEAM stopped at a deadline: the candidates not compiled by then are skipped and no further round starts, so the
  search ends on the best it timed so far."""

  def __init__(self, seconds: float) -> None:
    self.deadline = time.perf_counter() + seconds

  def patches(self) -> list[tuple[Any, dict[str, Any]]]:
    from tinygrad.codegen.opt import search
    try_compile, actions = search._try_compile, search.get_kernel_actions
    def within(x):
      return try_compile(x) if time.perf_counter() < self.deadline else (x[0], None)
    def next_actions(s, *args, **kwargs):
      return actions(s, *args, **kwargs) if time.perf_counter() < self.deadline else {}
    return [(search, {"_try_compile": within, "get_kernel_actions": next_actions, "get_worker_pool": _no_pool})]


def beam_pick(ast: UOp, device: str, width: int, seconds: float) -> tuple[Opt, ...]:
  """The opts tinygrad's BEAM search picks for a kernel's base AST on device: the kernel compiled as under BEAM=width
  (the search runs where tinygrad runs it, on the AST as its opts see it; on the inputs BEAM makes itself; its result
  cache neither read nor written), searching for about `seconds` at most (see _Budget); () where nothing beat no
  opts. Untracked: call it outside a capture."""
  info = ast.arg if isinstance(ast.arg, KernelInfo) else KernelInfo()
  ast = ast.replace(arg=replace(info, opts_to_apply=None, applied_opts=(), beam=width), tag=None)
  with _Budget(seconds), Context(TRACK_MATCH_STATS=0, CACHELEVEL=0):
    return applied_opts(to_program(ast, Device[device].renderer))
