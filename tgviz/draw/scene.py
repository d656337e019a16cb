"""What one picture shows: the union of a before and an after graph, marked (added, removed, changed), cut to a focused
view around what matters where it is big, and its fan-ins capped.

Owns the scene only: no layout (:mod:`tgviz.draw.dot`), no SVG (:mod:`tgviz.draw.svg`).
"""
from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field

from tgviz.draw.graph import Graph, Node

DEFAULT_MAX_NODES = 300       # above this many nodes the focused view is the default
FOCUS_HOPS = 3
MAX_FAN_IN = 24               # edges drawn into one node; dot's layout time explodes on fan-ins of hundreds


@dataclass
class Scene:
  """The union of a before and an after graph, marked: what one layout draws on both sides."""
  nodes: dict[str, Node]                    # layout id -> node as shown before (after, for added nodes)
  after_label: dict[str, Node]              # layout id -> node as shown after, where it differs (changed nodes)
  edges_before: set[tuple[str, str]]
  edges_after: set[tuple[str, str]]
  on_before: set[str]
  on_after: set[str]
  marks: dict[str, str]                     # layout id -> added / removed / changed
  hidden: dict[str, tuple[int, int]] = field(default_factory=dict)  # layout id -> (hidden inputs, hidden users)
  total: int = 0                            # nodes of the full union, before focusing
  match_nodes: frozenset[str] = frozenset()  # layout ids of a match's own nodes: what it replaced and its replacement

  @property
  def partial(self) -> bool:
    return len(self.nodes) < self.total


def make_scene(before: Graph, after: Graph, added: set[str], removed: set[str], changed: dict[str, str]) -> Scene:
  """changed maps a before key to the after key that replaced it in place: both are drawn in one spot."""
  to_layout = {a: b for b, a in changed.items()}
  nodes = dict(before.nodes)
  nodes.update({to_layout.get(k, k): n for k, n in after.nodes.items() if to_layout.get(k, k) not in nodes})
  marks = dict.fromkeys(removed, "removed") | dict.fromkeys(added, "added") | dict.fromkeys(changed, "changed")
  return Scene(nodes=nodes, after_label={b: after.nodes[a] for b, a in changed.items() if a in after.nodes},
               edges_before=set(before.edges),
               edges_after={(to_layout.get(s, s), to_layout.get(d, d)) for s, d in after.edges},
               on_before=set(before.nodes), on_after={to_layout.get(k, k) for k in after.nodes}, marks=marks,
               total=0)


def focus(scene: Scene, max_nodes: int, hops: int = FOCUS_HOPS, force: bool = False, around: Sequence[str] = ()) -> Scene:
  """Keep at most max_nodes of the neighbourhood (hops up and down) of the nodes `around` (those of them drawn), else of
  what changed, or of the output when nothing did, and count the rest. Scenes within max_nodes are kept whole unless
  force is set."""
  scene.total = scene.total or len(scene.nodes)
  if len(scene.nodes) <= max_nodes and not force: return scene
  edges = scene.edges_before | scene.edges_after
  nbrs: dict[str, set[str]] = {k: set() for k in scene.nodes}
  for s, d in edges: nbrs[s].add(d); nbrs[d].add(s)
  seeds = [k for k in around if k in scene.nodes] or \
    [*(k for k in scene.nodes if k in scene.match_nodes), *(k for k in scene.nodes if k in scene.marks and k not in scene.match_nodes)] or \
    [next(reversed(scene.nodes))]
  keep: dict[str, None] = {}
  todo = deque((s, 0) for s in seeds)
  while todo and len(keep) < max_nodes:
    k, h = todo.popleft()
    if k in keep: continue
    keep[k] = None
    if h < hops: todo.extend((n, h + 1) for n in sorted(nbrs[k]) if n not in keep)
  hidden = {k: [0, 0] for k in keep}
  for s, d in edges:
    if d in keep and s not in keep: hidden[d][0] += 1
    if s in keep and d not in keep: hidden[s][1] += 1
  return Scene(nodes={k: n for k, n in scene.nodes.items() if k in keep},
               after_label={k: n for k, n in scene.after_label.items() if k in keep},
               edges_before={e for e in scene.edges_before if e[0] in keep and e[1] in keep},
               edges_after={e for e in scene.edges_after if e[0] in keep and e[1] in keep},
               on_before=scene.on_before & keep.keys(), on_after=scene.on_after & keep.keys(), marks=scene.marks,
               match_nodes=scene.match_nodes & keep.keys(),
               hidden={k: (i, o) for k, (i, o) in hidden.items() if i or o}, total=scene.total)


def cap_fan_in(scene: Scene, limit: int = MAX_FAN_IN) -> Scene:
  """Draw at most limit edges into any node (on each side); the rest are counted as hidden inputs of that node."""
  def capped(edges: set[tuple[str, str]]) -> tuple[set[tuple[str, str]], dict[str, int]]:
    into: dict[str, list[tuple[str, str]]] = {}
    order = {k: i for i, k in enumerate(scene.nodes)}
    for e in sorted(edges, key=lambda e: (order[e[1]], order[e[0]])): into.setdefault(e[1], []).append(e)
    return {e for es in into.values() for e in es[:limit]}, {d: len(es) - limit for d, es in into.items() if len(es) > limit}
  before, cut_b = capped(scene.edges_before)
  after, cut_a = capped(scene.edges_after)
  if not cut_b and not cut_a: return scene
  hidden = dict(scene.hidden)
  for k in [k for k in scene.nodes if k in cut_b or k in cut_a]:  # in node order: the DOT text is the same every run
    i, o = hidden.get(k, (0, 0))
    hidden[k] = (i + max(cut_b.get(k, 0), cut_a.get(k, 0)), o)
  return Scene(scene.nodes, scene.after_label, before, after, scene.on_before, scene.on_after, scene.marks, hidden,
               scene.total, scene.match_nodes)



def hidden_text(count: int, what: str) -> str:
  """What the box of a node's hidden inputs or users (see Scene.hidden) says."""
  return f"… {count} {what}"
