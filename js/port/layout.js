// The port of tgviz/draw/scene.py, dot.py and svg.py that the HTML report's page draws with: a scene (the union of a step's before and after
// graphs, marked), focused and fan-in capped, as the same DOT text, and dot's plain output of it as the same SVG.
// Graphviz compiled to WebAssembly (js/vendor/graphviz.js, the same Graphviz 16.1 as the Python side) lays the DOT out.
// Each function mirrors:
//   fmt          Python's f"{x:.Nf}"          text, attr   svg.text, svg.attr (xml.sax.saxutils)
//   makeScene    scene.make_scene             focus        scene.focus            capFanIn   scene.cap_fan_in
//   box          dot._box                     dotOf        dot._dot               parsePlain dot.layout (reading dot's plain output)
//   seen         dot._seen                    layOut       dot.layout (dot run by the caller's function)
//   sideW        dot._side_w                  hiddenText   scene.hidden_text
//   path         svg._path                    nodeSvg      svg._node_svg          sideSvg    svg.side_svg
//   legend       svg._legend                  sceneSvg     svg.scene_svg
// ranks.js, the port of tgviz/draw/ranks.py, says the rows and columns the DOT text puts the nodes in.
// tests/views/test_js_parity.py holds them equal to the Python (DOT text and SVG bytes) on the tests' workloads.

import { columnCuts, rankRows } from "./ranks.js";

/** A drawn node (graph.Node): its key, op, op family and label lines (the first is the op), what folding reads (dtype,
 * intlike, text, inputs, shape: see graph.Node) and, for a folded node, the keys it holds and their ops.
 * @typedef {{key:string, op:string, family:string, label:string[], dtype:string, intlike:boolean, text:string|null,
 *   inputs:(string|[string, string|null, string])[], shape:string, holds:string[], heldOps:string[]}} GNode */
/** A drawable graph (graph.Graph). @typedef {{nodes:Map<string,GNode>, edges:[string,string][], root:string}} Graph */
/** The Python side's drawing constants (tgviz.report.config). @typedef {{style:string, families:[string,string][],
 *   marks:string[], charW:number, lineH:number, pad:number, countH:number, fastAbove:number, maxFanIn:number, focusHops:number,
 *   nodesep:number, ranksep:number, compressTo:[number, number], minRow:number, maxRow:number, maxStagger:number, rowArea:number, maxColumns:number,
 *   fold:import("./fold.js").FoldConfig}} Config */
/** layout.Scene; its edge sets are maps keyed "src dst".
 * @typedef {{nodes:Map<string,GNode>, afterLabel:Map<string,GNode>, edgesBefore:Map<string,[string,string]>,
 *   edgesAfter:Map<string,[string,string]>, onBefore:Set<string>, onAfter:Set<string>, marks:Map<string,string>,
 *   hidden:Map<string,[number,number]>, total:number, matchNodes:Set<string>}} Scene  matchNodes: a match's own nodes */
/** layout.Layout: positions (points, y down) of nodes (centre x, centre y, width, height) and edge splines.
 * @typedef {{width:number, height:number, nodes:Map<string,[number,number,number,number]>,
 *   edges:Map<string,{s:string,d:string,pts:[number,number][]}>}} Layout */

/** Python's f"{x:.{digits}f}": the exact binary value correctly rounded, exact ties to even (toFixed rounds them up).
 * @param {number} x @param {number} digits */
export function fmt(x, digits) {
  const a = Math.abs(x), exact = a.toFixed(60), dot = exact.indexOf(".");
  let out = a.toFixed(digits);
  if (/^50*$/.test(exact.slice(dot + 1 + digits))) {  // an exact tie
    const kept = exact.slice(0, digits ? dot + 1 + digits : dot);
    if (Number(kept[kept.length - 1]) % 2 === 0) out = kept;
  }
  return (x < 0 || Object.is(x, -0) ? "-" : "") + out;
}

const BAD_XML = /[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]/g;
/** layout.text: escaped for SVG content. @param {string} s */
export const text = (s) => s.replace(BAD_XML, "").replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
/** layout.attr: Python's xml.sax.saxutils.quoteattr. @param {string} s */
export function attr(s) {
  const d = text(s).replace(/\n/g, "&#10;").replace(/\r/g, "&#13;").replace(/\t/g, "&#9;");
  if (!d.includes('"')) return `"${d}"`;
  return d.includes("'") ? `"${d.replace(/"/g, "&quot;")}"` : `'${d}'`;
}
/** @param {string} s */
const len = (s) => [...s].length;  // Python's len(): code points

