// The code panel's lines (tgviz/views/highlight.py's HTML: one `<span class="tgviz-line" data-line="N">` per source line). A
// big kernel's code is tens of thousands of elements (an LSTM step's: 3,186 lines, 77,000 spans), and parsing it whole
// held up the picture it came with by some 300 ms; its lines are put in a block at a time instead: the first block at
// once, the others as they scroll near the panel's view, when a line is asked for (codeLine), and the rest in idle time
// (the browser's find then sees all of it). Until then a block is a placeholder as tall as its lines.
//
// A line longer than the column wraps (widget.css). Code put in whole is laid out whole (its height exact); in a big
// kernel's, lines off screen are not laid out (content-visibility): each is
// as tall as the rows it is estimated to take at the panel's width, from its length and indentation in characters
// (highlight.py's --len, --in) and the characters a row holds (--tg-cols, set here from the panel's width, kept right
// as it is resized: a ResizeObserver); a placeholder is the sum of its lines' estimates. So the panel is about as tall
// when drawn as once every line is laid out, and scrolling to a place shows the lines that will be there.

const LINE_TAG = '<span class="tgviz-line" data-line="';
const BLOCK_LINES = 128;  // lines a block holds: the first one fills a tall panel
const WHOLE_LINES = 2 * BLOCK_LINES;  // code of up to this many lines is put in whole, at once

/** A code panel's blocks still to put in: their lines' HTML and sizes by block, the observer that puts them in as they
 * near the view, the idle callback that puts the rest in. @typedef {{todo: Map<number, {html: string, sizes: Sizes}>,
 *   seen: IntersectionObserver, idle: number}} Pending */
/** @type {WeakMap<HTMLElement, Pending>} */
const unfilled = new WeakMap();

const hasIdle = "requestIdleCallback" in globalThis;  // (not in Safari)
const whenIdle = (/** @type {() => void} */ fn) => (hasIdle ? requestIdleCallback(fn) : setTimeout(fn, 50));
const cancelIdle = (/** @type {number} */ id) => (hasIdle ? cancelIdleCallback(id) : clearTimeout(id));

const FIXED_PX = 27;  // a line's padding right (8px) and its number's padding, margin and border (19px): widget.css
const PROBE_CHARS = 100;

/** A code panel's measures: a character's width in px, its numbers' digits, the characters a
 * row holds after the number (--tg-cols; 0: not known yet). @typedef {{ch: number, digits: number, cols: number}} Measures */
/** @type {WeakMap<HTMLElement, Measures>} */
const panelMeasures = new WeakMap();
/** @type {ResizeObserver|null} */
let panelResized = null;

/** The rows a line of len characters, indented by ind, takes where a row holds cols (its continuations hang 4 + ind
 * further in, and hold cap): its characters past the first row over what a continuation holds, less the room a wrap
 * leaves empty (w: highlight.py's --w, a token that does not fit goes to the next row). Where a continuation holds
 * little more than a token (cap < 3w) less is left empty (a token longer than the row overflows it: none), and a row
 * takes at least 1.5w. widget.css's contain-intrinsic-block-size is the same sum: measured in Chromium on 36 kernels,
 * the panels' heights are within 0.6% on average (6% at most) of their laid-out heights at 263 px, 0.2% (2%) at
 * 350 px; at 200 px and under (the least the column has), 6-9% (20%).
 * @param {number} len @param {number} ind @param {number} w @param {number} cols */
function rowsOf(len, ind, w, cols) {
  if (len <= cols) return 1;
  const cap = cols - 4 - ind, left = Math.min(w, Math.max(0, cap - 2 * w));
  return 1 + Math.max(0, Math.ceil((len - cols + left) / Math.max(1, cap - left, 1.5 * w)));
}

/** A block's lines' sizes in characters: length, indentation and room a wrap leaves, read from highlight.py's
 * style="--in:N;--len:M;--w:X". @typedef {{lens: Int32Array, ins: Int32Array, ws: Float32Array}} Sizes */
/** @param {string[]} lines the lines' HTML @returns {Sizes} */
function sizesOf(lines) {
  const lens = new Int32Array(lines.length), ins = new Int32Array(lines.length), ws = new Float32Array(lines.length);
  lines.forEach((l, i) => {
    const tag = l.slice(LINE_TAG.length, l.indexOf(">"));
    lens[i] = Number(/--len:\s*(\d+)/.exec(tag)?.[1] ?? 0);
    ins[i] = Number(/--in:\s*(\d+)/.exec(tag)?.[1] ?? 0);
    ws[i] = Number(/--w:\s*([\d.]+)/.exec(tag)?.[1] ?? 0);
  });
  return { lens, ins, ws };
}

