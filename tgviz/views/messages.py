"""Every message between Python and the frontend (``js/``), defined once: the widgets' synced state, what Python sends,
what the frontend asks. ``js/messages.js`` is generated from this module (``bash scripts/messages.sh``), and
tests/views/test_messages.py fails when the two disagree.

Keys are issued by Python and opaque to the frontend: a step is named by its ``StepKey``; a picture by (step key, match,
view), where match ``None`` (JSON ``null``) is the whole step. Synced state (the TraceWidget's traits; the report's
stand-in model holds the same): ``tree`` (list of TreeGroup), ``selected`` (a StepKey, "" for none), ``match`` (int or
None), ``view`` (a View), ``code_css``, ``summary``, ``kernels`` (list of KernelRow), ``error``, ``whatif`` (per kernel
an OptsInfo), ``failure`` (a FailureInfo, or None: where tinygrad failed, which the browser opens on), ``opening``
("program": open on the program map; "step": on the selected step) and ``kept_picture``: the PictureMsg of the
selected step (whole), kept small, that a saved notebook shows when no kernel answers. The builders are
:mod:`tgviz.views.protocol`'s and the other view modules'.

Must not: build a message (no logic here but the JSDoc writer); import anything of tgviz.
"""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

StepKey: TypeAlias = str
View: TypeAlias = str
"""A view of a step: "auto", "full", "line:N" (the auto view around the UOps of line N, from 1, of the step's kernel) or
"node:KEY" (around that node), each folded, or the raw graph with a "raw:" prefix (see picture.view_options)."""
OptSpec: TypeAlias = tuple[str, int | None, Any]
"""An opt as [op, axis, amount]."""


# *** the trace browser's state ***

class TreeStep(TypedDict):
  key: StepKey
  name: str             # Step.row: an unnamed graph_rewrite by what it rewrote ("ADD (lidx1+56)")
  depth: int
  matches: int
  snapshot: bool
  where: NotRequired[str]  # an unnamed graph_rewrite's call site ("graph_rewrite weak.py:66"): the row's tooltip


class TreeGroup(TypedDict):
  index: int
  name: str            # as shown: a kernel's display name ("E_2 #2" where kernels share a name)
  kind: str
  matches: int
  kernel: str | None
  steps: list[TreeStep]
  key: NotRequired[str]  # a kernel's key, short (Kernel.short_key), shown beside its name
  calls: NotRequired[list[str]]  # a schedule's calls, by what they are (tree_calls: "3 compiled here", "2 copies"), beside its name


class KernelRow(TypedDict):
  """A row of the kernel table (Trace.kernel_table's), with the name shown, the matches of its steps and the step it
  opens (the kernel's first)."""
  name: str
  label: str            # Kernel.display_name: "E_2 #2" where kernels share a name
  matches: int
  device: str
  global_size: list[int]
  local_size: list[int] | None
  flops: int | None
  bytes: int | None
  runs: int
  time_us: float | None
  step: StepKey
  median_us: float | None   # its time as a spread (Kernel.timing): median, min, max over timed_runs
  min_us: float | None
  max_us: float | None
  timed_runs: int
  timed: str | None         # "capture" (its launches there) or "re-timed" (after it, warm)
  cold: bool                # a single launch in the capture: no measurement of it warm
  settled: bool | None      # re-timed: whether its median settled before a bound stopped the runs (Timing.stable)
  bound: str | None         # "memory", "compute" or "latency" (tgviz.trace.verdicts); null without the device's peaks
  roof_fraction: float | None
  launch_floors: float | None  # its median in the device's launch floors (a latency-bound kernel's limit column)
  busy_units: list[int] | None  # latency-bound for too few workgroups: the compute units they keep busy, the device's
  limit: str | None         # the limit column's words: "memory 45%", "below roofs 0.12%" (tgviz.trace.verdicts.Verdict.label)
  why: str | None
  compile_total_us: float | None  # its row of the compile table, total_us (all its compiling took)
  shares: list[str]         # the other kernels that compiled to its program (their launches are one program's)
  counted_in: str | None    # the kernel whose row counts its program's launches (null: this one)
  key: NotRequired[str]     # Kernel.key (the table shows it short; rows of an older page have none)
  causes: NotRequired[list[str]]  # why the kernel ends where it does: the reasons of the buffers it writes (Program)


