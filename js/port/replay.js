// The graphs after each match of a step, computed in the HTML report's page: the port of tgviz/bridge/replay.py's
// Replayer on the report's node table: its one pass (graph k = S_{D_k}(input)) and its chain (graph k =
// S_{D_k}(graph k-1), from the first match where a replaced node lies below another, and for walk rewrites).
// tinygrad's hash-consing is a lookup by (content, sources); a rebuilt node gets tgviz's label, and tinygrad's own key
// (sha256 of its content's text and its sources' keys) once asked for (keyOf). Each method mirrors (Replayer's unless said):
//   constructor  Replayer.__init__ and direct_below     at        Replayer.at            opaque   Replayer._opaque
//   keytime      Replayer._kt                             value     D_k.get (the replaces of the first k matches)
//   walked       Replayer._walk                           unified   Replayer._unified      own      the sources a rewrite visits
//   keyOf        tinygrad's UOp.key (bridge NodeTable.add computes it alike)
//   rebuild      UOp(...) through tinygrad's cache, labelled as bridge/uops.py _node and _cut do
// The report leaves a step's graphs to the page as far as bridge.page_replays says the page computes exactly VIZ's
// graphs (it stores the rest); tests/views/test_js_parity.py compares every graph with the Python side's step.at(k).

import { dtypesOf } from "./dtypes.js";

/** @typedef {import("./picture.js").Row} Row */
/** A content ([the text UOp.key hashes before its sources' keys, the node's own label lines, what folding reads]).
 * @typedef {import("./picture.js").Content} Content */
/** The node table the step's rows are in (rebuilt nodes are appended to its rows, and the contents of those rebuilt
 * with another dtype to its contents), its contents by content id, and what its replays share, made here when
 * missing: the hash-consing index (a hash of content and sources -> the rows with it: see consHash), each row's
 * UOp.key and each content's text, encoded, the content ids by their JSON, and each content's with another dtype
 * (by "content dtype").
 * @typedef {{rows: Row[], contents: Content[], index?: Map<number, number[]>, keys?: (Uint8Array|undefined)[],
 *   texts?: Map<number, Uint8Array>, contentIds?: Map<string, number>, redtyped?: Map<string, number>}} NodeTable  keys: by row */
/** The rewrite's options (Step.options). @typedef {{bottom_up: boolean, walk: boolean, enter_calls: boolean}} ReplayOptions */

/** A graph the page cannot compute; the Python side can. */
export class CannotReplay extends Error {
  /** @param {string} why */
  constructor(why) {
    super(`this report cannot compute the graph: ${why}. tgviz in Python shows it (Step.at, or the widget)`);
    this.name = "CannotReplay";
  }
}

/** What the page says of a step too big for the report to store every graph: kept, the matches after which it has the
 * graph; total, the step's matches; title, the step's. @param {number} kept @param {number} total @param {string} title */
export const keptOnly = (kept, total, title) =>
  new CannotReplay(`the report keeps the graphs of the first ${kept} of ${total} matches only of ${title} (too big to store them all)`);

const LINE = 60;  // bridge/uops.py _LINE
/** bridge/uops.py _cut: at most LINE code points. @param {string} s */
const cut = (s) => {
  if (s.length <= LINE) return s;  // no more code points than UTF-16 units
  const cps = [...s];
  return cps.length <= LINE ? s : cps.slice(0, LINE - 1).join("") + "…";
};
const HEX = Array.from({ length: 256 }, (_, x) => x.toString(16).padStart(2, "0"));
/** @param {Uint8Array} b */
const hex = (b) => { let out = ""; for (const x of b) out += HEX[x]; return out; };
const utf8 = new TextEncoder();

/** A node's family, label lines and fold from its content and sources, as tgviz/bridge/uops.py _node labels it (and
 * bridge.packing._derived says, which packs a report's rows: only what differs from this is stored); label null: a source
 * folded into it whose text only tinygrad can say. @param {Row[]} rows @param {Content[]} contents
 * @param {Record<string, string>} notes @param {Record<string, string>} families op -> family
 * @param {number} content @param {number[]} srcs @param {(row: number) => string} key a row's key (a CALL's note is
 * its first source's) @returns {[string, string[]|null, import("./picture.js").Fold]} */
