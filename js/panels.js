// The widget's size and columns: the side panels' widths (dragged on their handles), collapsing them to a strip (a click
// on the strip brings them back), the node panel docked in the code column, the rules tab widening the tree column,
// the code column's uops and asm tabs widening it to their longest line (the graph keeps GRAPH_MIN; longer lines wrap),
// maximising (the widget fills the browser window), and the widget's height (the user drags its corner); widths,
// collapsed panels and the height are kept for the browser session.
import { h } from "./dom.js";

/** @typedef {import("./ui.js").Ui} Ui */

const STRIP = "22px";  // a collapsed panel: a strip that brings it back
const ACCESS_WIDTH = 640;  // the code column's width while the access tab shows (as a listing's longest line)
const GRAPH_MIN = "max(400px, 40%)";  // the graph's least width where a listing widens the code column

/** The side panels: widths dragged on their handles, collapsed to a strip and brought back with their buttons (or a
 * click on the strip); the code column holds the node panel, and shows it even while collapsed; the tree column widens
 * while it shows the rules. Returns apply(), to call when the layout may have changed. @param {Ui} ui */
export function sidePanels(ui) {
  /** code: the code column's width dragged on the code tab; listing: on the uops and asm tabs
   * @type {{tree: number|null, code: number|null, listing: number|null, treeHidden: boolean, codeHidden: boolean}} */
  const st = { tree: null, code: null, listing: null, treeHidden: false, codeHidden: false, ...JSON.parse(sessionStorage.getItem("tgviz-panels") || "{}") };
  /** The uops, asm or access pane shown, or null. */
  const listing = () => (!ui.uops.hidden ? ui.uops : !ui.asm.hidden ? ui.asm : /** @type {HTMLElement|null} */ (ui.right.querySelector(".tgviz-access:not([hidden])")));
  /** Its longest line's width in px: its tables' own width (they fill the pane otherwise), and a scroll bar's room; 0: no table.
   * @param {HTMLElement} pane */
  function longest(pane) {
    if (pane.classList.contains("tgviz-access")) return ACCESS_WIDTH;  // the access tab's grids take the room they get
    pane.classList.add("tgviz-measuring");
    const w = Math.max(0, ...[...pane.querySelectorAll("table")].map((t) => t.offsetWidth));
    pane.classList.remove("tgviz-measuring");
    return w && w + 16;
  }
  function apply() {
    const max = ui.root.classList.contains("maximised") || ui.root.classList.contains("tgviz-page");
    const node = !ui.nodePanel.hidden, rules = !ui.rules.hidden, pane = listing(), wide = pane ? longest(pane) : 0;
    // automatic widths: the maximised layout gives the graph most of the window (1046 px of 1600); a uops or asm listing
    // shown: the tree at its narrowest, the code column as wide as the listing's longest line, the graph keeping GRAPH_MIN,
    // where the user has not dragged them to widths of their own
    // maximised, the code column gets the room to read its lines (at 1600 px it had 280, and a line wrapped into three or
    // four rows: now 364); the tree keeps 180 px (a kernel's name whole, as at 841 px), wider in windows over 1600 px
    const tree0 = max ? "clamp(180px, 12.5% - 20px, 320px)" : "max(180px, 22%)";
    let tree = st.tree ? `${st.tree}px` : wide ? "180px" : tree0;
    // (at least 260 px: in a window 1000 px wide the code column had 200, its access tab cut, its words broken)
    let code = st.code ? `${st.code}px` : max ? "clamp(260px, 22.5% + 4px, 480px)" : "max(200px, 28%)";
    if (wide) code = st.listing ? `${st.listing}px` : `max(${code}, min(${wide}px, calc(100% - ${tree} - 10px - ${GRAPH_MIN})))`;
    // (a search's hits do not widen it: the graph would move as the user types; they wrap in it, search.css)
    if (rules) tree = `max(${tree}, min(65%, 1040px))`;  // the rules' figures and patterns need room to be read
    if (st.treeHidden) tree = STRIP;
    if (st.codeHidden) code = node ? "max(260px, 17.5%)" : STRIP;  // collapsed: the node panel alone, else a strip
    const bar = (/** @type {boolean} */ hidden) => (hidden ? "0px" : "5px");
    ui.main.style.gridTemplateColumns = `${tree} ${bar(st.treeHidden)} minmax(0, 1fr) ${bar(st.codeHidden)} ${code}`;
    ui.left.classList.toggle("collapsed", st.treeHidden);
    ui.right.classList.toggle("collapsed", st.codeHidden);
    ui.right.classList.toggle("node-only", st.codeHidden && node);
    ui.dragTree.classList.toggle("collapsed", st.treeHidden);
    ui.dragCode.classList.toggle("collapsed", st.codeHidden);
    ui.toggleTree.textContent = st.treeHidden ? "▸ tree" : "◂ tree";
    ui.toggleCode.textContent = st.codeHidden ? "code ◂" : "code ▸";
    ui.toggleTree.setAttribute("aria-pressed", String(!st.treeHidden));
    ui.toggleCode.setAttribute("aria-pressed", String(!st.codeHidden));
    sessionStorage.setItem("tgviz-panels", JSON.stringify(st));
  }
  /** @param {HTMLElement} handle @param {HTMLElement} panel @param {"tree"|"code"} which @param {number} dir +1: dragging right widens */
  function drag(handle, panel, which, dir) {
    handle.addEventListener("pointerdown", (ev) => {
      ev.preventDefault();
      ev.stopPropagation();
      handle.setPointerCapture(ev.pointerId);
      const x0 = ev.clientX, w0 = panel.getBoundingClientRect().width;
      const move = (/** @type {PointerEvent} */ e) => {
        st[which === "code" && listing()?.querySelector("table") ? "listing" : which] = Math.round(Math.max(120, Math.min(ui.main.clientWidth * 0.6, w0 + dir * (e.clientX - x0))));
        apply();
      };
      const up = () => { handle.removeEventListener("pointermove", move); handle.removeEventListener("pointerup", up); };
      handle.addEventListener("pointermove", move);
      handle.addEventListener("pointerup", up);
    });
  }
  drag(ui.dragTree, ui.left, "tree", 1);
  drag(ui.dragCode, ui.right, "code", -1);
  const toggleTree = () => { st.treeHidden = !st.treeHidden; apply(); };
  const toggleCode = () => { st.codeHidden = !st.codeHidden; apply(); };
  ui.toggleTree.addEventListener("click", toggleTree);
  ui.toggleCode.addEventListener("click", toggleCode);
  ui.treeStrip.addEventListener("click", toggleTree);
  ui.codeStrip.addEventListener("click", toggleCode);
  // the node panel opening or closing, the rules tab shown or hidden, a uops or asm tab shown or filled: the columns follow
  const watch = new MutationObserver(apply);
  for (const e of [ui.nodePanel, ui.rules]) watch.observe(e, { attributes: true, attributeFilter: ["hidden"] });
  for (const e of [ui.uops, ui.asm]) watch.observe(e, { attributes: true, attributeFilter: ["hidden"], childList: true });
  apply();
  return apply;
}

