// Figures as the widget and the report print them: times from µs, bytes, plain numbers.

/** A time given in µs, to 3 significant figures in the unit that reads best (ns, µs, ms, s): "9.64 µs", "7.20 µs",
 * "123 µs", "1.23 ms". Every duration on screen goes through here (tgviz.trace.units.time_text is its Python twin,
 * tests/views/test_units.py holds them equal). @param {number|null} us */
export function fmtTime(us) {
  if (us === null || !Number.isFinite(us)) return "–";
  const r = Number(us.toPrecision(3));  // rounded first, so 999.7 µs reads "1.00 ms", not "1000 µs"
  if (r === 0) return "0 µs";
  const a = Math.abs(r);
  const [div, unit] = a >= 1e6 ? [1e6, "s"] : a >= 1e3 ? [1e3, "ms"] : a >= 1 ? [1, "µs"] : [1e-3, "ns"];
  const v = r / div, m = Math.abs(v);
  return `${v.toFixed(m >= 100 ? 0 : m >= 10 ? 1 : 2)} ${unit}`;
}

/** Bytes, exact below 1 KiB, else in KiB / MiB / GiB with the exact count after. @param {number} b */
export function fmtBytes(b) {
  const exact = `${b.toLocaleString("en-US")} B`;
  if (Math.abs(b) < 1024) return exact;
  const [v, u] = b >= 2 ** 30 ? [b / 2 ** 30, "GiB"] : b >= 2 ** 20 ? [b / 2 ** 20, "MiB"] : [b / 1024, "KiB"];
  return `${v.toFixed(2)} ${u} (${exact})`;
}

/** A number with its significant digits (3), grouped thousands above 1000. @param {number} v */
export function fmtNum(v) {
  if (!Number.isFinite(v)) return "–";
  return Math.abs(v) >= 1000 ? Math.round(v).toLocaleString("en-US") : Number(v.toPrecision(3)).toString();
}
