// The window a big picture opens on (panzoom.js's initial view and reveal): of the canvas-sized windows on a picture's
// node boxes, the one that shows the most nodes whole, clear of the overview in the canvas's corner; then moved where
// its edges cut the fewest nodes (unclippedWindow); where a window starts along one axis (placeWindow), the window on the
// most of a step's changes (mostChangedBox), a program map's window from its top that cuts no box (uncutWindow). Also
// the readable scale and the nodes' boxes those windows are on, for every view that opens a graph (panzoom.js,
// programmap.js, compare.js).

/** A box in SVG units. @typedef {{x:number, y:number, w:number, h:number}} Box */

export const MARGIN = 10;  // CSS px kept clear round what a view fits in the canvas
export const READABLE = 1.12;  // the SVG's labels are 10 px: at this scale they render at 11 CSS px or a hair more
export const MIN_READABLE = 1.101;  // ... and at this one at 11 px: a graph that fits at it opens whole (not cut by a few px)

/** The boxes (SVG units) of some nodes of an SVG: each node's own box moved by its translate and its groups'.
 * @param {Element[]} nodes @returns {Box[]} */
export function nodeBoxes(nodes) {
  return nodes.map((n) => {
    const b = /** @type {SVGGraphicsElement} */ (n).getBBox();
    let x = b.x, y = b.y;
    for (let e = n; e && e.tagName !== "svg"; e = /** @type {Element} */ (e.parentNode)) {
      const m = /translate\(([-\d.]+),([-\d.]+)\)/.exec(e.getAttribute("transform") || "");
      if (m) { x += Number(m[1]); y += Number(m[2]); }
    }
    return { x, y, w: b.width, h: b.height };
  });
}

/** The box around some boxes, null for none. @param {Box[]} boxes @returns {Box|null} */
export function around(boxes) {
  if (!boxes.length) return null;
  const x0 = Math.min(...boxes.map((b) => b.x)), y0 = Math.min(...boxes.map((b) => b.y));
  return { x: x0, y: y0, w: Math.max(...boxes.map((b) => b.x + b.w)) - x0, h: Math.max(...boxes.map((b) => b.y + b.h)) - y0 };
}

/** How many of the boxes lie whole in the box win. @param {Box[]} boxes @param {Box} win */
export function wholeIn(boxes, win) {
  return boxes.filter((b) => b.x >= win.x - 0.5 && b.x + b.w <= win.x + win.w + 0.5 && b.y >= win.y - 0.5 && b.y + b.h <= win.y + win.h + 0.5).length;
}

/** The box (SVG units) a snapshot's opening view holds whole, a window W x H on its nodes (boxes: theirs): its output
 * (the lowest node, where dot draws it: the SINK) with the kernel's computing heart (its reduces, its main op; its
 * stores; its ALU ops other than index arithmetic) where they fit together; else the output with its reduces; else the
 * heart, else the reduces, without the output (a SINK as wide as the canvas leaves no room for a REDUCE beside it: that
 * view showed only RANGEs and PARAMs); else the output alone. Null where none of those fits (nothing to hold).
 * @param {Element[]} nodes @param {Box[]} boxes @param {number} W @param {number} H @returns {Box|null} */
