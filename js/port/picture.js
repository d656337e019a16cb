// Pictures of steps in the HTML report's page: the port of tgviz/views/picture.py's picture (and the pieces of the model and
// the bridge it draws with) on the report's node tables; layout.js, the port of tgviz/draw/'s scene, dot and svg, makes the DOT text and
// the SVG. Each function mirrors:
//   toposort    bridge.toposort (tinygrad's UOp.toposort), on row ids
//   graphOf     bridge.to_graph (tgviz/bridge/uops.py)
//   diffGraphs  steps.diff_graphs, as node keys
//   picture     picture.picture with picture.scene_of, without its time budget and cache (fold.js folds)
// tests/views/test_js_parity.py holds them equal to the Python on the tests' workloads; tests/browser/test_report_browser.py
// checks the page's pictures too.
import { drawnAs, foldScene } from "./fold.js";
import { capFanIn, focus, layOut, makeScene, sceneSvg } from "./layout.js";

/** @typedef {import("./layout.js").Config} Config */
/** @typedef {import("./layout.js").GNode} GNode */
/** @typedef {import("./layout.js").Graph} Graph */
/** What a folded constant says in its user's label ([op, the first line of its value]; null: only tinygrad can say),
 * 0 for other nodes. @typedef {[string, string|null]|0} Fold */
/** A node table row (tgviz.bridge.NodeTable): [key, family, label lines (the first is the op), source row ids, fold,
 * content id]. @typedef {[string, string, string[], number[], Fold, number]} Row */
/** A content: [the text UOp.key hashes before its sources' keys, the node's own label lines, what folding reads of it
 * ([dtype, intlike, text, shape]: bridge.uops.fold_info)], and the repr of the node's tag where it has one.
 * @typedef {[string, string[], [string, boolean, string|null, string]] | [string, string[], [string, boolean, string|null, string], string]} Content */

/** bridge.toposort: tinygrad's UOp.toposort, on row ids. @param {Row[]} rows @param {number} root */
export function toposort(rows, root) {
  /** @type {Set<number>} */
  const done = new Set();
  const stack = [root];  // a row to visit, or ~row (negative): its sources are done
  while (stack.length) {
    const x = /** @type {number} */ (stack.pop()), n = x < 0 ? ~x : x;
    if (done.has(n)) continue;
    if (x >= 0) {
      stack.push(~n);
      const src = rows[n][3];
      for (let i = src.length - 1; i >= 0; i--) stack.push(src[i]);
    } else done.add(n);
  }
  return [...done];
}

/** bridge.uops._constant: whether a row is a CONST, a STACK of CONSTs, or a RESHAPE or EXPAND of one by a constant
 * shape (a STACK of CONSTs or a CONST). @param {Row[]} rows @param {number} n @returns {boolean} */
function constant(rows, n) {
  const [, , [op], src] = rows[n];
  if (op === "CONST") return true;
  if (op === "STACK") return src.every((s) => rows[s][2][0] === "CONST");
  return (op === "RESHAPE" || op === "EXPAND") && src.length === 2 && ["CONST", "STACK"].includes(rows[src[1]][2][0]) &&
    constant(rows, src[1]) && constant(rows, src[0]);
}

/** A constant's text as tinygrad renders it (bridge.uops._input: UOp.render of a CONST, a STACK of CONSTs
 * `{0,1,2}`, a RESHAPE or EXPAND of one `{0,1,2}.reshape((3,1))`), null for other forms. @param {Row[]} rows
 * @param {Content[]} contents @param {number} n @returns {string|null} */
