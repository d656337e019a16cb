// The program map: the block's kernels as boxes and the buffers between them as arrows, left to right in run order (a
// small map top to bottom where that fits its canvas better), in a sheet over the graph and code columns, the step tree
// beside it (what a trace opens on: widget.js; a step chosen closes it). Its data is tgviz/views/programmap.py's message,
// asked for when the sheet first opens (the widget's kernel lays it out; the report holds it): a view per level (the
// lines of the user's code, a box each; every kernel), laid out by graphviz.
// A click on a box opens its panel beside the map (a double click on a kernel, its steps) (a kernel: its ops and lines, time, why it ends there, what it reads,
// and links to its steps, its code and its kernel-table row; a box of several: its kernels, each a link); on an arrow,
// the buffers it stands for and why each exists; a box picked, shift-click another: why they did not fuse (port/why.js).
import { h } from "./dom.js";
import { READABLE } from "./fullest.js";
import { panZoom } from "./panzoom.js";
import { why } from "./port/why.js";
import { fmtTime, notSettled, plural } from "./units.js";

/** @typedef {import("./ui.js").Ui} Ui */
/** @typedef {import("./messages.js").StepKey} StepKey */
/** @typedef {import("./messages.js").ProgramMapMsg} ProgramMapMsg */
/** @typedef {import("./messages.js").MapView} MapView */
/** @typedef {import("./messages.js").MapKernel} MapKernel */
/** @typedef {import("./messages.js").KernelRow} KernelRow */
/** @typedef {import("./messages.js").MapBuffer} MapBuffer */
/** @typedef {import("./messages.js").FusedMsg} FusedMsg */

const VIEW_NAMES = /** @type {Record<string, string>} */ ({ lines: "by line of your code", kernels: "every kernel" });

/** A link button. @param {string} text @param {() => void} fn @param {string} [title] */
function link(text, fn, title = "") {
  const b = h("button", { class: "tgviz-link", title }, [text]);
  b.addEventListener("click", fn);
  return b;
}

/** The sheet; request() asks for the map, open(key) opens a step (closing the sheet), openRow(row) the kernel table at a
 * row, rowOf(row) that row as it is now (re-timed after the run, its median is not the launches'), fuse(i) asks what if
 * buffer i's kernels had fused (null: the report, which cannot run anything).
 * @param {Ui} ui @param {() => void} request @param {(key: StepKey) => void} open @param {(row: number) => void} openRow
 * @param {(row: number) => KernelRow|undefined} rowOf @param {((buffer: number) => void)|null} fuse */