class Selection(TypedDict):
  """A picture: match None is the whole step."""
  step: StepKey
  match: int | None
  view: View


# *** the trace browser: Python -> frontend ***

class BusyMsg(TypedDict):
  """A picture is being computed for this selection."""
  type: Literal["busy"]
  step: StepKey
  match: int | None
  view: View
  since: float | None   # seconds the kernel has been on it, the page having asked again; None: started now


class StepInfo(TypedDict):
  title: str
  name: str             # Step.label
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


class OriginInfo(TypedDict):
  """A Tensor operation the kernel computes and the user's line that called it."""
  op: str
  backward: bool
  where: str            # "Cell In[2], line 4" or "train.py:12"; "" when the call was made before the capture
  source: str
  context: list[str]    # the lines around it, each "  12  text", the origin's line marked "→"


class KernelInfo(TypedDict):
  name: str
  label: str                      # Kernel.display_name
  device: str
  renderer: str
  global_size: list[int]
  local_size: list[int] | None
  html: str
  source: str
  lines: list[list[str]] | None   # per source line, the keys (as in the SVG's data-node) of the UOps behind it
  lines_note: str | None          # why lines is None
  codegen_step: StepKey | None    # the step whose graph the renderer consumed: where a line's UOps are drawn
  origins: list[OriginInfo]
  node_origins: list[list[int]]   # per node of its base AST (toposort order): which of origins made it ([]: not known)
  key: NotRequired[str]           # Kernel.short_key


class ProducedKernel(TypedDict):
  """A kernel compiled after a schedule: its name (as shown: Kernel.display_name), its group and the step to open it on."""
  name: str
  group: int
  step: StepKey


class CallPart(TypedDict):
  """Some of a schedule's calls, of one kind: "compiled" (a kernel compiled after this schedule, its first call here),
  "earlier" (a kernel compiled after an earlier schedule: its program reused), "again" (one more call of a kernel
  called before in this schedule), "cached" (a kernel tinygrad compiled before the capture), "copy", "other" (not a
  kernel: a buffer view and the like)."""
  kind: Literal["compiled", "earlier", "again", "cached", "copy", "other"]
  count: int
  text: str                       # what they are, after the count
  kernels: list[ProducedKernel]   # "earlier", "again": those kernels, each once


class ScheduleCallsInfo(TypedDict):
  """How a schedule's calls (the count in its group's name) and the trace's kernels reconcile: the calls by kind (they
  add up to `calls`), the kernels compiled after this schedule and those after other schedules (they add up to the
  trace's); `kernels`: the AST node key a CALL node calls -> the kernel it becomes."""
  calls: int
  parts: list[CallPart]
  compiled: int                   # kernels compiled after this schedule
  elsewhere: int                  # the trace's other kernels: compiled after other schedules
  kernels: dict[str, ProducedKernel]


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
  schedule: ScheduleCallsInfo | None  # a schedule group's: its calls and the trace's kernels, reconciled
  node_matches: dict[str, list[list[int]]]  # Step.node_matches of the nodes drawn: the node panel's, with no round trip
  trimmed: NotRequired[bool]  # the kept picture, lightened to fit a saved notebook (widget.kept_picture)
  dot: NotRequired[str]      # the report's only (js/port/protocol.js): the DOT text it laid out


class ErrorMsg(TypedDict):
  type: Literal["error"]
  message: str
  traceback: NotRequired[str]


class ExportedMsg(TypedDict):
  type: Literal["exported"]
  paths: list[str]


class NodeSource(TypedDict):
  key: str
  label: str


class HistoryEvent(TypedDict):
  """One event of a node's life in its group (see Trace.history); a run of steps it lives through is one "lives" event."""
  kind: Literal["input", "created", "rebuilt", "lives", "replaced", "removed"]
  step: StepKey        # where to jump (the first step of a "lives" run)
  match: int | None
  title: str
  other: str           # created: the op it came from; replaced: the op that replaced it
  other_key: str       # that node's key (drawn in the match's picture), "" when there is none
  steps: int           # "lives": how many steps in a row
  again: bool          # "input", "created", "rebuilt": back after it was gone (UOps are unique by structure: the same one)


