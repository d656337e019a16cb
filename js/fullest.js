// The window a big picture opens on (panzoom.js's initial view and reveal): of the canvas-sized windows on a picture's
// node boxes, the one that shows the most nodes whole, clear of the overview in the canvas's corner.

/** A box in SVG units. @typedef {{x:number, y:number, w:number, h:number}} Box */

export const MARGIN = 10;  // CSS px kept clear round what a view fits in the canvas

/** The box around some boxes, null for none. @param {Box[]} boxes @returns {Box|null} */
export function around(boxes) {
  if (!boxes.length) return null;
  const x0 = Math.min(...boxes.map((b) => b.x)), y0 = Math.min(...boxes.map((b) => b.y));
  return { x: x0, y: y0, w: Math.max(...boxes.map((b) => b.x + b.w)) - x0, h: Math.max(...boxes.map((b) => b.y + b.h)) - y0 };
}

/** The top left corner (SVG units) of the window W x H (SVG units: the canvas at scale s, a margin all round) that holds
 * the box `must` (null: anything) and the most of the boxes whole, each node counted once (a node drawn on both sides,
 * two boxes of one key, is one), none of them under the overview (o: its box on the canvas, CSS px; null: none), one of
 * the marked among them where any is: null where `must` does not fit. The best window has a box's edge on one of its
 * edges, so only those are tried: for each left edge, the top edges in one sweep (a box counts over the run of top edges
 * that holds it whole and clear of the overview), not box by box (the LSTM's busiest step, 314 nodes: 1,800 top edges
 * for each of 600 left edges, 200 ms box by box).
 * @param {Box[]} boxes @param {string[]} keys each box's node @param {boolean[]} mark whether each box is marked
 * @param {Box|null} must @param {number} W @param {number} H @param {number} s @param {Box|null} o @returns {Box|null} */
