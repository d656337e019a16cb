// The time axis the run's canvases share (timeline.js, memchart.js): a view [v0, v1] of the run in µs, drawn from a left
// margin to the canvas's right edge, zoomed by the wheel around the pointer (in a notebook ctrl+wheel: see wheel.js)
// and panned by a drag (timeView), and its ticks (drawTimeTicks): round steps (1, 2, 5 × 10^k) labelled with the time from the run's start in the step's unit;
// zoomed in so deep that those labels would run to many digits ("564060 µs"), the first tick says its time from the
// run's start to the step's precision ("564.0605 ms") and the others the time after it ("+0.5 µs"). Both charts open on
// one window (openingWindow): the run message's opening, the launches a user came to see.

import { plural } from "./units.js";
import { wheelZoom } from "./wheel.js";

/** @typedef {import("./messages.js").TimelineData} TimelineData */

/** The span from a to b (µs) with 2% of it either side (1 µs at least). @param {number} a @param {number} b
 * @returns {[number, number]} */
function padded(a, b) {
  const m = Math.max((b - a) * 0.02, 1);
  return [a - m, b + m];
}

/** Launches a to b (indices) as the heads count them, from 1. @param {number} a @param {number} b */
export function launchRange(a, b) {
  return a === b ? `launch ${(a + 1).toLocaleString("en-US")}` : `launches ${(a + 1).toLocaleString("en-US")}–${(b + 1).toLocaleString("en-US")}`;
}

/** The window the timeline and the memory chart open on (µs, each 2% of it either side): the run message's opening
 * (tgviz.views.run.opening: a TinyJit loop's replays, else the launches no wide gap splits), else all the launches'
 * span (launched; with none, 0 to span, the caller's whole run). name: the opening's button ("launches 6–20",
 * "replays"; null where it is all the launches), what: the opening in words ("launches 6–20 of 20").
 * @param {TimelineData} t @param {number} span
 * @returns {{opening: [number, number], launched: [number, number], name: string|null, what: string}} */
export function openingWindow(t, span) {
  const n = t.start.length, o = t.opening;
  // (reduce, not Math.min(...): a long run's launches are more than a call's arguments may be)
  const first = t.start.reduce((a, s) => Math.min(a, s), Infinity), last = t.start.reduce((a, s, i) => Math.max(a, s + (t.dur[i] ?? 0)), -Infinity);
  const launched = n ? padded(first, last) : padded(0, span);
  if (!o || (o.what !== "replays" && o.first === 0 && o.last === n - 1)) return { opening: launched, launched, name: null, what: `all ${plural(n, "launch", "launches")}` };
  const replays = o.what === "replays", range = launchRange(o.first, o.last);
  return { opening: padded(o.start, o.end), launched, name: replays ? "replays" : range,
           what: `${replays ? "the TinyJit's replays, " : ""}${range} of ${n.toLocaleString("en-US")}` };
}

/** Round tick steps (1, 2, 5 × 10^k) for a span over about n ticks. @param {number} span @param {number} n */
function taStep(span, n) {
  const raw = span / n, p = 10 ** Math.floor(Math.log10(raw));
  return p * (raw / p >= 5 ? 5 : raw / p >= 2 ? 2 : 1);
}

/** µs per unit and the unit's name, for a time or step of this size. @param {number} us @returns {[number, string]} */
function taUnit(us) {
  return us >= 1e6 ? [1e6, "s"] : us >= 1e3 ? [1e3, "ms"] : us >= 1 ? [1, "µs"] : [1e-3, "ns"];
}

/** A time in the unit that suits `size`, with the decimals a step needs. @param {number} us @param {number} size @param {number} step */
function taFormat(us, size, step) {
  const [div, unit] = taUnit(size);
  return `${(us / div).toFixed(Math.max(0, -Math.floor(Math.log10(step / div) + 1e-9)))} ${unit}`;
}

/** The ticks of a view, about one per `every` px of a `width` px plot: [µs, label] each.
 * @param {number} v0 @param {number} v1 @param {number} width @param {number} every @returns {[number, string][]} */