class LineageLink(TypedDict):
  """A run of links of a node's lineage (see Trace.lineage, Lineage.runs), newest first: match(es) of one step that made
  (or rebuilt) a node of the chain from an earlier one; "input": the chain's first UOp, in the graph a step started from
  (or, with an `other`, a step's input built anew, the node in its place in the step before's output)."""
  kind: Literal["input", "created", "rebuilt"]
  step: StepKey
  match: int | None    # the run's first match (where it starts); None for "input"
  last: int | None     # the run's last match (the newest)
  count: int           # links in the run
  title: str           # the step's title at `match` (its path for "input")
  name: str            # the step's name (StepInfo.name)
  where: str           # the rule of `match`, "file.py:12" ("" for "input")
  op: str              # the node the run made (its newest)
  key: str
  other: str           # the op of the node it came from, "" when none is known
  other_key: str
  other_step: StepKey  # where that node is drawn: this step (at `match`), or for "input" the step before
  other_match: int | None


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
  label: NotRequired[list[str]]  # the HTML report's, which has no full dtype, arg and tag: the label lines drawn after the op
  sources: list[NodeSource]
  created: list[int]   # the matches of the step whose replacement is (or holds) this node
  replaced: list[int]  # the matches of the step that replaced this node
  history: list[HistoryEvent]  # its life across its group's steps
  lineage: list[LineageLink]   # where it came from, back to its creation (newest first)
  becomes: ProducedKernel | None  # a CALL node of a schedule graph: the kernel it becomes
  origins: list[OriginInfo]    # the Tensor ops and the user's lines of the kernel whose AST the lineage starts in
  origins_own: bool            # ... those that made the node the lineage starts from (Kernel.origins_of), not all
  unknown: NotRequired[str]    # the HTML report's: why it has no history and lineage (a graph of the group it does not keep)


class RuleInfo(TypedDict):
  """A pattern of the trace (see Trace.rules), and where it first fired (step "" and match -1: in no step of the trace,
  only in untracked rewrites, or never); its counts over every rewrite of the capture (null where not counted)."""
  where: str
  file: str
  line: int
  source: str
  count: int           # matches in the trace's steps
  us: float            # their time
  steps: int
  step: StepKey
  match: int
  matched: int | None  # matches in every rewrite (TRACK_MATCH_STATS's count)
  attempts: int | None
  rate: float | None   # matched / attempts
  self_us: float | None  # time in its attempts, less the rewrites nested in them
  failed_us: float | None  # time in its attempts that did not match


class RulesMsg(TypedDict):
  type: Literal["rules"]
  rules: list[RuleInfo]
  total: int           # how many rules fired (the list may be shorter)
  never: list[RuleInfo]  # the patterns tried that never matched (pure overhead), most time in attempts first
  totals: list[float]  # [attempts, matches, self µs, failed µs] over every pattern; [] where not counted


class UopRow(TypedDict):
  """One UOp of the linearized program, in print_uops' columns."""
  n: int               # its number in print_uops
  op: str              # "Ops.STORE", as tinygrad prints it
  family: str          # its op family (graph.FAMILIES)
  fill: str            # that family's colour, its node's fill in the graph
  ranges: str          # the ranges it is inside ("2,3")
  dtype: str
  srcs: list[int | str]  # its sources by number; a constant by its value, "--" for one outside the list
  arg: str
  key: str             # its node key (as in the SVG's data-node)


class UopsMsg(TypedDict):
  """The uops tab: the kernel's linearized program."""
  type: Literal["uops"]
  kernel: str          # Kernel.display_name: which kernel's
  rows: list[UopRow]
  note: str | None     # why there are no rows


class AsmRow(TypedDict):
  text: str            # the line of the disassembly, as objdump printed it
  lines: list[int]     # the source lines (from 1) its instruction was compiled from


class AsmMsg(TypedDict):
  """The asm tab: the kernel's disassembly, or one line saying why there is none."""
  type: Literal["asm"]
  kernel: str
  rows: list[AsmRow]
  note: str | None        # why there is no disassembly (Kernel.disassembly_note)
  lines_note: str | None  # why rows have no source lines, or which have none (Kernel.disassembly_lines_note)


class AccessVar(TypedDict):
  """A range or thread id accesses run over (tgviz.bridge.access.Var)."""
  name: str            # as tinygrad renders it: "r0", "lidx0", "gidx1"
  size: int
  kind: str            # an AST's range: its AxisType ("reduce", "weak", ...); a program's: "global", "local", "loop"


