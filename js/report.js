// The standalone HTML report: the widget's own frontend (widget.js) on a stand-in for its model that answers from data
// in the page. Each segment's steps and node table and each group's call stack and kernel code sit compressed (zstd) in their own
// <script id="tgviz-..."> element (tgviz/report/writer.py writes them) and are decoded when first looked at; the graph after
// each match is computed here by replay.js where the step does not store it, and the messages are built by
// port/protocol.js, the ports of tgviz/views/protocol.py (pictures drawn by picture.js, laid out by graphviz compiled to WebAssembly);
// a search, by port/search.js over the index the report stores.
import { withoutDtype } from "./port/dtypes.js";
import { toposort } from "./port/picture.js";
import { nodeMessage, pictureMessage } from "./port/protocol.js";
import { Replay, keptOnly, keyOf, rowKey, unpackRows } from "./port/replay.js";
import { searchMessage } from "./port/search.js";

/** @typedef {import("./port/picture.js").Row} Row */
/** @typedef {import("./port/picture.js").Config} Config */
/** @typedef {import("./port/replay.js").Content} Content */
/** @typedef {import("./port/replay.js").ReplayOptions} ReplayOptions */
/** @typedef {import("./messages.js").StepKey} StepKey */
/** @typedef {import("./messages.js").StepInfo} StepInfo */
/** @typedef {import("./messages.js").Selection} Selection */
/** @typedef {import("./messages.js").KernelMsg} KernelMsg */
/** @typedef {import("./messages.js").FrontendMsg} FrontendMsg */
/** @typedef {import("./adapter.js").Model} Model */

/** The report's state: the widget's synced state (tgviz/views/messages.py), the drawing constants, the CALL notes and each
 * step's segment.
 * @typedef {{tree: import("./messages.js").TreeGroup[], selected: StepKey, match: number|null, view: import("./messages.js").View,
 *   code_css: string, summary: string, kernels: import("./messages.js").KernelRow[], error: string,
 *   config: Config & {maxNodes: number, opaqueBodies: string[], opFamilies: Record<string, string>,
 *     dtypes: import("./port/dtypes.js").DtypeRules},
 *   notes: Record<string, string>, segments: Record<StepKey, number>}} PageState */
/** A step as the report stores it (tgviz.report.step_data): its input's row in its segment's table, then the graphs
 * stored past the first `computed` matches (those after the matches in `stored`, the replay chains to the others; null:
 * after every later match, or a step too big to store them all the first few: contents.STORE_NODES), what the rewrite
 * returned (null: the replay's last), each match's [pattern, µs, raised] and [replaced, replacement] rows.
 * @typedef {{info: Omit<StepInfo, "stack">, sides: string[], graphs: number[], stored: number[]|null,
 *   after: number|null, replay: ReplayOptions|null, computed: number, group: number, pairs: [number, number][],
 *   matches: [number, number, boolean][]}} StepData */
/** A step as stored: its panel without its group's name and its title (the page has the group's from the tree).
 * @typedef {Omit<StepData, "info"> & {info: Omit<StepInfo, "stack" | "group" | "title">}} StoredStep */
/** A segment as the report stores it (tgviz.report.Writer.segment): its steps by key and its node table's rows,
 * packed (its contents are in the "c-<piece>" chunks: see contentsOf). @typedef {import("./port/replay.js").PackedRows &
 *   {steps: Record<StepKey, StoredStep>}} SegmentData */
/** A segment's node table: its rows unpacked (so every step's row ids hold), then the rows their replays rebuild (a
 * rebuilt node equal to a row is that row: the same UOp), what the replays share, its steps, and each step's replay.
 * Made as nodes are first looked for (rowOf): its content ids by their text (of the first textsUpTo contents: replays
 * add some), per key looked for, its row (-1: none) among the rows then made, and its contents' texts without their
 * dtypes (hasText). @typedef {import("./port/replay.js").NodeTable & {steps: Record<StepKey, StepData>,
 *   replays: Map<StepKey, Replay>, byText?: Map<string, number[]>, textsUpTo?: number, looked?: Map<string, [number, number]>,
 *   bare?: Set<string>}} Segment */
