// The search of a trace in the HTML report's page, over the index the report stores (tgviz/trace/search.py
// build_index). Each function mirrors one of Python's: findIndex tgviz/trace/search.py find, hitInfo and searchMessage
// tgviz/views/search.py hit_info and message; tests/views/test_search_view.py holds them equal.

/** @typedef {import("../messages.js").SearchMsg} SearchMsg */
/** @typedef {import("../messages.js").SearchHit} SearchHit */
/** The index (tgviz/trace/search.py build_index): groups [display name, kind, kernel name, key]; step names; each group's
 * steps by name; origins [group, op, backward, where, line, calls, the keys of the UOps it made]; UOp texts and where each first appears per group
 * [text, group, step, match (-1: the input), node key]; rules [where, file, pattern] and where each fired [rule, group, step,
 * first match, count]; each kernel's code [group, codegen step, source].
 * @typedef {{groups: [string, string, string, string][], names: string[], steps: number[][],
 *   origins: [number, string, number, string, string, string[], string][], uops: string[], births: [number, number, number, number, string][],
 *   rules: [string, string, string][], fired: [number, number, number, number, number][], code: [number, number, string][]}} SearchIndex */
/** A hit: [kind, group, step, match, line, text, node, count] (trace/search.py Row).
 * @typedef {[SearchHit["kind"], number, number|null, number|null, number|null, string, string|null, number|null]} Row */

export const SHOWN = 50;  // views/search.py SHOWN
const TEXT = 200;  // trace/search.py TEXT

/** What a search reads of an index, lowercased once (an index is searched as a person types): each kernel's code as one
 * text, with where each of its lines starts. @typedef {{code: {g: number, cg: number, lower: string, lines: string[],
 *   starts: number[]}[]}} Prepared */
/** @type {WeakMap<SearchIndex, Prepared>} */
const prepared = new WeakMap();
/** @param {SearchIndex} index @returns {Prepared} */
function prepare(index) {
  let p = prepared.get(index);
  if (!p) prepared.set(index, p = { code: index.code.map(([g, cg, source]) => {
    const lines = source.split("\n"), starts = [];
    let at = 0;
    for (const line of lines) { starts.push(at); at += line.length + 1; }
    return { g, cg, lower: source.toLowerCase(), lines, starts };
  }) });
  return p;
}

/** The lines (from 0) of a kernel's code that hold q, in order: found in its lowercased text, each line once.
 * @param {Prepared["code"][number]} c @param {string} q */
function codeLines(c, q) {
  /** @type {number[]} */
  const out = [];
  for (let at = c.lower.indexOf(q); at >= 0; at = c.lower.indexOf(q, at + 1)) {
    let lo = 0, hi = c.starts.length - 1;  // the line it starts in: the last that starts at or before it
    while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (c.starts[mid] <= at) lo = mid; else hi = mid - 1; }
    if (out[out.length - 1] !== lo && at + q.length <= c.starts[lo] + c.lines[lo].length) out.push(lo);
    at = Math.max(at, c.starts[lo] + c.lines[lo].length);  // the next line next (a line is listed once)
  }
  return out;
}

/** find: every hit of text in the index, grouped by kind, each kind in the trace's order. @param {SearchIndex} index
 * @param {string} text @returns {Row[]} */
export function findIndex(index, text) {
  const q = text.trim().toLowerCase();
  if (!q) return [];
  /** @type {Row[]} */
  const out = [];
  const { groups, steps, names } = index;
  const has = (/** @type {string} */ s) => s.toLowerCase().includes(q);
  groups.forEach(([display, kind, name, key], g) => {
    if (kind === "kernel" && (has(display) || has(name) || (q.length >= 4 && key.startsWith(q))))
      out.push(["kernel", g, steps[g].length ? 0 : null, null, null, `${display} ${key.slice(0, 8)}`, null, null]);
  });
  const hitNames = new Set(names.flatMap((n, i) => (has(n) ? [i] : [])));
  groups.forEach(([display, kind], g) => {
    if (kind !== "kernel" && steps[g].length && has(display)) out.push(["step", g, 0, null, null, display, null, null]);
    steps[g].forEach((n, s) => { if (hitNames.has(n)) out.push(["step", g, s, null, null, names[n], null, null]); });
  });
  // text that names an op the user called ("softmax") finds the kernels that compute it, not every op of a line that
  // says it (the scores' matmul on the line that ends in .softmax()); other text (a variable's name) finds lines
  const named = index.origins.some(([, op, , , , calls]) => has(op) || calls.some(has));
  for (const [g, op, backward, at, line, calls, made] of index.origins) {
    const called = calls.filter(has);
    if (has(op) || has(at) || (has(line) && !named) || called.length) {
      const said = `${at}  ${op}${backward ? " (backward)" : ""}${called.length ? " calls " + called.join(", ") : ""}  ${line}`;
      out.push(["origin", g, steps[g].length ? 0 : null, null, null, said.trim(), made || null, null]);
    }
  }
  const hitUops = new Set(index.uops.flatMap((u, i) => (has(u) ? [i] : [])));
  for (const [t, g, s, m, key] of index.births) {
    if (hitUops.has(t)) out.push(["uop", g, s, m < 0 ? null : m, null, index.uops[t], key, null]);
  }
  const rules = index.rules;
  const hitRules = new Set(rules.flatMap(([at, path, source], i) => (has(at) || has(path) || has(source) ? [i] : [])));
  for (const [r, g, s, m, n] of index.fired) {
    if (hitRules.has(r)) out.push(["rule", g, s, m, null, `${rules[r][0]}  ${rules[r][2]}`.slice(0, TEXT), null, n]);
  }
  for (const c of prepare(index).code) {
    for (const i of codeLines(c, q)) out.push(["code", c.g, c.cg, null, i + 1, c.lines[i].trim().slice(0, TEXT), null, null]);
  }
  return out;
}

/** hit_info: a hit as the panel shows it. @param {SearchIndex} index @param {Row} row @returns {SearchHit} */
function hitInfo(index, row) {
  const [kind, g, s, match, line, text, node, count] = row;
  const group = index.groups[g][0];
  const where = s !== null ? `${group} / ${index.names[index.steps[g][s]]}` : group;
  return { kind, group: g, step: s !== null ? `${g}:${s}` : null, match, line, node, count, text, where };  // (protocol.step_key)
}

/** message: the answer to a search of text: the first SHOWN hits of each kind, how many of each there are, and the groups
 * a user's op found is in.
 * @param {SearchIndex} index @param {string} text @returns {SearchMsg} */
export function searchMessage(index, text) {
  const rows = findIndex(index, text);
  /** @type {Record<string, number>} */
  const counts = {};
  /** @type {SearchHit[]} */
  const hits = [];
  for (const row of rows) {
    const n = (counts[row[0]] = (counts[row[0]] ?? 0) + 1);
    if (n <= SHOWN) hits.push(hitInfo(index, row));
  }
  return { type: "search", text, total: rows.length, counts, hits, groups: [...new Set(rows.filter((r) => r[0] === "origin").map((r) => r[1]))].sort((a, b) => a - b) };
}