export function snapshotHeld(nodes, boxes, W, H) {
  if (!boxes.length) return null;
  const low = boxes.reduce((a, b) => (b.y > a.y ? b : a));
  const of = (/** @type {string} */ sel) => boxes.filter((_, i) => nodes[i].matches(sel));
  const reduces = of(".fam-reduce"), heart = of(".fam-reduce, .fam-store, .fam-alu:not(.intlike)");
  for (const held of [[low, ...heart], [low, ...reduces], heart, reduces, [low]]) {
    const b = around(held);
    if (b && b.w <= W && b.h <= H) return b;
  }
  return null;
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

/** The window win (SVG units, at that scale, a margin inside the canvas) moved where the canvas cuts the
 * fewest nodes at its left edge, then at its right, then at its top and bottom (a node cut mid-way at the canvas's
 * edge reads as a broken picture; where the graph goes on past the right edge, cuts there are what says so): the
 * view starts at a node's edge, in the margin where it must. It keeps `must` whole, one of `marked` where it showed
 * one, and most of what it showed: at least half as many nodes whole, across (`must` kept too: a schedule's kernel
 * graph slid to show its lowest node alone, off the graph's left edge); down, all of them, those clear of the
 * overview (o: its box on the canvas, CSS px; null: none) clear of it. @param {Box[]} boxes the nodes' @param {Box} win
 * @param {Box|null} must @param {boolean[]} mark whether each box is marked @param {number} scale @param {Box|null} o
 * @returns {Box} */
export function unclippedWindow(boxes, win, must, mark, scale, o) {
  const m = MARGIN / scale, gap = 2 / scale, W = win.w + 2 * m, H = win.h + 2 * m;
  /** Whether box b lies under the overview with the canvas's corner at (x0, y0). @param {Box} b @param {number} x0 @param {number} y0 */
  const under = (b, x0, y0) => !!o && (b.x - x0) * scale < o.x + o.w && (b.x + b.w - x0) * scale > o.x &&
    (b.y - y0) * scale < o.y + o.h && (b.y + b.h - y0) * scale > o.y;
  /** The boxes' indices whole on the canvas with its corner at (x0, y0), clear of the overview. @param {number} x0 @param {number} y0 */
  const whole = (x0, y0) => [...boxes.keys()].filter((i) => { const b = boxes[i];
    return b.x >= x0 - 0.5 && b.x + b.w <= x0 + W + 0.5 && b.y >= y0 - 0.5 && b.y + b.h <= y0 + H + 0.5 && !under(b, x0, y0); });
  /** How many spans cross the point a. @param {number[][]} spans @param {number} a */
  const cross = (spans, a) => spans.filter(([s0, e]) => s0 < a - 0.5 && e > a + 0.5).length;
  /** How many spans a window [a, a + L] cuts at its ends. @param {number[][]} spans @param {number} a @param {number} L */
  const cuts = (spans, a, L) => cross(spans, a) + cross(spans, a + L);
  /** Where a window L long starts to put a span's edge a gap in from either of its ends. @param {number[][]} spans @param {number} L */
  const edges = (spans, L) => spans.flatMap(([s0, e]) => [s0 - gap, e + gap, s0 - gap - L, e + gap - L]);
  const x0 = win.x - m, y0 = win.y - m, was = whole(x0, y0), hadMark = was.some((i) => mark[i]);
  if (!was.length) return win;
  /** Across, with the canvas's top at y: the start cutting the fewest of the nodes in its rows at its left, then at
   * its right, then showing the most, then the nearest. @param {number} y */
  const across = (y) => {
    const rows = boxes.filter((b) => b.y < y + H && b.y + b.h > y).map((b) => [b.x, b.x + b.w]);
    /** @param {number} a @param {number} n */
    const rank = (a, n) => [cross(rows, a), cross(rows, a + W), -n, Math.abs(a - x0)];
    let best = { a: x0, rank: rank(x0, whole(x0, y).length) };
    for (const a of edges(rows, W)) {
      if (must && (must.x < a || must.x + must.w > a + W)) continue;
      const now = whole(a, y);
      if (now.length < 0.5 * was.length || (hadMark && !now.some((i) => mark[i]))) continue;
      const r = rank(a, now.length), k = r.findIndex((v, i) => v !== best.rank[i]);
      if (k >= 0 && r[k] < best.rank[k]) best = { a, rank: r };
    }
    return best.a;
  };
  /** Down, with the canvas's left edge at x: the start cutting the fewest of the nodes in its columns, all those shown
   * whole kept so. @param {number} x */
  const down = (x) => {
    const kept = whole(x, y0), keep = /** @type {Box} */ (around(kept.map((i) => boxes[i]).concat(must ? [must] : [])));
    const cols = boxes.filter((b) => b.x < x + W && b.x + b.w > x).map((b) => [b.y, b.y + b.h]);
    let best = { a: y0, cut: cuts(cols, y0, H) };
    for (const a of edges(cols, H)) {
      if (keep.y < a || keep.y + keep.h > a + H) continue;
      const cut = cuts(cols, a, H);
      if ((cut < best.cut || (cut === best.cut && Math.abs(a - y0) < Math.abs(best.a - y0))) && kept.every((i) => !under(boxes[i], x, a))) best = { a, cut };
    }
    return best.a;
  };
  // across, then down, then across again for the rows now in view
  const y = down(across(y0)), x = across(y);
  return { x: x + m, y: y + m, w: win.w, h: win.h };
}

/** The window W x H (the canvas at scale s) a program map opens on, its top left corner (SVG units) and rank: its top
 * pad above the first box or frame name in its columns (no empty band above the map: the MNIST report's opened 324 px
 * down, to cut no box), ranked: no wide empty band at its left or right (its boxes start in its first quarter across
 * and end in its last: beside JupyterLab's file browser it opened on the map's last column, half the canvas empty), a
 * corner clear for the overview (o: its size, CSS px, 8 px in), the fewest boxes cut at its edges, then labels
 * (frames' names, `labels`, and arrows' labels, `arrows`, which a map's top is not set by: each whole in it or wholly
 * out of it; a map as wide as MNIST's cuts one or two boxes at its right from its top, whatever the scale, and arrows
 * that go round its sides have their labels there), one of the first boxes (firsts: the map's start) whole in it, the
 * most boxes whole, nearest to x0. Its left edge is pad out from a box's or label's edge, or W before that, or where a
 * box's edge comes 4 px clear of the overview at either side (the MNIST map reopened over its filled panel at 1000x900:
 * no window at a gap left a corner clear).
 * @param {Box[]} boxes @param {Box[]} labels @param {Box[]} arrows @param {Box[]} firsts @param {number} W @param {number} H @param {number} s
 * @param {number} pad @param {{w: number, h: number}|null} o @param {number} x0 @returns {{x: number, y: number, rank: number[]}|null} */
export function uncutWindow(boxes, labels, arrows, firsts, W, H, s, pad, o, x0) {
  const f = /** @type {Box} */ (around(firsts));
  const ow = o ? (o.w + 8) / s : 0, oh = o ? (o.h + 8) / s : 0, all = [...boxes, ...labels], label = new Set(labels);
  const xs = [...new Set([
    ...[...all, ...arrows].flatMap((b) => [b.x - pad, b.x + b.w + pad, b.x - pad - W, b.x + b.w + pad - W]),
    ...(ow ? boxes.flatMap((b) => [b.x - ow - 4 / s, b.x + b.w + ow + 4 / s - W]) : []),
  ])].filter((x) => x < f.x + f.w && x + W > f.x);
  /** Whether box b lies whole in the window at (x, y). @param {Box} b @param {number} x @param {number} y */
  const whole = (b, x, y) => b.x >= x - 0.5 && b.x + b.w <= x + W + 0.5 && b.y >= y - 0.5 && b.y + b.h <= y + H + 0.5;
  /** @type {{x: number, y: number, rank: number[]}|null} */
  let best = null;
  for (const x of xs) {
    const cols = all.filter((b) => b.x < x + W && b.x + b.w > x);
    if (!cols.length) continue;
    const y = Math.min(...cols.map((b) => b.y)) - pad, seen = cols.filter((b) => b.y < y + H);
    const rows = seen.filter((b) => !label.has(b)), shown = rows.filter((b) => whole(b, x, y));
    if (!rows.length) continue;
    const cut = rows.filter((b) => !whole(b, x, y)).length, band = Math.min(...rows.map((b) => b.x)) > x + W / 4 ||
      Math.max(...rows.map((b) => b.x + b.w)) < x + 3 * W / 4;
    const holds = firsts.some((b) => whole(b, x, y));
    const clear = !o || [[x, y], [x + W - ow, y], [x, y + H - oh], [x + W - ow, y + H - oh]].some(([cx, cy]) =>
      rows.every((b) => b.x >= cx + ow || b.x + b.w <= cx || b.y >= cy + oh || b.y + b.h <= cy));
    const cutLabels = seen.filter((b) => label.has(b) && !whole(b, x, y)).length
      + arrows.filter((b) => b.x < x + W && b.x + b.w > x && b.y < y + H && b.y + b.h > y && !whole(b, x, y)).length;
    const rank = [Number(band), Number(!clear), cut, cutLabels, Number(!holds), -shown.length, Math.abs(x - x0)];
    if (!best || before(rank, best.rank)) best = { x, y, rank };
  }
  return best;
}

/** Whether rank a comes before rank b (compared term by term). @param {number[]} a @param {number[]} b */
export function before(a, b) {
  const k = a.findIndex((v, i) => v !== b[i]);
  return k >= 0 && a[k] < b[k];
}

/** Where a window of length L starts along one axis: with all of [lo, hi] in it, cutting the fewest of the spans
 * (other nodes) at its ends, centred on [lo, hi] where that cuts as few. @param {number} lo @param {number} hi
 * @param {number} L @param {number[][]} spans */
export function placeWindow(lo, hi, L, spans) {
  const centred = (lo + hi - L) / 2;
  if (hi - lo >= L) return centred;
  const cuts = (/** @type {number} */ a) => spans.filter(([s, e]) => (s < a && e > a) || (s < a + L && e > a + L)).length;
  const starts = spans.flatMap(([s, e]) => [s, e, s - L, e - L]).filter((a) => a >= hi - L && a <= lo);
  return starts.reduce((best, a) => (cuts(a) < cuts(best) ? a : best), centred);
}

/** The box (SVG units) around the most of a whole step's changed nodes (their boxes, `changed`) that a window W x H
 * (SVG units, a margin all round taken off) shows whole at scale s, clear of the overview's footprint o (canvas px,
 * null: none): each box counted (a node changed on both sides is two). Null where none is changed.
 * @param {Box[]} changed @param {number} W @param {number} H @param {number} s @param {Box|null} o @returns {Box|null} */
export function mostChangedBox(changed, W, H, s, o) {
  const win = fullestWindow(changed, changed.map((_, i) => String(i)), changed.map(() => false), null, W, H, s, o);
  if (!win) return null;
  /** Whether a box (SVG units) is on the canvas across (x) or down (y) under the overview. @param {number} a @param {number} len @param {number} w0 @param {number} o0 @param {number} ol */
  const under = (a, len, w0, o0, ol) => MARGIN + (a - w0) * s < o0 + ol && MARGIN + (a + len - w0) * s > o0;
  return around(changed.filter((b) => b.x >= win.x - 0.5 && b.x + b.w <= win.x + W + 0.5 && b.y >= win.y - 0.5 && b.y + b.h <= win.y + H + 0.5 &&
                                      !(o && under(b.x, b.w, win.x, o.x, o.w) && under(b.y, b.h, win.y, o.y, o.h))));
}