export function derivedRow(rows, contents, notes, families, content, srcs, key) {
  const own = contents[content][1], op = own[0];
  /** @type {string[]|null} the content's own lines (shared: rows never change their labels) until more are added */
  let label = own;
  for (let i = 0; i < srcs.length && label; i++) {
    const fold = rows[srcs[i]][4];
    if (!fold) continue;
    if (fold[1] === null) label = null;
    else label = [...label, cut(`${fold[0]}${i} ${fold[1]}`)];
  }
  if (label && op === "CALL" && srcs.length) {
    const callee = rows[srcs[0]], note = notes[key(srcs[0])] || calleeNote(contents[callee[5]][1], callee[3].length);
    if (note) label = [...label, note];
  }
  /** @type {import("./picture.js").Fold} */
  let fold = 0;
  if ((op === "RESHAPE" || op === "EXPAND") && srcs.length && rows[srcs[0]][4]) fold = rows[srcs[0]][4];
  else if (op === "STACK" && srcs.every((s) => rows[s][2][0] === "CONST")) fold = ["STACK", null];
  else if (op === "CONST" && own.length > 1) fold = ["CONST", own[1]];
  return [families[op] ?? "other", label, fold];
}

/** What a CALL of no traced kernel or copy says it calls, read from the callee alone, as bridge.uops.callee_note says:
 * a LINEAR runs the schedule's calls in order, a SINK without a kernel's info is the scheduled function, a COPY copies
 * to a device. @param {string[]} own the callee's own label lines (its op first) @param {number} srcs its number of
 * sources @returns {string} "" for any other callee */
function calleeNote(own, srcs) {
  const op = own[0];
  if (op === "LINEAR") return `→ its ${srcs} calls, in order`;
  if (op === "SINK" && own.length === 1 && srcs) return `→ the scheduled function: ${srcs} output${srcs !== 1 ? "s" : ""}`;
  if (op === "COPY" && own.length > 1) return `→ a copy to ${own[1]}`;
  return "";
}

/** tinygrad's UOp.key: sha256 of the content's text (encoded once, in texts), then the sources' keys.
 * @param {(data: Uint8Array) => Uint8Array} sha256 @param {Map<number, Uint8Array>} texts @param {Content[]} contents
 * @param {number} content @param {Uint8Array[]} keys @returns {Uint8Array} */
function keyDigest(sha256, texts, contents, content, keys) {
  let text = texts.get(content);
  if (!text) texts.set(content, text = utf8.encode(contents[content][0]));
  const data = new Uint8Array(text.length + 32 * keys.length);
  data.set(text);
  keys.forEach((k, i) => data.set(k, text.length + 32 * i));
  return sha256(data);
}

const TEMPLATES = 8;  // bridge/uops.py _TEMPLATES

/** A report's node table as tgviz/bridge/packing.py pack_rows stores it: each row's content id, its sources told against
 * an earlier row of the same content and arity (_packed_sources: [-q (the template: the q-th before the last such
 * row)], then per source 0 for the template's, else how many rows back), and [row, field, value] where the row is not
 * what derivedRow says.
 * @typedef {{content: number[], src: number[][], over: [number, number, any][]}} PackedRows */

/** tinygrad's UOp.key of a row, and of every row below it that lacks it (sources first, without recursion: graphs can
 * be deep): kept in the table's keys, and written into each row (its first 6 bytes, hex) where that is "" (see
 * unpackRows). @param {NodeTable} table @param {(data: Uint8Array) => Uint8Array} sha256 @param {number} root
 * @returns {Uint8Array} */
export function keyOf(table, sha256, root) {
  const keys = keysOf(table), texts = table.texts ??= new Map(), rows = table.rows;
  let key = keys[root];
  if (key) return key;
  const stack = [root];
  while (stack.length) {
    const n = /** @type {number} */ (stack[stack.length - 1]);
    if (keys[n]) { stack.pop(); continue; }
    const srcs = rows[n][3], depth = stack.length;
    for (const s of srcs) if (!keys[s]) stack.push(s);
    if (stack.length > depth) continue;
    keys[n] = key = keyDigest(sha256, texts, table.contents, rows[n][5], srcs.map((s) => /** @type {Uint8Array} */ (keys[s])));
    if (rows[n][0] === "") rows[n][0] = hex(key.subarray(0, 6));
    stack.pop();
  }
  return /** @type {Uint8Array} */ (keys[root]);
}

/** The table's keys by row, one slot per row (a dense array: rows are keyed in any order). @param {NodeTable} table */
function keysOf(table) {
  const keys = table.keys ??= [];
  while (keys.length < table.rows.length) keys.push(undefined);
  return keys;
}

/** A row's key as rows hold it (its UOp.key's first 6 bytes, hex), computed where missing (keyOf).
 * @param {NodeTable} table @param {(data: Uint8Array) => Uint8Array} sha256 @param {number} row */
