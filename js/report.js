// The standalone HTML report: the widget's own frontend (widget.js) on a recorded model, with no kernel behind it.
// The page hands over the widget module and the element holding the report's gzipped, base64 JSON:
// {state: the synced state of tgviz/protocol.py, pictures: [PictureMsg, ...]}.

/** @param {string} b64 @returns {Promise<any>} */
async function decode(b64) {
  const bytes = Uint8Array.from(atob(b64.trim()), (c) => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text());
}

/** A stand-in for the anywidget model: holds the state and answers the frontend from the recorded pictures. */
function recordedModel(/** @type {any} */ widget, /** @type {any} */ data) {
  const state = { ...data.state };
  const pictures = new widget.PictureCache(Infinity);
  for (const msg of data.pictures) pictures.put(msg);
  /** @type {Record<string, ((msg?: any) => void)[]>} */
  const handlers = {};
  const changed = new Set();
  const emit = (/** @type {string} */ ev, /** @type {any} */ msg) => (handlers[ev] || []).forEach((cb) => cb(msg));
  function answer() {
    const sel = { step: state.selected, match: state.match, view: state.view };
    if (sel.view !== "auto") return emit("msg:custom", { type: "error",
      message: "the report holds the pictures as first shown; for the full graph use step.svg(view='full') in Python" });
    emit("msg:custom", pictures.get(sel) || { type: "error",
      message: "this match is not in the report: tgviz run --matches N keeps pictures of steps with up to N matches" });
  }
  function download() {
    const svg = document.querySelector(".tgviz-stage svg");
    if (!svg) return;
    const name = `tgviz-${state.selected.replace(/[^0-9]+/g, "-")}-${state.match === null ? "step" : state.match + 1}.svg`;
    const a = Object.assign(document.createElement("a"), {
      href: URL.createObjectURL(new Blob([svg.outerHTML], { type: "image/svg+xml" })), download: name });
    a.click();
    emit("msg:custom", { type: "exported", paths: [name + " (downloaded)"] });
  }
  return {
    get: (/** @type {string} */ k) => state[k],
    set: (/** @type {string} */ k, /** @type {any} */ v) => { state[k] = v; changed.add(k); },
    save_changes() {
      const any = ["selected", "match", "view"].some((k) => changed.has(k));
      changed.clear();
      emit("change:selected");
      if (any) queueMicrotask(answer);
    },
    on: (/** @type {string} */ ev, /** @type {(msg?: any) => void} */ cb) => { (handlers[ev] ||= []).push(cb); },
    send(/** @type {any} */ msg) {
      if (msg.type === "ready") queueMicrotask(answer);
      if (msg.type === "export") download();
    },
  };
}

/** Render the report into el. @param {any} widget the widget.js module @param {HTMLElement} el @param {string} b64 */
export async function open(widget, el, b64) {
  const model = recordedModel(widget, await decode(b64));
  widget.default.render({ model, el });
}
