"""The messages between Python and the trace browser's frontend (``js/widget.js``), and the functions that build them.

The live widget and the HTML report send exactly these. Keys are issued here and are opaque to the frontend: a step is
named by its ``StepKey``; a picture by (step key, match, view), where match ``None`` (JSON ``null``) is the whole step.

Synced state (widget traits; the report's stand-in model holds the same): ``tree`` (list of TreeGroup), ``selected``
(a StepKey, "" for none), ``match`` (int or None), ``view`` (a View), ``code_css``, ``summary``, ``error``, and
``snapshot``: the PictureMsg of the selected step (whole), kept small, that a saved notebook shows when no kernel answers.
"""
from __future__ import annotations

import difflib
import fnmatch
from pathlib import Path
from typing import Literal, TypedDict

from tgviz import _tinygrad as tg
from tgviz import layout as L
from tgviz.highlight import highlight_code
from tgviz.model import Group, Step, Trace
from tgviz.picture import picture

StepKey = str
View = Literal["auto", "full"]
UOP_DIFF_LINES = 80
SNAPSHOT_CHARS = 300_000  # a saved notebook keeps at most this much picture (SVG and code) per widget


# *** state ***

class TreeStep(TypedDict):
  key: StepKey
  name: str
  depth: int
  matches: int
  snapshot: bool


class TreeGroup(TypedDict):
  index: int
  name: str
  kind: str
  matches: int
  kernel: str | None
  steps: list[TreeStep]


# *** kernel -> frontend ***

class BusyMsg(TypedDict):
  """A picture is being computed for this selection."""
  type: Literal["busy"]
  step: StepKey
  match: int | None
  view: View


class StepInfo(TypedDict):
  title: str
  name: str
  group: str
  kind: str
  depth: int
  matches: int
  where: str
  file: str
  line: int
  error: str | None
  stack: list[str]


class MatchInfo(TypedDict):
  index: int
  title: str
  file: str
  line: int
  where: str
  source: str
  us: float
  error: bool
  diff: str


class KernelInfo(TypedDict):
  name: str
  device: str
  renderer: str
  global_size: list[int]
  local_size: list[int] | None
  html: str
  source: str


class ProducedKernel(TypedDict):
  """A kernel compiled after a schedule: its name, its group and the step to open it on."""
  name: str
  group: int
  step: StepKey


class PictureMsg(TypedDict):
  """The picture of one selection, with what the panels around it show."""
  type: Literal["picture"]
  step: StepKey
  match: int | None
  view: View
  svg: str
  partial: bool
  message: str | None
  shown: int
  total: int
  info: StepInfo
  match_info: MatchInfo | None
  kernel: KernelInfo | None
  produced: list[ProducedKernel]


class ErrorMsg(TypedDict, total=False):
  type: Literal["error"]
  message: str
  traceback: str


class ExportedMsg(TypedDict):
  type: Literal["exported"]
  paths: list[str]


class NodeSource(TypedDict):
  key: str
  label: str


class NodeMsg(TypedDict):
  """The node panel: one node of the selection's graphs (key as in the SVG's data-node)."""
  type: Literal["node"]
  step: StepKey
  key: str
  op: str
  dtype: str
  arg: str
  tag: str
  python: str
  sources: list[NodeSource]
  created: list[int]   # the matches of the step whose replacement is (or holds) this node
  replaced: list[int]  # the matches of the step that replaced this node


# *** frontend -> kernel ***

class ReadyMsg(TypedDict):
  """The frontend is drawn and wants the current picture."""
  type: Literal["ready"]


class ExportMsg(TypedDict):
  """Write the current view as SVG."""
  type: Literal["export"]


class NodeRequest(TypedDict):
  """The node panel of a node of the current selection's graphs."""
  type: Literal["node"]
  key: str


# *** building them ***

def step_key(step: Step) -> StepKey:
  return f"{step.group.index}:{step.index}"


def step_of(trace: Trace, key: StepKey) -> Step:
  """The step a key names (KeyError for a key this trace did not issue)."""
  try:
    g, s = (int(x) for x in key.split(":"))
    return trace.groups[g].steps[s]
  except (ValueError, IndexError): raise KeyError(f"no step {key!r} in this trace") from None


def shown_groups(trace: Trace, kernel: str | None = None) -> list[Group]:
  """The groups listed: all, except kernels whose name does not match the glob pattern kernel."""
  return [g for g in trace.groups
          if not kernel or g.kind != "kernel" or fnmatch.fnmatch(g.kernel.name if g.kernel else g.name, kernel)]


def tree(trace: Trace, kernel: str | None = None) -> list[TreeGroup]:
  """The trace tree: groups with their steps (name, depth, matches), in compile order. kernel: a glob pattern that
  limits the kernels listed (other groups stay)."""
  return [TreeGroup(index=g.index, name=g.name, kind=g.kind, matches=g.match_count, kernel=g.kernel.name if g.kernel else None,
                    steps=[TreeStep(key=step_key(s), name=s.name, depth=s.depth, matches=len(s.matches),
                                    snapshot=s.is_snapshot) for s in g.steps])
          for g in shown_groups(trace, kernel)]


def first_selection(trace: Trace, kernel: str | None = None) -> StepKey:
  """The most telling picture to open on, not bookkeeping: the View Base AST (else another landmark) of the kernel the
  compiler worked on most. "" when there is no step at all."""
  groups = [g for g in shown_groups(trace, kernel) if g.steps]
  for name in tg.LANDMARKS:
    for g in sorted(groups, key=lambda g: (g.kind != "kernel", -g.match_count)):
      for s in g.steps:
        if s.name == name: return step_key(s)
  return step_key(groups[0].steps[0]) if groups else ""


