// The HTML report's ports of the tgviz/views/protocol.py functions that build the trace browser's messages (their types:
// messages.js, generated from tgviz/views/messages.py), which report.js runs in the page on its data. Each port mirrors:
//   matchInfo       protocol.match_info (without the diff: the page has no UOps to print)
//   viewOptions     picture.view_options
//   pictureMessage  protocol.picture_message (picture.js draws, dot compiled to WebAssembly lays out)
//   nodeMatches     steps.Step.node_matches (of the nodes drawn, as protocol.picture_message gives them)
//   nodeMessage     protocol.node_message (the node's label lines instead of its dtype, full arg, tag and Python)
//   history         protocol.history over trace.Trace.history
//   lineage         protocol.lineage over trace.Trace.lineage (with its runs, steps.Lineage.runs)
//   becomes         protocol.becomes (from the schedule's calls, protocol.schedule_calls)
import { diffGraphs, picture, toposort } from "./picture.js";
import { CannotReplay, keptOnly } from "./replay.js";

/** @typedef {import("../messages.js").StepKey} StepKey */
/** @typedef {import("../messages.js").View} View */
/** @typedef {import("../messages.js").Selection} Selection */
/** @typedef {import("../messages.js").MatchInfo} MatchInfo */
/** @typedef {import("../messages.js").KernelInfo} KernelInfo */
/** @typedef {import("../messages.js").PictureMsg} PictureMsg */
/** @typedef {import("../messages.js").NodeMsg} NodeMsg */
/** @typedef {import("../messages.js").HistoryEvent} HistoryEvent */
/** @typedef {import("../messages.js").LineageLink} LineageLink */
/** @typedef {import("../messages.js").OriginInfo} OriginInfo */
/** @typedef {import("../messages.js").ProducedKernel} ProducedKernel */
/** @typedef {import("../messages.js").ScheduleCallsInfo} ScheduleCallsInfo */

/** @typedef {import("../report.js").PageData} PageData */
/** @typedef {import("../report.js").StepData} StepData */
/** @typedef {import("../report.js").Table} Table */
/** @typedef {import("./picture.js").Row} Row */
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

/** The roots of the graphs a selection shows, before and after (the step's input and what its rewrite returned, or
 * the graphs around its match), the matches they are the graphs after (at), and, where the report does not hold the
 * after one (a step too big to store every graph keeps its first matches': contents.STORE_NODES), the last it holds in
 * its place and a note that says so: the picture then shows what the step's first matches changed, the page's stage
 * and its selection agreeing (not a picture of another step under an error). @param {PageData} data @param {Table} t
 * @param {number|null} match @returns {{before: number, after: number, at: [number, number], note: string|null}} */
function rootsOf(data, t, match) {
  const { s } = t, n = s.pairs.length, last = data.kept(t);
  if (match === null ? s.after !== null || last === n : match < last) {
    return match === null ? { before: s.graphs[0], after: data.after(t), at: [0, n], note: null }
      : { before: data.graphAt(t, match), after: data.graphAt(t, match + 1), at: [match, match + 1], note: null };
  }
  const kept = `This report keeps the graphs of this step's first ${last} of ${n} matches only (too big to store them all)`;
  const note = match === null ? `${kept}: shown is what those ${last} changed, not the step's result.`
    : `${kept}: shown is the graph after match ${last}, not after match ${match + 1}.`;
  const from = match === null ? 0 : last;
  return { before: data.graphAt(t, from), after: data.graphAt(t, last), at: [from, last],
           note: `${note} tgviz in Python shows every graph (Step.at, or the widget).` };
}

/** The most nodes the page lays a whole graph ("full graph") out with, the page frozen while it does: graphviz's
 * WebAssembly laid out the GPT step's biggest graph, 3,525 nodes, in 13.5 s (dot itself 11 s), 1,019 in 0.4 s, and ran
 * out of memory after 2.5 minutes on 11,562 nodes of gpt-big's schedule; Python's picture has a time budget instead. */
const FULL_MOST = 2000;

/** protocol.picture_message, computed in the page: the picture of a selection and the panels around it. Its `dot` is
 * the DOT text laid out. @param {PageData} data @param {Selection} sel @param {(dot: string) => string} layout runs dot
 * to "plain" output @param {number} [most] the most nodes of a whole graph laid out (FULL_MOST) @returns {Promise<PictureMsg>} */
