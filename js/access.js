// The code column's access tab: what each thread of a kernel reads and writes, drawn on its buffers (accessgrid.js),
// from the kernel's AccessMsg (tgviz/views/access.py; the report holds it per kernel). Two ways to look:
//   per output element (the View Base AST): hover or click an element of the buffer the kernel stores, and the elements
//     of every buffer it reads light up, over every reduce iteration (a conv's receptive field: stride, dilation, the
//     padding's masked-off reads, the group's channels);
//   per thread (the final program): choose the thread ids and loop values, and what that thread reads and writes
//     lights up, its neighbours along the fastest thread id in other colours (coalescing and reuse at a glance); a
//     click on an element the kernel writes picks the thread that writes it.
// Under each buffer its counts: elements read and written, reads per element read, reads a mask turned off; each cell is
// shaded by how often the kernel reads it. The list of accesses (pattern, tinygrad's index and mask) picks one to
// light alone; a LOAD or STORE clicked in the graph (or a code line's number) opens the tab on its access.
// Every hover is evaluated here (port/access.js), from tinygrad's index UOps.
import { bufferGrid } from "./accessgrid.js";
import { h, scrollWithin } from "./dom.js";
import { bufferCounts, readsOf, threadOf, writtenBy } from "./port/access.js";
import { plural } from "./units.js";

/** @typedef {import("./messages.js").AccessMsg} AccessMsg */
/** @typedef {import("./messages.js").AccessStage} AccessStage */
/** @typedef {import("./messages.js").AccessEntry} AccessEntry */
/** @typedef {import("./port/access.js").Touched} Touched */

const THREADS = ["#d32f2f", "#388e3c", "#1976d2", "#8e24aa"];  // a thread and its neighbours
const OUT = "#e65100", READ = "#1976d2", SHARED = "#212121", UNTOUCHED = "#ececec", WRITTEN = "#f8d9c4";

/** A CSS colour as the canvas's 0xAABBGGRR. @param {string} hex */
const rgba = (hex) => (0xff << 24 | parseInt(hex.slice(5, 7), 16) << 16 | parseInt(hex.slice(3, 5), 16) << 8 | parseInt(hex.slice(1, 3), 16)) >>> 0;
/** The shade of an element read n times of at most max: light to mid grey. @param {number} n @param {number} max */
const shade = (n, max) => { const v = Math.round(222 - 90 * (max > 1 ? (n - 1) / (max - 1) : 0)); return (0xff << 24 | v << 16 | v << 8 | v) >>> 0; };
const thousands = (/** @type {number|null} */ n) => (n === null ? "?" : n.toLocaleString("en-US"));

