"""The messages between Python and the trace browser's frontend (``js/widget.js``), and the functions that build them.

The live widget and the HTML report send exactly these. Keys are issued here and are opaque to the frontend: a step is
named by its ``StepKey``; a picture by (step key, match, view), where match ``None`` (JSON ``null``) is the whole step.

Synced state (widget traits; the report's stand-in model holds the same): ``tree`` (list of TreeGroup), ``selected``
(a StepKey, "" for none), ``match`` (int or None), ``view`` (a View), ``code_css``, ``summary``, ``kernels`` (list of
KernelRow), ``error``, and ``kept_picture``: the PictureMsg of the selected step (whole), kept small, that a saved
notebook shows when no kernel answers (see widget.kept_picture; a whole step's picture crosses once, as that).
"""
from __future__ import annotations

import difflib
import fnmatch
import linecache
import re
from pathlib import Path
from typing import Any

from tgviz import bridge as tg
from tgviz.draw.scene import DEFAULT_MAX_NODES
from tgviz.trace.steps import CellLabel, Lineage, Rule, Step, place, step_before, where
from tgviz.trace.trace import Group, Trace
from tgviz.views.highlight import highlight_code
from tgviz.views.messages import (
  BusyMsg,
  CallPart,
  ErrorMsg,
  ExportedMsg,
  HistoryEvent,
  KernelInfo,
  KernelRow,
  LineageLink,
  MatchInfo,
  NodeMsg,
  NodeSource,
  OriginInfo,
  PictureMsg,
  ProducedKernel,
  RuleInfo,
  RulesMsg,
  ScheduleCallsInfo,
  StepInfo,
  StepKey,
  TreeGroup,
  TreeStep,
  View,
)
from tgviz.views.picture import picture, view_options

UOP_DIFF_LINES = 80
DRAWN = re.compile(r'data-node="([^"]+)"')  # a node's key in an SVG of tgviz.draw


# *** state ***


# *** kernel -> frontend ***


# *** frontend -> kernel ***


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
  """The groups listed: all, except kernels that kernel does not name (a glob of their names, or their key: see
  Kernel.named)."""
  return [g for g in trace.groups
          if not kernel or g.kind != "kernel" or (g.kernel.named(kernel) if g.kernel else fnmatch.fnmatch(g.name, kernel))]


def tree_step(s: Step) -> TreeStep:
  """A step's row in the tree (an unnamed graph_rewrite's call site beside its name, for the tooltip)."""
  name, where = s.row
  row = TreeStep(key=step_key(s), name=name, depth=s.depth, matches=s.match_count, snapshot=s.is_snapshot)
  if where is not None: row["where"] = where
  return row


def tree(trace: Trace, kernel: str | None = None) -> list[TreeGroup]:
  """The trace tree: groups with their steps (name, depth, matches), in compile order. kernel: a glob pattern that
  limits the kernels listed (other groups stay)."""
  out = []
  for g in shown_groups(trace, kernel):
    group = TreeGroup(index=g.index, name=g.display_name, kind=g.kind, matches=g.match_count, kernel=g.kernel.name if g.kernel else None,
                      steps=[tree_step(s) for s in g.steps])
    if g.kernel is not None: group["key"] = g.kernel.short_key
    if (calls := tree_calls(trace, g)): group["calls"] = calls
    out.append(group)
  return out


TREE_CALLS = {"compiled": ("compiled here", "compiled here"), "earlier": ("reused", "reused"), "again": ("called again", "called again"),
              "cached": ("from tinygrad's cache", "from tinygrad's cache"), "copy": ("copy", "copies"), "other": ("other", "others")}


def tree_calls(trace: Trace, group: Group) -> list[str]:
  """A schedule's calls in a few words for its row in the tree (its panel says them in full, schedule_calls): tinygrad
  names it by the calls it made ("Schedule 5 Kernels"), and 3 of them may be kernels compiled after it, 2 copies, or
  all of them reused kernels an earlier schedule compiled. [] for other groups, and for the Callify group before a
  Schedule group (the same calls: said once, on the Schedule's row just below)."""
  info = schedule_calls(trace, group) if group.kind == "schedule" and trace.program().runs_schedule(group.index) else None
  return [f"{p['count']} {TREE_CALLS[p['kind']][p['count'] != 1]}" for p in info["parts"]] if info is not None else []


