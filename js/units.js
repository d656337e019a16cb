// Figures as the widget and the report print them: times from µs, bytes, plain numbers.

/** A time given in µs, to 3 significant figures in the unit that reads best (ns, µs, ms, s): "9.64 µs", "7.20 µs",
 * "123 µs", "1.23 ms". Every duration on screen goes through here (tgviz.trace.units.time_text is its Python twin,
 * tests/views/test_units.py holds them equal). @param {number|null} us */
export function fmtTime(us) {
  if (us === null || !Number.isFinite(us)) return "–";
  // to the ns first, as Python's time_text (a message's times come so rounded), then to 3 significant figures: 999.7 µs
  // reads "1.00 ms", not "1000 µs"
  const r = Number(Number(us.toFixed(3)).toPrecision(3));
  if (r === 0) return "0 µs";
  const a = Math.abs(r);
  const [div, unit] = a >= 1e6 ? [1e6, "s"] : a >= 1e3 ? [1e3, "ms"] : a >= 1 ? [1, "µs"] : [1e-3, "ns"];
  const v = r / div, m = Math.abs(v);
  return `${v.toFixed(m >= 100 ? 0 : m >= 10 ? 1 : 2)} ${unit}`;
}

/** A span of times, the unit once where both ends share it: "2.92–6.33 µs", else "908 ns – 2.88 µs".
 * @param {number|null} a @param {number|null} b */
export function fmtRange(a, b) {
  const x = fmtTime(a), y = fmtTime(b), unit = (/** @type {string} */ t) => t.split(" ")[1];
  return unit(x) && unit(x) === unit(y) ? `${x.split(" ")[0]}–${y}` : `${x} – ${y}`;
}

/** Bytes, as fmtSize writes them, with the exact count after where they are rounded: "24.5 KiB (25,088 B)".
 * @param {number} b */
export function fmtBytes(b) {
  return Math.abs(b) < 1024 ? fmtSize(b) : `${fmtSize(b)} (${b.toLocaleString("en-US")} B)`;
}

const BYTE_UNITS = /** @type {const} */ ([[2 ** 30, "GiB"], [2 ** 20, "MiB"], [2 ** 10, "KiB"]]);

/** A byte count: exact below 1 KiB ("96 B"), else 3 significant figures in KiB, MiB or GiB: "24.5 KiB", "1.02 MiB",
 * "1023 KiB". Every byte count on screen goes through here (tgviz.trace.units.bytes_text is its Python twin).
 * @param {number} b */
export function fmtSize(b) {
  const a = Math.abs(b);
  if (a < 1024) return `${b.toLocaleString("en-US")} B`;
  let k = BYTE_UNITS.findIndex(([div]) => a >= div);
  if (k > 0 && a / BYTE_UNITS[k][0] >= 1023.5) k -= 1;  // would round to 1024: one unit up ("1.00 MiB")
  const [div, unit] = BYTE_UNITS[k], m = a / div;
  return `${(b / div).toFixed(m >= 99.95 ? 0 : m >= 9.995 ? 1 : 2)} ${unit}`;
}

/** A count with its noun in agreement: "1 node", "2 nodes" (many: the plural where not word+s), grouped by thousands.
 * tgviz.trace.units.plural is its Python twin. @param {number} n @param {string} word @param {string} [many] */
export function plural(n, word, many) {
  return `${n.toLocaleString("en-US")} ${n === 1 ? word : many ?? `${word}s`}`;
}

/** ", not settled" after a re-timed median whose runs a bound stopped before it settled (Timing.stable false: tgviz run
 * says "450 µs (288 runs, not settled)"), else "". @param {boolean|null|undefined} settled */
export const notSettled = (settled) => (settled === false ? ", not settled" : "");

/** A buffer's size in elements: "float × 69,696" (a shape is "float[8,1,28,28]", its numbers never grouped; so a size is
 * never written as one). tgviz.trace.units.count_text is its Python twin. @param {string} dtype @param {number} n */
export function fmtCount(dtype, n) {
  return `${dtype} × ${n.toLocaleString("en-US")}`;
}

/** A number with its significant digits (3), grouped thousands above 1000. @param {number} v */
export function fmtNum(v) {
  if (!Number.isFinite(v)) return "–";
  return Math.abs(v) >= 1000 ? Math.round(v).toLocaleString("en-US") : Number(v.toPrecision(3)).toString();
}