AccessNode: TypeAlias = tuple[str, str, list[int], int | float | bool | str | None]
"""A node of an access table: op ("ADD", "CONST", "VAR", "DATA", ...), kind ("i", "b", "f"), sources (earlier nodes), arg
(a CONST's value, a VAR's number, a DATA's text). js/port/access.js evaluates them as tgviz.bridge.access.evaluate does."""


class AccessEntry(TypedDict):
  """One LOAD or STORE of a global buffer (tgviz.trace.access.Access, with its table's nodes)."""
  number: int
  kind: Literal["load", "store"]
  slot: int
  pattern: Literal["contiguous", "strided", "broadcast", "gather", "masked"]
  stride: int | None
  width: int           # consecutive elements per access (a vector's width)
  index: int           # the node of its index
  valid: int | None    # the node of its valid mask (None: always valid)
  vars: list[int]      # the variables its index and mask use
  loops: list[int]     # the variables it runs under (it is done once per point of them)
  feeds: list[int]     # a store of an AST: the loads its value is made from
  data: bool           # its index or mask reads data (a gather): never evaluated
  index_text: str      # tinygrad's rendering
  valid_text: str | None
  keys: list[str]      # the node keys of its UOps (the LOAD or STORE, its INDEX): linked to the graph and code lines


class AccessStage(TypedDict):
  """A kernel's accesses at one stage: "ast" (the View Base AST: per output element) or "program" (per thread)."""
  stage: Literal["ast", "program"]
  nodes: list[AccessNode]
  vars: list[AccessVar]
  accesses: list[AccessEntry]


class AccessBuffer(TypedDict):
  """A global buffer of the kernel, drawn as a grid of its elements."""
  slot: int
  shape: list[int]     # its tensor's shape where known, else [numel]
  dtype: str
  numel: int
  tensor: str | None   # which kernel wrote it, and the user's line


class AccessMsg(TypedDict):
  """The access tab: the kernel's buffers and accesses at both stages; the page evaluates hovers itself."""
  type: Literal["access"]
  kernel: str
  buffers: list[AccessBuffer]
  stages: list[AccessStage]
  note: str | None     # why a stage is missing (a symbolic range, ...)


class TimelineData(TypedDict):
  """The launches in start order, as columns: lane, name, kind (indices into lanes, names, KINDS), start and duration
  (µs; duration null where nothing was timed), kernel (index into RunMsg.kernels, -1: none), jit (-1: none) and replay;
  jit_runs: [jit, replay, start, end, launches]; moved: [launch, bytes] of copies; slowest: the indices of the slowest
  kernel launches, slowest first."""
  lanes: list[str]
  names: list[str]
  kinds: list[str]
  lane: list[int]
  name: list[int]
  kind: list[int]
  start: list[float]
  dur: list[float | None]
  kernel: list[int]
  jit: list[int]
  replay: list[int]
  jits: list[str]
  jit_runs: list[list[float]]
  moved: list[list[int]]          # [launch, bytes]: what a copy moved, where the device said
  slowest: list[int]
  duration: float
  source: str
  summary: str
  outside: str                    # the copies outside any schedule, in words (Timeline.outside_text; "": none)
  cold: list[int]                 # the launches that are their kernel's only one in the capture (cold: no warm time)
  opening: TimelineOpening | None  # where the timeline opens (tgviz.views.run.opening); None: no launches


class TimelineOpening(TypedDict):
  """The stretch of launches the timeline opens on (tgviz.views.run.opening): launches first..last (indices into
  TimelineData's columns, start order) from start to end (µs); what: "replays" (a TinyJit loop's steady state) or
  "launches"; gap_before and gap_after: the time with no launch between it and the launches left out before and after
  it (null: none left out on that side), compiling_before and compiling_after: how much of that gap tinygrad's compiler
  ran (its TINY lane)."""
  what: Literal["replays", "launches"]
  first: int
  last: int
  start: float
  end: float
  gap_before: float | None
  gap_after: float | None
  compiling_before: float | None
  compiling_after: float | None


class BufferRow(TypedDict):
  num: int
  device: str
  dtype: str
  size: int
  nbytes: int
  alloc_us: float
  free_us: float | None
  kernels: list[int]              # the kernels that wrote or read it (indices into RunMsg.kernels)
  writers: list[str]
  readers: list[str]


