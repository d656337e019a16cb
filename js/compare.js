// tgviz comparison: two traces' kernels paired in a sortable table; a row opens the two kernels' code as a diff and
// their landmark graphs side by side. Plain ESM for anywidget (CompareWidget); the HTML comparison page runs the same
// code on a model that answers from the page's data (open). Messages and state are those of tgviz/views/compare.py.
import { fitLines } from "./codelines.js";
import { h, svgEl } from "./dom.js";
import { notebooksKey } from "./keys.js";
import { MARGIN, MIN_READABLE, READABLE, around, fullestWindow, nodeBoxes, snapshotHeld, unclippedWindow, wholeIn } from "./fullest.js";
import { sortableTable } from "./table.js";
import { fmtTime, notSettled } from "./units.js";

/** A side's median, said to be one and of how many launches, or a single cold launch said to be one (its spread and
 * how it was timed: its tooltip). @param {any} r @param {string} s */
function median(r, s) {
  const m = r[`${s}_median_us`];
  if (m === null || m === undefined) return "–";
  return r[`${s}_cold`] ? `❄ ${fmtTime(m)} (1 cold launch)` : `${fmtTime(m)} (median of ${r[`${s}_timed_runs`]})`;
}
/** @param {any} r @param {string} s */
function medianTip(r, s) {
  if (r[`${s}_median_us`] === null || r[`${s}_median_us`] === undefined || r[`${s}_cold`]) return "";
  return `median of ${r[`${s}_timed_runs`]} launches: min ${fmtTime(r[`${s}_min_us`])}, max ${fmtTime(r[`${s}_max_us`])}` +
         (r[`${s}_timed`] === "re-timed" ? `; re-timed: after the capture, warm${notSettled(r[`${s}_settled`])}` : "");
}
/** @param {any} r @param {string} s */
const totalTip = (r, s) => (r[`${s}_time_us`] === null || r[`${s}_time_us`] === undefined ? "" : `total over ${r[`${s}_runs`]} launches`);
/** The side ("a" or "b") a row's key is of. @param {string} key */
const sideOf = (key) => key.slice(0, 1);

/** The columns of the pair table, each side's value one above the other (a above b; a side's button in a header sorts
 * by that side's), so that the table fits the widget: how paired, the kernels, code, the launches timed and their total
 * time, how the times compare (a difference inside the noise said so, a single cold launch said to be nothing to
 * compare), the median (of how many: what a retry's summary gives), launch, estimates. @param {string[]} labels */
function columns(labels) {
  const sides = (/** @type {string} */ key) => ({ sides: [`a_${key}`, `b_${key}`], names: labels });
  return [
    { key: "how", label: "paired by", title: "the same AST, the same name, the same ops (the same user ops, computed by other kernels), or a kernel only one side has" },
    { key: "name", label: "kernel", ...sides("name") },
    { key: "code", label: "code", title: "same code, or the lines the diff adds and removes" },
    { key: "runs", label: "launches", num: true, title: "its launches that were timed: what the total is over", ...sides("runs") },
    { key: "time_us", label: "total", num: true, title: "measured device time of all its launches, summed (a cell's tooltip: over how many)", ...sides("time_us"),
      fmt: (/** @type {number|null|undefined} */ v) => fmtTime(v ?? null),
      tip: (/** @type {any} */ r, /** @type {string} */ k) => totalTip(r, sideOf(k)) },
    { key: "time", label: "time", fmt: (/** @type {string|null} */ v) => v ?? "–",
      title: `${labels[1]} faster or slower than ${labels[0]}; within noise: a median inside the other's min – max (faster, slower: each outside it); cold: a single cold launch on a side, nothing to compare` },
    { key: "median_us", label: "median", num: true, ...sides("median_us"), title: "the median of its timed launches, of how many (what a retry's summary gives; a cell's tooltip: min, max, re-timed: after the capture, warm)",
      fmt: (/** @type {any} */ _v, /** @type {any} */ r, /** @type {string} */ k) => median(r, sideOf(k)), tip: (/** @type {any} */ r, /** @type {string} */ k) => medianTip(r, sideOf(k)) },
    { key: "launch", label: "global, local", ...sides("launch") },
    { key: "flops", label: "FLOPs", num: true, title: "tinygrad's estimate", ...sides("flops") },
    { key: "bytes", label: "bytes", num: true, title: "tinygrad's estimate of the bytes moved", ...sides("bytes") },
  ];
}

