// The *timeline* tab: every launch, copy and sync of the run on a canvas, one lane per device (as tinygrad's VIZ, which
// moved its timeline from SVG to canvas to draw tens of thousands of launches). It opens where the run message says
// (tgviz.views.run.opening: a TinyJit loop's replays, else the largest stretch of launches no wide gap, a compile, splits),
// 2% of it either side (timeaxis.js's openingWindow, which the memory chart opens on too), and its head says which launches that is and what it leaves out; *whole run* (or f) shows all
// of it, f again the opening, *launches* all the launches' span. Wheel zooms around the pointer, a drag
// pans (timeaxis.js, shared with the memory chart, as are the ticks: times from the run's start), hover names a box, a
// click opens that kernel's steps. Only what is in view is visited (per lane, a binary search over the running maximum
// of the launches' ends), and boxes under a pixel wide are drawn as one pixel column per lane. The slowest kernel
// launches are outlined and numbered (a number that would overlap another's is left out: its box's hover says it);
// TinyJit runs are a band over the lanes: the captured batch once, each replay marked as one (and its launches drawn
// paler); hover names a run, a click zooms to it. The canvas's data-* attributes say what was drawn (the slowest box's
// place, the numbered boxes and their numbers', the last draw's time) for the tests and benchmarks/timeline_speed.py.
import { compileLanes, firstReaching } from "./compilelanes.js";
import { h } from "./dom.js";
import { drawTimeTicks, launchRange, openingWindow, timeView } from "./timeaxis.js";
import { fmtBytes, fmtNum, fmtTime, plural } from "./units.js";

/** @typedef {import("./messages.js").RunMsg} RunMsg */
/** @typedef {import("./runview.js").OpenKernel} OpenKernel */

const TL_LEFT = 96, TL_AXIS = 22, TL_JIT = 18, TL_LANE = 30, TL_PAD = 6;
const NUM_GAP = 4;  // px between two slowest launches' numbers at least: closer, "5" and "4" read as "54"
const TL_COLORS = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f"];
const TL_KIND_COLORS = ["", "#8c8c8c", "#7b5ea7", "#d08a1c", "#b0b0b0"];  // by kind: kernel (by name), copy, graph, sync, other

/** The launches as typed columns, each lane's launches in start order with the running maximum of their ends.
 * @param {import("./messages.js").TimelineData} t */
function tlColumns(t) {
  const n = t.start.length, start = Float64Array.from(t.start), end = new Float64Array(n);
  for (let i = 0; i < n; i++) end[i] = start[i] + (t.dur[i] ?? 0);
  /** @type {{ids: Int32Array, maxEnd: Float64Array}[]} */
  const lanes = t.lanes.map((_, l) => {
    const ids = Int32Array.from(t.lane.flatMap((x, i) => (x === l ? [i] : [])));
    const maxEnd = new Float64Array(ids.length);
    let m = -Infinity;
    ids.forEach((id, k) => { m = Math.max(m, end[id]); maxEnd[k] = m; });
    return { ids, maxEnd };
  });
  return { n, start, end, lanes };
}

/** What the timeline opens on and what that view leaves out, in words, every number the message's.
 * @param {import("./messages.js").TimelineOpening} o @param {number} n the launches @param {string} what the opening in words (openingWindow's) */
function openingText(o, n, what) {
  const compiling = (/** @type {number|null} */ us) => (us ? ` (${fmtTime(us)} of it tinygrad compiling: the TINY lane)` : "");
  const out = [
    ...(o.gap_before === null ? [] : [`${launchRange(0, o.first - 1)}, then ${fmtTime(o.gap_before)} with no launch before them${compiling(o.compiling_before)}`]),
    ...(o.gap_after === null ? [] : [`${fmtTime(o.gap_after)} with no launch after them${compiling(o.compiling_after)}, then ${launchRange(o.last + 1, n - 1)}`])];
  return `opens on ${what}, ${fmtTime(o.start)} to ${fmtTime(o.end)} into the run`
    + (out.length ? `; left out of that view: ${out.join("; ")}` : "") + " · whole run (f): all of it";
}