class BufferTable(TypedDict):
  """Every buffer the run allocated, as columns (as tinygrad's VIZ lists them in its memory lanes: each allocation with
  its size and dtype, its free, and the launches that used it): device and dtype are indices into devices and dtypes,
  free null where it was never freed, writes and reads the launches (indices into the timeline's columns), kernels the
  trace's kernels among them (indices into RunMsg.kernels)."""
  num: list[int]
  devices: list[str]
  dtypes: list[str]
  device: list[int]
  dtype: list[int]
  size: list[int]
  nbytes: list[int]
  alloc: list[float]
  free: list[float | None]
  writes: list[list[int]]
  reads: list[list[int]]
  kernels: list[list[int]]


class MemoryData(TypedDict):
  """Bytes in use after each allocation and free (t: µs, in_use: bytes, buf: the buffer, an index into buffers, -1 for
  one allocated before the run; as columns), every buffer, the peak (bytes, when) and the buffers alive at it, biggest
  first; before: what was in use when the run began (tinygrad's high-water mark is before + peak). The chart opens on
  the timeline's window (TimelineData.opening)."""
  t: list[float]
  in_use: list[int]
  buf: list[int]
  buffers: BufferTable
  peak: int
  peak_us: float | None
  before: int
  allocations: int
  at_peak: list[BufferRow]
  device_peaks: dict[str, int]
  summary: str


class PointRow(TypedDict):
  kernel: int
  device: str
  flops: int
  bytes: int
  runs: int
  time_us: float
  intensity: float | None
  gflops: float
  gbs: float
  bound: str | None
  float_gflops: float | None      # its float work over its median: where it is drawn, under the float32 roof
  verdict: str | None             # "memory", "compute" or "latency" (tgviz.trace.verdicts)
  fraction: float | None          # of its roof reached
  why: str | None


class PeaksRow(TypedDict):
  gflops: float
  benchmark: float                # what the benchmark reached (gflops: the roof, a faster kernel's where one was)
  gbs: float
  ridge: float
  how: str
  measured: str
  launch_us: float                # the launch floor (0: not measured)


class RooflineData(TypedDict):
  points: list[PointRow]
  peaks: dict[str, PeaksRow]
  notes: list[str]
  ran: int                        # kernels that ran inside the capture (a point each, where tinygrad estimated them)


class CompileData(TypedDict):
  """tinygrad's host-side spans (trace.compile_times()), as columns in start order: lane (TINY: the compiler, USER: the
  Tensor methods called; indices into lanes), name (into names), kind (into KINDS of views.compile), start and duration
  (µs from the capture's start, to 0.1 µs), depth (0: outermost in its lane) and the step a click opens ("" for none);
  own: [span, its time less the rewrites nested in it] of the spans with rewrites nested in them; totals: the capture's
  wall time split up (CompileTotals' fields, µs); summary: the same in words."""
  lanes: list[str]
  names: list[str]
  kinds: list[str]
  lane: list[int]
  name: list[int]
  kind: list[int]
  start: list[float]
  dur: list[float]
  own: list[list[float]]
  depth: list[int]
  step: list[StepKey]
  totals: dict[str, float]
  summary: str


class RunMsg(TypedDict):
  type: Literal["run"]
  kernels: list[list[str]]        # [display name, the step it opens ("" for none)], by index
  estimates: list[list[int] | None]  # tinygrad's [FLOPs, bytes] estimate of each kernel (per launch: VIZ's FLOPS and B/s)
  timeline: TimelineData
  memory: MemoryData
  roofline: RooflineData
  compile: CompileData
  timings: list[str | None]       # each kernel's time as Timing.text says it ("median 12.3 µs (...)", "2,028 µs (1 cold launch)")
  retimed: list[list[float] | None]  # a kernel re-timed after the capture: [its median µs, its runs] (the kernel table's)


class RetryMsg(TypedDict):
  type: Literal["retried"]
  kernel: str                        # the display name of the kernel retried
  opts: list[str]                    # the opts asked, as text ("UPCAST(0, 4)")
  summary: str
  error: str | None                  # tinygrad's message for a refused opt, or what else went wrong
  same: bool                         # the outputs matched the original's
  times_us: list[float | None]       # the median launch time of (the original, the retry), on the same inputs
  compare: dict[str, Any] | None     # {"state": compare_view.state, "pairs": [its one pair message]}


class AllowedMsg(TypedDict):
  type: Literal["allowed"]
  kernel: str
  opts: list[OptSpec]                # per opt tinygrad accepts next
  error: str | None


