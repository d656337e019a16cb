// The overview (minimap) of a graph bigger than its canvas (panzoom.js): each node a dot of its colour, the part in view
// outlined; a click or a drag on it moves the view there.

/** @typedef {import("./ui.js").Ui} Ui */
/** @typedef {import("./fullest.js").Box} Box */

const MINI_W = 200, MINI_H = 140;  // the overview's largest size, CSS px
const MINI_PART = 0.25;  // ... and its largest part of the canvas's width and height (a narrow canvas: a smaller overview)

/** The overview of the picture: each node a dot of its colour (the changed ones outlined), the view's rectangle on top;
 * shown only while the picture is bigger than the canvas. A click or drag on it calls moveTo with that point (SVG
 * units). @param {Ui} ui @param {(x: number, y: number) => void} moveTo */
export function overview(ui, moveTo) {
  const el = document.createElement("canvas");
  el.className = "tgviz-minimap";
  el.title = "overview: click or drag to move the view";
  ui.canvas.append(el);
  /** @type {SVGSVGElement|null} the picture drawn in `base` */
  let drawn = null, k = 1, drawnFor = "";
  /** The overview's scale for a picture w x h in the canvas now. @param {number} w @param {number} h */
  const scaleFor = (w, h) => {
    const cw = ui.canvas.clientWidth || 600, ch = ui.canvas.clientHeight || 400;
    return Math.min(MINI_W / w, MINI_H / h, (MINI_PART * cw) / w, (MINI_PART * ch) / h);
  };
  const canvasSize = () => `${ui.canvas.clientWidth}x${ui.canvas.clientHeight}`;
  let left = false, top = false;  // the canvas's corner it is in: bottom right unless put elsewhere (clearOf)
  /** the box of the picture's graph (its nodes; SVG units): where all of it is in view, no overview */
  let graph = { x: 0, y: 0, w: 0, h: 0 };
  const base = document.createElement("canvas");
  /** Draw the picture's nodes into `base`, once per picture. @param {SVGSVGElement} svg */
  function paint(svg) {
    const w = Number(svg.getAttribute("width")) || 1, h = Number(svg.getAttribute("height")) || 1;
    k = scaleFor(w, h);
    drawnFor = canvasSize();
    el.width = base.width = Math.max(1, Math.round(w * k)); el.height = base.height = Math.max(1, Math.round(h * k));
    const g = /** @type {CanvasRenderingContext2D} */ (base.getContext("2d"));
    g.fillStyle = getComputedStyle(ui.canvas).backgroundColor || "#fff";
    g.fillRect(0, 0, base.width, base.height);
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (const n of svg.querySelectorAll("g.side g.node")) {
      const m = /translate\(([-\d.]+),([-\d.]+)\)/.exec(n.getAttribute("transform") || "");
      const side = /translate\(([-\d.]+),([-\d.]+)\)/.exec(n.closest("g.side")?.getAttribute("transform") || "");
      const rect = n.querySelector("rect");
      if (!m || !side || !rect) continue;
      const x = (Number(m[1]) + Number(side[1])) * k, y = (Number(m[2]) + Number(side[2])) * k;
      const rw = Math.max(1.5, Number(rect.getAttribute("width")) * k), rh = Math.max(1.5, Number(rect.getAttribute("height")) * k);
      x0 = Math.min(x0, x / k); y0 = Math.min(y0, y / k);
      x1 = Math.max(x1, x / k + Number(rect.getAttribute("width"))); y1 = Math.max(y1, y / k + Number(rect.getAttribute("height")));
      const marked = n.matches(".added, .removed, .changed");
      g.fillStyle = marked ? getComputedStyle(rect).stroke : getComputedStyle(rect).fill;
      g.fillRect(x, y, rw, rh);
    }
    drawn = svg;
    graph = x0 <= x1 ? { x: x0, y: y0, w: x1 - x0, h: y1 - y0 } : { x: 0, y: 0, w, h };
  }
  /** @param {PointerEvent} ev */
  const point = (ev) => { const r = el.getBoundingClientRect(); moveTo((ev.clientX - r.left) / k, (ev.clientY - r.top) / k); };
  let dragging = false;
  el.addEventListener("pointerdown", (ev) => { ev.stopPropagation(); dragging = true; el.setPointerCapture(ev.pointerId); point(ev); });
  el.addEventListener("pointermove", (ev) => { ev.stopPropagation(); if (dragging) point(ev); });
  el.addEventListener("pointerup", (ev) => { ev.stopPropagation(); dragging = false; });
  el.addEventListener("wheel", (ev) => ev.stopPropagation(), { passive: true });
  return {
    /** The box (canvas CSS px) the overview of svg takes where it shows: its canvas and border, 8 px in from its
     * corner (bottom right unless clearOf put it elsewhere), at most MINI_PART of the canvas each way. Null without a
     * picture. @param {SVGSVGElement|null} svg */
    footprint(svg) {
      if (!svg) return null;
      const w = Number(svg.getAttribute("width")) || 1, h = Number(svg.getAttribute("height")) || 1, f = scaleFor(w, h);
      const bw = Math.max(1, Math.round(w * f)) + 2, bh = Math.max(1, Math.round(h * f)) + 2;
      return { x: left ? 8 : (ui.canvas.clientWidth || 600) - 8 - bw, y: top ? 8 : (ui.canvas.clientHeight || 400) - 8 - bh, w: bw, h: bh };
    },
    /** Put the overview of svg in the canvas's corner where it covers the fewest of the boxes (canvas CSS px: what the
     * view shows), the first of bottom right, bottom left, top right, top left where as few (the program map's opening
     * view cannot always move its boxes out from under it: its sides cut no box). @param {SVGSVGElement|null} svg
     * @param {Box[]} boxes */
    clearOf(svg, boxes) {
      let fewest = Infinity, at = [false, false];
      for (const [l, t] of [[false, false], [true, false], [false, true], [true, true]]) {
        left = l; top = t;
        const o = this.footprint(svg);
        const n = o ? boxes.filter((b) => b.x < o.x + o.w && b.x + b.w > o.x && b.y < o.y + o.h && b.y + b.h > o.y).length : 0;
        if (n < fewest) { fewest = n; at = [l, t]; }
      }
      [left, top] = at;
      Object.assign(el.style, { left: left ? "8px" : "auto", right: left ? "auto" : "8px", top: top ? "8px" : "auto", bottom: top ? "auto" : "8px" });
    },
    /** Whether the overview shows. */
    shown: () => !el.hidden,
    /** Show the overview of svg with the rectangle in view (SVG units), or hide it where all of svg's graph is in view
     * (its title and legend need no overview). @param {SVGSVGElement|null} svg @param {Box} view */
    show(svg, view) {
      if (svg && (svg !== drawn || drawnFor !== canvasSize())) paint(svg);
      const g0 = graph;
      el.hidden = !svg || (view.x <= g0.x && view.y <= g0.y && view.x + view.w >= g0.x + g0.w && view.y + view.h >= g0.y + g0.h);
      if (el.hidden || !svg) return;
      const g = /** @type {CanvasRenderingContext2D} */ (el.getContext("2d"));
      g.drawImage(base, 0, 0);
      g.strokeStyle = "#1976d2"; g.lineWidth = 2;
      g.strokeRect(view.x * k, view.y * k, view.w * k, view.h * k);
    },
  };
}
