// tgviz trace browser: tree | before/after graphs with match stepping | generated code.
// Plain ESM for anywidget; the standalone HTML report (report.js) runs the same code on a recorded model.
// Messages and state are those of tgviz/protocol.py: keys come from Python and are never built here.
import { sortableTable } from "./table.js";

/** @typedef {{key:string,name:string,depth:number,matches:number,snapshot:boolean}} TreeStep */
/** @typedef {{index:number,name:string,kind:string,matches:number,kernel:string|null,steps:TreeStep[]}} TreeGroup */
/** @typedef {{step:string,match:number|null,view:string}} Selection */
/** @typedef {Selection & {type:"picture",svg:string,partial:boolean,message:string|null,shown:number,total:number,
 *   info:any,match_info:any,kernel:any,produced?:{name:string,group:number,step:string}[]}} PictureMsg */

/** @param {string} tag @param {Record<string,string>} [attrs] @param {(Node|string)[]} [kids] */
function h(tag, attrs = {}, kids = []) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  for (const k of kids) e.append(k);
  return e;
}

/** Pictures received, by step key, then view, then match; past `max` steps the least recently used is dropped. */
export class PictureCache {
  /** @param {number} max */
  constructor(max) { this.max = max; /** @type {Map<string, Map<string, Map<number|null, PictureMsg>>>} */ this.steps = new Map(); }
  /** @param {Selection} sel @returns {PictureMsg|undefined} */
  get(sel) {
    const views = this.steps.get(sel.step);
    if (views) { this.steps.delete(sel.step); this.steps.set(sel.step, views); }
    return views?.get(sel.view)?.get(sel.match);
  }
  /** @param {PictureMsg} msg */
  put(msg) {
    const views = this.steps.get(msg.step) ?? new Map();
    this.steps.delete(msg.step);
    this.steps.set(msg.step, views);
    if (!views.has(msg.view)) views.set(msg.view, new Map());
    views.get(msg.view).set(msg.match, msg);
    if (this.steps.size > this.max) this.steps.delete(this.steps.keys().next().value);
  }
}

/** @param {Selection} a @param {Selection} b */
const sameSelection = (a, b) => a.step === b.step && a.match === b.match && a.view === b.view;

/** The widget's DOM: three columns (tree | graphs | code) under a summary line. */
function buildDom() {
  const ui = {
    root: h("div", { class: "tgviz-root", tabindex: "0", "data-lm-suppress-shortcuts": "true" }),  // JupyterLab's keys stay out
    style: h("style"),
    summary: h("div", { class: "tgviz-summary" }),
    errorBox: h("pre", { class: "tgviz-error" }),
    kernels: h("details", { class: "tgviz-kernels" }),
    filter: h("input", { class: "tgviz-filter", type: "search", placeholder: "filter steps / kernels" }),
    hideEmpty: h("input", { type: "checkbox", class: "tgviz-hide-empty" }),
    tree: h("div", { class: "tgviz-tree", role: "tree", tabindex: "0", "aria-label": "rewrite steps: ↑/↓ to move" }),
    busiest: h("button", { class: "tgviz-busiest", title: "go to the step with the most matches" }, ["most matches"]),
    title: h("div", { class: "tgviz-title" }),
    slider: h("input", { class: "tgviz-slider", type: "range", min: "0", max: "0", value: "0" }),
    prev: h("button", { class: "tgviz-prev", title: "previous match (←)" }, ["◀"]),
    next: h("button", { class: "tgviz-next", title: "next match (→)" }, ["▶"]),
    matchLabel: h("span", { class: "tgviz-match-label" }),
    fit: h("button", { class: "tgviz-fit", title: "fit the whole graph in view (f)" }, ["fit"]),
    one: h("button", { class: "tgviz-one", title: "one SVG pixel per screen pixel (1)" }, ["1:1"]),
    zoomChange: h("button", { class: "tgviz-zoom-change", title: "zoom to what changed (z)" }, ["zoom to change"]),
    full: h("button", { class: "tgviz-full", title: "lay out the whole graph (may be slow)" }, ["full graph"]),
    exportBtn: h("button", { class: "tgviz-export", title: "save the current view as SVG" }, ["Export SVG"]),
    toggleTree: h("button", { class: "tgviz-toggle-tree", title: "hide or show the step tree" }),
    toggleCode: h("button", { class: "tgviz-toggle-code", title: "hide or show the code panel" }),
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
    rulesBtn: h("button", { class: "tgviz-rules-toggle", title: "every pattern that fired, most often first" }, ["rules"]),
    rules: h("div", { class: "tgviz-rules", hidden: "" }),
    stack: h("details", { class: "tgviz-stack" }),
  };
  ui.canvas.append(ui.stage, h("div", { class: "tgviz-spinner" }, ["laying out…"]));
  const left = ui.left = h("div", { class: "tgviz-left" }, [
    ui.filter, h("div", { class: "tgviz-tree-tools" }, [h("label", { class: "tgviz-hide-label" }, [ui.hideEmpty, " hide steps without matches"]),
                                                      ui.busiest, ui.rulesBtn]), ui.tree, ui.rules]);
  const centre = h("div", { class: "tgviz-centre" }, [
    ui.title, h("div", { class: "tgviz-controls" }, [ui.toggleTree, ui.prev, ui.slider, ui.next, ui.matchLabel, ui.fit, ui.one,
                                                      ui.zoomChange, ui.full, ui.exportBtn, ui.toggleCode]),
    ui.staticNote, ui.banner, ui.canvas, ui.matchBox, ui.nodePanel, ui.status]);
  const right = ui.right = h("div", { class: "tgviz-right" }, [ui.codeHead, ui.origins, ui.linesNote, ui.code, ui.stack]);
  ui.main = h("div", { class: "tgviz-main" }, [left, ui.dragTree, centre, ui.dragCode, right]);
  ui.root.append(ui.style, ui.summary, ui.kernels, ui.errorBox, ui.main);
  return /** @type {typeof ui & {left: HTMLElement, right: HTMLElement, main: HTMLElement}} */ (ui);
}

