// What if: the shown kernel's optimizations (the opts tinygrad applied and who chose them, on a line under the code's
// head) and a sheet over the columns, like the kernel table's, to change them: an editor of the opts (op, axis, amount;
// add one of those tinygrad allows next, remove one, or none at all) that retries the kernel (tgviz/views/whatif.py's
// messages: the kernel is compiled again, run on the original's inputs, timed, compared) and opens the retry's
// comparison (compare.js) in the sheet; BEAM's candidates as a sortable table and a scatter of their times, the winner
// marked (a click on one loads its opts into the editor). The HTML report shows it read-only: the opts, BEAM's
// candidates and the retries made before it was written (tgviz run --what-if's for the slowest kernels), the one that
// tells most (tgviz/trace/whatif.py most_telling) opened on its comparison; for a kernel without them (nor BEAM's
// candidates) the sheet shows the slowest kernel retried, saying so.
import { h, svgEl } from "./dom.js";
import { sortableTable } from "./table.js";
import { open } from "./compare.js";
import { fmtTime } from "./units.js";

/** The kernels of most device time first (the kernel table's total). @param {[string, OptsInfo]} a @param {[string, OptsInfo]} b */
const byTotal = ([, a], [, b]) => (b.total_us ?? 0) - (a.total_us ?? 0);

/** @typedef {import("./ui.js").Ui} Ui */
/** @typedef {import("./messages.js").TreeGroup} TreeGroup */
/** @typedef {import("./messages.js").OptSpec} OptSpec */
/** @typedef {import("./messages.js").BeamRow} BeamRow */
/** @typedef {import("./messages.js").RetryMsg} RetryMsg */
/** @typedef {import("./messages.js").OptsInfo} OptsInfo */

const OPT_OPS = ["UPCAST", "UNROLL", "LOCAL", "GROUP", "GROUPTOP", "TC", "THREAD", "PADTO", "SWAP", "NOLOCALS"];

/** What each opt does (tinygrad's Scheduler.apply_opt, codegen/opt/postrange.py), by amount n, and where the amount is 0
 * (the whole axis). Its axis is tinygrad's numbering of the kernel's axes as they were when it was applied (UNROLL's
 * counts the reduce axes it can unroll, GROUP's the reduce axes); the step it made names the range it split. */
const OPT_WORDS = /** @type {Record<string, [string, string]>} */ ({
  UPCAST: ["each thread computes {n} elements along axis {a} (in registers)", "each thread computes all of axis {a} (in registers)"],
  UNROLL: ["the loop over reduce axis {a} unrolled {n} times", "the loop over reduce axis {a} unrolled whole"],
  LOCAL: ["{n} threads of a workgroup along axis {a}", "a workgroup's threads along all of axis {a}"],
  GROUP: ["reduce axis {a} split over {n} threads of a workgroup, summed in local memory", "reduce axis {a} split over a workgroup's threads"],
  GROUPTOP: ["reduce axis {a} split over {n} threads of a workgroup (its outer part), summed in local memory",
             "reduce axis {a} split over a workgroup's threads (its outer part)"],
  THREAD: ["{n} CPU threads along axis {a}", "CPU threads along all of axis {a}"],
  PADTO: ["axis {a} padded up to a multiple of {n}", "axis {a} padded"], SWAP: ["axis {a} swapped with axis {n}", "axis {a} swapped with axis 0"],
  NOLOCALS: ["no workgroup (local) axes at all", "no workgroup (local) axes at all"], TC: ["tensor cores", "tensor cores"],
});
/** An applied opt's tooltip: what it does, and tinygrad's step that shows it (its name gives the range it split and the
 * amount it came to). @param {OptSpec} o @param {string|undefined} stepName */
const optTitle = (o, stepName) => {
  const words = OPT_WORDS[o[0]]?.[o[2] === 0 ? 1 : 0] ?? o[0];
  return `${optText(o)}: ${words.replaceAll("{n}", String(o[2])).replaceAll("{a}", String(o[1]))}`
    + (stepName ? `; tinygrad's step "${stepName}" shows it (click)` : "");
};

/** An opt as tgviz writes it: UPCAST(0, 4). @param {OptSpec} o */
const optText = (o) => (o[1] === null && o[2] === null ? o[0] : `${o[0]}(${o[1]}, ${Array.isArray(o[2]) ? `(${o[2].join(", ")})` : o[2]})`);

