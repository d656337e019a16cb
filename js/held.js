// What a folded node holds (tgviz.fold: its SVG group's data-holds and data-held-ops), listed in the node panel: each
// UOp a link that opens the raw graph with it picked (the widget hears the "tgviz-open-raw" event it sends).
import { h } from "./dom.js";
import { plural } from "./units.js";

/** @typedef {import("./ui.js").Ui} Ui */

/** The list of what the node drawn as key holds, or null where it holds nothing else (a node drawn as itself, the raw
 * graph). @param {Ui} ui @param {string} key @returns {HTMLElement|null} */
export function heldList(ui, key) {
  const g = ui.stage.querySelector(`g.node[data-node="${CSS.escape(key)}"][data-holds]`);
  if (!g) return null;
  const keys = (g.getAttribute("data-holds") ?? "").split(" "), ops = (g.getAttribute("data-held-ops") ?? "").split(" ");
  const open = (/** @type {string} */ k) => {
    const a = h("button", { class: "tgviz-link", "data-held": k, title: `the raw graph, ${k} picked` }, [`${ops[keys.indexOf(k)] ?? "?"} ${k.slice(0, 6)}`]);
    a.addEventListener("click", () => ui.root.dispatchEvent(new CustomEvent("tgviz-open-raw", { detail: k })));
    return a;
  };
  return h("div", { class: "tgviz-held" }, [h("b", {}, [`folded: ${plural(keys.length, "UOp")}`]), " (click one: the raw graph, it picked) ",
                                           ...keys.flatMap((k, i) => [i ? ", " : "", open(k)])]);
}