const ek = (/** @type {string} */ s, /** @type {string} */ d) => `${s} ${d}`;
const edgeSet = (/** @type {[string,string][]} */ es) => new Map(es.map((e) => [ek(e[0], e[1]), e]));

/** layout.make_scene. @param {Graph} before @param {Graph} after @param {Set<string>} added @param {Set<string>} removed
 * @param {Map<string, string>} changed before key -> the after key that replaced it in place @returns {Scene} */
export function makeScene(before, after, added, removed, changed) {
  const toLayout = new Map([...changed].map(([b, a]) => [a, b]));
  const lay = (/** @type {string} */ k) => toLayout.get(k) ?? k;
  const nodes = new Map(before.nodes);
  const extra = new Map();
  for (const [k, n] of after.nodes) if (!nodes.has(lay(k))) extra.set(lay(k), n);
  for (const [k, n] of extra) nodes.set(k, n);
  /** @type {Map<string, string>} */
  const marks = new Map();  // a later mark wins, as in Python's dict union
  for (const k of removed) marks.set(k, "removed");
  for (const k of added) marks.set(k, "added");
  for (const k of changed.keys()) marks.set(k, "changed");
  /** @type {Map<string, GNode>} */
  const afterLabel = new Map();
  for (const [b, a] of changed) { const n = after.nodes.get(a); if (n) afterLabel.set(b, n); }
  return { nodes, afterLabel, edgesBefore: edgeSet(before.edges),
           edgesAfter: edgeSet(after.edges.map(([s, d]) => [lay(s), lay(d)])),
           onBefore: new Set(before.nodes.keys()), onAfter: new Set([...after.nodes.keys()].map(lay)), marks,
           hidden: new Map(), total: 0, matchNodes: new Set() };
}

/** layout.focus. @param {Scene} scene @param {number} maxNodes @param {number} hops @returns {Scene} */
export function focus(scene, maxNodes, hops, force = false, around = /** @type {string[]} */ ([])) {
  scene.total = scene.total || scene.nodes.size;
  if (scene.nodes.size <= maxNodes && !force) return scene;
  const edges = new Map([...scene.edgesBefore, ...scene.edgesAfter]);
  /** @type {Map<string, Set<string>>} */
  const nbrs = new Map([...scene.nodes.keys()].map((k) => [k, new Set()]));
  for (const [s, d] of edges.values()) { nbrs.get(s)?.add(d); nbrs.get(d)?.add(s); }
  let seeds = around.filter((k) => scene.nodes.has(k));
  if (!seeds.length) {
    const keys = [...scene.nodes.keys()];
    seeds = [...keys.filter((k) => scene.matchNodes.has(k)), ...keys.filter((k) => scene.marks.has(k) && !scene.matchNodes.has(k))];
  }
  if (!seeds.length) seeds = [/** @type {string} */ ([...scene.nodes.keys()].pop())];
  /** @type {Set<string>} */
  const keep = new Set();
  /** @type {[string, number][]} */
  const todo = seeds.map((s) => [s, 0]);
  for (let i = 0; i < todo.length && keep.size < maxNodes; i++) {
    const [k, h] = todo[i];
    if (keep.has(k)) continue;
    keep.add(k);
    if (h < hops) for (const n of [...(nbrs.get(k) ?? [])].sort()) if (!keep.has(n)) todo.push([n, h + 1]);
  }
  /** @type {Map<string, [number, number]>} */
  const hidden = new Map([...keep].map((k) => [k, [0, 0]]));
  for (const [s, d] of edges.values()) {
    const into = hidden.get(d), from = hidden.get(s);
    if (into && !keep.has(s)) into[0] += 1;
    if (from && !keep.has(d)) from[1] += 1;
  }
  const inKeep = (/** @type {Map<string, [string,string]>} */ es) => new Map([...es].filter(([, [s, d]]) => keep.has(s) && keep.has(d)));
  return { nodes: new Map([...scene.nodes].filter(([k]) => keep.has(k))),
           afterLabel: new Map([...scene.afterLabel].filter(([k]) => keep.has(k))),
           edgesBefore: inKeep(scene.edgesBefore), edgesAfter: inKeep(scene.edgesAfter),
           onBefore: new Set([...scene.onBefore].filter((k) => keep.has(k))),
           onAfter: new Set([...scene.onAfter].filter((k) => keep.has(k))), marks: scene.marks,
           hidden: new Map([...hidden].filter(([, [i, o]]) => i || o)), total: scene.total,
           matchNodes: new Set([...scene.matchNodes].filter((k) => keep.has(k))) };
}