const STATIC_AFTER_MS = 3000;  // no word from the kernel this long after asking: a saved notebook without its kernel
const READABLE = 1.12;  // the SVG's labels are 10 px: at this scale they render at 11 CSS px or a hair more

/** The side panels: widths dragged on their handles, hidden and shown with their buttons; kept for the browser session. */
function sidePanels(/** @type {ReturnType<typeof buildDom>} */ ui) {
  /** @type {{tree: number|null, code: number|null, treeHidden: boolean, codeHidden: boolean}} */
  const st = { tree: null, code: null, treeHidden: false, codeHidden: false, ...JSON.parse(sessionStorage.getItem("tgviz-panels") || "{}") };
  function apply() {
    const col = (/** @type {number|null} */ w, /** @type {boolean} */ hidden, /** @type {string} */ auto) => (hidden ? "0px" : w ? `${w}px` : auto);
    ui.main.style.gridTemplateColumns = `${col(st.tree, st.treeHidden, "minmax(180px, 22%)")} 5px minmax(0, 1fr) 5px ${col(st.code, st.codeHidden, "minmax(200px, 28%)")}`;
    ui.left.classList.toggle("collapsed", st.treeHidden);
    ui.right.classList.toggle("collapsed", st.codeHidden);
    ui.dragTree.classList.toggle("collapsed", st.treeHidden);
    ui.dragCode.classList.toggle("collapsed", st.codeHidden);
    ui.toggleTree.textContent = st.treeHidden ? "▸ tree" : "◂ tree";
    ui.toggleCode.textContent = st.codeHidden ? "code ◂" : "code ▸";
    ui.toggleTree.setAttribute("aria-pressed", String(!st.treeHidden));
    ui.toggleCode.setAttribute("aria-pressed", String(!st.codeHidden));
    sessionStorage.setItem("tgviz-panels", JSON.stringify(st));
  }
  /** @param {HTMLElement} handle @param {HTMLElement} panel @param {"tree"|"code"} which @param {number} dir +1: dragging right widens */
  function drag(handle, panel, which, dir) {
    handle.addEventListener("pointerdown", (ev) => {
      ev.preventDefault();
      ev.stopPropagation();
      handle.setPointerCapture(ev.pointerId);
      const x0 = ev.clientX, w0 = panel.getBoundingClientRect().width;
      const move = (/** @type {PointerEvent} */ e) => {
        st[which] = Math.round(Math.max(120, Math.min(ui.main.clientWidth * 0.6, w0 + dir * (e.clientX - x0))));
        apply();
      };
      const up = () => { handle.removeEventListener("pointermove", move); handle.removeEventListener("pointerup", up); };
      handle.addEventListener("pointermove", move);
      handle.addEventListener("pointerup", up);
    });
  }
  drag(ui.dragTree, ui.left, "tree", 1);
  drag(ui.dragCode, ui.right, "code", -1);
  ui.toggleTree.addEventListener("click", () => { st.treeHidden = !st.treeHidden; apply(); });
  ui.toggleCode.addEventListener("click", () => { st.codeHidden = !st.codeHidden; apply(); });
  apply();
}

