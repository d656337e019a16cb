// The run's tabs, *timeline*, *memory* and *roofline*, in a sheet over the columns (as the kernel table's, which it
// closes: one sheet at a time), opened by the "run" control beside the kernel table. The data is tgviz/runview.py's run
// message: asked for when the sheet first opens (the widget's kernel builds it; the report holds it) and drawn by
// timeline.js, memchart.js and roofline.js. A kernel clicked in any tab opens its first step and closes the sheet.
import { h } from "./dom.js";
import { memoryTab } from "./memchart.js";
import { rooflineTab } from "./roofline.js";
import { timelineTab } from "./timeline.js";

/** @typedef {import("./ui.js").Ui} Ui */
/** @typedef {import("./protocol.js").StepKey} StepKey */
/** tgviz.runview.TimelineData: the launches as columns (lane, name, kind: indices; start, dur: µs; kernel: an index into
 * RunMsg.kernels or -1; jit, replay: -1 outside a TinyJit), jit_runs [jit, replay, start, end, launches], slowest.
 * @typedef {{lanes:string[], names:string[], kinds:string[], lane:number[], name:number[], kind:number[], start:number[],
 *   dur:(number|null)[], kernel:number[], jit:number[], replay:number[], jits:string[], jit_runs:number[][], moved:number[][], slowest:number[],
 *   duration:number, source:string, summary:string}} TimelineData */
/** @typedef {{num:number, device:string, dtype:string, size:number, nbytes:number, alloc_us:number, free_us:number|null,
 *   kernels:number[], writers:string[], readers:string[]}} BufferRow */
/** tgviz.runview.BufferTable: every buffer as columns (device, dtype: indices into devices, dtypes; writes, reads:
 * launches; kernels: indices into RunMsg.kernels) @typedef {{num:number[], devices:string[], dtypes:string[], device:number[],
 *   dtype:number[], size:number[], nbytes:number[], alloc:number[], free:(number|null)[], writes:number[][], reads:number[][],
 *   kernels:number[][]}} BufferTable */
/** tgviz.runview.MemoryData @typedef {{t:number[], in_use:number[], buf:number[], buffers:BufferTable, peak:number,
 *   peak_us:number|null, before:number, allocations:number, at_peak:BufferRow[], device_peaks:Record<string, number>,
 *   summary:string}} MemoryData */
/** @typedef {{kernel:number, device:string, flops:number, bytes:number, runs:number, time_us:number, intensity:number|null,
 *   gflops:number, gbs:number, bound:string|null}} PointRow */
/** @typedef {{gflops:number, benchmark:number, gbs:number, ridge:number, how:string, measured:string}} PeaksRow */
/** tgviz.runview.RooflineData @typedef {{points:PointRow[], peaks:Record<string, PeaksRow>, notes:string[], ran:number}} RooflineData */
/** tgviz.runview.RunMsg: kernels are [display name, the step it opens], estimates tinygrad's [FLOPs, bytes] of each (or null)
 * @typedef {{type:"run", kernels:string[][], estimates:(number[]|null)[], timeline:TimelineData, memory:MemoryData,
 *   roofline:RooflineData}} RunMsg */
/** Opens kernel i of RunMsg.kernels. @typedef {(i: number) => void} OpenKernel */

const RUN_TABS = /** @type {const} */ (["timeline", "memory", "roofline"]);

/** The sheet and its tabs; request() asks for the run message, open(key) opens a kernel's step.
 * @param {Ui} ui @param {() => void} request @param {(key: StepKey) => void} open */
export function runView(ui, request, open) {
  const close = h("button", { class: "tgviz-sheet-close", title: "close (Escape)" }, ["×"]);
  close.addEventListener("click", () => { ui.run.open = false; });
  const tabs = RUN_TABS.map((t) => h("button", { class: "tgviz-run-tab", "data-tab": t }, [t]));
  const panes = RUN_TABS.map((t) => h("div", { class: `tgviz-run-pane tgviz-run-${t}`, "data-tab": t }, ["reading the run…"]));
  const sheet = h("div", { class: "tgviz-sheet" }, [h("div", { class: "tgviz-sheet-head tgviz-run-head" }, [...tabs, close]), ...panes]);
  ui.run.replaceChildren(h("summary", { class: "tgviz-needs-kernel", title: "the run: every launch on a timeline, memory over time, the kernels' roofline" },
                           ["timeline · memory · roofline"]), sheet);
  /** @param {string} name */
  function show(name) {
    tabs.forEach((b) => b.classList.toggle("active", b.dataset.tab === name));
    panes.forEach((p) => { p.hidden = p.dataset.tab !== name; });
    ui.run.dataset.tab = name;
  }
  tabs.forEach((b) => b.addEventListener("click", () => show(/** @type {string} */ (b.dataset.tab))));
  show("timeline");
  let asked = false;
  ui.run.addEventListener("toggle", () => {
    if (!ui.run.open) return;
    Object.assign(sheet.style, { top: `${ui.main.offsetTop}px`, height: `${ui.main.offsetHeight}px` });
    if (!asked) { asked = true; request(); }
  });
  /** @type {RunMsg|null} */
  let msg = null;
  /** the timeline's fit: between the launches' span and the whole run */
  let fitTimeline = () => {};
  return {
    /** The f key: true where it switched the timeline's view (the sheet open on it). */
    fit() {
      if (!ui.run.open || ui.run.dataset.tab !== "timeline") return false;
      fitTimeline();
      return true;
    },
    /** Draw the run message's tabs. @param {RunMsg} m */
    show(m) {
      msg = m;
      /** @type {OpenKernel} */
      const openKernel = (i) => {
        const step = m.kernels[i]?.[1];
        if (!step) return;
        ui.run.open = false;
        open(step);
      };
      const timeline = timelineTab(m, openKernel);
      fitTimeline = timeline.fit;
      panes[0].replaceChildren(timeline.el);
      panes[1].replaceChildren(memoryTab(m, openKernel));
      panes[2].replaceChildren(rooflineTab(m, openKernel));
    },
    /** The run could not be read: say so in every tab. @param {string} message */
    failed(message) { if (!msg) panes.forEach((p) => { p.textContent = message; }); asked = false; },
  };
}
