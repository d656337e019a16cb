"""The program map's message: the block's kernels as boxes and the buffers between them as arrows, laid out left to right
(a small map also top to bottom) by tgviz.draw.flow, with every kernel's and buffer's panel data (the reason each buffer exists, the user's lines) and
the kernels by cause (where the trace opens on it: tgviz.views.failure.opening).

Owns ProgramMapMsg (see tgviz.views.messages) and what a box and an arrow say: a kernel's name, its Tensor ops and
line, its measured time and the limit it ran into (memory, compute or latency: its kernel table row's, by the device's
cached peaks, never measured here); a chain of kernels each feeding only the next is folded into one box past
FOLD_CHAIN kernels; several buffers between the same two kernels are one arrow. The trace model is
:mod:`tgviz.trace.program`'s.
"""
from __future__ import annotations

from tgviz import bridge as tg
from tgviz.draw.engine import DEFAULT_TIMEOUT
from tgviz.draw.flow import Arrow, Box, flow_svg, layout_flow
from tgviz.trace import program as programs
from tgviz.trace.fusion import fuse, lift_for
from tgviz.trace.program import REASONS, Program, ProgramKernel
from tgviz.trace.steps import CellLabel, place, places, where
from tgviz.trace.trace import Trace
from tgviz.trace.units import bytes_text, plural, time_text
from tgviz.trace.verdicts import FAR
from tgviz.views.messages import FusedMsg, FusedSide, MapBuffer, MapKernel, MapView, ProgramMapMsg, StepKey
from tgviz.views.protocol import step_key

FOLD_CHAIN = 4          # a chain of this many kernels or more, each feeding only the next, is drawn as one box
LINES_ABOVE = 40        # past this many kernels the map opens on the lines of the user's code, a box each
FOLD_ABOVE = 24         # chains are folded in programs of more kernels than this (a small one shows every kernel)
WRAP = 850.0            # points: a left-to-right view wider than flow.WRAP_PAST times this (a long chain of kernels) is cut
                        # into bands this wide or less, one under the other (the attention block's 36 boxes opened with 4 on
                        # screen, the rest far to the right): a band fits the report's canvas at 1600x1000 at the readable
                        # scale (some 900 pt); 680 pt, to fit 1366x768's too, cut smaller maps a notebook opened readable
DOWN_UP_TO = 24         # a view of this many boxes or fewer (stubs too) is also laid out top to bottom (MapView.svg_down)
REASON_COLOURS = {"user": "#d62728", "output": "#2ca02c", "input": "#7f7f7f", "copy": "#8c564b", "device": "#9467bd",
                  "ranges": "#e377c2", "cost": "#ff7f0e", "reduce": "#1f77b4", "other": "#17becf"}
_STYLE = "".join([".tgviz-flow .node.copy rect{fill:#e0e0e0}", ".tgviz-flow .node.fold rect{fill:#c6f8ff;stroke-width:2}",
                  ".tgviz-flow .node.end rect{fill:#f4f4f4;stroke-dasharray:3 2}"] +
                 [f".tgviz-flow .arrow.r-{r} .edge{{stroke:{c}}}" for r, c in REASON_COLOURS.items()])


def _steps(trace: Trace) -> dict[int, tuple[StepKey, StepKey | None, int]]:
  """Per kernel group index: its first step's key, its codegen step's key and its row in the kernel table."""
  out, row = {}, 0
  for g in trace.groups:
    if g.kernel is None or not g.steps: continue
    code = g.kernel.codegen_step
    out[g.index] = (step_key(g.steps[0]), step_key(code) if code is not None else None, row)
    row += 1
  return out


def _chains(prog: Program) -> list[list[ProgramKernel]]:
  """Runs of FOLD_CHAIN or more kernels of one schedule, each the only reader of what the one before wrote and reading
  nothing else of the block's, in run order."""
  succ = {k.index: {r.index for b in k.writes for r in b.readers} for k in prog.kernels}
  pred = {k.index: {b.writer.index for b in k.reads if b.writer is not None} for k in prog.kernels}
  chains: list[list[ProgramKernel]] = []
  used: set[int] = set()
  for k in prog.kernels:
    if k.index in used: continue
    chain = [k]
    while len(nxt := succ[chain[-1].index]) == 1 and (j := next(iter(nxt))) not in used and pred[j] == {chain[-1].index} \
          and prog.kernels[j].schedule == k.schedule:
      chain.append(prog.kernels[j])
    if len(chain) >= FOLD_CHAIN:
      chains.append(chain)
      used.update(c.index for c in chain)
  return chains


