// Where tinygrad failed inside the capture (tgviz/views/failure.py): the trace opens there (the step and match, the UOp it
// failed on picked, a compiler's line marked in the code), and this box over the graph says what failed, with the
// exception and tinygrad's traceback, and a link back to it.
import { h } from "./dom.js";

/** @typedef {import("./ui.js").Ui} Ui */
/** @typedef {import("./messages.js").FailureInfo} FailureInfo */

const WHAT = { rewrite: "a rewrite raised", compile: "a kernel failed to compile", run: "a kernel failed to run" };

/** Show the failure (or nothing) in ui.failure; back(): go to it again. The traceback replaces the error box's.
 * @param {Ui} ui @param {FailureInfo|null} failure @param {() => void} back */
export function showFailure(ui, failure, back) {
  ui.failure.hidden = !failure;
  if (!failure) return;
  ui.errorBox.hidden = true;  // its traceback is here, beside the failure
  const link = h("button", { class: "tgviz-link tgviz-failure-go", title: "go to where it failed" }, ["show where"]);
  link.addEventListener("click", back);
  ui.failure.replaceChildren(
    h("div", { class: "tgviz-failure-head" }, [h("b", {}, [`tinygrad failed here: ${WHAT[failure.kind]}`]), " ", link]),
    h("div", { class: "tgviz-failure-summary" }, [failure.summary]),
    h("details", { class: "tgviz-failure-tb" }, [h("summary", {}, ["the exception and tinygrad's traceback"]),
                                                 h("pre", {}, [failure.traceback || failure.error])]));
}
