"""Pictures of steps: the before/after SVG of a step or of one match, focused, time-bounded, in a bounded cache."""
from __future__ import annotations

import functools
import os
import re
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tgviz import bridge as tg
from tgviz.draw import fold as F
from tgviz.draw.dot import layout
from tgviz.draw.engine import DEFAULT_TIMEOUT
from tgviz.draw.scene import DEFAULT_MAX_NODES, Scene, cap_fan_in, focus, make_scene
from tgviz.draw.svg import scene_svg
from tgviz.trace.steps import Step, diff_graphs
from tgviz.work.threads import Worker

SIDES = {"before": ("before",), "after": ("after",), "both": ("before", "after")}
VIEWS = ("auto", "focus", "full")
FOLD = True  # pictures fold by default (see picture)
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


class _Cache:
  """Pictures already drawn, least recently used dropped past a count and a size. Keyed by a weak reference to the
  step, so a cached picture never keeps a trace alive."""

  def __init__(self, max_items: int, max_chars: int):
    self.max_items, self.max_chars, self.chars = max_items, max_chars, 0
    self._items: OrderedDict[tuple, Picture] = OrderedDict()
    self._lock = threading.Lock()  # the widget draws in a worker thread

  def get(self, key: tuple) -> Picture | None:
    with self._lock:
      if (hit := self._items.get(key)) is not None: self._items.move_to_end(key)
      return hit

  def put(self, key: tuple, pic: Picture) -> None:
    with self._lock:
      if (old := self._items.pop(key, None)) is not None: self.chars -= len(old.svg)
      self._items[key] = pic
      self.chars += len(pic.svg)
      while self._items and (len(self._items) > self.max_items or self.chars > self.max_chars):
        self.chars -= len(self._items.popitem(last=False)[1].svg)

  def clear(self) -> None:
    with self._lock: self._items.clear(); self.chars = 0


CACHE = _Cache(max_items=512, max_chars=64 * 2**20)


def scene_of(step: Step, match: int | None) -> Scene:
  """The union of the graphs before and after the step (or one match), with the changes marked."""
  before, after = step.graphs(match)
  notes = step.call_notes
  drawn = tg.to_graph(before, notes)
  if after is before: return make_scene(drawn, drawn, added=set(), removed=set(), changed={})  # a snapshot
  d = diff_graphs(before, after)
  key = tg.node_key
  scene = make_scene(drawn, tg.to_graph(after, notes), added={key(u) for u in d.added},
                       removed={key(u) for u in d.removed}, changed={key(b): key(a) for b, a in d.changed})
  if match is not None:  # the match's own nodes: what it replaced, and its replacement (where it took that one's place)
    u0, u1 = step.matches[match].uops()
    in_place = {key(a): key(b) for b, a in d.changed}
    scene.match_nodes = frozenset(k for k in (key(u0), in_place.get(key(u1), key(u1))) if k in scene.nodes)
  return scene


def sides(step: Step, side: str = "auto") -> str:
  """The side(s) a picture of the step draws: side itself, or for "auto" before and after ("both"), or the one graph of
  a snapshot or of a step that matched nothing ("before"), as the widget shows it."""
  if side == "auto": return "both" if step.matches else "before"
  if side not in SIDES: raise ValueError(f"side must be one of auto, {', '.join(SIDES)}, not {side!r}")
  return side


