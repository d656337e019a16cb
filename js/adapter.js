// The model adapter: the trace browser's synced state and messages (tgviz/views/messages.py), typed, over the anywidget model
// or report.js's stand-in for it. The other modules read and change the selection, and talk to the kernel, through it.

/** @typedef {import("./messages.js").StepKey} StepKey */
/** @typedef {import("./messages.js").View} View */
/** @typedef {import("./messages.js").Selection} Selection */
/** @typedef {import("./messages.js").TreeGroup} TreeGroup */
/** @typedef {import("./messages.js").KernelRow} KernelRow */
/** @typedef {import("./messages.js").PictureMsg} PictureMsg */
/** @typedef {import("./messages.js").KernelMsg} KernelMsg */
/** @typedef {import("./messages.js").FrontendMsg} FrontendMsg */

/** The anywidget model, or report.js's stand-in: state by name (changes go to the kernel with save_changes), events
 * ("msg:custom": a message from the kernel; "change:NAME": a change of the state), messages to the kernel.
 * @typedef {{get: (name: string) => any, set: (name: string, value: any) => void, save_changes: () => void,
 *   on: (event: string, cb: (msg?: any) => void) => void, send: (msg: FrontendMsg) => void}} Model */

/** Whether two JSON values are equal, objects' keys in any order. @param {any} a @param {any} b @returns {boolean} */
function sameJson(a, b) {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || !a || !b || Array.isArray(a) !== Array.isArray(b)) return false;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && sameJson(a[k], b[k]));
}

/** Whether the widget state jupyterlab-manager would save with the notebook now (its _saveState: the live models'
 * state, defaults dropped) is the state the notebook holds. @param {any} manager @param {any} doc @returns {boolean} */
function savedState(manager, doc) {
  const saved = doc.getMetadata?.("widgets")?.["application/vnd.jupyter.widget-state+json"];
  if (!saved || typeof manager.get_state_sync !== "function") return false;
  return sameJson(manager.get_state_sync({ drop_defaults: true }), saved);
}

/** Whether two selections name the same picture. @param {Selection} a @param {Selection} b */
export const sameSelection = (a, b) => a.step === b.step && a.match === b.match && a.view === b.view;

/** Per model, the selection this page chose last, whether the kernel answered it since, and whether it is to be made
 * again (see Adapter.selectionChange). @type {WeakMap<Model, {sel: Selection, answered: boolean, again?: boolean}>} */
const choices = new WeakMap();
/** Whether a change of the selection under way is the page's own (Adapter.choose sets it). */
let choosing = false;

/** The notebooks' change watchers (Adapter.unmarkRestored), by document model. @type {WeakMap<object, (answer: "none"|"kernel") => void>} */
const watchers = new WeakMap();

/** A notebook's change watcher (Adapter.unmarkRestored): watching its content from now, it clears the mark the
 * widget manager's restore left, told once how the kernel answered. @param {any} manager @param {any} doc
 * @returns {(answer: "none"|"kernel") => void} */
function changeWatcher(manager, doc) {
  let edited = false, told = false;
  const seen = () => { edited = true; };
  doc.contentChanged.connect(seen);
  /** @param {boolean} clear */
  const finish = (clear) => {
    doc.contentChanged.disconnect(seen);
    if (clear && !edited) doc.dirty = false;
  };
  return (answer) => {
    if (told) return;
    told = true;
    if (answer === "none") return finish(true);
    const restored = () => { manager.restored?.disconnect?.(restored); finish(savedState(manager, doc)); };
    if (manager.restoredStatus === false && typeof manager.restored?.connect === "function") manager.restored.connect(restored);
    else restored();
  };
}

export class Adapter {
  /** @param {Model} model */
  constructor(model) {
    this.model = model;
    /** @type {((msg: FrontendMsg) => void)[]} */
    this.requests = [];
  }

  /** @returns {TreeGroup[]} */
  get tree() { return this.model.get("tree"); }
  /** @returns {KernelRow[]} the kernel table */
  get kernels() { return this.model.get("kernels") ?? []; }
  /** @returns {string} the trace's summary */
  get summary() { return this.model.get("summary"); }
  /** @returns {string} the traceback (or note) of an exception that ended the capture, "" for none */
  get error() { return this.model.get("error"); }
  /** @returns {string} the code highlighter's CSS */
  get codeCss() { return this.model.get("code_css"); }
  /** @returns {StepKey} the step selected, "" for none */
  get selected() { return this.model.get("selected"); }
  /** @returns {number|null} the match selected, null for the whole step */
  get match() { return this.model.get("match"); }
  /** @returns {Selection} the picture selected */
  selection() { return { step: this.selected, match: this.match, view: this.model.get("view") }; }
  /** The picture kept for a saved notebook: the selected step's, whole, as last shown (its svg "" where it was too big
   * to keep), if any. @returns {PictureMsg|undefined} */
  keptPicture() {
    /** @type {PictureMsg|Record<string, never>|undefined} */
    const kept = this.model.get("kept_picture");
    return kept?.step ? /** @type {PictureMsg} */ (kept) : undefined;
  }

  /** @returns {boolean} whether the raw graph is shown, not the folded one (the view's "raw:" prefix: picture.view_options) */
  get raw() { return String(this.model.get("view") ?? "").startsWith("raw:"); }
  /** A view in the mode shown (raw or folded): it stays as steps and views change. @param {View} view @returns {View} */
  inMode(view) { return (this.raw ? "raw:" : "") + view.replace(/^raw:/, ""); }
  /** Show the raw graph (true) or the folded one. @param {boolean} raw */
  setRaw(raw) {
    const view = String(this.model.get("view") ?? "auto").replace(/^raw:/, "");
    this.choose({ ...this.selection(), view: /** @type {View} */ ((raw ? "raw:" : "") + view) });
  }