def kernel_rows(trace: Trace, kernel: str | None = None, peaks: bool = False) -> list[KernelRow]:
  """The kernel table of the kernels listed (see shown_groups): Trace.kernel_table's rows (peaks: measure the devices'
  peaks for the verdicts where they never were; causes: why each kernel ends where it does), each with its first step."""
  rows = dict(zip(map(id, trace.kernels), trace.kernel_table(peaks), strict=True))
  return [KernelRow(**rows[id(g.kernel)], label=g.display_name, matches=g.match_count, step=step_key(g.steps[0]))  # type: ignore[typeddict-item]
          for g in shown_groups(trace, kernel) if g.kernel is not None and g.steps]


def first_selection(trace: Trace, kernel: str | None = None) -> StepKey:
  """The most telling picture to open on, not bookkeeping: the View Base AST (else another landmark) of the kernel the
  compiler worked on most. "" when there is no step at all."""
  groups = [g for g in shown_groups(trace, kernel) if g.steps]
  for name in tg.LANDMARKS:
    for g in sorted(groups, key=lambda g: (g.kind != "kernel", -g.match_count)):
      for s in g.steps:
        if s.name == name: return step_key(s)
  return step_key(groups[0].steps[0]) if groups else ""


def origin_info(o: tg.Origin, cell_label: CellLabel | None = None, around: int = 2) -> OriginInfo:
  """An origin as the kernel header shows it: op, where (the notebook's cell label where there is one), the line."""
  where, context = "", []
  if o.file is not None and o.line is not None:
    where = place(o.file, o.line, cell_label)
    for n in range(max(1, o.line - around), o.line + around + 1):
      if text := linecache.getline(o.file, n).rstrip("\n"): context.append(f"{'→' if n == o.line else ' '}{n:4}  {text}")
  return OriginInfo(op=o.op, backward=o.backward, where=where, source=o.source, context=context)


def kernel_info(group: Group, cell_label: CellLabel | None = None) -> KernelInfo | None:
  """The kernel's code panel: name, device, launch dimensions, highlighted source, each line's UOps (by node key), the
  Tensor operations it computes and the user's lines that called them; None for a group with no kernel."""
  k = group.kernel
  if k is None: return None
  lines = k.line_keys
  cg = k.codegen_step
  return KernelInfo(name=k.name, label=k.display_name, device=k.device, renderer=k.renderer, global_size=list(k.global_size),
                    local_size=list(k.local_size) if k.local_size is not None else None,
                    html=highlight_code(k.source, k.renderer) if k.source else "", source=k.source,
                    lines=lines, lines_note=k.lines_note, codegen_step=step_key(cg) if cg is not None else None,
                    origins=[origin_info(o, cell_label) for o in k.origins], node_origins=[list(n) for n in k._node_origins],
                    key=k.short_key)


def kernel_link(g: Group) -> ProducedKernel:
  """A kernel's group as a link: its name as shown, and the step to open it on (its View Base AST)."""
  s = next((s for s in g.steps if s.name == tg.LANDMARKS[0]), g.steps[0])
  return ProducedKernel(name=g.display_name, group=g.index, step=step_key(s))


def produced_kernels(trace: Trace, group: Group) -> list[ProducedKernel]:
  """For a schedule group, the kernels compiled after it, up to the next schedule (tinygrad schedules in two groups,
  Callify then Schedule, so the schedule group right after this one does not end the list); [] for other groups."""
  if group.kind != "schedule": return []
  out: list[ProducedKernel] = []
  for g in trace.groups[group.index + 1:]:
    if g.kind == "schedule":
      if g.index == group.index + 1: continue
      break
    if g.kind == "kernel" and g.steps: out.append(kernel_link(g))
  return out


CALL_WORDS = {"compiled": ("kernel compiled after this schedule", "kernels compiled after this schedule"),
              "earlier": ("call of a kernel compiled after an earlier schedule (its program reused)",
                          "calls of kernels compiled after an earlier schedule (their programs reused)"),
              "again": ("more call of a kernel called before in this schedule", "more calls of kernels called before in this schedule"),
              "cached": ("call of a kernel compiled before the capture (tinygrad's cache)",
                         "calls of kernels compiled before the capture (tinygrad's cache)"),
              "copy": ("copy", "copies"), "other": ("other call (not a kernel: a buffer view or the like)",
                                                    "other calls (not kernels: buffer views and the like)")}


