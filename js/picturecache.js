// The pictures the kernel (or the report's page) sent, kept by selection: revisiting a step shows it at once.
/** @typedef {import("./messages.js").Selection} Selection */
/** @typedef {import("./messages.js").PictureMsg} PictureMsg */

/** Pictures received, by step key, then view, then match; past `max` steps the least recently used is dropped. */
export class PictureCache {
  /** @param {number} max */
  constructor(max) { this.max = max; /** @type {Map<string, Map<string, Map<number|null, PictureMsg>>>} */ this.steps = new Map(); }
  /** @param {Selection} sel @returns {PictureMsg|undefined} */
  get(sel) {
    const views = this.steps.get(sel.step);
    if (views) { this.steps.delete(sel.step); this.steps.set(sel.step, views); }
    return views?.get(sel.view)?.get(sel.match);
  }
  /** @param {PictureMsg} msg */
  put(msg) {
    const views = this.steps.get(msg.step) ?? new Map();
    this.steps.delete(msg.step);
    this.steps.set(msg.step, views);
    if (!views.has(msg.view)) views.set(msg.view, new Map());
    views.get(msg.view)?.set(msg.match, msg);
    if (this.steps.size > this.max) this.steps.delete(/** @type {string} */ (this.steps.keys().next().value));
  }
}