/** A step with its segment's table. @typedef {{key: StepKey, s: StepData, rows: Row[], seg: Segment}} Table */
/** The page's data as protocol.js reads it: the state, a decoded chunk by name ("patterns", "g-<group>", ...), a step's
 * table, the root of its graph after k matches and of what its rewrite returned (the keys of their rows computed), a
 * row's key (the rows of a step's matches have theirs computed only when asked: a row without one, "", is in no graph
 * shown, as keys are unique in a table), how many matches' graphs it can make (all but those of a step too big to
 * store them all: contents.STORE_NODES), whether a content text is in a step's table at all (a replay rebuilds nodes
 * with the contents of the rows it has: no graph of the step can hold a node of another), and the row of a key among
 * the rows made so far (-1: none; text: its content's, so that only the rows of that content get their keys computed).
 * @typedef {{state: PageState, get: (name: string) => Promise<any>, table: (key: StepKey) => Promise<Table>,
 *   graphAt: (t: Table, k: number) => number, key: (t: Table, row: number) => string, after: (t: Table) => number,
 *   kept: (t: Table) => number, hasText: (t: Table, text: string) => boolean,
 *   rowOf: (t: Table, key: string, text: string) => number}} PageData */

/** The page's data decoder: one data element of the page (JSON, zstd-compressed, base64: tgviz.report.contents.chunk)
 * by name, decoded with the decompress it is given (js/vendor/fzstd.js). @param {(data: Uint8Array) => Uint8Array} decompress
 * @returns {(name: string) => Promise<any>} */
export function decoder(decompress) {
  const text = new TextDecoder();
  return async (name) => {
    const el = document.getElementById(`tgviz-${name}`);
    if (!el) throw new Error(`the report has no data "${name}"`);
    const b64 = /** @type {string} */ (el.textContent).trim();
    /** @type {any} */
    const U8 = Uint8Array;  // fromBase64: native (Chromium 140, Firefox 133, Safari 18.2), far faster than atob's string
    const bytes = U8.fromBase64 ? U8.fromBase64(b64) : Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    return JSON.parse(text.decode(decompress(bytes)));
  };
}

/** Segment i's contents, in its table's order, from the pieces that hold them (each asked for once).
 * @param {{maps: Record<string, number[]>, pieces: number[]}} all the "contents" chunk: each segment's content ids, the
 * first id of each piece @param {number} i @param {(piece: number) => Promise<Content[]>} piece
 * @returns {Promise<Content[]>} */
export async function contentsOf(all, i, piece) {
  const starts = all.pieces, ids = all.maps[i];
  /** The piece that holds content id c: the last that starts at or before it. @param {number} c */
  const pieceOf = (c) => {
    let lo = 0, hi = starts.length - 1;
    while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (starts[mid] <= c) lo = mid; else hi = mid - 1; }
    return lo;
  };
  const held = ids.map(pieceOf), need = [...new Set(held)], got = new Map();
  await Promise.all(need.map(async (p) => got.set(p, await piece(p))));
  return ids.map((c, j) => got.get(held[j])[c - starts[held[j]]]);
}

/** Decoded data, the most recently used kept. */
class Decoded {
  /** @param {number} max @param {(name: string) => Promise<any>} load */
  constructor(max, load) { this.max = max; this.load = load; /** @type {Map<string, Promise<any>>} */ this.items = new Map(); }
  /** @param {string} name */
  get(name) {
    let p = this.items.get(name);
    if (p) this.items.delete(name);
    else p = this.load(name);
    this.items.set(name, p);
    if (this.items.size > this.max) this.items.delete(/** @type {string} */ (this.items.keys().next().value));
    return p;
  }
}

/** The page's data from its chunks: load(name) gives a chunk decoded (the page: decode; the tests: their own).
 * @param {PageState} state @param {(name: string) => Promise<any>} load
 * @param {(data: Uint8Array) => Uint8Array} sha256 @returns {PageData} */
