// Folding in the HTML report's page: the port of tgviz/draw/fold.py (a view of a scene that draws less: index arithmetic as
// tinygrad renders it, constants in their users' labels, lanes as one node ×N; marked nodes always as themselves).
// Each function mirrors:
//   stripParens  fold.strip_parens (tinygrad.helpers.strip_parens)     renderNode fold.render (tinygrad/uop/render.py)
//   foldAnalysis fold._Analysis                                         unitEdges  fold._Analysis.unit_edges
//   lanes        fold.lanes                                             laneClasses fold._classes
//   masked       fold.masked                                            unitNode   fold._unit_node
//   chunked      fold._chunks                                           cutLine    fold._cut
//   heldBy       fold._held
//   foldScene    fold.fold                                              drawnAs    fold.drawn_as
// tests/views/test_js_parity.py holds them equal to the Python (the DOT text and SVG of folded pictures).

/** @typedef {import("./layout.js").GNode} GNode */
/** @typedef {import("./layout.js").Scene} Scene */
/** The drawing constants fold.py sends (tgviz.report.config). @typedef {{syms: Record<string, string>,
 *   precedence: Record<string, number>, exprOps: string[], weak: string[], laneOps: string[], gatherOps: string[],
 *   chainOps: string[], listOps: string[], line: number, maxText: number}} FoldConfig */
/** @typedef {{users: Map<string, string[]>, text: Map<string, string>, konst: Set<string>, expr: Set<string>,
 *   ops: Set<string>, hidden: Set<string>, holds: Map<string, string[]>, owners: Map<string, string[]>}} Analysis */

/** Python's len(): code points. @param {string} s */
const codePoints = (s) => [...s].length;

/** fold.strip_parens. @param {string} s */
export function stripParens(s) {
  if (!(s.startsWith("(") && s.endsWith(")") && s.length >= 2)) return s;
  let depth = 0;
  for (const c of s.slice(1, -1)) {
    depth += (c === "(" ? 1 : 0) - (c === ")" ? 1 : 0);
    if (depth < 0) return s;
  }
  return depth === 0 ? s.slice(1, -1) : s;
}

/** fold.render: tinygrad's renderer on one node. @param {FoldConfig} f @param {GNode} n @param {string[]} args
 * @param {string[]} ops @param {string[]} consts */
export function renderNode(f, n, args, ops, consts) {
  const op = n.op;
  if (op === "CAST") return f.weak.includes(consts[0]) ? args[0] : `(${n.dtype})(${args[0]})`;
  if (op === "NEG") return `(-${args[0]})`;
  if (op === "MAX") return `max(${args[0]}, ${args[1]})`;
  if (op === "WHERE") return `(${args[1]} if ${args[0]} else ${args[2]})`;
  if (op === "CDIV" || op === "CMOD") return `${op.toLowerCase()}(${args[0]}, ${args[1]})`;
  let [a, b] = args;
  const p = f.precedence;
  if (op in p) {
    if ((p[ops[0]] ?? 99) <= p[op]) a = stripParens(a);
    if ((p[ops[1]] ?? 99) < p[op]) b = stripParens(b);
  }
  return `(${a}${f.syms[op]}${b})`;
}