def sides(step: Step) -> str:
  """What a picture of the step shows: before and after, or the one graph of a snapshot or of a step that matched nothing."""
  return "both" if step.matches else "before"


def kernel_info(group: Group) -> KernelInfo | None:
  """The kernel's code panel: name, device, launch dimensions, highlighted source; None for a group with no kernel."""
  k = group.kernel
  if k is None: return None
  return KernelInfo(name=k.name, device=k.device, renderer=k.renderer, global_size=list(k.global_size),
                    local_size=list(k.local_size) if k.local_size is not None else None,
                    html=highlight_code(k.source, k.renderer) if k.source else "", source=k.source)


def produced_kernels(trace: Trace, group: Group) -> list[ProducedKernel]:
  """For a schedule group, the kernels compiled after it, up to the next schedule (tinygrad schedules in two groups,
  Callify then Schedule, so the schedule group right after this one does not end the list); [] for other groups."""
  if group.kind != "schedule": return []
  out: list[ProducedKernel] = []
  for g in trace.groups[group.index + 1:]:
    if g.kind == "schedule":
      if g.index == group.index + 1: continue
      break
    if g.kind == "kernel" and g.steps:
      s = next((s for s in g.steps if s.name == tg.LANDMARKS[0]), g.steps[0])
      out.append(ProducedKernel(name=g.kernel.name if g.kernel else g.name, group=g.index, step=step_key(s)))
  return out


def match_info(step: Step, match: int, diff: bool = True) -> MatchInfo:
  """The pattern that fired at a match, where it is defined, its time, and (if diff) the matched and replacing UOps as
  a text diff (costly on big graphs: the HTML report leaves it out)."""
  m = step.matches[match]
  text = ""
  if diff:
    u0, u1 = m.uops()
    lines = list(difflib.unified_diff(str(u0).splitlines(), str(u1).splitlines(), "matched", "replacement", lineterm="", n=2))
    text = "\n".join(lines[:UOP_DIFF_LINES]) + ("\n…" if len(lines) > UOP_DIFF_LINES else "")
  return MatchInfo(index=match, title=step.title(match), file=m.loc[0], line=m.loc[1], where=f"{Path(m.loc[0]).name}:{m.loc[1]}",
                   source=m.source, us=round(m.time * 1e6, 2), error=m.is_error, diff=text)


def call_stack(group: Group) -> list[str]:
  """Where the user's code started the group's work: the first 12 frames of the call stack tinygrad recorded."""
  return [f"{Path(f).name}:{ln} {fn}: {src}" for f, ln, fn, src in group.stack][:12]


def step_info(step: Step) -> StepInfo:
  """The step's panel: its title, where graph_rewrite was called, the call stack, a rewrite error if one happened."""
  return StepInfo(title=step.title(), name=step.name, group=step.group.name, kind=step.group.kind, depth=step.depth,
                  matches=len(step.matches), where=f"{Path(step.loc[0]).name}:{step.loc[1]}", file=step.loc[0], line=step.loc[1],
                  error=step.error, stack=call_stack(step.group))


def busy_message(key: StepKey, match: int | None, view: View) -> BusyMsg:
  return BusyMsg(type="busy", step=key, match=match, view=view)


def picture_message(trace: Trace, key: StepKey, match: int | None = None, view: View = "auto",
                    max_nodes: int = L.DEFAULT_MAX_NODES) -> PictureMsg:
  """Everything the browser shows for one selection: the SVG, the step and match details, the kernel's code."""
  s = step_of(trace, key)
  pic = picture(s, side=sides(s), match=match, max_nodes=max_nodes, view=view)
  return PictureMsg(type="picture", step=key, match=match, view=view, svg=pic.svg, partial=pic.partial,
                    message=pic.message, shown=pic.shown, total=pic.total, info=step_info(s),
                    match_info=match_info(s, match) if match is not None else None, kernel=kernel_info(s.group),
                    produced=produced_kernels(trace, s.group))


def snapshot(msg: PictureMsg, limit: int = SNAPSHOT_CHARS) -> PictureMsg:
  """The picture a saved notebook keeps: the message as it is, or, past limit characters of SVG and code, without them
  and saying so."""
  code = msg["kernel"]["html"] if msg["kernel"] else ""
  size = len(msg["svg"]) + len(code)
  if size <= limit: return msg
  kernel = KernelInfo(**{**msg["kernel"], "html": "", "source": ""}) if msg["kernel"] else None
  return PictureMsg(**{**msg, "svg": "", "kernel": kernel,
                       "message": f"this picture ({size // 1000} kB) is too big to keep in the notebook"})


def node_message(trace: Trace, key: StepKey, match: int | None, node: str) -> NodeMsg:
  """The node panel of the node drawn as `node` in the selection's graphs (KeyError if it is not drawn there)."""
  s = step_of(trace, key)
  found = next((u for g in s.graphs(match) for u in tg.toposort(g) if tg.node_key(u) == node), None)
  if found is None: raise KeyError(f"no node {node} in {s.title(match)}")
  created, replaced = [], []
  for m in s.matches:
    u0, u1 = m.uops()
    if u0 is found: replaced.append(m.index)
    if u1 is found: created.append(m.index)
  return NodeMsg(type="node", step=key, key=node, **tg.node_details(found),  # type: ignore[typeddict-item]
                 sources=[NodeSource(key=tg.node_key(x), label=tg.op_name(x)) for x in tg.sources(found)],
                 created=created, replaced=replaced)


def error_message(message: str, traceback: str | None = None) -> ErrorMsg:
  msg = ErrorMsg(type="error", message=message)
  if traceback is not None: msg["traceback"] = traceback
  return msg


def exported_message(paths: list[Path]) -> ExportedMsg:
  return ExportedMsg(type="exported", paths=[str(p.resolve()) for p in paths])
