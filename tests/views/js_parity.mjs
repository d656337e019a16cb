// The node side of tests/views/test_js_parity.py: runs the HTML report's JS on the report's own data, as the page does, and
// prints what it computed. Input (a JSON file, argv[2]): {state, chunks (the report's data chunks by name, decoded),
// graphs: [{step, ks}], pictures: [{step, match, view, plain, most?}], nodes: [{step, match, key}]}. Output (JSON on stdout): per graphs entry, per k, the
// sha256 of the node keys of the step's graph after k matches (tinygrad's toposort order, one per line; {error} where
// the page cannot make it); per pictures
// entry, the picture message computed with dot's plain output of each DOT text given (the DOT texts it laid out, its
// SVG, counts, panels); per nodes entry, its node panel's history, lineage, origins (its own?) and the kernel it becomes; with tables:
// true, each segment's node table rows as the page unpacks them, by chunk name.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { toposort } from "../../js/port/picture.js";
import { nodeMessage, pictureMessage } from "../../js/port/protocol.js";
import { unpackRows } from "../../js/port/replay.js";
import { contentsOf, pageData } from "../../js/report.js";
import { sha256 } from "../../js/vendor/sha256.js";

const input = JSON.parse(readFileSync(process.argv[2], "utf8"));
const load = async (/** @type {string} */ name) => {
  if (!(name in input.chunks)) throw new Error(`the report has no data "${name}"`);
  return input.chunks[name];
};
const data = pageData(input.state, load, sha256);
const digest = (/** @type {string} */ text) => createHash("sha256").update(text).digest("hex");

const graphs = [];
for (const { step, ks } of input.graphs) {
  const t = await data.table(step);
  graphs.push(ks.map((/** @type {number} */ k) => {
    try { return digest(toposort(t.rows, data.graphAt(t, k)).map((n) => t.rows[n][0]).join("\n")); }
    catch (e) { return { error: `${e}` }; }  // a graph the page cannot make: what it says
  }));
}
const pictures = [];
for (const { step, match, view, plain, most } of input.pictures) {
  /** @type {string[]} */
  const dots = [];
  const m = await pictureMessage(data, { step, match, view }, (dot) => {
    dots.push(dot);
    if (!(dot in plain)) throw new Error(`${step}: a DOT text Python did not lay out`);
    return plain[dot];
  }, most ?? undefined);
  pictures.push({ dots, svg: m.svg, shown: m.shown, total: m.total, partial: m.partial, message: m.message, info: m.info,
                  match_info: m.match_info, kernel: m.kernel, produced: m.produced, schedule: m.schedule, node_matches: m.node_matches });
}
const nodes = [];
for (const { step, match, key } of input.nodes ?? []) {
  const m = await nodeMessage(data, { step, match }, key);
  nodes.push({ history: m.history, lineage: m.lineage, origins: m.origins, origins_own: m.origins_own, becomes: m.becomes, ...(m.unknown ? { unknown: m.unknown } : {}) });
}
/** @type {Record<string, any>} */
const tables = {};
for (const [name, d] of Object.entries(input.chunks)) {
  if (!input.tables || !name.startsWith("t-")) continue;
  const contents = await contentsOf(input.chunks.contents, Number(name.slice(2)), async (p) => input.chunks[`c-${p}`]);
  tables[name] = unpackRows(d, contents, sha256, input.state.notes, input.state.config.opFamilies).rows;
}
process.stdout.write(JSON.stringify({ graphs, pictures, nodes, tables }));