/** fold._Analysis. @param {FoldConfig} f @param {Scene} scene @returns {Analysis} */
function foldAnalysis(f, scene) {
  const nodes = scene.nodes, marks = scene.marks;
  /** @type {Map<string, string[]>} */
  const users = new Map([...nodes.keys()].map((k) => [k, []]));
  for (const es of [scene.edgesBefore, scene.edgesAfter]) for (const [s, d] of es.values()) if (nodes.has(d)) users.get(s)?.push(d);
  /** @type {Map<string, string>} */
  const text = new Map();
  const konst = new Set(), expr = new Set(), ops = new Set();
  for (const [k, n] of nodes) {
    if (marks.has(k)) continue;
    if (n.text !== null) {
      if (n.intlike) { text.set(k, n.text); expr.add(k); }
      continue;
    }
    const arity = n.op === "WHERE" ? 3 : n.op === "CAST" || n.op === "NEG" ? 1 : 2;
    if (!f.exprOps.includes(n.op) || n.inputs.length !== arity) continue;
    const args = [], srcOps = [], consts = [];
    let isConst = true, ok = true;
    for (const i of n.inputs) {
      if (typeof i === "string") {
        const t = text.get(i);
        if (t === undefined) { ok = false; break; }
        args.push(t); srcOps.push(/** @type {GNode} */ (nodes.get(i)).op); consts.push(""); isConst = isConst && konst.has(i);
      } else {
        if (i[1] === null) { ok = false; break; }
        args.push(i[1]); srcOps.push("CONST"); consts.push(i[2] === "CONST" ? i[0] : "");  // a vector: (int)({0,1})
      }
    }
    if (!ok || (!n.intlike && n.op !== "CAST")) continue;
    const t = renderNode(f, n, args, srcOps, consts);
    if (codePoints(t) > f.maxText) continue;
    text.set(k, t);
    ops.add(k);
    if (n.intlike) expr.add(k);
    if (isConst) konst.add(k);
  }
  const us = (/** @type {string} */ k) => /** @type {string[]} */ (users.get(k));
  const hidden = new Set([...text.keys()].filter((k) => us(k).length && (
    (expr.has(k) && us(k).every((u) => ops.has(u) || f.listOps.includes(/** @type {GNode} */ (nodes.get(u)).op)) && us(k).some((u) => ops.has(u))) ||
    (konst.has(k) && codePoints(/** @type {GNode} */ (nodes.get(k)).op) + 2 + codePoints(/** @type {string} */ (text.get(k))) <= f.line &&
     !us(k).some((u) => marks.has(u))))));
  /** @type {Map<string, string[]>} */
  const holds = new Map();
  /** Push onto stack the inputs of n it holds (hidden, not constants), last first. @param {GNode} n @param {string[]} stack */
  const hiddenIns = (n, stack) => {
    for (let j = n.inputs.length - 1; j >= 0; j--) { const i = n.inputs[j]; if (typeof i === "string" && hidden.has(i) && !konst.has(i)) stack.push(i); }
    return stack;
  };
  for (const [k, n] of nodes) {
    if (hidden.has(k)) continue;
    const held = [k], stack = hiddenIns(n, []);
    while (stack.length) {
      const h = /** @type {string} */ (stack.pop());
      if (held.includes(h)) continue;
      held.push(h);
      hiddenIns(/** @type {GNode} */ (nodes.get(h)), stack);
    }
    holds.set(k, held);
  }
  /** @type {Map<string, string[]>} */
  const owners = new Map();
  for (const [u, held] of holds) for (let j = 1; j < held.length; j++) { const h = held[j], o = owners.get(h); if (o) o.push(u); else owners.set(h, [u]); }
  return { users, text, konst, expr, ops, hidden, holds, owners };
}

/** fold._Analysis.unit_edges. @param {Analysis} a @param {Iterable<[string, string]>} edges @returns {[string, string][]} */
function unitEdges(a, edges) {
  /** @type {[string, string][]} */
  const out = [];
  /** @type {Map<string, Set<string>>} the pairs out holds, by source (each once, in the order first seen) */
  const seen = new Map();
  const add = (/** @type {string} */ s, /** @type {string} */ u) => {
    if (u === s) return;
    let us = seen.get(s);
    if (!us) seen.set(s, us = new Set());
    if (!us.has(u)) { us.add(u); out.push([s, u]); }
  };
  for (const [s, d] of edges) {
    if (a.hidden.has(s) || !a.holds.has(s)) continue;
    if (a.holds.has(d)) add(s, d);
    else for (const u of a.owners.get(d) ?? []) add(s, u);
  }
  return out;
}

/** fold._classes. @param {Map<string, string|number>} of @returns {Map<string, number>} */
function laneClasses(of) {
  /** @type {Map<string|number, number>} */
  const count = new Map();
  for (const v of of.values()) count.set(v, (count.get(v) ?? 0) + 1);
  /** @type {Map<string|number, number>} */
  const ids = new Map();
  /** @type {Map<string, number>} */
  const out = new Map();
  for (const [u, v] of of) {
    if (/** @type {number} */ (count.get(v)) < 2) continue;
    if (!ids.has(v)) ids.set(v, ids.size);
    out.set(u, /** @type {number} */ (ids.get(v)));
  }
  return out;
}

