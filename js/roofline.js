// The *roofline* tab: every kernel that ran, as a point by arithmetic intensity (tinygrad's FLOPs / bytes estimates, x,
// log) and the GFLOP/s of float work it achieved at its median (y, log: tinygrad's FLOPs less its integer ops, which no
// float roof bounds), under its device's roofs: the memory roof (peak GB/s × intensity) up to the ridge, the float32
// compute roof (peak GFLOP/s) after it, their numbers written beside them where no point is (roofSpots: the memory's
// over its roof, where a kernel would beat the memory; where no place is free, on the roof's hover only, as the head
// says them too). Drawn as SVG (a point per kernel: hundreds at most). The slowest kernels are labelled by name, each
// label placed clear of every point and label (roofLabels). Hover names a kernel and its limit (memory, compute, latency,
// and how close to its roof), a click opens it. A kernel with no float work (a copy, a fill) sits on the x axis's floor,
// hollow.
import { h, svgEl } from "./dom.js";
import { fmtNum, fmtTime, plural } from "./units.js";

/** @typedef {import("./messages.js").RunMsg} RunMsg */
/** @typedef {import("./runview.js").OpenKernel} OpenKernel */

const ROOF_W = 760, ROOF_H = 420, ROOF_L = 64, ROOF_R = 16, ROOF_T = 16, ROOF_B = 40;
const ROOF_COLORS = ["#4e79a7", "#e15759", "#59a14f", "#b07aa1", "#f28e2b"];
const LABELLED = 8, CHAR_W = 6.3, LABEL_H = 13, POINT_R = 5;  // the slowest kernels named; a label's size at 11 px

/** The decades a log axis spans, from lo to hi (both > 0). @param {number} lo @param {number} hi */
const roofDecades = (lo, hi) => [Math.floor(Math.log10(lo)), Math.ceil(Math.log10(hi))];

