// The trace browser's elements: three columns (tree | graphs | code: the node panel docked on top of it) under a line
// with the summary and the kernel table (opened over the columns). Built once per view; the other modules fill them and
// listen on them.
import { h } from "./dom.js";

/** The widget's elements, by role. @typedef {ReturnType<typeof buildUi>} Ui */

export function buildUi() {
  const ui = {
    root: h("div", { class: "tgviz-root", tabindex: "0" }),  // (keys.js keeps the notebook's plain keys out, not its Ctrl+S)
    style: h("style"),
    summary: h("div", { class: "tgviz-summary" }),
    errorBox: h("pre", { class: "tgviz-error" }),
    kernels: h("details", { class: "tgviz-kernels" }),  // its table opens over the columns (details.js kernelTable)
    run: h("details", { class: "tgviz-run" }),  // the timeline, memory and roofline tabs, likewise (runview.js)
    program: h("details", { class: "tgviz-progmap" }),  // the program map, likewise (programmap.js)
    // the elements marked tgviz-needs-kernel are off while no kernel answers (widget.js)
    filter: h("input", { class: "tgviz-filter tgviz-needs-kernel", type: "search", placeholder: "search: kernels, ops, lines, UOps, rules, code (/)",
                         "aria-label": "search the trace (/ or Ctrl-F); the tree below keeps the kernels and steps named so" }),
    hideEmpty: h("input", { type: "checkbox", class: "tgviz-hide-empty" }),
    tree: h("div", { class: "tgviz-tree tgviz-needs-kernel", role: "tree", tabindex: "0", "aria-label": "rewrite steps: ↑/↓ to move" }),
    busiest: h("button", { class: "tgviz-busiest tgviz-needs-kernel", title: "go to the step with the most matches" }, ["most matches"]),
    title: h("div", { class: "tgviz-title" }),
    slider: h("input", { class: "tgviz-slider tgviz-needs-kernel", type: "range", min: "0", max: "0", value: "0" }),
    prev: h("button", { class: "tgviz-prev tgviz-needs-kernel", title: "previous match (←)" }, ["◀"]),
    next: h("button", { class: "tgviz-next tgviz-needs-kernel", title: "next match (→)" }, ["▶"]),
    matchLabel: h("span", { class: "tgviz-match-label", title: "click to type the match to show (0: the whole step)" }),
    // the match typed (a model's step has thousands: the slider moves dozens a pixel); Enter goes there (widget.js)
    matchInput: h("input", { class: "tgviz-match-input tgviz-needs-kernel", type: "number", min: "0", hidden: "",
                           "aria-label": "the match to show (0: the whole step): Enter to go, Escape to leave" }),
    fit: h("button", { class: "tgviz-fit", title: "fit the whole graph in view (f)" }, ["fit"]),
    one: h("button", { class: "tgviz-one", title: "one SVG pixel per screen pixel (1)" }, ["1:1"]),
    zoomChange: h("button", { class: "tgviz-zoom-change", title: "zoom to what changed (z): the match's own nodes (what it replaced, its replacement), readable on the replacement where all of them are not; again: every node marked changed, whole (those tinygrad rebuilt above the match's own too)" }, ["zoom to change"]),
    full: h("button", { class: "tgviz-full tgviz-needs-kernel", title: "lay out the whole graph (may be slow)" }, ["full graph"]),
    raw: h("button", { class: "tgviz-raw tgviz-needs-kernel", title: "the raw graph: every UOp, nothing folded (r)" }, ["raw"]),
    exportBtn: h("button", { class: "tgviz-export tgviz-needs-kernel", title: "save the part of the graph on screen as SVG (shift: the whole picture)" }, ["Export SVG"]),
    toggleTree: h("button", { class: "tgviz-toggle-tree", title: "hide or show the step tree" }),
    toggleCode: h("button", { class: "tgviz-toggle-code", title: "hide or show the code panel" }),
    maximise: h("button", { class: "tgviz-maximise", title: "fill the window (m); Escape returns" }),
    treeStrip: h("button", { class: "tgviz-strip tgviz-strip-tree", title: "show the step tree" }, ["tree ▸"]),
    codeStrip: h("button", { class: "tgviz-strip tgviz-strip-code", title: "show the code panel" }, ["◂ code"]),
    dragTree: h("div", { class: "tgviz-handle tgviz-handle-tree", title: "drag to resize the step tree" }),
    dragCode: h("div", { class: "tgviz-handle tgviz-handle-code", title: "drag to resize the code panel" }),
    status: h("div", { class: "tgviz-status", role: "status" }),
    banner: h("div", { class: "tgviz-banner" }),
    staticNote: h("div", { class: "tgviz-static-note", hidden: "" }, ["static picture — run the cell again to explore"]),
    canvas: h("div", { class: "tgviz-canvas" }),
    stage: h("div", { class: "tgviz-stage" }),
    matchBox: h("div", { class: "tgviz-matchinfo" }),
    nodePanel: h("div", { class: "tgviz-node-panel", hidden: "" }),
    codeHead: h("div", { class: "tgviz-code-head" }),
    origins: h("div", { class: "tgviz-origins" }),
    linesNote: h("div", { class: "tgviz-lines-note", hidden: "" }),
    code: h("div", { class: "tgviz-code" }),
    codeTabs: h("div", { class: "tgviz-code-tabs", role: "tablist" }),  // code | uops | asm (program.js)
    uops: h("div", { class: "tgviz-uops", hidden: "" }),
    asm: h("div", { class: "tgviz-asm", hidden: "" }),
    rulesBtn: h("button", { class: "tgviz-rules-toggle tgviz-needs-kernel", title: "every pattern that fired, most often first" }, ["rules"]),
    rules: h("div", { class: "tgviz-rules", hidden: "" }),
    stack: h("details", { class: "tgviz-stack" }),
    results: h("div", { class: "tgviz-results", hidden: "", "aria-label": "search hits" }),  // search.js
    failure: h("div", { class: "tgviz-failure", hidden: "", role: "alert" }),  // failure.js
  };
  ui.canvas.append(ui.stage, h("div", { class: "tgviz-spinner" }, ["laying out…"]));
  const left = h("div", { class: "tgviz-left" }, [ui.treeStrip,
    ui.filter, ui.results, h("div", { class: "tgviz-tree-tools" }, [h("label", { class: "tgviz-hide-label tgviz-needs-kernel" }, [ui.hideEmpty, " hide steps without matches"]),
                                                      ui.busiest, ui.rulesBtn]), ui.tree, ui.rules]);
  const centre = h("div", { class: "tgviz-centre" }, [
    ui.title, h("div", { class: "tgviz-controls" }, [ui.toggleTree, ui.prev, ui.slider, ui.next, ui.matchLabel, ui.matchInput, ui.fit, ui.one,
                                                      ui.zoomChange, ui.full, ui.raw, ui.exportBtn, ui.maximise,
                                                      ui.toggleCode]),
    ui.staticNote, ui.failure, ui.banner, ui.canvas, ui.matchBox, ui.status]);
  const right = h("div", { class: "tgviz-right" }, [ui.codeStrip, ui.nodePanel, ui.codeHead, ui.origins, ui.codeTabs, ui.linesNote, ui.code, ui.uops,
                                                      ui.asm, ui.stack]);
  const main = h("div", { class: "tgviz-main" }, [left, ui.dragTree, centre, ui.dragCode, right]);
  const top = h("div", { class: "tgviz-top" }, [ui.summary, ui.program, ui.kernels, ui.run]);
  ui.root.append(ui.style, top, ui.errorBox, main);
  return { ...ui, left, centre, right, main };
}

