// The linked panes: a clicked node is highlighted in the graph (with its inputs and users) and marks its code lines; a
// hovered code line outlines the UOps behind it in the graph (where the graph shown has none of them, the status line
// says to click); a clicked line stays marked and opens the graph the renderer consumed where this graph does not draw
// them, built around them (a partial view of a big graph holds them) and zoomed to them; a line with no UOp says so.
// Other panes pin nodes and lines too (pin: a uops row its node and lines, an asm range its lines and their UOps), and
// hear what is marked (onMark: a hovered or clicked code line, a picked node, a pin), to mark their own rows.
// Node keys come from Python (the SVG's data-node, the kernel's per-line keys) and are only compared here; a UOp inside
// a folded node (tgviz.fold: its data-holds) is found as that node.

import { codeLine } from "./codelines.js";
import { h, scrollWithin } from "./dom.js";

/** @typedef {import("./ui.js").Ui} Ui */
/** @typedef {import("./adapter.js").Adapter} Adapter */
/** @typedef {import("./messages.js").KernelInfo} KernelInfo */
/** @typedef {import("./messages.js").StepKey} StepKey */
/** @typedef {ReturnType<typeof import("./panzoom.js").panZoom>} View */

const LINE_HINT = "this line's UOps are not in this graph: click the line to open the codegen graph where they are";

/** The nodes drawn as key, or folded nodes that hold it. @param {ParentNode} stage @param {string} key */
const nodesOf = (stage, key) => stage.querySelectorAll(`g.node[data-node="${CSS.escape(key)}"], g.node[data-holds~="${CSS.escape(key)}"]`);

/** Mark a node on both sides, its inputs and its users (from the SVG's edges). @param {HTMLElement} stage @param {string|null} key */
function highlight(stage, key) {
  for (const n of stage.querySelectorAll(".hl, .hl-in, .hl-out")) n.classList.remove("hl", "hl-in", "hl-out");
  if (key === null) return;
  const mark = (/** @type {string} */ k, /** @type {string} */ cls) => { for (const n of nodesOf(stage, k)) n.classList.add(cls); };
  mark(key, "hl");
  const at = new Set([...nodesOf(stage, key)].map((n) => /** @type {string} */ (n.getAttribute("data-node"))));  // (a fold holding it)
  for (const k of at) {
    for (const e of stage.querySelectorAll(`path.edge[data-to="${CSS.escape(k)}"]`)) mark(/** @type {string} */ (e.getAttribute("data-from")), "hl-in");
    for (const e of stage.querySelectorAll(`path.edge[data-from="${CSS.escape(k)}"]`)) mark(/** @type {string} */ (e.getAttribute("data-to")), "hl-out");
  }
}

/** Mark the nodes behind a code line (or none) in the graph shown; returns how many were marked. @param {HTMLElement} stage
 * @param {string[]} keys */
function markLineNodes(stage, keys) {
  for (const n of stage.querySelectorAll(".hl-line")) n.classList.remove("hl-line");
  let marked = 0;
  for (const k of keys) for (const n of nodesOf(stage, k)) { n.classList.add("hl-line"); marked++; }
  return marked;
}

/** Mark code lines (numbers from 1); the first one scrolled into view. @param {Ui} ui @param {number[]} nums */
function markCodeLines(ui, nums) {
  for (const e of ui.code.querySelectorAll(".tgviz-line-hl")) e.classList.remove("tgviz-line-hl");
  let first = null;
  for (const n of nums) {
    const e = codeLine(ui.code, n);
    e?.classList.add("tgviz-line-hl");
    first ??= e;
  }
  scrollWithin(first);
}

/** The links between the graph shown, its nodes and the kernel's code lines.
 * @param {Ui} ui @param {Adapter} state @param {View} view
 * @param {(key: StepKey, view: import("./messages.js").View, match?: number|null) => void} select a step (and match) in a view */