class BeamRow(TypedDict):
  """One of BEAM's candidates (Kernel.beam_table's row)."""
  index: int
  round: int
  opts: list[str]
  compiled: bool
  time_us: float | None
  winner: bool


class OptsInfo(TypedDict):
  """A kernel's opts in the what-if panel: those applied, who chose them, BEAM's candidates, the retries made so far, and
  what tgviz run's retries left out and why."""
  opts: list[OptSpec]
  text: list[str]
  steps: list[str | None]            # per opt, the StepKey of the rewrite step its application made (Kernel.opt_steps)
  by: str                            # Kernel.opts_by
  beam: list[BeamRow]                # whatif.beam_rows: BEAM's candidates; [] without a search
  beam_cached: bool | None           # BEAM's cache answered (no search ran); None without BEAM
  retries: list[RetryMsg]
  not_tried: list[str]               # whatif.Kernel.not_tried: "one size up: ...", each with why
  total_us: float | None             # Kernel.total_us: the kernel table's total (tgviz run retries the kernels of most)
  opening: int | None                # the retry the report's sheet opens on (whatif.most_telling), its index in retries


class MapKernel(TypedDict):
  """A kernel of the program map (a call of the block's schedules, in run order): what its panel says and where it
  leads (its first step, its codegen step, its row of the kernel table)."""
  index: int
  name: str
  kind: str                          # "kernel", "copy" or "other"
  step: StepKey | None
  code_step: StepKey | None
  row: int | None
  ops: list[str]
  lines: list[str]                   # the user's lines of its Tensor ops: "file.py:12 source"
  time_us: float | None              # the median of its kernel's launches
  runs: int
  limit: str | None                  # its kernel table row's limit (Verdict.label) by the device's cached peaks; None without them
  bound: str | None                  # the limit its box names: the row's bound; null where the row says "below roofs"
  reasons: list[str]
  schedule: int
  reads: list[int]                   # buffers (indices into ProgramMapMsg.buffers)
  writes: list[int]


class MapBuffer(TypedDict):
  """A buffer of the program map: one state of one of tinygrad's buffers, the kernel that wrote it (null: from before
  the block) and those that read it, with the reason it exists."""
  index: int
  label: str                         # "float[4,8] 128 B"
  reason: str
  detail: str
  where: str                         # the user's line, "file.py:12" ("" for none)
  source: str
  tinygrad: str                      # tinygrad's own words for the rule
  rule: str                          # tinygrad's line that decided, "rangeify.py:266"
  writer: int | None
  readers: list[int]
  lift: str | None                   # the condition "what if they fused?" lifts (Fusion.lift_for); None: none to lift


class MapView(TypedDict):
  """One view of the program map: "kernels" (a box per kernel, long chains folded) or "lines" (a box per line of the
  user's code). Its picture: SVG laid out left to right (svg_down, for a small map: top to bottom too, "" for a bigger
  one; the page shows the one that fits its canvas), a box's data-node its key in boxes ("in..."/"out..." for the
  stubs of what comes from before the block and goes after it), an arrow's data-key its index in arrows."""
  name: str
  svg: str
  svg_down: str
  boxes: dict[str, list[int]]        # box -> its kernels (indices into ProgramMapMsg.kernels)
  arrows: list[list[int]]            # per arrow, its buffers


class ProgramMapMsg(TypedDict):
  """The program map: its views (the first opens), the kernels and buffers, the kernels by cause."""
  type: Literal["programmap"]
  views: list[MapView]
  kernels: list[MapKernel]
  buffers: list[MapBuffer]
  counts: dict[str, int]
  reasons: list[str]
  colours: dict[str, str]
  summary: str
  notes: list[str]


class FusedSide(TypedDict):
  """One run of a Fusion: its kernels in run order with their device times (µs, summed over launches; null: not timed),
  the buffers between them, its device time in all and its memory peak (bytes)."""
  label: str
  kernels: list[str]
  times_us: list[float | None]
  buffers: int
  time_us: float | None
  peak: int


class FusedMsg(TypedDict):
  """What if they had fused (Fusion): the schedule that made buffer (an index into ProgramMapMsg.buffers) run again as
  it was and with a condition lifted, on the same fresh random inputs."""
  type: Literal["fused"]
  buffer: int
  lift: str
  lifted: str                        # the condition lifted, in words
  summary: str
  error: str | None
  gone: bool | None
  sides: list[FusedSide]