export const rowKey = (table, sha256, row) => { keyOf(table, sha256, row); return table.rows[row][0]; };

/** The rows of a packed table, each with what derivedRow says unless stored, and tinygrad's key: computed for every row
 * (the keys are kept, for the replays), or with lazy only where a CALL's note needs it, the others "" until keyOf
 * computes them (the page: a table holds many steps' rows, and a picture needs the keys of the rows it draws).
 * @param {PackedRows} packed @param {Content[]} contents @param {(data: Uint8Array) => Uint8Array} sha256
 * @param {Record<string, string>} notes @param {Record<string, string>} families @returns {NodeTable} */
export function unpackRows(packed, contents, sha256, notes, families, lazy = false) {
  /** @type {Row[]} */
  const rows = [];
  /** @type {NodeTable} */
  const table = { rows, contents, keys: [], texts: new Map() };
  const key = (/** @type {number} */ row) => rowKey(table, sha256, row);
  /** @type {Map<number, [number, any][]>} */
  const over = new Map();
  for (const [i, field, value] of packed.over) { let o = over.get(i); if (!o) over.set(i, o = []); o.push([field, value]); }
  /** @type {Map<number|string, number[]>} the last TEMPLATES rows of each content and arity */
  const recent = new Map();
  packed.content.forEach((content, i) => {
    let told = packed.src[i], q = 0;
    if (told.length && told[0] < 0) { q = -told[0]; told = told.slice(1); }
    const at = told.length < 65536 ? content * 65536 + told.length : `${content}|${told.length}`;
    let cands = recent.get(at);
    if (!cands) recent.set(at, cands = []);
    const template = cands.length ? rows[cands[cands.length - 1 - q]][3] : [];
    const srcs = told.map((d, p) => (d === 0 ? template[p] : i - d));
    cands.push(i);
    if (cands.length > TEMPLATES) cands.shift();
    const [family, label, fold] = derivedRow(rows, contents, notes, families, content, srcs, key);
    /** @type {any[]} */
    const row = ["", family, label, srcs, fold, content];
    const o = over.get(i);
    if (o) for (const [field, value] of o) row[field] = value;
    rows.push(/** @type {Row} */ (row));
    if (!lazy) keyOf(table, sha256, i);
  });
  return table;
}

/** A hash of a node's content and sources (the rows of a table with both alike are one UOp). @param {number} content
 * @param {number[]} srcs */
const consHash = (content, srcs) => {
  let h = content | 0;
  for (const s of srcs) h = (Math.imul(h, 0x01000193) ^ s) | 0;
  return h;
};

export class Replay {
  /**
   * @param {(data: Uint8Array) => Uint8Array} sha256
   * @param {NodeTable} table
   * @param {{graphs: number[], stored: number[]|null, computed: number, pairs: [number, number][], replay: ReplayOptions|null}} step
   * @param {{opaqueBodies: string[], opFamilies: Record<string, string>, dtypes: import("./dtypes.js").DtypeRules}} config
   * @param {Record<string, string>} notes a kernel AST's node key -> its CALL nodes' note line
   */
  constructor(sha256, table, step, config, notes) {
    const rows = table.rows, opts = /** @type {ReplayOptions} */ (step.replay);  // set where the page computes graphs
    this.sha256 = sha256;
    this.table = table;
    this.rows = rows;
    this.contents = table.contents;
    this.notes = notes;
    this.n = step.pairs.length;
    this.bottomUp = opts.bottom_up;
    this.walk = opts.walk;
    this.enterCalls = opts.enter_calls;
    this.opaqueBodies = new Set(config.opaqueBodies);
    this.families = config.opFamilies;
    this.dtypes = dtypesOf(config.dtypes);
    /** @type {Map<number, number>} graph k (after k matches): the input, the graphs stored, those computed */
    this.graphs = new Map([[0, step.graphs[0]], ...(step.stored ?? []).map((k, i) => /** @type {[number, number]} */ ([k, step.graphs[i + 1]]))]);
    /** the matches the one pass follows from the input (past them: the chain, from the graphs stored) */
    this.computed = step.computed;
    /** @type {Map<number, [number[], number[]]>} each replaced node: the matches (1-based) that replaced it, and with what */
    this.hist = new Map();
    for (const [i, [u0, u1]] of step.pairs.entries()) {
      let h = this.hist.get(u0);
      if (!h) this.hist.set(u0, h = [[], []]);
      h[0].push(i + 1); h[1].push(u1);
    }
    /** @type {Map<number, number>} keytime: the first match whose replaced node is reachable from a node */
    this.kt = new Map();
    if (!table.index) {
      table.index = new Map();
      for (let i = 0; i < rows.length; i++) {
        const h = consHash(rows[i][5], rows[i][3]), at = table.index.get(h);
        if (at) at.push(i); else table.index.set(h, [i]);
      }
    }
    this.index = table.index;
    let below = this.walk && !this.bottomUp ? 1 : this.n + 1;  // a walk step: the chain (as Replayer)
    if (!this.bottomUp && !this.walk) {  // Replayer.direct_below: from there on only the chain is exact
      for (const [u, [ks]] of this.hist) {
        if (ks.length > 1) below = Math.min(below, ks[1]);
        const t = Math.min(Infinity, ...this.own(u).map((s) => this.keytime(s)));
        if (t < Infinity) below = Math.min(below, Math.max(ks[0], t));
      }
    }
    this.directBelow = below;
  }

