// Why didn't two kernels fuse: the port of tgviz/trace/program.py, on the program map's message (tgviz/views/programmap.py):
// why() mirrors Program.why, the buffers between two kernels. tests/views/test_programmap.py holds it equal to the Python.

/** @typedef {import("../messages.js").MapKernel} MapKernel */
/** @typedef {import("../messages.js").MapBuffer} MapBuffer */

/** The buffers between kernels a and b (indices, either order): those one writes and the other reads; where there are
 * none, those along the shortest chain of kernels from the earlier to the later; [] when no data flows between them.
 * Mirrors Program.why. @param {MapKernel[]} kernels @param {MapBuffer[]} buffers @param {number} a @param {number} b
 * @returns {number[]} buffer indices */
export function why(kernels, buffers, a, b) {
  const [ka, kb] = a <= b ? [a, b] : [b, a];
  if (ka === kb) return [];
  const direct = kernels[ka].writes.filter((i) => buffers[i].readers.includes(kb));
  if (direct.length) return direct;
  /** @type {Map<number, [number, number]>} kernel -> [the kernel before it on the chain, the buffer between] */
  const prev = new Map();
  const seen = new Set([ka]);
  let todo = [ka];
  while (todo.length) {
    /** @type {number[]} */
    const next = [];
    for (const k of todo) {
      for (const buf of kernels[k].writes) {
        for (const r of buffers[buf].readers) {
          if (seen.has(r) || r > kb) continue;
          seen.add(r);
          prev.set(r, [k, buf]);
          next.push(r);
        }
      }
    }
    todo = next;
  }
  if (!prev.has(kb)) return [];
  const path = [];
  let k = kb;
  while (k !== ka) {
    const [p, buf] = /** @type {[number, number]} */ (prev.get(k));
    path.push(buf);
    k = p;
  }
  return path.reverse();
}