export function linking(ui, state, view, select) {
  /** @type {string|null} the node picked */
  let picked = null;
  /** @type {KernelInfo|null} the kernel whose code is shown (lines: per line, its UOps' node keys) */
  let kernel = null;
  /** @type {number|null} the code line clicked: its nodes stay marked */
  let pinnedLine = null;
  /** a code line was clicked to open the codegen graph: the next picture drawn zooms to its nodes */
  let lineZoom = false;
  /** @type {{step: StepKey, match: number|null}|null} the step and match that click left: the status line links back */
  let left = null;
  /** the status line's text before the line hint replaced it */
  let statusBefore = "";
  /** @type {{text: string, back: {step: StepKey, match: number|null}|null}|null} what a clicked line's opening of the
   * codegen graph said on the status line (and the way back): another line clicked there says its own while that shows */
  let lineSaid = null;
  /** @type {{keys: string[], lines: number[]}|null} nodes and code lines another pane pinned (a uops row, an asm range) */
  let pinned = null;
  /** @type {((kind: "hover"|"pin", keys: string[], lines: number[], again: boolean) => void)[]} who hears what is marked */
  const listeners = [];
  /** Tell the other panes what is marked (again: the node picked before, marked in a graph drawn since, no new pick).
   * @param {"hover"|"pin"} kind @param {string[]} keys @param {number[]} lines @param {boolean} [again] */
  const notify = (kind, keys, lines, again = false) => { for (const fn of listeners) fn(kind, keys, lines, again); };
  let fresh = false;  // pickNext named the node to pick in the next graph drawn: a pick of the user's, not one kept

  /** The node drawn as key (or folded into one) in the graph shown, if any. @param {string} key */
  const drawnNode = (key) => nodesOf(ui.stage, key)[0];
  /** The UOps behind code line n (from 1), by node key. @param {number|null} n */
  const lineKeys = (n) => (n !== null && kernel?.lines ? kernel.lines[n - 1] || [] : []);
  /** The code lines (from 1) a UOp is behind. @param {string} key */
  const linesOf = (key) => (kernel?.lines ?? []).flatMap((ks, i) => (ks.includes(key) ? [i + 1] : []));
  /** Whether a line's UOps are drawn in the codegen graph only, another step than the one shown. @param {string[]} keys */
  const elsewhere = (keys) => keys.length > 0 && !!kernel?.codegen_step && kernel.codegen_step !== state.selected;
  /** Say something on the status line. @param {string} text */
  const say = (text) => { ui.status.textContent = text; };
  /** A step's name and, where given, its match ("postopt symbolic, match 4/4"). @param {StepKey} key @param {number|null} match */
  const named = (key, match) => {
    const s = state.tree.flatMap((g) => g.steps).find((t) => t.key === key);
    return `${s?.name ?? key}${match !== null ? `, match ${match + 1}/${s?.matches ?? "?"}` : ""}`;
  };
  /** Open the graph the renderer consumed (the kernel's codegen step) in a view, noting the step and match left for the
   * way back. @param {string} around */
  const toCodegen = (around) => {
    const codegen = /** @type {StepKey} */ (kernel?.codegen_step);
    left = state.selected !== codegen || state.match !== null ? { step: state.selected, match: state.match } : null;
    select(codegen, /** @type {import("./messages.js").View} */ (around));
  };
  /** On the status line: `text`, then a link back to the step and match the click left (`back`), if it left one.
   * @param {string} text @param {{step: StepKey, match: number|null}|null} back */
  const sayBack = (text, back = left) => {
    if (!back) return say(text);
    const link = h("button", { class: "tgviz-link tgviz-line-back", title: "the step and match the click left" },
                            [`back to ${named(back.step, back.match)}`]);
    link.addEventListener("click", () => select(back.step, "auto", back.match));
    ui.status.replaceChildren(`${text} · `, link);
  };

  /** Pick a node ("" or null: none): highlighted in the graph and its code lines, its panel asked for; it and its
   * neighbourhood brought into view on the side clicked (else the after side where it is there).
   * @param {string|null} key @param {string} [side] "before" or "after" @param {boolean} [again] the node picked before,
   * in the graph drawn since */
  function pick(key, side, again = false) {
    picked = key || null;
    highlight(ui.stage, picked);
    const on = (/** @type {string} */ s) => [...ui.stage.querySelectorAll(`g.side[data-side="${s}"] g.node.hl`),
                                             ...ui.stage.querySelectorAll(`g.side[data-side="${s}"] g.node.hl-in, g.side[data-side="${s}"] g.node.hl-out`)];
    const near = [side, "after", "before"].map((s) => (s ? on(s) : [])).find((ns) => ns.some((n) => n.matches(".hl"))) ?? [];
    if (near.length) view.reveal(near);  // its neighbourhood in view (a node followed from the panel may lie off screen)
    markCodeLines(ui, picked ? linesOf(picked) : pinned?.lines ?? []);
    if (!picked) { ui.nodePanel.hidden = true; return; }
    notify("pin", [picked], linesOf(picked), again);
    state.send({ type: "node", key: picked });
  }
  /** The picked node again, in the graph now shown (none if it is not drawn there). */
  const repick = () => {
    const again = !fresh;
    fresh = false;
    pick(picked && drawnNode(picked) ? picked : null, undefined, again);
  };
  /** The nodes behind a code line (null: the pinned line's, if any), marked in the graph shown; returns how many.
   * @param {number|null} n */
  function markLine(n) {
    const marked = markLineNodes(ui.stage, n !== null ? lineKeys(n) : pinned?.keys ?? lineKeys(pinnedLine));
    for (const e of ui.code.querySelectorAll(".tgviz-line-pinned")) e.classList.remove("tgviz-line-pinned");
    if (pinnedLine !== null) codeLine(ui.code, pinnedLine)?.classList.add("tgviz-line-pinned");
    return marked;
  }
  /** A hovered code line (null: none) marks its UOps; where the graph shown has none of them, the status line says
   * where they are. @param {number|null} n */
  function hoverLine(n) {
    notify("hover", lineKeys(n), n === null ? [] : [n]);
    const hint = markLine(n) === 0 && elsewhere(lineKeys(n));
    const showing = ui.status.textContent === LINE_HINT;
    if (hint && !showing) { statusBefore = ui.status.textContent ?? ""; ui.status.textContent = LINE_HINT; }
    else if (!hint && showing) ui.status.textContent = statusBefore;
  }

  // a click on a node picks it; a drag pans (the canvas captures the pointer, so the node is read on the way down)
  /** @type {Element|null|undefined} */
  let down;
  ui.canvas.addEventListener("pointerdown", (ev) => {
    const at = /** @type {Element} */ (ev.target);
    down = at.closest(".tgviz-minimap") ? undefined : at.closest("g.node[data-node]");  // the overview moves the view only
  }, { capture: true });
  ui.canvas.addEventListener("pointermove", (ev) => { if (ev.buttons && (Math.abs(ev.movementX) + Math.abs(ev.movementY)) > 1) down = undefined; });
  ui.canvas.addEventListener("pointerup", () => {
    if (down !== undefined) pick(down ? down.getAttribute("data-node") : null, down?.closest("g.side")?.getAttribute("data-side") ?? undefined);
    down = undefined;
  });
  // code lines: hover shows the UOps behind a line in the graph; a click keeps them marked and opens the graph the
  // renderer consumed (the kernel's final codegen step) where the current step does not draw them (the status line says
  // so, with a link back to the step and match left); either way the graph zooms to them
  const lineOf = (/** @type {Event} */ ev) => /** @type {Element} */ (ev.target).closest?.("[data-line]");
  ui.code.addEventListener("mouseover", (ev) => { const e = lineOf(ev); if (e) hoverLine(Number(e.getAttribute("data-line"))); });
  ui.code.addEventListener("mouseleave", () => hoverLine(null));
  ui.code.addEventListener("click", (ev) => {
    const e = lineOf(ev);
    if (!e || !kernel?.lines) return;
    const n = Number(e.getAttribute("data-line"));
    pinnedLine = pinnedLine === n ? null : n;
    pinned = null;
    const keys = lineKeys(pinnedLine);
    notify("pin", keys, pinnedLine === null ? [] : [pinnedLine]);
    if (pinnedLine !== null && !keys.length) { markLine(null); say(`line ${n} has no UOp behind it: tinygrad's renderer wrote it for none (a brace, a declaration)`); return; }
    const drawn = keys.some((k) => drawnNode(k));
    // not drawn here (another step, or a partial view without them): the graph the renderer consumed, built around them
    lineZoom = pinnedLine !== null && !drawn && !!kernel.codegen_step;
    if (lineZoom) toCodegen(`line:${pinnedLine}`);
    else {
      if (lineSaid && ui.status.textContent === lineSaid.text) {  // the status named the line clicked before: this one now
        sayBack(pinnedLine === null ? "no code line marked" : `line ${pinnedLine}'s UOps marked here, in ${named(state.selected, null)}`, lineSaid.back);
        lineSaid = { text: ui.status.textContent ?? "", back: lineSaid.back };
      }
      if (markLine(null) && drawn) view.toLine();
    }
  });

  return {
    pick,
    repick,
    /** The node picked, null for none. */
    picked: () => picked,
    /** Pick this node in the next graph drawn (where it is drawn). @param {string} key */
    pickNext(key) { picked = key; fresh = true; },
    /** Hear what is marked: a hovered code line (null: none) or the lines and nodes pinned (a clicked line, a picked node,
     * a pin; again: the node picked before, marked in a graph drawn since).
     * @param {(kind: "hover"|"pin", keys: string[], lines: number[], again: boolean) => void} fn */
    onMark(fn) { listeners.push(fn); },
    /** Pin nodes and code lines from another pane: the lines marked, the nodes marked in the graph shown; where it draws
     * none of them and a view is given, the graph the renderer consumed opens in that view, zoomed to them.
     * @param {string[]} keys @param {number[]} lines @param {import("./messages.js").View|null} around */
    pin(keys, lines, around) {
      pinnedLine = null;
      pinned = { keys, lines };
      if (picked) { picked = null; highlight(ui.stage, null); ui.nodePanel.hidden = true; }
      markCodeLines(ui, lines);
      notify("pin", keys, lines);
      const drawn = keys.some((k) => drawnNode(k));
      lineZoom = !drawn && around !== null && keys.length > 0 && !!kernel?.codegen_step;
      if (lineZoom) toCodegen(/** @type {string} */ (around));
      else if (markLine(null) && drawn) view.toLine();
    },
    /** A picture was drawn: the kernel's code changed (a new group: its lines, no line pinned), or not (null); the
     * picked node and the pinned line's nodes are marked again, and zoomed to if a click on the line opened the graph.
     * @param {KernelInfo|null|undefined} newKernel undefined: the same kernel */
    drawn(newKernel) {
      if (newKernel !== undefined) { kernel = newKernel; pinnedLine = null; pinned = null; }
      repick();
      const marked = markLine(null);
      if (marked && lineZoom) {  // why the step changed, with a link back; said first: a longer status line takes canvas room
        const what = pinned ? `${marked} UOp${marked === 1 ? "" : "s"}` : `line ${pinnedLine}'s UOps`;
        sayBack(`${what} marked here, in ${named(state.selected, null)}, the graph the renderer consumed: ${named(left?.step ?? state.selected, null)} does not draw them`);
        view.toLine();
      }
      else if (lineZoom) sayBack(pinned ? "this UOp is not drawn in the graph the renderer consumed (a constant is written into its users' labels)"
                                        : `line ${pinnedLine}'s UOps are not in the graph the renderer consumed (they are in the linearized program only)`);
      if (lineZoom) lineSaid = { text: ui.status.textContent ?? "", back: left };
      lineZoom = false;
      left = null;
    },
  };
}
