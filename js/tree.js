// The trace tree: groups and their steps (nested by depth, with match counts, "View ..." steps in bold, a kernel's key),
// filtered by the search box (by name, and to the groups its search found something in: a kernel that computes the op
// searched for) and "hide steps without matches"; the selected step's row marked and kept in view. A group's header
// clicked opens that group on its first step; the shown group's header folds it.
import { escapeHtml, scrollWithin } from "./dom.js";

const FOLLOW_MS = 250;  // after the last key in the box, the tree is filtered

/** A name (escaped HTML) that may break after an operator, before it breaks anywhere: a wrapped input written out reads
 * "…+r0*81)+" / "330)", not "+33" / "0)". @param {string} html */
const breaks = (html) => html.replace(/([+*/%(,])/g, "$1<wbr>");

/** @typedef {import("./ui.js").Ui} Ui */
/** @typedef {import("./messages.js").TreeGroup} TreeGroup */
/** @typedef {import("./messages.js").StepKey} StepKey */

/** The tree of groups and steps in ui.tree, rebuilt when the filter changes or the search answers.
 * @param {Ui} ui @param {TreeGroup[]} groups @param {() => StepKey} selected the step selected now
 * @param {(key: StepKey) => void} onSelect a row clicked */
export function stepTree(ui, groups, selected, onSelect) {
  /** @type {Map<StepKey, HTMLElement>} the rows shown, by step key, in display order */
  let rows = new Map();
  /** @type {{q: string, groups: Set<number>}|null} the groups the search found the box's text in, as it last answered */
  let found = null;
  /** @type {Set<number>} the groups the tree shows */
  let listed = new Set();
  let chosen = true;  // a step chosen that the tree has not scrolled to yet (see markSelected): the one it opens on first
  let built = false;

  /** Mark the selected step's row (its group opened) and scroll it into view where it is not: in the middle (not at an
   * edge), or, for a step just chosen (see choose), its group's header at the top where the row is within a tree's height
   * of it (a kernel's first steps under its name, not the steps of the kernel before). Only a choice scrolls so: a
   * picture drawn later marks the row again, and the tree may have moved under a click since. A choice made while the
   * tree is not laid out (under a sheet) waits for it. */
  function markSelected() {
    for (const r of ui.tree.querySelectorAll(".selected")) r.classList.remove("selected");
    const row = rows.get(selected());
    if (!row) return;
    row.classList.add("selected");
    const det = /** @type {HTMLDetailsElement} */ (row.parentElement);
    if (det && !det.open) det.open = true;
    if (!ui.tree.clientHeight) return;
    const opening = chosen;
    chosen = false;
    // the group laid out now (off screen it is not: content-visibility), so that where its header and row lie is true
    det?.style.setProperty("content-visibility", "visible");
    const r = row.getBoundingClientRect(), b = ui.tree.getBoundingClientRect();
    const head = det?.querySelector(":scope > summary")?.getBoundingClientRect().top ?? r.top;
    det?.style.removeProperty("content-visibility");
    if (r.top >= b.top && r.bottom <= b.bottom) return;  // in view: the tree stays where the user has it
    if (opening && ui.tree.scrollHeight > ui.tree.clientHeight && r.bottom - head <= b.height) ui.tree.scrollTop += head - b.top;
    else scrollWithin(row);
  }

  function build() {
    built = true;
    rows = new Map();
    listed = new Set();
    const q = ui.filter.value.trim().toLowerCase();
    const hit = found && found.q === q ? found.groups : null;  // (an older text's answer: not this one's)
    /** @type {string[]} */
    const html = [];  // a big trace has thousands of rows: written as one HTML text, far faster than element by element
    for (const g of groups) {
      const groupHit = !q || g.name.toLowerCase().includes(q) || !!hit?.has(g.index);
      const steps = g.steps.filter((s) => (groupHit || s.name.toLowerCase().includes(q) || !!s.where?.toLowerCase().includes(q)) &&
                                         (!ui.hideEmpty.checked || s.matches > 0 || s.snapshot));
      if (!steps.length) continue;
      listed.add(g.index);
      // --rows: the height an open group is laid out at while off screen (widget.css: content-visibility)
      html.push(`<details class="tgviz-group kind-${escapeHtml(g.kind)}" style="--rows:${steps.length}"${g.kind === "kernel" || q ? " open" : ""}>`,
                `<summary><span class="tgviz-kind">${escapeHtml(g.kind)}</span> ${escapeHtml(g.name)}`,
                g.key ? ` <span class="tgviz-key" title="the kernel's key: tinygrad's key of its AST, the same in every run">${escapeHtml(g.key)}</span>` : "",
                g.calls ? ` <span class="tgviz-group-calls" title="its calls: kernels compiled after it, reused from an earlier schedule, copies (its panel says more)">${escapeHtml(g.calls.join(" · "))}</span>` : "",
                ` <span class="tgviz-count">${g.matches}</span></summary>`);
      for (const s of steps) {
        const name = escapeHtml(s.name), title = s.where ? `${name} · ${escapeHtml(s.where)}` : name;  // (an unnamed rewrite's call site)
        html.push(`<div class="tgviz-step${s.snapshot ? " snapshot" : ""}${s.matches ? "" : " empty"}" role="treeitem" data-key="${escapeHtml(s.key)}"`,
                  ` style="padding-left:${14 + s.depth * 12}px"><span class="tgviz-name" title="${title}">${breaks(name)}</span>`,  // indented by depth
                  `<span class="tgviz-count">${s.matches}</span></div>`);
      }
      html.push("</details>");
    }
    ui.tree.innerHTML = html.join("");  // every text from the trace escaped above
    ui.tree.dataset.filter = q;  // what the tree shows now (it follows the box after a pause)
    for (const row of ui.tree.querySelectorAll(".tgviz-step")) rows.set(/** @type {StepKey} */ (/** @type {HTMLElement} */ (row).dataset.key), /** @type {HTMLElement} */ (row));
    markSelected();
  }

  ui.tree.addEventListener("click", (ev) => {  // a row clicked: one listener for them all
    const target = /** @type {Element} */ (ev.target);
    const row = /** @type {HTMLElement|null} */ (target.closest(".tgviz-step"));
    if (row && ui.tree.contains(row)) { onSelect(/** @type {StepKey} */ (row.dataset.key)); return; }
    // another group's header: that group, opened on its first step (its code, its origins); the shown group's folds
    const head = target.closest("summary"), det = /** @type {HTMLDetailsElement|null} */ (head?.parentElement ?? null);
    const first = /** @type {HTMLElement|null} */ (det?.querySelector(".tgviz-step") ?? null);
    if (!det || !first || !ui.tree.contains(det) || rows.get(selected())?.parentElement === det) return;
    ev.preventDefault();
    det.open = true;
    onSelect(/** @type {StepKey} */ (first.dataset.key));
  });
  // the box is the search's too: the tree (thousands of rows) follows once typing pauses, after the search's hits
  let typing = /** @type {ReturnType<typeof setTimeout>|undefined} */ (undefined);
  ui.filter.addEventListener("input", () => { clearTimeout(typing); typing = setTimeout(build, FOLLOW_MS); });
  ui.hideEmpty.addEventListener("change", build);
  // the tree's width changed (maximised, a column dragged, a scrollbar come): its names wrap anew, and the rows move
  // under a scroll position kept from before; the selected row is brought back into view where it left it
  let width = 0;
  new ResizeObserver(() => { if (ui.tree.clientWidth !== width && (width = ui.tree.clientWidth)) markSelected(); }).observe(ui.tree);
  return {
    build,
    /** Whether the tree has been built (widget.js builds a big one after the first picture). */
    get built() { return built; },
    /** The search answered: the tree keeps to the groups it found something in too (rebuilt at once where the tree
     * already follows that text and lacks one of them, else when it follows it). @param {import("./messages.js").SearchMsg} msg */
    found(msg) {
      const q = msg.text.trim().toLowerCase();
      if (!q) return;
      found = { q, groups: new Set(msg.groups) };
      if (ui.tree.dataset.filter === q && msg.groups.some((g) => !listed.has(g))) build();
    },
    markSelected,
    /** A step is being chosen (the tree, a link, the kernel table): the next mark scrolls to its group's header. */
    choose() { chosen = true; },
    /** The step `dir` rows after the selected one in the tree shown (the first row where none is selected), if any.
     * @param {number} dir */
    moved(dir) {
      const order = [...rows.keys()];
      const i = order.indexOf(selected());
      return order[Math.max(0, Math.min(order.length - 1, i < 0 ? 0 : i + dir))];
    },
  };
}