/** Wheel zoom and drag pan of the stage inside the canvas, and the views a graph opens on. */
function panZoom(/** @type {ReturnType<typeof buildDom>} */ ui) {
  let scale = 1, tx = 0, ty = 0;
  const apply = () => { ui.stage.style.transform = `translate(${tx}px, ${ty}px) scale(${scale})`; };
  const svgOf = () => ui.stage.querySelector("svg");
  const size = () => ({ w: ui.canvas.clientWidth || 600, h: ui.canvas.clientHeight || 400 });
  /** The boxes (SVG units) of some nodes of the SVG. @param {Element[]} nodes */
  const rects = (nodes) => nodes.map((n) => {
    const b = /** @type {SVGGraphicsElement} */ (n).getBBox(), o = nodeOffset(n);
    return { x: b.x + o.x, y: b.y + o.y, w: b.width, h: b.height };
  });
  /** The box around some boxes, null for none. @param {{x:number,y:number,w:number,h:number}[]} boxes */
  function around(boxes) {
    if (!boxes.length) return null;
    const x0 = Math.min(...boxes.map((b) => b.x)), y0 = Math.min(...boxes.map((b) => b.y));
    return { x: x0, y: y0, w: Math.max(...boxes.map((b) => b.x + b.w)) - x0, h: Math.max(...boxes.map((b) => b.y + b.h)) - y0 };
  }
  /** The box (in SVG units) around some nodes of the SVG, null for none. @param {Element[]} nodes */
  const boxOf = (nodes) => around(rects(nodes));
  /** The box (in SVG units) to show of what changed, at scale s: all of it where it fits the canvas, else the
   * canvas-sized window that holds the most changed nodes, the after side's first (a big step changes nodes all over
   * both sides, and the middle of them all can be empty). Where nothing is marked (a snapshot): the output (dot draws
   * it lowest) at the foot of that window, what feeds it above. Null without a graph. */
  function changedBox(s = 0) {
    const svg = svgOf();
    if (!svg) return null;
    const c = size(), W = (c.w - 40) / s, H = (c.h - 40) / s;  // s = 0: any size fits
    const marked = [...svg.querySelectorAll("g.side g.node.added, g.side g.node.removed, g.side g.node.changed")];
    if (!marked.length) {
      const all = rects([...svg.querySelectorAll("g.side g.node")]);
      if (!all.length) return null;
      const low = Math.max(...all.map((b) => b.y)), out = /** @type {{x:number,y:number,w:number,h:number}} */ (around(all.filter((b) => b.y === low)));
      if (!Number.isFinite(H)) return out;
      const top = Math.max(Math.min(...all.map((b) => b.y)), out.y + out.h - H);
      return { x: out.x, y: top, w: out.w, h: out.y + out.h - top };
    }
    const boxes = rects(marked), whole = /** @type {{x:number,y:number,w:number,h:number}} */ (around(boxes));
    if (whole.w <= W && whole.h <= H) return whole;
    const after = marked.map((n) => n.closest("g.side")?.getAttribute("data-side") === "after");
    const mid = boxes.map((b) => ({ x: b.x + b.w / 2, y: b.y + b.h / 2 }));
    const order = [...boxes.keys()].sort((i, j) => Number(after[j]) - Number(after[i]));
    const step = Math.max(1, Math.floor(order.length / 300));  // at most 300 windows tried: bounded on huge steps
    let best = [boxes[order[0]]];
    for (let k = 0; k < order.length; k += step) {
      const m = mid[order[k]];
      const inside = boxes.filter((_, j) => Math.abs(mid[j].x - m.x) <= W / 2 && Math.abs(mid[j].y - m.y) <= H / 2);
      if (inside.length > best.length) best = inside;
    }
    return around(best);
  }
  /** A node's position in the SVG: its own translate plus its side's. @param {Element} n */
  function nodeOffset(n) {
    let x = 0, y = 0;
    for (let e = n; e && e.tagName !== "svg"; e = /** @type {Element} */ (e.parentNode)) {
      const m = /translate\(([-\d.]+),([-\d.]+)\)/.exec(e.getAttribute("transform") || "");
      if (m) { x += Number(m[1]); y += Number(m[2]); }
    }
    return { x, y };
  }
  /** Centre the box b (SVG units) at the current scale. @param {{x:number,y:number,w:number,h:number}} b */
  function centre(b) {
    const { w, h } = size();
    tx = w / 2 - (b.x + b.w / 2) * scale; ty = h / 2 - (b.y + b.h / 2) * scale;
    apply();
  }
  function fit() {
    const svg = svgOf();
    if (!svg) return;
    const w = Number(svg.getAttribute("width")) || 1, hgt = Number(svg.getAttribute("height")) || 1, c = size();
    scale = Math.min(c.w / w, c.h / hgt, 1.5);
    tx = (c.w - w * scale) / 2; ty = 0;
    apply();
  }
  function oneToOne() { scale = 1; const b = changedBox(scale); if (b) centre(b); else apply(); }
  /** Zoom to the box b (SVG units; null: fit the graph): readable, and all of b in view where it fits.
   * @param {{x:number,y:number,w:number,h:number}|null} b */
  function zoomTo(b) {
    if (!b) return fit();
    const c = size();
    scale = Math.max(READABLE, Math.min(c.w / (b.w + 40), c.h / (b.h + 40), 2));
    centre(b);
  }
  /** Zoom to what changed: all of it where that is readable, else readable on where most of it is. */
  function toChange() {
    zoomTo(changedBox());
    const b = changedBox(scale);
    if (b) centre(b);
  }
  /** Zoom to the nodes marked for a code line, if any are drawn. */
  function toLine() {
    const b = boxOf([...(svgOf()?.querySelectorAll("g.side g.node.hl-line") ?? [])]);
    if (b) zoomTo(b);
  }
  /** The view a step opens on: the whole graph where it fits with readable labels, else readable around the change. */
  function initial() {
    const svg = svgOf();
    if (!svg) return;
    const w = Number(svg.getAttribute("width")) || 1, hgt = Number(svg.getAttribute("height")) || 1, c = size();
    if (Math.min(c.w / w, c.h / hgt) >= READABLE) return fit();
    scale = READABLE;
    const b = changedBox(scale);
    if (b) centre(b); else { tx = 0; ty = 0; apply(); }
  }
  /** After stepping to another match: keep the zoom, bring the change back into view if it left it. */
  function follow() {
    const b = changedBox(scale), c = size();
    if (!b) return;
    const x0 = tx + b.x * scale, y0 = ty + b.y * scale, x1 = x0 + b.w * scale, y1 = y0 + b.h * scale;
    if (x1 < 0 || y1 < 0 || x0 > c.w || y0 > c.h || (b.w * scale < c.w && (x0 < 0 || x1 > c.w)) || (b.h * scale < c.h && (y0 < 0 || y1 > c.h))) centre(b);
  }
  ui.canvas.addEventListener("wheel", (ev) => {
    ev.preventDefault();
    const r = ui.canvas.getBoundingClientRect();
    const px = ev.clientX - r.left, py = ev.clientY - r.top;
    const f = ev.deltaY < 0 ? 1.15 : 1 / 1.15;
    tx = px - (px - tx) * f; ty = py - (py - ty) * f; scale *= f;
    apply();
  }, { passive: false });
  /** @type {{x:number,y:number}|null} */
  let drag = null;
  ui.canvas.addEventListener("pointerdown", (ev) => { drag = { x: ev.clientX - tx, y: ev.clientY - ty }; ui.canvas.setPointerCapture(ev.pointerId); });
  ui.canvas.addEventListener("pointermove", (ev) => { if (drag) { tx = ev.clientX - drag.x; ty = ev.clientY - drag.y; apply(); } });
  ui.canvas.addEventListener("pointerup", () => { drag = null; });
  return { fit, oneToOne, toChange, toLine, initial, follow };
}

