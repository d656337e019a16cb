// A buffer drawn as a grid of its elements, for the access tab (access.js): a 2-D view of its shape (dimensions of
// size 1 left out; the last two as rows and columns; a third as tiles across, the others as tiles down, a gap between
// tiles; one dimension wrapped into rows of 64), each element a cell coloured by what the tab lights, with the axes
// labelled. Painted into one canvas image (a 256x256 buffer is 65,536 cells: a few milliseconds); hit-tested by
// arithmetic. A view bigger than GRID_MAX cells a side draws a window of it, moved to what is lit, and says so.
import { h } from "./dom.js";

const GRID_MAX = 384;        // cells a side drawn at most: past that, a window
const GRID_WRAP = 64;        // a one-dimensional buffer: elements per row
const GRID_HEIGHT = 260;  // pixels a grid takes down where its cells can stay 4 px or more (a window: twice that)
const GRID_TOP = 14, GRID_LEFT = 4, GRID_ROWS_LEFT = 40;  // room for the tiles' labels

/** How a shape is laid out as rows and columns of cells. @param {number[]} shape */
export function gridLayout(shape) {
  const strides = shape.map((_, i) => shape.slice(i + 1).reduce((a, b) => a * b, 1));
  const kept = shape.flatMap((n, i) => (n > 1 ? [i] : []));
  const numel = shape.reduce((a, b) => a * b, 1);
  const size = (/** @type {number} */ i) => shape[kept[i]], k = kept.length;
  /** @type {{rows: number, cols: number, tileRows: number, tileCols: number, across: number, axes: string}} */
  let g;
  if (k === 0) g = { rows: 1, cols: 1, tileRows: 1, tileCols: 1, across: 1, axes: "one element" };
  else if (k === 1) {
    const cols = Math.min(numel, GRID_WRAP);
    g = { rows: Math.ceil(numel / cols), cols, tileRows: Math.ceil(numel / cols), tileCols: cols, across: 1,
          axes: numel > GRID_WRAP ? `d${kept[0]} (${numel}): ${GRID_WRAP} a row` : `d${kept[0]} (${numel}) →` };
  } else {
    const hh = size(k - 2), ww = size(k - 1), across = k >= 3 ? size(k - 3) : 1;
    const down = kept.slice(0, Math.max(0, k - 3)).reduce((a, i) => a * shape[i], 1);
    g = { rows: down * (hh + 1) - 1, cols: across * (ww + 1) - 1, tileRows: hh, tileCols: ww, across,
          axes: `d${kept[k - 2]} (${hh}) ↓ · d${kept[k - 1]} (${ww}) →` + (k >= 3 ? ` · tiles: d${kept[k - 3]} (${across}) →` : "") +
                (k >= 4 ? `, ${kept.slice(0, k - 3).map((i) => `d${i}`).join(",")} (${down}) ↓` : "") };
    if (k === 2) { g.rows = hh; g.cols = ww; }
  }
  /** The flat element at row r, column c; -1 for a gap or past the end. @param {number} r @param {number} c */
  function flatAt(r, c) {
    if (r < 0 || c < 0 || r >= g.rows || c >= g.cols) return -1;
    if (k <= 1) { const f = r * g.cols + c; return f < numel ? f * (k ? strides[kept[0]] : 1) : -1; }
    const th = g.tileRows + (k >= 3 ? 1 : 0), tw = g.tileCols + (k >= 3 ? 1 : 0);
    const y = r % th, x = c % tw;
    if (y >= g.tileRows || x >= g.tileCols) return -1;
    let f = y * strides[kept[k - 2]] + x * strides[kept[k - 1]];
    if (k >= 3) f += Math.floor(c / tw) * strides[kept[k - 3]];
    let down = Math.floor(r / th);  // the leading dimensions, the last fastest
    for (let i = k - 4; i >= 0; i--) { f += (down % shape[kept[i]]) * strides[kept[i]]; down = Math.floor(down / shape[kept[i]]); }
    return f;
  }
  /** The row and column of a flat element. @param {number} f @returns {[number, number]} */
  function cellOf(f) {
    if (k <= 1) { const i = k ? Math.floor(f / strides[kept[0]]) : 0; return [Math.floor(i / g.cols), i % g.cols]; }
    const at = kept.map((d) => Math.floor(f / strides[d]) % shape[d]);
    const th = g.tileRows + (k >= 3 ? 1 : 0), tw = g.tileCols + (k >= 3 ? 1 : 0);
    let down = 0;
    for (let i = 0; i < k - 3; i++) down = down * shape[kept[i]] + at[i];
    return [down * th + at[k - 2], (k >= 3 ? at[k - 3] * tw : 0) + at[k - 1]];
  }
  /** A flat element's coordinates in the shape. @param {number} f */
  const coords = (f) => shape.map((n, i) => Math.floor(f / strides[i]) % n);
  return { ...g, numel, k, kept, flatAt, cellOf, coords };
}