export async function pictureMessage(data, sel, layout, most = FULL_MOST) {
  const t = await data.table(sel.step), { s, rows } = t;
  const { before, after, note } = rootsOf(data, t, sel.match);
  const patterns = await data.get("patterns");
  const match = sel.match === null ? null : matchInfo(s, sel.match, patterns);
  const title = match ? match.title : s.info.title, config = data.state.config;
  const group = await data.get(`g-${s.group}`);
  const { view, around, fold } = viewOptions(group.kernel, sel.view);
  const pic = picture(config, t.seg, before, after, s.sides, title, view, config.maxNodes, layout, around, fold,
                      sel.match === null || note ? null : s.pairs[sel.match], most, note);
  return { type: "picture", ...sel, svg: pic.svg, partial: pic.partial, message: pic.message, shown: pic.shown,
           total: pic.total, info: { ...s.info, stack: group.stack }, match_info: match,
           kernel: group.kernel, produced: group.produced, schedule: group.schedule ?? null, node_matches: nodeMatches(s, rows, pic.svg), dot: pic.dot };
}

/** protocol.node_message from the page's data: the node's label lines (after its op) and sources (its dtype, full arg,
 * tag and tinygrad's Python need the trace in Python: tgviz.load). @param {PageData} data
 * @param {{step: StepKey, match: number|null}} sel @param {string} key @returns {Promise<NodeMsg>} */
export async function nodeMessage(data, sel, key) {
  const t = await data.table(sel.step), { s, rows } = t;
  const { before, after, at } = rootsOf(data, t, sel.match), roots = [before, after];
  const n = roots.flatMap((r) => toposort(rows, r)).find((i) => rows[i][0] === key);
  if (n === undefined) throw new Error(`no node ${key} here`);
  const first = toposort(rows, roots[0]).some((i) => rows[i][0] === key);  // which graph holds it: where its lineage starts
  const seenAt = first ? at[0] : at[1];
  const [, , label, src, , content] = rows[n];
  return { type: "node", step: sel.step, key, op: label[0], dtype: "", arg: "", label: label.slice(1), tag: "None",
           python: "", sources: src.map((i) => ({ key: rows[i][0], label: rows[i][2][0] })),
           created: s.pairs.flatMap((p, k) => (rows[p[1]][0] === key ? [k] : [])),
           replaced: s.pairs.flatMap((p, k) => (rows[p[0]][0] === key ? [k] : [])),
           becomes: becomes(label[0], src.map((i) => rows[i][0]), await data.get(`g-${s.group}`)),
           ...await nodeLife(data, { key, text: t.seg.contents[content][0] }, s.group,
                             stepsOf(data, s.group).findIndex((st) => st.key === sel.step), seenAt) };
}

/** A node as its life follows it from table to table: its key and its content's text (the first part of what the key
 * hashes: only rows of that text can be it). @typedef {{key: string, text: string}} Node */

/** A node's history and lineage, or, where they need a graph the report does not keep (a step of its group too big
 * to store every graph: contents.STORE_NODES), none and why (`unknown`), rather than no node panel at all.
 * @param {PageData} data @param {Node} node @param {number} group @param {number} i @param {number} k */
async function nodeLife(data, node, group, i, k) {
  try {
    await lastGraphsKept(data, group);
    return { history: await history(data, node, group), ...await lineage(data, node, group, i, k) };
  }
  catch (e) {
    if (!(e instanceof CannotReplay)) throw e;
    return { history: [], lineage: [], origins: [], origins_own: false, unknown: `its history and where it came from: ${e.message}` };
  }
}

/** Throws what life would at that step where a step of the group lacks its last graph (the report's "lacking",
 * contents.lacking): life follows the node to every step's last graph, and would replay the steps before it first (927
 * of gpt-big's schedule, seconds). @param {PageData} data @param {number} groupIndex */
async function lastGraphsKept(data, groupIndex) {
  const lacking = await data.get("lacking"), name = data.state.tree.find((g) => g.index === groupIndex)?.name ?? "";
  for (const st of stepsOf(data, groupIndex)) {
    if (st.key in lacking) { const [kept, total, step] = lacking[st.key]; throw keptOnly(kept, total, `${name} / ${step}`); }  // (as Step.path)
  }
}

/** protocol.becomes: the kernel a CALL node (its op, its sources' keys) of a schedule graph becomes, from its group's
 * data (the schedule's calls), null for another node. @param {string} op @param {string[]} sources
 * @param {{schedule?: ScheduleCallsInfo|null}} group @returns {ProducedKernel|null} */
