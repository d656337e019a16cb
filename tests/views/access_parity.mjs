// The node side of tests/views/test_access_view.py: js/port/access.js run on access messages, as the page runs it.
// Input (a JSON file, argv[2]): [{msg (an AccessMsg), outs: [flat output elements], threads: [{var number: value}]}].
// Output (JSON on stdout): per input, the reads of each output element ({slot: Touched}), each thread's reads and writes,
// and the buffers' counts (without the per-element reads).
import { readFileSync } from "node:fs";
import { bufferCounts, readsOf, threadOf, writtenBy } from "../../js/port/access.js";

const out = [];
for (const { msg, outs, threads } of JSON.parse(readFileSync(process.argv[2], "utf8"))) {
  const ast = msg.stages.find((/** @type {any} */ s) => s.stage === "ast");
  const store = ast.accesses.find((/** @type {any} */ a) => a.kind === "store");
  const numel = msg.buffers.find((/** @type {any} */ b) => b.slot === store.slot).numel, by = writtenBy(ast, store, numel);
  const reads = outs.map((/** @type {number} */ e) => Object.fromEntries(readsOf(msg, store, by[e])));
  const ts = threads.map((/** @type {Record<string, number>} */ ids) =>
    Object.fromEntries(threadOf(msg, new Map(Object.entries(ids).map(([k, v]) => [Number(k), v])))));
  const counts = Object.fromEntries([...bufferCounts(msg, "ast")].map(([b, c]) => [b, { ...c, per: undefined, wrote: undefined }]));
  out.push({ reads, threads: ts, counts });
}
process.stdout.write(JSON.stringify(out));
