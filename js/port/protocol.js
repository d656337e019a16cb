// The HTML report's ports of the tgviz/views/protocol.py functions that build the trace browser's messages (their types:
// messages.js, generated from tgviz/views/messages.py), which report.js runs in the page on its data. Each port mirrors:
//   matchInfo       protocol.match_info (without the diff: the page has no UOps to print)
//   viewOptions     picture.view_options
//   pictureMessage  protocol.picture_message (picture.js draws, dot compiled to WebAssembly lays out)
//   nodeMatches     steps.Step.node_matches (of the nodes drawn, as protocol.picture_message gives them)
//   nodeMessage     protocol.node_message (the node's label lines instead of its dtype, full arg, tag and Python)
//   history         protocol.history over trace.Trace.history
import { diffGraphs, picture, toposort } from "./picture.js";

/** @typedef {import("../messages.js").StepKey} StepKey */
/** @typedef {import("../messages.js").View} View */
/** @typedef {import("../messages.js").Selection} Selection */
/** @typedef {import("../messages.js").MatchInfo} MatchInfo */
/** @typedef {import("../messages.js").KernelInfo} KernelInfo */
/** @typedef {import("../messages.js").PictureMsg} PictureMsg */
/** @typedef {import("../messages.js").NodeMsg} NodeMsg */
/** @typedef {import("../messages.js").HistoryEvent} HistoryEvent */

/** @typedef {import("../report.js").PageData} PageData */
/** @typedef {import("../report.js").StepData} StepData */
/** @typedef {import("../report.js").Table} Table */
/** @typedef {[file: string, line: number, where: string, source: string]} Pattern  a row of the report's patterns */

/** protocol.match_info, without the diff: a match's panel from its step's data and the report's patterns.
 * @param {StepData} s @param {number} k @param {Pattern[]} patterns @returns {MatchInfo} */
export function matchInfo(s, k, patterns) {
  const [p, us, error] = s.matches[k], [file, line, where, source] = patterns[p];
  return { index: k, title: `${s.info.title}  match ${k + 1}/${s.matches.length}: ${source}  (${where})`, file, line, where,
           source, us, error, diff: "" };
}

/** picture.view_options: picture's view, the node keys a partial view is built around and whether it folds, for a
 * protocol View ("line:N": the auto view around the UOps of line N of the kernel's code; "node:KEY": around that node;
 * a "raw:" prefix: the raw graph).
 * @param {KernelInfo|null} kernel @param {View} view @returns {{view: string, around: string[], fold: boolean}} */
export function viewOptions(kernel, view) {
  const fold = !view.startsWith("raw:");
  if (!fold) view = view.slice(4);
  if (view.startsWith("node:")) return { view: "auto", around: [view.slice(5)], fold };
  const m = /^line:(\d+)$/.exec(view);
  if (!m) return { view, around: [], fold };
  const n = Number(m[1]), lines = kernel?.lines;
  return { view: "auto", around: lines && n > 0 && n <= lines.length ? lines[n - 1] : [], fold };
}

/** steps.Step.node_matches of the nodes drawn in svg: for each that a match of the step made or replaced, [the matches
 * that made it, those that replaced it]. @param {StepData} s @param {import("./picture.js").Row[]} rows @param {string} svg
 * @returns {Record<string, number[][]>} */
