// The node panel (a clicked node: its op, label or dtype, arg and tag, sources, the matches that returned or replaced it,
// for a CALL the kernel it becomes, its history, where it came from back to its creation and the user's op, tinygrad's
// Python); its links go to steps, matches, nodes, kernels.
// The panel shows at once what the page holds (the node's label lines and its sources drawn in the SVG, the matches
// that made or replaced it from the picture message); the kernel's (or the report's) node message fills in the rest.
import { h } from "./dom.js";
import { heldList } from "./held.js";

/** @typedef {import("./ui.js").Ui} Ui */
/** @typedef {import("./messages.js").StepKey} StepKey */
/** @typedef {import("./messages.js").NodeMsg} NodeMsg */
/** @typedef {import("./messages.js").HistoryEvent} HistoryEvent */
/** @typedef {import("./messages.js").LineageLink} LineageLink */
/** @typedef {import("./messages.js").ProducedKernel} ProducedKernel */
/** @typedef {import("./messages.js").PictureMsg} PictureMsg */
/** What the page knows of a node before any message: its op and label lines, its sources drawn, the matches of the
 * step that made or replaced it, the kernel a CALL becomes. @typedef {Pick<NodeMsg, "key"|"op"|"sources"|"created"|"replaced"|"becomes">
 * & {label: string[]}} PageNode */

/** A node of the graph shown, from the SVG (data-node, data-op, its <title>'s label lines, the edges into it) and the
 * picture message (node_matches); null where it is not drawn. @param {HTMLElement} stage @param {string} key
 * @param {PictureMsg|null} msg @returns {PageNode|null} */
export function pageNode(stage, key, msg) {
  const q = (/** @type {string} */ k) => stage.querySelector(`g.node[data-node="${CSS.escape(k)}"]`);
  const el = q(key);
  if (!el) return null;
  const lines = (el.querySelector(":scope > title")?.textContent ?? "").split("\n");
  const from = [...new Set([...stage.querySelectorAll(`path.edge[data-to="${CSS.escape(key)}"]`)].map((e) => e.getAttribute("data-from") ?? ""))];
  const [created, replaced] = msg?.node_matches?.[key] ?? [[], []];
  const op = el.getAttribute("data-op") ?? lines[0], kernels = msg?.schedule?.kernels ?? {};
  return { key, op, label: lines.slice(1), created, replaced, sources: from.filter(Boolean).map((k) => ({ key: k, label: q(k)?.getAttribute("data-op") ?? "?" })),
           becomes: op === "CALL" ? kernels[from.find((k) => k in kernels) ?? ""] ?? null : null };  // (its AST: the source a kernel has)
}

const REBUILT = "rebuilt (a source changed)";  // tinygrad made the node anew because a match changed one of its sources

/** One event of a node's life, in words. @param {HistoryEvent} e @param {Node|string} other the node it came from or
 * was replaced by (a link to it, or its op) @returns {(Node|string)[]} */
function historyText(e, other) {
  // "an ADD", "a SINK": the article by the op's first letter
  const a = /^[AEIOU]/.test(typeof other === "string" ? other : other.textContent ?? "") ? "an" : "a";
  // back after it was gone: the same UOp (tinygrad's are unique by structure) in a later graph; not where it was made
  // ("made by" there read as its origin, against the chain above)
  if (e.again) return [`back, the same UOp, in ${e.kind === "input" ? "the input" : `match ${(e.match ?? 0) + 1}`}`,
                       ...(e.kind !== "input" && e.other ? [` (${e.kind === "created" ? "from" : "in the place of"} ${a} `, other, ")"] : []), " of"];
  if (e.kind === "input") return ["first seen in the input of"];
  if (e.kind === "created") return [`made by match ${(e.match ?? 0) + 1}`, ...(e.other ? [` (from ${a} `, other, ")"] : []), " of"];
  if (e.kind === "rebuilt") return [`${REBUILT} by match ${(e.match ?? 0) + 1}`, ...(e.other ? [` (in the place of ${a} `, other, ")"] : []), " of"];
  if (e.kind === "lives") return [e.steps > 1 ? `lives through ${e.steps} steps from` : "lives through"];
  if (e.kind === "replaced") return ["replaced", ...(e.other ? [` by ${a} `, other] : []), ` in match ${(e.match ?? 0) + 1} of`];
  return ["gone after"];
}