/** A unified diff as lines marked added, removed or hunk header. @param {string} diff @param {string|null} only */
function diffView(diff, only) {
  const pre = h("pre", { class: "tgviz-diff" });
  if (only) { pre.append(h("span", { class: "same" }, [`only in ${only}: nothing to diff against`])); return pre; }
  if (!diff) { pre.append(h("span", { class: "same" }, ["the same code on both sides"])); return pre; }
  for (const line of diff.split("\n")) {
    const cls = line.startsWith("@@") ? "hunk" : line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : "ctx";
    // a line longer than the box wraps at its spaces, its continuation hanging 4ch in from the code's own indent
    const indent = /^[-+ ]?([ \t]*)/.exec(line)?.[0].replace(/\t/g, "    ").length ?? 0;
    pre.append(h("span", { class: cls, style: `--in:${indent}` }, [line || "\n"]));  // (a block: a line of its own)
  }
  return pre;
}

/** One side of a pair: its kernel's head line, landmark graphs and code. @param {any} side @param {string} label */
function sideView(side, label) {
  if (!side) return h("div", { class: "tgviz-pair-side missing" }, [h("div", { class: "tgviz-pair-head" }, [`${label}: no such kernel`])]);
  const el = h("div", { class: "tgviz-pair-side", "data-kernel": side.name }, [h("div", { class: "tgviz-pair-head" }, [`${label}: ${side.head}`])]);
  for (const g of side.graphs) {
    const box = h("div", { class: "tgviz-landmark", "data-step": g.step }, [h("div", { class: "tgviz-landmark-name" }, [g.step])]);
    const pic = h("div", { class: "tgviz-landmark-svg" });
    pic.innerHTML = g.svg;  // SVG built by tgviz.draw.svg: every text is escaped there
    box.append(pic);
    el.append(box);
  }
  const code = h("details", { class: "tgviz-pair-code" }, [h("summary", {}, ["code"])]);
  const body = h("div", { class: "tgviz-code" });
  body.innerHTML = side.html;  // pygments output: the source is escaped by pygments
  code.append(body);
  fitLines(body);  // its lines not on screen as tall as they will be (sized once the code is opened)
  el.append(code);
  return el;
}

const ZOOM = 1.15, MAX_HEIGHT = 520;  // a wheel notch's zoom (as the trace browser's), px

/** The graphs of one landmark step on both sides, shown at one scale, readable (the trace browser's READABLE: 11 px
 * labels): where every side's graph fits its box readable, each centred, as close as fills the box of the one with
 * the least room (at most 1.5); else each whole where it fits its box, else on the window that shows the most of its nodes whole while it holds
 * the kernel's output and computing heart where they fit (fullest.js, as the trace browser's opening view of a
 * snapshot), and moved together: a drag pans both, ctrl+wheel (⌘+wheel, a touchpad's pinch)
 * zooms both around the pointer as the trace browser's wheel does. A plain wheel is left to the page: in a notebook it
 * scrolls the notebook. @param {HTMLElement[]} boxes */