/** The tree of groups and steps, filtered; returns the rows by step key, in display order. */
function renderTree(/** @type {ReturnType<typeof buildDom>} */ ui, /** @type {TreeGroup[]} */ groups,
                    /** @type {(key: string) => void} */ onSelect) {
  ui.tree.replaceChildren();
  /** @type {Map<string, HTMLElement>} */
  const rows = new Map();
  const q = ui.filter.value.trim().toLowerCase();
  for (const g of groups) {
    const groupHit = !q || g.name.toLowerCase().includes(q);
    const steps = g.steps.filter((s) => (groupHit || s.name.toLowerCase().includes(q)) &&
                                       (!ui.hideEmpty.checked || s.matches > 0 || s.snapshot));
    if (!steps.length) continue;
    const det = h("details", { class: `tgviz-group kind-${g.kind}` });
    det.open = g.kind === "kernel" || !!q;
    det.append(h("summary", {}, [h("span", { class: "tgviz-kind" }, [g.kind]), ` ${g.name} `,
                                 h("span", { class: "tgviz-count" }, [String(g.matches)])]));
    for (const s of steps) {
      const row = h("div", { class: "tgviz-step" + (s.snapshot ? " snapshot" : "") + (s.matches ? "" : " empty"),
                             role: "treeitem", "data-key": s.key },
                    [h("span", { class: "tgviz-indent", style: `width:${s.depth * 12}px` }), h("span", { class: "tgviz-name", title: s.name }, [s.name]),
                     h("span", { class: "tgviz-count" }, [String(s.matches)])]);
      row.addEventListener("click", () => onSelect(s.key));
      det.append(row);
      rows.set(s.key, row);
    }
    ui.tree.append(det);
  }
  return rows;
}

/** The step, match and kernel panels around a picture; go(key) selects a step (a schedule's kernels link to theirs). */
function showDetails(/** @type {ReturnType<typeof buildDom>} */ ui, /** @type {PictureMsg} */ msg, kernelChanged,
                     /** @type {(key: string) => void} */ go) {
  const info = msg.info;
  ui.title.textContent = `${info.title}  (${info.where}, ${info.matches} matches)`;
  ui.slider.max = String(info.matches);
  ui.slider.value = String(msg.match === null ? 0 : msg.match + 1);
  ui.slider.disabled = info.matches === 0;
  ui.matchLabel.textContent = msg.match === null ? `whole step (${info.matches} matches)` : `match ${msg.match + 1} / ${info.matches}`;
  ui.banner.textContent = msg.message || "";
  ui.banner.hidden = !msg.message;
  ui.full.hidden = !msg.partial;
  ui.status.textContent = `${msg.shown} nodes shown` + (msg.partial ? ` of ${msg.total}` : "");
  ui.matchBox.replaceChildren();
  if (info.error) ui.matchBox.append(h("pre", { class: "tgviz-rewrite-error" }, [info.error]));
  if (msg.match_info) {
    const m = msg.match_info;
    ui.matchBox.append(h("div", { class: "tgviz-pattern" }, [h("b", {}, ["pattern "]), h("code", {}, [m.source]), ` ${m.where} · ${m.us} µs`]));
    if (m.diff) ui.matchBox.append(h("pre", { class: "tgviz-uop-diff" }, [m.diff]));
  }
  ui.stack.replaceChildren(h("summary", {}, ["graph_rewrite call site and call stack"]),
                           h("pre", {}, [`${info.file}:${info.line}\n\n${info.stack.join("\n")}`]));
  if (!kernelChanged) return;
  const k = msg.kernel;
  ui.codeHead.textContent = k ? `${k.name} · ${k.device} (${k.renderer}) · global ${JSON.stringify(k.global_size)} · local ${JSON.stringify(k.local_size)}`
                              : `${info.group}: no device code (${info.kind})`;
  ui.code.innerHTML = k ? k.html : "";  // pygments output: the source is escaped by pygments
  showOrigins(ui, k ? k.origins : []);
  ui.linesNote.textContent = k?.lines_note || "";
  ui.linesNote.hidden = !k?.lines_note;
  const produced = msg.produced || [];
  if (k || info.kind !== "schedule") return;
  ui.codeHead.textContent = `${info.group}: ${produced.length} kernel${produced.length === 1 ? "" : "s"} compiled after this schedule`;
  ui.code.append(h("div", { class: "tgviz-produced" }, produced.length ? produced.map((p) => {
    const a = h("button", { class: "tgviz-link", "data-step": p.step, title: "open this kernel's steps" }, [p.name]);
    a.addEventListener("click", () => go(p.step));
    return h("div", {}, [a]);
  }) : ["none (kernels compiled before are reused)"]));
}


/** The kernel's Tensor operations and the user's lines that called them; a click shows the lines around. @param {any[]} origins */
function showOrigins(/** @type {ReturnType<typeof buildDom>} */ ui, origins) {
  ui.origins.replaceChildren(...origins.map((o) => {
    const row = h("details", { class: "tgviz-origin" }, [
      h("summary", {}, [h("b", {}, [o.op + (o.backward ? " (backward)" : "")]), o.where ? ` ← ${o.where}` : " (called before the capture)",
                        ...(o.source ? [": ", h("code", {}, [o.source])] : [])])]);
    if (o.context.length) row.append(h("pre", {}, [o.context.join("\n")]));
    return row;
  }));
  ui.origins.hidden = !origins.length;
}

/** Mark the nodes behind a code line (or none) in the graph shown; returns how many were marked. @param {HTMLElement} stage
 * @param {string[]} keys */
