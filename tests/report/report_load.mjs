// The node side of tests/report/test_report_load.py: the page's lazy node keys and contents. Input (a JSON file, argv[2]):
// {state, chunks} as tests/js_parity.mjs takes them. Output (JSON on stdout): per segment chunk, its contents as the
// page puts them together from the pieces (contentsOf), the rows unpacked eagerly (every key computed) and lazily with
// every key then asked for (keyOf); how many rows opening the first step (data.table and its whole-step graphs) left
// without a key, and the chunks the page decoded to open it.
import { readFileSync } from "node:fs";
import { keyOf, unpackRows } from "../../js/port/replay.js";
import { contentsOf, pageData } from "../../js/report.js";
import { sha256 } from "../../js/vendor/sha256.js";

const input = JSON.parse(readFileSync(process.argv[2], "utf8"));
const { notes, config } = input.state;
/** @type {Record<string, {contents: any[], eager: any[], lazy: any[]}>} */
const tables = {};
for (const [name, d] of Object.entries(input.chunks)) {
  if (!name.startsWith("t-")) continue;
  const contents = await contentsOf(input.chunks.contents, Number(name.slice(2)), async (p) => input.chunks[`c-${p}`]);
  const lazy = unpackRows(d, contents, sha256, notes, config.opFamilies, true);
  lazy.rows.forEach((_, i) => keyOf(lazy, sha256, i));
  tables[name] = { contents, eager: unpackRows(d, contents, sha256, notes, config.opFamilies).rows, lazy: lazy.rows };
}
/** @type {string[]} */
const loaded = [];
const data = pageData(input.state, async (name) => { loaded.push(name); return input.chunks[name]; }, sha256);
const first = /** @type {string} */ (Object.keys(input.state.segments)[0]);
const t = await data.table(first);
const shown = [data.graphAt(t, 0), data.after(t)];
process.stdout.write(JSON.stringify({ tables, unkeyed: t.rows.filter((r) => r[0] === "").length, rows: t.rows.length,
                                      shownKeyed: shown.every((r) => t.rows[r][0] !== ""), loaded }));
