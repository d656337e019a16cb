// The panels around a picture: the step's title, the match slider and the pattern that fired, the call stack, the
// kernel's code with its Tensor operations (a schedule: the kernels compiled after it), and the kernel table (opened
// over the columns, as wide as the widget). Kernels are named by their display name (Python's: "E_2 #2" where kernels
// share a name).
import { showCode } from "./codelines.js";
import { h } from "./dom.js";
import { sortableTable } from "./table.js";
import { fmtRange, fmtTime, notSettled, plural } from "./units.js";

/** @typedef {import("./ui.js").Ui} Ui */
/** @typedef {import("./messages.js").PictureMsg} PictureMsg */
/** @typedef {import("./messages.js").OriginInfo} OriginInfo */
/** @typedef {import("./messages.js").KernelRow} KernelRow */
/** @typedef {import("./messages.js").StepKey} StepKey */
/** @typedef {import("./messages.js").ProducedKernel} ProducedKernel */
/** @typedef {import("./messages.js").ScheduleCallsInfo} ScheduleCallsInfo */

/** The step, match and kernel panels around a picture; go(key) selects a step (a schedule's kernels link to theirs). */
export function showDetails(/** @type {Ui} */ ui, /** @type {PictureMsg} */ msg, /** @type {boolean} */ kernelChanged,
                            /** @type {(key: StepKey) => void} */ go) {
  const info = msg.info;
  ui.title.textContent = `${info.title}  (${info.where}, ${plural(info.matches, "match", "matches")})`;
  ui.slider.max = String(info.matches);
  ui.slider.value = String(msg.match === null ? 0 : msg.match + 1);
  ui.slider.disabled = info.matches === 0;
  ui.matchLabel.textContent = msg.match === null ? "whole step" :  // (its matches counted in the title)
    `match ${msg.match + 1} / ${info.matches}`;
  ui.banner.textContent = msg.message || "";
  ui.banner.hidden = !msg.message;
  ui.full.hidden = !msg.partial;
  ui.status.textContent = `${plural(msg.shown, "node")} shown` + (msg.partial ? ` of ${msg.total}` : "");
  ui.matchBox.replaceChildren();
  if (info.error) ui.matchBox.append(h("pre", { class: "tgviz-rewrite-error" }, [info.error]));
  if (msg.match_info) {
    const m = msg.match_info;
    ui.matchBox.append(h("div", { class: "tgviz-pattern" }, [h("b", {}, ["pattern "]), h("code", {}, [m.source]), ` ${m.where} · ${fmtTime(m.us)}`]));
    if (m.diff) ui.matchBox.append(h("pre", { class: "tgviz-uop-diff" }, [m.diff]));
  }
  ui.stack.replaceChildren(h("summary", {}, ["graph_rewrite call site and call stack"]),
                           h("pre", {}, [`${info.file}:${info.line}\n\n${info.stack.join("\n")}`]));
  if (!kernelChanged) return;
  const k = msg.kernel;
  ui.codeHead.textContent = k ? `${k.label ?? k.name}${k.key ? ` · key ${k.key}` : ""} · ${k.device} (${k.renderer}) · global ${JSON.stringify(k.global_size)} · local ${JSON.stringify(k.local_size)}`
                              : `${info.group}: no device code (${info.kind})`;
  showCode(ui.code, k ? k.html : "");
  showOrigins(ui, k ? k.origins : []);
  ui.linesNote.textContent = k?.lines_note || "";
  ui.linesNote.hidden = !k?.lines_note;
  const produced = msg.produced || [];
  if (k || info.kind !== "schedule") return;
  ui.codeHead.textContent = `${info.group}: ${produced.length} kernel${produced.length === 1 ? "" : "s"} compiled after this schedule`;
  const link = (/** @type {ProducedKernel} */ p) => {
    const a = h("button", { class: "tgviz-link", "data-step": p.step, title: "open this kernel's steps" }, [p.name]);
    a.addEventListener("click", () => go(p.step));
    return a;
  };
  if (msg.schedule) ui.code.append(scheduleCalls(msg.schedule, link));
  ui.code.append(h("div", { class: "tgviz-produced" }, produced.length ? produced.map((p) => h("div", {}, [link(p)]))
    : ["none (kernels compiled before are reused)"]));
}

/** How a schedule's calls (the count in its name) and the trace's kernels add up: its calls by kind, the kernels of
 * the calls that compiled nothing here each a link; the trace's kernels, here and after other schedules.
 * @param {ScheduleCallsInfo} s @param {(p: ProducedKernel) => HTMLElement} link @returns {HTMLElement} */