/** BEAM's candidates: time (µs) against the candidate's number, the winner marked; a click picks one.
 * @param {BeamRow[]} rows @param {(row: BeamRow) => void} pick */
function beamScatter(rows, pick) {
  const timed = rows.filter((r) => r.time_us !== null);
  const W = 420, H = 160, L = 44, B = 22, top = 8;
  const svg = svgEl("svg", { class: "tgviz-beam-scatter", width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: "img" });
  const maxT = Math.max(...timed.map((r) => Number(r.time_us)), 1e-9), n = Math.max(rows.length - 1, 1);
  const x = (/** @type {number} */ i) => L + (i / n) * (W - L - 8), y = (/** @type {number} */ t) => top + (1 - t / maxT) * (H - top - B);
  svg.append(svgEl("line", { x1: L, y1: H - B, x2: W - 8, y2: H - B, class: "axis" }), svgEl("line", { x1: L, y1: top, x2: L, y2: H - B, class: "axis" }));
  for (const [t, label] of [[maxT, fmtTime(maxT)], [0, "0"]]) {
    const tx = svgEl("text", { x: L - 4, y: y(Number(t)) + 4, "text-anchor": "end" });
    tx.textContent = `${label}`;
    svg.append(tx);
  }
  const cap = svgEl("text", { x: (W + L) / 2, y: H - 4, "text-anchor": "middle" });
  cap.textContent = "candidate (in the order BEAM tried them) · time";
  svg.append(cap);
  for (const r of timed) {
    const dot = svgEl("circle", { cx: x(r.index), cy: y(Number(r.time_us)), r: r.winner ? 5 : 3, class: r.winner ? "winner" : "candidate",
                                  "data-index": r.index });
    const tip = svgEl("title", {});
    tip.textContent = `#${r.index} ${r.opts.join(", ") || "no opts"}: ${fmtTime(r.time_us)}${r.winner ? " (BEAM's choice)" : ""}`;
    dot.append(tip);
    dot.addEventListener("click", () => pick(r));
    svg.append(dot);
  }
  return svg;
}

/** The what-if line and sheet. show(group) when the shown kernel changes.
 * @param {Ui} ui @param {import("./adapter.js").Adapter} state @param {boolean} page the HTML report (read-only)
 * @param {(key: string) => void} go select a step (an opt's link: the step its application made) */
