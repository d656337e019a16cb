// Generated from tgviz/views/messages.py by `bash scripts/messages.sh`: do not edit. Change the Python and run it again;
// tests/views/test_messages.py fails while the two disagree.

/** @typedef {string} StepKey */
/** A view of a step: "auto", "full", "line:N" (the auto view around the UOps of line N, from 1, of the step's kernel) or
 * "node:KEY" (around that node), each folded, or the raw graph with a "raw:" prefix (see picture.view_options).
 * @typedef {string} View */
/** An opt as [op, axis, amount].
 * @typedef {[string, number|null, any]} OptSpec */
/** @typedef {{key:StepKey, name:string, depth:number, matches:number, snapshot:boolean, where?:string}} TreeStep */
/** @typedef {{index:number, name:string, kind:string, matches:number, kernel:string|null, steps:TreeStep[], key?:string,
 *   calls?:string[]}} TreeGroup */
/** A row of the kernel table (Trace.kernel_table's), with the name shown, the matches of its steps and the step it
 * opens (the kernel's first).
 * @typedef {{name:string, label:string, matches:number, device:string, global_size:number[], local_size:number[]|null,
 *   flops:number|null, bytes:number|null, runs:number, time_us:number|null, step:StepKey, median_us:number|null,
 *   min_us:number|null, max_us:number|null, timed_runs:number, timed:string|null, cold:boolean, settled:boolean|null,
 *   bound:string|null, roof_fraction:number|null, launch_floors:number|null, busy_units:number[]|null,
 *   limit:string|null, why:string|null, compile_total_us:number|null, shares:string[], counted_in:string|null,
 *   key?:string, causes?:string[]}} KernelRow */
/** A picture: match None is the whole step.
 * @typedef {{step:StepKey, match:number|null, view:View}} Selection */
/** A picture is being computed for this selection.
 * @typedef {{type:"busy", step:StepKey, match:number|null, view:View, since:number|null}} BusyMsg */
/** @typedef {{title:string, name:string, group:string, kind:string, depth:number, matches:number, where:string, file:string,
 *   line:number, error:string|null, stack:string[]}} StepInfo */
/** @typedef {{index:number, title:string, file:string, line:number, where:string, source:string, us:number, error:boolean,
 *   diff:string}} MatchInfo */
/** A Tensor operation the kernel computes and the user's line that called it.
 * @typedef {{op:string, backward:boolean, where:string, source:string, context:string[]}} OriginInfo */
/** @typedef {{name:string, label:string, device:string, renderer:string, global_size:number[], local_size:number[]|null,
 *   html:string, source:string, lines:string[][]|null, lines_note:string|null, codegen_step:StepKey|null,
 *   origins:OriginInfo[], node_origins:number[][], key?:string}} KernelInfo */
/** A kernel compiled after a schedule: its name (as shown: Kernel.display_name), its group and the step to open it on.
 * @typedef {{name:string, group:number, step:StepKey}} ProducedKernel */
/** Some of a schedule's calls, of one kind: "compiled" (a kernel compiled after this schedule, its first call here),
 * "earlier" (a kernel compiled after an earlier schedule: its program reused), "again" (one more call of a kernel
 * called before in this schedule), "cached" (a kernel tinygrad compiled before the capture), "copy", "other" (not a
 * kernel: a buffer view and the like).
 * @typedef {{kind:"compiled"|"earlier"|"again"|"cached"|"copy"|"other", count:number, text:string, kernels:ProducedKernel[]}} CallPart */
/** How a schedule's calls (the count in its group's name) and the trace's kernels reconcile: the calls by kind (they
 * add up to `calls`), the kernels compiled after this schedule and those after other schedules (they add up to the
 * trace's); `kernels`: the AST node key a CALL node calls -> the kernel it becomes.
 * @typedef {{calls:number, parts:CallPart[], compiled:number, elsewhere:number, kernels:Record<string, ProducedKernel>}} ScheduleCallsInfo */