/** The columns' box as CSS variables on the root, their top in the widget (--tg-cols-top) and their height (--tg-cols-h),
 * kept as the window, the widget's height or the top bar's lines change: the sheets over the columns take them, so an
 * open sheet stays over the columns, its foot (and its sideways scroll bar) the widget's. @param {Ui} ui */
export function columnsBox(ui) {
  const set = () => {
    ui.root.style.setProperty("--tg-cols-top", `${ui.main.offsetTop}px`);
    ui.root.style.setProperty("--tg-cols-h", `${ui.main.offsetHeight}px`);
  };
  const watch = new ResizeObserver(set);
  for (const e of [/** @type {HTMLElement} */ (ui.summary.parentElement), ui.errorBox, ui.main]) watch.observe(e);
}

/** The sheets that open over the columns (the program map, the kernel table, the run's tabs, what if…), one at a time: opening one
 * closes the others. Returns close(): closes the open one, and says whether one was (Escape's work).
 * @param {HTMLDetailsElement[]} sheets */
export function oneSheet(sheets) {
  for (const s of sheets) s.addEventListener("toggle", () => { if (s.open) for (const o of sheets) if (o !== s) o.open = false; });
  return () => {
    const open = sheets.filter((s) => s.open);
    for (const s of open) s.open = false;
    return open.length > 0;
  };
}
