// Figures as the run's tabs (timeline.js, memchart.js, roofline.js) print them: times from µs, bytes, plain numbers.

/** A time given in µs, in the unit that reads best (ns, µs, ms, s). @param {number|null} us */
export function fmtTime(us) {
  if (us === null || !Number.isFinite(us)) return "–";
  const a = Math.abs(us);
  if (a >= 1e6) return `${(us / 1e6).toFixed(3)} s`;
  if (a >= 1e3) return `${(us / 1e3).toFixed(3)} ms`;
  if (a >= 1) return `${us.toFixed(a >= 100 ? 1 : 3)} µs`;
  return `${(us * 1e3).toFixed(0)} ns`;
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
