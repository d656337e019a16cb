// The *memory* tab: the bytes the run's buffers held over time (a step chart on a canvas, after every allocation and
// free, as tinygrad's GlobalCounters counts them), the peak marked, and the buffers alive at the peak, biggest first,
// with size and dtype, each with the kernels that wrote or read it (a click opens one).
import { h } from "./dom.js";
import { fmtBytes, fmtTime } from "./units.js";

/** @typedef {import("./runview.js").RunMsg} RunMsg */
/** @typedef {import("./runview.js").OpenKernel} OpenKernel */

const MEM_H = 220, MEM_LEFT = 80, MEM_TOP = 14, MEM_BOTTOM = 20, MEM_ROWS = 500;

/** The memory tab of a run message. @param {RunMsg} msg @param {OpenKernel} openKernel @returns {HTMLElement} */
export function memoryTab(msg, openKernel) {
  const m = msg.memory;
  const devices = Object.entries(m.device_peaks).map(([d, b]) => `${d} ${fmtBytes(b)}`).join(", ");
  const head = h("div", { class: "tgviz-mem-head" }, [
    "peak ", h("b", { class: "tgviz-mem-peak", "data-bytes": String(m.peak) }, [fmtBytes(m.peak)]),
    m.peak_us === null ? "" : ` at ${fmtTime(m.peak_us)}`, ` with ${m.at_peak.length} buffers alive · ${m.allocations} allocations`
    + (devices ? ` · per device: ${devices}` : "") + (m.before ? ` · ${fmtBytes(m.before)} in use before the run (not counted)` : "")]);
  if (!m.t.length) return h("div", { class: "tgviz-mem" }, [head, h("p", {}, ["no buffer was allocated or freed in the run"])]);
  const canvas = h("canvas", { class: "tgviz-mem-canvas" });
  const box = h("div", { class: "tgviz-mem-box" }, [canvas]);
  const end = Math.max(msg.timeline.duration, m.t[m.t.length - 1]) || 1, top = Math.max(m.peak, 1);

  function draw() {
    const width = box.clientWidth;
    if (!width) return;
    const dpr = window.devicePixelRatio || 1;
    canvas.width = Math.round(width * dpr); canvas.height = Math.round(MEM_H * dpr);
    Object.assign(canvas.style, { width: `${width}px`, height: `${MEM_H}px` });
    const c = /** @type {CanvasRenderingContext2D} */ (canvas.getContext("2d"));
    c.setTransform(dpr, 0, 0, dpr, 0, 0);
    const fg = getComputedStyle(box).color, w = width - MEM_LEFT - 8, ph = MEM_H - MEM_TOP - MEM_BOTTOM;
    const x = (/** @type {number} */ us) => MEM_LEFT + us / end * w, y = (/** @type {number} */ b) => MEM_TOP + ph - b / top * ph;
    c.font = "11px system-ui, sans-serif"; c.fillStyle = fg; c.strokeStyle = fg;
    c.fillText(fmtBytes(top).split(" (")[0], 4, MEM_TOP + 4);
    c.fillText("0 B", 4, MEM_TOP + ph);
    c.fillText(fmtTime(end), width - 70, MEM_H - 4);
    c.fillText("0", MEM_LEFT, MEM_H - 4);
    c.beginPath(); c.moveTo(MEM_LEFT, MEM_TOP); c.lineTo(MEM_LEFT, MEM_TOP + ph); c.lineTo(MEM_LEFT + w, MEM_TOP + ph); c.stroke();
    // the step chart: bytes in use after each event, held until the next
    c.beginPath(); c.moveTo(x(0), y(0));
    let prev = 0;
    for (let i = 0; i < m.t.length; i++) { const px = x(m.t[i]); c.lineTo(px, y(prev)); c.lineTo(px, y(prev = m.in_use[i])); }
    c.lineTo(x(end), y(prev)); c.lineTo(x(end), y(0)); c.closePath();
    c.fillStyle = "rgba(78,121,167,0.35)"; c.fill(); c.strokeStyle = "#4e79a7"; c.stroke();
    if (m.peak_us !== null) {
      const px = x(m.peak_us);
      c.strokeStyle = "#d00"; c.setLineDash([4, 3]);
      c.beginPath(); c.moveTo(px, MEM_TOP); c.lineTo(px, MEM_TOP + ph); c.stroke(); c.setLineDash([]);
      c.fillStyle = "#d00"; c.beginPath(); c.arc(px, y(m.peak), 4, 0, 2 * Math.PI); c.fill();
      const label = `peak ${fmtBytes(m.peak).split(" (")[0]} at ${fmtTime(m.peak_us)}`;
      c.fillText(label, Math.min(px + 6, width - c.measureText(label).width - 4), MEM_TOP + 8);
    }
  }
  new ResizeObserver(draw).observe(box);

  const rows = m.at_peak.slice(0, MEM_ROWS).map((b) => h("tr", { "data-num": String(b.num) }, [
    h("td", { class: "num" }, [String(b.num)]), h("td", {}, [b.device]), h("td", {}, [b.dtype]),
    h("td", { class: "num" }, [b.size.toLocaleString("en-US")]), h("td", { class: "num" }, [b.nbytes.toLocaleString("en-US")]),
    h("td", { class: "num" }, [fmtTime(b.alloc_us)]), h("td", { class: "num" }, [b.free_us === null ? "never" : fmtTime(b.free_us)]),
    h("td", {}, b.kernels.length ? b.kernels.map((k) => {
      const a = h("button", { class: "tgviz-link", "data-kernel": String(k), title: "open this kernel's steps" }, [msg.kernels[k][0]]);
      a.addEventListener("click", () => openKernel(k));
      return a;
    }) : [[...b.writers, ...b.readers].join(", ") || "–"])]));
  const table = h("table", { class: "tgviz-table tgviz-mem-table" }, [
    h("thead", {}, [h("tr", {}, ["buffer", "device", "dtype", "size", "bytes", "allocated", "freed", "kernels that wrote or read it"]
      .map((c, i) => h("th", i === 0 || (i >= 3 && i <= 6) ? { class: "num" } : {}, [c])))]), h("tbody", {}, rows)]);
  const more = m.at_peak.length > MEM_ROWS ? [h("p", {}, [`the ${MEM_ROWS} biggest of ${m.at_peak.length} buffers shown`])] : [];
  return h("div", { class: "tgviz-mem" }, [head, box, h("div", { class: "tgviz-mem-list" }, ["alive at the peak, biggest first:"]), table, ...more]);
}