/** fold.lanes. @param {FoldConfig} f @param {Scene} scene @param {Analysis} a @param {[string, string][]} edges */
export function lanes(f, scene, a, edges) {
  const nodes = scene.nodes, marks = scene.marks;
  /** @type {Map<string, number>} */
  const ids = new Map();
  const id = (/** @type {string} */ s) => { let i = ids.get(s); if (i === undefined) ids.set(s, i = ids.size); return i; };
  const laneOps = new Set(f.laneOps), gatherOps = new Set(f.gatherOps), chainOps = new Set(f.chainOps);
  const lone = (/** @type {string} */ k) => marks.has(k) || a.konst.has(k) || !laneOps.has(/** @type {GNode} */ (nodes.get(k)).op);
  /** @type {Map<string, number>} a node's class: a lone node its own (negative: apart from the others, which only
   * equality reads), the others by op, dtype, shape and their inputs' classes */
  const cls = new Map();
  for (const [k, n] of nodes) {
    if (lone(k)) { cls.set(k, -1 - cls.size); continue; }
    const ins = n.inputs.map((i) => (typeof i !== "string" || a.konst.has(i) ? "C" : String(cls.get(i) ?? i)));
    cls.set(k, id(`${n.op}|${n.dtype}|${n.shape}|${ins.join(",")}`));
  }
  const link = (/** @type {string} */ d) => {  // a link of a chain of one associative op: its input or user
    const n = /** @type {GNode} */ (nodes.get(d));
    const same = (/** @type {string} */ x) => nodes.get(x)?.op === n.op && nodes.get(x)?.dtype === n.dtype;
    return chainOps.has(n.op) && (n.inputs.some((i) => typeof i === "string" && same(i)) || (a.users.get(d) ?? []).some(same));
  };
  /** @type {Map<string, string[]>} */
  const users = new Map([...a.holds.keys()].map((u) => [u, []]));
  const gather = new Set([...a.holds.keys()].filter((d) => gatherOps.has(/** @type {GNode} */ (nodes.get(d)).op) || link(d)));
  for (const [s, d] of edges) if (!gather.has(d)) users.get(s)?.push(d);
  /** @type {Map<string, number>} */
  const lane = new Map();
  for (const k of [...a.holds.keys()].reverse()) {
    if (lone(k)) continue;
    const us = /** @type {string[]} */ (users.get(k)), out = (/** @type {string} */ u) => (lane.has(u) ? `c${lane.get(u)}` : `k${u}`);
    const outs = us.length < 2 ? us.map(out) : [...new Set(us.map(out))].sort();
    lane.set(k, id(`${cls.get(k)};${outs.join(",")}`));
  }
  /** @type {Map<string, number>} */
  const of = new Map();
  for (const k of a.holds.keys()) if (lane.has(k)) of.set(k, /** @type {number} */ (lane.get(k)));
  return laneClasses(of);
}

/** fold._chunks. @param {FoldConfig} f @param {string} text */
function chunked(f, text) {
  const c = [...text], out = [];
  for (let i = 0; i < c.length; i += f.line) out.push(c.slice(i, i + f.line).join(""));
  return out;
}

/** fold.masked: one line for the same line of several lanes. @param {string[]} lines */
export function masked(lines) {
  if (lines.every((ln) => ln === lines[0])) return lines[0];
  const parts = lines.map((ln) => ln.split(/([0-9]+)/)), first = parts[0];
  if (parts.some((p) => p.length !== first.length || p.some((x, i) => i % 2 === 0 && x !== first[i]))) return "…";
  return first.map((x, i) => (i % 2 === 0 || parts.every((p) => p[i] === x) ? x : "#")).join("");
}

/** fold._cut. @param {FoldConfig} f @param {string} s */
const cutLine = (f, s) => { const c = [...s]; return c.length <= f.line ? s : c.slice(0, f.line - 1).join("") + "…"; };

/** A node with these fields changed. @param {GNode} n @param {Partial<GNode>} over @returns {GNode} */
const nodeWith = (n, over) => ({ key: n.key, op: n.op, family: n.family, label: n.label, dtype: n.dtype, intlike: n.intlike,
                             text: n.text, inputs: n.inputs, shape: n.shape, holds: n.holds, heldOps: n.heldOps, ...over });

/** fold._held: n holding these nodes (and their ops), where it holds more than itself. @param {Scene} scene @param {GNode} n
 * @param {string[]} held @returns {GNode} */
const heldBy = (scene, n, held) => (held.length > 1
  ? nodeWith(n, { holds: held, heldOps: held.map((h) => /** @type {GNode} */ (scene.nodes.get(h)).op) }) : n);

/** fold._unit_node: a unit as drawn, and its label lines after the first. @param {FoldConfig} f @param {Scene} scene
 * @param {Analysis} a @param {string} k @returns {[GNode, string[]]} */
function unitNode(f, scene, a, k) {
  const n = /** @type {GNode} */ (scene.nodes.get(k)), held = /** @type {string[]} */ (a.holds.get(k));
  if (a.ops.has(k)) {
    const tail = [...chunked(f, stripParens(/** @type {string} */ (a.text.get(k)))), n.dtype + (held.length > 1 ? ` · ${held.length} uops` : "")];
    return [heldBy(scene, nodeWith(n, { label: tail, text: null }), held), tail];
  }
  const extra = [];
  for (let j = 0; j < n.inputs.length; j++) {
    const i = n.inputs[j];
    if (typeof i === "string" && a.hidden.has(i)) extra.push(cutLine(f, `${scene.nodes.get(i)?.op}${j} ${a.text.get(i)}`));
  }
  const named = n.text !== null && a.text.has(k) && !n.label.includes(n.text);
  if (!extra.length && !named) return [n, n.label.slice(1)];
  const label = [named ? cutLine(f, `${n.op} ${n.text}`) : n.label[0], ...n.label.slice(1), ...extra];
  return [heldBy(scene, nodeWith(n, { label }), held), label.slice(1)];
}

