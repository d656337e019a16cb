// The node side of tests/views/test_programmap.py's parity test: js/port/why.js on a program map message. Input (a JSON
// file, argv[2]): {kernels, buffers, pairs: [[a, b]]}. Output (JSON on stdout): per pair, the buffer indices why() gives.
import { readFileSync } from "node:fs";
import { why } from "../../js/port/why.js";

const input = JSON.parse(readFileSync(process.argv[2], "utf8"));
process.stdout.write(JSON.stringify(input.pairs.map(([a, b]) => why(input.kernels, input.buffers, a, b))));