/** Maximising: the widget fills the browser window, panels included, and returns where it was. It moves to the end of
 * the page's body meanwhile (a placeholder keeps its place and height): inside JupyterLab's cells and outputs, whose
 * containers clip and transform, a fixed position would not be the window's. Its panes keep where they were scrolled
 * to. leaving(on) before each change, while the widget has its old size; changed(on) after it (the view on the graph
 * and the selected row in the tree follow there). @param {Ui} ui @param {(on: boolean) => void} leaving
 * @param {(on: boolean) => void} changed */
export function maximiser(ui, leaving, changed) {
  /** @type {HTMLElement|null} where the widget was: set while it is maximised */
  let placeholder = null;
  // the notebook hid it (another tab, the notebook closed): the widget goes back to its place
  const gone = new ResizeObserver(() => { if (placeholder && (!placeholder.isConnected || placeholder.offsetParent === null)) set(false); });
  /** @param {boolean} on */
  function set(on) {
    if (on === (placeholder !== null)) return;
    leaving(on);
    // where its panes were scrolled to (the tree on the selected step, the code on a line): moved, they start at the top
    const scrolled = [...ui.root.querySelectorAll("*")].filter((e) => e.scrollTop || e.scrollLeft).map((e) => ({ e, top: e.scrollTop, left: e.scrollLeft }));
    if (on) {
      placeholder = h("div", { class: "tgviz-placeholder" });
      placeholder.style.height = `${ui.root.offsetHeight}px`;
      ui.root.replaceWith(placeholder);
      document.body.append(ui.root);
      gone.observe(placeholder);
    } else {
      gone.disconnect();
      const at = /** @type {HTMLElement} */ (placeholder);
      placeholder = null;
      if (at.isConnected) at.replaceWith(ui.root); else ui.root.remove();
    }
    ui.root.classList.toggle("maximised", on);
    ui.maximise.textContent = on ? "⤡ restore" : "⤢ maximise";
    ui.maximise.setAttribute("aria-pressed", String(on));
    if (ui.root.isConnected) ui.root.focus({ preventScroll: true });
    for (const { e, top, left } of scrolled) { e.scrollTop = top; e.scrollLeft = left; }
    changed(on);
  }
  ui.maximise.textContent = "⤢ maximise";
  ui.maximise.addEventListener("click", () => set(placeholder === null));
  return {
    /** Whether the widget is maximised. */
    on: () => placeholder !== null,
    set,
    toggle: () => set(placeholder === null),
  };
}

/** The widget's height: the user's to drag (CSS resize), kept for the rest of the browser session. @param {Ui} ui */
export function keptHeight(ui) {
  const saved = sessionStorage.getItem("tgviz-height");
  if (saved) ui.main.style.height = saved;
  new ResizeObserver(() => { if (ui.main.style.height) sessionStorage.setItem("tgviz-height", ui.main.style.height); }).observe(ui.main);
}

/** The graph's toolbar on one row: where the centre column is too narrow for it, its buttons `items` (in their order in
 * the bar, at its end) go into a "⋯" menu at its end, those with keys and those least used first (`drop`: that order),
 * and come back as it widens or labels shorten. @param {HTMLElement} bar @param {HTMLElement[]} items
 * @param {HTMLElement[]} drop */
export function oneRow(bar, items, drop) {
  const menu = h("div", { class: "tgviz-more-menu" });
  const more = h("details", { class: "tgviz-more" }, [h("summary", { title: "more of the graph's controls" }, ["⋯"]), menu]);
  const watched = [...bar.children];
  bar.append(more);
  menu.addEventListener("click", () => { more.open = false; });
  function fit() {
    for (const e of items) bar.insertBefore(e, more);
    more.hidden = true;
    for (const e of drop) {
      if (bar.scrollWidth <= bar.clientWidth + 1) break;
      more.hidden = false;
      menu.append(e);
    }
    menu.replaceChildren(...items.filter((e) => e.parentElement === menu));  // in the bar's order
  }
  new ResizeObserver(fit).observe(bar);
  // a label that changes (the match, maximise's, the panels' toggles) changes what fits
  const relabel = new MutationObserver(fit);
  for (const e of watched) relabel.observe(e, { childList: true, characterData: true, subtree: true, attributes: true, attributeFilter: ["hidden"] });
  fit();
  return fit;
}