/** layout.cap_fan_in. @param {Scene} scene @param {number} limit @returns {Scene} */
export function capFanIn(scene, limit) {
  const order = new Map([...scene.nodes.keys()].map((k, i) => [k, i]));
  const at = (/** @type {string} */ k) => /** @type {number} */ (order.get(k));
  /** @param {Map<string,[string,string]>} edges @returns {[Map<string,[string,string]>, Map<string, number>]} */
  const capped = (edges) => {
    /** @type {Map<string, [string,string][]>} */
    const into = new Map();
    const sorted = [...edges.values()].sort((a, b) => (at(a[1]) - at(b[1])) || (at(a[0]) - at(b[0])));
    for (const e of sorted) { const es = into.get(e[1]); if (es) es.push(e); else into.set(e[1], [e]); }
    return [edgeSet([...into.values()].flatMap((es) => es.slice(0, limit))),
            new Map([...into].filter(([, es]) => es.length > limit).map(([d, es]) => [d, es.length - limit]))];
  };
  const [before, cutB] = capped(scene.edgesBefore), [after, cutA] = capped(scene.edgesAfter);
  if (!cutB.size && !cutA.size) return scene;
  const hidden = new Map(scene.hidden);
  for (const k of [...scene.nodes.keys()].filter((k) => cutB.has(k) || cutA.has(k))) {
    const [i, o] = hidden.get(k) ?? [0, 0];
    hidden.set(k, [i + Math.max(cutB.get(k) ?? 0, cutA.get(k) ?? 0), o]);
  }
  return { ...scene, edgesBefore: before, edgesAfter: after, hidden };
}

/** layout._hidden_text. @param {number} count @param {string} what */
const hiddenText = (count, what) => `… ${count} ${what}`;

/** layout._box. @param {Config} c @param {string[][]} labels */
function box(c, ...labels) {
  const lines = labels.flat();
  return [Math.max(...lines.map(len)) * c.charW + 2 * c.pad, Math.max(...labels.map((l) => l.length)) * c.lineH + 2 * c.pad];
}

/** Python's f"{x:g}" for the few plain numbers the DOT options hold. @param {number} x */
const g = (x) => String(Number(x.toPrecision(6)));

/** layout._dot: the DOT text and the layout ids in order. @param {Config} c @param {Scene} scene @param {boolean} fast
 * @param {number} [cols] columns the graph is wrapped into @param {number} [sides] copies of the layout a picture draws */
