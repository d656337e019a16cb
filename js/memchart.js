// The *memory* tab: the bytes the run's buffers held over time (a step chart on a canvas, after every allocation and
// free, as tinygrad's GlobalCounters counts them), the peak marked, and the buffers alive at the peak, biggest first,
// each named short and readable ("float × 69,696 #50": dtype × elements, never dtype[...] as a shape is written; n its
// place in the run's allocations; tinygrad's long id on hover), with the kernels that wrote or read it (a click opens
// one). It opens on the timeline's window (timeaxis.js's openingWindow: the launches a user came to see, not the
// whole run's compile), its head says which; *whole run* (or f) shows all of it, f again that window. Zoom and pan as
// the timeline's (timeaxis.js); hover says the bytes in use at that time and the buffers allocated then, biggest first.
import { h } from "./dom.js";
import { drawTimeTicks, openingWindow, timeView } from "./timeaxis.js";
import { fmtBytes, fmtCount, fmtSize, fmtTime, plural } from "./units.js";

/** @typedef {import("./messages.js").RunMsg} RunMsg */
/** @typedef {import("./runview.js").OpenKernel} OpenKernel */

const MEM_H = 220, MEM_LEFT = 80, MEM_TOP = 14, MEM_BOTTOM = 20, MEM_ROWS = 500, MEM_TIP = 12;

/** The memory tab of a run message: its element, and fit(), which switches the view between the timeline's window and
 * the whole run (the f key's work while the tab is shown).
 * @param {RunMsg} msg @param {OpenKernel} openKernel @returns {{el: HTMLElement, fit: () => void}} */