export function becomes(op, sources, group) {
  return op === "CALL" && sources.length ? group.schedule?.kernels[sources[0]] ?? null : null;
}

/** A node's event in its group (trace.Trace._life): its kind, the step (its index in the group's steps, its key, data)
 * and match, and the op and key of the node it came from or was replaced by.
 * @typedef {{kind: HistoryEvent["kind"], i: number, step: StepKey, s: StepData, match: number|null, other: string, otherKey: string}} LifeEvent */

/** The group's steps as the tree lists them. @param {PageData} data @param {number} groupIndex */
const stepsOf = (data, groupIndex) => data.state.tree.find((g) => g.index === groupIndex)?.steps ?? [];

/** Whether the graph under root (a row of t) holds the node: the row of its key, if the table has made one (every row
 * of the graph is made by then), reached from root. @param {PageData} data @param {Table} t @param {number} root
 * @param {Node} node */
const holds = (data, t, root, node) => { const r = data.rowOf(t, node.key, node.text); return r >= 0 && reaches(t.rows, root, r); };

/** Whether row `to` is root or under it. A row's sources come before it in its table (those unpacked are in
 * toposort order, a replay appends the rows it makes): none below `to` leads to it. @param {Row[]} rows
 * @param {number} root @param {number} to */
function reaches(rows, root, to) {
  if (root < to) return false;
  const seen = new Set([root]), stack = [root];
  while (stack.length) {
    const n = /** @type {number} */ (stack.pop());
    if (n === to) return true;
    for (const x of rows[n][3]) if (x >= to && !seen.has(x)) { seen.add(x); stack.push(x); }
  }
  return false;
}

/** The row of this key among t's rows whose keys are computed (those of the graphs the page has made). @param {Table} t
 * @param {string} key */
const keyed = (t, key) => t.rows.findIndex((r) => r[0] === key);
/** The op of the node of this key in t's rows. @param {Table} t @param {string} key */
const opOfKey = (t, key) => t.rows[keyed(t, key)]?.[2][0] ?? "";
/** The node of this key in t's rows (its text "" where t has no row of it: no graph of t holds it). @param {Table} t
 * @param {string} key @returns {Node} */
const nodeOfKey = (t, key) => { const r = keyed(t, key); return { key, text: r < 0 ? "" : t.seg.contents[t.rows[r][5]][0] }; };

/** trace.Trace._life: the events of a node's life in its group, made as they are asked for (history folds them,
 * lineage takes the first). @param {PageData} data @param {Node} node @param {number} groupIndex
 * @returns {AsyncGenerator<LifeEvent>} */
async function* life(data, node, groupIndex) {
  const { key } = node;
  let present = false;  // in the graph the step before (prev) ended with
  /** @type {LifeEvent|null} */
  let prev = null;
  for (const [i, step] of stepsOf(data, groupIndex).entries()) {
    const t = await data.table(step.key), { s, rows } = t;
    const ev = (/** @type {HistoryEvent["kind"]} */ kind, /** @type {number|null} */ match, other = "", otherKey = "") =>
      ({ kind, i, step: step.key, s, match, other, otherKey });
    if (!data.hasText(t, node.text)) {  // no graph of the step can hold it: what the rest says then, without replaying
      if (present && prev) yield prev;
      present = false; prev = ev("removed", null);
      continue;
    }
    const opOf = (/** @type {number} */ x) => rows[x][2][0];
    const inBefore = holds(data, t, s.graphs[0], node);
    let here = inBefore, made = false, replaced = false;
    if (present && !here && prev) yield prev;  // the step's input built anew without it: gone after the step before
    if (here && !present) yield ev("input", null);
    for (const [k, [u0, u1]] of s.pairs.entries()) {
      if (data.key(t, u0) === key) {
        if (!here) yield rebuilt(data, t, node, k, i, step.key);  // rebuilt earlier in this step (see trace.Trace._life)
        yield ev("replaced", k, opOf(u1), data.key(t, u1));
        replaced = true; here = false;
      } else if (!here && holds(data, t, u1, node)) {
        made = here = true;
        // a replacement that is or holds a node the graph already had (rebuilt at an earlier match) made nothing (trace.Trace._life)
        if (holds(data, t, data.graphAt(t, k), node)) yield rebuilt(data, t, node, k, i, step.key);
        else yield ev("created", k, opOf(u0), data.key(t, u0));
      }
    }
    present = holds(data, t, data.after(t), node);
    prev = ev("removed", null);
    if (present) {
      if (!here && !made && s.pairs.length) yield rebuilt(data, t, node, s.pairs.length, i, step.key);
      yield ev("lives", null);
    } else if ((here || inBefore) && !replaced) yield prev;
  }
}

