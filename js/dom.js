// Elements built in one call: the frontends' (widget.js's modules, compare.js) one DOM helper.

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