function markLineNodes(stage, keys) {
  for (const n of stage.querySelectorAll(".hl-line")) n.classList.remove("hl-line");
  let marked = 0;
  for (const k of keys) for (const n of stage.querySelectorAll(`g.node[data-node="${CSS.escape(k)}"]`)) { n.classList.add("hl-line"); marked++; }
  return marked;
}

/** Mark the code lines behind a node (or none); the first one scrolled into view. @param {string|null} key @param {string[][]|null} lines */
function markNodeLines(/** @type {ReturnType<typeof buildDom>} */ ui, key, lines) {
  for (const e of ui.code.querySelectorAll(".tgviz-line-hl")) e.classList.remove("tgviz-line-hl");
  if (!key || !lines) return;
  let first = null;
  for (const e of ui.code.querySelectorAll("[data-line]")) {
    if (!(lines[Number(e.getAttribute("data-line")) - 1] || []).includes(key)) continue;
    e.classList.add("tgviz-line-hl");
    first ??= e;
  }
  if (first) {
    const r = first.getBoundingClientRect(), c = ui.code.getBoundingClientRect();
    if (r.top < c.top || r.bottom > c.bottom) first.scrollIntoView({ block: "center" });
  }
}

/** The rules tab: every pattern that fired, sortable by count or time; a click goes to its first match.
 * @param {any} msg @param {(step: string, match: number) => void} go */
function showRules(/** @type {ReturnType<typeof buildDom>} */ ui, msg, go, by = "count") {
  const rules = [...msg.rules].sort(by === "count" ? (a, b) => b.count - a.count || b.us - a.us : (a, b) => b.us - a.us || b.count - a.count);
  const head = (/** @type {string} */ label, /** @type {string} */ key) => {
    const th = h("th", { class: "tgviz-sort" + (by === key ? " sorted" : ""), title: `sort by ${label}` }, [label]);
    th.addEventListener("click", () => showRules(ui, msg, go, key));
    return th;
  };
  const table = h("table", {}, [h("thead", {}, [h("tr", {}, [head("count", "count"), head("µs", "time"), h("th", {}, ["steps"]), h("th", {}, ["pattern"])])])]);
  const body = h("tbody");
  for (const r of rules) {
    const tr = h("tr", { class: "tgviz-rule", title: `${r.where}: first fired in match ${r.match + 1}` },
                 [h("td", {}, [String(r.count)]), h("td", {}, [String(r.us)]), h("td", {}, [String(r.steps)]),
                  h("td", {}, [h("code", {}, [r.source]), h("div", { class: "tgviz-where" }, [r.where])])]);
    tr.addEventListener("click", () => go(r.step, r.match));
    body.append(tr);
  }
  table.append(body);
  ui.rules.replaceChildren(h("div", { class: "tgviz-rules-head" }, [`${msg.total} patterns fired` + (msg.total > rules.length ? ` (first ${rules.length})` : "")]), table);
}

/** Mark a node on both sides, its inputs and its users (from the SVG's edges). @param {HTMLElement} stage @param {string|null} key */
function highlight(stage, key) {
  for (const n of stage.querySelectorAll(".hl, .hl-in, .hl-out")) n.classList.remove("hl", "hl-in", "hl-out");
  if (key === null) return;
  const mark = (/** @type {string} */ k, /** @type {string} */ cls) => {
    for (const n of stage.querySelectorAll(`g.node[data-node="${CSS.escape(k)}"]`)) n.classList.add(cls);
  };
  mark(key, "hl");
  for (const e of stage.querySelectorAll(`path.edge[data-to="${CSS.escape(key)}"]`)) mark(/** @type {string} */ (e.getAttribute("data-from")), "hl-in");
  for (const e of stage.querySelectorAll(`path.edge[data-from="${CSS.escape(key)}"]`)) mark(/** @type {string} */ (e.getAttribute("data-to")), "hl-out");
}

/** One event of a node's life, in words. @param {any} e @param {Node|string} other the node it came from or was
 * replaced by (a link to it, or its op) */
function historyText(e, other) {
  if (e.kind === "input") return ["first seen in the input of"];
  if (e.kind === "created") return [`made by match ${e.match + 1}`, ...(e.other ? [" (from a ", other, ")"] : []), " of"];
  if (e.kind === "lives") return [e.steps > 1 ? `lives through ${e.steps} steps from` : "lives through"];
  if (e.kind === "replaced") return ["replaced", ...(e.other ? [" by a ", other] : []), ` in match ${e.match + 1} of`];
  return ["gone after"];
}

/** The node panel: op, dtype, arg (the report: its label lines), tag, sources (click: go to it), the matches that made
 * or replaced it, its history (click: go there; on the node it came from: that node there), and the node as tinygrad's
 * Python. @param {any} msg @param {(key: string) => void} pick @param {(m: number) => void} jump
 * @param {(step: string, match: number|null, node?: string) => void} go */
