// The run's tabs, *timeline*, *memory* and *roofline*, in a sheet over the columns (as the kernel table's, which it
// closes: one sheet at a time), opened by the "run" control beside the kernel table. The data is tgviz/views/run.py's run
// message: asked for when the sheet first opens (the widget's kernel builds it; the report holds it) and drawn by
// timeline.js, memchart.js and roofline.js. A kernel clicked in any tab opens its first step and closes the sheet.
import { h } from "./dom.js";
import { memoryTab } from "./memchart.js";
import { rooflineTab } from "./roofline.js";
import { timelineTab } from "./timeline.js";

/** @typedef {import("./ui.js").Ui} Ui */
/** @typedef {import("./messages.js").StepKey} StepKey */
/** @typedef {import("./messages.js").TimelineData} TimelineData */
/** @typedef {import("./messages.js").BufferRow} BufferRow */
/** @typedef {import("./messages.js").BufferTable} BufferTable */
/** @typedef {import("./messages.js").MemoryData} MemoryData */
/** @typedef {import("./messages.js").PointRow} PointRow */
/** @typedef {import("./messages.js").PeaksRow} PeaksRow */
/** @typedef {import("./messages.js").RooflineData} RooflineData */
/** @typedef {import("./messages.js").RunMsg} RunMsg */
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
    if (!asked) { asked = true; request(); }
  });
  /** @type {RunMsg|null} */
  let msg = null;
  /** each chart's fit (the timeline's, the memory chart's): between the window it opens on and the whole run */
  /** @type {Record<string, () => void>} */
  let fits = {};
  return {
    /** The f key: true where it switched a chart's view (the sheet open on the timeline or the memory chart). */
    fit() {
      const fit = ui.run.open ? fits[ui.run.dataset.tab ?? ""] : undefined;
      if (!fit) return false;
      fit();
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
      const timeline = timelineTab(m, openKernel, (step) => { ui.run.open = false; open(step); });
      const memory = memoryTab(m, openKernel);
      fits = { timeline: timeline.fit, memory: memory.fit };
      panes[0].replaceChildren(timeline.el);
      panes[1].replaceChildren(memory.el);
      panes[2].replaceChildren(rooflineTab(m, openKernel));
    },
    /** The run could not be read: say so in every tab. @param {string} message */
    failed(message) { if (!msg) panes.forEach((p) => { p.textContent = message; }); asked = false; },
  };
}