export function timeTicks(v0, v1, width, every) {
  const step = taStep(v1 - v0, Math.max(2, width / every)), first = Math.ceil(v0 / step) * step;
  const deep = Math.max(Math.abs(first), Math.abs(v1)) / taUnit(step)[0] >= 1e4;  // labels of 5 digits and more
  /** @type {[number, string][]} */
  const out = [];
  for (let i = 0, s = first; s <= v1; s = first + ++i * step) {
    out.push([s, !deep ? taFormat(s, step, step) : i === 0 ? taFormat(s, Math.abs(s), step) : `+${taFormat(s - first, step, step)}`]);
  }
  return out;
}

/** A view of the run's time over a canvas's plot (from `left` CSS px to its right edge): wheel zooms around the pointer,
 * a drag pans. The tab's own pointer handlers, added after, read `dragging` (a pan is going on: no hover) and `clicked`
 * (the pointer went up without a pan). `width`: the canvas's CSS width, set by the tab's draw.
 * @typedef {{v0:number, v1:number, width:number, dragging:boolean, clicked:boolean, at:(px:number)=>number,
 *   x:(us:number)=>number, set:(v0:number, v1:number)=>void}} TimeView
 * @param {HTMLCanvasElement} canvas @param {number} left @param {number} span the run's length (µs) @param {() => void} redraw
 * @returns {TimeView} */
export function timeView(canvas, left, span, redraw) {
  /** @type {TimeView} */
  const v = {
    v0: 0, v1: span, width: 0, dragging: false, clicked: false,
    at: (px) => v.v0 + (px - left) / (v.width - left) * (v.v1 - v.v0),
    x: (us) => left + (us - v.v0) * (v.width - left) / (v.v1 - v.v0),
    set: (a, b) => { v.v0 = a; v.v1 = b; redraw(); },
  };
  wheelZoom(canvas, (ev) => {
    const at = v.at(ev.clientX - canvas.getBoundingClientRect().left), f = Math.exp(Math.max(-1, Math.min(1, ev.deltaY * 0.002)));
    const n0 = at - (at - v.v0) * f, n1 = at + (v.v1 - at) * f;
    if (n1 - n0 < 1e-3) return;  // a nanosecond across: close enough
    if (n1 - n0 >= span * 1.5) v.set(-span * 0.25, span * 1.25); else v.set(n0, n1);
  });
  /** @type {{x: number, v0: number, v1: number, moved: boolean}|null} */
  let drag = null;
  canvas.addEventListener("pointerdown", (ev) => {
    drag = { x: ev.clientX, v0: v.v0, v1: v.v1, moved: false };
    v.clicked = false;
    canvas.setPointerCapture(ev.pointerId);
  });
  canvas.addEventListener("pointermove", (ev) => {
    if (!drag) return;
    const dx = ev.clientX - drag.x;
    if (Math.abs(dx) > 3) drag.moved = true;
    if (!drag.moved) return;
    v.dragging = true;
    const d = dx / (v.width - left) * (drag.v1 - drag.v0);
    v.set(drag.v0 - d, drag.v1 - d);
  });
  canvas.addEventListener("pointerup", () => { v.clicked = !!drag && !drag.moved; drag = null; v.dragging = false; });
  return v;
}

/** Draw a view's ticks: a grid line from y0 to y1 at each and its label at labelY (middle baseline); returns the labels.
 * @param {CanvasRenderingContext2D} c @param {TimeView} v @param {number} y0 @param {number} y1 @param {number} labelY
 * @param {string} fg @param {string} grid */
export function drawTimeTicks(c, v, y0, y1, labelY, fg, grid) {
  c.fillStyle = fg; c.strokeStyle = grid;
  const ticks = timeTicks(v.v0, v.v1, v.width - v.x(v.v0), 140);
  for (const [s, label] of ticks) {
    const px = Math.round(v.x(s)) + 0.5;
    c.beginPath(); c.moveTo(px, y0); c.lineTo(px, y1); c.stroke();
    if (px + 2 + c.measureText(label).width <= v.width) c.fillText(label, px + 2, labelY);  // none cut off at the edge
  }
  return ticks.map(([, label]) => label);
}
