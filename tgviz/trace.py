"""tgviz's model of what tinygrad's compiler did: Trace -> groups -> steps -> matches, and kernels.

A Trace is filled by :func:`capture`. Reading it needs no knowledge of tinygrad's internals; the
graphs it hands out (``Step.before()`` etc.) are tinygrad ``UOp`` objects, the very ones tinygrad
computed.
"""
from __future__ import annotations

import contextlib
import fnmatch
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from tgviz import _tinygrad as tg
from tgviz.layout import DEFAULT_MAX_NODES, DEFAULT_TIMEOUT
from tgviz.picture import export, picture

SNAPSHOT_PREFIX = "View "


@dataclass(eq=False)
class Match:
  """One pattern that fired inside a step: the UOp it replaced and what it replaced it with."""
  step: Step
  index: int
  loc: tuple[str, int]
  time: float

  @property
  def source(self) -> str:
    """The source text of the pattern that fired."""
    return tg.pattern_source(self.loc)

  def uops(self) -> tuple[Any, Any]:
    """(the UOp matched, its replacement)."""
    return self.step._rec.match_uops(self.step._raw, self.index)

  @property
  def is_error(self) -> bool:
    """True when the pattern raised (tinygrad records a REWRITE_ERROR)."""
    return tg.is_error(self.uops()[1])


@dataclass(frozen=True)
class Diff:
  """Nodes of a step's graph added, removed and changed (before -> after pairs) by the rewrite."""
  added: tuple[Any, ...]
  removed: tuple[Any, ...]
  changed: tuple[tuple[Any, Any], ...]


def diff_graphs(before: Any, after: Any) -> Diff:
  """Compare two UOp graphs. UOps are hash-consed, so a node in both is unchanged. A node replaced in place (same
  position under the same parents, reached from the roots) is 'changed'; the rest are added or removed."""
  b_nodes, a_nodes = tg.toposort(before), tg.toposort(after)
  b_set, a_set = set(b_nodes), set(a_nodes)
  changed: dict[Any, Any] = {}
  todo = [(before, after)]
  while todo:
    b, a = todo.pop()
    if b is a or b in a_set or a in b_set or b in changed: continue  # unchanged, or not a new node
    changed[b] = a
    bs, as_ = tg.sources(b), tg.sources(a)
    if len(bs) == len(as_): todo.extend(zip(bs, as_))
  new = set(changed.values())
  return Diff(added=tuple(u for u in a_nodes if u not in b_set and u not in new),
              removed=tuple(u for u in b_nodes if u not in a_set and u not in changed),
              changed=tuple((b, a) for b, a in changed.items()))


