// The node side of tests/views/test_search_view.py: the report page's search (js/port/search.js) over an index, for each
// text. Input (a JSON file, argv[2]): {index, texts}. Output (JSON on stdout): per text, its search message.
import { readFileSync } from "node:fs";
import { searchMessage } from "../../js/port/search.js";

const input = JSON.parse(readFileSync(process.argv[2], "utf8"));
process.stdout.write(JSON.stringify(input.texts.map((/** @type {string} */ t) => searchMessage(input.index, t))));