def schedule_calls(trace: Trace, group: Group) -> ScheduleCallsInfo | None:
  """For a schedule group (Callify or Schedule), how its calls and the trace's kernels reconcile (see
  ScheduleCallsInfo); None for other groups, and where its calls could not be read."""
  if group.kind != "schedule" or not (calls := trace.program().calls_of(group.index)): return None
  here = {p["group"] for p in produced_kernels(trace, group)}
  count: dict[str, int] = dict.fromkeys(CALL_WORDS, 0)
  named: dict[str, dict[int, ProducedKernel]] = {"earlier": {}, "again": {}}  # the kernels of those calls, each once
  seen: set[int] = set()
  for c in calls:
    k = c.kernel
    kind = c.kind if c.kind != "kernel" else "cached" if k is None else "again" if k.group.index in seen else \
           "compiled" if k.group.index in here else "earlier"
    count[kind] += 1
    if k is not None: seen.add(k.group.index)
    if kind in ("earlier", "again") and k is not None: named[kind][k.group.index] = kernel_link(k.group)
  parts = [CallPart(kind=kind, count=n, text=CALL_WORDS[kind][n != 1], kernels=list(named.get(kind, {}).values()))  # type: ignore[typeddict-item]
           for kind, n in count.items() if n]
  return ScheduleCallsInfo(calls=len(calls), parts=parts, compiled=len(here), elsewhere=len(trace.kernels) - len(here),
                           kernels={key: kernel_link(k.group) for key, k in trace.call_kernels.items()})


def match_info(step: Step, match: int) -> MatchInfo:
  """The pattern that fired at a match, where it is defined, its time, and the matched and replacing UOps as a text
  diff (the HTML report's page makes the rest from its data, see report.pattern_rows, and leaves the diff out)."""
  m = step.matches[match]
  u0, u1 = m.uops()
  lines = list(difflib.unified_diff(str(u0).splitlines(), str(u1).splitlines(), "matched", "replacement", lineterm="", n=2))
  text = "\n".join(lines[:UOP_DIFF_LINES]) + ("\n…" if len(lines) > UOP_DIFF_LINES else "")
  return MatchInfo(index=match, title=step.title(match), file=m.loc[0], line=m.loc[1], where=where(*m.loc),
                   source=m.source, us=round(m.time * 1e6, 2), error=m.is_error, diff=text)


def call_stack(group: Group) -> list[str]:
  """Where the user's code started the group's work: the first 12 frames of the call stack tinygrad recorded."""
  return [f"{where(f, ln)} {fn}: {src}" for f, ln, fn, src in group.stack][:12]


def step_info(step: Step) -> StepInfo:
  """The step's panel: its title, where graph_rewrite was called, the call stack, a rewrite error if one happened."""
  return StepInfo(title=step.title(), name=step.label, group=step.group.display_name, kind=step.group.kind, depth=step.depth,
                  matches=step.match_count, where=where(*step.loc), file=step.loc[0], line=step.loc[1],
                  error=step.error, stack=call_stack(step.group))


def busy_message(key: StepKey, match: int | None, view: View, since: float | None = None) -> BusyMsg:
  """The kernel is on the picture of this selection: started now, or (asked again) since seconds."""
  return BusyMsg(type="busy", step=key, match=match, view=view, since=since)


def picture_message(trace: Trace, key: StepKey, match: int | None = None, view: View = "auto",
                    max_nodes: int = DEFAULT_MAX_NODES, cell_label: CellLabel | None = None) -> PictureMsg:
  """Everything the browser shows for one selection: the SVG, the step and match details, the kernel's code."""
  s = step_of(trace, key)
  pic = picture(s, side="auto", match=match, max_nodes=max_nodes, **view_options(s, view))
  return PictureMsg(type="picture", step=key, match=match, view=view, svg=pic.svg, partial=pic.partial,
                    message=pic.message, shown=pic.shown, total=pic.total, info=step_info(s),
                    match_info=match_info(s, match) if match is not None else None, kernel=kernel_info(s.group, cell_label),
                    produced=produced_kernels(trace, s.group), schedule=schedule_calls(trace, s.group),
                    node_matches=s.node_matches(set(DRAWN.findall(pic.svg))))


def node_message(trace: Trace, key: StepKey, match: int | None, node: str, cell_label: CellLabel | None = None) -> NodeMsg:
  """The node panel of the node drawn as `node` in the selection's graphs (KeyError if it is not drawn there)."""
  s = step_of(trace, key)
  side, found = next(((i, u) for i, g in enumerate(s.graphs(match)) for u in tg.toposort(g) if tg.node_key(u) == node), (0, None))
  if found is None: raise KeyError(f"no node {node} in {s.title(match)}")
  created, replaced = s.node_matches({node}).get(node, [[], []])
  k = (match if match is not None else 0) if side == 0 else (match + 1 if match is not None else len(s.matches))
  lin = trace.lineage(found, s.group, seen=(s, k))
  return NodeMsg(type="node", step=key, key=node, **tg.node_details(found),  # type: ignore[typeddict-item]
                 sources=[NodeSource(key=tg.node_key(x), label=tg.op_name(x)) for x in tg.sources(found)],
                 created=created, replaced=replaced, history=history(trace, found, s.group), lineage=lineage(lin),
                 origins=[origin_info(o, cell_label) for o in lin.origins], origins_own=lin.own, becomes=becomes(trace, found))