export function programMap(ui, request, open, openRow, rowOf, fuse) {
  const close = h("button", { class: "tgviz-sheet-close", title: "close (Escape)" }, ["×"]);
  close.addEventListener("click", () => { ui.program.open = false; });
  const summary = h("span", { class: "tgviz-map-summary" }, ["reading the program…"]);
  const views = h("span", { class: "tgviz-map-views" });
  const legend = h("span", { class: "tgviz-map-legend" });
  const stage = h("div", { class: "tgviz-map-stage" });
  const canvas = h("div", { class: "tgviz-map-canvas" }, [stage]);
  const panel = h("div", { class: "tgviz-map-panel" }, [h("p", { class: "tgviz-map-hint" }, [
    "Click a kernel for why it ends there and what it reads (double-click: its steps); click an arrow for why its buffers " +
    "exist; pick a kernel, then shift-click another: why they did not fuse."])]);
  const body = h("div", { class: "tgviz-map-body" }, [canvas, panel]);
  // under the map (programmap.css), the panel takes only its hint's room until a click first fills it: then its own,
  // kept from then on (a click that fills it again moves nothing), the kernel picked kept in view of the smaller canvas
  panel.classList.add("tgviz-map-panel-empty");
  new MutationObserver((_, seen) => {
    seen.disconnect();
    panel.classList.remove("tgviz-map-panel-empty");
    const box = pickedBox();
    if (box) requestAnimationFrame(() => view.reveal([box]));
  }).observe(panel, { childList: true });
  const sheet = h("div", { class: "tgviz-sheet tgviz-map-sheet" }, [
    h("div", { class: "tgviz-sheet-head tgviz-map-head" }, [summary, views, legend, close]), body]);
  ui.program.replaceChildren(h("summary", { class: "tgviz-needs-kernel", title: "the program: its kernels and the buffers between them, and why each exists" },
                               ["program map"]), sheet);
  const view = panZoom(/** @type {Ui} */ (/** @type {unknown} */ ({ canvas, stage })));
  const mini = canvas.querySelector(".tgviz-minimap");  // its own overview: the step graph's is the only .tgviz-minimap
  if (mini) mini.className = "tgviz-map-minimap";
  /** Over the graph and code columns, from their top: the step tree stays beside it (a click on a kernel there opens its
   * steps). */
  const place = () => {
    const left = ui.centre.getBoundingClientRect().left - ui.root.getBoundingClientRect().left;
    Object.assign(sheet.style, { top: `${ui.main.offsetTop}px`, height: `${ui.main.offsetHeight}px`, left: `${Math.max(0, left - 4)}px` });
  };
  new ResizeObserver(() => { if (ui.program.open) place(); }).observe(ui.centre);
  let asked = false;
  ui.program.addEventListener("toggle", () => {
    if (!ui.program.open) return;
    place();
    if (!asked) { asked = true; request(); }
  });
  /** @type {ProgramMapMsg|null} */
  let msg = null;
  /** @type {MapView|null} */
  let shown = null;
  let topDown = false;  // shown top to bottom (its svg_down)
  /** @type {number|null} the kernel picked (shift-click another: why they did not fuse) */
  let picked = null;
  // the canvas resized (a notebook's column widened, the widget maximised, the sheet opened again): the map opens again
  // for its new size, unless the user has zoomed or panned it since; hidden (0x0), it waits for its size
  let sized = "";
  /** the view f made (scale, tx, ty), while the user has not moved it since: the map stays whole as its canvas resizes
   * (a kernel clicked fills the panel under it; it opened again on its start, undoing f) @type {number[]|null} */
  let fitted = null;
  const viewed = () => { const k = view.keep(); return [k.scale, k.tx, k.ty]; };
  new ResizeObserver(() => {
    const now = `${canvas.clientWidth}x${canvas.clientHeight}`;
    if (now === sized) return;
    sized = now;
    if (shown && fitted && viewed().every((v, i) => v === fitted?.[i])) { view.fitPicture(); fitted = viewed(); return; }
    fitted = null;
    if (!shown || view.moved()) return;
    if (downward(shown) !== topDown) draw(shown); else opening();
  }).observe(canvas);

  /** The view opens whole where it fits readable, else readable on the program's start (its first boxes), no box cut
   * at the canvas's sides where the map allows (panzoom.js's begin), the kernel picked in view. Nothing while the canvas is hidden (0x0): the resize that shows it opens it. */
  function opening() {
    if (!canvas.clientWidth || !canvas.clientHeight) return;
    const boxes = [...stage.querySelectorAll("g.node[data-node]")];
    const at = (/** @type {Element} */ b) => (topDown ? b.getBoundingClientRect().top : b.getBoundingClientRect().left);
    const start = Math.min(...boxes.map(at));
    view.begin(boxes.filter((b) => at(b) <= start + 1));
    const box = pickedBox();
    if (box) view.reveal([box]);
  }

  /** The box of the kernel picked, where one is. */
  function pickedBox() {
    return picked === null ? null : stage.querySelector(`g.node[data-node="${boxOf(picked)}"]`);
  }

  /** Whether to show v top to bottom in the canvas it has: where its left-to-right picture does not fit whole and
   * readable, and the top-to-bottom one shows more of the map readable (the share of its area the canvas holds at
   * READABLE). A notebook's column gives the map a canvas taller than wide: a few kernels left to right are a strip
   * three times as wide, readable only on its start, where top to bottom the same boxes are a column that fits; a
   * canvas wider than tall (the report, the panel under the map) shows more of a long chain as a strip across.
   * A big map (no svg_down) stays left to right, read from its start. @param {MapView} v */
  function downward(v) {
    return !!v.svg_down && whole(v.svg) < READABLE && shown_at_readable(v.svg_down) > shown_at_readable(v.svg);
  }

  /** The share of an SVG's area the canvas shows at READABLE. @param {string} svg */
  function shown_at_readable(svg) {
    const m = /width="([\d.]+)" height="([\d.]+)"/.exec(svg);
    if (!m) return 0;
    const x = canvas.clientWidth / (Number(m[1]) * READABLE), y = canvas.clientHeight / (Number(m[2]) * READABLE);
    return Math.min(1, x) * Math.min(1, y);
  }

  /** The scale an SVG's text fits whole in the canvas at. @param {string} svg */
  function whole(svg) {
    const m = /width="([\d.]+)" height="([\d.]+)"/.exec(svg);
    return m ? Math.min(canvas.clientWidth / Number(m[1]), canvas.clientHeight / Number(m[2])) : 0;
  }

  /** In a narrow sheet (programmap.css) the panel goes under the map, which gets the sheet's width; beside it where the
   * map's top-to-bottom picture fits the tall canvas there whole and readable (a small map). @param {MapView} v */
  function arrange(v) {
    body.classList.add("tgviz-map-side");
    body.classList.toggle("tgviz-map-side", !!v.svg_down && whole(v.svg_down) >= READABLE);
  }

  /** @param {MapView} v */
  function draw(v) {
    shown = v;
    arrange(v);
    topDown = downward(v);
    stage.innerHTML = topDown ? v.svg_down : v.svg;  // SVG built by tgviz.draw.flow: every text is escaped there
    for (const b of views.querySelectorAll("button")) b.classList.toggle("active", b.dataset.view === v.name);
    mark();
    requestAnimationFrame(opening);
  }

  /** The boxes of the picked kernel (and of a second one) marked. @param {number|null} [other] */
  function mark(other = null) {
    for (const n of stage.querySelectorAll("g.node.hl, g.node.hl-in")) n.classList.remove("hl", "hl-in");
    if (!msg || !shown) return;
    for (const [k, cls] of /** @type {[number|null, string][]} */ ([[picked, "hl"], [other, "hl-in"]])) {
      if (k === null) continue;
      const box = boxOf(k);
      stage.querySelector(`g.node[data-node="${box}"]`)?.classList.add(cls);
    }
  }

  /** The box kernel k is drawn in, in the view shown. @param {number} k */
  function boxOf(k) {
    for (const [key, ks] of Object.entries(shown?.boxes ?? {})) if (ks.includes(k)) return key;
    return "";
  }

  /** A buffer's lines: its label and reason, the detail, the user's line, tinygrad's words and line.
   * @param {MapBuffer} b */
  function bufferEl(b) {
    const m = /** @type {ProgramMapMsg} */ (msg);
    const ends = h("div", { class: "tgviz-map-ends" }, [
      b.writer === null ? "from before the block" : kernelLink(b.writer), " → ",
      ...(b.readers.length ? b.readers.flatMap((r, i) => (i ? [", ", kernelLink(r)] : [kernelLink(r)])) : ["after the block"])]);
    return h("div", { class: "tgviz-map-buffer", "data-buffer": String(b.index) }, [
      h("div", {}, [h("span", { class: `tgviz-reason r-${b.reason}`, style: `background:${m.colours[b.reason] ?? "#888"}` }, [b.reason]), " ",
                    h("b", {}, [b.label])]),
      ends, h("div", { class: "tgviz-map-detail" }, [b.detail]),
      ...(b.where ? [h("div", { class: "tgviz-map-where" }, [`your line: ${b.where}`, b.source ? ` — ${b.source}` : ""])] : []),
      ...(b.tinygrad ? [h("div", { class: "tgviz-map-tinygrad" }, [`tinygrad: ${b.tinygrad}`, b.rule ? ` (${b.rule})` : ""])] : []),
      ...(b.lift ? [fuseEl(b)] : [])]);
  }

  /** "What if they fused?": run the schedule again with the buffer's condition lifted (a notebook's kernel does it; the
   * report says how). @param {MapBuffer} b */
  function fuseEl(b) {
    const out = h("div", { class: "tgviz-map-fuse", "data-buffer": String(b.index) });
    if (!fuse) {
      out.append(h("span", { class: "tgviz-map-hint" }, [`what if they fused? in Python: trace.fuse(trace.program().buffers[${b.index}]) (lifts ${b.lift})`]));
      return out;
    }
    const go = link("what if they fused?", () => { out.replaceChildren(`running the schedule again, as it was and with ${b.lift} lifted…`); fuse(b.index); },
                    `run this schedule again twice on the same random inputs, as it was and with ${b.lift} lifted, and compare`);
    out.append(go);
    return out;
  }

  /** A Fusion's answer, in the panel where it was asked. @param {FusedMsg} f */
  function fused(f) {
    const at = panel.querySelector(`.tgviz-map-fuse[data-buffer="${f.buffer}"]`);
    if (!at) return;
    if (f.error && !f.sides.length) { at.replaceChildren(h("div", { class: "tgviz-map-fused error" }, [f.summary])); return; }
    const fmt = (/** @type {number|null} */ us) => (us === null ? "not timed" : fmtTime(us));
    const sides = f.sides.map((s) => h("div", { class: "tgviz-map-fused-side" }, [
      h("b", {}, [s.label]), `: ${plural(s.kernels.length, "kernel")}, ${plural(s.buffers, "buffer")} between them, ${fmt(s.time_us)}, peak ${s.peak.toLocaleString("en-US")} B`,
      h("ol", {}, s.kernels.map((k, i) => h("li", {}, [`${k} ${s.times_us[i] === null ? "" : `(${fmt(s.times_us[i])})`}`])))]));
    at.replaceChildren(h("div", { class: "tgviz-map-fused" }, [
      h("div", {}, [f.gone === null ? "not compared (see below) with " : f.gone ? "the buffer is gone with " : "the buffer is still made with ",
        h("b", {}, [f.lift]), ` lifted (${f.lifted})`]),
      h("div", { class: "tgviz-map-detail" }, [f.summary]), h("div", { class: "tgviz-map-fused-sides" }, sides)]));
  }

  /** A kernel's name as a link to its panel. @param {number} k */
  function kernelLink(k) {
    const m = /** @type {ProgramMapMsg} */ (msg);
    return link(m.kernels[k].name, () => kernelPanel(k), "its panel");
  }

  /** The links that lead on from a kernel: its steps, its code, its row of the kernel table. @param {MapKernel} k */
  function leads(k) {
    const out = [];
    if (k.step) out.push(link("steps", () => { ui.program.open = false; open(/** @type {StepKey} */ (k.step)); }, "its rewrite steps, from its AST"));
    if (k.code_step) out.push(link("code", () => { ui.program.open = false; open(/** @type {StepKey} */ (k.code_step)); }, "its generated code, beside the graph the renderer consumed"));
    if (k.row !== null) out.push(link("kernel table", () => openRow(/** @type {number} */ (k.row)), "its row of the kernel table"));
    return h("div", { class: "tgviz-map-leads" }, out.flatMap((e, i) => (i ? [" · ", e] : [e])));
  }

  /** @param {number} i */
  function kernelPanel(i) {
    const m = /** @type {ProgramMapMsg} */ (msg), k = m.kernels[i];
    picked = i;
    mark();
    const box = stage.querySelector(`g.node[data-node="${boxOf(i)}"]`);
    if (box) view.reveal([box]);  // (a link in the panel can lead anywhere on the map)
    const r = k.row === null ? undefined : rowOf(k.row);  // re-timed after the run (the kernel table's median): said beside
    const again = r?.timed === "re-timed" && r.median_us !== null
      ? `; re-timed after it, warm: ${fmtTime(r.median_us)}, median of ${plural(r.timed_runs, "run")}${notSettled(r.settled)}` : "";
    const time = k.time_us === null ? "not timed" : `${fmtTime(k.time_us)} (median of ${plural(k.runs, "launch", "launches")} in the run${again})`;
    panel.replaceChildren(
      h("h4", {}, [k.name]), leads(k),
      h("div", {}, [`${k.kind === "copy" ? "copy" : "kernel"} #${k.index + 1} of ${m.kernels.length}, schedule ${k.schedule + 1} · ${time}`,
                    k.limit ? ` · limit: ${k.limit}` : ""]),
      ...(k.ops.length ? [h("div", {}, [`Tensor ops: ${k.ops.join(", ")}`])] : []),
      ...k.lines.map((ln) => h("div", { class: "tgviz-map-where" }, [ln])),
      h("h5", {}, ["ends here because it writes"]), ...k.writes.map((b) => bufferEl(m.buffers[b])),
      h("h5", {}, ["reads"]), ...(k.reads.length ? k.reads.map((b) => bufferEl(m.buffers[b])) : [h("div", {}, ["nothing"])]),
      h("p", { class: "tgviz-map-hint" }, ["shift-click another kernel: why these two did not fuse"]));
  }

  /** A box of several kernels: each a link to its steps and to its panel. @param {string} key */
  function groupPanel(key) {
    const m = /** @type {ProgramMapMsg} */ (msg), ks = shown?.boxes[key] ?? [];
    picked = null;
    mark();
    panel.replaceChildren(h("h4", {}, [plural(ks.length, "kernel")]),
      h("p", { class: "tgviz-map-hint" }, ["each: its steps, or its panel (why it ends there)"]),
      ...ks.map((i) => {
        const k = m.kernels[i];
        return h("div", { class: "tgviz-map-member" }, [
          k.step ? link(k.name, () => { ui.program.open = false; open(/** @type {StepKey} */ (k.step)); }, "its rewrite steps") : k.name,
          " ", link("why", () => kernelPanel(i), "its panel: why it ends there, what it reads"),
          ` ${k.reasons.join(", ")}`]);
      }));
  }

  /** @param {number} a @param {number} b */
  function whyPanel(a, b) {
    const m = /** @type {ProgramMapMsg} */ (msg), found = why(m.kernels, m.buffers, a, b);
    const [x, y] = a <= b ? [a, b] : [b, a];
    mark(b);
    panel.replaceChildren(h("h4", {}, [`why didn't ${m.kernels[x].name} and ${m.kernels[y].name} fuse?`]),
      ...(found.length ? [h("p", {}, [found.length === 1 ? "the buffer between them:" : "the buffers between them, along the shortest chain:"]),
                          ...found.map((i) => bufferEl(m.buffers[i]))]
        : [h("p", {}, ["no data flows between them: they compute separate results (tinygrad makes a kernel per buffer it stores)" +
                       (m.kernels[x].schedule !== m.kernels[y].schedule ? ", and they were scheduled apart, by separate realizes" : "")])]));
  }

  /** @param {number} key */
  function arrowPanel(key) {
    const m = /** @type {ProgramMapMsg} */ (msg), bufs = shown?.arrows[key] ?? [];
    panel.replaceChildren(h("h4", {}, [bufs.length === 1 ? "a buffer" : `${bufs.length} buffers`]), ...bufs.map((i) => bufferEl(m.buffers[i])));
  }

  // a click picks a box or an arrow; a drag pans (the canvas captures the pointer: what is under it is read on the way down)
  /** @type {Element|null|undefined} */
  let down;
  canvas.addEventListener("pointerdown", (ev) => {
    const at = /** @type {Element} */ (ev.target);
    down = at.closest(".tgviz-map-minimap") ? undefined : at.closest("g.node[data-node], g.arrow[data-key]");
  }, { capture: true });
  canvas.addEventListener("pointermove", (ev) => { if (ev.buttons && (Math.abs(ev.movementX) + Math.abs(ev.movementY)) > 1) down = undefined; });
  canvas.addEventListener("pointerup", (ev) => {
    const at = down;
    down = undefined;
    if (!at || !msg || !shown) return;
    if (at.matches("g.arrow")) return arrowPanel(Number(at.getAttribute("data-key")));
    const ks = shown.boxes[at.getAttribute("data-node") ?? ""];
    if (!ks) return;  // a stub: before or after the block
    if (ks.length === 1 && ev.shiftKey && picked !== null && picked !== ks[0]) return whyPanel(picked, ks[0]);
    if (ks.length === 1) kernelPanel(ks[0]); else groupPanel(/** @type {string} */ (at.getAttribute("data-node")));
  });

  canvas.addEventListener("dblclick", (ev) => {  // a kernel's box, double-clicked: its steps at once
    const key = /** @type {Element} */ (ev.target).closest("g.node[data-node]")?.getAttribute("data-node") ?? "";
    const ks = shown?.boxes[key], k = ks?.length === 1 && msg ? msg.kernels[ks[0]] : null;
    if (k?.step) { ui.program.open = false; open(k.step); }
  });

  return {
    /** Draw the map message. @param {ProgramMapMsg} m */
    show(m) {
      msg = m;
      summary.textContent = m.summary + (m.notes.length ? ` (${m.notes.join("; ")})` : "");
      views.replaceChildren(...m.views.map((v) => {
        const b = h("button", { class: "tgviz-run-tab", "data-view": v.name }, [VIEW_NAMES[v.name] ?? v.name]);
        b.addEventListener("click", () => draw(v));
        return b;
      }));
      legend.replaceChildren(...Object.entries(m.counts).map(([r, n]) => h("span", { class: "tgviz-map-count", title: `kernels whose first buffer written is there for "${r}"` }, [
        h("i", { style: `background:${m.colours[r] ?? "#888"}` }), `${r} ${n}`])));
      // sent again (a re-timing): the view that was shown stays
      if (m.views.length) draw(m.views.find((v) => v.name === shown?.name) ?? m.views[0]);
      else stage.replaceChildren(h("p", {}, ["no kernel ran in this block"]));
    },
    fused,
    /** The map could not be made: say so. @param {string} message */
    failed(message) { if (!msg) { summary.textContent = message; asked = false; } },
    /** Open the map (the trace's opening). */
    openSheet() { ui.program.open = true; },
    /** The f key: true where it fitted the map (its sheet open), whole in its canvas (its frames' names too). */
    fit() {
      if (!ui.program.open) return false;
      view.fitPicture();
      fitted = viewed();
      return true;
    },
  };
}