/** The picture of one selection, with what the panels around it show.
 * @typedef {{type:"picture", step:StepKey, match:number|null, view:View, svg:string, partial:boolean, message:string|null,
 *   shown:number, total:number, info:StepInfo, match_info:MatchInfo|null, kernel:KernelInfo|null,
 *   produced:ProducedKernel[], schedule:ScheduleCallsInfo|null, node_matches:Record<string, number[][]>,
 *   trimmed?:boolean, dot?:string}} PictureMsg */
/** @typedef {{type:"error", message:string, traceback?:string}} ErrorMsg */
/** @typedef {{type:"exported", paths:string[]}} ExportedMsg */
/** @typedef {{key:string, label:string}} NodeSource */
/** One event of a node's life in its group (see Trace.history); a run of steps it lives through is one "lives" event.
 * @typedef {{kind:"input"|"created"|"rebuilt"|"lives"|"replaced"|"removed", step:StepKey, match:number|null, title:string,
 *   other:string, other_key:string, steps:number, again:boolean}} HistoryEvent */
/** A run of links of a node's lineage (see Trace.lineage, Lineage.runs), newest first: match(es) of one step that made
 * (or rebuilt) a node of the chain from an earlier one; "input": the chain's first UOp, in the graph a step started from
 * (or, with an `other`, a step's input built anew, the node in its place in the step before's output).
 * @typedef {{kind:"input"|"created"|"rebuilt", step:StepKey, match:number|null, last:number|null, count:number, title:string,
 *   name:string, where:string, op:string, key:string, other:string, other_key:string, other_step:StepKey,
 *   other_match:number|null}} LineageLink */
/** The node panel: one node of the selection's graphs (key as in the SVG's data-node).
 * @typedef {{type:"node", step:StepKey, key:string, op:string, dtype:string, arg:string, tag:string, python:string,
 *   label?:string[], sources:NodeSource[], created:number[], replaced:number[], history:HistoryEvent[],
 *   lineage:LineageLink[], becomes:ProducedKernel|null, origins:OriginInfo[], origins_own:boolean, unknown?:string}} NodeMsg */
/** A pattern of the trace (see Trace.rules), and where it first fired (step "" and match -1: in no step of the trace,
 * only in untracked rewrites, or never); its counts over every rewrite of the capture (null where not counted).
 * @typedef {{where:string, file:string, line:number, source:string, count:number, us:number, steps:number, step:StepKey,
 *   match:number, matched:number|null, attempts:number|null, rate:number|null, self_us:number|null,
 *   failed_us:number|null}} RuleInfo */
/** @typedef {{type:"rules", rules:RuleInfo[], total:number, never:RuleInfo[], totals:number[]}} RulesMsg */
/** One UOp of the linearized program, in print_uops' columns.
 * @typedef {{n:number, op:string, family:string, fill:string, ranges:string, dtype:string, srcs:(number|string)[], arg:string,
 *   key:string}} UopRow */
/** The uops tab: the kernel's linearized program.
 * @typedef {{type:"uops", kernel:string, rows:UopRow[], note:string|null}} UopsMsg */
/** @typedef {{text:string, lines:number[]}} AsmRow */
/** The asm tab: the kernel's disassembly, or one line saying why there is none.
 * @typedef {{type:"asm", kernel:string, rows:AsmRow[], note:string|null, lines_note:string|null}} AsmMsg */
/** A range or thread id accesses run over (tgviz.bridge.access.Var).
 * @typedef {{name:string, size:number, kind:string}} AccessVar */
/** A node of an access table: op ("ADD", "CONST", "VAR", "DATA", ...), kind ("i", "b", "f"), sources (earlier nodes), arg
 * (a CONST's value, a VAR's number, a DATA's text). js/port/access.js evaluates them as tgviz.bridge.access.evaluate does.
 * @typedef {[string, string, number[], number|number|boolean|string|null]} AccessNode */
/** One LOAD or STORE of a global buffer (tgviz.trace.access.Access, with its table's nodes).
 * @typedef {{number:number, kind:"load"|"store", slot:number, pattern:"contiguous"|"strided"|"broadcast"|"gather"|"masked",
 *   stride:number|null, width:number, index:number, valid:number|null, vars:number[], loops:number[], feeds:number[],
 *   data:boolean, index_text:string, valid_text:string|null, keys:string[]}} AccessEntry */
