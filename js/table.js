// A sortable table of plain rows (the kernel tables of the trace browser and of a comparison). Click a header to sort
// by it (again: the other way); empty cells sort last. A column may show two sides' values one above the other (sides:
// their keys; its header has a button per side, names, that sorts by that side's). A row whose `under` is another row's
// position in rows follows that row, sorted among the rows under it. Bundled into the modules that import it
// (tgviz/views/assets.py esm).

/** A column: fmt writes a value (key: the row's key it is of), tip its tooltip; sides: the keys of a two-sided column,
 * names: its sides' names (a row that has a value of the column's own key shows that one instead of the sides');
 * clip: a long text, cut short in its cell (an ellipsis; table.css) so that every row stays one line high, whole in
 * its tooltip (where tip gives none); wrap: a text that may go on more lines where the table is narrower than its
 * lines, in the pieces wrapPieces gives (one line where there is room); breaks: a kernel's name, which may go on more
 * lines after its underscores where the table is narrower than its lines ("r_2_13_13_2_2_2_4_4_3_3 #1": a model's
 * names, whole, made its kernel table 100 px wider than a notebook's widget).
 * @typedef {{key:string,label:string,num?:boolean,title?:string,fmt?:(v:any,row:any,key:string)=>string,
 *   tip?:(row:any,key:string)=>string,sides?:string[],names?:string[],clip?:boolean,wrap?:boolean,breaks?:boolean}} Column */

/** @param {any} v */
const blank = (v) => v === null || v === undefined || v === "";

/** A wrap column's text in the pieces it may go on more lines between, each kept whole: never between a figure and
 * its unit or word, a range of one unit whole ("2.92–6.33 µs," then "3 launches"), one of two units after its dash
 * ("2.33 µs –", "3.11 ms,": whole, its piece alone widened the kernel table past the widget). @param {string} text */
export function wrapPieces(text) {
  return text.split(/(?<!\d) (?!–)/);
}

/** Set a cell's text: a breaks column's with a line break allowed after each underscore (<wbr>: copied as the text
 * itself). @param {HTMLElement} el @param {Column} c @param {string} text */
function setText(el, c, text) {
  if (!c.breaks) { el.textContent = text; return; }
  el.classList.add("breaks");
  el.replaceChildren(...text.split(/(?<=_)/).flatMap((p, i) => (i ? [document.createElement("wbr"), p] : [p])));
}

const grouped = new Intl.NumberFormat("en-US", { maximumFractionDigits: 3 });  // made once: toLocaleString makes one a call
/** A number with thousands grouped, or "–" for none. @param {any} v */
const num = (v) => (blank(v) ? "–" : grouped.format(Number(v)));

/** A <table class="tgviz-table"> of rows under columns; onRow(row, tr) on a click of a row.
 * @param {Column[]} columns @param {any[]} rows @param {(row:any, tr:HTMLElement)=>void} [onRow] */
export function sortableTable(columns, rows, onRow) {
  const table = document.createElement("table");
  table.className = "tgviz-table";
  const head = table.createTHead().insertRow(), body = table.createTBody();
  let by = "", dir = 1;
  /** @param {Column} c @param {any} row @param {string} key */
  const text = (c, row, key) => (c.fmt ? c.fmt(row[key], row, key) : c.num ? num(row[key]) : String(row[key] ?? "–"));
  function fill() {
    const col = columns.find((c) => c.key === by || c.sides?.includes(by));
    const order = (/** @type {any[]} */ some) => (col ? [...some].sort((x, y) => {
      const a = x[by] ?? x[col.key], b = y[by] ?? y[col.key];  // (a row with the column's own value: sorted by it)
      if (blank(a) || blank(b)) return blank(a) === blank(b) ? 0 : blank(a) ? 1 : -1;
      return dir * (col.num ? Number(a) - Number(b) : String(a).localeCompare(String(b)));
    }) : some);
    const sorted = order(rows.filter((r) => blank(r.under))).flatMap((r) => [r, ...order(rows.filter((u) => u.under === rows.indexOf(r)))]);
    body.replaceChildren();
    for (const row of sorted) {
      const tr = body.insertRow();
      tr.dataset.index = String(rows.indexOf(row));
      if (!blank(row.under)) tr.classList.add("under");
      for (const c of columns) {
        const td = tr.insertCell();
        if (c.num) td.className = "num";
        if (c.clip) { td.classList.add("clip"); td.dataset.col = c.key; }  // (table.css gives each its share)
        if (c.wrap) {  // its pieces, each whole on a line (table.css)
          td.classList.add("wrap");
          td.replaceChildren(...wrapPieces(text(c, row, c.key)).flatMap((p, i) => {
            const piece = document.createElement("span");
            piece.textContent = p;
            return i ? [" ", piece] : [piece];
          }));
          if (c.tip) td.title = c.tip(row, c.key);
          continue;
        }
        if (!c.sides || row[c.key] !== undefined) {
          setText(td, c, text(c, row, c.key));
          if (c.tip) td.title = c.tip(row, c.key);
          else if (c.clip) td.title = td.textContent;
          continue;
        }
        for (const key of c.sides) {
          const line = td.appendChild(document.createElement("div"));
          line.className = "side";
          setText(line, c, text(c, row, key));
          if (c.tip) line.title = c.tip(row, key);
        }
      }
      if (onRow) tr.addEventListener("click", () => onRow(row, tr));
    }
    for (const el of head.querySelectorAll("[data-key]")) /** @type {HTMLElement} */ (el).dataset.sort = /** @type {HTMLElement} */ (el).dataset.key === by ? (dir > 0 ? "asc" : "desc") : "";
  }
  /** Clicks on el sort by key (again: the other way); marked: el shows whether they do. @param {HTMLElement} el
   * @param {Column} c @param {string} key @param {boolean} marked */
  function sorts(el, c, key, marked) {
    if (marked) el.dataset.key = key;
    el.addEventListener("click", (ev) => { ev.stopPropagation(); dir = by === key ? -dir : (c.num ? -1 : 1); by = key; fill(); });
  }
  for (const c of columns) {
    const th = document.createElement("th");
    th.textContent = c.label;
    if (c.title) th.title = c.title;
    if (c.num) th.className = "num";
    sorts(th, c, c.sides ? c.sides[0] : c.key, !c.sides);  // a two-sided column's header: by its first side's
    (c.sides ?? []).forEach((key, i) => {
      const b = th.appendChild(document.createElement("button"));
      b.className = "side";
      b.textContent = c.names?.[i] ?? key;
      b.title = `sort by ${b.textContent}'s`;
      sorts(b, c, key, true);
    });
    head.append(th);
  }
  fill();
  return table;
}