/** steps.rebuilt_event: the match after which the graph first holds the node (bisection up to the graph after hi
 * matches), the node it took the place of. @param {PageData} data @param {Table} t @param {Node} node @param {number} hi
 * @param {number} i @param {StepKey} step @returns {LifeEvent} */
function rebuilt(data, t, node, hi, i, step) {
  const lo = firstHolding(data, t, node, hi);
  const was = earlierOf(t, data.graphAt(t, lo - 1), t, data.graphAt(t, lo), node.key);
  return { kind: "rebuilt", i, step, s: t.s, match: lo - 1, other: was && opOfKey(t, was), otherKey: was };
}

/** The least k in 1..hi whose graph holds the node (the graph after hi matches does). @param {PageData} data
 * @param {Table} t @param {Node} node @param {number} hi */
function firstHolding(data, t, node, hi) {
  let lo = 1;
  while (lo < hi) { const mid = (lo + hi) >> 1; if (holds(data, t, data.graphAt(t, mid), node)) hi = mid; else lo = mid + 1; }
  return lo;
}

/** steps.diff_graphs's changed pairs, by key (the graphs may be in two tables): the key of the node of graph b (root rb
 * of tb) that the node `key` of graph a took the place of, "" where none. @param {Table} tb @param {number} rb
 * @param {Table} ta @param {number} ra @param {string} key */
function earlierOf(tb, rb, ta, ra, key) {
  const kb = (/** @type {number} */ n) => tb.rows[n][0], ka = (/** @type {number} */ n) => ta.rows[n][0];
  const bSet = new Set(toposort(tb.rows, rb).map(kb)), aSet = new Set(toposort(ta.rows, ra).map(ka)), seen = new Set();
  const todo = [[rb, ra]];
  while (todo.length) {
    const [b, a] = /** @type {number[]} */ (todo.pop());
    if (kb(b) === ka(a) || aSet.has(kb(b)) || bSet.has(ka(a)) || seen.has(kb(b))) continue;
    if (ka(a) === key) return kb(b);
    seen.add(kb(b));
    const bs = tb.rows[b][3], as = ta.rows[a][3];
    if (bs.length === as.length) for (let i = 0; i < bs.length; i++) todo.push([bs[i], as[i]]);
  }
  return "";
}

/** protocol.history (model.Trace.history, a run of steps folded into one event): a node's life in its group, from the
 * page's data. @param {PageData} data @param {Node} node @param {number} groupIndex @returns {Promise<HistoryEvent[]>} */
export async function history(data, node, groupIndex) {
  const patterns = await data.get("patterns");
  /** @type {HistoryEvent[]} */
  const out = [];
  let runEnd = -2;
  for await (const e of life(data, node, groupIndex)) {
    if (e.kind === "lives" && out.length && out[out.length - 1].kind === "lives" && e.i === runEnd + 1) out[out.length - 1].steps += 1;
    else out.push({ kind: e.kind, step: e.step, match: e.match, title: e.match === null ? e.s.info.title : matchInfo(e.s, e.match, patterns).title,
                    other: e.other, other_key: e.other ? e.otherKey : "", steps: 1,
                    again: out.length > 0 && ["input", "created", "rebuilt"].includes(e.kind) });
    if (e.kind === "lives") runEnd = e.i;
  }
  return out;
}

/** A link of a node's lineage (steps.Link), its step by index in the group. @typedef {{kind: LineageLink["kind"],
 * i: number, match: number|null, key: string, op: string, other: string}} Link */

/** trace.Trace.lineage and protocol.lineage: where a node (in the graph of step i after k matches) came from, back to its
 * creation, its runs newest first; the origins of the kernel whose AST the chain starts in, those of the node it starts
 * from where known (Kernel.origins_of). @param {PageData} data @param {Node} node @param {number} groupIndex
 * @param {number} i @param {number} k @returns {Promise<{lineage: LineageLink[], origins: OriginInfo[], origins_own: boolean}>} */