export function pageData(state, load, sha256) {
  const data = new Decoded(16, load);
  /** @type {Promise<{maps: Record<string, number[]>, pieces: number[]}>|undefined} where the tables' contents are
   * (tgviz.report.Contents) */
  let shared;
  /** @type {Map<number, Promise<Content[]>>} the pieces of the contents decoded, kept */
  const pieces = new Map();
  /** @type {Map<number, Promise<Segment>>} the most recently used kept */
  const segments = new Map();
  const groupNames = new Map(state.tree.map((g) => [g.index, g.name]));
  /** @param {number} i @returns {Promise<Segment>} */
  function segmentOf(i) {
    let seg = segments.get(i);
    if (seg) segments.delete(i);
    else seg = (async () => {
      /** @type {SegmentData} */
      const d = await data.get(`t-${i}`), all = await (shared ??= load("contents"));
      data.items.delete(`t-${i}`);  // kept unpacked, here
      const contents = await contentsOf(all, i, (p) => {
        let got = pieces.get(p);
        if (!got) pieces.set(p, got = load(`c-${p}`));
        return got;
      });
      /** @type {Record<StepKey, StepData>} */
      const steps = {};
      for (const [key, s] of Object.entries(d.steps)) {
        const group = groupNames.get(s.group) ?? "";
        steps[key] = { ...s, info: { ...s.info, group, title: `${group} / ${s.info.name}` } };  // as Step.path
      }
      // keys left to compute (lazy): a picture needs only those of the rows it shows (see drawn)
      return { ...unpackRows(d, contents, sha256, state.notes, state.config.opFamilies, true), steps, replays: new Map() };
    })();
    segments.set(i, seg);
    if (segments.size > 8) segments.delete(/** @type {number} */ (segments.keys().next().value));
    return seg;
  }
  /** A graph's root, the keys of its rows computed (the rows of a segment get theirs as they are first shown).
   * @param {Segment} seg @param {number} root */
  const drawn = (seg, root) => { keyOf(seg, sha256, root); return root; };
  /** The matches after which the page can make the step's graph: all, or a step too big to store them all, the first
   * few (its graphs stored past the replay's, `stored` null). @param {Table} t */
  const kept = (t) => (t.s.stored === null ? t.s.computed + t.s.graphs.length - 1 : t.s.pairs.length);
  /** The root of a step's graph after k matches: stored, or computed by replay.js.
   * @param {Table} t @param {number} k */
  function graphAt(t, k) {
    if (k === 0 || (k > t.s.computed && t.s.stored === null)) {
      if (k > kept(t)) throw keptOnly(kept(t), t.s.pairs.length, t.s.info.title);
      return drawn(t.seg, t.s.graphs[k === 0 ? 0 : k - t.s.computed]);
    }
    let r = t.seg.replays.get(t.key);
    if (!r) t.seg.replays.set(t.key, r = new Replay(sha256, t.seg, t.s, state.config, state.notes));
    return drawn(t.seg, r.at(k));
  }
  /** A segment's content ids of this text. @param {Segment} seg @param {string} text @returns {number[]} */
  function contentsWith(seg, text) {
    const by = seg.byText ??= new Map(), contents = seg.contents;
    for (let i = seg.textsUpTo ?? 0; i < contents.length; i++) { const ids = by.get(contents[i][0]); if (ids) ids.push(i); else by.set(contents[i][0], [i]); }
    seg.textsUpTo = contents.length;
    return by.get(text) ?? [];
  }
  /** @param {Table} t @param {string} key @param {string} text */
  function rowOf(t, key, text) {
    const seg = t.seg, ids = contentsWith(seg, text);
    if (!ids.length) return -1;
    const looked = seg.looked ??= new Map(), [found, upTo] = looked.get(key) ?? [-1, 0];
    if (found >= 0) return found;
    let row = -1;  // (a replay appends rows: only those made since the last look are looked at)
    for (let r = upTo; r < seg.rows.length && row < 0; r++) if (ids.includes(seg.rows[r][5]) && rowKey(seg, sha256, r) === key) row = r;
    looked.set(key, [row, seg.rows.length]);
    return row;
  }
  return {
    state,
    get: (name) => data.get(name),
    async table(key) {
      const seg = await segmentOf(state.segments[key]), s = seg.steps[key];
      for (const root of [s.graphs[0], ...(s.after === null ? [] : [s.after])]) drawn(seg, root);  // the others: graphAt, data.key
      return { key, s, rows: seg.rows, seg };
    },
    graphAt,
    key: (t, row) => rowKey(t.seg, sha256, row),
    after: (t) => t.s.after ?? graphAt(t, t.s.pairs.length),  // what the rewrite returned: stored, or the replay's last
    kept,
    // a node of this text, or of it with another dtype (a replay derives those from the contents: js/port/dtypes.js)
    hasText: (t, text) => (t.seg.bare ??= new Set(t.seg.contents.map((c) => withoutDtype(c[0])))).has(withoutDtype(text)),
    rowOf,
  };
}

/** A stand-in for the anywidget model: holds the state and answers the frontend's requests from the page's data.
 * @param {{graphviz: any, sha256: {sha256: (data: Uint8Array) => Uint8Array}}} mods
 * @param {(name: string) => Promise<any>} decode a data element by name (decoder) @param {PageState} state */
