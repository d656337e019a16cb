// Pan and zoom of the graph on the canvas (wheel zoom, in a notebook ctrl+wheel: see wheel.js; drag pan) and the views a
// graph opens on: whole where it fits readable, else readable on what changed (on a big change, the canvas-sized part of it holding the most changed nodes);
// a new match keeps the zoom and brings the change back into view; fit, 1:1, zoom to the change (readable on the
// replacement where all of it is not; again: all of it, whole, however small that makes it) or to a code line's nodes.
// An overview (minimap) of the whole picture, with the part in view outlined, shows where a graph bigger than the
// canvas is; a click or a drag on it moves the view there.

import { MARGIN, MIN_READABLE, READABLE, around, before, fullestWindow, mostChangedBox, nodeBoxes, placeWindow, snapshotHeld, uncutWindow, unclippedWindow } from "./fullest.js";
import { overview } from "./overview.js";
import { wheelZoom } from "./wheel.js";

const CHANGED = ".added, .removed, .changed";  // the classes of the nodes a step's diff marks (tgviz.draw.svg)

/** @typedef {import("./ui.js").Ui} Ui */
/** @typedef {import("./fullest.js").Box} Box */

/** Wheel zoom and drag pan of the stage inside the canvas, and the views a graph opens on. */
export function panZoom(/** @type {Ui} */ ui) {
  let scale = 1, tx = 0, ty = 0;
  let moved = false;  // the user zoomed or panned since the view opened (initial)
  const mini = overview(ui, (x, y) => { const { w, h } = size(); tx = w / 2 - x * scale; ty = h / 2 - y * scale; moved = true; apply(); });
  const apply = () => {
    ui.stage.style.transform = `translate(${tx}px, ${ty}px) scale(${scale})`;
    mini.show(svgOf(), { x: -tx / scale, y: -ty / scale, w: size().w / scale, h: size().h / scale });
  };
  const svgOf = () => ui.stage.querySelector("svg");
  const size = () => ({ w: ui.canvas.clientWidth || 600, h: ui.canvas.clientHeight || 400 });
  const rects = nodeBoxes;  // (SVG units)
  /** The box (in SVG units) around some nodes of the SVG, null for none. @param {Element[]} nodes */
  const boxOf = (nodes) => around(rects(nodes));
  /** The box (in SVG units) to show of what changed, at scale s: all of it where it fits the canvas, else the
   * canvas-sized window that holds the most changed nodes, the after side's first (a big step changes nodes all over
   * both sides, and the middle of them all can be empty). A match's own nodes (what it replaced and its replacement,
   * class "match-node") come before the nodes rebuilt above them, which can lie far away. Where nothing is marked (a
   * snapshot): the output (dot draws it lowest) at the foot of that window, what feeds it above, the graph's middle
   * across. Null without a graph. placed: see windowOn. */
  function changedBox(s = 0, placed = false) {
    const svg = svgOf();
    if (!svg) return null;
    const c = size(), H = (c.h - 40) / s;  // s = 0: any size fits
    const own = [...svg.querySelectorAll("g.side g.node.match-node")];
    const marked = own.length ? own : [...svg.querySelectorAll(`g.side g.node:is(${CHANGED})`)];
    if (!marked.length) {
      const all = rects([...svg.querySelectorAll("g.side g.node")]);
      if (!all.length) return null;
      const low = Math.max(...all.map((b) => b.y)), out = /** @type {Box} */ (around(all.filter((b) => b.y === low)));
      if (!Number.isFinite(H)) return out;
      const top = Math.max(Math.min(...all.map((b) => b.y)), out.y + out.h - H);
      // across: the middle of the whole graph (most of it in view), the output row kept in the window
      const whole = /** @type {Box} */ (around(all)), W = (c.w - 40) / s;
      const w = Math.min(W, whole.w), x = Math.min(Math.max(whole.x + (whole.w - w) / 2, out.x + out.w - w), out.x);
      return { x, y: top, w, h: out.y + out.h - top };
    }
    return windowOn(marked, s, placed);
  }
  /** The box (SVG units) to show of some nodes at scale s (0: any size fits): all of them where they fit the canvas,
   * else the canvas-sized window that holds the most of them whole, those marked as changed first, then the after side's
   * (placed: that window itself, not the box around those nodes). @param {Element[]} marked @param {number} s
   * @param {boolean} [placed] */
  function windowOn(marked, s, placed = false) {
    const c = size(), W = (c.w - 40) / s, H = (c.h - 40) / s;
    const boxes = rects(marked), whole = around(boxes);
    if (!whole || (whole.w <= W && whole.h <= H)) return whole;
    // windows centred on a node marked as changed first (a match's replacement can be a node that was there before),
    // then on the after side's
    const rank = marked.map((n) => 2 * Number(n.matches(CHANGED)) +
                                   Number(n.closest("g.side")?.getAttribute("data-side") === "after"));
    const mid = boxes.map((b) => ({ x: b.x + b.w / 2, y: b.y + b.h / 2 }));
    const order = [...boxes.keys()].sort((i, j) => rank[j] - rank[i]);
    const step = Math.max(1, Math.floor(order.length / 300));  // at most 300 windows tried: bounded on huge steps
    let best = [boxes[order[0]]];
    for (let k = 0; k < order.length; k += step) {  // the nodes wholly in a window centred on that node's middle
      const m = mid[order[k]];
      const inside = boxes.filter((b) => b.x >= m.x - W / 2 && b.x + b.w <= m.x + W / 2 && b.y >= m.y - H / 2 && b.y + b.h <= m.y + H / 2);
      if (inside.length > best.length) best = inside;
    }
    // placed: the window, all of those whole, placed to cut none of the others at its edges where it can
    const shown = /** @type {Box} */ (around(best));
    if (!placed) return shown;
    const x = placeWindow(shown.x, shown.x + shown.w, W, boxes.map((b) => [b.x, b.x + b.w]));
    const across = boxes.filter((b) => b.x < x + W && b.x + b.w > x);
    const y = placeWindow(shown.y, shown.y + shown.h, H, across.map((b) => [b.y, b.y + b.h]));
    return { x, y, w: W, h: H };
  }
  /** Centre the box b (SVG units) at the current scale. @param {Box} b */
  function centre(b) {
    const { w, h } = size();
    tx = w / 2 - (b.x + b.w / 2) * scale; ty = h / 2 - (b.y + b.h / 2) * scale;
    apply();
  }
  /** Show the box b (SVG units) at the current scale, `m` CSS px in from the canvas's edges where it fits: placed to cut
   * the fewest other nodes at the edges, centred where that cuts as few (a code line's nodes centred left others cut
   * at one edge while the other edge had room). @param {Box} b @param {number} m */
  function show(b, m) {
    const c = size(), W = (c.w - 2 * m) / scale, H = (c.h - 2 * m) / scale;
    const boxes = rects([...(svgOf()?.querySelectorAll("g.side g.node") ?? [])]);
    const x = placeWindow(b.x, b.x + b.w, W, boxes.map((r) => [r.x, r.x + r.w]));
    const across = boxes.filter((r) => r.x < x + W && r.x + r.w > x);
    const y = placeWindow(b.y, b.y + b.h, H, across.map((r) => [r.y, r.y + r.h]));
    tx = m - x * scale; ty = m - y * scale;
    apply();
  }
  /** The whole picture (title and legend too) as large as fits, at most 1.5, from the canvas's top: the view a picture
   * that fits readable opens on. */
  function fitPicture() {
    const svg = svgOf();
    if (!svg) return;
    const w = Number(svg.getAttribute("width")) || 1, hgt = Number(svg.getAttribute("height")) || 1, c = size();
    scale = Math.min(c.w / w, c.h / hgt, 1.5);
    tx = (c.w - w * scale) / 2; ty = 0;
    apply();
  }
  /** Fit the graph (f): its nodes (and its sides' names) as large as fits with a margin, at most 1.5, centred. The title
   * and legend above may be cut: they can be far wider than a small kernel's graph (fitting them put a 15-node graph's
   * labels at 3 px in a notebook's canvas). */
  function fit() {
    const svg = svgOf();
    if (!svg) return;
    const b = boxOf([...svg.querySelectorAll("g.side g.node, g.side g.hidden-count, g.side > text.title")]);
    if (!b) return fitPicture();
    const c = size();
    scale = Math.min((c.w - 2 * MARGIN) / b.w, (c.h - 2 * MARGIN) / b.h, 1.5);
    centre(b);
  }
  function oneToOne() { scale = 1; const b = changedBox(scale); if (b) centre(b); else apply(); }
  /** Zoom to the box b (SVG units; null: fit the graph): readable, and all of b in view where it fits.
   * @param {Box|null} b */
  function zoomTo(b) {
    if (!b) return fit();
    const c = size();
    scale = Math.max(READABLE, Math.min(c.w / (b.w + 40), c.h / (b.h + 40), 2));
    centre(b);
  }
  /** @type {{svg: Element|null, at: string}|null} the picture and view the last z left, for a z again */
  let zoomed = null;
  /** Zoom to what changed. Readable (labels at 11 px: MIN_READABLE) where that shows every changed node whole (with a
   * margin); else the replacement (the after side's changed nodes) whole, readable where it fits: a change spread over
   * both sides shown whole put its labels at 6-7 px. z again at once: every changed node whole, zoomed out as far as that takes (a SINK or PROGRAM
   * whose label is wider than a notebook's canvas, a change spread over the graph): a node cut at the canvas's edge, or
   * left out of view, was read as not there. */
  function toChange() {
    const again = zoomed !== null && zoomed.svg === svgOf() && zoomed.at === ui.stage.style.transform;
    const b = changedBox(), c = size();
    if (!b) return fit();
    const room = (/** @type {Box} */ r) => Math.min((c.w - 40) / r.w, (c.h - 40) / r.h);  // 20 px all round, on screen
    const nodes = marked(), after = nodes.filter((n) => n.closest("g.side")?.getAttribute("data-side") === "after");
    const part = !again && room(b) < MIN_READABLE && after.length && after.length < nodes.length ? boxOf(after) : null;
    // again: every node marked, the nodes rebuilt above the match's own too (pass 10 read two cut SINKs as "not all of it")
    const all = again ? [...(svgOf()?.querySelectorAll(`g.side g.node:is(.match-node, ${CHANGED})`) ?? [])] : [];
    const shown = part ?? (all.length ? boxOf(all) : null) ?? b;
    scale = Math.min(room(shown), 2);
    if (part) scale = Math.min(scale, Math.max(READABLE, room(b)));  // no closer than readable: the rest near it in view
    centre(shown);  // (not placed to cut the fewest others, as show: there it sat at the canvas's edge, cut off from the rest)
    shun(part ? after : all.length ? all : nodes);
    zoomed = again ? null : { svg: svgOf(), at: ui.stage.style.transform };
  }
  /** The nodes marked as what changed: a match's own, else every added, removed or changed one. */
  function marked() {
    const svg = svgOf(), own = [...(svg?.querySelectorAll("g.side g.node.match-node") ?? [])];
    return own.length ? own : [...(svg?.querySelectorAll(`g.side g.node:is(${CHANGED})`) ?? [])];
  }
  /** Where some of the nodes the view is meant to show lie under the overview (in a corner of the canvas: the step
   * graph's at the bottom right, the program map's in any), pan them out from under it, away from its corner across or
   * down, as far as the others on screen allow (left where it is at the right, right where it is at the left; up where
   * it is at the bottom, down where it is at the top). @param {Element[]} nodes */
  function shun(nodes) {
    const o = mini.footprint(svgOf()), c = size();
    if (!o || !mini.shown()) return;
    const on = rects(nodes).map((b) => ({ x: tx + b.x * scale, y: ty + b.y * scale, w: b.w * scale, h: b.h * scale }))
      .filter((r) => r.x < c.w && r.x + r.w > 0 && r.y < c.h && r.y + r.h > 0);
    const under = on.filter((r) => r.x < o.x + o.w && r.x + r.w > o.x && r.y < o.y + o.h && r.y + r.h > o.y);
    if (!under.length) return;
    const left = o.x + o.w / 2 < c.w / 2, top = o.y + o.h / 2 < c.h / 2;
    // the pan (its size) that takes them all clear of the overview, and whether the others stay on screen with it
    const dx = left ? o.x + o.w + 4 - Math.min(...under.map((r) => r.x)) : Math.max(...under.map((r) => r.x + r.w)) - o.x + 4;
    const dy = top ? o.y + o.h + 4 - Math.min(...under.map((r) => r.y)) : Math.max(...under.map((r) => r.y + r.h)) - o.y + 4;
    const fitsX = left ? Math.max(...on.map((r) => r.x + r.w)) + dx <= c.w : Math.min(...on.map((r) => r.x)) - dx >= 0;
    const fitsY = top ? Math.max(...on.map((r) => r.y + r.h)) + dy <= c.h : Math.min(...on.map((r) => r.y)) - dy >= 0;
    if (fitsX && (dx <= dy || !fitsY)) tx += left ? dx : -dx;
    else if (fitsY) ty += top ? dy : -dy;
    else return;
    apply();
  }
  /** Zoom to the nodes marked for a code line, if any are drawn: all of them where that is readable, else readable on
   * where most of them are. */
  function toLine() {
    const marked = [...(svgOf()?.querySelectorAll("g.side g.node.hl-line") ?? [])];
    if (!marked.length) return;
    zoomTo(windowOn(marked, 0));
    const b = windowOn(marked, scale, true);
    if (b) { show(b, MARGIN); shun(marked); }
  }
  /** Bring some nodes (a picked node first, then its neighbourhood) into view: the least pan that shows them all at the
   * current zoom; where they do not fit, zoomed out as far as labels stay readable; where they do not fit then either,
   * the window that holds the first and the most of the others. Never under the overview. @param {Element[]} nodes */
  function reveal(nodes) {
    const b = boxOf(nodes), c = size();
    if (!b) return;
    const x0 = tx + b.x * scale, y0 = ty + b.y * scale, x1 = x0 + b.w * scale, y1 = y0 + b.h * scale;
    if (x0 >= 0 && y0 >= 0 && x1 <= c.w && y1 <= c.h) return shun(nodes);
    const room = Math.min((c.w - 2 * MARGIN) / b.w, (c.h - 2 * MARGIN) / b.h);
    if (room < scale) {
      if (room >= MIN_READABLE) { scale = room; centre(b); return shun(nodes); }
      scale = Math.min(scale, READABLE);
      const win = fullest(nodes, boxOf(nodes.slice(0, 1)), scale, []);
      if (win) { tx = MARGIN - win.x * scale; ty = MARGIN - win.y * scale; apply(); }
      return;
    }
    tx += x0 < MARGIN ? MARGIN - x0 : x1 > c.w - MARGIN ? c.w - MARGIN - x1 : 0;
    ty += y0 < MARGIN ? MARGIN - y0 : y1 > c.h - MARGIN ? c.h - MARGIN - y1 : 0;
    apply();
    shun(nodes);
  }
  /** The view a step opens on: the whole picture where it fits with readable labels, else the whole graph (its title and
   * legend aside) where it fits at 11 px (with a margin all round), else, readable, the canvas-sized window that shows
   * the most nodes whole (clear of the overview in the corner) while it holds the change (a match's own nodes; of a
   * whole step's changed nodes, as many as a window shows: mostChanged; for a snapshot, its output and computing heart:
   * anchor), starting at the canvas's top where the picture fits down. */
  function initial() {
    open();
    opened();
  }
  /** The view now, to come back to (back): its picture, zoom and pan, the canvas's size, whether the user moved it. */
  const keep = () => ({ svg: svgOf(), scale, tx, ty, c: size(), moved });
  /** @typedef {ReturnType<typeof keep>} Kept */
  /** @type {{svg: Element|null, at: string}} the picture and view the last opening (initial, opened) left */
  let opening = { svg: null, at: "" };
  /** Take the view now as the one its picture opened on (initial's, or one that follows it such as a code line's). */
  function opened() { opening = { svg: svgOf(), at: ui.stage.style.transform }; }
  /** To another size of canvas (maximised, and back in the cell): the view `was` where the user did not move the view since it opened
   * there (the same picture; another picture: its own opening view at this size); where they did, what they looked at
   * (`now`, kept before the canvas changed size) stays at the canvas's centre, as close as shows all of it where that is
   * readable, no closer than they had it. @param {Kept} was @param {Kept} now */
  function back(was, now) {
    const svg = svgOf(), c = size();
    if (!svg) return;
    if (svg === opening.svg && ui.stage.style.transform === opening.at) {
      if (svg !== was.svg) return initial();
      ({ scale, moved } = was);
      tx = was.tx + (c.w - was.c.w) / 2; ty = was.ty + (c.h - was.c.h) / 2;  // (a canvas of another size: the same centre)
      return apply();
    }
    const cx = (now.c.w / 2 - now.tx) / now.scale, cy = (now.c.h / 2 - now.ty) / now.scale;
    scale = Math.min(now.scale, Math.max(READABLE, Math.min(c.w / now.c.w, c.h / now.c.h) * now.scale));
    tx = c.w / 2 - cx * scale; ty = c.h / 2 - cy * scale; moved = true;
    apply();
  }
  /** initial's view. */
  function open() {
    const svg = svgOf();
    if (!svg) return;
    moved = false;
    const w = Number(svg.getAttribute("width")) || 1, hgt = Number(svg.getAttribute("height")) || 1, c = size();
    if (Math.min(c.w / w, c.h / hgt) >= READABLE) return fitPicture();
    // the graph itself (its sides' nodes, without the title and legend above, which can be wider) where it fits readable
    const graph = boxOf([...svg.querySelectorAll("g.side g.node, g.side g.hidden-count")]);
    const k = graph ? Math.min((c.w - 2 * MARGIN) / graph.w, (c.h - 2 * MARGIN) / graph.h) : 0;
    if (graph && k >= MIN_READABLE) { scale = Math.min(k, 1.5); return centre(graph); }
    scale = READABLE;
    const nodes = [...svg.querySelectorAll("g.side g.node")], own = svg.querySelector("g.side g.node.match-node");
    // a match's own nodes all in view; of a whole step's changes as many as a window shows (a big step changes nodes
    // everywhere: the window with the most nodes held one changed PARAM of a schedule's 38 changed nodes, no CALL)
    const mark = nodes.map((n) => n.matches(CHANGED));
    const must = own ? changedBox(scale) : mostChanged(nodes, mark) ?? anchor();
    const win = fullest(nodes, must, scale, nodes.filter((_, i) => mark[i]));
    if (win) {
      const boxes = rects(nodes), o = mini.footprint(svg), at = unclippedWindow(boxes, win, must, mark, scale, o);
      tx = MARGIN - at.x * scale; ty = MARGIN - at.y * scale;
      // a picture that fits down hangs from the canvas's top, as fit shows it (centred, it left a band empty above its
      // title), where that brings no node in view under the overview
      const under = (/** @type {Box} */ b, /** @type {number} */ y) => !!o && tx + b.x * scale < o.x + o.w && tx + (b.x + b.w) * scale > o.x &&
        y + b.y * scale < o.y + o.h && y + (b.y + b.h) * scale > o.y;
      if (hgt * scale <= c.h && boxes.every((b) => under(b, ty) || !under(b, 0))) ty = 0;
      apply();
      return;
    }
    const b = changedBox(scale);
    if (b) centre(b); else { tx = 0; ty = 0; apply(); }
  }
  /** The view a program map opens on: whole where it fits readable; else, readable or closer (at most 1.5), the window
   * from the map's top in its columns (no empty band above it) on its start (the nodes `first`) with no empty band at
   * its sides, a corner clear for the overview, the fewest boxes and frames' names cut at its edges, showing the most
   * boxes whole (fullest.js's uncutWindow): tried at the scales (at most 96) at which the canvas spans from one gap
   * between boxes to another, across or down (zoomed to 1.5 to fill the canvas with a column of a few boxes, it showed
   * 7 of 23); the overview in the corner where it covers the fewest boxes in view. @param {Element[]} first */
  function begin(first) {
    const svg = svgOf(), start = boxOf(first);
    if (!svg || !start) return initial();
    moved = false;
    const w = Number(svg.getAttribute("width")) || 1, hgt = Number(svg.getAttribute("height")) || 1, c = size();
    if (Math.min(c.w / w, c.h / hgt) >= READABLE) return fitPicture();
    const boxes = rects([...svg.querySelectorAll("g.side g.node")]), all = /** @type {Box} */ (around(boxes));
    const k = Math.min((c.w - 2 * MARGIN) / all.w, (c.h - 2 * MARGIN) / all.h);
    if (k >= MIN_READABLE) { scale = Math.min(k, 1.5); return centre(all); }
    // the frames' names count too (one cut at the top reads as a stray line), and the arrows' labels (the buffers an
    // arrow carries: cut at a side, "float[8,8,13" is a wrong shape)
    const labels = rects([...svg.querySelectorAll("g.side text.frame-label")]), named = [...boxes, ...labels];
    const arrows = rects([...svg.querySelectorAll("g.side text.edge-label")]);
    const gaps = (/** @type {number[]} */ spans) => spans.flatMap((a) => [a - MARGIN / READABLE, a + MARGIN / READABLE]);
    const gx = gaps(named.flatMap((b) => [b.x, b.x + b.w])), gy = gaps(named.flatMap((b) => [b.y, b.y + b.h]));
    const scales = [...new Set([...gx.flatMap((a) => gx.map((b) => c.w / (b - a))), ...gy.flatMap((a) => gy.map((b) => c.h / (b - a)))])]
      .filter((s) => s > READABLE && s <= 1.5).sort((a, b) => a - b);
    const o = mini.footprint(svg), firsts = rects(first);
    /** @type {{x: number, y: number, rank: number[], s: number}|null} */
    let found = null;
    for (const s of [READABLE, ...scales.filter((_, i) => i % Math.ceil(scales.length / 95) === 0)]) {
      const at = uncutWindow(boxes, labels, arrows, firsts, c.w / s, c.h / s, s, MARGIN / s, o, start.x - MARGIN / s);
      if (at && (!found || before(at.rank.slice(0, 6), found.rank.slice(0, 6)))) found = { ...at, s };
    }
    if (!found) return initial();
    scale = found.s; tx = -found.x * scale; ty = -found.y * scale;
    mini.clearOf(svg, named.map((b) => ({ x: tx + b.x * scale, y: ty + b.y * scale, w: b.w * scale, h: b.h * scale })));
    apply();
  }
  /** The box (SVG units) around the most of a whole step's changed nodes (`mark`: whether each of `nodes` is) that the
   * canvas shows whole at the current scale (a margin all round), clear of the overview: each box counted (a node changed
   * on both sides is two). Null where none is marked. @param {Element[]} nodes @param {boolean[]} mark */
  function mostChanged(nodes, mark) {
    const c = size();
    return mostChangedBox(rects(nodes.filter((_, i) => mark[i])), (c.w - 2 * MARGIN) / scale, (c.h - 2 * MARGIN) / scale, scale, mini.footprint(svgOf()));
  }
  /** What a snapshot's opening view at the current scale holds whole (SVG units): its output and its computing heart
   * (fullest.js's snapshotHeld); null where something is marked as changed. */
  function anchor() {
    const svg = svgOf(), c = size();
    if (!svg || svg.querySelector(`g.side g.node:is(${CHANGED})`)) return null;
    const nodes = [...svg.querySelectorAll("g.side g.node")];
    return snapshotHeld(nodes, rects(nodes), (c.w - 2 * MARGIN) / scale, (c.h - 2 * MARGIN) / scale);
  }
  /** The top left corner (SVG units) of the window the canvas shows at scale s (a margin all round) that holds the box
   * `must` (null: anything) and the most of the nodes whole, none of them under the overview, one of `marked` among
   * them where there are any (fullest.js): null where `must` does not fit.
   * @param {Element[]} nodes @param {Box|null} must @param {number} s @param {Element[]} marked */
  function fullest(nodes, must, s, marked) {
    const c = size(), marks = new Set(marked);
    return fullestWindow(rects(nodes), nodes.map((n) => n.getAttribute("data-node") ?? ""), nodes.map((n) => marks.has(n)),
                         must, (c.w - 2 * MARGIN) / s, (c.h - 2 * MARGIN) / s, s, mini.footprint(svgOf()));
  }
  /** After stepping to another match: keep the zoom, bring the change back into view if it left it. */
  function follow() {
    const b = changedBox(scale), c = size();
    if (!b) return;
    const x0 = tx + b.x * scale, y0 = ty + b.y * scale, x1 = x0 + b.w * scale, y1 = y0 + b.h * scale;
    if (x1 < 0 || y1 < 0 || x0 > c.w || y0 > c.h || (b.w * scale < c.w && (x0 < 0 || x1 > c.w)) || (b.h * scale < c.h && (y0 < 0 || y1 > c.h))) centre(b);
    shun(marked());
  }
  wheelZoom(ui.canvas, (ev) => {
    const r = ui.canvas.getBoundingClientRect();
    const px = ev.clientX - r.left, py = ev.clientY - r.top;
    const f = ev.deltaY < 0 ? 1.15 : 1 / 1.15;
    tx = px - (px - tx) * f; ty = py - (py - ty) * f; scale *= f;
    moved = true;
    apply();
  });
  /** @type {{x:number,y:number,x0:number,y0:number}|null} */
  let drag = null;
  ui.canvas.addEventListener("pointerdown", (ev) => {
    drag = { x: ev.clientX - tx, y: ev.clientY - ty, x0: ev.clientX, y0: ev.clientY };
    ui.canvas.setPointerCapture(ev.pointerId);
  });
  ui.canvas.addEventListener("pointermove", (ev) => {
    if (!drag) return;
    tx = ev.clientX - drag.x; ty = ev.clientY - drag.y;
    moved ||= Math.abs(ev.clientX - drag.x0) + Math.abs(ev.clientY - drag.y0) > 2;  // (a click's jitter is no pan)
    apply();
  });
  ui.canvas.addEventListener("pointerup", () => { drag = null; });
  /** The part of the picture on screen, in its units ([x, y, width, height], within the picture), null without one. */
  function visible() {
    const svg = svgOf(), c = size();
    if (!svg) return null;
    const w = Number(svg.getAttribute("width")) || 1, h = Number(svg.getAttribute("height")) || 1;
    const x0 = Math.max(0, -tx / scale), y0 = Math.max(0, -ty / scale);
    const x1 = Math.min(w, (c.w - tx) / scale), y1 = Math.min(h, (c.h - ty) / scale);
    return x1 > x0 && y1 > y0 ? [x0, y0, x1 - x0, y1 - y0] : null;
  }
  return { fit, fitPicture, oneToOne, toChange, toLine, reveal, initial, opened, keep, back, begin, follow, visible, moved: () => moved };
}
