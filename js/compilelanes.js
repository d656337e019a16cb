// The timeline's compiler lanes, above the devices' as tinygrad's VIZ draws them: TINY (its compiler: each schedule, each
// kernel's codegen, its rewrite steps nested under it, the render and device-compile stages tgviz timed in
// linearize/render) and USER (the Tensor methods called), each span a box on its depth's row, on the timeline's time
// axis. Only what is in view is visited (per row, a binary search over the running maximum of the spans' ends); hover
// names a span (its time, its own time less the rewrites nested in it), a click opens its step. The data is
// tgviz/views/compile.py's part of the run message.
/** @typedef {import("./messages.js").CompileData} CompileData */

const ROW = 13, GAP = 4, MAX_ROWS = 8;
const COLORS = /** @type {Record<string, string>} */ ({
  schedule: "#59a14f", kernel: "#4e79a7", group: "#8c8c8c", step: "#76b7b2", span: "#bab0ac", user: "#9c755f",
  linearize: "#edc948", estimates: "#d4c99a", render: "#f28e2b", compile: "#e15759", assemble: "#f28e2b" });

/** The first k with maxEnd[k] >= t (the first box of a row that may reach into view).
 * @param {Float64Array} maxEnd @param {number} t */
export function firstReaching(maxEnd, t) {
  let lo = 0, hi = maxEnd.length;
  while (lo < hi) { const mid = (lo + hi) >> 1; if (maxEnd[mid] < t) lo = mid + 1; else hi = mid; }
  return lo;
}

/** The lanes of a run message's compile data: their height and, given the time axis, draw, hit, describe and the step a
 * span opens. @param {CompileData} d */
export function compileLanes(d) {
  const n = d.start.length;
  /** @type {{lane: number, depth: number, ids: Int32Array, maxEnd: Float64Array}[]} */
  const rows = [];
  /** rows of each lane, in order */
  const laneRows = d.lanes.map((_, l) => {
    const deepest = Math.min(MAX_ROWS - 1, Math.max(0, ...d.depth.filter((_, i) => d.lane[i] === l)));
    return Array.from({ length: deepest + 1 }, (_, depth) => {
      const ids = Int32Array.from(d.start.flatMap((_, i) => (d.lane[i] === l && Math.min(d.depth[i], MAX_ROWS - 1) === depth ? [i] : [])));
      const maxEnd = new Float64Array(ids.length);
      let m = -Infinity;
      ids.forEach((id, k) => { m = Math.max(m, d.start[id] + d.dur[id]); maxEnd[k] = m; });
      const row = { lane: l, depth, ids, maxEnd };
      rows.push(row);
      return row;
    });
  });
  /** @type {number[]} */
  const laneTop = [];
  let y = 0;
  for (const lr of laneRows) { laneTop.push(y); y += lr.length * ROW + GAP; }
  const height = n ? y : 0;
  const kindOf = (/** @type {number} */ i) => d.kinds[d.kind[i]];
  const own = new Map(d.own.map(([i, us]) => [i, us]));  // the spans with rewrites nested in them: their own time

  return {
    height,
    /** Draw the lanes from y0 down; returns the widest kernel codegen span drawn, [x, y, width, height, its index] (the
     * canvas's data-codegen, for the tests), or null. @param {CanvasRenderingContext2D} c @param {(us: number) => number} x
     * @param {number} v0 @param {number} v1 @param {number} y0 @param {number} left @param {number} width @param {string} fg
     * @param {string} bg2 @returns {number[]|null} */
    draw(c, x, v0, v1, y0, left, width, fg, bg2) {
      /** @type {number[]|null} */
      let widest = null;
      laneRows.forEach((lr, l) => {
        c.fillStyle = bg2; c.fillRect(left, y0 + laneTop[l], width - left, lr.length * ROW);
        c.fillStyle = fg; c.fillText(d.lanes[l], 4, y0 + laneTop[l] + ROW / 2, left - 8);
        lr.forEach(({ ids, maxEnd }, depth) => {
          const top = y0 + laneTop[l] + depth * ROW;
          let col = -1;
          for (let k = firstReaching(maxEnd, v0); k < ids.length; k++) {
            const i = ids[k], st = d.start[i];
            if (st > v1) break;
            const a = x(st), b = x(st + d.dur[i]);
            if (b < left) continue;
            c.fillStyle = COLORS[kindOf(i)] ?? COLORS.span;
            if (b - a < 1) {  // under a pixel: one column a pixel
              if (Math.floor(a) === col) continue;
              col = Math.floor(a);
              c.fillRect(col, top + 1, 1, ROW - 2);
              continue;
            }
            const l0 = Math.max(a, left), r0 = Math.min(b, width);
            c.fillRect(l0, top + 1, r0 - l0 - 0.5, ROW - 2);
            if (kindOf(i) === "kernel" && (!widest || r0 - l0 > widest[2])) widest = [l0, top + 1, r0 - l0, ROW - 2, i];
            if (r0 - l0 > 40) {
              c.save(); c.beginPath(); c.rect(l0, top, r0 - l0 - 2, ROW); c.clip();
              c.fillStyle = "#fff"; c.fillText(d.names[d.name[i]], l0 + 2, top + ROW / 2); c.restore();
            }
          }
        });
      });
      return widest;
    },
    /** The span under a point (y from the lanes' top), within 3 px, or -1. @param {number} at µs under the pointer
     * @param {number} py @param {number} slack µs of 3 px */
    hit(at, py, slack) {
      const l = laneTop.findIndex((t, k) => py >= t && py < t + laneRows[k].length * ROW);
      if (l < 0) return -1;
      const row = laneRows[l][Math.floor((py - laneTop[l]) / ROW)];
      if (!row) return -1;
      let best = -1, bestD = Infinity;
      for (let k = firstReaching(row.maxEnd, at - slack); k < row.ids.length; k++) {
        const i = row.ids[k], st = d.start[i], en = st + d.dur[i];
        if (st > at + slack) break;
        const dist = at < st ? st - at : at > en ? at - en : 0;
        if (dist <= slack && dist < bestD) { best = i; bestD = dist; }
      }
      return best;
    },
    /** A span's tooltip. @param {number} i @param {(us: number) => string} fmt */
    describe(i, fmt) {
      const kind = kindOf(i), mine = own.get(i), ownText = mine !== undefined ? ` · own ${fmt(mine)} (less the rewrites nested in it)` : "";
      const what = { schedule: "schedule", kernel: "a kernel's codegen", group: "tracked work", step: "rewrite step", span: "tinygrad span",
                     user: "Tensor method", render: "render (tgviz timed)", compile: "device compile (tgviz timed)",
                     linearize: "linearize (tgviz timed)", estimates: "estimates (tgviz timed)", assemble: "assemble (tgviz timed)" }[kind] ?? kind;
      return `${d.names[d.name[i]]} (${what}) on ${d.lanes[d.lane[i]]}\nstart ${fmt(d.start[i])} · duration ${fmt(d.dur[i])}${ownText}`
        + (d.step[i] ? "\nclick: its steps" : "");
    },
    /** The step a span opens ("" for none). @param {number} i */
    step: (/** @type {number} */ i) => d.step[i],
    /** The legend's entries. @returns {string[][]} */
    legend: () => (n ? [[COLORS.schedule, "TINY: a schedule"], [COLORS.kernel, "a kernel's codegen"], [COLORS.step, "a rewrite step (nested)"],
                        [COLORS.render, "render"], [COLORS.compile, "device compile"], [COLORS.user, "USER: a Tensor method"]] : []),
  };
}