function showNode(/** @type {ReturnType<typeof buildDom>} */ ui, msg, pick, jump, go) {
  const link = (/** @type {string} */ text, /** @type {() => void} */ fn, cls = "") => {
    const a = h("button", { class: `tgviz-link ${cls}`.trim() }, [text]);
    a.addEventListener("click", fn);
    return a;
  };
  const other = (/** @type {any} */ e) => (e.other_key ? link(e.other, () => go(e.step, e.match, e.other_key), "tgviz-other") : e.other);
  const matches = (/** @type {number[]} */ ms, /** @type {string} */ what) => ms.length
    ? [h("div", {}, [`${what} by match `, ...ms.flatMap((m, i) => [i ? ", " : "", link(String(m + 1), () => jump(m))])])] : [];
  ui.nodePanel.replaceChildren(
    h("div", { class: "tgviz-node-head" }, [h("b", {}, [msg.op]), ` ${[msg.dtype, msg.key].filter(Boolean).join(" · ")}`, link("×", () => pick(""))]),
    msg.label ? h("div", {}, ["label ", h("code", {}, [msg.label.join(" · ")])]) : h("div", {}, ["arg ", h("code", {}, [msg.arg])]),
    ...(msg.tag !== "None" ? [h("div", {}, ["tag ", h("code", {}, [msg.tag])])] : []),
    h("div", {}, ["sources: ", ...(msg.sources.length ? msg.sources.flatMap((/** @type {any} */ s, /** @type {number} */ i) =>
      [i ? ", " : "", link(s.label, () => pick(s.key))]) : ["none"])]),
    ...matches(msg.created, "made"), ...matches(msg.replaced, "replaced"),
    ...(msg.history?.length ? [h("div", { class: "tgviz-history" }, [h("b", {}, ["history"]), " (why does this node exist?)",
      ...msg.history.map((/** @type {any} */ e) => h("div", { class: `tgviz-event ${e.kind}` },
                                                     [...historyText(e, other(e)), " ", link(e.title, () => go(e.step, e.match))]))])] : []),
    ...(msg.python ? [h("details", {}, [h("summary", {}, ["as tinygrad Python"]), h("pre", {}, [msg.python])])] : []));
  ui.nodePanel.hidden = false;
}