function scheduleCalls(s, link) {
  const plural = (/** @type {number} */ n, /** @type {string} */ word) => `${n} ${word}${n === 1 ? "" : "s"}`;
  // (calls of fewer kernels than calls, some called more than once, say how many kernels their links are)
  const part = (/** @type {ScheduleCallsInfo["parts"][number]} */ p) => h("span", { class: `tgviz-calls-part ${p.kind}` }, [`${p.count} ${p.text}`,
    ...(p.kernels.length ? [` (${p.kernels.length < p.count ? `${plural(p.kernels.length, "kernel")}: ` : ""}`,
                            ...p.kernels.flatMap((k, j) => [j ? ", " : "", link(k)]), ")"] : [])]);
  return h("div", { class: "tgviz-schedule-calls" }, [
    h("div", { class: "tgviz-calls" }, [h("b", {}, [`${plural(s.calls, "call")}: `]), ...s.parts.flatMap((p, i) => [i ? ", " : "", part(p)])]),
    h("div", { class: "tgviz-calls-trace" }, [`the trace's ${plural(s.compiled + s.elsewhere, "kernel")}: ${s.compiled} compiled after `
      + `this schedule, ${s.elsewhere} after other schedules`])]);
}

/** The kernel's Tensor operations and the user's lines that called them; a click shows the lines around.
 * @param {Ui} ui @param {OriginInfo[]} origins */
function showOrigins(ui, origins) {
  ui.origins.replaceChildren(...origins.map((o) => {
    const row = h("details", { class: "tgviz-origin" }, [
      h("summary", {}, [h("b", {}, [o.op + (o.backward ? " (backward)" : "")]), o.where ? ` ← ${o.where}` : " (called before the capture)",
                        ...(o.source ? [": ", h("code", {}, [o.source])] : [])])]);
    if (o.context.length) row.append(h("pre", {}, [o.context.join("\n")]));
    return row;
  }));
  ui.origins.hidden = !origins.length;
}

/** The kernel table (sortable; a row opens the kernel's first step and closes the table), over the columns while open.
 * Built again when its rows change (a re-timing, the devices' peaks measured); retime (the widget's, none in the report)
 * asks for the slowest kernels to be timed again (as trace.retime chooses).
 * @param {Ui} ui @param {(KernelRow & {opts?: string|null})[]} kernels @param {(key: StepKey) => void} select
 * @param {(() => void)|null} [retime] */
export function kernelTable(ui, kernels, select, retime = null) {
  const dims = (/** @type {number[]|null} */ v) => (v ? `[${v.join(", ")}]` : "–");
  ui.kernels.hidden = !kernels.length;
  const close = h("button", { class: "tgviz-sheet-close", title: "close (Escape)" }, ["×"]);
  close.addEventListener("click", () => { ui.kernels.open = false; });
  const again = retime ? [h("button", { class: "tgviz-retime", title: "time kernels again, each on its own after warm-up launches "
    + "until its median settles, until the slowest by device time are warm medians, not cold first launches" }, ["time the slowest again"])] : [];
  again.forEach((b) => b.addEventListener("click", () => { b.textContent = "timing…"; b.setAttribute("disabled", ""); retime?.(); }));
  const cold = kernels.filter((k) => k.cold).length;
  // kernels by cause: each counted once, by the first reason of the buffers it writes (the program map's vocabulary)
  /** @type {Map<string, number>} */
  const causes = new Map();
  for (const k of kernels) if (k.causes?.length) causes.set(k.causes[0], (causes.get(k.causes[0]) ?? 0) + 1);
  const byCause = causes.size ? h("div", { class: "tgviz-causes" }, [`${plural(kernels.length, "kernel")} by cause: `
    + [...causes].map(([r, n]) => `${r} ${n}`).join(", ")]) : "";
  const sheet = h("div", { class: "tgviz-sheet" }, [h("div", { class: "tgviz-sheet-head" }, [
    "per kernel: launch dimensions, tinygrad's estimates of FLOPs and bytes, launches and their measured time (median, spread; "
    + "❄: one cold launch, no warm measurement), which limit it ran into and how close, its compile time, the matches of its "
    + `steps, why it ends where it does; click a header to sort, a row to open the kernel${cold ? ` · ${cold} timed by one cold launch` : ""}`,
    ...again, close]), byCause]);
  ui.kernels.replaceChildren(h("summary", { title: "per kernel: launch dimensions, tinygrad's estimates, measured time, limit, compile time, matches, causes" },
                                [`kernel table (${kernels.length})`]), sheet);
  // (its key on its name's hover, not a column of its own: the table fits a notebook's 841 px without a sideways scroll)
  sheet.append(sortableTable([{ key: "label", label: "kernel", breaks: true, tip: (r) => `${r.label} · key ${r.key ?? "–"}: tinygrad's key of its AST, `
        + "the same in every run (accepted wherever a kernel is named)", title: "tinygrad's name; kernels that share one are "
        + "numbered in compile order (hover: its key)" },
      { key: "global_size", label: "global", fmt: dims },
      { key: "local_size", label: "local", fmt: dims }, { key: "flops", label: "FLOPs", num: true, title: "tinygrad's estimate" },
      { key: "bytes", label: "bytes", num: true, title: "tinygrad's estimate of the bytes moved" },
      { key: "runs", label: "runs", num: true, title: "launches inside the capture (a launch counts for one kernel: kernels that "
        + "compiled to one program have its launches in the first one's row, see program)", tip: inTheRun },
      { key: "time_us", label: "total", num: true, fmt: fmtTime, tip: inTheRun,
        title: "measured device time of its launches in the capture, in total (the median beside it is one launch's, re-timed after the capture where the spread says so)" },
      ...timeColumns(), { key: "compile_total_us", label: "compile, all", num: true, fmt: fmtTime,
        title: "all its compiling took: its share of its schedule, its codegen, render and device compile (the timeline's "
        + "\"device compile\" is that last part only), its first launch beyond its device time (trace.compile_table()'s total_us)" },
      // (only where kernels share a program: the column says nothing of the others)
      ...(kernels.some((k) => k.shares.length || k.counted_in) ? [{ key: "shares", label: "program", clip: true, fmt: (/** @type {any} */ _v,
        /** @type {KernelRow} */ r) => programOf(r), title: "kernels that compiled to the same program (the same code) share its "
        + "launches: they are counted in the first one's row" }] : []),
      { key: "matches", label: "matches", num: true, title: "pattern matches in the kernel's rewrite steps, in total" },
      { key: "causes", label: "cause", clip: true, title: "why the kernel ends where it does: the reasons of the buffers it writes (the program map)",
        fmt: (/** @type {string[]|undefined} */ v) => (v?.length ? v.join(", ") : "–") },
      { key: "opts", label: "opts", clip: true, title: "the optimizations tinygrad applied, and who chose them (heuristic, BEAM, ...)",
        fmt: (/** @type {string|null} */ v) => v ?? "–" }],
      kernels, (row) => { ui.kernels.open = false; select(row.step); }));
}

