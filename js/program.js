// The code column's tabs: code | uops | asm (tgviz/views/program.py sends the last two when a tab first asks, per kernel;
// the report holds them). uops: the linearized program the renderer consumed, one row per UOp numbered as tinygrad's
// print_uops numbers them (op in its node's colour, ranges, dtype, sources by number: click one to go to its row, arg).
// asm: the kernel's disassembly, or one line saying why there is none; on the CPU device each instruction knows the
// source lines it was compiled from. Linked: a uops row pins its node (marked in the graph; the codegen graph opens
// around it where the graph shown does not draw it) and its code lines; an asm range (consecutive instructions of the
// same lines) pins its code lines and their UOps; a hovered or clicked code line and a picked node mark their rows
// (linking.js onMark). All text is set as text. The access tab is access.js's (what each thread reads and writes): a
// LOAD or STORE picked in the graph, or a click on the number of a code line that does one, opens it on that access.
import { accessTab } from "./access.js";
import { h } from "./dom.js";

/** @typedef {import("./ui.js").Ui} Ui */
/** @typedef {import("./adapter.js").Adapter} Adapter */
/** @typedef {import("./messages.js").KernelInfo} KernelInfo */
/** @typedef {import("./messages.js").UopsMsg} UopsMsg */
/** @typedef {import("./messages.js").AsmMsg} AsmMsg */
/** @typedef {import("./messages.js").AccessMsg} AccessMsg */
/** @typedef {ReturnType<typeof import("./linking.js").linking>} Links */

const CODE_TABS = /** @type {const} */ (["code", "uops", "asm", "access"]);
// a request with no answer this long is sent again: an answer can be lost (the kernel was running other cells when the
// page asked, a reply dropped: a tab said "asking…" for good), and the kernel answers one under way once
export const ASK_AGAIN_MS = 20000;
/** @typedef {typeof CODE_TABS[number]} Tab */

/** Mark rows of a pane with a class (the others lose it); the first marked scrolled into view where it is out of it.
 * @param {HTMLElement} pane @param {string} cls @param {(row: HTMLElement) => boolean} test */
function markRows(pane, cls, test) {
  for (const e of pane.querySelectorAll(`.${cls}`)) e.classList.remove(cls);
  /** @type {HTMLElement|null} */
  let first = null;
  for (const e of /** @type {NodeListOf<HTMLElement>} */ (pane.querySelectorAll("tr[data-n]"))) {
    if (!test(e)) continue;
    e.classList.add(cls);
    first ??= e;
  }
  if (first && !pane.hidden) {  // the pane scrolls, not the page around the widget
    const r = first.getBoundingClientRect(), c = pane.getBoundingClientRect();
    if (r.top < c.top || r.bottom > c.bottom) pane.scrollTop += r.top - c.top - (c.height - r.height) / 2;
  }
}

/** Text as nodes with a break opportunity (<wbr>) after each comma, opening bracket and `=` that a space, a closing
 * bracket, a comma or a dot does not follow: a uops argument too long for its cell wraps between the tokens of
 * `ParamArg(0, dtypes.float, device='CL')` or `KernelInfo(name='E_4',axis_types=(0,1))`, never inside a name
 * (`dtypes.float` whole). @param {string} text @returns {(string|Node)[]} */
function breakable(text) {
  return text.split(/(?<=[,([{=])(?=[^\s)\]},.=])/).flatMap((part, i) => (i ? [h("wbr"), part] : [part]));
}

/** A name as tinygrad prints it (Ops.ADD, dtypes.float), its namespace in a span of its own that a narrow pane hides
 * (program.css). @param {string} text @param {string} ns @returns {(string|Node)[]} */
function named(text, ns) {
  return text.startsWith(ns) ? [h("span", { class: "tgviz-uop-ns" }, [ns]), text.slice(ns.length)] : [text];
}

/** The uops table. @param {UopsMsg} msg */
function uopsTable(msg) {
  if (!msg.rows.length) return h("div", { class: "tgviz-program-note" }, [msg.note ?? "no linearized program"]);
  const rows = msg.rows.map((r) => {
    // a source by number links to its row; a constant by its value, which a narrow pane cuts (program.css), whole on hover
    const srcs = r.srcs.flatMap((s, i) => [i ? ", " : "", typeof s === "number" ? h("span", { class: "tgviz-uop-src", "data-to": String(s), title: `go to ${s}` }, [String(s)])
      : h("span", { class: "tgviz-uop-const", title: s }, [s])]);
    const op = h("td", { class: "tgviz-uop-op" }, [h("span", { style: `background:${r.fill}` }, named(r.op, "Ops."))]);
    return h("tr", { "data-n": String(r.n), "data-key": r.key, title: "click: its node in the codegen graph and its code lines" }, [
      h("td", { class: "tgviz-uop-n" }, [String(r.n)]), op, h("td", { class: "tgviz-uop-rng" }, [r.ranges]),
      h("td", { class: "tgviz-uop-dt" }, named(r.dtype, "dtypes.")), h("td", { class: "tgviz-uop-srcs" }, ["[", ...srcs, "]"]),
      h("td", { class: "tgviz-uop-arg" }, breakable(r.arg))]);
  });
  return h("table", { class: "tgviz-program" }, [h("tbody", {}, rows)]);
}

