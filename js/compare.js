// tgviz comparison: two traces' kernels paired in a sortable table; a row opens the two kernels' code as a diff and
// their landmark graphs side by side. Plain ESM for anywidget (CompareWidget); the HTML comparison page runs the same
// code on a model that answers from the page's data (open). Messages and state are those of tgviz/views/compare.py.
import { h } from "./dom.js";
import { sortableTable } from "./table.js";

/** A side's median, said to be one and of how many launches; or a single cold launch said to be one (its spread, and
 * whether it was re-timed, in the cell's tip: the cells stay narrow enough for the four times to show beside the code).
 * @param {any} r @param {string} s */
function median(r, s) {
  const m = r[`${s}_median_us`];
  if (m === null || m === undefined) return "–";
  if (r[`${s}_cold`]) return `❄ ${oneDecimal(m)} (1 cold launch)`;
  const n = r[`${s}_timed_runs`];
  return `${oneDecimal(m)} (median of ${n} launch${n === 1 ? "" : "es"})`;
}
/** A median's spread, and whether its launches were re-timed after the capture. @param {any} r @param {string} s */
function spread(r, s) {
  if (r[`${s}_median_us`] === null || r[`${s}_median_us`] === undefined || r[`${s}_cold`]) return "";
  return `min ${oneDecimal(r[`${s}_min_us`])} µs, max ${oneDecimal(r[`${s}_max_us`])} µs` +
         (r[`${s}_timed`] === "re-timed" ? "; re-timed: after the capture, warm" : "");
}
/** A side's measured time summed, said to be a total over how many launches. @param {any} r @param {string} s */
function total(r, s) {
  const t = r[`${s}_time_us`];
  return t === null || t === undefined ? "–" : `${oneDecimal(t)} (total over ${r[`${s}_runs`]})`;
}
/** @param {number} v */
const oneDecimal = (v) => v.toLocaleString("en-US", { maximumFractionDigits: 1 });

/** The columns of the pair table: how paired, each side's name, code, then each side's median (the statistic a
 * retry's summary gives) and its total, each cell saying what it is and over how many launches; launch, estimates,
 * and how the medians compare (a difference inside the noise said so, a single cold launch said to be nothing to
 * compare). @param {string[]} labels */
function columns(labels) {
  const [a, b] = labels;
  const med = "the median of its timed launches (hover a cell: their min and max)";
  const sum = "measured device time of all its launches, summed";
  return [
    { key: "how", label: "paired by", title: "the same AST, the same name, or a kernel only one side has" },
    { key: "a_name", label: `${a} kernel` }, { key: "b_name", label: `${b} kernel` },
    { key: "code", label: "code", title: "same code, or the lines the diff adds and removes" },
    { key: "a_median_us", label: `${a} median µs`, num: true, fmt: (/** @type {any} */ _v, /** @type {any} */ r) => median(r, "a"), tip: (/** @type {any} */ r) => spread(r, "a"), title: med },
    { key: "b_median_us", label: `${b} median µs`, num: true, fmt: (/** @type {any} */ _v, /** @type {any} */ r) => median(r, "b"), tip: (/** @type {any} */ r) => spread(r, "b"), title: med },
    { key: "a_time_us", label: `${a} total µs`, num: true, fmt: (/** @type {any} */ _v, /** @type {any} */ r) => total(r, "a"), title: sum },
    { key: "b_time_us", label: `${b} total µs`, num: true, fmt: (/** @type {any} */ _v, /** @type {any} */ r) => total(r, "b"), title: sum },
    { key: "a_launch", label: `${a} global, local` }, { key: "b_launch", label: `${b} global, local` },
    { key: "a_flops", label: `${a} FLOPs`, num: true, title: "tinygrad's estimate" }, { key: "b_flops", label: `${b} FLOPs`, num: true },
    { key: "a_bytes", label: `${a} bytes`, num: true, title: "tinygrad's estimate of the bytes moved" }, { key: "b_bytes", label: `${b} bytes`, num: true },
    { key: "time", label: `${b} vs ${a}`, fmt: (/** @type {string|null} */ v) => v ?? "–",
      title: "b faster or slower; within noise: each median inside the other's min–max spread; cold: a single cold launch on a side, nothing to compare" },
  ];
}