function linkViews(boxes) {
  const sides = boxes.flatMap((box) => { const svg = box.querySelector("svg"); return svg ? [{ box, svg, x: 0, y: 0 }] : []; });
  if (!sides.length) return;
  const size = (/** @type {SVGSVGElement} */ svg, /** @type {string} */ a) => Number(svg.getAttribute(a)) || 1;
  let s = READABLE;
  const boxH = Math.min(MAX_HEIGHT, Math.ceil(Math.max(...sides.map((v) => size(v.svg, "height"))) * s));
  for (const b of boxes) b.style.height = `${boxH}px`;  // the sides' rows aligned
  // where every side's graph (its nodes: the title and legend are hidden) fits readable, each centred in its box, as
  // close as the one with the least room allows (at most 1.5), as the trace browser opens a graph that fits
  const graphs = sides.map((v) => around(nodeBoxes([...v.svg.querySelectorAll("g.side g.node")])));
  const room = Math.min(...sides.map((v, i) => {
    const g = graphs[i], boxW = v.box.clientWidth || size(v.svg, "width") * s;
    return g ? Math.min((boxW - 2 * MARGIN) / g.w, (boxH - 2 * MARGIN) / g.h) : Infinity;
  }));
  if (room >= MIN_READABLE && Number.isFinite(room)) {
    s = Math.min(room, 1.5);
    sides.forEach((v, i) => {
      const g = /** @type {import("./fullest.js").Box} */ (graphs[i]), boxW = v.box.clientWidth || size(v.svg, "width") * s;
      v.x = boxW / 2 - (g.x + g.w / 2) * s; v.y = boxH / 2 - (g.y + g.h / 2) * s;
    });
  } else for (const v of sides) {
    const boxW = v.box.clientWidth || size(v.svg, "width") * s;
    if (size(v.svg, "width") * s <= boxW && size(v.svg, "height") * s <= boxH) continue;  // whole
    const nodes = [...v.svg.querySelectorAll("g.side g.node")];  // (not the legend's)
    const rects = nodeBoxes(nodes), mark = rects.map(() => false), W = (boxW - 2 * MARGIN) / s, H = (boxH - 2 * MARGIN) / s;
    const keys = nodes.map((n) => n.getAttribute("data-node") ?? "");
    let must = snapshotHeld(nodes, rects, W, H);  // (a landmark step is a snapshot: its output and computing heart)
    let win = fullestWindow(rects, keys, mark, must, W, H, s, null);
    // what it holds far from the rest (a View Program's SINK, the graph's other nodes a box's height above it) showed
    // itself and bare edges: the window with the most nodes where that shows more than twice as many
    const free = must && fullestWindow(rects, keys, mark, null, W, H, s, null);
    if (free && (!win || 2 * wholeIn(rects, win) < wholeIn(rects, free))) { win = free; must = null; }
    if (!win) continue;
    const at = unclippedWindow(rects, win, must, mark, s, null);  // (SVG units, within the margin)
    v.x = MARGIN - at.x * s; v.y = MARGIN - at.y * s;
  }
  const apply = () => {
    for (const v of sides) {
      v.svg.style.transform = `translate(${v.x}px, ${v.y}px) scale(${s})`;
      v.box.dataset.view = [v.x, v.y, s].map((n) => n.toFixed(3)).join(" ");
    }
  };
  for (const b of boxes) {
    b.addEventListener("wheel", (ev) => {
      if (!ev.ctrlKey && !ev.metaKey) return;  // the page's wheel: the graph takes it only when asked to zoom
      ev.preventDefault();
      const r = b.getBoundingClientRect(), px = ev.clientX - r.left, py = ev.clientY - r.top, f = ev.deltaY < 0 ? ZOOM : 1 / ZOOM;
      for (const v of sides) { v.x = px - (px - v.x) * f; v.y = py - (py - v.y) * f; }
      s *= f;
      apply();
    }, { passive: false });
    /** @type {{x:number,y:number}|null} */
    let drag = null;
    b.addEventListener("pointerdown", (ev) => { drag = { x: ev.clientX, y: ev.clientY }; b.setPointerCapture(ev.pointerId); });
    b.addEventListener("pointermove", (ev) => {
      if (!drag) return;
      for (const v of sides) { v.x += ev.clientX - drag.x; v.y += ev.clientY - drag.y; }
      drag = { x: ev.clientX, y: ev.clientY };
      apply();
    });
    b.addEventListener("pointerup", () => { drag = null; });
  }
  apply();
}

