// The standalone HTML report: the widget's own frontend (widget.js) on a model that answers from data in the page.
// Each step's node table and each group's call stack and kernel code sit gzipped in their own <script id="tgviz-..."> element and are
// decoded when first looked at; the graph after each match is computed here by replay.js where the step does not store it,
// and pictures are laid out by picture.js with graphviz compiled to WebAssembly.

import { Replay } from "./replay.js";

/** Decode one data element of the page (gzipped JSON, base64). @param {string} name @returns {Promise<any>} */
async function decode(name) {
  const el = document.getElementById(`tgviz-${name}`);
  if (!el) throw new Error(`the report has no data "${name}"`);
  const bytes = Uint8Array.from(atob(/** @type {string} */ (el.textContent).trim()), (c) => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text());
}

/** Decoded data, the most recently used kept. */
class Decoded {
  /** @param {number} max */
  constructor(max) { this.max = max; /** @type {Map<string, Promise<any>>} */ this.items = new Map(); }
  /** @param {string} name */
  get(name) {
    let p = this.items.get(name);
    if (p) this.items.delete(name);
    else p = decode(name);
    this.items.set(name, p);
    if (this.items.size > this.max) this.items.delete(this.items.keys().next().value);
    return p;
  }
}

/** A match's panel, as tgviz.protocol.match_info (without the diff), from its step's data and the report's patterns.
 * @param {any} s @param {number} k @param {any[][]} patterns */
function matchInfo(s, k, patterns) {
  const [p, us, error] = s.matches[k], [file, line, where, source] = patterns[p];
  return { index: k, title: `${s.info.title}  match ${k + 1}/${s.matches.length}: ${source}  (${where})`, file, line, where,
           source, us, error, diff: "" };
}

/** A stand-in for the anywidget model: holds the state and answers the frontend's requests from the page's data.
 * @param {any} mods {widget, picture, graphviz} modules @param {any} state */
