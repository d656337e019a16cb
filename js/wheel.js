// Whose a mouse wheel over a graph or a chart is. In a notebook, the notebook's: it scrolls on (a widget that zoomed on
// every wheel took the reader's scroll as the pointer passed over it; plotly and ipyleaflet leave it to the page alike),
// and a hint says how to zoom. ctrl+wheel (⌘+wheel, a touchpad's pinch) zooms. Where the widget has the window to
// itself (the HTML report, maximised) the plain wheel zooms too.

import { h } from "./dom.js";

const HINT_MS = 1500;  // how long the hint stays after the last plain wheel

/** Zoom el on the wheel where it is the widget's to take (see above): zoom(ev) then, with the page's scroll prevented;
 * else a hint beside the pointer for a moment. @param {HTMLElement} el @param {(ev: WheelEvent) => void} zoom */
export function wheelZoom(el, zoom) {
  /** @type {HTMLElement|null} */
  let hint = null, hide = 0;
  el.addEventListener("wheel", (ev) => {
    const root = el.closest(".tgviz-root");
    if (ev.ctrlKey || ev.metaKey || !root || root.matches(".tgviz-page, .maximised")) {
      ev.preventDefault();
      zoom(ev);
      return;
    }
    hint ??= h("div", { class: "tgviz-wheel-hint", role: "status" }, ["ctrl + wheel to zoom (the wheel scrolls the notebook)"]);
    if (!hint.isConnected) root.append(hint);
    const r = root.getBoundingClientRect();
    hint.style.left = `${ev.clientX - r.left + 12}px`; hint.style.top = `${ev.clientY - r.top + 12}px`;
    clearTimeout(hide);
    hide = window.setTimeout(() => hint?.remove(), HINT_MS);
  }, { passive: false });
}