/** A kernel's accesses at one stage: "ast" (the View Base AST: per output element) or "program" (per thread).
 * @typedef {{stage:"ast"|"program", nodes:AccessNode[], vars:AccessVar[], accesses:AccessEntry[]}} AccessStage */
/** A global buffer of the kernel, drawn as a grid of its elements.
 * @typedef {{slot:number, shape:number[], dtype:string, numel:number, tensor:string|null}} AccessBuffer */
/** The access tab: the kernel's buffers and accesses at both stages; the page evaluates hovers itself.
 * @typedef {{type:"access", kernel:string, buffers:AccessBuffer[], stages:AccessStage[], note:string|null}} AccessMsg */
/** The launches in start order, as columns: lane, name, kind (indices into lanes, names, KINDS), start and duration
 * (µs; duration null where nothing was timed), kernel (index into RunMsg.kernels, -1: none), jit (-1: none) and replay;
 * jit_runs: [jit, replay, start, end, launches]; moved: [launch, bytes] of copies; slowest: the indices of the slowest
 * kernel launches, slowest first.
 * @typedef {{lanes:string[], names:string[], kinds:string[], lane:number[], name:number[], kind:number[], start:number[],
 *   dur:(number|null)[], kernel:number[], jit:number[], replay:number[], jits:string[], jit_runs:number[][],
 *   moved:number[][], slowest:number[], duration:number, source:string, summary:string, outside:string,
 *   cold:number[], opening:TimelineOpening|null}} TimelineData */
/** The stretch of launches the timeline opens on (tgviz.views.run.opening): launches first..last (indices into
 * TimelineData's columns, start order) from start to end (µs); what: "replays" (a TinyJit loop's steady state) or
 * "launches"; gap_before and gap_after: the time with no launch between it and the launches left out before and after
 * it (null: none left out on that side), compiling_before and compiling_after: how much of that gap tinygrad's compiler
 * ran (its TINY lane).
 * @typedef {{what:"replays"|"launches", first:number, last:number, start:number, end:number, gap_before:number|null,
 *   gap_after:number|null, compiling_before:number|null, compiling_after:number|null}} TimelineOpening */
/** @typedef {{num:number, device:string, dtype:string, size:number, nbytes:number, alloc_us:number, free_us:number|null,
 *   kernels:number[], writers:string[], readers:string[]}} BufferRow */
/** Every buffer the run allocated, as columns (as tinygrad's VIZ lists them in its memory lanes: each allocation with
 * its size and dtype, its free, and the launches that used it): device and dtype are indices into devices and dtypes,
 * free null where it was never freed, writes and reads the launches (indices into the timeline's columns), kernels the
 * trace's kernels among them (indices into RunMsg.kernels).
 * @typedef {{num:number[], devices:string[], dtypes:string[], device:number[], dtype:number[], size:number[], nbytes:number[],
 *   alloc:number[], free:(number|null)[], writes:number[][], reads:number[][], kernels:number[][]}} BufferTable */
/** Bytes in use after each allocation and free (t: µs, in_use: bytes, buf: the buffer, an index into buffers, -1 for
 * one allocated before the run; as columns), every buffer, the peak (bytes, when) and the buffers alive at it, biggest
 * first; before: what was in use when the run began (tinygrad's high-water mark is before + peak). The chart opens on
 * the timeline's window (TimelineData.opening).
 * @typedef {{t:number[], in_use:number[], buf:number[], buffers:BufferTable, peak:number, peak_us:number|null, before:number,
 *   allocations:number, at_peak:BufferRow[], device_peaks:Record<string, number>, summary:string}} MemoryData */
/** @typedef {{kernel:number, device:string, flops:number, bytes:number, runs:number, time_us:number, intensity:number|null,
 *   gflops:number, gbs:number, bound:string|null, float_gflops:number|null, verdict:string|null,
 *   fraction:number|null, why:string|null}} PointRow */