/** fold.fold: the folded view of a scene (before focus and the fan-in cap). @param {FoldConfig} f @param {Scene} scene
 * @returns {Scene} */
export function foldScene(f, scene) {
  const a = foldAnalysis(f, scene);
  const edges = unitEdges(a, [...scene.edgesBefore.values(), ...scene.edgesAfter.values()]);
  const part = lanes(f, scene, a, edges);
  /** @type {Map<number, string[]>} */
  const members = new Map();
  for (const [u, c] of part) { const m = members.get(c); if (m) m.push(u); else members.set(c, [u]); }
  /** @type {Map<string, string>} */
  const drawn = new Map();
  /** @type {Map<string, GNode>} */
  const nodes = new Map();
  for (const k of scene.nodes.keys()) {
    const c = part.get(k);
    if (!a.holds.has(k) || (c !== undefined && /** @type {string[]} */ (members.get(c))[0] !== k)) continue;
    if (c === undefined) { nodes.set(k, unitNode(f, scene, a, k)[0]); drawn.set(k, k); continue; }
    const group = /** @type {string[]} */ (members.get(c)), units = group.map((u) => unitNode(f, scene, a, u));
    const tails = units.map(([, t]) => t), rep = /** @type {GNode} */ (scene.nodes.get(k));
    const tail = a.ops.has(k) ? [...chunked(f, masked(group.map((u) => stripParens(/** @type {string} */ (a.text.get(u)))))), rep.dtype]
      : tails[0].map((_, i) => masked(tails.map((t) => (i < t.length ? t[i] : ""))));
    const held = [...new Set(units.flatMap(([n]) => (n.holds.length ? n.holds : [n.key])))];
    nodes.set(k, heldBy(scene, nodeWith(rep, { label: [`×${group.length} ${rep.op}`, ...tail], text: null }), held));
    for (const u of group) drawn.set(u, k);
  }
  const at = (/** @type {string} */ u) => /** @type {string} */ (drawn.get(u));
  /** @param {Map<string, [string, string]>} es */
  const side = (es) => {
    /** @type {Map<string, [string, string]>} */
    const out = new Map();
    /** @param {string} key the scene's key of the edge s -> d @param {string} s @param {string} d */
    const add = (key, s, d) => {
      const x = at(s), y = at(d), k = x === s && y === d ? key : `${x} ${y}`;  // (an edge between units: its own key)
      if (x !== y && !out.has(k)) out.set(k, [x, y]);
    };
    for (const [key, [s, d]] of es) {  // unitEdges(es) in one pass: a pair seen before adds nothing new
      if (a.hidden.has(s) || !a.holds.has(s)) continue;
      if (a.holds.has(d)) { if (d !== s) add(key, s, d); }
      else for (const u of a.owners.get(d) ?? []) if (u !== s) add(`${s} ${u}`, s, u);
    }
    return out;
  };
  /** The nodes drawn that are or hold these. @param {Set<string>} keys */
  const holders = (keys) => {
    /** @type {Set<string>} */
    const out = new Set();
    for (const k of keys) {
      if (a.holds.has(k)) out.add(at(k));
      else for (const o of a.owners.get(k) ?? []) out.add(at(o));
    }
    return out;
  };
  return { nodes, afterLabel: new Map(scene.afterLabel), edgesBefore: side(scene.edgesBefore), edgesAfter: side(scene.edgesAfter),
           onBefore: holders(scene.onBefore), onAfter: holders(scene.onAfter),
           marks: new Map(scene.marks), hidden: new Map(), total: 0, matchNodes: new Set() };
}

/** fold.drawn_as: the layout ids of a folded scene's nodes that are or hold these keys, in order, each once.
 * @param {Scene} scene @param {string[]} keys */
export function drawnAs(scene, keys) {
  if (!keys.length) return [];
  const wanted = new Set(keys);
  /** @type {Map<string, string>} where each key wanted is drawn: the first node that is or holds it */
  const where = new Map();
  for (const [k, n] of scene.nodes) {
    if (!n.holds.length) { if (wanted.has(k) && !where.has(k)) where.set(k, k); }
    else for (const h of n.holds) if (wanted.has(h) && !where.has(h)) where.set(h, k);
  }
  return [...new Set(keys.filter((k) => where.has(k)).map((k) => /** @type {string} */ (where.get(k))))];
}