/** One run of a node's lineage, in words (before the link to its step): made or rebuilt by a match, as its history says
 * it, a run of them by its first match and its last (the node shown, where the run is the newest). The run's entry's
 * tooltip, its whole story. @param {LineageLink} l @returns {string} */
function lineageText(l) {
  const n = (/** @type {number|null} */ m) => (m ?? 0) + 1;
  if (l.kind === "input") return `${l.op} in the input of`;
  const what = l.kind === "rebuilt" ? REBUILT : "made";
  return l.count > 1 ? `${l.op} ${what} by ${l.count} matches, first by match ${n(l.match)}, last by match ${n(l.last)}, of`
    : `${l.op} ${what} by match ${n(l.match)} of`;
}

/** One run of a node's lineage as its entry's one line shows it: op, what made it, the step and match(es) and the
 * rule's file:line (the link, cut at its end where the line is short); the node it came from follows. @param {LineageLink} l @returns {[string, string, string]} */
function lineageLine(l) {
  if (l.kind === "input") return [`${l.op} input of`, l.name, ""];
  const n = (/** @type {number|null} */ m) => (m ?? 0) + 1;
  const what = `${l.kind === "rebuilt" ? "rebuilt" : "made"}${l.count > 1 ? ` ×${l.count}` : ""}`;
  return [`${l.op} ${what}`, `${l.name} ${l.count > 1 ? `matches ${n(l.match)}–${n(l.last)}` : `match ${n(l.match)}`}`, l.where];
}

/** The line atop the panel that answers "where did it come from?": the user's op(s) and line(s) of the kernel whose AST
 * the node's lineage starts in, and how many rewrites (matches) made it since. @param {NodeMsg} msg @returns {Node[]} */
function originLine(msg) {
  const rewrites = msg.lineage.reduce((n, l) => n + (l.kind === "input" ? 0 : l.count), 0);
  const since = `${rewrites ? `${rewrites} rewrite${rewrites > 1 ? "s" : ""}` : "not rewritten"} since ${msg.origins.length ? "the kernel's AST" : "its creation"}`;
  const ops = msg.origins.flatMap((o, i) => [i ? ", " : "", h("code", {}, [o.op + (o.backward ? " (backward)" : "")]), o.where ? ` at ${o.where}` : ""]);
  return [h("div", { class: "tgviz-made-by" }, [...(ops.length ? [msg.origins_own ? "made by " : "in a kernel from ", ...ops, "; "] : []), since])];
}

const FOLD_ENDS = 3;  // a long chain shows its newest entries and those back to the AST, this many each; the rest on a click

/** A long chain with its middle folded behind a "… N more" button, so that the node's history below it starts in the
 * panel's view (a chain of 20 one-line entries filled a 350 px panel); unfolded, the panel may take more of the column
 * (`unfolded`). @param {HTMLElement} lineage @param {() => void} unfolded @returns {HTMLElement} */
function folded(lineage, unfolded) {
  const entries = [...lineage.querySelectorAll(":scope > .tgviz-came")], middle = entries.slice(FOLD_ENDS, -FOLD_ENDS);
  if (middle.length < 2) return lineage;  // (one entry folded would take the button's line)
  for (const e of middle) /** @type {HTMLElement} */ (e).hidden = true;
  const more = h("button", { class: "tgviz-link tgviz-unfold" }, [`… ${middle.length} more`]), line = h("div", { class: "tgviz-came-more" }, [more]);
  more.addEventListener("click", () => {
    for (const e of middle) /** @type {HTMLElement} */ (e).hidden = false;
    // the focus to the first entry shown (the button goes: the page's body would take it, and the widget's keys, Escape
    // included, would not reach it in a notebook)
    /** @type {HTMLElement|null} */ (middle[0].querySelector(".tgviz-at"))?.focus({ preventScroll: true });
    line.remove();
    unfolded();
  });
  middle[0].before(line);
  return lineage;
}

/** The node panel: op, dtype, arg (the report, and the page's own node: its label lines), tag, sources (click: go to
 * it), the matches that made or replaced it, its history (click: go there; on the node it came from: that node there),
 * and the node as tinygrad's Python. A page node (not a message): what the page holds, shown at once, `pending` saying
 * what is still to come (its data-state "page"; a message's: "full"). @param {Ui} ui @param {NodeMsg|PageNode} msg
 * @param {(key: string) => void} pick @param {(m: number) => void} jump
 * @param {(step: StepKey, match: number|null, node?: string) => void} go @param {string} [pending] */