/** @typedef {{gflops:number, benchmark:number, gbs:number, ridge:number, how:string, measured:string, launch_us:number}} PeaksRow */
/** @typedef {{points:PointRow[], peaks:Record<string, PeaksRow>, notes:string[], ran:number}} RooflineData */
/** tinygrad's host-side spans (trace.compile_times()), as columns in start order: lane (TINY: the compiler, USER: the
 * Tensor methods called; indices into lanes), name (into names), kind (into KINDS of views.compile), start and duration
 * (µs from the capture's start, to 0.1 µs), depth (0: outermost in its lane) and the step a click opens ("" for none);
 * own: [span, its time less the rewrites nested in it] of the spans with rewrites nested in them; totals: the capture's
 * wall time split up (CompileTotals' fields, µs); summary: the same in words.
 * @typedef {{lanes:string[], names:string[], kinds:string[], lane:number[], name:number[], kind:number[], start:number[],
 *   dur:number[], own:number[][], depth:number[], step:StepKey[], totals:Record<string, number>, summary:string}} CompileData */
/** @typedef {{type:"run", kernels:string[][], estimates:(number[]|null)[], timeline:TimelineData, memory:MemoryData,
 *   roofline:RooflineData, compile:CompileData, timings:(string|null)[], retimed:(number[]|null)[]}} RunMsg */
/** @typedef {{type:"retried", kernel:string, opts:string[], summary:string, error:string|null, same:boolean,
 *   times_us:(number|null)[], compare:Record<string, any>|null}} RetryMsg */
/** @typedef {{type:"allowed", kernel:string, opts:OptSpec[], error:string|null}} AllowedMsg */
/** One of BEAM's candidates (Kernel.beam_table's row).
 * @typedef {{index:number, round:number, opts:string[], compiled:boolean, time_us:number|null, winner:boolean}} BeamRow */
/** A kernel's opts in the what-if panel: those applied, who chose them, BEAM's candidates, the retries made so far, and
 * what tgviz run's retries left out and why.
 * @typedef {{opts:OptSpec[], text:string[], steps:(string|null)[], by:string, beam:BeamRow[], beam_cached:boolean|null,
 *   retries:RetryMsg[], not_tried:string[], total_us:number|null, opening:number|null}} OptsInfo */
/** A kernel of the program map (a call of the block's schedules, in run order): what its panel says and where it
 * leads (its first step, its codegen step, its row of the kernel table).
 * @typedef {{index:number, name:string, kind:string, step:StepKey|null, code_step:StepKey|null, row:number|null, ops:string[],
 *   lines:string[], time_us:number|null, runs:number, limit:string|null, bound:string|null, reasons:string[],
 *   schedule:number, reads:number[], writes:number[]}} MapKernel */
/** A buffer of the program map: one state of one of tinygrad's buffers, the kernel that wrote it (null: from before
 * the block) and those that read it, with the reason it exists.
 * @typedef {{index:number, label:string, reason:string, detail:string, where:string, source:string, tinygrad:string,
 *   rule:string, writer:number|null, readers:number[], lift:string|null}} MapBuffer */
/** One view of the program map: "kernels" (a box per kernel, long chains folded) or "lines" (a box per line of the
 * user's code). Its picture: SVG laid out left to right (svg_down, for a small map: top to bottom too, "" for a bigger
 * one; the page shows the one that fits its canvas), a box's data-node its key in boxes ("in..."/"out..." for the
 * stubs of what comes from before the block and goes after it), an arrow's data-key its index in arrows.
 * @typedef {{name:string, svg:string, svg_down:string, boxes:Record<string, number[]>, arrows:number[][]}} MapView */
/** The program map: its views (the first opens), the kernels and buffers, the kernels by cause.
 * @typedef {{type:"programmap", views:MapView[], kernels:MapKernel[], buffers:MapBuffer[], counts:Record<string, number>,
 *   reasons:string[], colours:Record<string, string>, summary:string, notes:string[]}} ProgramMapMsg */
/** One run of a Fusion: its kernels in run order with their device times (µs, summed over launches; null: not timed),
 * the buffers between them, its device time in all and its memory peak (bytes).
 * @typedef {{label:string, kernels:string[], times_us:(number|null)[], buffers:number, time_us:number|null, peak:number}} FusedSide */