def _kernel_lines(k: ProgramKernel, cell_label: CellLabel | None) -> tuple[str, ...]:
  ops = list(dict.fromkeys(o.op + (" bw" if o.backward else "") for o in k.origins))
  out = [k.name]
  if ops: out.append(", ".join(ops[:3]) + (" …" if len(ops) > 3 else ""))
  # every line its ops came from (randn fused into a matmul: both lines), not only the one it is known by
  if lines := [(o.file, o.line) for o in k.origins if o.file and o.line]: out.append(places(lines, cell_label))
  return tuple(out)


def _by_line(prog: Program) -> dict[int, str]:
  """Each kernel's box in the "lines" view: the kernels of one schedule whose Tensor ops were called from one line of
  the user's code (tg.main_origin) are one box; those with no line go with the line that asked for their schedule (its
  realize, backward, step, ...); copies are their own."""
  out: dict[int, str] = {}
  seen: dict[tuple, str] = {}
  for k in prog.kernels:
    o = tg.main_origin(k.origins) or (prog.schedules[k.schedule] if k.kind == "kernel" and k.schedule < len(prog.schedules) else None)
    out[k.index] = seen.setdefault((k.schedule, o.file, o.line), f"g{k.index}") if o is not None and o.file else f"k{k.index}"
  return out


def _summary(prog: Program, counts: dict[str, int], outside: str = "") -> str:
  """What the map shows, said apart from the trace's count of kernels (each compiled kernel once): its calls, of how many
  kernels and copies ("3 calls of 2 kernels": one ran twice), the run's copies that are no call of it (outside: the
  timeline's Timeline.outside_text, which its launches count), and the calls by cause."""
  n = len(prog.kernels)
  besides = f" (besides {outside})" if outside else ""
  if not n: return "no kernels ran" + besides
  compiled = len({id(k.kernel) for k in prog.kernels if k.kernel is not None})
  copies = sum(k.kind == "copy" for k in prog.kernels)
  of = " and ".join(f"{c} {one if c == 1 else many}" for c, one, many in ((compiled, "kernel", "kernels"), (copies, "copy", "copies")) if c)
  return f"{n} call{'s' if n != 1 else ''} of {of}{besides} · calls by cause: " + ", ".join(f"{r} {c}" for r, c in counts.items())


def _word(row: dict) -> str | None:
  """The limit a kernel's box names, its table row's bound, and none where its row says neither roof limits it ("below
  roofs 0.67%": the box said "compute" of that kernel; the panel beside the map gives the row's limit whole)."""
  return None if (row["limit"] or "").startswith(FAR) else row["bound"]


def _view(name: str, prog: Program, kernels: list[MapKernel], buffers: list[MapBuffer], box_of: dict[int, str],
          frames: dict[int, str] | None, timeout: float | None, cell_label: CellLabel | None) -> MapView:
  """One view of the map: boxes (a kernel, or the kernels box_of puts together), an arrow per pair of boxes, laid out."""
  members: dict[str, list[int]] = {}
  for k in prog.kernels: members.setdefault(box_of[k.index], []).append(k.index)
  boxes = []
  for key, ks in members.items():
    first = prog.kernels[ks[0]]
    if len(ks) == 1:
      # the kernel table's median (re-timed after the run where it was), a single cold launch marked as there
      # (its bound, a word: the panel says the limit's figures; the whole limit widened the boxes, and the map opened
      # cutting an arrow's label)
      bound, tm = kernels[first.index]["bound"], first.kernel.timing if first.kernel is not None else None
      timed = (("❄ " if tm.cold else "") + time_text(tm.median_us) + (f" · {bound}" if bound else ""),) if tm is not None else ()
      label = _kernel_lines(first, cell_label) + timed
      boxes.append(Box(key, label, "copy" if first.kind == "copy" else "kernel", group=first.schedule))
      continue
    asked = prog.schedules[first.schedule] if first.schedule < len(prog.schedules) else None
    o = (tg.main_origin(first.origins) or asked) if name == "lines" else None
    ops = list(dict.fromkeys(op for i in ks for op in kernels[i]["ops"]))
    total = sum(t for i in ks if (t := prog.kernels[i].time_us) is not None)
    lines = [plural(len(ks), "kernel") + (f" · {place(o.file, o.line, cell_label)}" if o is not None and o.file and o.line else ""),
             (o.source[:44] + ("…" if len(o.source) > 44 else "")) if o is not None else f"{first.name} … {prog.kernels[ks[-1]].name}",
             ", ".join(ops[:3]) + (" …" if len(ops) > 3 else ""), f"{time_text(total)} in all" if total else ""]
    boxes.append(Box(key, tuple(ln for ln in lines if ln), "fold", group=first.schedule))
  arrows, drawn, stubs = _arrows(prog, box_of, buffers)
  boxes += stubs
  try: laid = layout_flow(boxes, drawn, frames, timeout, wrap=WRAP) if boxes else None
  except TimeoutError:  # its schedules' frames are what dot spends most on (a big GPT step's 320 kernels): without them
    frames, laid = None, layout_flow(boxes, drawn, None, timeout, wrap=WRAP)
  svg = flow_svg(boxes, drawn, laid, frames=frames, style=_STYLE) if laid is not None else ""
  down = flow_svg(boxes, drawn, layout_flow(boxes, drawn, frames, timeout, down=True), frames=frames, style=_STYLE) \
    if 0 < len(boxes) <= DOWN_UP_TO else ""
  return MapView(name=name, svg=svg, svg_down=down, boxes=members, arrows=arrows)


