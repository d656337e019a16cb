// The search: the box over the tree (/ or Ctrl-F) finds kernels and steps by name, the user's Tensor ops and lines, UOps by
// op, arg and dtype, the rules that fired and their files, and code lines; its hits are listed under it grouped by kind,
// with their count (or "no match for …"), each a click away from where it is (a user's op: the kernel's graph, what
// it computes marked: computed). The widget's Python answers
// (tgviz/views/search.py); the report's page answers from the index it stores (port/search.js). Text from the trace is
// put in as text, never as HTML.
import { escapeHtml, h } from "./dom.js";

/** @typedef {import("./ui.js").Ui} Ui */
/** @typedef {import("./adapter.js").Adapter} Adapter */
/** @typedef {import("./messages.js").SearchMsg} SearchMsg */
/** @typedef {import("./messages.js").SearchHit} SearchHit */

/** Each kind of hit and its heading, in the order they are listed. */
const KINDS = /** @type {const} */ ([["kernel", "kernels"], ["step", "steps"], ["origin", "your Tensor ops and lines"], ["uop", "UOps"],
                                     ["rule", "rules that fired"], ["code", "code lines"]]);
const WAIT_MS = 40;  // after the last keystroke: a search per word typed, not per letter

/** Where a hit is, as its row says it. @param {SearchHit} hit */
function place(hit) {
  let at = hit.where;
  if (hit.match !== null) at += ` · match ${hit.match + 1}`;
  if (hit.line !== null) at += ` · line ${hit.line}`;
  if (hit.count !== null) at += ` · ${hit.count} match${hit.count === 1 ? "" : "es"} here`;
  return at;
}

/** The keys of the UOps the graph shown draws that compute the kernel's values (its reduces and ALU ops, not its index
 * arithmetic: tgviz.draw.svg's intlike): where a kernel's Tensor ops are. tinygrad names the ops a kernel computes, not
 * each UOp's, so a user's op found in a kernel is shown as these. @param {HTMLElement} stage */
export function computed(stage) {
  const nodes = stage.querySelectorAll("g.side g.node.fam-reduce:not(.intlike), g.side g.node.fam-alu:not(.intlike)");
  return [...new Set([...nodes].map((n) => /** @type {string} */ (n.getAttribute("data-node"))))];
}

/** The search box (ui.filter, which also filters the tree) and its hits (ui.results).
 * @param {Ui} ui @param {Adapter} state @param {(hit: SearchHit) => void} open a hit clicked: go where it is */
export function searchBox(ui, state, open) {
  /** @type {ReturnType<typeof setTimeout>|undefined} */
  let timer;
  let warmed = false;
  /** @type {SearchHit[]} the hits listed, in order */
  let listed = [];

  function ask() {
    const text = ui.filter.value;
    if (!text.trim()) { ui.results.hidden = true; ui.results.replaceChildren(); return; }
    state.send({ type: "search", text });
  }
  ui.filter.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(ask, WAIT_MS); });
  // the index is made (Python) or decoded (the report) ahead, as the box is first focused: the first search is fast too
  ui.filter.addEventListener("focus", () => { if (!warmed) { warmed = true; state.send({ type: "search", text: "" }); } });
  ui.filter.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && listed.length) { ev.preventDefault(); open(listed[0]); }
    if (ev.key === "Escape" && ui.filter.value) { ui.filter.value = ""; ui.filter.dispatchEvent(new Event("input")); }
  });
  ui.results.addEventListener("click", (ev) => {
    const row = /** @type {HTMLElement|null} */ (/** @type {Element} */ (ev.target).closest(".tgviz-hit"));
    if (!row) return;
    for (const r of ui.results.querySelectorAll(".tgviz-hit.active")) r.classList.remove("active");
    row.classList.add("active");
    open(listed[Number(row.dataset.i)]);
  });

  /** A search's answer: its hits listed by kind (an older search's answer is dropped). @param {SearchMsg} msg */
  function show(msg) {
    if (msg.text !== ui.filter.value || !msg.text.trim()) return;
    listed = msg.hits;
    const head = h("div", { class: "tgviz-results-head", role: "status" },
                   [msg.total ? `${msg.total} hit${msg.total === 1 ? "" : "s"} for “${msg.text.trim()}”` : `no match for “${msg.text.trim()}”`]);
    /** @type {string[]} hundreds of rows: written as one HTML text, every text from the trace escaped */
    const html = [];
    for (const [kind, heading] of KINDS) {
      if (!msg.counts[kind]) continue;
      html.push(`<details class="tgviz-hits kind-${kind}" open><summary>${heading} (${msg.counts[kind]})</summary>`);
      let shown = 0;
      for (const [i, hit] of msg.hits.entries()) {
        if (hit.kind !== kind) continue;
        const at = escapeHtml(place(hit)), text = escapeHtml(hit.text);
        html.push(`<div class="tgviz-hit kind-${kind}" data-i="${i}" role="button" title="${at}&#10;${text}">`,
                  `<span class="tgviz-hit-where">${at}</span><code class="tgviz-hit-text">${text}</code></div>`);
        shown++;
      }
      if (msg.counts[kind] > shown) html.push(`<div class="tgviz-hit-more">… ${msg.counts[kind] - shown} more: say more to narrow it</div>`);
      html.push("</details>");
    }
    ui.results.innerHTML = html.join("");
    ui.results.prepend(head);
    ui.results.hidden = false;
  }

  return {
    show,
    /** Focus the box, its text selected (/ and Ctrl-F). */
    focus() { ui.filter.focus(); ui.filter.select(); },
  };
}