async function pageModel(mods, decode, state) {
  const gv = await mods.graphviz.Graphviz.load();
  const layout = (/** @type {string} */ dot) => /** @type {string} */ (gv.layout(dot, "plain", "dot"));
  const data = pageData(state, decode, mods.sha256.sha256);
  /** @type {Record<string, ((msg?: any) => void)[]>} */
  const handlers = {};
  /** @param {string} ev @param {KernelMsg} [msg] */
  const emit = (ev, msg) => (handlers[ev] || []).forEach((cb) => cb(msg));
  const reply = (/** @type {KernelMsg} */ msg) => emit("msg:custom", msg);
  const failed = (/** @type {unknown} */ e) => reply({ type: "error", message: `${e}` });

  /** @type {Promise<import("./port/search.js").SearchIndex>|undefined} the search index (tgviz.trace.search), decoded once */
  let index;
  let latest = 0;
  async function answer() {
    /** @type {Selection} */
    const sel = { step: state.selected, match: state.match, view: state.view }, ticket = ++latest;
    reply({ type: "busy", ...sel, since: null });
    await new Promise((r) => setTimeout(r, 0));  // let the page paint "laying out…" first
    if (ticket !== latest) return;  // a newer selection supersedes this one
    try { reply(await pictureMessage(data, sel, layout)); }
    catch (e) { failed(e); }
  }

  function download() {
    const svg = document.querySelector(".tgviz-stage svg");
    if (!svg) return;
    const name = `tgviz-${state.selected.replace(/[^0-9]+/g, "-")}-${state.match === null ? "step" : state.match + 1}.svg`;
    const a = Object.assign(document.createElement("a"), {
      href: URL.createObjectURL(new Blob([svg.outerHTML], { type: "image/svg+xml" })), download: name });
    a.click();
    reply({ type: "exported", paths: [name + " (downloaded)"] });
  }

  /** @type {Model & Record<string, any>} */
  const model = {
    get: (k) => /** @type {Record<string, any>} */ (state)[k],
    set: (k, v) => { /** @type {Record<string, any>} */ (state)[k] = v; },
    save_changes() {  // (the picture: on the ready message that follows a change of the selection, as in the kernel)
      emit("change:selected");
    },
    on: (ev, cb) => { (handlers[ev] ||= []).push(cb); },
    send(msg) {
      if (msg.type === "ready") answer();
      if (msg.type === "export") download();
      if (msg.type === "node") nodeMessage(data, { step: state.selected, match: state.match }, msg.key).then(reply, failed);
      if (msg.type === "rules") data.get("rules").then(reply);
      if (msg.type === "uops" || msg.type === "asm") {  // the kernel's tabs: held per group (report.py's p-<group>)
        const kind = msg.type;
        data.table(msg.step).then((t) => data.get(`p-${t.s.group}`)).then((p) => reply(p[kind]), failed);
      }
      if (msg.type === "access") {  // the access tab: held per group (report.py's x-<group>)
        data.table(msg.step).then((t) => data.get(`x-${t.s.group}`)).then(reply, (e) => reply({ type: "error", message: `access: ${e}` }));
      }
      if (msg.type === "run") data.get("run").then(reply, (e) => reply({ type: "error", message: `run: ${e}` }));
      if (msg.type === "programmap") data.get("programmap").then(reply, (e) => reply({ type: "error", message: `programmap: ${e}` }));
      if (msg.type === "search") (index ??= decode("search")).then((ix) => reply(searchMessage(ix, msg.text)), failed);
    },
    /** For tests: the page's picture message for a selection (plain: dot's output to use instead of laying out here,
     * to compare with the Python side). @param {Selection} sel */
    pictureMessage: (sel, plain = "") => pictureMessage(data, sel, plain ? () => plain : layout),
    /** For tests: the node keys of a step's graph after k matches, in tinygrad's toposort order. @param {StepKey} key @param {number} k */
    async graphKeys(key, k) {
      const t = await data.table(key);
      return toposort(t.rows, data.graphAt(t, k)).map((n) => t.rows[n][0]);
    },
  };
  return model;
}

/** Render the report into el. @param {any} mods {widget, graphviz, sha256, fzstd} modules @param {HTMLElement} el */
export async function open(mods, el) {
  const decode = decoder(mods.fzstd.decompress), model = await pageModel(mods, decode, await decode("state"));
  /** @type {any} */ (window).tgvizReport = model;  // for tests and benchmarks: the page's own picture messages
  el.classList.add("tgviz-fullpage");  // the widget fills the window
  mods.widget.default.render({ model, el });
}
