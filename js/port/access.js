// The access tab's evaluation: the ports of tgviz/bridge/access.py and tgviz/trace/access.py that answer, in the page,
// which elements an output element or a thread touches, from the AccessMsg's tables of tinygrad's index UOps. Each port
// mirrors:
//   evaluate      bridge.access.evaluate (over a grid of free variables, as flat arrays of its points)
//   readsOf       trace.access.KernelAccess.reads (an output element's reads, per buffer)
//   threadOf      trace.access.KernelAccess.thread (one thread's reads and writes, per buffer)
//   bufferCounts  trace.access.KernelAccess.buffers (elements read and written, reads, masked reads) and, per element,
//                 the reads of it (the reuse the picture shades)
// tests/views/test_js_parity.py holds them equal to the Python in node.

/** @typedef {import("../messages.js").AccessMsg} AccessMsg */
/** @typedef {import("../messages.js").AccessStage} AccessStage */
/** @typedef {import("../messages.js").AccessEntry} AccessEntry */
/** @typedef {number|Float64Array} Value  a scalar, or a value at each point of the grid */
/** @typedef {{flat: number[], count: number, masked: number, data: boolean}} Touched  elements of a buffer, as Reads */

export const COUNT_LIMIT = 1 << 24;  // trace.access.COUNT_LIMIT

/** The grid of free variables: each one's value at each point (the first variable slowest, as numpy's C order).
 * @param {AccessStage} st @param {number[]} free @returns {{n: number, values: Map<number, Float64Array>}} */
export function grid(st, free) {
  const sizes = free.map((v) => st.vars[v].size), n = sizes.reduce((a, b) => a * b, 1), values = new Map();
  let inner = n;
  free.forEach((v, i) => {
    const size = sizes[i], a = new Float64Array(n);
    inner /= size;
    for (let p = 0; p < n; p++) a[p] = Math.floor(p / inner) % size;
    values.set(v, a);
  });
  return { n, values };
}

/** Apply fn elementwise to values (scalars stay scalars). @param {Value[]} xs @param {number} n @param {(...a: number[]) => number} fn
 * @returns {Value} */
function lift(xs, n, fn) {
  if (xs.every((x) => typeof x === "number")) return fn(.../** @type {number[]} */ (xs));
  const out = new Float64Array(n), [a, b, c] = xs;
  const at = (/** @type {Value} */ x) => (typeof x === "number" ? () => x : (/** @type {number} */ p) => x[p]);
  if (xs.length === 1) { const A = /** @type {Float64Array} */ (a); for (let p = 0; p < n; p++) out[p] = fn(A[p]); return out; }
  const fa = at(a), fb = at(b);
  if (xs.length === 2) for (let p = 0; p < n; p++) out[p] = fn(fa(p), fb(p));
  else { const fc = at(c); for (let p = 0; p < n; p++) out[p] = fn(fa(p), fb(p), fc(p)); }
  return out;
}

const cdiv = (/** @type {number} */ a, /** @type {number} */ b) => (b === 0 ? a : Math.trunc(a / b));
const fdiv = (/** @type {number} */ a, /** @type {number} */ b) => (b === 0 ? a : Math.floor(a / b));
/** @type {Record<string, (a: number, b: number) => number>} bools are 0 and 1 */
const BINARY = {
  ADD: (a, b) => a + b, SUB: (a, b) => a - b, MUL: (a, b) => a * b, MAX: (a, b) => Math.max(a, b),
  SHL: (a, b) => a * 2 ** b, SHR: (a, b) => Math.floor(a / 2 ** b), AND: (a, b) => a & b, OR: (a, b) => a | b, XOR: (a, b) => a ^ b,
  CMPLT: (a, b) => +(a < b), CMPNE: (a, b) => +(a !== b), CMPEQ: (a, b) => +(a === b),
  FLOORDIV: fdiv, FLOORMOD: (a, b) => (b === 0 ? 0 : a - Math.floor(a / b) * b), CDIV: cdiv, CMOD: (a, b) => a - cdiv(a, b) * b,
};

/** bridge.access.evaluate: the values of nodes `roots` over a grid of n points, each variable fixed (a number) or free
 * (its values at each point). A DATA node throws: a data-dependent index is never evaluated.
 * @param {AccessStage["nodes"]} nodes @param {number[]} roots @param {Map<number, Value>} env @param {number} n @returns {Value[]} */
