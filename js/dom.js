// Elements built in one call: the frontends' (widget.js's modules, compare.js) DOM helpers, HTML and SVG.

/** An element with attributes and children (nodes or text).
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag @param {Record<string,string>} [attrs] @param {(Node|string)[]} [kids]
 * @returns {HTMLElementTagNameMap[K]} */
export function h(tag, attrs = {}, kids = []) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  for (const k of kids) e.append(k);
  return e;
}

/** An SVG element with attributes and children. @param {string} tag @param {Record<string, string|number>} attrs
 * @param {(Node|string)[]} [kids] @returns {SVGElement} */
export function svgEl(tag, attrs, kids = []) {
  const e = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  for (const k of kids) e.append(k);
  return e;
}

const ENTITIES = /** @type {Record<string, string>} */ ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" });
/** Text escaped for HTML content and quoted attribute values (many elements at once are faster written as HTML).
 * @param {string} s */
export const escapeHtml = (s) => s.replace(/[&<>"']/g, (c) => ENTITIES[c]);

/** Bring el into view within the box that scrolls it, the first of its ancestors up to its widget's root
 * (.tgviz-root, .tgviz-compare) that scrolls: centred there (block "nearest": only as far as shows it whole) where it is
 * not whole in that box's view. Only that box moves: scrollIntoView scrolled every scrolling ancestor too, and in a
 * notebook a click on a tree row cut at the tree's edge made the notebook jump. @param {Element|null|undefined} el
 * @param {"center"|"nearest"} [block] */
export function scrollWithin(el, block = "center") {
  if (!el) return;
  let box = el.parentElement;
  for (; box && !box.matches(".tgviz-root, .tgviz-compare"); box = box.parentElement)
    if (/(auto|scroll)/.test(getComputedStyle(box).overflowY) && box.scrollHeight > box.clientHeight) break;
  if (!box || box.matches(".tgviz-root, .tgviz-compare")) return;
  const r = el.getBoundingClientRect(), b = box.getBoundingClientRect();
  if (r.top >= b.top && r.bottom <= b.bottom) return;
  box.scrollTop += block === "center" ? r.top + r.height / 2 - (b.top + b.height / 2) : r.top < b.top ? r.top - b.top : r.bottom - b.bottom;
}