/** Each uops row's argument in its column where it fits there whole, else on a line of its own under the row's other
 * cells (from the op on: the pane's width but the number's), so that at a notebook's width the number, op, ranges,
 * dtype and sources keep their columns and an argument is not squeezed to fragments beside them (program.css: the rows
 * share the table's columns, a subgrid). Called when the table comes and when the pane's width changes; its width
 * does not depend on this (program.css: the scroll bar's gutter is kept), so no resize follows. @param {HTMLElement} pane */
function placeArgs(pane) {
  const table = /** @type {HTMLElement|null} */ (pane.querySelector(":scope > table.tgviz-program"));
  const srcs = table?.querySelector("td.tgviz-uop-srcs");
  if (!table || !srcs || !pane.clientWidth) return;
  const args = /** @type {HTMLElement[]} */ ([...table.querySelectorAll("td.tgviz-uop-arg")]);
  if (!widths.has(args[0])) {  // each argument's width on one line (its longest, where it has several), measured once
    const ctx = document.createElement("canvas").getContext("2d");
    if (!ctx) return;
    ctx.font = getComputedStyle(args[0]).font;
    for (const a of args) widths.set(a, Math.max(0, ...(a.textContent ?? "").split("\n").map((l) => ctx.measureText(l).width)));
  }
  // the room its column has: the pane's width right of the sources, less the cell's right padding
  const room = pane.clientWidth - (srcs.getBoundingClientRect().right - table.getBoundingClientRect().left) - parseFloat(getComputedStyle(args[0]).paddingRight);
  const indent = parseFloat(getComputedStyle(args[0]).paddingLeft);  // a cell is never narrower than it (its text hangs)
  for (const a of args) a.classList.toggle("tgviz-below", Math.max(widths.get(a) ?? 0, indent) > room + 0.5);
}
/** @type {WeakMap<HTMLElement, number>} a uops argument's width on one line, in px */
const widths = new WeakMap();

/** A line of objdump's listing in parts: an instruction row's address, bytes, mnemonic, operands and comment; a label, or
 * other text, whole. @param {string} text */