def program_map(trace: Trace, timeout: float | None = DEFAULT_TIMEOUT, cell_label: CellLabel | None = None) -> ProgramMapMsg:
  """The program map's message (see the module's docstring): its views laid out by graphviz ("kernels": a box per
  kernel, long chains folded; first, where the program has more than LINES_ABOVE kernels, "lines": a box per line of the
  user's code), the kernels' and buffers' panels, the kernels by cause."""
  prog = trace.program()
  steps: dict[int, tuple[StepKey, StepKey | None, int]] = _steps(trace)
  # a box says the limit its kernel table row says (the same peaks: cached, never measured here)
  rows = {id(k): r for k, r in zip(trace.kernels, trace.kernel_table(), strict=True)}
  kernels: list[MapKernel] = []
  for k in prog.kernels:
    first, code, row = steps.get(k.kernel.group.index, (None, None, None)) if k.kernel is not None else (None, None, None)
    time_us = k.time_us
    origin_lines = [f"{place(o.file, o.line, cell_label)} {o.source}" for o in k.origins if o.file and o.line]
    kernels.append(MapKernel(index=k.index, name=k.name, kind=k.kind, step=first, code_step=code, row=row,
                             ops=list(dict.fromkeys(o.op + (" bw" if o.backward else "") for o in k.origins)),
                             lines=list(dict.fromkeys(origin_lines)), time_us=round(time_us, 3) if time_us is not None else None,
                             runs=len(k.times_us), limit=rows[id(k.kernel)]["limit"] if k.kernel is not None else None,
                             bound=_word(rows[id(k.kernel)]) if k.kernel is not None else None,
                             reasons=k.reasons, schedule=k.schedule, reads=[], writes=[]))
  index = {id(b): i for i, b in enumerate(prog.buffers)}
  buffers: list[MapBuffer] = []
  for b in prog.buffers:
    buffers.append(MapBuffer(index=index[id(b)], label=b.label, reason=b.reason, detail=b.detail,
                             where=place(*b.line, cell_label) if b.line else "", source=b.source,
                             tinygrad=b.tinygrad, rule=where(*b.rule) if b.rule else "",
                             writer=b.writer.index if b.writer is not None else None, readers=[r.index for r in b.readers],
                             lift=_lift(b) if b.between else None))
    if b.writer is not None: kernels[b.writer.index]["writes"].append(index[id(b)])
    for r in b.readers: kernels[r.index]["reads"].append(index[id(b)])
  frames = {i: f"{a.op}() · {place(a.file, a.line, cell_label)}" if a is not None and a.file and a.line else f"schedule {i + 1}"
            for i, a in enumerate(prog.schedules)} if len(prog.schedules) > 1 else None
  folded = {k.index: f"k{k.index}" for k in prog.kernels}
  for chain in _chains(prog) if len(prog.kernels) > FOLD_ABOVE else []:
    for k in chain: folded[k.index] = f"f{chain[0].index}"
  notes = list(prog.notes)
  views: list[MapView] = []
  # (the lines view first, where there is one: a box per line of the user's code)
  for name, box_of in ([("lines", _by_line(prog))] if len(prog.kernels) > LINES_ABOVE else []) + ([("kernels", folded)] if prog.kernels else []):
    try: views.append(_view(name, prog, kernels, buffers, box_of, frames, timeout, cell_label))
    except TimeoutError as e:  # a map too big to lay out in time is left out, and says so: the report is still written
      notes.append(f"the {name} view is not drawn: its layout {str(e).removeprefix('layout ')} (the kernel table lists every kernel)")
  counts = prog.counts()
  summary = _summary(prog, counts, trace.timeline().outside_text())
  return ProgramMapMsg(type="programmap", views=views, kernels=kernels, buffers=buffers, counts=counts, reasons=list(REASONS),
                       colours=REASON_COLOURS, summary=summary, notes=notes)