  /** The row of the graph after the first k matches (k = 0: the input). @param {number} k @returns {number} */
  at(k) {
    let g = this.graphs.get(k);
    if (g !== undefined) return g;
    const direct = (/** @type {number} */ j) => j < this.directBelow && j <= this.computed;  // the one pass gives graph j exactly
    if (this.bottomUp || direct(k)) g = this.substitute(/** @type {number} */ (this.graphs.get(0)), k);
    else {  // the chain, from the last graph it has (computed or stored) or the last one the one pass gives exactly
      let j = k - 1;
      while (!direct(j) && !this.graphs.has(j)) j--;
      g = this.at(j);
      for (let i = j + 1; i <= k; i++) this.graphs.set(i, g = this.substitute(g, i));
    }
    this.graphs.set(k, g);
    return g;
  }

  /** Whether a row is a call whose body a rewrite does not enter. @param {number} m */
  opaque(m) {
    const [, , label, src] = this.rows[m];
    return !this.enterCalls && (label[0] === "FUNCTION" || (label[0] === "CALL" && this.opaqueBodies.has(this.rows[src[0]][2][0])));
  }

  /** The sources a rewrite visits. @param {number} m */
  own(m) { return this.opaque(m) ? this.rows[m][3].slice(1) : this.rows[m][3]; }

  /** @param {number} root */
  keytime(root) {
    const kt = this.kt;
    if (kt.has(root)) return /** @type {number} */ (kt.get(root));
    const stack = [root];  // a row to visit, or ~row (negative): its sources are done
    while (stack.length) {
      const x = /** @type {number} */ (stack.pop()), n = x < 0 ? ~x : x;
      if (kt.has(n)) continue;
      if (x >= 0) {
        stack.push(~n);
        for (const s of this.own(n)) if (!kt.has(s)) stack.push(s);
      } else {
        const h = this.hist.get(n);
        let t = h ? h[0][0] : Infinity;
        for (const s of this.own(n)) t = Math.min(t, /** @type {number} */ (kt.get(s)));
        kt.set(n, t);
      }
    }
    return /** @type {number} */ (kt.get(root));
  }

  /** D_k.get: the last value by match k of a replaced node. @param {number} u @param {number} k */
  value(u, k) {
    const h = this.hist.get(u);
    if (!h || h[0][0] > k) return undefined;
    let i = h[0].length - 1;
    while (h[0][i] > k) i--;
    return h[1][i];
  }

  /** root.substitute(D_k) on the table. @param {number} root @param {number} k @returns {number} */
  substitute(root, k) { return this.walk ? this.walked(root, k) : this.unified(root, k); }

  /** Replayer._walk: each node replaced by its value, or rebuilt on its rewritten sources (no fixpoint, no
   * re-visit). @param {number} root @param {number} k */
  walked(root, k) {
    /** @type {Map<number, number>} */
    const res = new Map();
    const rows = this.rows, stack = [[root, 0]];
    while (stack.length) {
      const [n, done] = /** @type {[number, number]} */ (stack.pop());
      if (res.has(n)) continue;
      if (!done) {
        if (this.keytime(n) > k) { res.set(n, n); continue; }
        const v = this.value(n, k);
        if (v !== undefined && v !== n) { res.set(n, v); continue; }
        if (this.opaque(n) && this.keytime(rows[n][3][0]) <= k) throw new CannotReplay("a replaced node inside a call's body");
        stack.push([n, 1]);
        const srcs = this.own(n);
        for (let i = srcs.length - 1; i >= 0; i--) if (!res.has(srcs[i])) stack.push([srcs[i], 0]);
      } else {
        const srcs = rows[n][3], opaque = this.opaque(n);
        const now = srcs.map((s, i) => (opaque && i === 0 ? s : /** @type {number} */ (res.get(s))));
        res.set(n, now.every((s, i) => s === srcs[i]) ? n : this.rebuild(n, now));
      }
    }
    return /** @type {number} */ (res.get(root));
  }