class FailureInfo(TypedDict):
  """Where tinygrad failed inside the capture (tgviz.trace.failure.Failure): the browser opens on it, the node marked."""
  kind: Literal["rewrite", "compile", "run"]
  summary: str          # one line: where and why
  error: str            # "Type: message"
  traceback: str
  step: StepKey
  match: int | None
  node: str | None      # the node it failed on (as in the SVG's data-node)
  line: int | None      # the code line a compiler named (from 1)


class SearchHit(TypedDict):
  """One thing a search found (tgviz.trace.search.Hit): where it is, a click away."""
  kind: Literal["kernel", "step", "origin", "uop", "rule", "code"]
  group: int
  step: StepKey | None
  match: int | None
  line: int | None      # a code line (from 1)
  node: str | None      # a UOp's node key, marked where it is drawn (an origin: the keys of those the op made, space-separated)
  count: int | None     # a rule's matches in the step
  text: str             # what matched, in context
  where: str            # the group and step it is in, as the tree names them


class SearchMsg(TypedDict):
  """A search's answer: the hits, at most views.search.SHOWN of each kind (counts: how many there are of each)."""
  type: Literal["search"]
  text: str
  total: int
  counts: dict[str, int]
  hits: list[SearchHit]
  groups: list[int]     # every group a user's op found is in (all its hits, listed or not), in order: the tree shows these


KernelMsg: TypeAlias = ("PictureMsg | BusyMsg | ErrorMsg | ExportedMsg | NodeMsg | RulesMsg | UopsMsg | AsmMsg | RunMsg | RetryMsg | AllowedMsg"
                        " | AccessMsg | SearchMsg | ProgramMapMsg | FusedMsg")
"""What Python (or the report's page) sends the trace browser."""


# *** the trace browser: frontend -> Python ***

class ReadyMsg(TypedDict):
  """The frontend is drawn and wants the current picture; with the page's selection (sent with each choice, and again
  where no picture came), which the kernel takes where it differs: ipywidgets sends a model's changes one at a time,
  each once the kernel's idle status for the one before has come, and one status lost holds every later change back."""
  type: Literal["ready"]
  selection: NotRequired[Selection]


class ExportMsg(TypedDict):
  """Write the current view as SVG: the part on screen (box: x, y, width, height in the SVG's units), or the whole."""
  type: Literal["export"]
  box: NotRequired[list[float]]


class NodeRequest(TypedDict):
  """The node panel of a node of the current selection's graphs."""
  type: Literal["node"]
  key: str


class RulesRequest(TypedDict):
  """The rules tab: every pattern that fired."""
  type: Literal["rules"]


class ProgramRequest(TypedDict):
  """The uops or asm tab of the kernel of a step."""
  type: Literal["uops", "asm"]
  step: StepKey
  again: NotRequired[bool]  # asked again, no answer having come: the same request under way is left to answer


class AccessRequest(TypedDict):
  """The access tab of the kernel of a step."""
  type: Literal["access"]
  step: StepKey
  again: NotRequired[bool]  # as ProgramRequest's


class RunRequest(TypedDict):
  """The timeline, memory and roofline tabs."""
  type: Literal["run"]


class RetimeRequest(TypedDict):
  """Time kernels again (their display names; [] for the slowest, as trace.retime chooses)."""
  type: Literal["retime"]
  kernels: list[str]


class AllowedRequest(TypedDict):
  """The opts tinygrad allows next on a kernel, after `before`."""
  type: Literal["allowed"]
  kernel: str
  before: list[OptSpec]


class RetryRequest(TypedDict):
  """The kernel compiled and run again with these opts."""
  type: Literal["retry"]
  kernel: str
  opts: list[OptSpec]


class ProgramMapRequest(TypedDict):
  """The program map."""
  type: Literal["programmap"]


class FuseRequest(TypedDict):
  """What if they had fused: run again the schedule that made a buffer of the program map (its index), its condition lifted."""
  type: Literal["fuse"]
  buffer: int


class SearchRequest(TypedDict):
  """Search the trace for text (tgviz.trace.search)."""
  type: Literal["search"]
  text: str