/** The graphs' colour legend, once for both sides: the sides' own titles and legends are hidden (compare.css), as a
 * side's window (linkViews) would show them on one side and not the other. An item a small graph of its own, so that the
 * legend wraps in a narrow column (a notebook's) rather than being cut. @param {HTMLElement} detail */
function legendOnce(detail) {
  const legend = detail.querySelector(".tgviz-landmark-svg svg > g.legend");
  const hint = detail.querySelector(".tgviz-hint");
  if (!legend || !hint) return;
  const row = h("div", { class: "tgviz-pair-legend" });
  hint.append(row);
  for (const item of legend.querySelectorAll(":scope > g.node")) {
    const svg = svgEl("svg", { class: "tgviz-graph", height: 14 });
    const copy = /** @type {SVGGElement} */ (item.cloneNode(true));
    copy.setAttribute("transform", "translate(1,1)");
    svg.append(copy);
    row.append(svg);
    svg.setAttribute("width", String(Math.ceil(copy.getBBox().width) + 2));
  }
}

/** The kernels of the other side that compute the same user ops as a kernel's row (its group's), as rows.
 * @param {any[]} rows @param {any} row */
function counterparts(rows, row) {
  if (row.group === null || row.group === undefined || row.kind === "group") return [];
  const other = row.a_name ? "b_name" : "a_name";
  return rows.filter((r) => r.kind !== "group" && r.group === row.group && r[other]);
}