/** The tab. @param {HTMLElement} pane @param {{pick: (keys: string[]) => void}} links what a clicked access marks elsewhere */
export function accessTab(pane, links) {
  /** @type {AccessMsg|null} */
  let msg = null;
  /** @type {"ast"|"program"} */
  let stage = "ast";
  /** @type {number|null} the access lit alone (its number at the stage) */
  let focus = null;
  /** @type {Map<number, number>} thread ids and loop values chosen (by variable number) */
  let ids = new Map();
  /** @type {number} the output element pinned (-1: none) */
  let pinned = -1;
  /** @type {Map<number, ReturnType<typeof bufferGrid>>} */
  let grids = new Map();
  /** @type {Map<string, Map<number, any>>} counts per stage */
  let counts = new Map();
  /** @type {Map<number, Int32Array>} per stored buffer, the store's point writing each element */
  let writers = new Map();
  const controls = h("div", { class: "tgviz-access-controls" }), status = h("div", { class: "tgviz-access-status", role: "status" });
  const list = h("div", { class: "tgviz-access-list" }), body = h("div", { class: "tgviz-access-buffers" });

  const st = () => /** @type {AccessStage} */ (msg?.stages.find((s) => s.stage === stage));
  const stored = () => new Set(st()?.accesses.filter((a) => a.kind === "store").map((a) => a.slot));

  /** Light elements: per buffer, colours by element; then paint. @param {Map<number, Map<number, string>>} lit */
  function paint(lit) {
    for (const [slot, grid] of grids) {
      const mine = lit.get(slot) ?? new Map();
      grid.paint(baseOf(slot), new Map([...mine].map(([f, col]) => [f, rgba(col)])));
      grid.show([...mine.keys()]);
    }
  }
  /** @type {Map<string, Uint32Array>} per stage and buffer, each element's colour unlit: shaded by its reads */
  let bases = new Map();
  /** @param {number} slot */
  function baseOf(slot) {
    const key = `${stage} ${slot}`;
    let base = bases.get(key);
    if (!base) {
      const c = countsOf().get(slot), per = c?.per, numel = msg?.buffers.find((b) => b.slot === slot)?.numel ?? 0;
      base = new Uint32Array(numel).fill(rgba(UNTOUCHED));
      if (c?.wrote) for (let f = 0; f < numel; f++) if (c.wrote[f]) base[f] = rgba(WRITTEN);
      if (per) {
        let max = 0;
        for (const n of per) max = Math.max(max, n);
        for (let f = 0; f < numel; f++) if (per[f] > 0) base[f] = shade(per[f], max);
      }
      bases.set(key, base);
    }
    return base;
  }
  const countsOf = () => {
    if (!counts.has(stage) && msg) counts.set(stage, bufferCounts(msg, stage));
    return /** @type {Map<number, any>} */ (counts.get(stage));
  };

  /** Per output element: light what element f of buffer slot reads (f -1: nothing). @param {number} slot @param {number} f */
  function element(slot, f) {
    const s = st().accesses.find((a) => a.kind === "store" && a.slot === slot);
    if (!msg || !s || f < 0) { paint(new Map()); status.textContent = "hover an element of the output to see what it reads; click to keep it"; return; }
    const numel = msg.buffers.find((b) => b.slot === slot)?.numel ?? 0;
    if (s.data) { status.textContent = `the store's index reads data (a scatter): which element it writes is known only when it runs`; return; }
    if (!writers.has(slot)) writers.set(slot, writtenBy(st(), s, numel));
    const reads = readsOf(msg, s, /** @type {Int32Array} */ (writers.get(slot))[f]);
    const only = focus !== null ? st().accesses[focus].slot : null;
    /** @type {Map<number, Map<number, string>>} */
    const lit = new Map([[slot, new Map([[f, OUT]])]]);
    const said = [];
    for (const [b, r] of reads) {
      if (only !== null && b !== only && b !== slot) continue;
      if (b !== slot) lit.set(b, new Map(r.flat.map((e) => [e, READ])));
      else for (const e of r.flat) if (e !== f) /** @type {Map<number, string>} */ (lit.get(slot)).set(e, READ);
      said.push(r.data ? `buffer ${b}: ${thousands(r.count)} reads whose elements depend on data (a gather)`
        : `buffer ${b}: ${plural(r.flat.length, "element")}, ${plural(r.count, "read")}${r.masked ? `, ${thousands(r.masked)} masked off` : ""}`);
    }
    const at = grids.get(slot)?.layout.coords(f) ?? [];
    status.textContent = `output ${slot} [${at.join(", ")}] reads ${said.join(" · ") || "nothing"}`;
    paint(lit);
  }

  /** Per thread: light what the chosen thread and its neighbours read and write. */
  function thread() {
    if (!msg) return;
    const s = st(), fast = s.vars.findIndex((v) => v.kind === "local") >= 0 ? s.vars.findIndex((v) => v.kind === "local")
      : s.vars.findIndex((v) => v.kind === "global");
    const only = focus !== null ? [focus] : undefined;
    /** @type {Map<number, Map<number, string>>} */
    const lit = new Map();
    const said = [];
    const n = fast >= 0 ? Math.min(THREADS.length, s.vars[fast].size) : 1;
    for (let t = n - 1; t >= 0; t--) {
      const mine = new Map(ids);
      if (fast >= 0) mine.set(fast, ((ids.get(fast) ?? 0) + t) % s.vars[fast].size);
      for (const [b, { reads, writes }] of threadOf(msg, mine, only)) {
        const m = lit.get(b) ?? new Map();
        lit.set(b, m);
        for (const e of [...reads.flat, ...writes.flat]) m.set(e, m.has(e) && m.get(e) !== THREADS[t] ? SHARED : THREADS[t]);
        if (t === 0) said.push(`buffer ${b}: ` + [reads.data ? `${thousands(reads.count)} data-dependent reads (a gather)` : reads.count ? `reads ${plural(reads.flat.length, "element")}` : "",
          writes.count ? `writes ${thousands(writes.flat.length)}` : "", reads.masked ? `${thousands(reads.masked)} reads masked off` : ""].filter(Boolean).join(", "));
      }
    }
    const who = s.vars.flatMap((v, i) => (v.kind !== "loop" ? [`${v.name}=${ids.get(i) ?? 0}`] : ids.has(i) ? [`${v.name}=${ids.get(i)}`] : []));
    status.textContent = `thread ${who.join(" ")}: ${said.filter((x) => !x.endsWith(": ")).join(" · ")}` +
      (n > 1 ? ` — its neighbour${n > 2 ? "s" : ""} ${s.vars[fast].name}+1${n > 2 ? `…+${n - 1}` : ""} in other colours, shared elements black` : "");
    paint(lit);
  }

  /** The thread that writes element f of buffer slot: its ids chosen. @param {number} slot @param {number} f */
  function threadWriting(slot, f) {
    if (!msg) return;
    const s = st();
    for (const a of s.accesses.filter((x) => x.kind === "store" && x.slot === slot && !x.data)) {
      const by = writtenBy(s, { ...a, vars: a.loops }, msg.buffers.find((b) => b.slot === slot)?.numel ?? 0);
      const p = by[f] >= 0 ? by[f] : a.width > 1 ? [...Array(a.width).keys()].map((w) => (f - w >= 0 ? by[f - w] : -1)).find((x) => x >= 0) ?? -1 : -1;
      if (p < 0) continue;
      let rest = p;
      for (let i = a.loops.length - 1; i >= 0; i--) {
        const v = a.loops[i], size = s.vars[v].size;
        if (s.vars[v].kind !== "loop") ids.set(v, rest % size);
        rest = Math.floor(rest / size);
      }
      build(); return;
    }
  }

  /** The stage's controls: the two ways to look; per thread, a number for each thread id and loop. */
  function buildControls() {
    if (!msg) return;
    const ways = msg.stages.map((s) => {
      const b = h("button", { class: `tgviz-access-stage${s.stage === stage ? " active" : ""}`, "data-stage": s.stage,
                              title: s.stage === "ast" ? "what each output element reads (the View Base AST)" : "what each thread reads and writes (the final program)" },
                  [s.stage === "ast" ? "per output element" : "per thread"]);
      b.addEventListener("click", () => { stage = /** @type {"ast"|"program"} */ (s.stage); focus = null; build(); });
      return b;
    });
    const inputs = stage === "program" ? st().vars.map((v, i) => {
      const input = /** @type {HTMLInputElement} */ (h("input", { type: "number", min: "0", max: String(v.size - 1), "data-var": v.name,
        value: ids.has(i) ? String(ids.get(i)) : v.kind === "loop" ? "" : "0", placeholder: "all", title: `${v.name}: 0…${v.size - 1}${v.kind === "loop" ? " (empty: every iteration)" : ""}` }));
      input.addEventListener("input", () => {
        const n = input.value === "" ? null : Math.max(0, Math.min(v.size - 1, Math.trunc(Number(input.value))));
        if (n === null) ids.delete(i); else ids.set(i, n);
        thread();
      });
      return h("label", { class: "tgviz-access-var" }, [`${v.name} `, input, ` /${v.size}`]);
    }) : [];
    controls.replaceChildren(...ways, ...inputs);
  }

  /** The list of accesses: click one to light it alone (again: all). */
  function buildList() {
    const rows = st().accesses.map((a) => {
      const pat = a.pattern === "strided" ? `strided ${a.stride}` : a.pattern;
      return h("tr", { "data-n": String(a.number), class: focus === a.number ? "tgviz-row-hl" : "", title: a.keys.length ? "click: light it alone, and mark it in the graph" : "" }, [
        h("td", {}, [a.kind]), h("td", {}, [`buf ${a.slot}${a.width > 1 ? ` ×${a.width}` : ""}`]),
        h("td", { class: `tgviz-access-pattern tgviz-pattern-${a.pattern}` }, [pat]),
        h("td", { class: "tgviz-access-index" }, [`[${a.index_text}]` + (a.valid_text ? ` if ${a.valid_text}` : "")])]);
    });
    list.replaceChildren(h("table", { class: "tgviz-program" }, [h("tbody", {}, rows)]));
  }

  /** The buffers: a head with its counts over a grid each. */
  function buildBuffers() {
    if (!msg) return;
    const c = countsOf(), out = stored(), width = Math.max(160, (pane.clientWidth || 420) - 24);
    builtWidth = pane.clientWidth;
    grids = new Map();
    const blocks = msg.buffers.filter((b) => st().accesses.some((a) => a.slot === b.slot)).sort((a, b) => +out.has(b.slot) - +out.has(a.slot)).map((b) => {
      const grid = bufferGrid(b.shape, width), n = c.get(b.slot);
      grids.set(b.slot, grid);
      const use = n ? [n.written ? `${thousands(n.written)} written` : "", n.read !== 0 ? `${thousands(n.read)} read, ${thousands(n.reads)} reads` +
        (n.read && n.reads ? ` (${(n.reads / n.read).toFixed(1)} per element)` : "") : "", n.masked ? `${thousands(n.masked)} masked off` : ""].filter(Boolean).join(" · ") : "";
      const head = h("div", { class: "tgviz-access-head" }, [h("b", {}, [`buffer ${b.slot}${out.has(b.slot) ? " (output)" : ""}`]),
        ` (${b.shape.join(", ")}) ${b.dtype} · ${b.numel === null ? "? elements" : plural(b.numel, "element")}`, h("div", { class: "tgviz-access-use" }, [use]),
        ...(b.tensor ? [h("div", { class: "tgviz-access-tensor", title: b.tensor }, [b.tensor])] : [])]);
      grid.canvas.addEventListener("mousemove", (ev) => {
        if (stage !== "ast" || pinned >= 0 || !out.has(b.slot)) return;
        element(b.slot, grid.hit(ev));
      });
      grid.canvas.addEventListener("mouseleave", () => { if (stage === "ast" && pinned < 0) element(b.slot, -1); });
      grid.canvas.addEventListener("click", (ev) => {
        const f = grid.hit(ev);
        if (!out.has(b.slot) || f < 0) return;
        if (stage === "program") { threadWriting(b.slot, f); return; }
        pinned = pinned === f ? -1 : f;
        element(b.slot, f);
      });
      return h("div", { class: "tgviz-access-buffer", "data-slot": String(b.slot) }, [head, grid.el]);
    });
    body.replaceChildren(...blocks);
  }

  function build() {
    if (!msg) return;
    if (!st()) stage = /** @type {"ast"|"program"} */ (msg.stages[0]?.stage ?? "ast");
    const note = msg.note ? [h("div", { class: "tgviz-program-note" }, [msg.note])] : [];
    if (!st()) { pane.replaceChildren(...note); return; }
    buildControls(); buildList(); buildBuffers();
    const legend = h("div", { class: "tgviz-access-legend" }, stage === "ast"
      ? [sw(OUT), " the output element, ", sw(READ), " what it reads; grey: how often the kernel reads an element, ", sw(WRITTEN), " written"]
      : [...THREADS.map((c, i) => h("span", {}, [sw(c), i ? ` +${i} ` : " the thread "])), sw(SHARED), " shared"]);
    pane.replaceChildren(...note, controls, legend, status, body, h("div", { class: "tgviz-access-listhead" }, ["accesses"]), list);
    const out = [...stored()][0];
    if (stage === "program") thread(); else element(out, pinned);
  }
  const sw = (/** @type {string} */ c) => h("span", { class: "tgviz-access-swatch", style: `background:${c}` });

  let builtWidth = 0;  // the pane's width the grids were drawn for: drawn again when it changes much
  new ResizeObserver(() => { if (msg && pane.clientWidth && Math.abs(pane.clientWidth - builtWidth) > 40) build(); }).observe(pane);

  list.addEventListener("click", (ev) => {
    const row = /** @type {HTMLElement|null} */ (/** @type {HTMLElement} */ (ev.target).closest("tr[data-n]"));
    if (!row) return;
    const n = Number(row.dataset.n);
    focus = focus === n ? null : n;
    if (focus !== null) links.pick(st().accesses[n].keys);
    buildList();
    if (stage === "program") thread(); else element([...stored()][0], pinned);
  });

  return {
    /** Another kernel (or none): forget the last one's. */
    reset() {
      msg = null; focus = null; ids = new Map(); pinned = -1; grids = new Map(); counts = new Map(); writers = new Map(); bases = new Map();
      pane.replaceChildren();
    },
    /** Whether its message is here. */
    has: () => msg !== null,
    /** The kernel's message. @param {AccessMsg} m */
    show(m) { msg = m; build(); },
    /** The access with one of these node keys (a LOAD or STORE picked elsewhere), shown; false if none has one.
     * @param {string[]} keys */
    open(keys) {
      if (!msg) return false;
      for (const s of msg.stages) {
        const a = s.accesses.find((x) => x.keys.some((k) => keys.includes(k)));
        if (!a) continue;
        stage = /** @type {"ast"|"program"} */ (s.stage); focus = a.number;
        build();
        scrollWithin(list.querySelector("tr.tgviz-row-hl"), "nearest");
        return true;
      }
      return false;
    },
    /** Whether any access has one of these node keys. @param {string[]} keys */
    holds: (keys) => !!msg?.stages.some((s) => s.accesses.some((a) => a.keys.some((k) => keys.includes(k)))),
  };
}