FrontendMsg: TypeAlias = ("ReadyMsg | ExportMsg | NodeRequest | RulesRequest | ProgramRequest | RunRequest | AllowedRequest | RetryRequest"
                          " | AccessRequest | SearchRequest | RetimeRequest | ProgramMapRequest | FuseRequest")
"""What the trace browser asks."""


# *** the comparison (CompareWidget, the comparison page) ***

class Landmark(TypedDict):
  step: str
  svg: str


class PairSide(TypedDict):
  name: str
  head: str
  html: str
  graphs: list[Landmark]


class PairMsg(TypedDict):
  type: Literal["pair"]
  index: int
  diff: str
  sides: list[PairSide | None]


class PairRequest(TypedDict):
  """A row of the comparison's kernel table, opened."""
  type: Literal["pair"]
  index: int



# *** js/messages.js, written from this module's source ***

_JS_NAMES = {"str": "string", "int": "number", "float": "number", "bool": "boolean", "None": "null", "Any": "any"}


def _js_type(node: ast.expr) -> str:
  """A Python annotation (its AST) as a JSDoc type: aliases and TypedDicts by name."""
  if isinstance(node, ast.Constant) and isinstance(node.value, str): return _js_type(ast.parse(node.value, mode="eval").body)
  if isinstance(node, ast.Constant) and node.value is None: return "null"
  if isinstance(node, ast.Name): return _JS_NAMES.get(node.id, node.id)
  if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr): return f"{_js_type(node.left)}|{_js_type(node.right)}"
  if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
    args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    name = node.value.id
    if name == "Literal": return "|".join(f'"{a.value!s}"' for a in args if isinstance(a, ast.Constant))
    if name == "NotRequired": return _js_type(args[0])
    if name == "list":
      inner = _js_type(args[0])
      return f"({inner})[]" if "|" in inner else f"{inner}[]"
    if name == "dict": return f"Record<{_js_type(args[0])}, {_js_type(args[1])}>"
    if name == "tuple": return f"[{', '.join(_js_type(a) for a in args)}]"
  raise ValueError(f"messages.py: no JSDoc type for {ast.unparse(node)}")


def _comment(doc: str | None, typedef: str) -> str:
  lines = [*(doc or "").split("\n"), typedef] if doc else [typedef]
  return "/** " + "\n * ".join(ln.strip() for ln in lines) + " */"


def jsdoc(source: str | None = None) -> str:
  """js/messages.js: every alias and TypedDict of this module (its source, in order) as a JSDoc typedef, with its
  docstring; a NotRequired field is optional (``key?:``)."""
  tree = ast.parse(source if source is not None else Path(__file__).read_text())
  out = ["// Generated from tgviz/views/messages.py by `bash scripts/messages.sh`: do not edit. Change the Python and run it again;",
         "// tests/views/test_messages.py fails while the two disagree.", ""]
  body = tree.body
  for i, node in enumerate(body):
    nxt = body[i + 1] if i + 1 < len(body) else None
    after = nxt.value.value if isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant) else None
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and ast.unparse(node.annotation) == "TypeAlias":
      assert node.value is not None
      out.append(_comment(after if isinstance(after, str) else None, f"@typedef {{{_js_type(node.value)}}} {node.target.id}"))
    elif isinstance(node, ast.ClassDef) and any(ast.unparse(b) == "TypedDict" for b in node.bases):
      fields = []
      for item in node.body:
        if not isinstance(item, ast.AnnAssign) or not isinstance(item.target, ast.Name): continue
        optional = isinstance(item.annotation, ast.Subscript) and ast.unparse(item.annotation.value) == "NotRequired"
        fields.append(f"{item.target.id}{'?' if optional else ''}:{_js_type(item.annotation)}")
      rows, row = [], ""
      for field in fields:
        if row and len(row) + len(field) > 110: rows.append(row); row = ""
        row += (", " if row else "") + field
      rows.append(row)
      joined = ",\n *   ".join(rows)
      out.append(_comment(ast.get_docstring(node), f"@typedef {{{{{joined}}}}} {node.name}"))
  out.append("export {};")
  return "\n".join(out) + "\n"


def write_js(path: str | Path | None = None) -> Path:
  """Write jsdoc() to js/messages.js of this checkout (or path): ``bash scripts/messages.sh``."""
  target = Path(path) if path is not None else Path(__file__).resolve().parents[2] / "js" / "messages.js"
  target.write_text(jsdoc())
  return target
