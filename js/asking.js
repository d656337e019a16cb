// A picture asked of the kernel and not come yet: the canvas dimmed until it comes. An answer lost (the kernel was
// running other cells when the page asked, a reply dropped) never leaves it so: without one for ASK_AGAIN_MS the page
// asks again. So does a selection the kernel never heard of (ipywidgets holds a change back until the kernel's status
// for the one before comes: one status lost, and no later change went): the page asks again with its selection, which
// the kernel takes. Asked again, the status says whether the kernel heard the ask before: how long it has been on the
// picture (its busy message's since), or that it did not answer (it runs another cell, or its connection dropped).
import { ASK_AGAIN_MS } from "./program.js";

/** @typedef {import("./ui.js").Ui} Ui */

/** The waiting for a picture. @param {Ui} ui @param {() => void} ask the page's selection asked for again
 * @param {() => boolean} drawnNow whether the picture drawn is the selection's (nothing is due then) */
export function asking(ui, ask, drawnNow) {
  /** @type {ReturnType<typeof setTimeout>|undefined} */
  let timer;
  let asked = 0;
  /** @type {number|null|undefined} the kernel's answer to the last ask: seconds on it; undefined: none yet */
  let answer;
  const later = () => { clearTimeout(timer); timer = setTimeout(askIfUnanswered, ASK_AGAIN_MS); };
  function notBusy() { ui.canvas.classList.remove("busy"); clearTimeout(timer); asked = 0; }
  /** @param {number|null} [since] the kernel's busy message's */
  function busy(since) {
    if (since !== undefined) answer = since;
    const kernel = answer === undefined ? (asked > 1 ? "; the kernel did not answer the ask before" : "")
      : answer === null ? "" : `; the kernel has been on it ${Math.round(answer)} s`;
    ui.canvas.classList.add("busy");
    ui.status.textContent = asked ? `laying out… (no answer after ${asked * ASK_AGAIN_MS / 1000} s: asked again${kernel})` : "laying out…";
    later();
  }
  function askIfUnanswered() {
    if (drawnNow()) { notBusy(); return; }  // (the selection came back to the picture drawn: nothing is due)
    asked += 1;
    ask();
    busy();
    answer = undefined;
  }
  /** busy(since): the kernel is on it; notBusy(): it came; later(): ask again unless it comes first; stop(). */
  return { busy, notBusy, later, stop: () => clearTimeout(timer) };
}