@dataclass(eq=False)
class Step:
  """One graph rewrite tinygrad ran (a graph_rewrite call, or a function tinygrad tracks as one)."""
  group: Group
  index: int
  name: str
  depth: int
  loc: tuple[str, int]
  matches: list[Match] = field(default_factory=list)
  _rec: Any = field(default=None, repr=False)
  _raw: Any = field(default=None, repr=False)
  _replay: tuple[list, Iterator] | None = field(default=None, repr=False)
  _pictures: dict = field(default_factory=dict, repr=False)

  @property
  def is_snapshot(self) -> bool:
    """tinygrad's 'View ...' landmarks (View Base AST, View Program, ...): a graph shown, not rewritten."""
    return self.name.startswith(SNAPSHOT_PREFIX)

  @property
  def path(self) -> str:
    return f"{self.group.name} / {self.name}"

  def before(self) -> Any:
    """The UOp graph this step started from."""
    return self._rec.before(self._raw)

  def after(self) -> Any:
    """The UOp graph after the step: what tinygrad's rewrite returned (or, where it raised, the graph after the last
    recorded match)."""
    if self._raw.out is not None: return self._raw.out
    return self.at(len(self.matches))

  def at(self, k: int) -> Any:
    """The UOp graph after the first k matches of this step, replayed as tinygrad's VIZ does (computed as far as
    needed, then cached)."""
    if not 0 <= k <= len(self.matches): raise IndexError(f"step {self.name!r} has {len(self.matches)} matches; k={k}")
    if k == 0: return self.before()
    if self._replay is None: self._replay = ([], self._rec.replay(self._raw))
    done, rest = self._replay
    for graph in rest:
      done.append(graph)
      if len(done) >= k: break
    return done[min(k, len(done)) - 1]  # a replay that failed stops early at its REWRITE_ERROR

  def diff(self) -> Diff:
    """What the step added, removed and changed."""
    return diff_graphs(self.before(), self.after())

  def svg(self, side: str = "both", match: int | None = None, max_nodes: int = DEFAULT_MAX_NODES, view: str = "auto",
          timeout: float | None = DEFAULT_TIMEOUT) -> str:
    """This step's graph as a standalone SVG: side "before", "after" or "both" (side by side, one layout, with what was
    added, removed and changed marked). match=k shows the graph before and after the k-th (0-based) match instead.
    view "auto" focuses on what changed above max_nodes nodes, "focus" always does, "full" never does; a layout
    running past timeout seconds falls back to a smaller focused view, and the picture says it is partial."""
    return picture(self, side, match, max_nodes, view, timeout).svg

  @property
  def error(self) -> str | None:
    """The message of a pattern that raised in this step, if one did."""
    for m in self.matches:
      if m.is_error: return tg.error_text(m.uops()[1])
    return None

  def __repr__(self) -> str:
    return f"<Step {self.path!r} depth={self.depth} matches={len(self.matches)}>"


@dataclass(eq=False)
class Kernel:
  """One compiled kernel: its generated device code and launch dimensions."""
  name: str
  source: str
  device: str
  renderer: str
  global_size: tuple
  local_size: tuple | None
  group: Group

  def __repr__(self) -> str:
    return f"<Kernel {self.name} on {self.device} ({self.renderer}) global={self.global_size} local={self.local_size}>"


@dataclass(eq=False)
class Group:
  """What tinygrad tracked under one name: a schedule, one kernel's codegen, or other work."""
  index: int
  name: str
  kind: str
  steps: list[Step] = field(default_factory=list)
  stack: tuple = ()
  kernel: Kernel | None = None

  @property
  def match_count(self) -> int:
    return sum(len(s.matches) for s in self.steps)

  def __repr__(self) -> str:
    return f"<Group {self.name!r} {self.kind} steps={len(self.steps)} matches={self.match_count}>"