/** The roofline tab of a run message. @param {RunMsg} msg @param {OpenKernel} openKernel @returns {HTMLElement} */
export function rooflineTab(msg, openKernel) {
  const r = msg.roofline, pts = r.points, peaks = Object.entries(r.peaks);
  const devices = [...new Set([...pts.map((p) => p.device), ...peaks.map(([d]) => d)])];
  const color = (/** @type {string} */ d) => ROOF_COLORS[devices.indexOf(d) % ROOF_COLORS.length];
  // each thing said once: what the axes are, then each device's peaks (the date of their benchmark once where all share it)
  const dates = [...new Set(peaks.map(([, p]) => p.measured))];
  const head = h("div", { class: "tgviz-roof-head" }, [
    h("b", { class: "tgviz-roof-count", "data-points": String(pts.length), "data-ran": String(r.ran) }, [plural(pts.length, "kernel")]),
    ` of ${r.ran} that ran, the slowest ${Math.min(LABELLED, pts.length)} named · x: FLOPs per byte, y: GFLOP/s of float work at its`
    + " median (tinygrad's estimates; integer ops counted apart)",
    ...(peaks.length ? [h("div", {}, [`each device's peaks, measured once by a small tinygrad benchmark${dates.length === 1 ? ` on ${dates[0]}` : ""}:`])] : []),
    ...(peaks.length ? peaks.map(([d, p]) => h("div", { class: "tgviz-roof-peak", "data-device": d, style: `color:${color(d)}` },
      [`${d}: ${fmtNum(p.gflops)} GFLOP/s, ${fmtNum(p.gbs)} GB/s, ridge ${fmtNum(p.ridge)} FLOP/B`
       + `${p.launch_us ? `, launch floor ${fmtTime(p.launch_us)}` : ""} (${p.how}${dates.length === 1 ? "" : `; ${p.measured}`})`]))
      : ["no device peaks"])]);
  const notes = r.notes.map((n) => h("div", { class: "tgviz-roof-note" }, [n]));
  if (!pts.length) return h("div", { class: "tgviz-roof" }, [head, ...notes]);
  const yOf = (/** @type {import("./messages.js").PointRow} */ p) => p.float_gflops ?? p.gflops;
  const ints = pts.map((p) => p.intensity ?? 0).filter((v) => v > 0), gf = pts.map(yOf).filter((v) => v > 0);
  const roofs = peaks.map(([, p]) => p);
  const [x0, x1] = roofDecades(Math.min(...ints, ...roofs.map((p) => p.ridge / 10), 1) / 2,
                               Math.max(...ints, ...roofs.map((p) => p.ridge * 10), 1) * 2);
  const [y0, y1] = roofDecades(Math.min(...gf, ...roofs.map((p) => p.gflops / 1e3), 1) / 2, Math.max(...gf, ...roofs.map((p) => p.gflops), 1) * 2);
  const pw = ROOF_W - ROOF_L - ROOF_R, ph = ROOF_H - ROOF_T - ROOF_B;
  const x = (/** @type {number} */ v) => ROOF_L + (Math.log10(Math.max(v, 10 ** x0)) - x0) / (x1 - x0) * pw;
  const y = (/** @type {number} */ v) => ROOF_T + ph - (Math.log10(Math.max(v, 10 ** y0)) - y0) / (y1 - y0) * ph;
  const svg = svgEl("svg", { class: "tgviz-roof-svg", width: ROOF_W, height: ROOF_H, viewBox: `0 0 ${ROOF_W} ${ROOF_H}` });
  const grid = svgEl("g", { class: "tgviz-roof-grid" });
  for (let d = x0; d <= x1; d++) grid.append(svgEl("line", { x1: x(10 ** d), x2: x(10 ** d), y1: ROOF_T, y2: ROOF_T + ph }),
                                             svgEl("text", { x: x(10 ** d), y: ROOF_H - 22, "text-anchor": "middle" }, [fmtNum(10 ** d)]));
  for (let d = y0; d <= y1; d++) grid.append(svgEl("line", { x1: ROOF_L, x2: ROOF_L + pw, y1: y(10 ** d), y2: y(10 ** d) }),
                                             svgEl("text", { x: ROOF_L - 4, y: y(10 ** d) + 4, "text-anchor": "end" }, [fmtNum(10 ** d)]));
  grid.append(svgEl("text", { x: ROOF_L + pw / 2, y: ROOF_H - 6, "text-anchor": "middle" }, ["arithmetic intensity (FLOP/byte)"]),
              svgEl("text", { x: 12, y: ROOF_T + ph / 2, transform: `rotate(-90 12 ${ROOF_T + ph / 2})`, "text-anchor": "middle" }, ["GFLOP/s"]));
  svg.append(grid);
  /** the roofs' own labels' boxes, which the kernels' names keep clear of @type {number[][]} */
  const taken = [], dots = pts.map((q) => [x(q.intensity ?? 0), y(yOf(q))]);
  peaks.forEach(([d, p]) => {  // the memory roof up to the ridge, the compute roof after it, each with its number
    const start = Math.max(10 ** x0, (10 ** y0) / p.gbs), hi = 10 ** x1;
    const roof = svgEl("polyline", { class: "tgviz-roof-line", "data-device": d, fill: "none", stroke: color(d), "stroke-width": 2,
                                     points: `${x(start)},${y(p.gbs * start)} ${x(p.ridge)},${y(p.gflops)} ${x(hi)},${y(p.gflops)}` });
    svg.append(roof);
    const texts = [`${d} compute ${fmtNum(p.gflops)} GFLOP/s`, `${d} memory ${fmtNum(p.gbs)} GB/s`];
    const spots = roofSpots([x(start), y(p.gbs * start)], [x(p.ridge), y(p.gflops)], x(hi), texts.map((t) => t.length * (CHAR_W + 1)));
    texts.forEach((text, i) => {
      const box = spots[i].find((b) => clearOf(b, dots, [ROOF_L, 0, ROOF_L + pw, ROOF_T + ph], taken));
      if (!box) { roof.append(svgEl("title", {}, [text])); return; }  // no room clear of the points: named on hover and in the head
      taken.push(box);
      svg.append(svgEl("text", { class: "tgviz-roof-label", "data-device": d, x: box[0], y: box[1] + LABEL_H - 3, fill: color(d) }, [text]));
    });
  });
  const hover = h("div", { class: "tgviz-roof-hover" }, ["hover a point to name its kernel; click to open it"]);
  for (const p of pts) {
    const name = msg.kernels[p.kernel][0], floor = !(p.intensity && p.intensity > 0) || !(yOf(p) > 0);
    const text = `${name} on ${p.device}: ${fmtNum(p.intensity ?? 0)} FLOP/B, ${fmtNum(yOf(p))} GFLOP/s of float work (tinygrad's FLOPs: `
      + `${fmtNum(p.gflops)} GFLOP/s; ${fmtNum(p.gbs)} GB/s), ${p.runs} launch${p.runs === 1 ? "" : "es"} in ${fmtTime(p.time_us)}`
      + (msg.timings?.[p.kernel] ? `; ${msg.timings[p.kernel]}` : "") + (p.why ? `\n${p.why}` : p.bound ? `, ${p.bound}-bound` : "")
      + (floor ? " (no float work: drawn on the axis)" : "");
    const dot = svgEl("circle", { class: "tgviz-roof-point", "data-kernel": p.kernel, "data-verdict": p.verdict ?? "", cx: x(p.intensity ?? 0), cy: y(yOf(p)), r: POINT_R,
                                  fill: floor ? "none" : color(p.device), stroke: color(p.device), "stroke-width": 1.5 },
                      [svgEl("title", {}, [text])]);
    dot.addEventListener("pointerenter", () => { hover.textContent = text; hover.dataset.kernel = String(p.kernel); });
    dot.addEventListener("click", () => openKernel(p.kernel));
    svg.append(dot);
  }
  const slowest = [...pts].sort((a, b) => b.time_us - a.time_us).slice(0, LABELLED);
  for (const [p, box] of roofLabels(slowest, dots, (p) => [x(p.intensity ?? 0), y(yOf(p))],
                                    (p) => msg.kernels[p.kernel][0], [ROOF_L, ROOF_T, ROOF_L + pw, ROOF_T + ph], taken)) {
    const [px, py] = [x(p.intensity ?? 0), y(yOf(p))], [bx, by, bw] = box;
    const near = Math.abs(bx - px) < bw + 12 && Math.abs(by + LABEL_H / 2 - py) < 14;
    if (!near) svg.append(svgEl("line", { class: "tgviz-roof-leader", x1: px, y1: py, x2: bx + (bx > px ? 0 : bw), y2: by + LABEL_H / 2 }));
    const label = svgEl("text", { class: "tgviz-roof-name", "data-kernel": p.kernel, "data-box": JSON.stringify(box.map((v) => Math.round(v * 10) / 10)),
                                  x: bx, y: by + LABEL_H - 3 }, [msg.kernels[p.kernel][0]]);
    label.addEventListener("click", () => openKernel(p.kernel));
    svg.append(label);
  }
  return h("div", { class: "tgviz-roof" }, [head, svg, hover, ...notes]);
}

