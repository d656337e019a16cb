// tgviz trace browser: tree | before/after graphs with match stepping | generated code.
// Plain ESM for anywidget; the standalone HTML report runs the same code on a recorded model.

/** @typedef {{index:number,name:string,depth:number,matches:number,snapshot:boolean}} StepRow */
/** @typedef {{index:number,name:string,kind:string,matches:number,kernel:string|null,steps:StepRow[]}} GroupRow */

/** @param {string} tag @param {Record<string,string>} [attrs] @param {(Node|string)[]} [kids] */
function h(tag, attrs = {}, kids = []) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  for (const k of kids) e.append(k);
  return e;
}

/** @param {{ model: any, el: HTMLElement }} ctx */
function render({ model, el }) {
  el.classList.add("tgviz");
  const root = h("div", { class: "tgviz-root", tabindex: "0" });
  const style = h("style");
  style.textContent = model.get("code_css");

  // left: the trace tree
  const filter = h("input", { class: "tgviz-filter", type: "search", placeholder: "filter steps / kernels" });
  const hideEmpty = h("input", { type: "checkbox", class: "tgviz-hide-empty" });
  const treeEl = h("div", { class: "tgviz-tree", role: "tree" });
  const left = h("div", { class: "tgviz-left" }, [
    filter, h("label", { class: "tgviz-hide-label" }, [hideEmpty, " hide steps without matches"]), treeEl]);

  // centre: graphs
  const title = h("div", { class: "tgviz-title" });
  const slider = h("input", { class: "tgviz-slider", type: "range", min: "0", max: "0", value: "0" });
  const prev = h("button", { class: "tgviz-prev", title: "previous match (←)" }, ["◀"]);
  const next = h("button", { class: "tgviz-next", title: "next match (→)" }, ["▶"]);
  const matchLabel = h("span", { class: "tgviz-match-label" });
  const fit = h("button", { class: "tgviz-fit", title: "fit graph to view" }, ["fit"]);
  const full = h("button", { class: "tgviz-full", title: "lay out the whole graph (may be slow)" }, ["full graph"]);
  const exportBtn = h("button", { class: "tgviz-export", title: "save the current view as SVG" }, ["Export SVG"]);
  const status = h("div", { class: "tgviz-status", role: "status" });
  const banner = h("div", { class: "tgviz-banner" });
  const canvas = h("div", { class: "tgviz-canvas" });
  const stage = h("div", { class: "tgviz-stage" });
  canvas.append(stage);
  const spinner = h("div", { class: "tgviz-spinner" }, ["laying out…"]);
  canvas.append(spinner);
  const matchBox = h("div", { class: "tgviz-matchinfo" });
  const centre = h("div", { class: "tgviz-centre" }, [
    title, h("div", { class: "tgviz-controls" }, [prev, slider, next, matchLabel, fit, full, exportBtn]),
    banner, canvas, matchBox, status]);

  // right: code
  const codeHead = h("div", { class: "tgviz-code-head" });
  const code = h("div", { class: "tgviz-code" });
  const stack = h("details", { class: "tgviz-stack" });
  const right = h("div", { class: "tgviz-right" }, [codeHead, code, stack]);

  const errorBox = h("pre", { class: "tgviz-error" });
  root.append(style, h("div", { class: "tgviz-summary" }, [model.get("summary")]), errorBox,
              h("div", { class: "tgviz-main" }, [left, centre, right]));
  el.append(root);
  errorBox.textContent = model.get("error");
  errorBox.hidden = !model.get("error");

  /** @type {GroupRow[]} */
  const groups = model.get("tree");
  /** @type {Map<string, HTMLElement>} */
  const rows = new Map();
  let lastGroup = -1;
  // pictures already received, newest last: revisiting a step shows it at once, without a round trip to the kernel
  /** @type {Map<string, any>} */
  const seen = new Map();
  const SEEN_MAX = 64;
  const keyOf = () => { const [g, s] = model.get("selected"); return `${g}:${s}:${model.get("match")}:${model.get("view")}`; };
  let shownKey = "";
  function fromCache() {
    const msg = seen.get(keyOf());
    if (msg) showPicture(msg);
  }

  function buildTree() {
    treeEl.replaceChildren();
    rows.clear();
    const q = filter.value.trim().toLowerCase();
    for (const g of groups) {
      const groupHit = !q || g.name.toLowerCase().includes(q);
      const steps = g.steps.filter((s) => (groupHit || s.name.toLowerCase().includes(q)) &&
                                         (!hideEmpty.checked || s.matches > 0 || s.snapshot));
      if (!steps.length) continue;
      const det = h("details", { class: `tgviz-group kind-${g.kind}` });
      det.open = g.kind === "kernel" || !!q;
      det.append(h("summary", {}, [h("span", { class: "tgviz-kind" }, [g.kind]), ` ${g.name} `,
                                   h("span", { class: "tgviz-count" }, [String(g.matches)])]));
      for (const s of steps) {
        const row = h("div", { class: "tgviz-step" + (s.snapshot ? " snapshot" : "") + (s.matches ? "" : " empty"),
                               role: "treeitem", "data-group": String(g.index), "data-step": String(s.index) },
                      [h("span", { class: "tgviz-indent", style: `width:${s.depth * 12}px` }), s.name,
                       h("span", { class: "tgviz-count" }, [String(s.matches)])]);
        row.addEventListener("click", () => select(g.index, s.index));
        det.append(row);
        rows.set(`${g.index}:${s.index}`, row);
      }
      treeEl.append(det);
    }
    markSelected();
  }

  function markSelected() {
    const [g, s] = model.get("selected");
    for (const r of treeEl.querySelectorAll(".selected")) r.classList.remove("selected");
    const row = rows.get(`${g}:${s}`);
    if (row) {
      row.classList.add("selected");
      const det = /** @type {HTMLDetailsElement} */ (row.parentElement);
      if (det && !det.open) det.open = true;
      row.scrollIntoView({ block: "nearest" });
    }
  }

  /** @param {number} g @param {number} s */
  function select(g, s) {
    model.set("selected", [g, s]);
    model.set("match", -1);
    model.set("view", "auto");
    model.save_changes();
    markSelected();
    fromCache();
  }

  /** @param {number} m */
  function setMatch(m) {
    const n = currentStep()?.matches ?? 0;
    const clamped = Math.max(-1, Math.min(n - 1, m));
    if (clamped === model.get("match")) return;
    model.set("match", clamped);
    model.save_changes();
    fromCache();
  }

  function currentStep() {
    const [g, s] = model.get("selected");
    return groups.find((x) => x.index === g)?.steps.find((x) => x.index === s);
  }

  /** @param {number} dir */
  function moveStep(dir) {
    const order = [...rows.keys()];
    const [g, s] = model.get("selected");
    const i = order.indexOf(`${g}:${s}`);
    const nextKey = order[Math.max(0, Math.min(order.length - 1, (i < 0 ? 0 : i + dir)))];
    if (!nextKey) return;
    const [ng, ns] = nextKey.split(":").map(Number);
    select(ng, ns);
  }

  // pan and zoom
  let scale = 1, tx = 0, ty = 0;
  const apply = () => { stage.style.transform = `translate(${tx}px, ${ty}px) scale(${scale})`; };
  function fitView() {
    const svg = stage.querySelector("svg");
    if (!svg) return;
    const w = Number(svg.getAttribute("width")) || 1, hgt = Number(svg.getAttribute("height")) || 1;
    const cw = canvas.clientWidth || 600, ch = canvas.clientHeight || 400;
    scale = Math.min(cw / w, ch / hgt, 1.5);
    tx = (cw - w * scale) / 2; ty = 0;
    apply();
  }
  canvas.addEventListener("wheel", (ev) => {
    ev.preventDefault();
    const r = canvas.getBoundingClientRect();
    const px = ev.clientX - r.left, py = ev.clientY - r.top;
    const f = ev.deltaY < 0 ? 1.15 : 1 / 1.15;
    tx = px - (px - tx) * f; ty = py - (py - ty) * f; scale *= f;
    apply();
  }, { passive: false });
  let drag = null;
  canvas.addEventListener("pointerdown", (ev) => { drag = { x: ev.clientX - tx, y: ev.clientY - ty }; canvas.setPointerCapture(ev.pointerId); });
  canvas.addEventListener("pointermove", (ev) => { if (drag) { tx = ev.clientX - drag.x; ty = ev.clientY - drag.y; apply(); } });
  canvas.addEventListener("pointerup", () => { drag = null; });

  // messages from Python
  model.on("msg:custom", (/** @type {any} */ msg) => {
    if (msg.type === "busy") {
      if (`${msg.group}:${msg.step}:${msg.match}:${msg.view}` === shownKey) return;  // already shown from cache
      canvas.classList.add("busy"); status.textContent = "laying out…";
    }
    else if (msg.type === "picture") showPicture(msg);
    else if (msg.type === "exported") status.textContent = `exported SVG to ${msg.paths.join(", ")}`;
    else if (msg.type === "error") { canvas.classList.remove("busy"); status.textContent = msg.message; }
  });

  /** @param {any} msg */
  function showPicture(msg) {
    const key = `${msg.group}:${msg.step}:${msg.match}:${msg.view}`;
    seen.delete(key);
    seen.set(key, msg);
    if (seen.size > SEEN_MAX) seen.delete(seen.keys().next().value);
    if (key !== keyOf()) return; // stale: a newer selection was made
    canvas.classList.remove("busy");
    if (key === shownKey) return;
    shownKey = key;
    const keepView = msg.group === lastGroup && stage.querySelector("svg");
    stage.innerHTML = msg.svg;  // SVG built by tgviz.layout: every text is escaped there
    stage.dataset.group = String(msg.group); stage.dataset.step = String(msg.step); stage.dataset.match = String(msg.match);
    if (!keepView) fitView();
    const info = msg.info;
    title.textContent = `${info.group} / ${info.name}  (${info.where}, ${info.matches} matches)`;
    slider.max = String(info.matches);
    slider.value = String(msg.match + 1);
    slider.disabled = info.matches === 0;
    matchLabel.textContent = msg.match < 0 ? `whole step (${info.matches} matches)` : `match ${msg.match + 1} / ${info.matches}`;
    banner.textContent = msg.message || "";
    banner.hidden = !msg.message;
    full.hidden = !msg.partial;
    status.textContent = `${msg.shown} nodes shown` + (msg.partial ? ` of ${msg.total}` : "");
    matchBox.replaceChildren();
    if (info.error) matchBox.append(h("pre", { class: "tgviz-rewrite-error" }, [info.error]));
    if (msg.match_info) {
      const m = msg.match_info;
      matchBox.append(h("div", { class: "tgviz-pattern" }, [h("b", {}, ["pattern "]), h("code", {}, [m.source]),
                                                          ` ${m.where} · ${m.us} µs`]));
      matchBox.append(h("pre", { class: "tgviz-uop-diff" }, [m.diff]));
    }
    stack.replaceChildren(h("summary", {}, ["graph_rewrite call site and call stack"]),
                          h("pre", {}, [`${info.file}:${info.line}\n\n${info.stack.join("\n")}`]));
    if (msg.group !== lastGroup) {
      lastGroup = msg.group;
      const k = msg.kernel;
      codeHead.textContent = k ? `${k.name} · ${k.device} (${k.renderer}) · global ${JSON.stringify(k.global_size)} · local ${JSON.stringify(k.local_size)}`
                               : `${info.group}: no device code (${info.kind})`;
      code.innerHTML = k ? k.html : "";  // pygments output: the source is escaped by pygments
    }
    markSelected();
  }

  slider.addEventListener("input", () => setMatch(Number(slider.value) - 1));
  prev.addEventListener("click", () => setMatch(model.get("match") - 1));
  next.addEventListener("click", () => setMatch(model.get("match") + 1));
  fit.addEventListener("click", fitView);
  full.addEventListener("click", () => { model.set("view", "full"); model.save_changes(); });
  exportBtn.addEventListener("click", () => { status.textContent = "exporting…"; model.send({ type: "export" }); });
  filter.addEventListener("input", buildTree);
  hideEmpty.addEventListener("change", buildTree);
  filter.addEventListener("keydown", (ev) => ev.stopPropagation());

  // keyboard, only while the widget has focus: up/down steps, left/right matches
  root.addEventListener("keydown", (ev) => {
    if (ev.target === filter) return;
    const keys = { ArrowUp: () => moveStep(-1), ArrowDown: () => moveStep(1),
                   ArrowLeft: () => setMatch(model.get("match") - 1), ArrowRight: () => setMatch(model.get("match") + 1) };
    const fn = keys[ev.key];
    if (!fn) return;
    ev.preventDefault();
    ev.stopPropagation();
    fn();
  });
  root.addEventListener("pointerdown", (ev) => { if (ev.target !== filter) root.focus({ preventScroll: true }); });

  model.on("change:selected", markSelected);
  buildTree();
  model.send({ type: "ready" });
  return () => root.remove();
}

export default { render };