/** @param {{ model: any, el: HTMLElement }} ctx */
function renderComparison({ model, el }) {  // (not "render": the trace browser's what-if panel inlines this module)
  el.classList.add("tgviz");
  const labels = model.get("labels"), rows = model.get("rows");
  const root = h("div", { class: "tgviz-root tgviz-compare", tabindex: "0" });
  // the notebook's plain keys stay out of it, its own (notebooksKey) and Escape do not (JupyterLab's mark that suppresses
  // its shortcuts kept Ctrl+S out too)
  const keysOut = (/** @type {KeyboardEvent} */ ev) => {
    if (root.contains(/** @type {Node} */ (ev.target)) && ev.key !== "Escape" && !notebooksKey(ev)) ev.stopPropagation();
  };
  window.addEventListener("keydown", keysOut, true);
  const style = h("style");
  style.textContent = model.get("code_css");
  const counts = sortableTable([{ key: "label", label: "side" }, { key: "kernels", label: "kernels", num: true },
    { key: "steps", label: "steps", num: true }, { key: "matches", label: "matches", num: true },
    { key: "rewrite_ms", label: "rewrite time", num: true, fmt: (/** @type {number} */ v) => fmtTime(v * 1e3) }], model.get("sides"));
  counts.classList.add("tgviz-counts");
  const detail = h("div", { class: "tgviz-pair", hidden: "" });
  const status = h("div", { class: "tgviz-status", role: "status" });
  let opened = -1;  // the row whose pair was asked for
  /** Mark the opened row, and the rows of the kernels computing the same ops on the other side. */
  function mark() {
    const others = new Set(opened < 0 ? [] : counterparts(rows, rows[opened]).map((r) => String(r.index)));
    for (const tr of table.querySelectorAll("tbody tr")) {
      const i = /** @type {HTMLElement} */ (tr).dataset.index ?? "";
      tr.classList.toggle("selected", i === String(opened));
      tr.classList.toggle("counterpart", others.has(i));
    }
  }
  /** Open a row's pair (a group's row: its first kernel's). @param {any} row */
  function openRow(row) {
    opened = row.kind === "group" ? rows.find((/** @type {any} */ r) => r.under === row.index).index : row.index;
    mark();
    status.textContent = "laying out…";
    model.send({ type: "pair", index: opened });
  }
  const table = sortableTable(columns(labels), rows, openRow);
  table.tHead?.addEventListener("click", () => setTimeout(mark, 0), true);  // a sort makes the rows anew: marked after it
  table.classList.add("tgviz-pairs");
  const steps = sortableTable([{ key: "name", label: "step" }, { key: "a", label: labels[0], num: true }, { key: "b", label: labels[1], num: true },
    { key: "delta", label: "difference", num: true }], model.get("steps").map((/** @type {any} */ s) => ({ ...s, delta: s.b - s.a })));
  const stepBox = h("details", { class: "tgviz-steps" }, [h("summary", {}, ["steps whose match counts differ most"]), steps]);
  const summary = model.get("summary");
  const line = h("div", { class: "tgviz-summary", title: summary }, [summary.split("\n")[0]]);  // (its tally: Comparison.tally)
  root.append(style, line, counts, h("div", { class: "tgviz-hint" }, [`kernels (each cell: ${labels[0]} above, ${labels[1]} below; `
    + "click a header or a side's name to sort, a row to open the pair):"]), h("div", { class: "tgviz-table-box" }, [table]), status, detail, stepBox);
  el.append(root);

  model.on("msg:custom", (/** @type {any} */ msg) => {
    if (msg.type === "error") { status.textContent = msg.message; return; }
    if (msg.type !== "pair" || opened !== msg.index) return;  // stale: another row was opened
    status.textContent = "";
    const row = rows[msg.index], others = counterparts(rows, row);
    const names = msg.sides.map((/** @type {any} */ s) => s?.name ?? "–");
    /** @type {HTMLElement} */
    let diff;
    if (others.length) {  // a kernel of a group: beside the first kernel of the other side that computes the same ops
      const group = rows.find((/** @type {any} */ r) => r.kind === "group" && r.group === row.group);
      const links = others.map((/** @type {any} */ r) => h("button", { class: "tgviz-counterpart", type: "button" }, [r.a_name ?? r.b_name]));
      links.forEach((b, i) => b.addEventListener("click", () => openRow(others[i])));
      diff = h("div", { class: "tgviz-same-ops" }, [`${group.name}. Computed on the other side by: `, ...links,
        " (no line-by-line diff: other kernels)"]);
    } else diff = diffView(msg.diff, msg.sides[1] ? (msg.sides[0] ? null : labels[1]) : labels[0]);
    detail.replaceChildren(h("div", { class: "tgviz-title" }, [`${names[0]} ~ ${names[1]} (${row.how}${others.length ? ", the same ops" : ""})`]), diff,
                           h("div", { class: "tgviz-hint" }, ["graphs: drag to move both sides, ctrl+wheel to zoom both"]),
                           h("div", { class: "tgviz-pair-sides" }, [sideView(msg.sides[0], labels[0]), sideView(msg.sides[1], labels[1])]));
    detail.hidden = false;
    detail.dataset.index = String(msg.index);
    const boxes = [...detail.querySelectorAll(".tgviz-landmark")];
    legendOnce(detail);
    for (const step of new Set(boxes.map((b) => /** @type {HTMLElement} */ (b).dataset.step))) {
      linkViews(/** @type {HTMLElement[]} */ (boxes.filter((b) => /** @type {HTMLElement} */ (b).dataset.step === step)
        .map((b) => b.querySelector(".tgviz-landmark-svg"))));
    }
  });
  return () => { window.removeEventListener("keydown", keysOut, true); root.remove(); };
}

/** The HTML comparison page: render on a model that holds the state and answers each pair from the page's data.
 * @param {any} data {state, pairs} @param {HTMLElement} el */
export function open(data, el) {
  /** @type {((msg: any) => void)[]} */
  const handlers = [];
  const model = {
    get: (/** @type {string} */ k) => data.state[k],
    on: (/** @type {string} */ ev, /** @type {(msg: any) => void} */ cb) => { if (ev === "msg:custom") handlers.push(cb); },
    send: (/** @type {any} */ msg) => setTimeout(() => handlers.forEach((cb) => cb(data.pairs[msg.index])), 0),
  };
  renderComparison({ model, el });
}

export default { render: renderComparison };