  /** Replayer._unified: the unified rewrite's substitute (a node's value followed to its fixpoint, rebuilt nodes
   * rewritten again). @param {number} root @param {number} k */
  unified(root, k) {
    if (this.keytime(root) > k) return root;
    /** @type {Map<number, number>} */
    const res = new Map();
    const busy = new Set(), rows = this.rows;
    const stack = [root, 0, -1];  // [node, stage, the node it was replaced by] per entry, flat
    while (stack.length) {
      const m0 = /** @type {number} */ (stack.pop()), stage = /** @type {number} */ (stack.pop()), n = /** @type {number} */ (stack.pop());
      if (stage === 0) {
        if (res.has(n)) continue;
        if (busy.has(n)) throw new CannotReplay("a node's replacement holds the node itself (a cyclic dependency)");
        busy.add(n);
        let m = n, v, seen = null;
        while ((v = this.value(m, k)) !== undefined && v !== m) {
          seen ??= new Set([n]);
          if (seen.has(v)) throw new CannotReplay("replacements that come back to a replaced node");
          seen.add(v); m = v;
        }
        if (this.opaque(m) && this.keytime(rows[m][3][0]) <= k) throw new CannotReplay("a replaced node inside a call's body");
        stack.push(n, 1, m);
        const srcs = this.own(m);
        for (let i = srcs.length - 1; i >= 0; i--) if (!res.has(srcs[i]) && this.keytime(srcs[i]) <= k) stack.push(srcs[i], 0, -1);
      } else if (stage === 1) {
        const srcs = rows[m0][3], opaque = this.opaque(m0);
        const now = srcs.map((s, i) => (opaque && i === 0) || !res.has(s) ? s : /** @type {number} */ (res.get(s)));
        if (now.every((s, i) => s === srcs[i])) { res.set(n, m0); busy.delete(n); }
        else {
          const nn = this.rebuild(m0, now);
          stack.push(n, 2, nn);
          if (this.keytime(nn) <= k) stack.push(nn, 0, -1);
        }
      } else { res.set(n, res.get(m0) ?? m0); busy.delete(n); }
    }
    return /** @type {number} */ (res.get(root));
  }

  /** UOp(m.op, m.dtype, srcs, m.arg, m.tag): the row that holds it, else a new row with tgviz's label (tgviz._tinygrad._node)
   * and its key left to keyOf, as an unpacked row's: a replay makes many rows no graph it hands out keeps (a chain
   * along a kernel's 7,000 matches), and a node panel replays every step of its group. @param {number} m
   * @param {number[]} srcs */
  rebuild(m, srcs) {
    const content = this.contentOver(m, srcs), h = consHash(content, srcs), same = this.index.get(h) ?? [];
    for (let j = same.length - 1; j >= 0; j--) {  // (the last row of a content and sources, as a map of them holds it)
      const r = this.rows[same[j]];
      if (r[5] === content && r[3].length === srcs.length && r[3].every((s, i) => s === srcs[i])) return same[j];
    }
    const [family, label, fold] = derivedRow(this.rows, this.contents, this.notes, this.families, content, srcs,
                                             (s) => rowKey(this.table, this.sha256, s));
    if (!label) throw new CannotReplay("a vector of constants changed (its text needs tinygrad)");
    this.rows.push(["", family, label, srcs, fold, content]);
    if (same.length) same.push(this.rows.length - 1); else this.index.set(h, [this.rows.length - 1]);
    return this.rows.length - 1;
  }

  /** The content of node m rebuilt over these sources: its own, or where tinygrad derives another dtype, that of the
   * UOp with it (js/port/dtypes.js). @param {number} m @param {number[]} srcs @returns {number} */
  contentOver(m, srcs) {
    const c = this.rows[m][5], [dt, why] = this.dtypes.rebuilt(this.rows, this.contents, m, srcs);
    if (why !== null || dt === null) throw new CannotReplay(why ?? "");
    const id = dt === this.contents[c][2][0] ? c : this.dtypes.contentWith(this.table, c, dt);
    if (id === null) throw new CannotReplay(`a ${this.rows[m][2][0]} whose dtype becomes ${dt} (its label needs tinygrad)`);
    return id;
  }
}