export function dotOf(c, scene, fast, cols = 1, sides = 1) {
  const where = (/** @type {string} */ k) => Number(scene.onBefore.has(k)) - Number(scene.onAfter.has(k));
  const ids = [...[...scene.nodes.keys()].sort((a, b) => where(a) - where(b)), ...[...scene.hidden].filter(([, [i]]) => i).map(([k]) => `${k}:in`),
               ...[...scene.hidden].filter(([, [, o]]) => o).map(([k]) => `${k}:out`)];
  const name = new Map(ids.map((k, i) => [k, `n${i}`]));
  const opts = `nodesep=${g(c.nodesep / 72)} ranksep=${g(c.ranksep / 72)}` +
    (fast ? " mclimit=0.1 nslimit=1 nslimit1=1 searchsize=5 splines=line" : ` ratio=compress size="${g(sideW(c, sides))},${g(c.compressTo[1])}"`);
  const out = [`digraph G { graph [${opts}]; node [shape=box fixedsize=true label=""];`];
  /** @type {Map<string, number>} */
  const widths = new Map();
  /** @type {Map<string, number>} */
  const heights = new Map();
  for (const k of ids.slice(0, scene.nodes.size)) {
    const after = scene.afterLabel.get(k);
    const [w, h] = box(c, /** @type {GNode} */ (scene.nodes.get(k)).label, ...(after ? [after.label] : []));
    widths.set(k, w); heights.set(k, h);
    out.push(`${name.get(k)} [width=${fmt(w / 72, 3)} height=${fmt(h / 72, 3)}];`);
  }
  /** @type {[string, string][]} */
  const edges = [];
  for (const [k, [i, o]] of scene.hidden) {
    for (const [suffix, count, what] of /** @type {const} */ ([[":in", i, "inputs"], [":out", o, "users"]])) {
      if (!count) continue;
      const [w] = box(c, [hiddenText(count, what)]), h = c.countH;
      widths.set(k + suffix, w); heights.set(k + suffix, h);
      out.push(`${name.get(k + suffix)} [width=${fmt(w / 72, 3)} height=${fmt(h / 72, 3)}];`);
      edges.push(suffix === ":in" ? [k + suffix, k] : [k, k + suffix]);
    }
  }
  const order = new Map(ids.map((k, i) => [k, i]));
  const at = (/** @type {string} */ k) => /** @type {number} */ (order.get(k));
  edges.push(...[...new Map([...scene.edgesBefore, ...scene.edgesAfter]).values()]
    .sort((a, b) => (at(a[0]) - at(b[0])) || (at(a[1]) - at(b[1]))));
  const rank = rankRows(c, ids, edges, widths, heights, sides);
  const rk = (/** @type {string} */ k) => /** @type {number} */ (rank.get(k));
  // a tall graph wrapped into columns side by side: each a cluster, its ranks as above less its first's (the edges
  // between columns constrain nothing)
  const cuts = cols > 1 ? columnCuts(c, rank, heights, edges, cols) : [];
  const column = new Map(ids.map((k) => [k, cuts.filter((cut) => rk(k) >= cut).length]));
  if (cuts.length) {  // each column's top held in one row by an invisible anchor, the columns in order left to right
    const anchors = cuts.concat([0]).map((_, col) => `a${col}`);
    out.push(`graph [newrank=true]; node [width=0.01 height=0.01]; { rank=same; ${anchors.join(" ")} }`);
    anchors.forEach((a, col) => {
      const members = ids.filter((k) => column.get(k) === col);
      out.push(`subgraph cluster${col} { ${a} ${members.map((k) => name.get(k)).join(" ")} }`);
      const top = members.reduce((t, k) => (rk(k) < rk(t) ? k : t));
      out.push(`${a} -> ${name.get(top)} [style=invis weight=0];`);
    });
    out.push(`${anchors.join(" -> ")} [style=invis];`);
  }
  for (const [s, d] of edges) {
    const m = rk(d) - rk(s);
    out.push(`${name.get(s)} -> ${name.get(d)}` +
             (column.get(s) !== column.get(d) ? " [constraint=false];" : m > 1 ? ` [minlen=${m}];` : ";"));
  }
  out.push("}");
  return { dot: out.join("\n"), ids };
}

/** layout.layout's reading of dot's plain output. @param {string} plain @param {string[]} ids @returns {Layout} */
export function parsePlain(plain, ids) {
  const byName = new Map(ids.map((k, i) => [`n${i}`, k]));
  const id = (/** @type {string} */ name) => /** @type {string} */ (byName.get(name));
  let width = 0, height = 0;
  /** @type {Layout["nodes"]} */
  const nodes = new Map();
  /** @type {Layout["edges"]} */
  const edges = new Map();
  for (const line of plain.split("\n")) {
    const p = line.trim().split(/\s+/);
    if (!p[0]) continue;
    if (p[0] === "graph") { width = Number(p[2]) * 72; height = Number(p[3]) * 72; }
    else if (!byName.has(p[1])) continue;  // a wrapped graph's column anchors, a<i>
    else if (p[0] === "node") nodes.set(id(p[1]), [Number(p[2]) * 72, height - Number(p[3]) * 72, Number(p[4]) * 72, Number(p[5]) * 72]);
    else if (p[0] === "edge") {
      const n = Number(p[3]), s = id(p[1]), d = id(p[2]);
      /** @type {[number, number][]} */
      const pts = [];
      for (let i = 0; i < n; i++) pts.push([Number(p[4 + 2 * i]) * 72, height - Number(p[5 + 2 * i]) * 72]);
      edges.set(ek(s, d), { s, d, pts });
    }
  }
  return { width, height, nodes, edges };
}