/** A buffer's grid (cells up to 28 px, smaller to fit the width and, down to 4 px, GRID_HEIGHT): paint(base, lit) draws
 * every cell in the window (base: each element's colour as 0xAABBGGRR; lit: those lit over it),
 * hit(ev) is the element under the pointer (-1: none); show(flats) moves a window to hold the first of them.
 * @param {number[]} shape @param {number} width the pixels it may take across */
export function bufferGrid(shape, width) {
  const g = gridLayout(shape);
  const viewCols = Math.min(g.cols, GRID_MAX);
  const cell = Math.max(1, Math.min(28, Math.floor((width - (g.k >= 4 ? GRID_ROWS_LEFT : GRID_LEFT)) / viewCols),
                                    Math.max(4, Math.floor(GRID_HEIGHT / Math.min(g.rows, GRID_MAX)))));
  const viewRows = Math.min(g.rows, GRID_MAX, Math.max(8, Math.floor(2 * GRID_HEIGHT / cell)));  // a tall one: a window
  const tiles = g.k >= 3 && (g.tileCols + 1) * cell >= 22;  // room to label them
  const top = tiles ? GRID_TOP : 0, left = g.k >= 4 && (g.tileRows + 1) * cell >= 12 ? GRID_ROWS_LEFT : GRID_LEFT;
  const canvas = /** @type {HTMLCanvasElement} */ (h("canvas", { class: "tgviz-access-canvas" }));
  canvas.width = left + viewCols * cell;
  canvas.height = top + viewRows * cell;
  const note = h("div", { class: "tgviz-access-window", hidden: "" });
  const el = h("div", { class: "tgviz-access-grid" }, [h("div", { class: "tgviz-access-axes" }, [g.axes]), canvas, note]);
  const ctx = /** @type {CanvasRenderingContext2D} */ (canvas.getContext("2d"));
  const image = ctx.createImageData(viewCols * cell, viewRows * cell), px = new Uint32Array(image.data.buffer);
  let r0 = 0, c0 = 0;
  const windowed = g.rows > viewRows || g.cols > viewCols;

  function labels() {
    ctx.clearRect(0, 0, canvas.width, top);
    ctx.clearRect(0, 0, left, canvas.height);
    ctx.fillStyle = getComputedStyle(canvas).color || "#555";
    ctx.font = "10px sans-serif";
    if (tiles) {  // tiles across: the third dimension from the end
      const tw = (g.tileCols + 1) * cell, d = g.kept[g.k - 3];
      for (let t = Math.floor(c0 / (g.tileCols + 1)); t < g.across; t++) {
        const x = left + (t * (g.tileCols + 1) - c0) * cell;
        if (x > canvas.width) break;
        ctx.fillText(`d${d}=${t}`, Math.max(left, x), 10, Math.max(10, tw - 2));
      }
    }
    if (left === GRID_ROWS_LEFT) {  // tiles down: the dimensions before it, by their values
      const th = g.tileRows + 1, lead = g.kept.slice(0, g.k - 3), downs = Math.ceil(g.rows / th);
      for (let t = Math.floor(r0 / th); t < downs; t++) {
        const y = top + (t * th - r0) * cell + 10;
        if (y > canvas.height) break;
        let rest = t;
        const at = lead.map(() => 0);
        for (let i = lead.length - 1; i >= 0; i--) { at[i] = rest % shape[lead[i]]; rest = Math.floor(rest / shape[lead[i]]); }
        ctx.fillText(`${lead.map((d) => `d${d}`).join(",")}=${at.join(",")}`, 1, Math.max(top + 10, y), left - 3);
      }
    }
  }
  /** @type {Int32Array|null} the element of each cell of the window (-1: a gap), made when the window moves */
  let cellFlat = null;
  /** @type {[Uint32Array, Map<number, number>]} */
  let last = [new Uint32Array(0), new Map()];
  /** Paint every cell of the window: an element lit (colour as 0xAABBGGRR) in its colour, the others in base's.
   * @param {Uint32Array} base by element @param {Map<number, number>} lit */
  function paint(base, lit) {
    const [before, shown] = last;
    last = [base, lit];
    if (cellFlat && base === before && lit.size + shown.size < viewRows * viewCols / 8) {  // a few cells changed: those only
      const gap = cell >= 5 ? 1 : 0;
      for (const f of new Set([...shown.keys(), ...lit.keys()])) {
        const now = lit.get(f) ?? base[f];
        if (now === (shown.get(f) ?? base[f])) continue;
        const b = cellBox(f);
        if (!b) continue;
        ctx.fillStyle = `rgb(${now & 255},${(now >>> 8) & 255},${(now >>> 16) & 255})`;
        ctx.fillRect(b.x, b.y, b.size - gap, b.size - gap);
      }
      return;
    }
    if (!cellFlat) {
      cellFlat = new Int32Array(viewRows * viewCols);
      for (let i = 0; i < cellFlat.length; i++) cellFlat[i] = g.flatAt(r0 + Math.floor(i / viewCols), c0 + (i % viewCols));
    }
    const flats = cellFlat;
    const gap = cell >= 5 ? 1 : 0, w = viewCols * cell, inner = cell - gap;
    px.fill(0);
    for (let i = 0; i < flats.length; i++) {
      const f = flats[i];
      if (f < 0) continue;
      const colour = lit.size && lit.has(f) ? /** @type {number} */ (lit.get(f)) : base[f];
      const r = Math.floor(i / viewCols);
      let o = r * cell * w + (i - r * viewCols) * cell;
      for (let y = 0; y < inner; y++, o += w) px.fill(colour, o, o + inner);
    }
    ctx.putImageData(image, left, top);
    labels();
  }
  /** Where an element's cell is drawn, in the canvas's pixels (null: outside the window). @param {number} f */
  function cellBox(f) {
    const [r, c] = g.cellOf(f);
    if (r < r0 || r >= r0 + viewRows || c < c0 || c >= c0 + viewCols) return null;
    return { x: left + (c - c0) * cell, y: top + (r - r0) * cell, size: cell };
  }
  /** @type {any} */ (canvas).tgvizCell = cellBox;  // for tests and benchmarks: what the user sees of an element
  return {
    el, layout: g, canvas,
    paint, cellBox,
    /** The element under a pointer event (-1: none). @param {MouseEvent} ev */
    hit(ev) {
      const b = canvas.getBoundingClientRect(), sx = canvas.width / b.width, sy = canvas.height / b.height;
      const x = (ev.clientX - b.left) * sx - left, y = (ev.clientY - b.top) * sy - top;
      return x < 0 || y < 0 ? -1 : g.flatAt(r0 + Math.floor(y / cell), c0 + Math.floor(x / cell));
    },
    /** Move the window (a view too big to draw whole) to hold the first of these elements, and say what it shows.
     * @param {number[]} flats */
    show(flats) {
      if (!windowed) return;
      if (flats.length) {
        const [r, c] = g.cellOf(flats[0]);
        if (r < r0 || r >= r0 + viewRows || c < c0 || c >= c0 + viewCols) {
          r0 = Math.max(0, Math.min(g.rows - viewRows, r - (viewRows >> 1)));
          c0 = Math.max(0, Math.min(g.cols - viewCols, c - (viewCols >> 1)));
          cellFlat = null;
          paint(...last);
        }
      }
      note.hidden = false;
      note.textContent = `a window: rows ${r0}–${r0 + viewRows - 1} of ${g.rows}, columns ${c0}–${c0 + viewCols - 1} of ${g.cols} (it follows what is lit)`;
    },
  };
}