function asmParts(text) {
  const m = /^(\s*[0-9a-f]+:)\t([^\t]*?)\s*(?:\t(\S+)(?:\s+(.*?))?)?(\s+(?:#|\/\/|;).*)?$/.exec(text);
  if (!m) return [h("span", { class: /^[0-9a-f]+ <.*>:$/.test(text) ? "tgviz-asm-label" : "tgviz-asm-text" }, [text])];
  return [h("span", { class: "tgviz-asm-addr" }, [m[1]]), h("span", { class: "tgviz-asm-bytes" }, [m[2]]),
          h("span", { class: "tgviz-asm-op" }, [m[3] ?? ""]), " ", m[4] ?? "", h("span", { class: "tgviz-asm-comment" }, [m[5] ?? ""])];
}

/** The asm listing. @param {AsmMsg} msg */
function asmTable(msg) {
  if (!msg.rows.length) return h("div", { class: "tgviz-program-note" }, [msg.note ?? "no disassembly"]);
  const rows = msg.rows.map((r, i) => {
    const code = h("td", { class: "tgviz-asm-code", title: r.text }, asmParts(r.text));
    return h("tr", { "data-n": String(i), "data-lines": r.lines.join(" "), ...(r.lines.length ? { title: `line ${r.lines.join(", ")}: click to mark` } : {}) }, [
      h("td", { class: "tgviz-asm-line" }, [r.lines.join(",")]), code]);
  });
  const note = msg.lines_note ? [h("div", { class: "tgviz-program-note" }, [msg.lines_note])] : [];
  return h("div", {}, [...note, h("table", { class: "tgviz-program" }, [h("tbody", {}, rows)])]);
}

/** The uops and asm tabs of the code column, linked to the code and the graph.
 * @param {Ui} ui @param {Adapter} state @param {Links} links */
export function programTabs(ui, state, links) {
  /** @type {Tab} */
  let tab = "code";
  /** @type {KernelInfo|null} the kernel shown */
  let kernel = null;
  /** the step its picture was of: what a request names */
  let step = "";
  /** @type {{uops?: UopsMsg, asm?: AsmMsg, access?: AccessMsg}} the kernel's answers */
  let got = {};
  /** @type {{kind: "pin"|"hover", keys: string[], lines: number[]}[]} what linking marked last, per kind: drawn again on an answer */
  let marks = [];

  const buttons = CODE_TABS.map((t) => {
    const b = h("button", { class: `tgviz-tab tgviz-tab-${t}`, role: "tab", "data-tab": t,
                            title: { code: "the generated code", uops: "the linearized program the renderer consumed (tinygrad's print_uops)",
                                     asm: "the machine code (tinygrad's compiler.disassemble)",
                                     access: "what each thread reads and writes, drawn on the buffers" }[t] }, [t]);
    b.addEventListener("click", () => show(t));
    return b;
  });
  ui.codeTabs.append(...buttons);
  // the access tab (access.js): its pane after asm's; a LOAD or STORE picked elsewhere opens it on that access
  const accessPane = h("div", { class: "tgviz-access", hidden: "" });
  ui.asm.after(accessPane);
  const access = accessTab(accessPane, { pick: (keys) => { quiet = true; links.pin(keys, linesOf(keys), null); quiet = false; } });
  /** @type {string[]|null} keys picked before the access message came: opened on it when it comes */
  let wanted = null;
  let quiet = false;  // the access tab pinned these itself
  /** The code lines of UOps. @param {string[]} keys */
  const linesOf = (keys) => (kernel?.lines ?? []).flatMap((ks, i) => (ks.some((k) => keys.includes(k)) ? [i + 1] : []));
  /** Open the access tab on the access of one of these keys, asking for the kernel's accesses first where they are not
   * here. @param {string[]} keys */
  function openAccess(keys) {
    if (!kernel || !keys.length) return;
    if (!access.has()) { wanted = keys; if (!got.access) state.send({ type: "access", step }); return; }
    if (access.holds(keys)) { show("access"); access.open(keys); return; }
    // a LOAD or STORE of another step than those the tab reads: say where its accesses are (it opened nothing, unsaid)
    const op = ui.stage.querySelector(`g.node[data-node="${CSS.escape(keys[0])}"]`)?.getAttribute("data-op");
    if (op === "LOAD" || op === "STORE") ui.status.textContent = `this ${op}'s accesses: the access tab has those of the `
      + "View Base AST and of the final program (its View Program, linearize/render): pick the buffer's there";
  }
  ui.code.addEventListener("click", (ev) => {  // a code line's number: the access tab on its LOAD or STORE
    const line = /** @type {Element} */ (ev.target).closest?.("[data-line]");
    const gutter = line ? parseFloat(getComputedStyle(line, "::before").width) + 12 : 0;  // its number and padding
    if (!line || !kernel?.lines || ev.clientX - line.getBoundingClientRect().left > gutter) return;
    openAccess(kernel.lines[Number(line.getAttribute("data-line")) - 1] ?? []);
  });

  /** What a row of the uops or asm tab is behind, by kind. @param {"pin"|"hover"} kind @param {string[]} keys @param {number[]} lines */
  function mark(kind, keys, lines) {
    marks = [...marks.filter((m) => m.kind !== kind), { kind, keys, lines }];
    if (kind === "pin") for (const e of ui.asm.querySelectorAll(".tgviz-range")) e.classList.remove("tgviz-range");
    const cls = kind === "pin" ? "tgviz-row-hl" : "tgviz-row-hover", ks = new Set(keys), ls = new Set(lines);
    markRows(ui.uops, cls, (e) => ks.has(e.dataset.key ?? ""));
    markRows(ui.asm, cls, (e) => (e.dataset.lines ?? "").split(" ").some((l) => l && ls.has(Number(l))));
  }
  links.onMark((kind, keys, lines, again) => {
    if (kind === "pin" && !again) wanted = null;
    // a node picked in the graph (not a row of another pane, nor the node kept picked in a graph drawn since: the user
    // back on the code tab stays there): its access, if it is a LOAD or STORE of a buffer
    if (kind === "pin" && !again && keys.length === 1 && !quiet && links.picked() === keys[0]) openAccess(keys);
    mark(kind, keys, lines);
  });

  /** @type {ReturnType<typeof setTimeout>|undefined} */
  let askAgain;
  /** Send the shown tab's request; with no answer in ASK_AGAIN_MS (an answer lost), again, marked so (the kernel leaves
   * the same request under way to answer). @param {boolean} again */
  function request(again) {
    const t = /** @type {"uops"|"asm"|"access"} */ (tab), at = step;
    state.send(again ? { type: t, step: at, again } : { type: t, step: at });
    clearTimeout(askAgain);
    askAgain = setTimeout(() => { if (tab === t && step === at && !got[t]) request(true); }, ASK_AGAIN_MS);
  }
  /** Ask for the tab's message, if it is not here (the access tab a saved notebook kept needs no kernel). */
  function ask() {
    if (tab === "code" || !kernel || got[tab]) return;
    const kept = tab === "access" ? state.model.get("kept_access") : null;
    if (kept?.type === "access" && kept.kernel === kernel.label) { api.message(kept); return; }
    const pane = tab === "uops" ? ui.uops : tab === "asm" ? ui.asm : accessPane;
    pane.replaceChildren(h("div", { class: "tgviz-program-pending" }, [
      ui.root.classList.contains("tgviz-offline") ? "the uops, asm and access tabs need the kernel: run the cell again"
        : tab === "uops" || tab === "access" ? "asking…" : kernel.device === "CPU" ? "disassembling, and compiling again with -g for the line table…" : "disassembling…"]));
    request(false);
  }

  /** Show a tab. @param {Tab} t */
  function show(t) {
    tab = t; wanted = null;
    for (const b of buttons) b.classList.toggle("active", b.dataset.tab === t);
    ui.code.hidden = t !== "code"; ui.uops.hidden = t !== "uops"; ui.asm.hidden = t !== "asm"; accessPane.hidden = t !== "access";
    ask();
  }

  // a uops row: its node and code lines pinned (a source number: its row); an asm row: its range's lines and their UOps
  ui.uops.addEventListener("click", (ev) => {
    const at = /** @type {HTMLElement} */ (ev.target);
    const to = at.closest(".tgviz-uop-src")?.getAttribute("data-to");
    const row = /** @type {HTMLElement|null} */ (to ? ui.uops.querySelector(`tr[data-n="${to}"]`) : at.closest("tr[data-key]"));
    const key = row?.dataset.key;
    if (!row || !key) return;
    const lines = (kernel?.lines ?? []).flatMap((ks, i) => (ks.includes(key) ? [i + 1] : []));
    links.pin([key], lines, `node:${key}`);
  });
  ui.asm.addEventListener("click", (ev) => {
    const row = /** @type {HTMLElement|null} */ (/** @type {HTMLElement} */ (ev.target).closest("tr[data-n]"));
    const same = row?.dataset.lines;
    if (!row || !same) return;
    // the range: the rows around it of the same lines
    const all = /** @type {HTMLElement[]} */ ([...ui.asm.querySelectorAll("tr[data-n]")]), i = all.indexOf(row);
    let a = i, b = i;
    while (a > 0 && all[a - 1].dataset.lines === same) a--;
    while (b < all.length - 1 && all[b + 1].dataset.lines === same) b++;
    const lines = same.split(" ").map(Number);
    links.pin([...new Set(lines.flatMap((n) => kernel?.lines?.[n - 1] ?? []))], lines, null);
    for (const e of all.slice(a, b + 1)) e.classList.add("tgviz-range");
  });

  new ResizeObserver(() => placeArgs(ui.uops)).observe(ui.uops);  // shown, or the column's width changed

  show("code");
  const api = {
    /** The tab to open on (the widget's "tab": the magic's --tab). @param {string} t */
    prefer(t) { if (/** @type {readonly string[]} */ (CODE_TABS).includes(t)) tab = /** @type {Tab} */ (t); },
    /** A picture of another group was drawn: its kernel (null: none, the tabs hidden) and its step.
     * @param {KernelInfo|null} k @param {import("./messages.js").StepKey} key */
    kernel(k, key) {
      kernel = k; step = key; got = {}; marks = []; wanted = null;
      ui.uops.replaceChildren(); ui.asm.replaceChildren(); access.reset();
      ui.codeTabs.hidden = !k;
      show(k ? tab : "code");
    },
    /** The kernel's answer to a tab (another kernel's, too late, is dropped). @param {UopsMsg|AsmMsg|AccessMsg} msg */
    message(msg) {
      if (!kernel || msg.kernel !== kernel.label) return;
      got[msg.type] = /** @type {any} */ (msg);
      if (msg.type === "access") {
        access.show(msg);
        if (wanted) { const keys = wanted; wanted = null; openAccess(keys); }
        return;
      }
      (msg.type === "uops" ? ui.uops : ui.asm).replaceChildren(msg.type === "uops" ? uopsTable(msg) : asmTable(msg));
      if (msg.type === "uops") placeArgs(ui.uops);
      for (const m of marks) mark(m.kind, m.keys, m.lines);
    },
  };
  return api;
}