/** layout._side_w: the width (inches) one of `sides` copies of a layout side by side gets of the maximised canvas.
 * @param {Config} c @param {number} sides */
const sideW = (c, sides) => (c.compressTo[0] * 72 - (sides - 1) * 40) / sides / 72;
/** layout._seen: the share of a picture of `sides` copies of the layout that the maximised canvas shows at 11 px, were
 * its nodes spread evenly. @param {Config} c @param {Layout} lay @param {number} sides */
const seen = (c, lay, sides) => Math.min(1, c.compressTo[0] * 72 / (sides * lay.width + (sides - 1) * 40)) *
  Math.min(1, c.compressTo[1] * 72 / lay.height);

/** layout.layout: dot's layout of the scene (run by `layout`, to "plain" output), a tall graph of up to fastAbove nodes
 * also wrapped into 2 columns, kept where the canvas shows more of it, and while still too tall into 3; with the DOT
 * text it laid out.
 * @param {Config} c @param {Scene} scene @param {number} sides @param {(dot: string) => string} layout
 * @returns {{lay: Layout, dot: string}} */
export function layOut(c, scene, sides, layout) {
  const fast = scene.nodes.size > c.fastAbove;
  const laid = (/** @type {number} */ cols) => { const { dot, ids } = dotOf(c, scene, fast, cols, sides); return { lay: parsePlain(layout(dot), ids), dot }; };
  let best = laid(1);
  const wraps = best.lay.height <= c.maxColumns * c.compressTo[1] * 72;  // (taller, no columns fit it)
  for (let cols = 2; cols <= c.maxColumns; cols++) {
    if (fast || !wraps || best.lay.height <= c.compressTo[1] * 72) break;
    const now = laid(cols);
    if (now.lay.width > 4 * now.lay.height || seen(c, now.lay, sides) <= seen(c, best.lay, sides)) break;  // more columns: wider still
    best = now;
  }
  return best;
}

/** layout._path. @param {[number, number][]} pts */
function path(pts) {
  let d = `M${fmt(pts[0][0], 1)},${fmt(pts[0][1], 1)}`;
  if (pts.length >= 4 && (pts.length - 1) % 3 === 0) {
    for (let i = 1; i < pts.length; i += 3)
      d += ` C${fmt(pts[i][0], 1)},${fmt(pts[i][1], 1)} ${fmt(pts[i + 1][0], 1)},${fmt(pts[i + 1][1], 1)} ${fmt(pts[i + 2][0], 1)},${fmt(pts[i + 2][1], 1)}`;
  } else for (const [x, y] of pts.slice(1)) d += ` L${fmt(x, 1)},${fmt(y, 1)}`;
  return d;
}

/** layout._node_svg. @param {Config} c @param {string} side @param {GNode} n @param {string|undefined} mark
 * @param {[number, number, number, number]} box centre x, centre y, width, height @param {boolean} [match] */
function nodeSvg(c, side, n, mark, [x, y, w, h], match = false) {
  const holds = n.holds;
  const cls = `node fam-${n.family}` + (n.intlike ? " intlike" : "") + (mark ? ` ${mark}` : "") + (holds.length ? " fold" : "") + (match ? " match-node" : "");
  const lines = n.label.map((ln, i) => `<tspan x="${c.pad}" y="${fmt(c.pad + (i + 0.85) * c.lineH, 1)}">${text(ln)}</tspan>`).join("");
  const title = n.label.join("\n") + (mark ? `\n[${mark}]` : "") + (holds.length ? `\n[folded: ${holds.length} UOp${holds.length === 1 ? "" : "s"}]` : "");
  return `<g class=${attr(cls)} id=${attr(`${side}-${n.key}`)} data-node=${attr(n.key)} data-op=${attr(n.op)}` +
    (holds.length ? ` data-holds=${attr(holds.join(" "))} data-held-ops=${attr(n.heldOps.join(" "))}` : "") + " " +
    `transform="translate(${fmt(x - w / 2, 1)},${fmt(y - h / 2, 1)})"><title>${text(title)}</title>` +
    `<rect width="${fmt(w, 1)}" height="${fmt(h, 1)}" rx="3"/><text>${lines}</text></g>`;
}