export function evaluate(nodes, roots, env, n) {
  const need = new Set(), stack = [...roots];
  while (stack.length) { const i = /** @type {number} */ (stack.pop()); if (!need.has(i)) { need.add(i); stack.push(...nodes[i][2]); } }
  /** @type {Map<number, Value>} */
  const memo = new Map();
  for (const i of [...need].sort((a, b) => a - b)) {
    const [op, kind, src, arg] = nodes[i], xs = src.map((s) => /** @type {Value} */ (memo.get(s)));
    /** @type {Value} */
    let v;
    if (op === "CONST") v = Number(arg);
    else if (op === "INVALID") v = 0;
    else if (op === "VAR") v = /** @type {Value} */ (env.get(/** @type {number} */ (arg)));
    else if (op === "DATA") throw new Error(`the value of ${arg} is data, unknown until the kernel runs`);
    else if (op === "NEG") v = lift(xs, n, (a) => -a);
    else if (op === "WHERE") v = lift(xs, n, (c, a, b) => (c ? a : b));
    else if (op === "CAST") v = lift(xs, n, kind === "b" ? (a) => +(a !== 0) : kind === "f" ? (a) => a : (a) => Math.trunc(a));
    else v = lift(xs, n, BINARY[op]);
    memo.set(i, v);
  }
  return roots.map((r) => /** @type {Value} */ (memo.get(r)));
}

/** An access's index and validity at each point of a grid of its free variables, the others fixed.
 * @param {AccessStage} st @param {AccessEntry} a @param {Map<number, number>} fixed @param {number[]} free */
export function accessValues(st, a, fixed, free) {
  const g = grid(st, free);
  /** @type {Map<number, Value>} */
  const env = new Map(fixed);
  for (const [v, a] of g.values) env.set(v, a);
  const [idx, ok] = evaluate(st.nodes, a.valid === null ? [a.index] : [a.index, a.valid], env, g.n);
  return { n: g.n, at: (/** @type {number} */ p) => (typeof idx === "number" ? idx : idx[p]),
           ok: (/** @type {number} */ p) => (ok === undefined ? true : typeof ok === "number" ? ok !== 0 : ok[p] !== 0) };
}

/** The points of some variables. @param {AccessStage} st @param {number[]} vs */
const points = (st, vs) => vs.reduce((a, v) => a * st.vars[v].size, 1);

/** Accumulate an access's elements over a grid into acc. @param {AccessStage} st @param {AccessEntry} a
 * @param {Map<number, number>} fixed @param {number[]} free @param {number} mult @param {{els: Set<number>, count: number, masked: number, data: boolean}} acc */
function gather(st, a, fixed, free, mult, acc) {
  if (a.data) { acc.count += points(st, free) * mult; acc.data = true; return; }
  const v = accessValues(st, a, fixed, free);
  for (let p = 0; p < v.n; p++) {
    if (!v.ok(p)) { acc.masked += mult; continue; }
    acc.count += mult;
    for (let w = 0; w < a.width; w++) acc.els.add(v.at(p) + w);
  }
}

/** The elements gathered, in the buffer, sorted. @param {{els: Set<number>, count: number, masked: number, data: boolean}} acc
 * @param {number} numel @returns {Touched} */
const touched = (acc, numel) => ({ flat: [...acc.els].filter((e) => e >= 0 && e < numel).sort((a, b) => a - b), count: acc.count,
                                   masked: acc.masked, data: acc.data });

/** Each point of the store's variables by the element it writes (-1: none): KernelAccess._written_by, as a lookup.
 * @param {AccessStage} st @param {AccessEntry} s @param {number} numel @returns {Int32Array} */
export function writtenBy(st, s, numel) {
  const v = accessValues(st, s, new Map(), s.vars), first = new Int32Array(numel).fill(-1);
  for (let p = v.n - 1; p >= 0; p--) { const e = v.at(p); if (v.ok(p) && e >= 0 && e < numel) first[e] = p; }
  return first;
}

/** KernelAccess.reads for one point of the store's variables (the one writing the element; -1: none): per buffer read,
 * the elements its loads read there over every reduce iteration. @param {AccessMsg} msg @param {AccessEntry} s @param {number} point
 * @returns {Map<number, Touched>} */
