// The port of tgviz/draw/ranks.py: the rows (dot's ranks) a graph is laid out in, and where a tall graph is cut into
// columns, which layout.js writes into its DOT text. Each function mirrors:
//   rankRows     ranks.rank_rows              columnCuts   ranks.column_cuts
// tests/views/test_js_parity.py holds the DOT text equal to the Python's.

/** @typedef {import("./layout.js").Config} Config */

/** ranks.rank_rows: every layout id's rank, no row much wider than the graph's limit. @param {Config} c
 * @param {string[]} ids @param {[string, string][]} edges @param {Map<string, number>} widths
 * @param {Map<string, number>} heights @returns {Map<string, number>} */
export function rankRows(c, ids, edges, widths, heights, sides = 1) {
  const nodes = ids.filter((k) => !k.includes(":"));
  /** @type {Map<string, string[]>} */
  const users = new Map(nodes.map((k) => [k, []]));
  for (const [s, d] of edges) if (!s.includes(":") && !d.includes(":")) /** @type {string[]} */ (users.get(s)).push(d);
  /** @type {Map<string, number>} */
  const depth = new Map();
  for (let j = nodes.length - 1; j >= 0; j--) {
    const stack = [nodes[j]];
    while (stack.length) {
      const n = stack[stack.length - 1];
      if (depth.has(n)) { stack.pop(); continue; }
      const us = /** @type {string[]} */ (users.get(n));
      const todo = us.filter((u) => !depth.has(u) && !stack.includes(u));
      if (todo.length) { stack.push(...todo); continue; }
      depth.set(n, 1 + us.reduce((m, u) => Math.max(m, depth.get(u) ?? -1), -1));
      stack.pop();
    }
  }
  const dep = (/** @type {string} */ k) => /** @type {number} */ (depth.get(k));
  for (const k of ids) if (k.includes(":")) depth.set(k, dep(k.split(":")[0]) + (k.endsWith(":in") ? 1 : -1));
  /** @type {Map<number, string[]>} */
  const rows = new Map();
  for (const k of ids) { const r = rows.get(dep(k)); if (r) r.push(k); else rows.set(dep(k), [k]); }
  const wd = (/** @type {string} */ k) => /** @type {number} */ (widths.get(k));
  let area = 0;
  for (const k of ids) area += (wd(k) + c.nodesep) * (/** @type {number} */ (heights.get(k)) + c.ranksep);
  const limit = Math.min(c.maxRow, Math.max(c.minRow, Math.sqrt(c.rowArea * area))) / sides;
  /** @type {Map<string, number>} */
  const rank = new Map();
  let top = 0;
  for (const d of [...rows.keys()].sort((a, b) => b - a)) {
    const row = /** @type {string[]} */ (rows.get(d));
    let width = 0;
    for (const k of row) width += wd(k) + c.nodesep;
    const n = Math.min(c.maxStagger, Math.trunc(width / limit) + 1);
    row.forEach((k, i) => rank.set(k, top + i % n));
    top += n;
  }
  return rank;
}

/** ranks.column_cuts: the first rank of each column after the first, for a graph wrapped into cols columns.
 * @param {Config} c @param {Map<string, number>} rank @param {Map<string, number>} heights @param {[string, string][]} edges
 * @param {number} cols @returns {number[]} */
export function columnCuts(c, rank, heights, edges, cols) {
  let n = 0;
  for (const r of rank.values()) n = Math.max(n, r + 1);
  const tall = new Array(n).fill(0);
  for (const [k, r] of rank) tall[r] = Math.max(tall[r], /** @type {number} */ (heights.get(k)));
  const cross = new Array(n).fill(0);  // edges from above rank r to it or below
  for (const [s, d] of edges) for (let r = /** @type {number} */ (rank.get(s)) + 1; r <= /** @type {number} */ (rank.get(d)); r++) cross[r] += 1;
  /** @type {number[]} */
  const top = [];  // the y of each rank's top
  let y = 0;
  for (const h of tall) { top.push(y); y += h + c.ranksep; }
  const total = y - c.ranksep;
  /** @type {number[]} */
  const cuts = [];
  for (let j = 1; j < cols; j++) {
    const aim = j * total / cols, near = total / cols / 4;
    let best = -1;
    for (let r = (cuts.length ? Math.max(...cuts) : 0) + 1; r < n; r++) {
      if (Math.abs(top[r] - aim) > near) continue;
      if (best < 0 || cross[r] < cross[best] || (cross[r] === cross[best] && Math.abs(top[r] - aim) < Math.abs(top[best] - aim))) best = r;
    }
    if (best >= 0) cuts.push(best);
  }
  return cuts;
}