export function memoryTab(msg, openKernel) {
  const m = msg.memory;
  const devices = Object.entries(m.device_peaks).map(([d, b]) => `${d} ${fmtBytes(b)}`).join(", ");
  const head = h("div", { class: "tgviz-mem-head" }, [
    "peak ", h("b", { class: "tgviz-mem-peak", "data-bytes": String(m.peak) }, [fmtBytes(m.peak)]),
    m.peak_us === null ? "" : ` at ${fmtTime(m.peak_us)}`, ` with ${plural(m.at_peak.length, "buffer")} alive · ${plural(m.allocations, "allocation")}`
    + (devices ? ` · per device: ${devices}` : "") + (m.before ? ` · ${fmtBytes(m.before)} in use before the run (not counted)` : "")]);
  if (!m.t.length) return { fit: () => {}, el: h("div", { class: "tgviz-mem" }, [head, h("p", {}, ["no buffer was allocated or freed in the run"])]) };
  const canvas = h("canvas", { class: "tgviz-mem-canvas" });
  const tip = h("div", { class: "tgviz-mem-tip", hidden: "" });
  const box = h("div", { class: "tgviz-mem-box" }, [canvas, tip]);
  const end = Math.max(msg.timeline.duration, m.t[m.t.length - 1]) || 1, top = Math.max(m.peak, 1), b = m.buffers;
  const { opening, name, what } = openingWindow(msg.timeline, end);
  const fit = h("button", { class: "tgviz-mem-fit", title: "the whole run, compile time included (f)" }, ["whole run"]);
  const toOpening = h("button", { class: "tgviz-mem-opening", title: "the timeline's window, where the chart opens (f: the whole run)" }, [name ?? "launches"]);
  let frame = 0;
  const redraw = () => { if (!frame) frame = requestAnimationFrame(draw); };
  const view = timeView(canvas, MEM_LEFT, end, redraw);
  [view.v0, view.v1] = opening;
  if (msg.timeline.start.length) {
    const [a, z] = opening, inside = m.t.filter((us) => a <= us && us <= z).length;
    const peak = m.peak_us === null || (a <= m.peak_us && m.peak_us <= z) ? "" : `; the peak (${fmtTime(m.peak_us)}) is outside it`;
    head.append(h("div", { class: "tgviz-hint tgviz-mem-shown" }, [`opens on the timeline's window: ${what}, ${fmtTime(Math.max(0, a))} to `
      + `${fmtTime(z)} into the run, ${inside} of ${plural(m.t.length, "allocation and free", "allocations and frees")} in it${peak} · whole run (f): all of it`]));
  }
  /** The index of the last event at or before a time (-1: none). @param {number} us */
  const memAt = (us) => { let lo = 0, hi = m.t.length; while (lo < hi) { const mid = (lo + hi) >> 1; if (m.t[mid] <= us) lo = mid + 1; else hi = mid; } return lo - 1; };

  function draw() {
    frame = 0;
    const width = view.width = box.clientWidth, { v0, v1 } = view;
    if (!width) return;
    const dpr = window.devicePixelRatio || 1;
    canvas.width = Math.round(width * dpr); canvas.height = Math.round(MEM_H * dpr);
    Object.assign(canvas.style, { width: `${width}px`, height: `${MEM_H}px` });
    const c = /** @type {CanvasRenderingContext2D} */ (canvas.getContext("2d"));
    c.setTransform(dpr, 0, 0, dpr, 0, 0);
    const style = getComputedStyle(box), fg = style.color, grid = style.getPropertyValue("--tg-bg2") || "#f2f2f2";
    const ph = MEM_H - MEM_TOP - MEM_BOTTOM, x = view.x, y = (/** @type {number} */ v) => MEM_TOP + ph - v / top * ph;
    c.font = "11px system-ui, sans-serif"; c.textBaseline = "middle";
    canvas.dataset.ticks = JSON.stringify(drawTimeTicks(c, view, MEM_TOP, MEM_TOP + ph, MEM_H - MEM_BOTTOM / 2, fg, grid));
    c.fillStyle = fg; c.strokeStyle = fg;
    c.fillText(fmtSize(top), 4, MEM_TOP + 4);
    c.fillText("0 B", 4, MEM_TOP + ph);
    c.save(); c.beginPath(); c.rect(MEM_LEFT, 0, width - MEM_LEFT, MEM_H); c.clip();
    // the step chart: bytes in use after each event, held until the next; only the events in view are visited
    const first = Math.max(0, memAt(v0));
    let prev = first > 0 || m.t[0] <= v0 ? m.in_use[first] : 0;
    c.beginPath(); c.moveTo(x(v0), y(0)); c.lineTo(x(v0), y(prev));
    for (let i = m.t[first] <= v0 ? first + 1 : first; i < m.t.length && m.t[i] <= v1; i++) {
      const px = x(m.t[i]); c.lineTo(px, y(prev)); c.lineTo(px, y(prev = m.in_use[i]));
    }
    const right = Math.min(v1, end);
    c.lineTo(x(right), y(prev)); c.lineTo(x(right), y(0)); c.closePath();
    c.fillStyle = "rgba(78,121,167,0.35)"; c.fill(); c.strokeStyle = "#4e79a7"; c.stroke();
    if (m.peak_us !== null) {
      const px = x(m.peak_us);
      c.strokeStyle = "#d00"; c.setLineDash([4, 3]);
      c.beginPath(); c.moveTo(px, MEM_TOP); c.lineTo(px, MEM_TOP + ph); c.stroke(); c.setLineDash([]);
      c.fillStyle = "#d00"; c.beginPath(); c.arc(px, y(m.peak), 4, 0, 2 * Math.PI); c.fill();
      // the label beside the marker, on the side with room for it whole (never across the marker or past an edge)
      const label = `peak ${fmtSize(m.peak)} at ${fmtTime(m.peak_us)}`, w = c.measureText(label).width;
      const lx = px + 8 + w <= width - 4 || px - 8 - w < MEM_LEFT + 4 ? Math.max(MEM_LEFT + 4, Math.min(px + 8, width - 4 - w)) : px - 8 - w;
      c.fillText(label, lx, MEM_TOP + 8);
      canvas.dataset.peakX = String(px); canvas.dataset.peakLabel = JSON.stringify([lx, lx + w]);
    }
    if (hover !== null) { c.strokeStyle = fg; c.beginPath(); c.moveTo(x(hover) + 0.5, MEM_TOP); c.lineTo(x(hover) + 0.5, MEM_TOP + ph); c.stroke(); }
    c.restore();
    c.beginPath(); c.strokeStyle = fg; c.moveTo(MEM_LEFT, MEM_TOP); c.lineTo(MEM_LEFT, MEM_TOP + ph); c.lineTo(width, MEM_TOP + ph); c.stroke();
    canvas.dataset.view = JSON.stringify([v0, v1]);
    fit.classList.toggle("active", v0 <= 0 && v1 >= end); toOpening.classList.toggle("active", v0 === opening[0] && v1 === opening[1]);
  }
  new ResizeObserver(redraw).observe(box);

  /** @type {number|null} */
  let hover = null;
  const place = new Map(b.num.map((n, k) => [n, k]));
  /** A buffer's short name: its dtype and size, "float × 69,696 #50" (n: its place in the buffer table, the run's
   * allocations, from 1). @param {string} dtype @param {number} size @param {number|undefined} k */
  const memName = (dtype, size, k) => `${fmtCount(dtype, size)}${k === undefined ? "" : ` #${k + 1}`}`;
  /** A buffer's kernels for the tip: the first few. @param {number[]} ks */
  const memKernels = (ks) => (ks.length ? ` · ${ks.slice(0, 3).map((n) => msg.kernels[n][0]).join(", ")}${ks.length > 3 ? ` and ${ks.length - 3} more` : ""}` : "");
  /** What was in use at a time: the bytes and the run's buffers allocated then, biggest first. @param {number} us */
  function describe(us) {
    const i = memAt(us), inUse = i < 0 ? 0 : m.in_use[i];
    const alive = b.num.flatMap((_, k) => (b.alloc[k] <= us && (b.free[k] === null || us < (b.free[k] ?? 0)) ? [k] : []))
      .sort((p, q) => b.nbytes[q] - b.nbytes[p]);
    const lines = alive.slice(0, MEM_TIP).map((k) => `${memName(b.dtypes[b.dtype[k]], b.size[k], k)} on ${b.devices[b.device[k]]}`
      + ` ${fmtSize(b.nbytes[k])}${memKernels(b.kernels[k])}`);
    if (alive.length > MEM_TIP) lines.push(`and ${alive.length - MEM_TIP} more`);
    tip.dataset.t = String(us); tip.dataset.inUse = String(inUse); tip.dataset.alive = JSON.stringify(alive.map((k) => b.num[k]));
    return `at ${fmtTime(us)}: ${fmtBytes(inUse)} in use, ${plural(alive.length, "buffer")} allocated${alive.length ? ":\n" : ""}${lines.join("\n")}`;
  }
  canvas.addEventListener("pointermove", (ev) => {
    const r = canvas.getBoundingClientRect(), px = ev.clientX - r.left, py = ev.clientY - r.top;
    if (view.dragging || px < MEM_LEFT) { tip.hidden = true; hover = null; redraw(); return; }
    hover = view.at(px);
    tip.textContent = describe(hover);
    tip.hidden = false;
    const wide = tip.offsetWidth;  // beside the pointer, on the side with room
    Object.assign(tip.style, { left: `${px + 12 + wide < view.width ? px + 12 : Math.max(0, px - 12 - wide)}px`, top: `${py + 14}px` });
    redraw();
  });
  canvas.addEventListener("pointerleave", () => { tip.hidden = true; hover = null; redraw(); });
  fit.addEventListener("click", () => view.set(0, end));
  toOpening.addEventListener("click", () => view.set(...opening));

  const rows = m.at_peak.slice(0, MEM_ROWS).map((r) => h("tr", { "data-num": String(r.num) }, [
    h("td", { class: "tgviz-mem-name", title: `tinygrad's buffer id: ${r.num}` }, [memName(r.dtype, r.size, place.get(r.num))]),
    h("td", {}, [r.device]), h("td", { class: "num" }, [r.nbytes.toLocaleString("en-US")]),
    h("td", { class: "num" }, [fmtTime(r.alloc_us)]), h("td", { class: "num" }, [r.free_us === null ? "never" : fmtTime(r.free_us)]),
    h("td", {}, r.kernels.length ? r.kernels.map((k) => {
      const a = h("button", { class: "tgviz-link", "data-kernel": String(k), title: "open this kernel's steps" }, [msg.kernels[k][0]]);
      a.addEventListener("click", () => openKernel(k));
      return a;
    }) : [[...r.writers, ...r.readers].join(", ") || "–"])]));
  const table = h("table", { class: "tgviz-table tgviz-mem-table" }, [
    h("thead", {}, [h("tr", {}, ["buffer (dtype × elements #n; hover: its id)", "device", "bytes", "allocated", "freed", "kernels that wrote or read it"]
      .map((c, i) => h("th", i >= 2 && i <= 4 ? { class: "num" } : {}, [c])))]), h("tbody", {}, rows)]);
  const more = m.at_peak.length > MEM_ROWS ? [h("p", {}, [`the ${MEM_ROWS} biggest of ${m.at_peak.length} buffers shown`])] : [];
  const el = h("div", { class: "tgviz-mem" }, [head, h("div", { class: "tgviz-tl-tools tgviz-mem-tools" },
    [toOpening, fit, "wheel (in a notebook ctrl+wheel): zoom, drag: pan, hover: what was allocated then"]),
    box, h("div", { class: "tgviz-mem-list" }, ["alive at the peak, biggest first:"]), table, ...more]);
  return { el, fit: () => (view.v0 <= 0 && view.v1 >= end ? view.set(...opening) : view.set(0, end)) };
}