def _arrows(prog: Program, box_of: dict[int, str], buffers: list[MapBuffer]) -> tuple[list[list[int]], list[Arrow], list[Box]]:
  """One arrow per pair of boxes (the inputs a box reads come from a stub before it, "in<box>", the outputs it writes go
  to a stub after it, "out<box>"): its buffers, the arrow drawn (labelled with the buffer, or how many and their bytes;
  coloured by the first one's reason), and the stubs."""
  pairs: dict[tuple[str, str], list[int]] = {}
  for b in buffers:
    readers: list[str | None] = [box_of[r] for r in b["readers"]]
    for to in readers or [None]:
      src = box_of[b["writer"]] if b["writer"] is not None else f"in{to}"
      dst = to if to is not None else f"out{src}"
      if src != dst: pairs.setdefault((src, dst), []).append(b["index"])
  arrows: list[list[int]] = []
  drawn: list[Arrow] = []
  stubs: list[Box] = []
  group = {box_of[k.index]: k.schedule for k in prog.kernels}
  for (src, dst), members in pairs.items():
    members = list(dict.fromkeys(members))
    nbytes = sum(prog.buffers[i].nbytes for i in members)
    label = buffers[members[0]]["label"] if len(members) == 1 else f"{len(members)} buffers {bytes_text(nbytes)}"
    title = "\n".join(f"{buffers[i]['label']}: {buffers[i]['reason']}" for i in members[:12])
    for stub, word, near in ((src, "in", dst), (dst, "out", src)):
      if stub.startswith(word) and stub not in group:
        stubs.append(Box(stub, (f"{word}: {label}",), "end", group=group.get(near)))
        group[stub] = group.get(near, 0)
    outside = src.startswith("in") or dst.startswith("out")
    drawn.append(Arrow(src, dst, "" if outside else label, "r-" + buffers[members[0]]["reason"], title, str(len(arrows))))
    arrows.append(members)
  return arrows, drawn, stubs


def _lift(b: programs.Buffer) -> str | None:
  try: return lift_for(b)
  except ValueError: return None


def fuse_message(trace: Trace, content: dict) -> FusedMsg:
  """What if they had fused (Fusion) for the buffer of the map the request names: both runs' kernels, buffers, time and
  memory peak; a bad request or a run that failed is the answer's error."""
  i = content.get("buffer")
  buffers = trace.program().buffers
  if not isinstance(i, int) or not 0 <= i < len(buffers):
    return FusedMsg(type="fused", buffer=-1, lift="", lifted="", summary=f"no buffer {i!r} in the program", error="no such buffer",
                    gone=None, sides=[])
  try: f = fuse(trace, buffers[i])
  except ValueError as e: return FusedMsg(type="fused", buffer=i, lift="", lifted="", summary=str(e), error=str(e), gone=None, sides=[])
  sides = []
  for label, t in (("as scheduled", f.before), (f"{f.lift} lifted", f.after)):
    if t is None: continue
    fig = f.side("before" if t is f.before else "after")
    ks = t.program().kernels
    sides.append(FusedSide(label=label, kernels=[k.name for k in ks],
                           times_us=[round(sum(k.times_us), 3) if k.times_us else None for k in ks],
                           buffers=fig["buffers"], time_us=fig["time_us"], peak=fig["peak"]))
  return FusedMsg(type="fused", buffer=i, lift=f.lift, lifted=f.lifted, summary=f.summary(), error=f.error, gone=f.gone, sides=sides)