export function readsOf(msg, s, point) {
  const st = /** @type {AccessStage} */ (msg.stages.find((x) => x.stage === "ast")), out = new Map();
  if (point < 0) return out;
  const fixed = new Map(), sizes = s.vars.map((v) => st.vars[v].size);
  let rest = point;
  for (let i = s.vars.length - 1; i >= 0; i--) { fixed.set(s.vars[i], rest % sizes[i]); rest = Math.floor(rest / sizes[i]); }
  /** @type {Map<number, {els: Set<number>, count: number, masked: number, data: boolean}>} */
  const accs = new Map();
  for (const li of s.feeds) {
    const a = st.accesses[li];
    if (!accs.has(a.slot)) accs.set(a.slot, { els: new Set(), count: 0, masked: 0, data: false });
    const mult = points(st, a.loops.filter((v) => !a.vars.includes(v) && !fixed.has(v))) * a.width;
    gather(st, a, fixed, a.vars.filter((v) => !fixed.has(v)), mult, /** @type {any} */ (accs.get(a.slot)));
  }
  for (const [b, acc] of [...accs].sort((x, y) => x[0] - y[0])) out.set(b, touched(acc, numelOf(msg, b)));
  return out;
}

/** A buffer's size. @param {AccessMsg} msg @param {number} slot */
const numelOf = (msg, slot) => msg.buffers.find((b) => b.slot === slot)?.numel ?? 0;

/** KernelAccess.thread: what one thread of the program reads and writes, per buffer. ids: values by variable number (a
 * thread id not given is 0; a loop not given runs whole). @param {AccessMsg} msg @param {Map<number, number>} ids
 * @param {number[]} [only] just these accesses (by number) @returns {Map<number, {reads: Touched, writes: Touched}>} */
export function threadOf(msg, ids, only) {
  const st = /** @type {AccessStage} */ (msg.stages.find((x) => x.stage === "program"));
  const fixed = new Map(st.vars.flatMap((v, i) => (v.kind !== "loop" ? [[i, 0]] : [])));
  for (const [k, v] of ids) fixed.set(k, v);
  /** @type {Map<string, {els: Set<number>, count: number, masked: number, data: boolean}>} */
  const accs = new Map();
  for (const a of st.accesses) {
    if (only && !only.includes(a.number)) continue;
    const key = `${a.slot} ${a.kind}`;
    if (!accs.has(key)) accs.set(key, { els: new Set(), count: 0, masked: 0, data: false });
    gather(st, a, fixed, a.loops.filter((v) => !fixed.has(v)), a.width, /** @type {any} */ (accs.get(key)));
  }
  const none = { els: new Set(), count: 0, masked: 0, data: false }, out = new Map();
  for (const b of [...new Set(st.accesses.filter((a) => !only || only.includes(a.number)).map((a) => a.slot))].sort((x, y) => x - y)) {
    out.set(b, { reads: touched(accs.get(`${b} load`) ?? none, numelOf(msg, b)), writes: touched(accs.get(`${b} store`) ?? none, numelOf(msg, b)) });
  }
  return out;
}

/** KernelAccess.buffers at a stage: per buffer, elements read and written, reads and masked reads over the whole kernel
 * (null: a gather, or too many points), each element's reads (the reuse; null where not counted) and whether it is written.
 * @param {AccessMsg} msg @param {"ast"|"program"} stage */
export function bufferCounts(msg, stage) {
  const st = msg.stages.find((x) => x.stage === stage), out = new Map();
  if (!st) return out;
  for (const b of msg.buffers) {
    const wrote = new Uint8Array(b.numel);
    /** @type {{read: number|null, written: number|null, reads: number|null, masked: number|null, per: Float64Array|null, wrote: Uint8Array}} */
    const c = { read: 0, written: 0, reads: 0, masked: 0, per: new Float64Array(b.numel), wrote };
    for (const a of st.accesses.filter((x) => x.slot === b.slot)) {
      if (a.data || points(st, a.vars) > COUNT_LIMIT) {
        if (a.kind === "load") { c.read = c.reads = c.masked = null; c.per = null; } else c.written = null;
        continue;
      }
      const v = accessValues(st, a, new Map(), a.vars), mult = points(st, a.loops.filter((x) => !a.vars.includes(x))) * a.width;
      for (let p = 0; p < v.n; p++) {
        const ok = v.ok(p), e = v.at(p);
        if (a.kind === "store") { if (ok) for (let w = 0; w < a.width; w++) if (e + w >= 0 && e + w < b.numel) wrote[e + w] = 1; continue; }
        if (c.reads === null || c.masked === null) continue;
        if (!ok) { c.masked += mult; continue; }
        c.reads += mult;
        if (c.per) for (let w = 0; w < a.width; w++) if (e + w >= 0 && e + w < b.numel) c.per[e + w] += mult / a.width;
      }
    }
    if (c.per) c.read = c.per.reduce((n, x) => n + (x > 0 ? 1 : 0), 0);
    if (c.written !== null) c.written = wrote.reduce((n, x) => n + x, 0);
    out.set(b.slot, c);
  }
  return out;
}