/** @param {{ model: any, el: HTMLElement }} ctx */
function render({ model, el }) {
  el.classList.add("tgviz");
  const ui = buildDom();
  el.append(ui.root);
  // the height is the user's to drag (CSS resize); it is kept for the rest of the browser session
  const saved = sessionStorage.getItem("tgviz-height");
  if (saved) ui.main.style.height = saved;
  new ResizeObserver(() => { if (ui.main.style.height) sessionStorage.setItem("tgviz-height", ui.main.style.height); }).observe(ui.main);
  ui.style.textContent = model.get("code_css");
  const summary = model.get("summary");
  ui.summary.textContent = summary.split("\n")[0];  // one line: the kernels are in the tree
  ui.summary.title = summary;
  ui.errorBox.textContent = model.get("error");
  ui.errorBox.hidden = !model.get("error");
  sidePanels(ui);
  const view = panZoom(ui);
  /** @type {TreeGroup[]} */
  const groups = model.get("tree");
  const steps = new Map(groups.flatMap((g) => g.steps.map((s) => [s.key, { group: g, step: s }])));
  const cache = new PictureCache(64);  // revisiting a step shows it at once, without a round trip to the kernel
  /** @type {Map<string, HTMLElement>} */
  let rows = new Map();
  /** @type {Selection|null} */
  let shown = null;
  /** @type {TreeGroup|null} */
  let shownGroup = null;

  /** @returns {Selection} */
  const selection = () => ({ step: model.get("selected"), match: model.get("match"), view: model.get("view") });

  function markSelected() {
    for (const r of ui.tree.querySelectorAll(".selected")) r.classList.remove("selected");
    const row = rows.get(model.get("selected"));
    if (!row) return;
    row.classList.add("selected");
    const det = /** @type {HTMLDetailsElement} */ (row.parentElement);
    if (det && !det.open) det.open = true;
    const r = row.getBoundingClientRect(), t = ui.tree.getBoundingClientRect();
    if (r.top < t.top || r.bottom > t.bottom) row.scrollIntoView({ block: "center" });  // not at an edge: in the middle
  }

  /** @type {string|null} */
  let picked = null;
  /** @type {any} the kernel whose code is shown (lines: per line, its UOps' node keys) */
  let kernel = null;
  /** @type {number|null} the code line clicked: its nodes stay marked */
  let pinnedLine = null;
  /** a code line was clicked to open the codegen graph: the next picture drawn zooms to its nodes */
  let lineZoom = false;
  /** The node drawn as key in the graph shown, if any. @param {string} key */
  const drawnNode = (key) => ui.stage.querySelector(`g.node[data-node="${CSS.escape(key)}"]`);
  /** Pick a node ("" or null: none): highlighted in the graph and its code lines, its panel asked for. @param {string|null} key */
  function pick(key) {
    picked = key || null;
    highlight(ui.stage, picked);
    markNodeLines(ui, picked, kernel?.lines ?? null);
    if (!picked) { ui.nodePanel.hidden = true; return; }
    model.send({ type: "node", key: picked });
  }
  /** The picked node again, in the graph now shown (none if it is not drawn there). */
  const repick = () => pick(picked && drawnNode(picked) ? picked : null);
  /** The nodes behind a code line (null: the pinned line's, if any), marked in the graph shown; returns how many.
   * @param {number|null} n */
  function markLine(n) {
    const line = n ?? pinnedLine;
    const marked = markLineNodes(ui.stage, line !== null && kernel?.lines ? kernel.lines[line - 1] || [] : []);
    for (const e of ui.code.querySelectorAll(".tgviz-line-pinned")) e.classList.remove("tgviz-line-pinned");
    if (pinnedLine !== null) ui.code.querySelector(`[data-line="${pinnedLine}"]`)?.classList.add("tgviz-line-pinned");
    return marked;
  }
  const LINE_HINT = "this line's UOps are not in this graph: click the line to open the codegen graph where they are";
  let statusBefore = "";
  /** A hovered code line (null: none) marks its UOps; where the graph shown has none of them, the status line says
   * where they are. @param {number|null} n */
  function hoverLine(n) {
    const keys = n !== null && kernel?.lines ? kernel.lines[n - 1] || [] : [];
    const hint = markLine(n) === 0 && keys.length > 0 && !!kernel.codegen_step && kernel.codegen_step !== model.get("selected");
    const showing = ui.status.textContent === LINE_HINT;
    if (hint && !showing) { statusBefore = ui.status.textContent; ui.status.textContent = LINE_HINT; }
    else if (!hint && showing) ui.status.textContent = statusBefore;
  }
  /** Go to a step and match by key; node: pick that node there. @param {string} step @param {number|null} match
   * @param {string} [node] */
  function go(step, match, node) {
    if (node !== undefined) picked = node;
    if (step !== model.get("selected")) select(step, match);
    else if (match !== model.get("match")) setMatch(match);
    else if (node !== undefined) repick();
  }

  /** @param {PictureMsg} msg */
  function showPicture(msg) {
    cache.put(msg);
    if (!sameSelection(msg, selection())) return;  // stale: a newer selection was made
    ui.canvas.classList.remove("busy");
    if (shown && sameSelection(msg, shown)) return;
    draw(msg);
  }

  /** @param {PictureMsg} msg */
  function draw(msg) {
    const group = steps.get(msg.step)?.group ?? null;
    const sameStep = shown !== null && shown.step === msg.step && ui.stage.querySelector("svg");
    shown = { step: msg.step, match: msg.match, view: msg.view };
    ui.stage.innerHTML = msg.svg;  // SVG built by tgviz.layout: every text is escaped there
    ui.stage.dataset.step = msg.step;
    ui.stage.dataset.match = msg.match === null ? "" : String(msg.match);
    showDetails(ui, msg, group !== shownGroup, select);  // first: its banner and pattern line take the canvas's room
    if (!ui.canvas.clientWidth) unplaced = true;  // not laid out yet (drawn before the page placed the widget): see below
    else if (sameStep) view.follow(); else view.initial();  // a new step opens readable; a new match keeps the zoom
    if (group !== shownGroup) { kernel = msg.kernel; pinnedLine = null; }
    shownGroup = group;
    repick();
    if (markLine(null) && lineZoom) view.toLine();
    lineZoom = false;
    markSelected();
  }

  // a picture drawn before the widget had a size opens on its view once it has one, with its tree row in view
  let unplaced = false;
  new ResizeObserver(() => {
    if (!unplaced || !ui.canvas.clientWidth) return;
    unplaced = false;
    view.initial();
    markSelected();
  }).observe(ui.canvas);

  function showCached() {
    const msg = cache.get(selection());
    if (msg) showPicture(msg);
    else if (!ui.staticNote.hidden) ui.status.textContent = "no kernel answers: run the cell again to explore";
  }

  /** Select a step (and a match of it) by key. @param {string} key @param {number|null} [match] */
  function select(key, match = null) {
    model.set("selected", key);
    model.set("match", match);
    model.set("view", "auto");
    model.save_changes();
    markSelected();
    showCached();
  }

  /** @param {number} dir -1 or +1; from the whole step (null) +1 goes to the first match */
  function stepMatch(dir) {
    const n = steps.get(model.get("selected"))?.step.matches ?? 0;
    const cur = model.get("match");
    const m = Math.max(-1, Math.min(n - 1, (cur === null ? -1 : cur) + dir));
    setMatch(m < 0 ? null : m);
  }

  /** @param {number|null} m */
  function setMatch(m) {
    if (m === model.get("match")) return;
    model.set("match", m);
    model.save_changes();
    showCached();
  }

  /** @param {number} dir */
  function moveStep(dir) {
    const order = [...rows.keys()];
    const i = order.indexOf(model.get("selected"));
    const key = order[Math.max(0, Math.min(order.length - 1, i < 0 ? 0 : i + dir))];
    if (key) select(key);
  }

  function buildTree() { rows = renderTree(ui, groups, select); markSelected(); }

  /** The kernel table (sortable; a row opens the kernel's first step). @param {any[]} kernels */
  function buildKernels(kernels) {
    const dims = (/** @type {number[]|null} */ v) => (v ? `[${v.join(", ")}]` : "–");
    ui.kernels.hidden = !kernels.length;
    ui.kernels.replaceChildren(h("summary", {}, [`kernel table (${kernels.length}): launch dimensions, tinygrad's estimates, measured time`]),
      h("div", {}, [sortableTable([{ key: "name", label: "kernel" }, { key: "global_size", label: "global", fmt: dims },
        { key: "local_size", label: "local", fmt: dims }, { key: "flops", label: "FLOPs", num: true, title: "tinygrad's estimate" },
        { key: "bytes", label: "bytes", num: true, title: "tinygrad's estimate of the bytes moved" },
        { key: "runs", label: "runs", num: true, title: "launches inside the capture" },
        { key: "time_us", label: "time (µs)", num: true, title: "measured device time of its launches, in total" }],
        kernels, (row) => select(row.step))]));
  }

  // a saved notebook reopened: the models come back from the notebook's widget state, but no kernel answers. Then the
  // picture saved with it (the selected step, as last shown) stays, with a note.
  /** @type {PictureMsg|undefined} */
  const kept = model.get("snapshot");
  if (kept?.svg) cache.put(kept);  // on first display too: the picture at once, before the kernel's answer
  let heard = false;
  function noKernel() {
    if (heard) return;
    ui.staticNote.hidden = false;
    if (!kept?.step) return;
    draw(kept);
    shown = null;  // a picture the kernel sends later is drawn over it
  }

  model.on("msg:custom", (/** @type {any} */ msg) => {
    if (!heard) { heard = true; ui.staticNote.hidden = true; }
    if (msg.type === "busy") {
      if (shown && sameSelection(msg, shown)) return;  // already shown from the cache
      ui.canvas.classList.add("busy"); ui.status.textContent = "laying out…";
    }
    else if (msg.type === "picture") showPicture(msg);
    else if (msg.type === "exported") ui.status.textContent = `exported SVG to ${msg.paths.join(", ")}`;
    else if (msg.type === "node") { if (msg.key === picked && msg.step === model.get("selected")) showNode(ui, msg, pick, setMatch, go); }
    else if (msg.type === "rules") showRules(ui, msg, go);
    else if (msg.type === "error") { ui.canvas.classList.remove("busy"); ui.status.textContent = msg.message; }
  });

  // a click on a node picks it; a drag pans (the canvas captures the pointer, so the node is read on the way down)
  /** @type {Element|null|undefined} */
  let down;
  ui.canvas.addEventListener("pointerdown", (ev) => { down = /** @type {Element} */ (ev.target).closest("g.node[data-node]"); }, { capture: true });
  ui.canvas.addEventListener("pointermove", (ev) => { if (ev.buttons && (Math.abs(ev.movementX) + Math.abs(ev.movementY)) > 1) down = undefined; });
  ui.canvas.addEventListener("pointerup", () => { if (down !== undefined) pick(down ? down.getAttribute("data-node") : null); down = undefined; });
  ui.slider.addEventListener("input", () => setMatch(Number(ui.slider.value) === 0 ? null : Number(ui.slider.value) - 1));
  ui.prev.addEventListener("click", () => stepMatch(-1));
  ui.next.addEventListener("click", () => stepMatch(1));
  ui.busiest.addEventListener("click", () => {
    const best = [...steps.values()].reduce((a, b) => (b.step.matches > a.step.matches ? b : a));
    select(best.step.key);
  });
  ui.fit.addEventListener("click", view.fit);
  ui.one.addEventListener("click", view.oneToOne);
  ui.zoomChange.addEventListener("click", view.toChange);
  ui.full.addEventListener("click", () => { model.set("view", "full"); model.save_changes(); });
  ui.exportBtn.addEventListener("click", () => { ui.status.textContent = "exporting…"; model.send({ type: "export" }); });
  // code lines: hover shows the UOps behind a line in the graph; a click keeps them marked and opens the graph the
  // renderer consumed (the kernel's final codegen step) where the current step does not draw them; either way the
  // graph zooms to them
  const lineOf = (/** @type {Event} */ ev) => /** @type {Element} */ (ev.target).closest?.("[data-line]");
  ui.code.addEventListener("mouseover", (ev) => { const e = lineOf(ev); if (e) hoverLine(Number(e.getAttribute("data-line"))); });
  ui.code.addEventListener("mouseleave", () => hoverLine(null));
  ui.code.addEventListener("click", (ev) => {
    const e = lineOf(ev);
    if (!e || !kernel?.lines) return;
    const n = Number(e.getAttribute("data-line"));
    pinnedLine = pinnedLine === n ? null : n;
    const keys = pinnedLine === null ? [] : kernel.lines[n - 1] || [];
    const drawn = keys.some((/** @type {string} */ k) => drawnNode(k));
    lineZoom = keys.length > 0 && !drawn && !!kernel.codegen_step && kernel.codegen_step !== model.get("selected");
    if (lineZoom) select(kernel.codegen_step);
    if (markLine(null) && drawn) view.toLine();
  });
  ui.rulesBtn.addEventListener("click", () => {
    const open = ui.rules.hidden;
    ui.rules.hidden = !open; ui.tree.hidden = open;
    ui.rulesBtn.classList.toggle("active", open);
    if (open && !ui.rules.childElementCount) { ui.rules.textContent = "counting…"; model.send({ type: "rules" }); }
  });
  ui.filter.addEventListener("input", buildTree);
  ui.hideEmpty.addEventListener("change", buildTree);

  // keyboard, only while the widget has focus: up/down steps, left/right matches, Home/End first/last match,
  // f fit, 1 one-to-one, z zoom to the change, / the filter
  const lastMatch = () => (steps.get(model.get("selected"))?.step.matches ?? 0) - 1;
  /** @type {Record<string, () => void>} */
  const keys = { ArrowUp: () => moveStep(-1), ArrowDown: () => moveStep(1), ArrowLeft: () => stepMatch(-1), ArrowRight: () => stepMatch(1),
                 Home: () => { if (lastMatch() >= 0) setMatch(0); }, End: () => { if (lastMatch() >= 0) setMatch(lastMatch()); },
                 f: view.fit, 1: view.oneToOne, z: view.toChange, "/": () => ui.filter.focus() };
  // heard on the window before anything else (Notebook 7 takes the arrow keys on the document, before they reach here)
  const onKey = (/** @type {KeyboardEvent} */ ev) => {
    if (!ui.root.contains(/** @type {Node} */ (ev.target))) return;
    if (ev.key === "Escape") { ui.root.blur(); return; }  // back to the notebook
    if (ev.ctrlKey || ev.metaKey || ev.altKey || (ev.shiftKey && ev.key === "Enter")) return;  // the notebook's: run, save, ...
    ev.stopPropagation();  // no other key leaks into the notebook (a, b, m, d d ... would edit cells)
    const fn = ev.target === ui.filter ? undefined : keys[ev.key];
    if (!fn) return;
    ev.preventDefault();
    fn();
  };
  window.addEventListener("keydown", onKey, true);
  ui.root.addEventListener("pointerdown", (ev) => { if (ev.target !== ui.filter) ui.root.focus({ preventScroll: true }); });

  model.on("change:selected", markSelected);
  buildKernels(model.get("kernels") ?? []);
  buildTree();
  showCached();
  model.send({ type: "ready" });
  const waiting = model.get("selected") ? setTimeout(noKernel, STATIC_AFTER_MS) : undefined;
  return () => { clearTimeout(waiting); window.removeEventListener("keydown", onKey, true); ui.root.remove(); };
}

export default { render };
