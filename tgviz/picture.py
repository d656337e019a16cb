"""Pictures of steps: the before/after SVG of a step or of one match, focused, time-bounded and cached."""
from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from tgviz import _tinygrad as tg
from tgviz import layout as L

if TYPE_CHECKING:
  from tgviz.trace import Step

SIDES = {"before": ("before",), "after": ("after",), "both": ("before", "after")}
VIEWS = ("auto", "focus", "full")
MIN_FOCUS = 40


@dataclass(frozen=True)
class Picture:
  """One rendered view. partial: fewer nodes are drawn than the graphs have (message says why and what to do)."""
  svg: str
  shown: int
  total: int
  message: str | None
  seconds: float

  @property
  def partial(self) -> bool:
    return self.shown < self.total


def graphs_of(step: Step, match: int | None) -> tuple[object, object]:
  """The UOp graphs a view compares: the whole step, or the graph before and after match number `match` (0-based)."""
  if match is None: return step.before(), step.after()
  if not 0 <= match < len(step.matches): raise IndexError(f"step {step.name!r} has {len(step.matches)} matches; match={match}")
  return step.at(match), step.at(match + 1)


def scene_of(step: Step, match: int | None) -> L.Scene:
  from tgviz.trace import diff_graphs
  before, after = graphs_of(step, match)
  d = diff_graphs(before, after)
  key = tg.node_key
  return L.make_scene(tg.to_graph(before), tg.to_graph(after), added={key(u) for u in d.added},
                      removed={key(u) for u in d.removed}, changed={key(b): key(a) for b, a in d.changed})


def _title(step: Step, match: int | None) -> str:
  title = f"{step.group.name} / {step.name}"
  if match is not None:
    m = step.matches[match]
    title += f"  match {match + 1}/{len(step.matches)}: {m.source}  ({Path(m.loc[0]).name}:{m.loc[1]})"
  return title


def picture(step: Step, side: str = "both", match: int | None = None, max_nodes: int = L.DEFAULT_MAX_NODES,
            view: str = "auto", timeout: float | None = L.DEFAULT_TIMEOUT) -> Picture:
  """Render a step (or one of its matches); see :meth:`tgviz.Step.svg`. Cached per step."""
  if side not in SIDES: raise ValueError(f"side must be one of {', '.join(SIDES)}, not {side!r}")
  if view not in VIEWS: raise ValueError(f"view must be one of {', '.join(VIEWS)}, not {view!r}")
  key = (side, match, max_nodes, view)
  if (hit := step._pictures.get(key)) is not None: return hit
  st = time.perf_counter()
  full = L.cap_fan_in(scene_of(step, match))
  total = len(full.nodes)
  scene = full if view == "full" else L.focus(full, max_nodes, force=view == "focus")
  message = None
  while True:
    try:
      lay = L.layout(scene, timeout)
      break
    except TimeoutError:
      if len(scene.nodes) <= MIN_FOCUS: raise
      message = f"layout of {len(scene.nodes)} nodes took over {timeout:.0f} s"
      scene = L.focus(full, max(MIN_FOCUS, len(scene.nodes) // 2), force=True)
  if scene.partial:
    why = message or ("focused view" if view == "focus" else f"{total} nodes is over the budget of {max_nodes}")
    message = (f"Partial view: {len(scene.nodes)} of {total} nodes, around what changed ({why}). "
               "Full graph: the widget's 'full graph' button, or step.svg(view='full', timeout=None).")
  svg = L.scene_svg(scene, lay, SIDES[side], _title(step, match), message)
  pic = Picture(svg, len(scene.nodes), total, message, time.perf_counter() - st)
  step._pictures[key] = pic
  return pic


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(s: str, limit: int = 60) -> str:
  """A file-name part that is safe on every OS."""
  return _UNSAFE.sub("_", s).strip("._")[:limit] or "x"


def export(steps: Iterable[Step], directory: str | Path, side: str = "both", max_nodes: int = L.DEFAULT_MAX_NODES,
           view: str = "auto", match: int | None = None) -> list[Path]:
  """Write one standalone SVG per step (or of one match of each) into directory; returns the paths."""
  out = Path(directory)
  out.mkdir(parents=True, exist_ok=True)
  paths = []
  for step in steps:
    suffix = "" if match is None else f"-match{match + 1:04d}"
    path = out / f"{step.group.index:03d}-{safe_name(step.group.name)}--{step.index:03d}-{safe_name(step.name)}{suffix}.svg"
    path.write_text(picture(step, side=side, match=match, max_nodes=max_nodes, view=view).svg, encoding="utf-8")
    paths.append(path)
  return paths
