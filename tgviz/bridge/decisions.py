"""The records of what tinygrad's scheduler decided about the buffers it made, as a trace holds them.

Owns Realized (why one buffer was made: the rule that asked for it, what remove_bufferize found, the lines of tinygrad
that decided) and ScheduleRecord (a group's decisions: per kernel graph its internal buffers, the buffers
transform_to_call made, the user's line that asked for the schedule, the profile's number of each buffer launched).
bridge.schedule records them; records.GroupRecord holds one per group. Plain values only: never a UOp or Buffer.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from tgviz.bridge.records import Origin


@dataclass(frozen=True)
class Realized:
  """Why tinygrad's scheduler made one buffer. ``why``: "output", "contiguous" or "copy" (transform_to_call made it for a
  realized Tensor, a .contiguous() or data copied from the host), else the rule that put the value in run_rangeify's
  realize map: "consumers" (its consumers' ranges differ), "ending" (ranges end at it), "device", "hazard" (an assign
  reads its own target), "custom", "split" (split_reduceop), "copy", "contiguous", "limit" (pm_limit_bufs). ``kept``:
  why remove_bufferize kept it: "always" (never removable), "cost" (inlining would read ``reads`` buffers), "reduce" (it
  reduces over a buffer: ``reduces``). ``rule``/``kept_at``: the lines of tinygrad that decided."""
  why: str
  kept: str = ""
  shape: tuple[int | str, ...] = ()
  dtype: str = ""
  axes: tuple[int, ...] = ()                # the axes realized
  consumers: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (op, its Tensor operations) of each consumer rangeify saw
  reduces: tuple[str, ...] = ()
  reads: int = 0
  origins: tuple[Origin, ...] = ()          # the Tensor operations that computed the value, and the user's lines
  rule: tuple[str, int] | None = None
  kept_at: tuple[str, int] | None = None
  tag: tuple | None = None                  # "contiguous": the tag transform_to_call numbered its CONTIGUOUS with (bridge.rerun)


@dataclass
class ScheduleRecord:
  """A group's scheduler decisions: per kernel graph it made, in order (get_kernel_graph: a schedule cache miss), its
  internal buffers by slot; the buffers transform_to_call made, by their number (their ParamArg slot); and the user's
  line that asked for the schedule (``op``: the tinygrad function it called: realize, numpy, step, ...); ``buffers``: the
  number the run's profile events give each buffer launched after it (tinygrad's Buffer), by the buffer's number."""
  stages: list[dict[int, Realized]] = field(default_factory=list)
  made: dict[int, Realized] = field(default_factory=dict)
  asked: Origin | None = None
  buffers: dict[int, int] = field(default_factory=dict)