export async function lineage(data, { key, text }, groupIndex, i, k) {
  const steps = stepsOf(data, groupIndex), patterns = await data.get("patterns");
  const tableOf = (/** @type {number} */ j) => data.table(steps[j].key);
  /** step_before @param {number} j */
  const before = (j) => { for (let p = j - 1; p >= 0; p--) if (steps[p].depth <= steps[j].depth) return p; return -1; };
  /** Trace._first_made @param {Node} node @returns {Promise<Link|null>} */
  const firstMade = async (node) => {
    let e = null;
    for await (const x of life(data, node, groupIndex)) if (["input", "created", "rebuilt"].includes(x.kind)) { e = x; break; }
    if (e === null) return null;
    if ((e.kind === "created" || e.kind === "rebuilt") && e.match !== null) return made(node, e.i, e.match + 1);
    const t = await tableOf(e.i), p = before(e.i);
    const was = p < 0 ? "" : await (async () => { const tp = await tableOf(p); return earlierOf(tp, data.after(tp), t, t.s.graphs[0], node.key); })();
    return { kind: "input", i: e.i, match: null, key: node.key, op: opOfKey(t, node.key), other: was };
  };
  /** Trace._made: how the node, in the graph of step j after m matches, came into the graphs @param {Node} node
   * @param {number} j @param {number} m @returns {Promise<Link|null>} */
  const made = async (node, j, m) => {
    const t = await tableOf(j), { s } = t, { key } = node;
    if (holds(data, t, s.graphs[0], node)) return firstMade(node);
    const lo = firstHolding(data, t, node, m), [u0, u1] = s.pairs[lo - 1];
    const earlier = earlierOf(t, data.graphAt(t, lo - 1), t, data.graphAt(t, lo), key), op = opOfKey(t, key);
    if (data.key(t, u1) === key) return { kind: "created", i: j, match: lo - 1, key, op, other: data.key(t, u0) };
    if (holds(data, t, u1, node)) return { kind: "created", i: j, match: lo - 1, key, op, other: earlier || data.key(t, u0) };
    return { kind: "rebuilt", i: j, match: lo - 1, key, op, other: earlier };
  };
  /** @type {Link[]} */
  const links = [];
  const done = new Set([key]);
  let link = await made({ key, text }, i, k);
  while (link !== null) {
    links.push(link);
    if (!link.other || done.has(link.other)) break;
    done.add(link.other);
    // (the node it came from is in the graph before that match, or the step before's result: its row's key computed)
    const [j, m] = link.match !== null ? [link.i, link.match] : [before(link.i), -1];
    if (j < 0) link = null;
    else { const t = await tableOf(j); link = await made(nodeOfKey(t, link.other), j, m < 0 ? t.s.pairs.length : m); }
  }
  /** @type {LineageLink[]} */
  const out = [];
  for (const l of links) {  // Lineage.runs: one kind, one step, one op
    const run = out[out.length - 1];
    if (run && run.kind === l.kind && run.step === steps[l.i].key && run.op === l.op) {
      run.match = l.match; run.count += 1; run.other_key = l.other; run.other_match = l.match;
    } else out.push({ kind: l.kind, step: steps[l.i].key, match: l.match, last: l.match, count: 1, title: "", name: "", where: "", op: l.op, key: l.key,
                      other: "", other_key: l.other, other_step: "", other_match: l.match });
  }
  for (const run of out) {  // titles, and where the node each run came from is drawn
    const j = steps.findIndex((st) => st.key === run.step), t = await tableOf(j);
    const m = run.match === null ? null : matchInfo(t.s, run.match, patterns);
    run.title = m ? m.title : t.s.info.title;
    run.name = t.s.info.name;
    run.where = m ? m.where : "";
    const at = !run.other_key ? -1 : run.kind === "input" ? before(j) : j;
    if (at < 0) { run.other_key = ""; run.other_match = null; continue; }
    run.other_step = steps[at].key;
    run.other = opOfKey(await tableOf(at), run.other_key);
  }
  const last = links[links.length - 1];
  const fromAst = last !== undefined && last.kind === "input" && !last.other && last.i === 0;
  const kernel = fromAst ? (await data.get(`g-${groupIndex}`)).kernel : null;
  if (!kernel) return { lineage: out, origins: [], origins_own: false };
  const t0 = await tableOf(0), order = toposort(t0.rows, t0.s.graphs[0]), at = order.findIndex((r) => t0.rows[r][0] === last.key);
  const own = order.length === kernel.node_origins.length && at >= 0 && kernel.node_origins[at].length ? kernel.node_origins[at] : null;
  return { lineage: out, origins: own ? own.map((/** @type {number} */ o) => kernel.origins[o]) : kernel.origins, origins_own: own !== null };
}