def becomes(trace: Trace, uop: Any) -> ProducedKernel | None:
  """The kernel a CALL node of a schedule graph becomes (None for any other node, or a call of no traced kernel)."""
  if tg.op_name(uop) != "CALL" or not (src := tg.sources(uop)): return None
  k = trace.call_kernels.get(tg.node_key(src[0]))
  return kernel_link(k.group) if k is not None else None


def lineage(lin: Lineage) -> list[LineageLink]:
  """A node's lineage for the node panel: its runs (Lineage.runs), newest first, each a link to where it starts."""
  out: list[LineageLink] = []
  for run in lin.runs():
    new, old = run[0], run[-1]
    if old.other is None: at, at_match = "", None
    elif old.kind == "input": at, at_match = step_key(s) if (s := step_before(old.step)) is not None else "", None
    else: at, at_match = step_key(old.step), old.match
    out.append(LineageLink(kind=new.kind, step=step_key(new.step), match=old.match, last=new.match, count=len(run),  # type: ignore[typeddict-item]
                           title=old.step.title(old.match) if old.match is not None else old.step.path, name=old.step.label,
                           where=where(*old.step.matches[old.match].loc) if old.match is not None else "", op=tg.op_name(new.uop),
                           key=tg.node_key(new.uop), other=tg.op_name(old.other) if at else "",
                           other_key=tg.node_key(old.other) if at else "", other_step=at, other_match=at_match))
  return out


def history(trace: Trace, uop: object, group: Group) -> list[HistoryEvent]:
  """A node's life in its group, for the node panel: a run of consecutive steps it lives through is one event."""
  out: list[HistoryEvent] = []
  run_end = -2                                # the index of the last step of the current "lives" run
  for e in trace.history(uop, group):
    if e.kind == "lives" and out and out[-1]["kind"] == "lives" and e.step.index == run_end + 1:
      out[-1]["steps"] += 1
    else:
      out.append(HistoryEvent(kind=e.kind, step=step_key(e.step), match=e.match,  # type: ignore[typeddict-item]
                              title=e.step.title(e.match) if e.match is not None else e.step.path,
                              other=tg.op_name(e.other) if e.other is not None else "",
                              other_key=tg.node_key(e.other) if e.other is not None else "", steps=1,
                              again=bool(out) and e.kind in ("input", "created", "rebuilt")))
    if e.kind == "lives": run_end = e.step.index
  return out


MAX_RULES = 2000


def rule_info(r: Rule) -> RuleInfo:
  rate = r.match_rate
  return RuleInfo(where=where(*r.loc), file=r.loc[0], line=r.loc[1], source=r.source, count=r.count, us=round(r.time * 1e6, 1),
                  steps=len(r.steps), step=step_key(r.first.step) if r.first is not None else "", match=r.first.index if r.first is not None else -1,
                  matched=r.matched, attempts=r.attempts, rate=round(rate, 4) if rate is not None else None,
                  self_us=round(r.self_time_us, 1) if r.self_time_us is not None else None,
                  failed_us=round(r.failed_us, 1) if r.failed_us is not None else None)


def rules_message(trace: Trace, sort: str = "count") -> RulesMsg:
  """The rules tab: every pattern that fired (the first MAX_RULES), most often first; the patterns tried that never
  matched apart, the most time lost first; the totals of every pattern's attempts."""
  every = trace.rules(sort, unmatched=True)
  rules = [r for r in every if r.count or r.matched]
  never = sorted((r for r in every if not r.count and not r.matched), key=lambda r: -(r.failed_us or 0.0))
  counted = [r for r in every if r.attempts is not None]
  totals = [float(sum(r.attempts or 0 for r in counted)), float(sum(r.matched or 0 for r in counted)),
            round(sum(r.self_time_us or 0.0 for r in counted), 1), round(sum(r.failed_us or 0.0 for r in counted), 1)] if counted else []
  return RulesMsg(type="rules", total=len(rules), rules=[rule_info(r) for r in rules[:MAX_RULES]],
                  never=[rule_info(r) for r in never[:MAX_RULES]], totals=totals)


def error_message(message: str, traceback: str | None = None) -> ErrorMsg:
  msg = ErrorMsg(type="error", message=message)
  if traceback is not None: msg["traceback"] = traceback
  return msg


def exported_message(paths: list[Path]) -> ExportedMsg:
  return ExportedMsg(type="exported", paths=[str(p.resolve()) for p in paths])