/** The places a roof's two labels may go, nearer the middle of their roof first: the compute roof's (the line at
 * ridge[1] from ridge[0] to right) over it, right-aligned, then under it; the memory roof's (the line from start to
 * ridge) over it, up to its left (where a kernel would be faster than the memory allows, so seldom is), then under it.
 * Boxes are [x, y, width, height], y their top.
 * @param {number[]} start @param {number[]} ridge @param {number} right @param {number[]} widths [compute's, memory's]
 * @returns {number[][][]} [compute's places, memory's] */
function roofSpots(start, ridge, right, widths) {
  const [cw, mw] = widths, gap = 4, over = [], under = [];
  for (let bx = right - 4 - cw; bx >= Math.min(ridge[0], right - 4 - cw); bx -= 30) over.push([bx, ridge[1] - gap - LABEL_H, cw, LABEL_H]);
  const compute = [...over, ...over.map(([bx, , w, lh]) => [bx, ridge[1] + gap, w, lh])], above = [], below = [];
  for (const s of [0.5, 0.4, 0.6, 0.3, 0.7, 0.2, 0.8, 0.1, 0.9, 0, 1]) {
    const px = start[0] + s * (ridge[0] - start[0]), py = start[1] + s * (ridge[1] - start[1]);
    above.push([px - mw, py - gap - LABEL_H, mw, LABEL_H]);  // its bottom right corner at the line: all of it over the line
    below.push([px + gap, py + gap, mw, LABEL_H]);
  }
  return [compute, [...above, ...below]];
}

/** Whether a box [x, y, width, height] lies inside plot [left, top, right, bottom], clear of every point (circles at
 * dots) and of the boxes taken. @param {number[]} b @param {number[][]} dots @param {number[]} plot @param {number[][]} taken */
function clearOf(b, dots, plot, taken) {
  return b[0] >= plot[0] && b[1] >= plot[1] && b[0] + b[2] <= plot[2] && b[1] + b[3] <= plot[3]
    && dots.every(([cx, cy]) => cx + POINT_R + 1 < b[0] || cx - POINT_R - 1 > b[0] + b[2] || cy + POINT_R + 1 < b[1] || cy - POINT_R - 1 > b[1] + b[3])
    && taken.every((o) => o[0] + o[2] + 2 < b[0] || b[0] + b[2] + 2 < o[0] || o[1] + o[3] < b[1] || b[1] + b[3] < o[1]);
}

/** Places a label beside each of points (the slowest first), clear of every point (circles at dots), of the boxes taken
 * (the roofs' labels) and of the labels placed before it, inside the plot: the first of the places around it, nearer
 * ones first, that is free; a point no place fits is left unlabelled. Returns [point, [x, y, width, height]] (the
 * label's box, y its top).
 * @template P @param {P[]} points @param {number[][]} dots @param {(p: P) => number[]} at @param {(p: P) => string} name
 * @param {number[]} plot [left, top, right, bottom] @param {number[][]} [taken] @returns {[P, number[]][]} */
export function roofLabels(points, dots, at, name, plot, taken = []) {
  /** @type {[P, number[]][]} */
  const placed = [];
  const boxes = [...taken];
  for (const p of points) {
    const [px, py] = at(p), w = name(p).length * CHAR_W, r = POINT_R + 3;
    const tries = [];
    for (const d of [0, 12, 24, 40, 60, 90, 130]) {
      tries.push([px + r + d, py - LABEL_H / 2], [px - r - w - d, py - LABEL_H / 2], [px - w / 2, py - r - LABEL_H - d], [px - w / 2, py + r + d],
                 [px + r + d, py - r - LABEL_H - d], [px + r + d, py + r + d], [px - r - w - d, py - r - LABEL_H - d], [px - r - w - d, py + r + d]);
    }
    const spot = tries.map(([bx, by]) => [bx, by, w, LABEL_H]).find((b) => clearOf(b, dots, plot, boxes));
    if (spot) { placed.push([p, spot]); boxes.push(spot); }
  }
  return placed;
}
