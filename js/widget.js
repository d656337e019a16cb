// tgviz trace browser: tree | before/after graphs with match stepping | generated code. Plain ESM for anywidget; the
// standalone HTML report (report.js) runs the same code on a recorded model. Messages and state are those of
// tgviz/views/messages.py (adapter.js types them): keys come from Python and are never built here.
// This module puts the others together and holds the selection's picture: the one shown, and the static picture a
// saved notebook shows without its kernel (picturecache.js keeps the pictures received). The others: ui.js (the
// elements), panels.js (columns and height, maximising), panzoom.js (the view on the graph), tree.js (the steps),
// details.js (the panels around a picture, the kernel table), linking.js (nodes, code lines), nodepanel.js (the node
// panel), rules.js (the rules tab), keys.js (the keyboard), asking.js (a picture asked for, and asked again),
// matchinput.js (a match typed). Until the kernel answers (a saved notebook without its
// kernel: never), the controls that need it are off.
// program.js: the code column's uops, asm and access tabs (linked through linking.js); search.js: the search box and its
// hits; failure.js: where tinygrad failed, which the browser opens on. programmap.js: the program map, the sheet a trace
// opens on where the model's `opening` says "program" (tgviz/views/failure.py opening decides).
import { Adapter, sameSelection } from "./adapter.js";
import { asking } from "./asking.js";
import { codeLine } from "./codelines.js";
import { kernelTable, showDetails } from "./details.js";
import { scrollWithin } from "./dom.js";
import { showFailure } from "./failure.js";
import { keys } from "./keys.js";
import { linking } from "./linking.js";
import { matchInput } from "./matchinput.js";
import { pageNode, showNode } from "./nodepanel.js";
import { showRules } from "./rules.js";
import { keptHeight, maximiser, oneRow, sidePanels } from "./panels.js";
import { panZoom } from "./panzoom.js";
import { PictureCache } from "./picturecache.js";
import { programTabs } from "./program.js";
import { programMap } from "./programmap.js";
import { runView } from "./runview.js";
import { computed, searchBox } from "./search.js";
import { stepTree } from "./tree.js";
import { buildUi, columnsBox, oneSheet } from "./ui.js";
import { whatIf, withOpts } from "./whatif.js";

/** @typedef {import("./messages.js").Selection} Selection */
/** @typedef {import("./messages.js").PictureMsg} PictureMsg */
/** @typedef {import("./messages.js").KernelMsg} KernelMsg */
/** @typedef {import("./messages.js").StepKey} StepKey */
/** @typedef {import("./messages.js").TreeGroup} TreeGroup */
/** @typedef {import("./messages.js").TreeStep} TreeStep */

// a tree of more rows than this is built once the first picture is on screen (or after TREE_WAIT_MS, none coming): a big
// trace's rows are written as HTML in one go, 0.6 s for a model's 22,210, which the first graph waited for
const TREE_LATER_ROWS = 3000;
const TREE_WAIT_MS = 2000;
const STATIC_AFTER_MS = 3000;  // no word from the kernel this long after asking: a saved notebook without its kernel

