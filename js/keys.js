// The keyboard, only while the widget has focus (the report's page: also while nothing has it): ↑/↓ step, ←/→ match, Home/End first/last match, r raw graph, f fit (with
// the run's timeline shown: its launches' span or the whole run),
// 1 one-to-one,
// z zoom to the change (again: all of it), m maximise, / (or Ctrl-F) the search; Escape first closes what is open over the widget (the kernel table, the run's tabs)
// and un-maximises, then goes back to the notebook (the report has none: the keys stay with it); no other key reaches the
// notebook meanwhile.

/** @typedef {import("./ui.js").Ui} Ui */

/** Whether a key is the notebook's even while a widget has the focus: one with a modifier (Ctrl+S saves), or Shift+Enter
 * (runs the cell); the plain keys are the widget's (a, b, d d would edit the notebook's cells). @param {KeyboardEvent} ev */
export const notebooksKey = (ev) => ev.ctrlKey || ev.metaKey || ev.altKey || (ev.shiftKey && ev.key === "Enter");

/** Listen for the widget's keys; returns the function that stops listening.
 * @param {Ui} ui @param {Record<string, () => void>} actions by KeyboardEvent.key
 * @param {() => boolean} escape Escape's own work (close, un-maximise): true when it did some, and the widget keeps the focus
 * @param {boolean} notebook whether Escape with nothing to close returns to a notebook (the report's page has none)
 * @param {(go: boolean) => void} matchTyped Enter (go: true) or Escape in the box a match is typed in (ui.matchInput); its
 * other keys are its own, none the widget's or the notebook's */
export function keys(ui, actions, escape, notebook, matchTyped) {
  // heard on the window before anything else (Notebook 7 takes the arrow keys on the document, before they reach here)
  const onKey = (/** @type {KeyboardEvent} */ ev) => {
    // (the report's page is the widget's: its keys work before a click gives it the focus)
    if (!ui.root.contains(/** @type {Node} */ (ev.target)) && (notebook || ev.target !== document.body)) return;
    if (ev.target === ui.matchInput) {  // (heard here first: a listener on the box would not hear what is stopped here)
      ev.stopPropagation();
      if (ev.key === "Enter" || ev.key === "Escape") { ev.preventDefault(); matchTyped(ev.key === "Enter"); }
      return;
    }
    if (ev.key === "Escape") {
      if (escape()) { ev.preventDefault(); ev.stopPropagation(); ui.root.focus({ preventScroll: true }); }
      else if (notebook) ui.root.blur();  // back to the notebook
      return;
    }
    if ((ev.ctrlKey || ev.metaKey) && ev.key === "f" && actions["/"]) {  // find: the widget's search, not the page's
      ev.preventDefault(); ev.stopPropagation(); actions["/"](); return;
    }
    if (notebooksKey(ev)) return;  // the notebook's: run, save, ...
    ev.stopPropagation();  // no other key leaks into the notebook (a, b, m, d d ... would edit cells)
    const fn = ev.target === ui.filter ? undefined : actions[ev.key];
    if (!fn) return;
    ev.preventDefault();
    fn();
  };
  window.addEventListener("keydown", onKey, true);
  ui.root.addEventListener("pointerdown", (ev) => { if (ev.target !== ui.filter) ui.root.focus({ preventScroll: true }); });
  return () => window.removeEventListener("keydown", onKey, true);
}