export function nodeMatches(s, rows, svg) {
  const drawn = new Set([...svg.matchAll(/data-node="([^"]+)"/g)].map((m) => m[1]));
  /** @type {Record<string, number[][]>} */
  const out = {};
  for (const [k, [u0, u1]] of s.pairs.entries()) {
    const a = rows[u0][0], b = rows[u1][0];
    if (drawn.has(b)) (out[b] ??= [[], []])[0].push(k);
    if (drawn.has(a)) (out[a] ??= [[], []])[1].push(k);
  }
  return out;
}

/** protocol.picture_message, computed in the page: the picture of a selection and the panels around it. Its `dot` is
 * the DOT text laid out. @param {PageData} data @param {Selection} sel @param {(dot: string) => string} layout runs dot
 * to "plain" output @returns {Promise<PictureMsg>} */
export async function pictureMessage(data, sel, layout) {
  const t = await data.table(sel.step), { s, rows } = t;
  const [before, after] = sel.match === null ? [s.graphs[0], data.after(t)] : [data.graphAt(t, sel.match), data.graphAt(t, sel.match + 1)];
  const patterns = await data.get("patterns");
  const match = sel.match === null ? null : matchInfo(s, sel.match, patterns);
  const title = match ? match.title : s.info.title, config = data.state.config;
  const group = await data.get(`g-${s.group}`);
  const { view, around, fold } = viewOptions(group.kernel, sel.view);
  const pic = picture(config, t.seg, before, after, s.sides, title, view, config.maxNodes, layout, around, fold,
                      sel.match === null ? null : s.pairs[sel.match]);
  return { type: "picture", ...sel, svg: pic.svg, partial: pic.partial, message: pic.message, shown: pic.shown,
           total: pic.total, info: { ...s.info, stack: group.stack }, match_info: match,
           kernel: group.kernel, produced: group.produced, node_matches: nodeMatches(s, rows, pic.svg), dot: pic.dot };
}

/** protocol.node_message from the page's data: the node's label lines (after its op) and sources (its dtype, full arg,
 * tag and tinygrad's Python need the trace in Python: tgviz.load). @param {PageData} data
 * @param {{step: StepKey, match: number|null}} sel @param {string} key @returns {Promise<NodeMsg>} */
export async function nodeMessage(data, sel, key) {
  const t = await data.table(sel.step), { s, rows } = t;
  const roots = sel.match === null ? [s.graphs[0], data.after(t)] : [data.graphAt(t, sel.match), data.graphAt(t, sel.match + 1)];
  const n = roots.flatMap((r) => toposort(rows, r)).find((i) => rows[i][0] === key);
  if (n === undefined) throw new Error(`no node ${key} here`);
  const [, , label, src] = rows[n];
  return { type: "node", step: sel.step, key, op: label[0], dtype: "", arg: "", label: label.slice(1), tag: "None",
           python: "", sources: src.map((i) => ({ key: rows[i][0], label: rows[i][2][0] })),
           created: s.pairs.flatMap((p, k) => (rows[p[1]][0] === key ? [k] : [])),
           replaced: s.pairs.flatMap((p, k) => (rows[p[0]][0] === key ? [k] : [])),
           history: await history(data, key, s.group) };
}

/** protocol.history (model.Trace.history, a run of steps folded into one event): a node's life in its group, from the
 * page's data. @param {PageData} data @param {string} key @param {number} groupIndex @returns {Promise<HistoryEvent[]>} */
export async function history(data, key, groupIndex) {
  const group = data.state.tree.find((g) => g.index === groupIndex), patterns = await data.get("patterns");
  /** @type {HistoryEvent[]} */
  const out = [];
  let runEnd = -2;
  /** other, otherKey: the op and key of the node it came from or was replaced by
   * @param {HistoryEvent["kind"]} kind @param {StepKey} step @param {StepData} s @param {number|null} match */
  const add = (kind, step, s, match, other = "", otherKey = "") => {
    out.push({ kind, step, match, title: match === null ? s.info.title : matchInfo(s, match, patterns).title, other,
               other_key: other ? otherKey : "", steps: 1 });
  };
  for (const [i, step] of (group ? group.steps : []).entries()) {
    const t = await data.table(step.key), { s, rows } = t;
    const holds = (/** @type {number} */ root) => (data.key(t, root), toposort(rows, root).some((n) => rows[n][0] === key));
    const opOf = (/** @type {number} */ x) => rows[x][2][0];
    const inBefore = holds(s.graphs[0]);
    let here = inBefore, made = false, replaced = false;
    if (here && !out.length) add("input", step.key, s, null);
    for (const [k, [u0, u1]] of s.pairs.entries()) {
      if (data.key(t, u0) === key) { add("replaced", step.key, s, k, opOf(u1), data.key(t, u1)); replaced = true; here = false; }
      else if (!here && holds(u1)) {
        add("created", step.key, s, k, opOf(u0), data.key(t, u0));
        made = here = true;
      }
    }
    if (holds(data.after(t))) {
      if (!here && !made && s.pairs.length) {  // rebuilt because a match changed a source: the first graph holding it
        let lo = 1, hi = s.pairs.length;
        while (lo < hi) { const mid = (lo + hi) >> 1; if (holds(data.graphAt(t, mid))) hi = mid; else lo = mid + 1; }
        // it took the place of its own earlier version: the node that match changed into it
        const was = [...diffGraphs(rows, data.graphAt(t, lo - 1), data.graphAt(t, lo)).changed].find(([, a]) => a === key)?.[0] ?? "";
        add("created", step.key, s, lo - 1, was && rows[rows.findIndex((r) => r[0] === was)][2][0], was);
      }
      if (out.length && out[out.length - 1].kind === "lives" && i === runEnd + 1) out[out.length - 1].steps += 1;
      else add("lives", step.key, s, null);
      runEnd = i;
    } else if ((here || inBefore) && !replaced) add("removed", step.key, s, null);
  }
  return out;
}