/** A unified diff as lines marked added, removed or hunk header. @param {string} diff @param {string|null} only */
function diffView(diff, only) {
  const pre = h("pre", { class: "tgviz-diff" });
  if (only) { pre.append(h("span", { class: "same" }, [`only in ${only}: nothing to diff against`])); return pre; }
  if (!diff) { pre.append(h("span", { class: "same" }, ["the same code on both sides"])); return pre; }
  for (const line of diff.split("\n")) {
    const cls = line.startsWith("@@") ? "hunk" : line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : "ctx";
    pre.append(h("span", { class: cls }, [line + "\n"]));
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
  el.append(code);
  return el;
}

/** @param {{ model: any, el: HTMLElement }} ctx */
function renderComparison({ model, el }) {  // (not "render": the trace browser's what-if panel inlines this module)
  el.classList.add("tgviz");
  const labels = model.get("labels"), rows = model.get("rows");
  const root = h("div", { class: "tgviz-root tgviz-compare", tabindex: "0", "data-lm-suppress-shortcuts": "true" });
  const style = h("style");
  style.textContent = model.get("code_css");
  const counts = sortableTable([{ key: "label", label: "side" }, { key: "kernels", label: "kernels", num: true },
    { key: "steps", label: "steps", num: true }, { key: "matches", label: "matches", num: true },
    { key: "rewrite_ms", label: "rewrite time (ms)", num: true }], model.get("sides"));
  counts.classList.add("tgviz-counts");
  const detail = h("div", { class: "tgviz-pair", hidden: "" });
  const status = h("div", { class: "tgviz-status", role: "status" });
  /** @type {HTMLElement|null} */
  let selected = null;
  const table = sortableTable(columns(labels), rows, (row, tr) => {
    selected?.classList.remove("selected");
    (selected = tr).classList.add("selected");
    status.textContent = "laying out…";
    model.send({ type: "pair", index: row.index });
  });
  table.classList.add("tgviz-pairs");
  const steps = sortableTable([{ key: "name", label: "step" }, { key: "a", label: labels[0], num: true }, { key: "b", label: labels[1], num: true },
    { key: "delta", label: "difference", num: true }], model.get("steps").map((/** @type {any} */ s) => ({ ...s, delta: s.b - s.a })));
  const stepBox = h("details", { class: "tgviz-steps" }, [h("summary", {}, ["steps whose match counts differ most"]), steps]);
  const summary = model.get("summary");
  const line = h("div", { class: "tgviz-summary", title: summary }, [summary.split("\n")[0] +
    ` · ${rows.filter((/** @type {any} */ r) => !r.how.startsWith("only")).length} paired`]);
  root.append(style, line, counts, h("div", { class: "tgviz-hint" }, ["kernels (click a header to sort, a row to open the pair):"]),
              h("div", { class: "tgviz-table-box" }, [table]), status, detail, stepBox);
  el.append(root);

  model.on("msg:custom", (/** @type {any} */ msg) => {
    if (msg.type === "error") { status.textContent = msg.message; return; }
    if (msg.type !== "pair" || !selected || Number(selected.dataset.index) !== msg.index) return;  // stale: another row was opened
    status.textContent = "";
    const row = rows[msg.index];
    detail.replaceChildren(h("div", { class: "tgviz-title" }, [`${row.a_name ?? "–"} ~ ${row.b_name ?? "–"} (${row.how})`]),
                           diffView(msg.diff, msg.sides[1] ? (msg.sides[0] ? null : labels[1]) : labels[0]), h("div", { class: "tgviz-pair-sides" }, [sideView(msg.sides[0], labels[0]), sideView(msg.sides[1], labels[1])]));
    detail.hidden = false;
    detail.dataset.index = String(msg.index);
  });
  return () => root.remove();
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