/** The timeline tab of a run message: its element, and fit(), which switches the view between the opening (the run
 * message's: a TinyJit loop's replays, else the launches no wide gap splits) and the whole run (the f key's work while
 * the tab is shown).
 * @param {RunMsg} msg @param {OpenKernel} openKernel @param {(step: string) => void} openStep
 * @returns {{el: HTMLElement, fit: () => void}} */
export function timelineTab(msg, openKernel, openStep) {
  const born = performance.now(), t = msg.timeline, cols = tlColumns(t);
  const lanes = compileLanes(msg.compile), cold = new Set(t.cold ?? []);
  const tlName = (/** @type {number} */ i) => (t.kernel[i] >= 0 ? msg.kernels[t.kernel[i]][0] : t.names[t.name[i]]);
  const kernels = t.kind.filter((k) => k === 0).length, replayed = t.jit_runs.filter((r) => r[1] > 0).length;
  const counts = t.kinds.map((k, i) => [k, t.kind.filter((x) => x === i).length]).filter(([, c]) => c);
  const head = h("div", { class: "tgviz-tl-head" }, [
    h("b", { class: "tgviz-tl-count", "data-launches": String(cols.n), "data-kernels": String(kernels) },
      [plural(cols.n, "launch", "launches")]),
    ` (${counts.map(([k, c]) => `${c.toLocaleString("en-US")} ${k}`).join(", ") || "none"}${t.outside ? `; ${t.outside}` : ""})`
    + ` on ${t.lanes.join(", ") || "no device"}`
    + ` over ${fmtTime(t.duration)}`
    + (t.jit_runs.length ? `; TinyJit ${t.jits.join(", ")}: the captured batch, then ${replayed} replays (paler)` : "")
    + " · wheel (in a notebook ctrl+wheel): zoom, drag: pan, click a kernel or a compiler span: its steps"]);
  const compiled = h("div", { class: "tgviz-tl-compile", "data-wall": String(msg.compile.totals.wall_us ?? 0) }, [msg.compile.summary]);
  compiled.hidden = !msg.compile.summary;
  const o = t.opening, span = Math.max(t.duration, ...t.lanes.map((_, l) => cols.lanes[l].maxEnd.at(-1) ?? 0)) || 1;
  const { opening, launched, name, what } = openingWindow(t, span);
  const shown = h("div", { class: "tgviz-tl-shown" }, [o ? openingText(o, cols.n, what) : ""]);
  shown.hidden = !o;
  if (!cols.n && !lanes.height) return { fit: () => {}, el: h("div", { class: "tgviz-tl" }, [head, h("p", {}, [t.source ? "no launches recorded" :
    "no launches: this trace has no profile (a capture with profile=False, or tinygrad's rewrites.pkl)"])]) };
  const fit = h("button", { class: "tgviz-tl-fit", title: "the whole run, compile time included (f)" }, ["whole run"]);
  const toLaunches = h("button", { class: "tgviz-tl-launches", title: "the span where the launches ran (f)" }, ["launches"]);
  const replays = o?.what === "replays";
  const toOpening = h("button", { class: `tgviz-tl-opening${replays ? " tgviz-tl-replays" : ""}`, title: replays
    ? "the TinyJit's replays: the training loop's steady state (f: the whole run)" : "the launches no wide gap splits, where the timeline opens (f: the whole run)" },
    [name ?? ""]);
  toOpening.hidden = !name;  // (none: it opens on all the launches' span)
  const slow = h("span", { class: "tgviz-tl-slowest" }, [t.slowest.length ? "slowest launches in the run: " : "no kernel launch was timed",
    ...t.slowest.flatMap((i, r) => {
      const b = h("button", { class: "tgviz-link", title: `this launch in the run took ${fmtTime(t.dur[i])}; click: zoom to it`,
                              "data-index": String(i) }, [`${r + 1}. ${tlName(i)} ${fmtTime(t.dur[i])}`]);
      b.addEventListener("click", () => zoomTo(i));
      // a kernel timed again after the run: its median there (the kernel table's) beside this one launch's time
      const again = t.kernel[i] >= 0 ? msg.retimed?.[t.kernel[i]] : null;
      return cold.has(i) ? [b, h("span", { class: "tgviz-tl-cold", title: "its only launch, cold: the device's first run of the kernel, no "
        + "measurement of it warm (the kernel table times it again)" }, ["❄ 1 cold launch"])]
        : again ? [b, h("span", { class: "tgviz-tl-retimed", title: `re-timed after the run, warm: the median of ${plural(again[1], "run")}, the kernel `
          + `table's (this launch in the run: ${fmtTime(t.dur[i])})` }, [`(re-timed: ${fmtTime(again[0])} median of ${again[1]})`])] : [b];
    })]);
  const canvas = h("canvas", { class: "tgviz-tl-canvas" });
  const tip = h("div", { class: "tgviz-tl-tip", hidden: "" });
  const box = h("div", { class: "tgviz-tl-box" }, [canvas, tip]);
  const legend = h("div", { class: "tgviz-tl-legend" }, [
    ...[["#4e79a7", "kernel (a colour per name)"], [TL_KIND_COLORS[1], "copy"], [TL_KIND_COLORS[3], "synchronize"],
        [TL_KIND_COLORS[2], "graph batch (thin)"], ["#1f7a6d", "TinyJit: the captured batch"], ["#9fd3c7", "a replay (its launches paler)"],
        ["#d00", "the slowest kernel launches, numbered"], ["", "❄ dashed: a kernel's only launch, cold"],
        ...lanes.legend()].map(([c, text]) => h("span", {}, [h("i", { style: c ? `background:${c}` : "border:1px dashed currentColor" }), text]))]);
  const el = h("div", { class: "tgviz-tl" }, [head, shown, compiled, h("div", { class: "tgviz-tl-tools" }, [toLaunches, toOpening, fit, slow]), box, legend]);
  let frame = 0;
  const ctop = TL_AXIS + (t.jit_runs.length ? TL_JIT : 0), top = ctop + lanes.height, height = top + t.lanes.length * TL_LANE + TL_PAD;
  const rank = new Map(t.slowest.map((i, r) => [i, r]));
  const view = timeView(canvas, TL_LEFT, span, () => redraw());
  canvas.dataset.lanesTop = String(top);  // where the devices' lanes begin (CSS px), for the tests
  [view.v0, view.v1] = opening;

  function draw() {
    frame = 0;
    const t0 = performance.now();
    const width = view.width = box.clientWidth, { v0, v1 } = view;
    if (!width) return;
    const dpr = window.devicePixelRatio || 1;
    if (canvas.width !== Math.round(width * dpr) || canvas.height !== Math.round(height * dpr)) {
      canvas.width = Math.round(width * dpr); canvas.height = Math.round(height * dpr);
      Object.assign(canvas.style, { width: `${width}px`, height: `${height}px` });
    }
    const c = /** @type {CanvasRenderingContext2D} */ (canvas.getContext("2d"));
    c.setTransform(dpr, 0, 0, dpr, 0, 0);
    const style = getComputedStyle(el), fg = style.color, bg2 = style.getPropertyValue("--tg-bg2") || "#f2f2f2";
    c.clearRect(0, 0, width, height);
    const w = width - TL_LEFT, scale = w / (v1 - v0), x = (/** @type {number} */ us) => TL_LEFT + (us - v0) * scale;
    c.font = "11px system-ui, sans-serif";
    c.textBaseline = "middle";
    canvas.dataset.ticks = JSON.stringify(drawTimeTicks(c, view, TL_AXIS - 4, height, TL_AXIS / 2, fg, bg2));  // the time axis
    // the TinyJit runs: the captured batch, then its replays
    let batch = "";  // where the first captured batch was drawn (data-batch)
    if (t.jit_runs.length) {
      let agg = -1;
      for (const [, replay, st, en] of t.jit_runs) {
        if (en < v0 || st > v1) continue;
        const a = x(st), b = x(en);
        if (b - a < 1) { if (Math.floor(a) === agg) continue; agg = Math.floor(a); }
        c.fillStyle = replay === 0 ? "#1f7a6d" : "#9fd3c7";
        const rect = [Math.max(a, TL_LEFT), TL_AXIS + 2, Math.max(1, Math.min(b, width) - Math.max(a, TL_LEFT)), TL_JIT - 4];
        c.fillRect(rect[0], rect[1], rect[2], rect[3]);
        if (replay === 0 && !batch) batch = JSON.stringify(rect);
        if (b - a > 70) { c.fillStyle = replay === 0 ? "#fff" : "#134"; c.fillText(replay === 0 ? "captured batch" : `replay ${replay}`, Math.max(a, TL_LEFT) + 3, TL_AXIS + TL_JIT / 2); }
      }
    }
    const widest = lanes.draw(c, x, v0, v1, ctop, TL_LEFT, width, fg, bg2);  // the compiler's lanes, then the devices'
    canvas.dataset.codegen = widest ? JSON.stringify(widest.slice(0, 4)) : "";
    canvas.dataset.codegenStep = widest ? lanes.step(widest[4]) : "";
    // the lanes
    /** @type {number[][]} */
    const marks = [];
    cols.lanes.forEach(({ ids, maxEnd }, l) => {
      const y = top + l * TL_LANE;
      c.fillStyle = bg2; c.fillRect(TL_LEFT, y + 2, w, TL_LANE - 4);
      let col = -1, colOf = 0;  // a pixel column of launches under a pixel wide: drawn as its first kernel's (else first launch's)
      const flush = () => {
        if (col < 0) return;
        c.globalAlpha = t.replay[colOf] > 0 ? 0.45 : 1;
        c.fillStyle = t.kind[colOf] === 0 ? TL_COLORS[t.name[colOf] % TL_COLORS.length] : TL_KIND_COLORS[t.kind[colOf]];
        c.fillRect(col, y + 4, 1, TL_LANE - 8);
        c.globalAlpha = 1;
        col = -1;
      };
      for (let k = firstReaching(maxEnd, v0); k < ids.length; k++) {
        const i = ids[k], st = cols.start[i];
        if (st > v1) break;
        const en = cols.end[i];
        if (en < v0) continue;
        const a = x(st), b = x(en), kind = t.kind[i];
        if (rank.has(i)) marks.push([i, a, y]);
        if (b - a < 1) {  // under a pixel: one column of the lane's colour per pixel
          const px = Math.floor(a);
          if (px !== col) { flush(); col = px; colOf = i; } else if (kind === 0 && t.kind[colOf] !== 0) colOf = i;
          continue;
        }
        flush();
        const graph = kind === 2, left = Math.max(a, TL_LEFT), right = Math.min(b, width);
        c.globalAlpha = t.replay[i] > 0 ? 0.45 : 1;
        c.fillStyle = kind === 0 ? TL_COLORS[t.name[i] % TL_COLORS.length] : TL_KIND_COLORS[kind];
        c.fillRect(left, graph ? y + TL_LANE - 9 : y + 4, right - left, graph ? 5 : TL_LANE - 8);
        c.globalAlpha = 1;
        if (cold.has(i) && right - left > 3) {  // a kernel's only launch: cold, no warm measurement
          c.save(); c.setLineDash([3, 2]); c.strokeStyle = fg; c.strokeRect(left + 0.5, y + 3.5, right - left - 1, TL_LANE - 7); c.restore();
        }
        if (right - left > 40 && !graph) {
          c.save(); c.beginPath(); c.rect(left, y, right - left - 2, TL_LANE); c.clip();
          c.fillStyle = t.replay[i] > 0 ? "#000" : "#fff"; c.fillText(t.names[t.name[i]], left + 3, y + TL_LANE / 2); c.restore();
        }
      }
      flush();
      c.fillStyle = fg; c.fillText(t.lanes[l], 4, y + TL_LANE / 2, TL_LEFT - 8);
    });
    // the slowest kernel launches, outlined and numbered over everything: the slowest first, a number that would overlap
    // one written before moves to its box's other side, else is left out (its box's tip says it, the list above zooms to it)
    c.strokeStyle = "#d00"; c.lineWidth = 2;
    /** each launch's rank (from 1), its outline, its number's box ([x, y, width, height]; null: left out) @type {[number, number[], number[]|null][]} */
    const outlined = [];
    for (const [i, a, y] of marks.sort((m, n) => /** @type {number} */ (rank.get(m[0])) - /** @type {number} */ (rank.get(n[0])))) {
      const bw = Math.max(4, (cols.end[i] - cols.start[i]) * scale), r = /** @type {number} */ (rank.get(i)) + 1;
      const outline = [a - (bw === 4 ? 2 : 0), y + 3, bw, TL_LANE - 6], lw = c.measureText(String(r)).width;
      c.strokeRect(outline[0], outline[1], outline[2], outline[3]);
      const label = [Math.max(a, TL_LEFT) + 2, outline[0] - lw - 1, outline[0] + bw + 1].map((lx) => [lx, y - 5, lw, 12])
        .find((b) => b[0] >= TL_LEFT && b[0] + b[2] <= width && outlined.every(([, , o]) => !o || o[1] + o[3] <= b[1] || b[1] + b[3] <= o[1]
          || o[0] + o[2] + NUM_GAP <= b[0] || b[0] + b[2] + NUM_GAP <= o[0])) ?? null;
      if (label) { c.fillStyle = "#d00"; c.fillText(String(r), label[0], y + 1); }
      outlined.push([r, outline, label]);
    }
    c.lineWidth = 1;
    const slowest1 = outlined.find(([r]) => r === 1);
    canvas.dataset.slowest = slowest1 ? JSON.stringify(slowest1[1]) : "";
    canvas.dataset.marks = JSON.stringify(outlined);
    canvas.dataset.view = JSON.stringify([v0, v1]);
    const whole = v0 <= 0 && v1 >= span;
    fit.classList.toggle("active", whole); toLaunches.classList.toggle("active", v0 === launched[0] && v1 === launched[1]);
    toOpening.classList.toggle("active", !toOpening.hidden && v0 === opening[0] && v1 === opening[1]);
    canvas.dataset.batch = batch;
    canvas.dataset.drawMs = (performance.now() - t0).toFixed(2);
    canvas.dataset.draws = String(Number(canvas.dataset.draws || 0) + 1);
    canvas.dataset.firstMs ||= (performance.now() - born).toFixed(1);  // built and first drawn
  }
  const redraw = () => { if (!frame) frame = requestAnimationFrame(draw); };
  new ResizeObserver(redraw).observe(box);

  /** The launch under a point (CSS px in the canvas): the lane's launch nearest to it within 3 px (a slowest one, drawn
   * on top, first; then a kernel), or -1.
   * @param {number} px @param {number} py */
  function hit(px, py) {
    const l = Math.floor((py - top) / TL_LANE);
    if (px < TL_LEFT || l < 0 || l >= t.lanes.length) return -1;
    const scale = (view.width - TL_LEFT) / (view.v1 - view.v0), at = view.at(px), slack = 3 / scale;
    const { ids, maxEnd } = cols.lanes[l];
    let best = -1, bestD = Infinity;
    for (let k = firstReaching(maxEnd, at - slack); k < ids.length; k++) {
      const i = ids[k];
      if (cols.start[i] > at + slack) break;
      const d = at < cols.start[i] ? cols.start[i] - at : at > cols.end[i] ? at - cols.end[i] : 0;
      if (d > slack) continue;
      const score = d - (rank.has(i) ? 4 * slack : 0) - (t.kind[i] === 0 ? slack / 2 : 0);
      if (score < bestD) { best = i; bestD = score; }
    }
    return best;
  }

  /** The TinyJit run under a point of the band over the lanes (within 2 px), or -1. @param {number} px @param {number} py */
  function jitHit(px, py) {
    if (!t.jit_runs.length || py < TL_AXIS || py >= TL_AXIS + TL_JIT || px < TL_LEFT) return -1;
    const scale = (view.width - TL_LEFT) / (view.v1 - view.v0), at = view.at(px), slack = 2 / scale;
    return t.jit_runs.findIndex(([, , st, en]) => st - slack <= at && at <= en + slack);
  }

  const moved = new Map(t.moved.map(([i, b]) => [i, b]));
  /** A launch's rates, as VIZ's timeline gives them: a kernel's GFLOP/s and GB/s by tinygrad's estimates, a copy's bytes.
   * @param {number} i */
  function rates(i) {
    const est = t.kernel[i] >= 0 ? msg.estimates[t.kernel[i]] : null, d = t.dur[i], b = moved.get(i);
    const perf = est && d ? `\n${fmtNum(est[0] / d / 1e3)} GFLOP/s, ${fmtNum(est[1] / d / 1e3)} GB/s (tinygrad's estimates)` : "";
    return perf + (b === undefined ? "" : `\n${fmtBytes(b)} moved${d ? `, ${fmtNum(b / d / 1e3)} GB/s` : ""}`);
  }

  /** @param {number} i */
  function describe(i) {
    const k = t.kernel[i], jit = t.jit[i] >= 0 ? ` · TinyJit ${t.jits[t.jit[i]]}: ${t.replay[i] > 0 ? `replay ${t.replay[i]}` : "the captured batch"}` : "";
    const timing = k >= 0 && msg.timings?.[k] ? `\nits time: ${msg.timings[k]}` : "";
    return `${tlName(i)} (${t.kinds[t.kind[i]]}) on ${t.lanes[t.lane[i]]}\nstart ${fmtTime(t.start[i])}`
      + ` · duration ${t.dur[i] === null ? "not timed" : fmtTime(t.dur[i])}${jit}${rank.has(i) ? ` · slowest #${(rank.get(i) ?? 0) + 1}` : ""}`
      + (cold.has(i) ? "\nits only launch in the capture: cold (the device's first run of it), no measurement of it warm" : "")
      + rates(i) + timing + (k >= 0 ? "\nclick: its codegen steps" : "");
  }

  /** Zoom to a launch, with some room around. @param {number} i */
  function zoomTo(i) {
    const d = Math.max(cols.end[i] - cols.start[i], span * 1e-6), mid = (cols.start[i] + cols.end[i]) / 2;
    view.set(mid - d * 10, mid + d * 10);
  }

  canvas.addEventListener("pointermove", (ev) => {
    const r = canvas.getBoundingClientRect(), px = ev.clientX - r.left, py = ev.clientY - r.top;
    if (view.dragging) { tip.hidden = true; return; }
    const i = hit(px, py), run = i < 0 ? jitHit(px, py) : -1, s = i < 0 && run < 0 ? spanHit(px, py) : -1;
    tip.hidden = i < 0 && run < 0 && s < 0;
    canvas.style.cursor = (i >= 0 && t.kernel[i] >= 0) || run >= 0 || (s >= 0 && lanes.step(s)) ? "pointer" : "default";
    if (i < 0 && run < 0 && s < 0) return;
    if (s >= 0) tip.textContent = lanes.describe(s, fmtTime);
    else if (run >= 0) {
      const [jit, replay, st, en, n] = t.jit_runs[run];
      tip.textContent = `TinyJit ${t.jits[jit]}: ${replay ? `replay ${replay} of the captured batch` : "the captured batch"}\n`
        + `${plural(n, "launch", "launches")} from ${fmtTime(st)} over ${fmtTime(en - st)}\nclick: zoom to it`;
    } else tip.textContent = describe(i);
    tip.dataset.index = String(i);
    Object.assign(tip.style, { left: `${Math.min(px + 12, view.width - 260)}px`, top: `${py + 14}px` });
  });
  canvas.addEventListener("pointerleave", () => { tip.hidden = true; });
  canvas.addEventListener("pointerup", (ev) => {
    if (!view.clicked) return;
    const r = canvas.getBoundingClientRect(), i = hit(ev.clientX - r.left, ev.clientY - r.top);
    if (i >= 0 && t.kernel[i] >= 0) openKernel(t.kernel[i]);
    const run = i < 0 ? jitHit(ev.clientX - r.left, ev.clientY - r.top) : -1;
    if (run >= 0) { const [, , st, en] = t.jit_runs[run], pad = (en - st) * 0.05 || 1; view.set(st - pad, en + pad); }
    const s = i < 0 && run < 0 ? spanHit(ev.clientX - r.left, ev.clientY - r.top) : -1;
    if (s >= 0 && lanes.step(s)) openStep(lanes.step(s));
  });
  /** The compiler span under a point, or -1. @param {number} px @param {number} py */
  function spanHit(px, py) {
    if (px < TL_LEFT || py < ctop || py >= top) return -1;
    const scale = (view.width - TL_LEFT) / (view.v1 - view.v0);
    return lanes.hit(view.at(px), py - ctop, 3 / scale);
  }
  fit.addEventListener("click", () => view.set(0, span));
  toLaunches.addEventListener("click", () => view.set(...launched));
  toOpening.addEventListener("click", () => view.set(...opening));
  redraw();
  return { el, fit: () => (view.v0 <= 0 && view.v1 >= span ? view.set(...opening) : view.set(0, span)) };
}