/** The rows a block's lines take, estimated (one a line where the width is not known). @param {Sizes} s @param {number} cols */
function blockRows(s, cols) {
  if (!cols) return s.lens.length;
  let rows = 0;
  for (let i = 0; i < s.lens.length; i++) rows += rowsOf(s.lens[i], s.ins[i], s.ws[i], cols);
  return rows;
}

/** A character's width in the panel el, in px (0: el is not shown). @param {HTMLElement} el */
function charWidth(el) {
  const probe = document.createElement("span");
  probe.style.cssText = "position: absolute; visibility: hidden; white-space: pre";
  probe.textContent = "0".repeat(PROBE_CHARS);
  el.append(probe);
  const w = probe.offsetWidth / PROBE_CHARS;
  probe.remove();
  return w;
}

/** Set the characters a row of the panel el holds (--tg-cols) from its width, and its placeholders' heights, where
 * they changed. @param {HTMLElement} el */
function fitPanel(el) {
  const m = panelMeasures.get(el);
  if (!m || !el.clientWidth) return;  // not shown: fitted when it is
  if (!m.ch) m.ch = charWidth(el);
  if (!m.ch) return;
  const cols = Math.max(1, Math.floor((el.clientWidth - FIXED_PX) / m.ch - m.digits));
  if (cols === m.cols) return;
  m.cols = cols;
  el.style.setProperty("--tg-cols", String(cols));
  const p = unfilled.get(el);
  if (!p) return;
  for (const [i, b] of p.todo) {
    /** @type {HTMLElement|null} */
    const slot = el.querySelector(`.tgviz-lines-todo[data-block="${i}"]`);
    slot?.style.setProperty("--lines", String(blockRows(b.sizes, cols)));
  }
}

/** Keep the estimated rows of the code lines in the panel el right at its width, now and as it is resized (the code
 * shown in it changed: its numbers' digits may have). @param {HTMLElement} el */
export function fitLines(el) {
  const hl = /** @type {HTMLElement|null} */ (el.querySelector(".highlight"));
  const digits = parseFloat(hl?.style.getPropertyValue("--tg-ln") ?? "") || 3;
  let m = panelMeasures.get(el);
  if (!m) {
    panelMeasures.set(el, m = { ch: 0, digits, cols: 0 });
    panelResized ??= new ResizeObserver((entries) => {
      for (const e of entries) {
        const t = /** @type {HTMLElement} */ (e.target), mt = panelMeasures.get(t);
        if (mt) { mt.ch = 0; fitPanel(t); }  // (the font may have changed with the theme)
      }
    });
    panelResized.observe(el);
  }
  if (m.digits !== digits) { m.digits = digits; m.cols = 0; }
  fitPanel(el);
}

/** Put one block in, in place of its placeholder. @param {HTMLElement} el @param {Pending} p @param {number} i */
function fillBlock(el, p, i) {
  const html = p.todo.get(i)?.html;
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
  const whole = parts.length - 1 <= WHOLE_LINES || end < 0;
  el.classList.toggle("tgviz-code-whole", whole);  // laid out whole too (widget.css): its height is no estimate
  if (whole) { el.innerHTML = html; fitLines(el); return; }
  const lines = [...parts.slice(1, -1), last.slice(0, end)].map((l) => LINE_TAG + l);
  /** @type {Pending["todo"]} */
  const todo = new Map();
  const slots = [];
  for (let i = 0; i * BLOCK_LINES < lines.length; i++) {
    const block = lines.slice(i * BLOCK_LINES, (i + 1) * BLOCK_LINES);
    todo.set(i, { html: block.join(""), sizes: sizesOf(block) });
    slots.push(`<span class="tgviz-lines-todo" data-block="${i}"></span>`);
  }
  el.innerHTML = parts[0] + slots.join("") + last.slice(end);
  const seen = new IntersectionObserver((entries) => {
    for (const e of entries) if (e.isIntersecting) fillBlock(el, p, Number(/** @type {HTMLElement} */ (e.target).dataset.block));
  }, { root: el, rootMargin: "50% 0px" });
  /** @type {Pending} */
  const p = { todo, seen, idle: 0 };
  unfilled.set(el, p);
  const cols = panelMeasures.get(el)?.cols ?? 0;  // (until fitLines knows the width: one row a line)
  for (const slot of /** @type {NodeListOf<HTMLElement>} */ (el.querySelectorAll(".tgviz-lines-todo"))) {
    slot.style.setProperty("--lines", String(blockRows(/** @type {{sizes: Sizes}} */ (todo.get(Number(slot.dataset.block))).sizes, cols)));
    seen.observe(slot);
  }
  fitLines(el);
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
