// The code panel's lines (tgviz/views/highlight.py's HTML: one `<span class="tgviz-line" data-line="N">` per source line). A
// big kernel's code is tens of thousands of elements (an LSTM step's: 3,186 lines, 77,000 spans), and parsing it whole
// held up the picture it came with by some 300 ms; its lines are put in a block at a time instead: the first block at
// once, the others as they scroll near the panel's view, when a line is asked for (codeLine), and the rest in idle time
// (the browser's find then sees all of it). Until then a block is a placeholder as tall as its lines.

const LINE_TAG = '<span class="tgviz-line" data-line="';
const BLOCK_LINES = 128;  // lines a block holds: the first one fills a tall panel
const WHOLE_LINES = 2 * BLOCK_LINES;  // code of up to this many lines is put in whole, at once

/** A code panel's blocks still to put in: their lines' HTML by block, the observer that puts them in as they near the
 * view, the idle callback that puts the rest in. @typedef {{todo: Map<number, string>, seen: IntersectionObserver,
 *   idle: number}} Pending */
/** @type {WeakMap<HTMLElement, Pending>} */
const unfilled = new WeakMap();

const hasIdle = "requestIdleCallback" in globalThis;  // (not in Safari)
const whenIdle = (/** @type {() => void} */ fn) => (hasIdle ? requestIdleCallback(fn) : setTimeout(fn, 50));
const cancelIdle = (/** @type {number} */ id) => (hasIdle ? cancelIdleCallback(id) : clearTimeout(id));

/** Put one block in, in place of its placeholder. @param {HTMLElement} el @param {Pending} p @param {number} i */
function fillBlock(el, p, i) {
  const html = p.todo.get(i);
  if (html === undefined) return;
  p.todo.delete(i);
  const slot = el.querySelector(`.tgviz-lines-todo[data-block="${i}"]`);
  if (!slot) return;
  p.seen.unobserve(slot);
  slot.insertAdjacentHTML("afterend", html);
  slot.remove();
  if (!p.todo.size) stopFilling(el);
}

/** Stop putting blocks in (the panel shows other code). @param {HTMLElement} el */
function stopFilling(el) {
  const p = unfilled.get(el);
  if (!p) return;
  p.seen.disconnect();
  cancelIdle(p.idle);
  unfilled.delete(el);
}

/** Show highlight.py's HTML of a kernel's code in the panel el ("": none): small code whole, big code a block at a time.
 * @param {HTMLElement} el @param {string} html (pygments output: the source is escaped by pygments) */
export function showCode(el, html) {
  stopFilling(el);
  const parts = html.split(LINE_TAG), last = parts[parts.length - 1], end = last.lastIndexOf("</pre>");
  if (parts.length - 1 <= WHOLE_LINES || end < 0) { el.innerHTML = html; return; }
  const lines = [...parts.slice(1, -1), last.slice(0, end)].map((l) => LINE_TAG + l);
  /** @type {Map<number, string>} */
  const todo = new Map();
  const slots = [];
  for (let i = 0; i * BLOCK_LINES < lines.length; i++) {
    const n = Math.min(BLOCK_LINES, lines.length - i * BLOCK_LINES);
    todo.set(i, lines.slice(i * BLOCK_LINES, i * BLOCK_LINES + n).join(""));
    slots.push(`<span class="tgviz-lines-todo" data-block="${i}" style="--lines: ${n}"></span>`);
  }
  el.innerHTML = parts[0] + slots.join("") + last.slice(end);
  const seen = new IntersectionObserver((entries) => {
    for (const e of entries) if (e.isIntersecting) fillBlock(el, p, Number(/** @type {HTMLElement} */ (e.target).dataset.block));
  }, { root: el, rootMargin: "50% 0px" });
  /** @type {Pending} */
  const p = { todo, seen, idle: 0 };
  unfilled.set(el, p);
  for (const slot of el.querySelectorAll(".tgviz-lines-todo")) seen.observe(slot);
  fillBlock(el, p, 0);
  const rest = () => {  // a block per idle callback
    const next = p.todo.keys().next();
    if (next.done || unfilled.get(el) !== p) return;
    fillBlock(el, p, next.value);
    if (p.todo.size) p.idle = whenIdle(rest);
  };
  p.idle = whenIdle(rest);
}

/** The element of line n (from 1) of the code shown in el, its block put in first where it is not yet; null where the
 * code has no line n. @param {HTMLElement} el @param {number} n @returns {Element|null} */
export function codeLine(el, n) {
  const p = unfilled.get(el);
  if (p && n >= 1) fillBlock(el, p, Math.floor((n - 1) / BLOCK_LINES));
  return el.querySelector(`[data-line="${n}"]`);
}
