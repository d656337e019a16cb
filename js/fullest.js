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
  /** The first of the sorted values ys where ok holds (ok: false, then true along ys). @param {number[]} ys
   * @param {(y: number) => boolean} ok */
  const first = (ys, ok) => {
    let lo = 0, hi = ys.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (ok(ys[mid])) hi = mid; else lo = mid + 1; }
    return lo;
  };
  /** count() at every top edge ys (sorted) of the window at x0: each box counts over the runs of ys that hold it whole
   * and clear of the overview (each condition holds along a run of ys: found by bisection), a node once over the
   * union of its boxes' runs. @param {number} x0 @param {number[]} ys @param {number[]} inX */
  const sweep = (x0, ys, inX) => {
    /** @type {Map<number, [number, number][]>} */
    const runs = new Map();
    const n = new Int32Array(ys.length + 1), m = new Int32Array(ys.length + 1);
    for (const i of inX) {
      const b = boxes[i];
      const lo = first(ys, (y) => !(b.y + b.h > y + H + 0.5)), hi = first(ys, (y) => b.y < y - 0.5);
      /** @type {[number, number][]} */
      let own = [[lo, hi]];
      if (underX(b, x0)) {  // less the run of ys that puts it under the overview
        const u0 = first(ys, (y) => MARGIN + (b.y - y) * s < /** @type {Box} */ (o).y + /** @type {Box} */ (o).h);
        const u1 = first(ys, (y) => !(MARGIN + (b.y + b.h - y) * s > /** @type {Box} */ (o).y));
        if (u0 < u1) own = [[lo, Math.min(hi, u0)], [Math.max(lo, u1), hi]];
      }
      own = own.filter(([a, z]) => a < z);
      for (const [a, z] of own) if (mark[i]) { m[a]++; m[z]--; }
      const r = runs.get(id[i]);
      if (r) r.push(...own); else runs.set(id[i], own);
    }
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
    const ys = edges(inX.map((i) => boxes[i].y), inX.map((i) => boxes[i].h), H, must?.y ?? 0, (must?.y ?? 0) + (must?.h ?? 0));
    const sorted = [...ys].sort((p, q) => p - q), at = new Map(sorted.map((y, k) => [y, k])), counts = sweep(x0, sorted, inX);
    const mustX = !!must && underX(must, x0);
    for (const y0 of ys) {  // in the candidates' order: the first of equal windows wins
      const k = /** @type {number} */ (at.get(y0)), n = mustX && underY(/** @type {Box} */ (must), y0) ? -1 : counts.n[k];
      if (n > most && (counts.m[k] > 0 || !marked)) { most = n; best = { x: x0, y: y0, w: W, h: H }; }
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