class Trace:
  """Everything tinygrad's compiler did inside one :func:`capture` block."""

  def __init__(self, device: str):
    self.device = device
    self.groups: list[Group] = []
    self.kernels: list[Kernel] = []
    self.error: BaseException | None = None
    self.traceback: str | None = None

  def _fill(self, rec: tg.Recording) -> None:
    for gi, graw in enumerate(rec.groups):
      group = Group(gi, graw.name, graw.kind, stack=graw.stack)
      for si, sraw in enumerate(graw.steps):
        step = Step(group, si, sraw.name, sraw.depth, sraw.loc, _rec=rec, _raw=sraw)
        step.matches = [Match(step, k, loc, t) for k, (_, _, loc, t) in enumerate(sraw.matches)]
        group.steps.append(step)
      self.groups.append(group)
      if graw.kind == "kernel": self._add_kernel(group, graw)

  def _add_kernel(self, group: Group, graw: tg.GroupRecord) -> None:
    found = None
    for step in group.steps:
      if step.name != "linearize/render": continue
      for m in step.matches:
        if (prg := tg.program_source(m.uops()[1])) is not None: found = prg
    source, info = found if found is not None else ("", None)
    group.kernel = Kernel(name=info.function_name if info is not None else group.name, source=source, device=graw.device,
                          renderer=graw.renderer, global_size=tuple(info.global_size) if info is not None else (),
                          local_size=tuple(info.local_size) if info is not None and info.local_size is not None else None,
                          group=group)
    self.kernels.append(group.kernel)

  @property
  def steps(self) -> Iterator[Step]:
    """Every step of every group, in compile order."""
    for g in self.groups: yield from g.steps

  def find(self, name: str, kernel: str | None = None) -> Step:
    """The first step called name (in the kernel of that name, if given)."""
    for g in self.groups:
      if kernel is not None and (g.kernel is None or g.kernel.name != kernel): continue
      for s in g.steps:
        if s.name == name: return s
    raise KeyError(f"no step {name!r}" + (f" in kernel {kernel!r}" if kernel else ""))

  def select(self, kernel: str | None = None, step: str | None = None) -> list[Step]:
    """Steps of the kernels whose name matches the glob pattern kernel (None: every group, schedules too) and whose
    name contains step (case-insensitive; None: all)."""
    return [s for g in self.groups for s in g.steps
            if (kernel is None or (g.kernel is not None and fnmatch.fnmatch(g.kernel.name, kernel)))
            and (step is None or step.lower() in s.name.lower())]

  def export_svg(self, directory: str | Path, kernel: str | None = None, step: str | None = None, side: str = "both",
                 max_nodes: int = DEFAULT_MAX_NODES, view: str = "auto") -> list[Path]:
    """Write one standalone SVG per selected step (see :meth:`select`) into directory; returns the paths. File names
    say which group and step they show and are safe on every OS."""
    return export(self.select(kernel, step), directory, side, max_nodes, view)

  def to_html(self, path: str | Path, title: str = "tgviz trace", **kwargs: Any) -> Path:
    """Write a self-contained HTML file (no server, kernel or network) to browse this trace: the tree, every step's
    graphs, per-match pictures of small steps, and the kernels' code. See :func:`tgviz.export.to_html`."""
    from tgviz.export import to_html
    return to_html(self, path, title, **kwargs)

  def summary(self) -> str:
    """A plain-text summary: kernels, groups, steps, matches."""
    n_steps = sum(len(g.steps) for g in self.groups)
    n_matches = sum(g.match_count for g in self.groups)
    lines = [f"tgviz trace on {self.device}: {len(self.kernels)} kernel{'s' if len(self.kernels) != 1 else ''}, "
             f"{len(self.groups)} groups, {n_steps} steps, {n_matches} matches"]
    lines += [f"  kernel {k.name}  global={k.global_size} local={k.local_size}" for k in self.kernels]
    if self.error is not None: lines.append(f"  stopped by {type(self.error).__name__}: {self.error}")
    return "\n".join(lines)

  __str__ = summary

  def __repr__(self) -> str:
    return f"<Trace {len(self.kernels)} kernels [{', '.join(k.name for k in self.kernels)}], {len(self.groups)} groups, " \
           f"{sum(len(g.steps) for g in self.groups)} steps{', error' if self.error is not None else ''}>"


@contextlib.contextmanager
def capture(device: str | None = None) -> Iterator[Trace]:
  """Run a block with tinygrad's compiler traced; the Trace is filled when the block ends.

  >>> with capture() as trace:
  ...   (Tensor.ones(4) + 1).realize()
  >>> trace.kernels[0].source

  device: any tinygrad device (``"CL"``, ``"CPU"``, ``"NULL:CUDA:sm_90"`` to see another target's code without its
  hardware). Default: ``DEV`` if set, else OpenCL on PoCL. An exception in the block is kept in ``trace.error``
  (with the trace up to the failure) and propagates.
  """
  trace = Trace(device or tg.default_device())
  tracker = tg.Tracker(device)
  try:
    with tracker:
      yield trace
  except BaseException as e:
    if isinstance(e, FileNotFoundError) and "clang" in str(e) and (msg := tg.clang_missing()): e.add_note(msg)
    trace.error, trace.traceback = e, "".join(traceback.format_exception(e))
    raise
  finally:
    if tracker.recording is not None: trace._fill(tracker.recording)
