// The match typed: a model's step has thousands of matches, which the slider moves through dozens a pixel. The match
// label ("match 401 / 7782") clicked is a box to type one in (0: the whole step; past the last: the last); Enter goes
// there, Escape (or a click elsewhere) leaves it. Its keys come through keys.js, which hears them first.

/** @typedef {import("./ui.js").Ui} Ui */

/** @param {Ui} ui @param {(m: number|null) => void} setMatch @param {() => boolean} usable whether a match can be chosen
 * now (a kernel answers, or the report's page) @returns {(go: boolean) => void} Enter (go) or Escape in the box */
export function matchInput(ui, setMatch, usable) {
  ui.matchLabel.addEventListener("click", () => {
    if (ui.slider.disabled || !usable()) return;
    ui.matchInput.max = ui.slider.max;
    ui.matchInput.value = ui.slider.value;
    ui.matchLabel.hidden = true; ui.matchInput.hidden = false;
    ui.matchInput.focus(); ui.matchInput.select();
  });
  const leave = () => { ui.matchInput.hidden = true; ui.matchLabel.hidden = false; };
  ui.matchInput.addEventListener("blur", leave);
  return (go) => {
    const v = Math.round(Number(ui.matchInput.value)), n = Number(ui.slider.max);
    leave();
    ui.root.focus({ preventScroll: true });  // (the widget's keys again)
    if (go && ui.matchInput.value !== "" && Number.isFinite(v)) { const m = Math.max(0, Math.min(n, v)); setMatch(m === 0 ? null : m - 1); }
  };
}
