// A sortable table of plain rows (the kernel tables of the trace browser and of a comparison). Click a header to sort
// by it (again: the other way); empty cells sort last. Bundled into the modules that import it (tgviz/views/assets.py esm).

/** A column: fmt writes a cell, tip its tooltip.
 * @typedef {{key:string,label:string,num?:boolean,title?:string,fmt?:(v:any,row:any)=>string,tip?:(row:any)=>string}} Column */

/** @param {any} v */
const blank = (v) => v === null || v === undefined || v === "";

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
  const value = (/** @type {any} */ row, /** @type {Column} */ c) => row[c.key];
  function fill() {
    const col = columns.find((c) => c.key === by);
    const sorted = col ? [...rows].sort((x, y) => {
      const a = value(x, col), b = value(y, col);
      if (blank(a) || blank(b)) return blank(a) === blank(b) ? 0 : blank(a) ? 1 : -1;
      return dir * (col.num ? Number(a) - Number(b) : String(a).localeCompare(String(b)));
    }) : rows;
    body.replaceChildren();
    for (const row of sorted) {
      const tr = body.insertRow();
      tr.dataset.index = String(rows.indexOf(row));
      for (const c of columns) {
        const td = tr.insertCell();
        td.textContent = c.fmt ? c.fmt(value(row, c), row) : c.num ? num(value(row, c)) : String(value(row, c) ?? "–");
        if (c.num) td.className = "num";
        if (c.tip) td.title = c.tip(row);
      }
      if (onRow) tr.addEventListener("click", () => onRow(row, tr));
    }
    for (const th of head.cells) th.dataset.sort = th.dataset.key === by ? (dir > 0 ? "asc" : "desc") : "";
  }
  for (const c of columns) {
    const th = document.createElement("th");
    th.textContent = c.label;
    th.dataset.key = c.key;
    if (c.title) th.title = c.title;
    if (c.num) th.className = "num";
    th.addEventListener("click", () => { dir = by === c.key ? -dir : (c.num ? -1 : 1); by = c.key; fill(); });
    head.append(th);
  }
  fill();
  return table;
}