export function fullestWindow(boxes, keys, mark, must, W, H, s, o) {
  if (must && (must.w > W || must.h > H)) return null;
  const ids = new Map(), id = keys.map((key) => {
    if (!ids.has(key)) ids.set(key, ids.size);
    return /** @type {number} */ (ids.get(key));
  });
  const marked = mark.some((m) => m);
  /** Candidate window edges along one axis: each box's near edge, or its far edge at the window's far side, kept where
   * the window still holds `must`. @param {number[]} lo @param {number[]} len @param {number} span @param {number} m0 @param {number} m1 */
  const edges = (lo, len, span, m0, m1) => {
    const min = must ? m1 - span : -Infinity, max = must ? m0 : Infinity;
    const all = lo.flatMap((v, i) => [v, v + len[i] - span]).map((v) => Math.min(max, Math.max(min, v)));
    return [...new Set(all)];
  };
  const xs = edges(boxes.map((b) => b.x), boxes.map((b) => b.w), W, must?.x ?? 0, (must?.x ?? 0) + (must?.w ?? 0));
  /** Whether a box (SVG units) lies under the overview across, with the window's left edge at x0. @param {Box} b @param {number} x0 */
  const underX = (b, x0) => !!o && MARGIN + (b.x - x0) * s < o.x + o.w && MARGIN + (b.x + b.w - x0) * s > o.x;
  /** ... and down, with its top edge at y0. @param {Box} b @param {number} y0 */
  const underY = (b, y0) => !!o && MARGIN + (b.y - y0) * s < o.y + o.h && MARGIN + (b.y + b.h - y0) * s > o.y;
  /** Whether a box lies whole within the rows of a window at y0. @param {Box} b @param {number} y0 */
  const within = (b, y0) => !(b.y < y0 - 0.5 || b.y + b.h > y0 + H + 0.5);
  /** How many nodes the window at x0, y0 shows whole, clear of the overview, and how many of its boxes are marked (-1:
   * `must` under the overview). @param {number} x0 @param {number} y0 @param {number[]} inX boxes within x0's columns */
  const count = (x0, y0, inX) => {
    if (must && underX(must, x0) && underY(must, y0)) return [-1, 0];
    const shown = new Set();
    let m = 0;
    for (const i of inX) {
      if (!within(boxes[i], y0) || (underX(boxes[i], x0) && underY(boxes[i], y0))) continue;
      shown.add(id[i]); m += Number(mark[i]);
    }
    return [shown.size, m];
  };
  /** The first of the sorted values ys where ok holds (ok: false, then true along ys). @param {Float64Array} ys
   * @param {(y: number) => boolean} ok */
  const first = (ys, ok) => {
    let lo = 0, hi = ys.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (ok(ys[mid])) hi = mid; else lo = mid + 1; }
    return lo;
  };
  const mustY0 = must?.y ?? 0, mustY1 = (must?.y ?? 0) + (must?.h ?? 0), ny = new Int32Array(ids.size).fill(-1);
  /** count() at every top edge ys (sorted, each once) of the window at x0: each box counts over the runs of ys that hold
   * it whole and clear of the overview (each condition holds along a run of ys: found by bisection), a node once over
   * the union of its boxes' runs. @param {number} x0 @param {Float64Array} ys @param {number[]} inX */
  const sweep = (x0, ys, inX) => {
    /** @type {Map<number, [number, number][]>} the runs of the nodes drawn twice in these columns */
    const runs = new Map();
    const n = new Int32Array(ys.length + 1), m = new Int32Array(ys.length + 1);
    for (const i of inX) ny[id[i]] = ny[id[i]] === -1 ? i : -2;  // -2: more than one box
    const last = ys.length;
    for (const i of inX) {
      const b = boxes[i], top = b.y, foot = b.y + b.h;
      // the runs of ys (bisected: each condition turns from false to true along ys once) that hold the box whole ...
      let lo = 0, hi = last;
      for (let z = last; lo < z;) { const k = (lo + z) >> 1; if (!(foot > ys[k] + H + 0.5)) z = k; else lo = k + 1; }
      for (let a = lo; a < hi;) { const k = (a + hi) >> 1; if (top < ys[k] - 0.5) hi = k; else a = k + 1; }
      let a1 = lo, z1 = hi, a2 = hi, z2 = hi;
      if (o && underX(b, x0)) {  // ... less the run that puts it under the overview
        const oFoot = o.y + o.h;
        let u0 = 0, u1 = 0;
        for (let z = last; u0 < z;) { const k = (u0 + z) >> 1; if (MARGIN + (top - ys[k]) * s < oFoot) z = k; else u0 = k + 1; }
        for (let z = last; u1 < z;) { const k = (u1 + z) >> 1; if (!(MARGIN + (foot - ys[k]) * s > o.y)) z = k; else u1 = k + 1; }
        if (u0 < u1) { z1 = Math.min(hi, u0); a2 = Math.max(lo, u1); }
      }
      const once = ny[id[i]] === i;  // its node's only box here
      for (const [a, z] of [[a1, z1], [a2, z2]]) {
        if (a >= z) continue;
        if (mark[i]) { m[a]++; m[z]--; }
        if (once) { n[a]++; n[z]--; }
        else { const r = runs.get(id[i]); if (r) r.push([a, z]); else runs.set(id[i], [[a, z]]); }
      }
    }
    for (const i of inX) ny[id[i]] = -1;
    for (const r of runs.values()) {  // a node once: the union of its boxes' runs
      r.sort((p, q) => p[0] - q[0]);
      let a = -1, z = -1;
      for (const [p, q] of r) {
        if (p > z) { if (z > a) { n[a]++; n[z]--; } a = p; z = q; } else z = Math.max(z, q);
      }
      if (z > a) { n[a]++; n[z]--; }
    }
    for (let k = 1; k <= ys.length; k++) { n[k] += n[k - 1]; m[k] += m[k - 1]; }
    return { n, m };
  };
  /** The boxes within the columns of a window at x0. @param {number} x0 */
  const columns = (x0) => boxes.flatMap((b, i) => (b.x >= x0 - 0.5 && b.x + b.w <= x0 + W + 0.5 ? [i] : []));
  let best = null, most = -1;
  for (const x0 of xs) {
    const inX = columns(x0);
    // the top edges (as edges() gives them, in its order), then sorted, each once
    const ys = new Float64Array(2 * inX.length);
    inX.forEach((i, j) => {
      const min = must ? mustY1 - H : -Infinity, max = must ? mustY0 : Infinity, b = boxes[i];
      ys[2 * j] = Math.min(max, Math.max(min, b.y)); ys[2 * j + 1] = Math.min(max, Math.max(min, b.y + b.h - H));
    });
    const all = ys.slice().sort();
    let u = 0;
    for (let k = 0; k < all.length; k++) if (!u || all[k] !== all[u - 1]) all[u++] = all[k];
    const sorted = all.subarray(0, u), counts = sweep(x0, sorted, inX);
    const mustX = !!must && underX(must, x0);
    const shows = (/** @type {number} */ k) => (mustX && underY(/** @type {Box} */ (must), sorted[k]) ? -1 : counts.n[k]);
    const ok = (/** @type {number} */ k) => counts.m[k] > 0 || !marked;
    let top = -1;
    for (let k = 0; k < u; k++) if (ok(k)) top = Math.max(top, shows(k));
    if (top <= most) continue;
    // the first of the best windows in edges()' order wins, as where each is tried in turn
    for (const y0 of ys) {
      const k = first(sorted, (y) => y >= y0);
      if (ok(k) && shows(k) === top) { most = top; best = { x: x0, y: y0, w: W, h: H }; break; }
    }
  }
  // the graph centred across (or down) where all of it fits that way, if that shows as many
  const whole = around(boxes);
  if (best && whole) {
    const x = whole.w <= W ? whole.x + (whole.w - W) / 2 : best.x, y = whole.h <= H ? whole.y + (whole.h - H) / 2 : best.y;
    const [n, m] = count(x, y, columns(x));
    if (n >= most && (m > 0 || !marked)) best = { x, y, w: W, h: H };
  }
  return best;
}