export function whatIf(ui, state, page, go) {
  /** @type {() => Record<string, OptsInfo>} the state's per kernel, by display name */
  const infos = () => state.model.get("whatif") ?? {};
  const line = h("div", { class: "tgviz-opts-line", title: "the opts tinygrad applied (each: the step where it shows)", hidden: "" });
  ui.codeHead.after(line);
  const sheet = h("div", { class: "tgviz-sheet tgviz-whatif-sheet" });
  const box = h("details", { class: "tgviz-whatif" }, [h("summary", { title: "the shown kernel's opts, changed and retried" }, ["what if…"]), sheet]);
  ui.kernels.after(box);
  box.addEventListener("toggle", () => {
    if (box.open && kernel && !page) ask();
    showOpening();
  });
  /** @type {RetryMsg|null} the written retry the closed sheet opens on: its comparison (a page of graphs) is drawn
   * once the sheet opens, not at every step of its kernel */
  let opening = null;
  const showOpening = () => { if (box.open && opening) { const r = opening; opening = null; showRetry(r); } };
  /** @type {string|null} the kernel shown (display name) */
  let kernel = null;
  /** @type {string|null} the kernel whose retries and BEAM's candidates the sheet shows: the kernel shown, or in the
   * report the slowest kernel retried where the shown one has neither */
  let sheetKernel = null;
  /** @type {OptSpec[]} the opts in the editor */
  let edited = [];
  /** @type {OptSpec[]} the opts tinygrad allows next */
  let allowed = [];
  const status = h("div", { class: "tgviz-whatif-status", role: "status" });
  const editor = h("div", { class: "tgviz-opts-editor" });
  const results = h("div", { class: "tgviz-retries" });
  const compare = h("div", { class: "tgviz-whatif-compare" });
  const beam = h("div", { class: "tgviz-beam" });

  const ask = () => state.send(/** @type {any} */ ({ type: "allowed", kernel, before: edited }));

  function drawEditor() {
    const rows = edited.map((o, i) => {
      const op = h("select", { class: "tgviz-opt-op", title: "the opt" }, OPT_OPS.map((n) => h("option", n === o[0] ? { selected: "" } : {}, [n])));
      const axis = h("input", { class: "tgviz-opt-axis", type: "number", min: "0", value: String(o[1] ?? ""), title: "axis" });
      const amount = h("input", { class: "tgviz-opt-amount", value: o[2] === null ? "" : Array.isArray(o[2]) ? o[2].join(",") : String(o[2]), title: "amount (0: the whole axis)" });
      const change = () => {
        const a = amount.value.trim();
        edited[i] = [op.value, axis.value === "" ? null : Number(axis.value),
                     a === "" ? null : a.includes(",") ? a.split(",").map(Number) : Number(a)];
        ask();
      };
      for (const e of [op, axis, amount]) e.addEventListener("change", change);
      const remove = h("button", { class: "tgviz-opt-remove", title: "remove this opt" }, ["×"]);
      remove.addEventListener("click", () => { edited.splice(i, 1); drawEditor(); ask(); });
      return h("div", { class: "tgviz-opt", "data-opt": optText(o) }, [`${i + 1}.`, op, "axis", axis, "amount", amount, remove]);
    });
    const add = h("select", { class: "tgviz-opt-add", title: "add one of the opts tinygrad allows next" });
    fillAdd(add);
    add.addEventListener("change", () => { if (add.value) { edited.push(allowed[Number(add.value)]); drawEditor(); ask(); } });
    const none = h("button", { class: "tgviz-opts-none", title: "no opts at all" }, ["no opts"]);
    none.addEventListener("click", () => { edited = []; drawEditor(); ask(); });
    const reset = h("button", { class: "tgviz-opts-reset", title: "the opts tinygrad applied" }, ["as applied"]);
    reset.addEventListener("click", () => { edited = [...(infos()[kernel ?? ""]?.opts ?? [])]; drawEditor(); ask(); });
    const go = h("button", { class: "tgviz-retry", title: "compile the kernel again with these opts, run it on the same inputs, compare" }, ["retry"]);
    go.addEventListener("click", () => {
      status.textContent = `retrying ${kernel} with ${edited.map(optText).join(", ") || "no opts"}…`;
      compare.replaceChildren();
      state.send(/** @type {any} */ ({ type: "retry", kernel, opts: edited }));
    });
    editor.replaceChildren(...rows, h("div", { class: "tgviz-opts-tools" }, [add, none, reset, go]));
  }

  /** The add list: the opts tinygrad allows after those in the editor (refilled as its answer comes, the rows kept as
   * they are: a value being typed stays). @param {HTMLSelectElement} add */
  function fillAdd(add) {
    add.replaceChildren(h("option", { value: "" }, [allowed.length ? `+ add (${allowed.length} allowed)` : "+ add"]),
                        ...allowed.map((o, i) => h("option", { value: String(i) }, [optText(o)])));
  }

  /** A retry's comparison (compare.js's page) opened on its one pair: the code diff and both kernels' graphs; or
   * why there is none. @param {RetryMsg} r */
  function showRetry(r) {
    status.textContent = r.error ?? "";
    compare.replaceChildren();
    shown = r.summary;
    mark();
    if (!r.compare) return;
    open(r.compare, compare);
    /** @type {HTMLElement|null} */ (compare.querySelector(".tgviz-pairs tbody tr"))?.click();
  }

  /** @type {string|null} the summary of the retry whose comparison is shown */
  let shown = null;
  const mark = () => { for (const b of results.children) b.classList.toggle("selected", b.textContent === shown); };

  function drawResults() {
    const info = sheetKernel ? infos()[sheetKernel] : undefined;
    results.replaceChildren(...(info?.retries ?? []).map((r) => {
      const b = h("button", { class: `tgviz-link tgviz-retry-result ${r.error ? "refused" : r.same ? "same" : "differs"}`,
                              title: r.error ? "click: why" : "click: its comparison" }, [r.summary]);
      b.addEventListener("click", () => showRetry(r));
      return b;
    }), ...(info?.not_tried?.length ? [h("div", { class: "tgviz-hint tgviz-not-tried" }, [`not retried with: ${info.not_tried.join("; ")}`])] : []));
    mark();
  }

  function drawBeam() {
    const info = sheetKernel ? infos()[sheetKernel] : undefined;
    beam.replaceChildren();
    if (!info || info.beam_cached === null) return;
    if (info.beam_cached) { beam.append(h("div", {}, ["BEAM's result cache answered: no search ran, so there are no candidates."])); return; }
    const rows = info.beam, timed = rows.filter((r) => r.time_us !== null).length;
    const pick = (/** @type {BeamRow} */ r) => {
      edited = r.opts.map((t) => /** @type {OptSpec} */ (parseOpt(t)));
      drawEditor();
      if (!page) { ask(); state.send(/** @type {any} */ ({ type: "retry", kernel, opts: edited })); status.textContent = `retrying BEAM's candidate #${r.index}…`; }
    };
    beam.append(h("div", { class: "tgviz-beam-head" }, [`BEAM tried ${rows.length} candidates, timed ${timed}; its choice is marked` +
                                                        (page ? "" : " (click one to retry it)")]),
                beamScatter(rows, pick),
                sortableTable([{ key: "index", label: "#", num: true }, { key: "round", label: "round", num: true },
                  { key: "opts", label: "opts", fmt: (v) => v.join(", ") || "no opts" },
                  { key: "compiled", label: "compiled", fmt: (v) => (v ? "yes" : "no") },
                  { key: "time_us", label: "time", num: true, fmt: fmtTime, title: "the least of BEAM's timings; – : not timed" },
                  { key: "winner", label: "chosen", fmt: (v) => (v ? "★" : "") }], rows, pick));
  }

  /** Show a group's kernel (null: none). @param {TreeGroup|null} group */
  function show(group) {
    const info = group?.kind === "kernel" ? infos()[group.name] : undefined;
    kernel = info && group ? group.name : null;
    line.hidden = box.hidden = !info;
    if (!info) return;
    const opener = h("button", { class: "tgviz-link tgviz-what-if", title: "change the opts and retry the kernel" }, ["what if…"]);
    opener.addEventListener("click", () => { box.open = true; });
    line.replaceChildren(`opts (${info.by}): `, ...info.text.flatMap((t, i) => {
      const step = info.steps[i];
      const link = h("button", { class: "tgviz-link tgviz-opt-link", title: optTitle(info.opts[i], group?.steps.find((x) => x.key === step)?.name) }, [t]);
      if (step) { link.dataset.step = step; link.addEventListener("click", () => go(step)); } else link.disabled = true;
      return i ? [" · ", link] : [link];
    }), ...(info.text.length ? [] : ["none"]), " ", opener);
    line.dataset.by = info.by;
    edited = [...info.opts];
    allowed = [];
    // the report: the kernels retried when it was written, the slowest first (tgviz run retried the slowest); a kernel
    // with no answer of its own (no retries, no BEAM candidates) opens the sheet on the first of them
    const retried = page ? Object.entries(infos()).filter(([, o]) => o.retries.length).sort(byTotal) : [];
    const instead = page && !info.retries.length && !info.beam.length && retried.length ? retried[0] : null;
    sheetKernel = instead ? instead[0] : kernel;
    const sheetInfo = instead ? instead[1] : info;
    const head = h("div", { class: "tgviz-sheet-head" }, [`what if ${sheetKernel} had other opts? tinygrad applied ${sheetInfo.text.join(", ") || "none"} (chosen by ${sheetInfo.by})`]);
    const close = h("button", { class: "tgviz-sheet-close", title: "close (Escape)" }, ["×"]);
    close.addEventListener("click", () => { box.open = false; });
    head.append(close);
    status.textContent = "";
    compare.replaceChildren();
    shown = null;
    const written = page && sheetInfo.retries.length > 0;  // tgviz run --what-if's retries: the answers the page can give
    const hint = written ? "read-only: what other opts do, measured when this report was written (tgviz run --what-if): each retry's median " +
                           "time and speedup against the opts applied, the original timed again beside each retry; opened on the retry " +
                           "that changed the time most; click one for its comparison and code"
                         : "read-only: the retries made before this report was written";
    /** A retried kernel's name, a click from its steps (the sheet then shows its retries). @param {[string, OptsInfo]} k */
    const link = ([name, o]) => {
      const step = o.steps.find((st) => st);
      const a = h("button", { class: "tgviz-link", title: step ? "its steps; then what if… shows its retries" : "" }, [name]);
      if (step) a.addEventListener("click", () => go(step)); else a.disabled = true;
      return a;
    };
    const insteadNote = instead ? [h("div", { class: "tgviz-hint tgviz-retried-instead" }, ["shown: the retries of ", link(instead),
      `, the slowest kernel retried when this report was written (the kernel shown, ${kernel}, was not retried: ` +
      (info.not_tried.length ? `${info.not_tried.join("; ")})` : `not among the slowest kernels by warm device time, which tgviz run --what-if retries: a re-timed median times its launches, else its launches in the run)`)])] : [];
    // the slowest kernels tgviz run asked about and did not retry (its time ran out): each with why, a click away
    const skipped = page ? Object.entries(infos()).filter(([name, o]) => !o.retries.length && o.not_tried.length && !(instead && name === kernel)).sort(byTotal) : [];
    const skippedNote = skipped.length ? [h("div", { class: "tgviz-hint tgviz-not-retried" }, [
      "not retried: ", ...skipped.flatMap((o, i) => [...(i ? [" · "] : []), link(o), ` (${o[1].not_tried.join("; ")})`])])] : [];
    // the other kernels retried, each a click away
    const others = retried.filter(([name]) => name !== kernel && name !== sheetKernel);
    const elsewhere = others.length ? [h("div", { class: "tgviz-hint tgviz-retried-elsewhere" }, [
      instead ? "also retried: " : written ? "other kernels retried: " : "retried when this report was written: ",
      ...others.flatMap((o, i) => (i ? [" · ", link(o)] : [link(o)]))])] : [];
    // the notebook: the kernels that took most of the run's device time (the kernel table's total: their launches in
    // the run), each a click away (the sheet retries the kernel shown, which the tree's first kernel may be: a random
    // draw's helper, not what the user wants to speed up)
    const slowest = page ? [] : Object.entries(infos()).filter(([, o]) => (o.total_us ?? 0) > 0).sort(byTotal).slice(0, 3);
    // (the kernel shown among them is named, not linked: the others are still a click away)
    const busiest = slowest.map(([name, o]) => /** @type {[string, OptsInfo, boolean]} */ ([`${name} (${fmtTime(o.total_us)})`, o, name === kernel]));
    const named = (/** @type {[string, OptsInfo, boolean]} */ [label, o, shown]) => (shown ? h("b", { class: "tgviz-slowest-shown" }, [`${label}: this one`]) : link([label, o]));
    const worth = busiest.length > (busiest.some(([, , shown]) => shown) ? 1 : 0) ? [h("div", { class: "tgviz-hint tgviz-slowest" }, [
      "most of the run's device time (the kernel table's total): ", ...busiest.flatMap((o, i) => (i ? [" · ", named(o)] : [named(o)]))])] : [];
    if (page) sheet.replaceChildren(head, ...insteadNote, h("div", { class: "tgviz-hint" }, [hint]), ...elsewhere, ...skippedNote, status, results, compare, beam);
    else { drawEditor(); sheet.replaceChildren(head, ...worth, editor, status, results, compare, beam); if (box.open) ask(); }
    drawResults();
    drawBeam();
    // the page opens on an answer: the retry that tells most (whatif.most_telling: the largest change in time beyond noise)
    opening = written && sheetInfo.opening !== null ? sheetInfo.retries[sheetInfo.opening] : null;
    showOpening();
  }

  state.listen((/** @type {any} */ msg) => {
    if (msg.type === "allowed" && msg.kernel === kernel) {
      allowed = msg.opts;
      status.textContent = msg.error ?? "";
      const add = editor.querySelector(".tgviz-opt-add");
      if (add) fillAdd(/** @type {HTMLSelectElement} */ (add));
    } else if (msg.type === "retried" && msg.kernel === kernel) {
      showRetry(msg);
      setTimeout(drawResults, 0);  // the kernel's retries (the whatif state) change with it
    }
  });
  state.model.on("change:whatif", drawResults);
  return { show, box };
}

/** The kernel table's rows with each kernel's opts and who chose them (from the what-if state).
 * @param {import("./messages.js").KernelRow[]} rows @param {Record<string, OptsInfo>|undefined} infos */
export function withOpts(rows, infos) {
  return rows.map((r) => ({ ...r, opts: infos?.[r.label] ? `${infos[r.label].text.join(" · ") || "none"} (${infos[r.label].by})` : null }));
}

/** An opt from its text, "UPCAST(0, 4)" or "NOLOCALS". @param {string} t @returns {OptSpec} */
function parseOpt(t) {
  const m = /^(\w+)\((\d+), (.*)\)$/.exec(t);
  if (!m) return [t, null, null];
  const arg = m[3].startsWith("(") ? m[3].slice(1, -1).split(", ").map(Number) : Number(m[3]);
  return [m[1], Number(m[2]), arg];
}
