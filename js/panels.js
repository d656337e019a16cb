// The widget's size and columns: the side panels' widths (dragged on their handles), hiding and showing them with
// their buttons, and the widget's height (the user drags its corner); all kept for the browser session.

/** @typedef {import("./ui.js").Ui} Ui */

/** The side panels: widths dragged on their handles, hidden and shown with their buttons. @param {Ui} ui */
export function sidePanels(ui) {
  /** @type {{tree: number|null, code: number|null, treeHidden: boolean, codeHidden: boolean}} */
  const st = { tree: null, code: null, treeHidden: false, codeHidden: false, ...JSON.parse(sessionStorage.getItem("tgviz-panels") || "{}") };
  function apply() {
    const col = (/** @type {number|null} */ w, /** @type {boolean} */ hidden, /** @type {string} */ auto) => (hidden ? "0px" : w ? `${w}px` : auto);
    ui.main.style.gridTemplateColumns = `${col(st.tree, st.treeHidden, "minmax(180px, 22%)")} 5px minmax(0, 1fr) 5px ${col(st.code, st.codeHidden, "minmax(200px, 28%)")}`;
    ui.left.classList.toggle("collapsed", st.treeHidden);
    ui.right.classList.toggle("collapsed", st.codeHidden);
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
        st[which] = Math.round(Math.max(120, Math.min(ui.main.clientWidth * 0.6, w0 + dir * (e.clientX - x0))));
        apply();
      };
      const up = () => { handle.removeEventListener("pointermove", move); handle.removeEventListener("pointerup", up); };
      handle.addEventListener("pointermove", move);
      handle.addEventListener("pointerup", up);
    });
  }
  drag(ui.dragTree, ui.left, "tree", 1);
  drag(ui.dragCode, ui.right, "code", -1);
  ui.toggleTree.addEventListener("click", () => { st.treeHidden = !st.treeHidden; apply(); });
  ui.toggleCode.addEventListener("click", () => { st.codeHidden = !st.codeHidden; apply(); });
  apply();
}

/** The widget's height: the user's to drag (CSS resize), kept for the rest of the browser session. @param {Ui} ui */
export function keptHeight(ui) {
  const saved = sessionStorage.getItem("tgviz-height");
  if (saved) ui.main.style.height = saved;
  new ResizeObserver(() => { if (ui.main.style.height) sessionStorage.setItem("tgviz-height", ui.main.style.height); }).observe(ui.main);
}