function constText(rows, contents, n) {
  if (!constant(rows, n)) return null;
  const text = (/** @type {number} */ m) => /** @type {string} */ (contents[rows[m][5]][2][2]);  // a CONST's: str(arg)
  const render = (/** @type {number} */ m) => {
    const [, , [op], src] = rows[m];
    if (op === "CONST") return text(m);
    if (op === "STACK") return `{${src.map(text).join(",")}}`;
    const shape = rows[src[1]][2][0] === "CONST" ? [text(src[1])] : rows[src[1]][3].map(text);
    /** @type {string} */
    const inner = render(src[0]);
    return `${inner}.${op.toLowerCase()}(${shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(",")})`})`;
  };
  return render(n);
}

/** bridge.to_graph (with what folding reads: bridge.uops.fold_info of the node's content, each source's key or, for
 * a constant folded into the label, [its dtype, its text, its op]). @param {Row[]} rows @param {Content[]} contents
 * @param {number} root @param {number[]} [order] its rows in toposort order, where known @returns {Graph} */
export function graphOf(rows, contents, root, order = toposort(rows, root)) {
  /** @type {Map<string, GNode>} */
  const nodes = new Map();
  /** @type {[string, string][]} each once: a node's edges are its own (a row's key is its own in its table) */
  const edges = [];
  for (const n of order) {
    const [key, family, label, src, foldable, content] = rows[n];
    if (n !== root && foldable) continue;
    src.forEach((s, i) => { if (!rows[s][4] && src.indexOf(s) === i) edges.push([rows[s][0], key]); });
    const [dtype, intlike, text, shape] = contents[content][2];
    const inputs = src.map((s) => {
      if (!rows[s][4]) return rows[s][0];
      return /** @type {[string, string|null, string]} */ ([contents[rows[s][5]][2][0], constText(rows, contents, s), rows[s][2][0]]);
    });
    nodes.set(key, { key, op: label[0], family, label, dtype, intlike, text, inputs, shape, holds: [], heldOps: [] });
  }
  return { nodes, edges, root: rows[root][0] };
}

/** steps.diff_graphs, as node keys: {added, removed, changed (before key -> after key)}. @param {Row[]} rows
 * @param {number} before @param {number} after root ids @param {number[]} [bNodes] before's rows in toposort order
 * @param {number[]} [aNodes] after's */
export function diffGraphs(rows, before, after, bNodes = toposort(rows, before), aNodes = toposort(rows, after)) {
  const bSet = new Set(bNodes), aSet = new Set(aNodes);
  /** @type {Map<number, number>} */
  const changed = new Map();
  /** @type {[number, number][]} */
  const todo = [[before, after]];
  while (todo.length) {
    const [b, a] = /** @type {[number, number]} */ (todo.pop());
    if (b === a || aSet.has(b) || bSet.has(a) || changed.has(b)) continue;
    changed.set(b, a);
    const bs = rows[b][3], as = rows[a][3];
    if (bs.length === as.length) for (let i = 0; i < bs.length; i++) todo.push([bs[i], as[i]]);
  }
  const fresh = new Set(changed.values());
  const key = (/** @type {number} */ n) => rows[n][0];
  return { added: new Set(aNodes.filter((u) => !bSet.has(u) && !fresh.has(u)).map(key)),
           removed: new Set(bNodes.filter((u) => !aSet.has(u) && !changed.has(u)).map(key)),
           changed: new Map([...changed].map(([b, a]) => [key(b), key(a)])) };
}

/** picture.picture (with scene_of), without its time budget (in its place, `most`: a whole graph of more nodes is not
 * laid out, its partial view drawn instead, saying so): the SVG of one selection of a step's node table.
 * @param {Config} c @param {{rows: Row[], contents: Content[]}} table @param {number} before @param {number} after root ids
 * @param {string[]} sides @param {string} title @param {string} view "auto", "focus" or "full" @param {number} maxNodes
 * @param {(dot: string) => string} layout runs dot to "plain" output @param {string[]} [around] node keys a partial view
 * is built around (a code line's UOps), instead of what changed @param {boolean} [fold] fold.js's folded view (else raw)
 * @param {[number, number]|null} [match] the row ids of the match's node and replacement (a match's picture)
 * @param {number} [most] the most nodes a whole graph ("full") is laid out with @param {string|null} [note] said first
 * in the banner (the picture's and the message's)
 * @returns {{svg:string, shown:number, total:number, message:string|null, partial:boolean, dot:string}} */
export function picture(c, table, before, after, sides, title, view, maxNodes, layout, around = /** @type {string[]} */ ([]),
                        fold = false, match = /** @type {[number, number]|null} */ (null), most = Infinity, note = /** @type {string|null} */ (null)) {
  const { rows, contents } = table, bNodes = toposort(rows, before), aNodes = toposort(rows, after);
  const d = diffGraphs(rows, before, after, bNodes, aNodes);
  let full = makeScene(graphOf(rows, contents, before, bNodes), graphOf(rows, contents, after, aNodes), d.added, d.removed, d.changed);
  if (match) {  // the match's own nodes: what it replaced, and its replacement (where it took that one's place)
    const inPlace = new Map([...d.changed].map(([b, a]) => [a, b]));
    const [u0, u1] = [rows[match[0]][0], rows[match[1]][0]];
    full.matchNodes = new Set([u0, inPlace.get(u1) ?? u1].filter((k) => full.nodes.has(k)));
  }
  if (fold) {
    const own = [...full.matchNodes];
    full = foldScene(c.fold, full);
    full.matchNodes = new Set(drawnAs(full, own));
    around = drawnAs(full, around);  // a UOp inside a fold: the node that holds it
  }
  full = capFanIn(full, c.maxFanIn);
  const total = full.nodes.size, whole = view === "full" && total <= most;
  const scene = whole ? full : focus(full, view === "full" ? Math.min(maxNodes, most) : maxNodes, c.focusHops, view === "focus", around);
  const { lay, dot } = layOut(c, scene, sides.length, layout);
  const partial = scene.nodes.size < scene.total;
  let message = null;
  const n = (/** @type {number} */ x) => x.toLocaleString("en-US");  // as Python's f"{x:,}"
  if (partial && view === "full") {
    message = `Partial view: ${n(scene.nodes.size)} of ${n(total)} nodes. The whole graph is too big to lay out in the browser (at ` +
              `most ${n(most)} nodes: more takes minutes, or more memory than the page has); step.svg(view='full', timeout=None) in Python lays it out.`;
  } else if (partial) {
    const why = view === "focus" ? "focused view" : `more than the ${n(maxNodes)} a picture draws at first`;
    const what = around.some((k) => full.nodes.has(k)) ? "the code line's UOps" : "what changed";
    message = `Partial view: ${n(scene.nodes.size)} of ${n(total)} nodes, around ${what} (${why}). ` +
              "Full graph: the 'full graph' button, or step.svg(view='full', timeout=None).";
  }
  if (note) message = message ? `${note} ${message}` : note;
  return { svg: sceneSvg(c, scene, lay, sides, title, message), shown: scene.nodes.size, total, message, partial, dot };
}