/** @param {{ model: import("./adapter.js").Model, el: HTMLElement }} ctx */
function render({ model, el }) {
  el.classList.add("tgviz");
  const ui = buildUi(), state = new Adapter(model);
  const page = el.classList.contains("tgviz-fullpage");  // the HTML report: the whole window, always
  ui.root.classList.toggle("tgviz-page", page);
  ui.maximise.hidden = page;
  el.append(ui.root);
  keptHeight(ui);
  columnsBox(ui);
  ui.style.textContent = state.codeCss;
  ui.summary.textContent = state.summary.split("\n")[0];  // one line: the kernels are in the tree
  ui.summary.title = state.summary;
  ui.errorBox.textContent = state.error;
  ui.errorBox.hidden = !state.error;
  const layout = sidePanels(ui);
  oneRow(/** @type {HTMLElement} */ (ui.prev.parentElement), [ui.fit, ui.one, ui.zoomChange, ui.full, ui.raw, ui.exportBtn, ui.maximise, ui.toggleCode],
         [ui.one, ui.zoomChange, ui.full, ui.toggleCode, ui.maximise, ui.exportBtn, ui.raw, ui.fit]);
  const view = panZoom(ui);
  // maximised: the graph keeps its view (what was at the canvas's centre stays there, as close), taken as the view it
  // opened on; back: the view it had in the cell where the user did not move it meanwhile, else what they looked at
  // (panzoom.js's back); the selected row in view. Neither zooms to a hovered code line: the layout moving under a
  // still pointer hovers whatever line comes under it.
  /** @typedef {ReturnType<typeof view.keep>} KeptView */
  /** @type {KeptView|null} the view in the cell, kept while maximised */
  let inline = null;
  /** @type {KeptView|null} the maximised one, kept as it ends */
  let wide = null;
  const max = maximiser(ui, (on) => { if (on) inline = view.keep(); else wide = view.keep(); }, (on) => {
    layout();
    requestAnimationFrame(() => {
      if (on && inline) { view.back(inline, inline); view.opened(); }
      else if (on || !inline || !wide) { view.initial(); view.opened(); } else view.back(inline, wide);
      tree.markSelected();
    });
  });
  const groups = state.tree;
  /** @type {Map<StepKey, {group: TreeGroup, step: TreeStep}>} */
  const steps = new Map(groups.flatMap((g) => g.steps.map((s) => [s.key, { group: g, step: s }])));
  const cache = new PictureCache(64);  // revisiting a step shows it at once, without a round trip to the kernel
  const tree = stepTree(ui, groups, () => state.selected, (key) => select(key));
  const links = linking(ui, state, view, (key, v, m = null) => select(key, m, v));
  const program = programTabs(ui, state, links);  // the code column's uops, asm and access tabs
  program.prefer(state.model.get("tab") ?? "code");
  const run = runView(ui, () => state.send({ type: "run" }), (key) => select(key));  // the timeline, memory, roofline tabs
  const opts = whatIf(ui, state, page, (key) => select(key));
  const map = programMap(ui, () => state.send({ type: "programmap" }), (key) => select(key), (row) => {  // a kernel's table row
    ui.kernels.open = true;
    const tr = ui.kernels.querySelector(`tbody tr[data-index="${row}"]`);
    for (const s of ui.kernels.querySelectorAll("tbody tr.selected")) s.classList.remove("selected");
    tr?.classList.add("selected");
    scrollWithin(tr);
  }, (row) => state.kernels[row], page ? null : (buffer) => state.send({ type: "fuse", buffer }));
  const search = searchBox(ui, state, (hit) => {  // a hit clicked: where it is, its node picked or its code line marked
    if (hit.step === null) return;
    if (hit.kind === "code" && hit.line !== null) { const n = hit.line; goThen(hit.step, null, () => clickLine(n)); }
    else if (hit.kind === "uop" && hit.node) go(hit.step, hit.match, hit.node);
    else if (hit.kind === "origin") goThen(hit.step, hit.match, () => {  // what the op computes in the kernel, marked and zoomed to
      const all = computed(ui.stage), made = new Set(hit.node?.split(" ") ?? []), mine = all.filter((k) => made.has(k));
      const keys = mine.length ? mine : all;  // (a trace that does not say which UOps the op made: all the kernel computes)
      links.pin(keys, [], null);
      const ops = shownMsg?.kernel?.origins.map((o) => o.op).join(", ");
      if (keys.length) ui.status.textContent = `${keys.length} UOp${keys.length === 1 ? "" : "s"} marked: ` +
        (mine.length ? "what this op computes in the kernel" : `what the kernel computes${ops ? ` (${ops})` : ""}`);
    });
    else go(hit.step, hit.match);
  });
  const closeSheet = oneSheet([ui.program, ui.kernels, ui.run, opts.box]);  // the program map, the kernel table, the run's tabs, what if…
  let mapGaveWay = false;  // the map a trace opens on, closed for the kept picture while no kernel answered
  /** @type {Selection|null} the selection drawn */
  let shown = null;
  /** @type {TreeGroup|null} its group */
  let shownGroup = null;
  /** @type {PictureMsg|null} the picture drawn (its node_matches: the node panel's matches) */
  let shownMsg = null;
  /** @type {{step: StepKey, match: number|null, fn: () => void}|null} what to do once that selection is drawn */
  let then = null;
  /** @type {(() => void)|null} a view key (f, 1, z) pressed while the selection's picture was on its way: done again
   * on it once drawn (its opening view had undone it) */
  let viewKey = null;
  /** A view key's action: on the picture shown, and on the selection's once drawn. @param {() => void} fn */
  const onView = (fn) => { fn(); viewKey = drawnNow() ? null : fn; };
  /** Whether the picture drawn is the selection's. */
  const drawnNow = () => shown !== null && sameSelection(shown, state.selection());

  /** Go to a step and match, and do fn once it is drawn (at once where it is drawn already).
   * @param {StepKey} step @param {number|null} match @param {() => void} fn */
  function goThen(step, match, fn) {
    ui.program.open = false;  // (drawn already, under the map: it gives way all the same)
    if (shown && shown.step === step && shown.match === match && step === state.selected && match === state.match) { fn(); return; }
    then = { step, match, fn };
    go(step, match);
  }
  /** A code line of the kernel shown, clicked: marked, its UOps shown in the graph the renderer consumed. @param {number} n */
  const clickLine = (n) => codeLine(ui.code, n)?.dispatchEvent(new MouseEvent("click", { bubbles: true }));
  /** @type {import("./messages.js").FailureInfo|null} where tinygrad failed: the trace opens there */
  const failure = state.model.get("failure")?.step ? state.model.get("failure") : null;
  /** The line a compiler named, marked in the code and scrolled to (the graph stays on the node picked). @param {number} n */
  const markLine = (n) => {
    const e = codeLine(ui.code, n);
    e?.classList.add("tgviz-line-hl");
    scrollWithin(e);
  };
  /** To the failure: its step and match, the UOp it failed on picked, a compiler's line marked. */
  const toFailure = () => {
    if (!failure) return;
    if (failure.node) links.pickNext(failure.node);
    const line = failure.line;
    goThen(failure.step, failure.match, () => { links.repick(); if (line !== null) markLine(line); });
  };
  showFailure(ui, failure, toFailure);
  if (failure?.node) links.pickNext(failure.node);  // (the state opens on its step and match: see tgviz/views/failure.py)
  if (failure && failure.line !== null) { const line = failure.line; then = { step: failure.step, match: failure.match, fn: () => markLine(line) }; }

  /** Go to a step and match by key; node: pick that node there. @param {StepKey} step @param {number|null} match
   * @param {string} [node] */
  function go(step, match, node) {
    ui.program.open = false;  // (the step may be the one under the map: it gives way all the same)
    if (node !== undefined) links.pickNext(node);
    if (step !== state.selected) select(step, match);
    else if (match !== state.match) setMatch(match);
    else if (node !== undefined) links.repick();
  }

  /** @param {PictureMsg} msg */
  function showPicture(msg) {
    cache.put(msg);
    if (!sameSelection(msg, state.selection())) return;  // stale: a newer selection was made
    waits.notBusy();
    if (shown && sameSelection(msg, shown)) return;
    draw(msg);
  }

  /** @param {PictureMsg} msg */
  function draw(msg) {
    const group = steps.get(msg.step)?.group ?? null;
    const sameStep = shown !== null && shown.step === msg.step && ui.stage.querySelector("svg");
    shown = { step: msg.step, match: msg.match, view: msg.view };
    shownMsg = msg;
    ui.stage.innerHTML = msg.svg;  // SVG built by tgviz.draw.svg: every text is escaped there
    ui.raw.classList.toggle("active", msg.view.startsWith("raw:"));  // raw, or folded (tgviz.fold)
    ui.stage.dataset.step = msg.step;
    ui.stage.dataset.match = msg.match === null ? "" : String(msg.match);
    showDetails(ui, msg, group !== shownGroup, select);  // first: its banner and pattern line take the canvas's room
    if (group !== shownGroup) opts.show(group);
    if (!ui.canvas.clientWidth) unplaced = true;  // not laid out yet (drawn before the page placed the widget): see below
    else if (sameStep) view.follow(); else view.initial();  // a new step opens readable; a new match keeps the zoom
    if (group !== shownGroup) program.kernel(msg.kernel, msg.step);
    links.drawn(group !== shownGroup ? msg.kernel : undefined);
    shownGroup = group;
    tree.markSelected();
    if (!tree.built) requestAnimationFrame(() => requestAnimationFrame(buildTree));  // (once the frame that paints it is done)
    if (viewKey) { const fn = viewKey; viewKey = null; fn(); }
    if (then && then.step === msg.step && then.match === msg.match) { const fn = then.fn; then = null; fn(); }
  }

  // a picture drawn before the widget had a size opens on its view once it has one, with its tree row in view
  let unplaced = false;
  new ResizeObserver(() => {
    if (!unplaced || !ui.canvas.clientWidth) return;
    unplaced = false;
    view.initial();
    tree.markSelected();
  }).observe(ui.canvas);

  function showCached() {
    const sel = state.selection(), kept = state.keptPicture();
    const msg = cache.get(sel) ?? (kept?.svg && sameSelection(kept, sel) ? kept : undefined);
    if (msg) showPicture(msg);
    else if (!ui.staticNote.hidden) ui.status.textContent = "no kernel answers: run the cell again to explore";
  }

  /** Select a step (and a match of it) by key, in a view (default: auto). @param {StepKey} key
   * @param {number|null} [match] @param {import("./messages.js").View} [v] */
  function select(key, match = null, v = "auto") {
    ui.program.open = false;  // a step chosen (the tree, a key, a link): the map gives way to it
    mapGaveWay = false;
    viewKey = null;
    tree.choose();  // (before the model's change: its listener marks the row)
    state.select(key, match, v);
    tree.markSelected();
    showCached();
  }

  /** @param {number} dir -1 or +1; from the whole step (null) +1 goes to the first match */
  function stepMatch(dir) {
    const n = steps.get(state.selected)?.step.matches ?? 0;
    const cur = state.match;
    const m = Math.max(-1, Math.min(n - 1, (cur === null ? -1 : cur) + dir));
    setMatch(m < 0 ? null : m);
  }

  /** @param {number|null} m */
  function setMatch(m) {
    if (m === state.match) return;
    viewKey = null;
    state.setMatch(m);
    showCached();
  }

  /** @param {number} dir */
  function moveStep(dir) {
    const key = tree.moved(dir);
    if (key) select(key);
  }

  // a saved notebook reopened: the models come back from the notebook's widget state, but no kernel answers. Then the
  // picture kept with it (the selected step, as last shown) stays, with a note.
  const kept = state.keptPicture();
  if (kept?.svg) cache.put(kept);  // on first display too: the picture at once, before the kernel's answer
  let heard = false;
  const unmark = state.unmarkRestored();  // (a saved notebook opened: restoring its widgets marked it changed)
  /** The controls that need the kernel, off (dimmed, not clickable) until it answers. @param {boolean} off */
  const offline = (off) => {
    ui.root.classList.toggle("tgviz-offline", off);
    for (const e of ui.root.querySelectorAll(".tgviz-needs-kernel")) e.setAttribute("aria-disabled", String(off));
  };
  offline(true);
  function noKernel() {
    if (heard) return;
    unmark("none");  // no kernel knows this widget: it was restored from the saved notebook, which is unchanged
    ui.staticNote.hidden = false;
    if (!kept) return;
    mapGaveWay = ui.program.open;
    ui.program.open = false;  // the map needs the kernel: the kept picture is what there is to see
    draw(kept);
    shown = null;  // a picture the kernel sends later is drawn over it
  }

  const waits = asking(ui, () => state.send({ type: "ready", selection: state.selection() }), () => drawnNow());
  /** The selection changed (a kernel's page): where the kernel undid a choice of the user's still on its way, the
   * choice is made again; a kernel's own is shown from the cache where it is there; its picture, or word that it is
   * being laid out, is due (see above). */
  function selectionChanged() {
    const who = state.selectionChange();
    if (who === "undone") return;  // (chosen again: its own change follows)
    if (who === "kernel") showCached();
    if (drawnNow()) { waits.notBusy(); return; }
    if (heard) waits.later();
  }
  if (!page) for (const name of ["selected", "match", "view"]) state.model.on(`change:${name}`, selectionChanged);

  state.listen((msg) => {
    if (!heard) {
      heard = true; ui.staticNote.hidden = true; offline(false); unmark("kernel");  // (reopened, its kernel running: unchanged if its state is the saved one)
      // a kernel busy past STATIC_AFTER_MS (Run All: the cells after this one) answers late: the map comes back, unless
      // the user has chosen a step or a sheet meanwhile
      if (mapGaveWay && ![ui.kernels, ui.run, opts.box].some((d) => d.open)) map.openSheet();
      mapGaveWay = false;
    }
    if (msg.type === "busy" || msg.type === "picture") state.answered(msg);
    if (msg.type === "busy") {
      if (shown && sameSelection(msg, shown)) return;  // already shown from the cache
      if (sameSelection(msg, state.selection())) waits.busy(msg.since);
    }
    else if (msg.type === "picture") showPicture(msg);
    else if (msg.type === "exported") ui.status.textContent = `exported SVG to ${msg.paths.join(", ")}`;
    else if (msg.type === "node") { if (msg.key === links.picked() && msg.step === state.selected) showNode(ui, msg, links.pick, setMatch, go); }
    else if (msg.type === "rules") showRules(ui, msg, go);
    else if (msg.type === "uops" || msg.type === "asm" || msg.type === "access") program.message(msg);
    else if (msg.type === "run") run.show(msg);
    else if (msg.type === "programmap") map.show(msg);
    else if (msg.type === "fused") map.fused(msg);
    else if (msg.type === "error" && msg.message.startsWith("programmap:")) map.failed(msg.message);
    else if (msg.type === "search") { search.show(msg); tree.found(msg); }
    else if (msg.type === "error" && msg.message.startsWith("run:")) run.failed(msg.message);
    else if (msg.type === "error") { waits.notBusy(); ui.status.textContent = msg.message; }
  });

  ui.slider.addEventListener("input", () => setMatch(Number(ui.slider.value) === 0 ? null : Number(ui.slider.value) - 1));
  const matchTyped = matchInput(ui, setMatch, () => heard || page);
  ui.prev.addEventListener("click", () => stepMatch(-1));
  ui.next.addEventListener("click", () => stepMatch(1));
  ui.busiest.addEventListener("click", () => {
    const best = [...steps.values()].reduce((a, b) => (b.step.matches > a.step.matches ? b : a));
    select(best.step.key);
  });
  ui.fit.addEventListener("click", view.fit);
  ui.one.addEventListener("click", view.oneToOne);
  ui.zoomChange.addEventListener("click", view.toChange);
  ui.full.addEventListener("click", () => state.setView("full"));
  const toggleRaw = () => state.setRaw(!state.raw);  // the raw graph, or folded again
  ui.raw.addEventListener("click", toggleRaw);
  ui.root.addEventListener("tgviz-open-raw", (ev) => { links.pickNext(/** @type {CustomEvent<string>} */ (ev).detail); state.setRaw(true); });
  ui.exportBtn.addEventListener("click", (ev) => {  // the part on screen; with shift, the whole picture
    ui.status.textContent = "exporting…";
    const box = ev.shiftKey ? null : view.visible();
    state.send(box ? { type: "export", box } : { type: "export" });
  });
  ui.rulesBtn.addEventListener("click", () => {
    const open = ui.rules.hidden;
    ui.rules.hidden = !open; ui.tree.hidden = open;
    ui.rulesBtn.classList.toggle("active", open);
    if (open && !ui.rules.childElementCount) { ui.rules.textContent = "counting…"; state.send({ type: "rules" }); }
  });
  // a node picked: its panel at once, from what the page holds; the kernel's (the report's) node message fills it in
  const pending = () => (page ? "history: reading the report's data…" : heard ? "history and the node as tinygrad's Python: asking the kernel…"
    : "history and the node as tinygrad's Python need the kernel: run the cell again");
  state.onRequest((msg) => {
    const node = msg.type === "node" ? pageNode(ui.stage, msg.key, shownMsg) : null;
    if (node) showNode(ui, node, links.pick, setMatch, go, pending());
  });
  const lastMatch = () => (steps.get(state.selected)?.step.matches ?? 0) - 1;
  /** Keys that change the selection: the kernel's to answer. @param {() => void} fn */
  const live = (fn) => () => { if (heard) fn(); };
  const stopKeys = keys(ui, {
    ArrowUp: live(() => moveStep(-1)), ArrowDown: live(() => moveStep(1)), ArrowLeft: live(() => stepMatch(-1)),
    ArrowRight: live(() => stepMatch(1)), Home: live(() => { if (lastMatch() >= 0) setMatch(0); }),
    End: live(() => { if (lastMatch() >= 0) setMatch(lastMatch()); }),
    f: () => { if (!run.fit() && !map.fit()) onView(view.fit); }, 1: () => onView(view.oneToOne), z: () => onView(view.toChange), r: toggleRaw, m: () => { if (!page) max.toggle(); }, "/": search.focus },
  () => {  // Escape: an open sheet closed, or the widget back in its place, first
    if (closeSheet()) return true;
    if (max.on()) { max.set(false); return true; }
    return false;
  }, !page, matchTyped);

  state.onSelected(() => tree.markSelected());
  // the kernel table, built again when its rows change (a re-timing, the devices' peaks measured for the limits)
  const table = () => kernelTable(ui, withOpts(state.kernels, state.model.get("whatif")), select,
                                  page ? null : () => state.send({ type: "retime", kernels: [] }));
  table();
  state.model.on("change:kernels", table);
  /** The tree built, where it is not yet (a big one waits for the first picture: see TREE_LATER_ROWS). */
  const buildTree = () => { if (!tree.built) tree.build(); };
  if (steps.size <= TREE_LATER_ROWS) tree.build();
  else ui.tree.textContent = `listing ${steps.size.toLocaleString("en-US")} steps…`;
  const treeAtLatest = tree.built ? undefined : setTimeout(buildTree, TREE_WAIT_MS);
  showCached();
  state.send({ type: "ready" });
  if (state.model.get("opening") === "program") map.openSheet();  // what the trace opens on
  const waiting = state.selected ? setTimeout(noKernel, STATIC_AFTER_MS) : undefined;
  return () => { clearTimeout(waiting); clearTimeout(treeAtLatest); waits.stop(); stopKeys(); max.set(false); ui.root.remove(); };
}

/** A model created (a cell run, or a notebook opened restoring it): its notebook's change watcher starts now, before
 * any view of it renders (Adapter.unmarkRestored). @param {{ model: import("./adapter.js").Model }} ctx */
function initialize({ model }) { new Adapter(model).unmarkRestored(); }

export default { initialize, render };