export function showNode(ui, msg, pick, jump, go, pending = "") {
  const link = (/** @type {Node|string} */ text, /** @type {() => void} */ fn, cls = "", /** @type {Node[]} */ more = []) => {
    const a = h("button", { class: `tgviz-link ${cls}`.trim() }, [text, ...more]);
    a.addEventListener("click", fn);
    return a;
  };
  const other = (/** @type {HistoryEvent} */ e) => (e.other_key ? link(e.other, () => go(e.step, e.match, e.other_key), "tgviz-other") : e.other);
  const matches = (/** @type {number[]} */ ms, /** @type {string} */ what) => ms.length
    ? [h("div", {}, [`${what} by match `, ...ms.flatMap((m, i) => [i ? ", " : "", link(String(m + 1), () => jump(m))])])] : [];
  const full = "type" in msg ? msg : null;
  ui.nodePanel.classList.remove("unfolded");  // (a chain unfolded gave it more of the column: a new node folds its own)
  ui.nodePanel.replaceChildren(
    h("div", { class: "tgviz-node-head" }, [h("b", {}, [msg.op]), ` ${[full?.dtype, msg.key].filter(Boolean).join(" · ")}`, link("×", () => pick(""))]),
    ...(full?.lineage?.length ? originLine(full) : []),
    msg.label ? h("div", {}, ["label ", h("code", {}, [msg.label.join(" · ")])]) : h("div", {}, ["arg ", h("code", {}, [full?.arg ?? ""])]),
    ...(full && full.tag !== "None" ? [h("div", {}, ["tag ", h("code", {}, [full.tag])])] : []),
    h("div", {}, ["sources: ", ...(msg.sources.length ? msg.sources.flatMap((s, i) =>
      [i ? ", " : "", link(s.label, () => pick(s.key))]) : [full ? "none" : "none drawn"])]),
    ...(msg.becomes ? [h("div", { class: "tgviz-becomes" }, ["becomes kernel ", link(msg.becomes.name, () => go(/** @type {ProducedKernel} */ (msg.becomes).step, null))])] : []),
    ...matches(msg.created, "returned"), ...matches(msg.replaced, "replaced"),
    ...(full?.lineage?.length ? [folded(h("div", { class: "tgviz-lineage" }, [h("b", {}, ["came from"]), " (newest first)",
      ...full.lineage.map((l) => { const [what, at, rule] = lineageLine(l);
        const from = l.other_key ? [l.kind === "input" ? " (built anew, in the place of a " : " from a ", l.other, l.kind === "input" ? ")" : ""] : [];
        return h("div", { class: `tgviz-came ${l.kind}`, title: [lineageText(l), " ", l.title, ...from].join("") }, [h("span", {}, [what]),
          link(at, () => go(l.step, l.match), "tgviz-at", rule ? [h("span", { class: "tgviz-where" }, [` · ${rule}`])] : []),
          ...(l.other_key ? [h("span", {}, ["←"]), link(l.other, () => go(l.other_step, l.other_match, l.other_key), "tgviz-other")] : [])]); })]),
      () => ui.nodePanel.classList.add("unfolded"))] : []),
    ...(full?.history?.length ? [h("div", { class: "tgviz-history" }, [h("b", {}, ["history"]), " (this UOp, step by step)",
      ...full.history.map((e) => h("div", { class: `tgviz-event ${e.kind}` },
                                                     [...historyText(e, other(e)), " ", link(e.title, () => go(e.step, e.match))]))])] : []),
    ...(full?.unknown ? [h("div", { class: "tgviz-history tgviz-unknown" }, [full.unknown])] : []),
    ...(full?.python ? [h("details", {}, [h("summary", {}, ["as tinygrad Python"]), h("pre", {}, [full.python])])] : []),
    ...(!full && pending ? [h("div", { class: "tgviz-pending" }, [pending])] : []));
  ui.nodePanel.dataset.state = full ? "full" : "page";
  ui.nodePanel.dataset.key = msg.key;
  const held = heldList(ui, msg.key);  // a folded node: what it holds
  if (held) ui.nodePanel.append(held);
  ui.nodePanel.hidden = false;
}
