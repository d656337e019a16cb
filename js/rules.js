// The rules tab: every pattern of the capture with TRACK_MATCH_STATS=2's figures for it (matches in the trace's steps and
// in every rewrite, attempts, the match rate, its attempts' time less the rewrites nested in them, time in attempts
// that did not match), sortable by any of them; the patterns tried that never matched apart, the costliest first (pure
// overhead); a click goes to a pattern's first match. The message is tgviz/views/protocol.py's rules_message.
import { h } from "./dom.js";
import { fmtNum, fmtTime } from "./units.js";

/** @typedef {import("./ui.js").Ui} Ui */
/** @typedef {import("./messages.js").StepKey} StepKey */
/** @typedef {import("./messages.js").RulesMsg} RulesMsg */
/** @typedef {import("./messages.js").RuleInfo} RuleInfo */

/** The columns: key, header, title; the pattern's column last. @type {[keyof RuleInfo, string, string][]} */
const COLUMNS = [
  ["count", "count", "matches recorded in the trace's steps (a click on the row: the first)"],
  ["matched", "matched", "matches in every rewrite of the capture, the untracked simplifications too (TRACK_MATCH_STATS's count)"],
  ["attempts", "attempts", "attempts past the early reject, in every rewrite (TRACK_MATCH_STATS's count)"],
  ["rate", "rate", "matched / attempts"],
  ["self_us", "self", "time in its attempts less the rewrites nested in them (a pattern whose function rewrites a graph of its own is not charged for it)"],
  ["failed_us", "failed", "time in its attempts that did not match (inclusive, as TRACK_MATCH_STATS counts it)"],
  ["us", "in steps", "time in its matches recorded in the trace's steps"],
  ["steps", "steps", "the steps it fired in"],
];

/** A cell's text. @param {keyof RuleInfo} key @param {RuleInfo} r */
function cell(key, r) {
  const v = r[key];
  if (v === null || v === undefined) return "–";
  if (key === "rate") return `${(Number(v) * 100).toPrecision(3)}%`;
  if (key === "us" || key === "self_us" || key === "failed_us") return fmtTime(Number(v));
  return key === "count" ? String(v) : Number(v).toLocaleString("en-US");
}

/** A table of rules sorted by a column (the most first; the rate: the least), a header click sorting by it.
 * @param {RuleInfo[]} rules @param {string} cls @param {(step: StepKey, match: number) => void} go
 * @param {keyof RuleInfo} by @param {(by: keyof RuleInfo) => void} resort */
function ruleTable(rules, cls, go, by, resort) {
  const num = (/** @type {RuleInfo} */ r) => Number(r[by] ?? (by === "rate" ? 2 : -1));
  const sorted = [...rules].sort((a, b) => (by === "rate" ? num(a) - num(b) : num(b) - num(a)) || b.count - a.count || b.us - a.us);
  const head = COLUMNS.map(([key, label, title]) => {
    const th = h("th", { class: "tgviz-sort" + (by === key ? " sorted" : ""), title: `${title}; click: sort by it`, "data-key": key }, [label]);
    th.addEventListener("click", () => resort(key));
    return th;
  });
  const body = h("tbody");
  for (const r of sorted) {
    const where = r.step ? `${r.where}: first fired in match ${r.match + 1}` : `${r.where}: ${r.matched ? "fired only in rewrites tinygrad does not track (simplify)" : "never matched"}`;
    const tr = h("tr", { class: cls, title: where }, [...COLUMNS.map(([key]) => h("td", { class: "num" }, [cell(key, r)])),
      h("td", {}, [h("code", {}, [r.source]), h("div", { class: "tgviz-where" }, [r.where])])]);
    if (r.step) tr.addEventListener("click", () => go(r.step, r.match));
    body.append(tr);
  }
  return h("table", {}, [h("thead", {}, [h("tr", {}, [...head, h("th", {}, ["pattern"])])]), body]);
}

/** Show the rules tab. @param {Ui} ui @param {RulesMsg} msg @param {(step: StepKey, match: number) => void} go
 * @param {keyof RuleInfo} [by] @param {keyof RuleInfo} [neverBy] */
export function showRules(ui, msg, go, by = "count", neverBy = "failed_us") {
  const [attempts, matched, self, failed] = msg.totals;
  const lost = msg.never.reduce((s, r) => s + (r.failed_us ?? 0), 0);
  const counted = msg.totals.length ? ` · every rewrite of the capture: ${fmtNum(attempts)} attempts, ${fmtNum(matched)} matches `
    + `(${((matched / Math.max(attempts, 1)) * 100).toPrecision(3)}%), ${fmtTime(self)} in patterns (less the rewrites nested in them), `
    + `${fmtTime(failed)} in attempts that did not match` : "";
  const head = h("div", { class: "tgviz-rules-head" }, [`${msg.total} patterns fired` + (msg.total > msg.rules.length ? ` (first ${msg.rules.length})` : "") + counted]);
  const never = h("details", { class: "tgviz-rules-never" }, [
    h("summary", { title: "patterns tinygrad tried and that never matched: their attempts are pure overhead" },
      [`never matched: ${msg.never.length} pattern${msg.never.length === 1 ? "" : "s"}, ${fmtTime(lost)} in their attempts (pure overhead)`]),
    ruleTable(msg.never, "tgviz-rule-never", go, neverBy, (k) => showRules(ui, msg, go, by, k))]);
  never.hidden = !msg.never.length;
  const open = /** @type {HTMLDetailsElement|null} */ (ui.rules.querySelector(".tgviz-rules-never"))?.open;
  if (open) never.setAttribute("open", "");
  ui.rules.replaceChildren(head, never, ruleTable(msg.rules, "tgviz-rule", go, by, (k) => showRules(ui, msg, go, k, neverBy)));
}
