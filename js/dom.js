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