async function pageModel(mods, state) {
  const gv = await mods.graphviz.Graphviz.load();
  const layout = (/** @type {string} */ dot) => gv.layout(dot, "plain", "dot");
  const data = new Decoded(16);
  /** @type {Record<string, ((msg?: any) => void)[]>} */
  const handlers = {};
  const changed = new Set();
  const emit = (/** @type {string} */ ev, /** @type {any} */ msg) => (handlers[ev] || []).forEach((cb) => cb(msg));

  /** A segment's node table: the rows and contents of its steps, in order, then the rows their replays rebuild (so
   * every step's row ids hold; a rebuilt node equal to a row is that row: the same UOp), and each step's replay; the
   * most recently used kept.
   * @typedef {{rows: any[], contents: any[], index?: Map<string, number>, keys?: Map<number, Uint8Array>,
   *   texts?: Map<number, Uint8Array>, replays: Map<string, Replay>}} Segment
   * @typedef {{key: string, s: any, rows: any[], seg: Segment}} Table  a step with its segment's table */
  /** @type {Map<string, Promise<Segment>>} */
  const segments = new Map();
  /** @param {string} last the segment's last step @returns {Promise<Segment>} */
  function segmentOf(last) {
    let seg = segments.get(last);
    if (seg) segments.delete(last);
    else seg = (async () => {
      const chain = [];
      for (let k = last; k; ) { const s = await data.get(`s-${k}`); chain.unshift(s); k = s.base; }
      const rows = [], contents = [];
      for (const c of chain) { for (const r of c.rows) rows.push(r); for (const x of c.contents) contents.push(x); }
      return { rows, contents, replays: new Map() };
    })();
    segments.set(last, seg);
    if (segments.size > 8) segments.delete(/** @type {string} */ (segments.keys().next().value));
    return seg;
  }
  /** @param {string} key @returns {Promise<Table>} */
  async function tableOf(key) {
    const s = await data.get(`s-${key}`), seg = await segmentOf(s.segment);
    return { key, s, rows: seg.rows, seg };
  }

  /** What a step's rewrite returned: stored, or its replay's last graph. @param {Table} t */
  const afterOf = (t) => t.s.after ?? graphAt(t, t.s.pairs.length);

  /** The root of a step's graph after k matches: computed by replay.js (the first `computed` ones), or stored. @param {Table} t @param {number} k */
  function graphAt(t, k) {
    if (k === 0 || k > t.s.computed) return t.s.graphs[k === 0 ? 0 : k - t.s.computed];
    let r = t.seg.replays.get(t.key);
    if (!r) t.seg.replays.set(t.key, r = new Replay(mods.sha256.sha256, t.seg, t.s, state.config, state.notes));
    return r.at(k);
  }

  /** The protocol's picture message for a selection, computed in the page (plain: dot's output to use instead of
   * laying out here, for tests that compare with the Python side). Its `dot` is the DOT text laid out. */
  async function pictureMessage(/** @type {{step:string, match:number|null, view:string}} */ sel, plain = "") {
    const t = await tableOf(sel.step), { s, rows } = t;
    const whole = sel.match === null;
    const [before, after] = whole ? [s.graphs[0], afterOf(t)] : [graphAt(t, sel.match), graphAt(t, sel.match + 1)];
    const patterns = await data.get("patterns");
    const match = whole ? null : matchInfo(s, sel.match, patterns);
    const title = match ? match.title : s.info.title;
    const pic = mods.picture.picture(state.config, rows, before, after, s.sides, title, sel.view, state.config.maxNodes,
                                     plain ? () => plain : layout);
    const group = await data.get(`g-${s.group}`);
    return { type: "picture", ...sel, svg: pic.svg, partial: pic.partial, message: pic.message, shown: pic.shown,
             total: pic.total, info: { ...s.info, stack: group.stack }, match_info: match,
             kernel: group.kernel, produced: group.produced, dot: pic.dot };
  }

  /** The node panel from the page's data: the node's label lines (after its op) and sources (its dtype, full arg, tag
   * and tinygrad's Python need the trace in Python: tgviz.load). @param {string} key */
  async function nodeMessage(key) {
    const sel = { step: state.selected, match: state.match }, t = await tableOf(sel.step), { s, rows } = t;
    const roots = sel.match === null ? [s.graphs[0], afterOf(t)] : [graphAt(t, sel.match), graphAt(t, sel.match + 1)];
    const n = roots.flatMap((r) => mods.picture.toposort(rows, r)).find((i) => rows[i][0] === key);
    if (n === undefined) throw new Error(`no node ${key} here`);
    const [, , label, src] = rows[n];
    return { type: "node", step: sel.step, key, op: label[0], dtype: "", arg: "", label: label.slice(1), tag: "None",
             python: "", sources: src.map((/** @type {number} */ i) => ({ key: rows[i][0], label: rows[i][2][0] })),
             created: s.pairs.flatMap((/** @type {number[]} */ p, /** @type {number} */ k) => (rows[p[1]][0] === key ? [k] : [])),
             replaced: s.pairs.flatMap((/** @type {number[]} */ p, /** @type {number} */ k) => (rows[p[0]][0] === key ? [k] : [])),
             history: await history(key, s.group) };
  }

  /** A node's life in its group, as tgviz.protocol.history (Trace.history, runs of steps folded), from the page's data.
   * @param {string} key @param {number} groupIndex */
  async function history(key, groupIndex) {
    const group = state.tree.find((/** @type {any} */ g) => g.index === groupIndex), patterns = await data.get("patterns");
    /** @type {any[]} */
    const out = [];
    let runEnd = -2;
    /** other, otherKey: the op and key of the node it came from or was replaced by */
    const add = (/** @type {string} */ kind, /** @type {string} */ step, /** @type {any} */ s, /** @type {number|null} */ match,
                 other = "", otherKey = "") => {
      out.push({ kind, step, match, title: match === null ? s.info.title : matchInfo(s, match, patterns).title, other,
                 other_key: other ? otherKey : "", steps: 1 });
    };
    for (const [i, step] of (group ? group.steps : []).entries()) {
      const t = await tableOf(step.key), { s, rows } = t;
      const holds = (/** @type {number} */ root) => mods.picture.toposort(rows, root).some((/** @type {number} */ n) => rows[n][0] === key);
      const opOf = (/** @type {number} */ x) => rows[x][2][0];
      const inBefore = holds(s.graphs[0]);
      let here = inBefore, made = false, replaced = false;
      if (here && !out.length) add("input", step.key, s, null);
      for (const [k, [u0, u1]] of s.pairs.entries()) {
        if (rows[u0][0] === key) { add("replaced", step.key, s, k, opOf(u1), rows[u1][0]); replaced = true; here = false; }
        else if (!here && holds(u1)) {
          add("created", step.key, s, k, opOf(u0), rows[u0][0]);
          made = here = true;
        }
      }
      if (holds(afterOf(t))) {
        if (!here && !made && s.pairs.length) {  // rebuilt because a match changed a source: the first graph holding it
          let lo = 1, hi = s.pairs.length;
          while (lo < hi) { const mid = (lo + hi) >> 1; if (holds(graphAt(t, mid))) hi = mid; else lo = mid + 1; }
          // it took the place of its own earlier version: the node that match changed into it
          const was = [...mods.picture.diffGraphs(rows, graphAt(t, lo - 1), graphAt(t, lo)).changed]
            .find(([, a]) => a === key)?.[0] ?? "";
          add("created", step.key, s, lo - 1, was && rows[rows.findIndex((/** @type {any[]} */ r) => r[0] === was)][2][0], was);
        }
        if (out.length && out[out.length - 1].kind === "lives" && i === runEnd + 1) out[out.length - 1].steps += 1;
        else add("lives", step.key, s, null);
        runEnd = i;
      } else if ((here || inBefore) && !replaced) add("removed", step.key, s, null);
    }
    return out;
  }

  let latest = 0;
  async function answer() {
    const sel = { step: state.selected, match: state.match, view: state.view }, ticket = ++latest;
    emit("msg:custom", { type: "busy", ...sel });
    await new Promise((r) => setTimeout(r, 0));  // let the page paint "laying out…" first
    if (ticket !== latest) return;  // a newer selection supersedes this one
    try { emit("msg:custom", await pictureMessage(sel)); }
    catch (e) { emit("msg:custom", { type: "error", message: `${e}` }); }
  }

  function download() {
    const svg = document.querySelector(".tgviz-stage svg");
    if (!svg) return;
    const name = `tgviz-${state.selected.replace(/[^0-9]+/g, "-")}-${state.match === null ? "step" : state.match + 1}.svg`;
    const a = Object.assign(document.createElement("a"), {
      href: URL.createObjectURL(new Blob([svg.outerHTML], { type: "image/svg+xml" })), download: name });
    a.click();
    emit("msg:custom", { type: "exported", paths: [name + " (downloaded)"] });
  }

  return {
    get: (/** @type {string} */ k) => state[k],
    set: (/** @type {string} */ k, /** @type {any} */ v) => { state[k] = v; changed.add(k); },
    save_changes() {
      const any = ["selected", "match", "view"].some((k) => changed.has(k));
      changed.clear();
      emit("change:selected");
      if (any) answer();
    },
    on: (/** @type {string} */ ev, /** @type {(msg?: any) => void} */ cb) => { (handlers[ev] ||= []).push(cb); },
    send(/** @type {any} */ msg) {
      if (msg.type === "ready") answer();
      if (msg.type === "export") download();
      if (msg.type === "node") nodeMessage(msg.key).then((m) => emit("msg:custom", m), (e) => emit("msg:custom", { type: "error", message: `${e}` }));
      if (msg.type === "rules") data.get("rules").then((m) => emit("msg:custom", m));
    },
    pictureMessage,
    /** For tests: the node keys of a step's graph after k matches, in tinygrad's toposort order. @param {string} key @param {number} k */
    async graphKeys(key, k) {
      const t = await tableOf(key);
      return mods.picture.toposort(t.rows, graphAt(t, k)).map((/** @type {number} */ n) => t.rows[n][0]);
    },
  };
}

/** Render the report into el. @param {any} mods {widget, picture, graphviz} modules @param {HTMLElement} el */
export async function open(mods, el) {
  const model = await pageModel(mods, await decode("state"));
  /** @type {any} */ (window).tgvizReport = model;  // for tests and benchmarks: the page's own picture messages
  mods.widget.default.render({ model, el });
}