  /** Select a step and a match of it (null: the whole step), in a view (the auto view unless given), raw or folded as
   * shown. @param {StepKey} step @param {number|null} match @param {View} [view] */
  select(step, match, view = "auto") { this.choose({ step, match, view: this.inMode(view) }); }
  /** Select a match of the selected step (null: the whole step). @param {number|null} match */
  setMatch(match) { this.choose({ ...this.selection(), match }); }
  /** @param {View} view (raw or folded as shown) */
  setView(view) { this.choose({ ...this.selection(), view: this.inMode(view) }); }
  /** The page's choice of picture (none where it is the one selected), remembered until the kernel answers it: set in
   * the model (ipywidgets syncs it, and a saved notebook keeps it) and asked for at once in a ready message, which
   * reaches the kernel also where ipywidgets holds the model's changes back (it sends one once the kernel's idle status
   * for the one before has come: one lost, as with a connection that dropped, and none went again).
   * @param {Selection} sel */
  choose(sel) {
    if (sameSelection(sel, this.selection())) return;
    choices.set(this.model, { sel, answered: false });
    choosing = true;
    try {
      this.model.set("selected", sel.step);
      this.model.set("match", sel.match);
      this.model.set("view", sel.view);
    } finally { choosing = false; }
    this.model.save_changes();
    this.send({ type: "ready", selection: sel });
  }
  /** The kernel's word on sel came (it is laying it out, or its picture): the page's last choice, if it is that, is
   * known to the kernel (a picture drawn from the page's cache is not its word). @param {Selection} sel */
  answered(sel) {
    const c = choices.get(this.model);
    if (c && sameSelection(c.sel, sel)) c.answered = true;
  }
  /** Who made the change of the selection just heard of: "page" (this page: any view of the widget in it); "kernel" (a
   * cell set it, or JupyterLab reloaded the widgets' state from the kernel after its connection came back: shown); or
   * "undone" (the kernel's, over a choice of the page's the kernel has not answered: the kernel's state predates it,
   * as a reload's does while the choice is on its way or was lost with the connection; the choice is made again, the
   * user's last one standing). @returns {"page"|"kernel"|"undone"} */
  selectionChange() {
    const c = choices.get(this.model);
    if (choosing || (c && sameSelection(c.sel, this.selection()))) return "page";
    if (!c || c.answered) { choices.delete(this.model); return "kernel"; }
    if (!c.again) {  // once, after the kernel's change has been applied (its other keys' events come first)
      c.again = true;
      queueMicrotask(() => { if (choices.get(this.model) === c) this.choose(c.sel); });
    }
    return "undone";
  }
  /** Undo, later, the change mark that opening a saved notebook leaves on it. With widget state saved in notebooks
   * (jupyterlab-manager's saveState, which tgviz turns on to keep a picture), the widget manager marks the notebook
   * changed as its restore registers each widget model (its register_model sets the document's dirty flag): the models
   * saved in the file, without a kernel; the kernel's own, the notebook reopened while its kernel still runs (its tab
   * closed and opened again, the page reloaded). Nothing changed, yet the notebook showed "modified" as soon as it
   * opened. The notebook's watcher (one a notebook opened, started as its first tgviz model is created, before any
   * view renders) watches its content; told once how the kernel answered, it clears the mark only if the content did
   * not change meanwhile (a real edit keeps it): "none" (no kernel answers: the widgets were restored from the file)
   * clears it then; "kernel" (a kernel answers) once the manager's restore has ended, and only if the widget state a
   * save would write is the one the notebook holds (a cell run since, or the widgets' state changed in the kernel since
   * the save, keeps it). Later answers (another widget's, a view rendered again) change nothing. A no-op outside
   * JupyterLab and Notebook 7 (the report). @returns {(answer: "none"|"kernel") => void} */
  unmarkRestored() {
    const manager = /** @type {any} */ (this.model).widget_manager, doc = manager?.context?.model;
    if (!doc || typeof doc.dirty !== "boolean" || typeof doc.contentChanged?.connect !== "function") return () => {};
    let watcher = watchers.get(doc);
    if (!watcher) watchers.set(doc, watcher = changeWatcher(manager, doc));
    return watcher;
  }

  /** A request to the kernel; whoever listens for requests hears it first. @param {FrontendMsg} msg */
  send(msg) { for (const fn of this.requests) fn(msg); this.model.send(msg); }
  /** Hear the frontend's requests as they go (the node panel shows what the page holds before the answer comes).
   * @param {(msg: FrontendMsg) => void} fn */
  onRequest(fn) { this.requests.push(fn); }

  /** The kernel's messages, in order; a whole step's picture the kernel kept in the state (kept_picture: it crosses
   * once, as that) comes as a picture message too, unless it was trimmed to fit a saved notebook (then the kernel sent
   * the whole picture as a message). @param {(msg: KernelMsg) => void} fn */
  listen(fn) {
    this.model.on("msg:custom", fn);
    this.model.on("change:kept_picture", () => {
      const kept = this.keptPicture();
      if (kept?.svg && !kept.trimmed) fn(kept);
    });
  }
  /** @param {() => void} fn called when the selection changes */
  onSelected(fn) { this.model.on("change:selected", fn); }
}