/** layout.side_svg. @param {Config} c @param {Scene} scene @param {Layout} lay @param {string} side */
function sideSvg(c, scene, lay, side) {
  const present = side === "before" ? scene.onBefore : scene.onAfter;
  const edges = side === "before" ? scene.edgesBefore : scene.edgesAfter;
  const own = side === "before" ? ["removed", "changed"] : ["added", "changed"];
  const out = ['<g class="edges">'];
  for (const [k, { s, d, pts }] of lay.edges) {
    if (edges.has(k) || (present.has(s.split(":")[0]) && present.has(d.split(":")[0]) && (s.includes(":") || d.includes(":"))))
      out.push(`<path class="edge" data-from=${attr(s)} data-to=${attr(d)} d="${path(pts)}" marker-end="url(#tgviz-arrow)"/>`);
  }
  out.push("</g>");
  const place = (/** @type {string} */ k) => /** @type {[number, number, number, number]} */ (lay.nodes.get(k));
  for (const [k, n] of scene.nodes) {
    if (!present.has(k)) continue;
    const shown = side === "after" ? (scene.afterLabel.get(k) ?? n) : n;
    const mark = scene.marks.get(k);
    out.push(nodeSvg(c, side, shown, mark && own.includes(mark) ? mark : undefined, place(k), scene.matchNodes.has(k)));
  }
  for (const [k, [i, o]] of scene.hidden) {
    if (!present.has(k)) continue;
    for (const [suffix, count, what] of /** @type {const} */ ([[":in", i, "inputs"], [":out", o, "users"]])) {
      if (!count) continue;
      const [x, y, w, h] = place(k + suffix);
      out.push(`<g class="hidden-count" data-for=${attr(k)} transform="translate(${fmt(x - w / 2, 1)},${fmt(y - h / 2, 1)})">` +
               `<rect width="${fmt(w, 1)}" height="${fmt(h, 1)}" rx="8"/><text x="${c.pad}" y="${fmt(h / 2 + 3, 1)}">${hiddenText(count, what)}` +
               "</text></g>");
    }
  }
  return out.join("");
}

/** layout._legend. @param {Config} c @param {number} x @param {number} y @returns {[string, number]} */
function legend(c, x, y) {
  const items = [...c.families.map(([f, name]) => [`fam-${f}`, name]), ...c.marks.map((m) => [m, m])];
  const out = [`<g class="legend" transform="translate(${fmt(x, 1)},${fmt(y, 1)})">`];
  let cx = 0;
  for (const [cls, name] of items) {
    out.push(`<g class="node ${cls}" transform="translate(${fmt(cx, 1)},0)"><rect width="12" height="12"/><text x="16" y="10">${text(name)}</text></g>`);
    cx += 16 + len(name) * c.charW + 14;
  }
  out.push("</g>");
  return [out.join(""), cx];
}

/** layout.scene_svg. @param {Config} c @param {Scene} scene @param {Layout} lay @param {string[]} sides
 * @param {string} title @param {string|null} message */
export function sceneSvg(c, scene, lay, sides, title, message) {
  const gap = 40, top = 44 + (message ? 18 : 0);
  const [leg, legendW] = legend(c, 10, top - 22);
  const width = Math.max(sides.length * lay.width + (sides.length - 1) * gap + 20, legendW + 20, len(title) * 8);
  const height = lay.height + top + 30;
  const out = [`<svg xmlns="http://www.w3.org/2000/svg" class="tgviz-graph" width="${fmt(width, 0)}" height="${fmt(height, 0)}" ` +
               `viewBox="0 0 ${fmt(width, 0)} ${fmt(height, 0)}">`, `<style>${c.style}</style>`,
               '<defs><marker id="tgviz-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" ' +
               'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#666"/></marker></defs>',
               '<rect width="100%" height="100%" fill="#ffffff"/>', `<text class="title" x="10" y="16">${text(title)}</text>`];
  if (message) out.push(`<text class="banner" x="10" y="32">${text(message)}</text>`);
  out.push(leg);
  sides.forEach((side, i) => {
    const x = 10 + i * (lay.width + gap);
    out.push(`<g class="side" data-side="${side}" transform="translate(${fmt(x, 1)},${fmt(top + 16, 1)})">` +
             `<text class="title" x="0" y="-4">${side}</text>${sideSvg(c, scene, lay, side)}</g>`);
  });
  out.push("</svg>");
  return out.join("");
}