/** A kernel's times in words, where its median is not of its warm launches in the capture: re-timed after it, what
 * each figure is, "224.5 µs: the median of 16 runs re-timed after the run (warm); the run's launch took 499.3 µs"; a
 * single cold launch, that it is one; else "". @param {KernelRow} r */
function inTheRun(r) {
  if (r.cold) return `${fmtTime(r.median_us)}: its one launch in the run, cold (the device's first run of the kernel, its program `
    + "just loaded): no warm measurement of it, which trace.retime() (tgviz run --retime, the widget's \"time the slowest again\") makes";
  if (r.timed !== "re-timed" || r.median_us === null) return "";
  const run = r.runs === 1 ? `the run's launch took ${fmtTime(r.time_us)}`
    : `the run's ${plural(r.runs, "launch", "launches")} took ${fmtTime(r.time_us)} in total`;
  return `${fmtTime(r.median_us)}: the median of ${plural(r.timed_runs, "run")} re-timed after the run (warm${notSettled(r.settled)}); ${run}`;
}

/** The kernel table's time and limit columns: the median with its spread and where it comes from, the limit.
 * @returns {import("./table.js").Column[]} */
function timeColumns() {
  const spread = (/** @type {KernelRow} */ r) => (r.median_us === null ? "–" : r.cold ? "❄ 1 cold launch"
    : `${fmtRange(r.min_us, r.max_us)}, ${r.timed === "re-timed" ? plural(r.timed_runs, "re-run") + notSettled(r.settled) : plural(r.timed_runs, "launch", "launches")}`);
  return [{ key: "median_us", label: "median", num: true, fmt: (v, r) => (v === null ? "–" : `${r.cold ? "❄ " : ""}${fmtTime(v)}`), tip: inTheRun,
            title: "the median of its timed runs: re-timed after the capture where it was (warm), else its launches in the capture; "
            + "❄: a single cold launch, the device's first run of the kernel: no measurement of it warm" },
          { key: "timed_runs", label: "spread", fmt: (_v, r) => spread(r), num: true, wrap: true, tip: inTheRun, title: "min – max of its timed runs and how many: its launches in the run (as many as runs), or its re-runs after the run (re-timed, warm; not settled: a bound stopped them before the median settled)" },
          { key: "roof_fraction", label: "limit, % of roof", num: true, wrap: true, fmt: (_v, r) => limit(r), tip: (r) => r.why ?? "",
            title: "what limits it: memory or compute, and the fraction of that roof it reached; or latency (too little work "
            + "to fill the device), and its median in launch floors (the device's emptiest kernel's time) or, too few workgroups, "
            + "the compute units they keep busy; hover a cell: why; "
            + "– until the device's peaks are measured (open the roofline)" }];
}

/** A kernel's limit in a few characters, Python's (tgviz.trace.verdicts.Verdict.label): "memory 45%", "latency 4.5×
 * floor", "latency 65×, 1/2 units", "below roofs 0.12%"; a row of an older page has none. @param {KernelRow} r */
const limit = (r) => r.limit ?? r.bound ?? "–";

/** Which row counts a kernel's launches, in words: a kernel that compiled to another's program has none of its own (a
 * launch of the program counts for the first of them). @param {KernelRow} r */
function programOf(r) {
  const name = (/** @type {string} */ n) => `${n}'s`;
  if (r.counted_in) return `its launches are counted in ${name(r.counted_in)} row (same program)`;
  return r.shares.length ? `also counts ${r.shares.map(name).join(", ")} launches (same program)` : "";
}