def picture(step: Step, side: str = "both", match: int | None = None, max_nodes: int = DEFAULT_MAX_NODES,
            view: str = "auto", timeout: float | None = DEFAULT_TIMEOUT, around: tuple[str, ...] = (),
            fold: bool = FOLD) -> Picture:
  """Render a step (or one of its matches); see :meth:`tgviz.Step.svg`. Cached per step. around: node keys a partial
  view is built around (a code line's UOps), instead of what changed. fold: draw index arithmetic as expressions and
  lanes as one node ×N (tgviz.draw.fold; marked nodes always as themselves); False: the raw graph, every node."""
  side = sides(step, side)
  if view not in VIEWS: raise ValueError(f"view must be one of {', '.join(VIEWS)}, not {view!r}")
  key = (weakref.ref(step), side, match, max_nodes, view, around, fold)
  if (hit := CACHE.get(key)) is not None: return hit
  st = time.perf_counter()
  full = scene_of(step, match)
  if fold:
    own, full = full.match_nodes, F.fold(full)
    full.match_nodes = frozenset(F.drawn_as(full, tuple(own)))
    around = tuple(F.drawn_as(full, around))  # a UOp inside a fold: the node that holds it
  full = cap_fan_in(full)
  total = len(full.nodes)
  scene = full if view == "full" else focus(full, max_nodes, force=view == "focus", around=around)
  message = None
  while True:
    try:
      lay = layout(scene, timeout, len(SIDES[side]))
      break
    except TimeoutError:
      if len(scene.nodes) <= MIN_FOCUS: raise
      message = f"layout of {len(scene.nodes)} nodes took over {timeout:.0f} s"
      scene = focus(full, max(MIN_FOCUS, len(scene.nodes) // 2), force=True, around=around)
  if scene.partial:
    why = message or ("focused view" if view == "focus" else f"more than the {max_nodes:,} a picture draws at first")
    what = "the code line's UOps" if any(k in full.nodes for k in around) else "what changed"
    message = (f"Partial view: {len(scene.nodes):,} of {total:,} nodes, around {what} ({why}). "
               "Full graph: the 'full graph' button, or step.svg(view='full', timeout=None).")
  svg = scene_svg(scene, lay, SIDES[side], step.title(match), message)
  pic = Picture(svg, len(scene.nodes), total, message, time.perf_counter() - st)
  CACHE.put(key, pic)
  return pic


def view_options(step: Step, view: str) -> dict[str, Any]:
  """picture()'s view, the node keys a partial view is built around and whether it folds, for a view as the frontends
  name it: "auto", "full", "line:N" (the auto view, built around the UOps of line N, from 1, of the step's kernel's
  code) or "node:KEY" (the auto view built around that node: a uops row's), each folded, or raw with a "raw:" prefix
  ("raw:auto", ...)."""
  fold = not view.startswith("raw:")
  if not fold: view = view[4:]
  if view.startswith("node:"): return {"view": "auto", "around": (view[5:],), "fold": fold}
  if view.startswith("line:") and view[5:].isdigit():
    lines, n = step.group.kernel.line_keys if step.group.kernel is not None else None, int(view[5:])
    return {"view": "auto", "around": tuple(lines[n - 1]) if lines and 0 < n <= len(lines) else (), "fold": fold}
  if view not in ("auto", "full"):
    raise ValueError(f"view must be auto, full or line:N (node:KEY around a node; raw:... for the raw graph), not {view!r}")
  return {"view": view, "fold": fold}


_ROOT = re.compile(r'^<svg ([^>]*?)width="[\d.]+" height="[\d.]+" viewBox="[^"]*"')


def cropped(svg: str, box: tuple[float, ...]) -> str:
  """A picture's SVG showing only box (x, y, width, height in its units: the part of it on screen), its background
  behind that part."""
  x, y, w, h = (round(v, 1) for v in box[:4])
  if w <= 0 or h <= 0: raise ValueError(f"an empty box to crop to: {box}")
  svg = _ROOT.sub(lambda m: f'<svg {m.group(1)}width="{w:g}" height="{h:g}" viewBox="{x:g} {y:g} {w:g} {h:g}"', svg, count=1)
  return svg.replace('<rect width="100%" height="100%"', f'<rect x="{x:g}" y="{y:g}" width="{w:g}" height="{h:g}"', 1)


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(s: str, limit: int = 60) -> str:
  """A file-name part that is safe on every OS."""
  return _UNSAFE.sub("_", s).strip("._")[:limit] or "x"


def svg_path(directory: str | Path, step: Step, match: int | None = None) -> Path:
  """Where export_svg writes the picture of a step (or of its match `match`): a file named by its group's and its own
  index and name, safe on every OS."""
  suffix = "" if match is None else f"-match{match + 1:04d}"
  return Path(directory) / f"{step.group.index:03d}-{safe_name(step.group.name)}--{step.index:03d}-{safe_name(step.name)}{suffix}.svg"


def step_svg(step: Step, side: str = "auto", max_nodes: int = DEFAULT_MAX_NODES, view: str = "auto", match: int | None = None,
             around: tuple[str, ...] = (), fold: bool = FOLD, box: tuple[float, ...] | None = None) -> str:
  """The standalone SVG export_svg writes for a step (arguments as there)."""
  svg = picture(step, side=side, match=match, max_nodes=max_nodes, view=view, around=around, fold=fold).svg
  return cropped(svg, box) if box is not None else svg


def export_svg(steps: Iterable[Step], directory: str | Path, side: str = "auto", max_nodes: int = DEFAULT_MAX_NODES,
               view: str = "auto", match: int | None = None, around: tuple[str, ...] = (), fold: bool = FOLD,
               box: tuple[float, ...] | None = None) -> list[Path]:
  """Write one standalone SVG per step (or of one match of each) into directory; returns the paths (side: see sides;
  "auto" draws a step that matched nothing once, not twice side by side; fold: see picture; box: only that part of the
  picture, x, y, width, height in its units, as cropped). Pictures are drawn in a few threads at once, so that the
  layout engine's processes run on every core while Python builds the next."""
  Path(directory).mkdir(parents=True, exist_ok=True)

  def write(step: Step) -> Path:
    (path := svg_path(directory, step, match)).write_text(step_svg(step, side, max_nodes, view, match, around, fold, box),
                                                          encoding="utf-8")
    return path

  # (no bound on what waits: the steps given)
  with Worker("tgviz-svg", threads=(os.cpu_count() or 1) + 1, bound=None) as pool:
    return [f.result() for f in [pool.submit(functools.partial(write, s)) for s in steps]]