/** What if they had fused (Fusion): the schedule that made buffer (an index into ProgramMapMsg.buffers) run again as
 * it was and with a condition lifted, on the same fresh random inputs.
 * @typedef {{type:"fused", buffer:number, lift:string, lifted:string, summary:string, error:string|null, gone:boolean|null,
 *   sides:FusedSide[]}} FusedMsg */
/** Where tinygrad failed inside the capture (tgviz.trace.failure.Failure): the browser opens on it, the node marked.
 * @typedef {{kind:"rewrite"|"compile"|"run", summary:string, error:string, traceback:string, step:StepKey, match:number|null,
 *   node:string|null, line:number|null}} FailureInfo */
/** One thing a search found (tgviz.trace.search.Hit): where it is, a click away.
 * @typedef {{kind:"kernel"|"step"|"origin"|"uop"|"rule"|"code", group:number, step:StepKey|null, match:number|null,
 *   line:number|null, node:string|null, count:number|null, text:string, where:string}} SearchHit */
/** A search's answer: the hits, at most views.search.SHOWN of each kind (counts: how many there are of each).
 * @typedef {{type:"search", text:string, total:number, counts:Record<string, number>, hits:SearchHit[], groups:number[]}} SearchMsg */
/** What Python (or the report's page) sends the trace browser.
 * @typedef {PictureMsg|BusyMsg|ErrorMsg|ExportedMsg|NodeMsg|RulesMsg|UopsMsg|AsmMsg|RunMsg|RetryMsg|AllowedMsg|AccessMsg|SearchMsg|ProgramMapMsg|FusedMsg} KernelMsg */
/** The frontend is drawn and wants the current picture; with the page's selection (sent with each choice, and again
 * where no picture came), which the kernel takes where it differs: ipywidgets sends a model's changes one at a time,
 * each once the kernel's idle status for the one before has come, and one status lost holds every later change back.
 * @typedef {{type:"ready", selection?:Selection}} ReadyMsg */
/** Write the current view as SVG: the part on screen (box: x, y, width, height in the SVG's units), or the whole.
 * @typedef {{type:"export", box?:number[]}} ExportMsg */
/** The node panel of a node of the current selection's graphs.
 * @typedef {{type:"node", key:string}} NodeRequest */
/** The rules tab: every pattern that fired.
 * @typedef {{type:"rules"}} RulesRequest */
/** The uops or asm tab of the kernel of a step.
 * @typedef {{type:"uops"|"asm", step:StepKey, again?:boolean}} ProgramRequest */
/** The access tab of the kernel of a step.
 * @typedef {{type:"access", step:StepKey, again?:boolean}} AccessRequest */
/** The timeline, memory and roofline tabs.
 * @typedef {{type:"run"}} RunRequest */
/** Time kernels again (their display names; [] for the slowest, as trace.retime chooses).
 * @typedef {{type:"retime", kernels:string[]}} RetimeRequest */
/** The opts tinygrad allows next on a kernel, after `before`.
 * @typedef {{type:"allowed", kernel:string, before:OptSpec[]}} AllowedRequest */
/** The kernel compiled and run again with these opts.
 * @typedef {{type:"retry", kernel:string, opts:OptSpec[]}} RetryRequest */
/** The program map.
 * @typedef {{type:"programmap"}} ProgramMapRequest */
/** What if they had fused: run again the schedule that made a buffer of the program map (its index), its condition lifted.
 * @typedef {{type:"fuse", buffer:number}} FuseRequest */
/** Search the trace for text (tgviz.trace.search).
 * @typedef {{type:"search", text:string}} SearchRequest */
/** What the trace browser asks.
 * @typedef {ReadyMsg|ExportMsg|NodeRequest|RulesRequest|ProgramRequest|RunRequest|AllowedRequest|RetryRequest|AccessRequest|SearchRequest|RetimeRequest|ProgramMapRequest|FuseRequest} FrontendMsg */
/** @typedef {{step:string, svg:string}} Landmark */
/** @typedef {{name:string, head:string, html:string, graphs:Landmark[]}} PairSide */
/** @typedef {{type:"pair", index:number, diff:string, sides:(PairSide|null)[]}} PairMsg */
/** A row of the comparison's kernel table, opened.
 * @typedef {{type:"pair", index:number}} PairRequest */
export {};
