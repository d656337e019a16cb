// The dtype of a node rebuilt over new sources, in the HTML report's page: tinygrad's uop/ops.py _rebuild_dtype and
// dtype_from_uop, from the data tgviz/bridge/rebuilt_dtypes.py ships (tinygrad's promo lattice, its default float, the op
// groups), and the content of the node it makes (its text, label and fold info with the new dtype, as
// tgviz/bridge/uops.py NodeTable.add makes a content). js/port/replay.js rebuilds with it; bridge.page_replays says
// which steps the page replays past a replacement that changes a dtype (rebuilt_dtypes.page_derives). Each mirrors:
//   leastUpper  least_upper_dtype    leastUpperFloat  least_upper_float    promo   promo_dtype
//   rebuilt     _rebuild_dtype and dtype_from_uop     invalid  UOp.base.is_invalid   imageShaped  is_image_shape(PARAM.shape)
//   withDtype, contentWith   NodeTable.add's content of the UOp with another dtype

/** tgviz.bridge.rebuilt_dtypes.dtype_rules(). @typedef {{parents: Record<string, string[]>, floats: string[], ints: string[],
 *   defaultFloat: string, unary: string[], broadcastable: string[], movement: string[]}} DtypeRules */
/** @typedef {import("./picture.js").Row} Row */
/** @typedef {import("./picture.js").Content} Content */

// dtype_from_uop's cases, by op
const DT_VOID = new Set(["STORE", "LINEAR", "SINK", "PROGRAM", "SOURCE", "END", "BARRIER", "GROUP", "IF", "ENDIF", "TUPLE",
  "FUNCTION", "CUSTOM_FUNCTION", "REWRITE_ERROR", "PYLITERAL"]);
const DT_OWN = new Set(["CUSTOM", "CUSTOMI", "INS", "NOOP"]);  // None: the node keeps its own
const DT_FIRST = new Set(["LOAD", "UNSHARD", "REDUCE", "AFTER", "RANGE", "CONTIGUOUS", "CONTIGUOUS_BACKWARD", "COPY", "STAGE",
  "DETACH", "MSTACK", "MSELECT", "ALLREDUCE", "SPECIAL"]);
const DT_FLOATING = new Set(["SIN", "LOG2", "EXP2", "SQRT", "RECIPROCAL"]);
const DT_COMPARE = new Set(["CMPLT", "CMPNE", "CMPEQ"]);
const DT_PARAM = /^\(Ops\.(?:PARAM|BUFFER), dtypes\.\w+, ParamArg\(\d+, dtypes\.(\w+)[,)]/;  // a content's text: its arg's dtype

/** A row's op. @param {Row[]} rows @param {number} r */
const dtOp = (rows, r) => rows[r][2][0];
/** A row's dtype (its content's). @param {Row[]} rows @param {Content[]} contents @param {number} r */
const dtOfRow = (rows, contents, r) => contents[rows[r][5]][2][0];

export class Dtypes {
  /** @param {DtypeRules} rules */
  constructor(rules) {
    this.parents = new Map(Object.entries(rules.parents));
    this.parentSets = new Map(Object.entries(rules.parents).map(([d, ps]) => [d, new Set(ps)]));
    this.floats = new Set(rules.floats);
    this.ints = new Set(rules.ints);
    this.defaultFloat = rules.defaultFloat;
    this.unary = new Set(rules.unary);
    this.broadcastable = new Set(rules.broadcastable);
    this.movement = new Set(rules.movement);
  }

  /** least_upper_dtype: the first of the first dtype's parents (tinygrad's order) that every one has; null: a dtype
   * off the lattice (tinygrad raises). @param {string[]} ds @returns {string|null} */
  leastUpper(ds) {
    const first = this.parents.get(ds[0]), sets = ds.map((d) => this.parentSets.get(d));
    if (!first || sets.some((s) => !s)) return null;
    return first.find((p) => sets.every((s) => /** @type {Set<string>} */ (s).has(p))) ?? null;
  }

  /** least_upper_float. @param {string} dt */
  leastUpperFloat(dt) {
    return dt === "weakint" ? "weakfloat" : this.floats.has(dt) ? dt : this.leastUpper([dt, this.defaultFloat]);
  }

  /** promo_dtype. @param {string[]} ds */
  promo(ds) { return ds.every((d) => d === ds[0]) ? ds[0] : this.leastUpper(ds); }

  /** _rebuild_dtype(m, srcs) on a node table (every source's dtype as m's: m's own): the dtype tinygrad gives node m
   * rebuilt over these sources, or [null, why] where this port does not derive it (tinygrad would raise, or reads what
   * the table does not hold). @param {Row[]} rows @param {Content[]} contents @param {number} m @param {number[]} srcs
   * @returns {[string|null, string|null]} */
  rebuilt(rows, contents, m, srcs) {
    const own = dtOfRow(rows, contents, m), old = rows[m][3];
    if (srcs.every((s, i) => dtOfRow(rows, contents, s) === dtOfRow(rows, contents, old[i]))) return [own, null];
    const op = dtOp(rows, m), dts = srcs.map((s) => dtOfRow(rows, contents, s));
    if ((op === "CALL" && dts[0] !== "void") || DT_OWN.has(op)) return [own, null];  // tinygrad's None: the node's own
    /** @type {string|null|undefined} */
    let dt;
    if (DT_VOID.has(op) || op === "CALL") dt = "void";
    else if (op === "INDEX") {  // float over a PARAM of an image's shape
      const image = dtOp(rows, srcs[0]) === "PARAM" ? this.imageShaped(rows, contents, srcs[0]) : false;
      if (image === null) return [null, "an INDEX over a PARAM whose shape only tinygrad simplifies"];
      dt = image ? "float" : dts[0];
    } else if (DT_FIRST.has(op) || (this.unary.has(op) && !DT_FLOATING.has(op)) || this.movement.has(op)) dt = dts[0];
    else if (DT_COMPARE.has(op)) dt = "bool";
    else if (DT_FLOATING.has(op)) dt = this.invalid(rows, contents, srcs[0]) ? "bool" : this.leastUpperFloat(dts[0]);
    else if (op === "WHERE") {
      if (dts[0] !== "bool") return [null, "a WHERE whose condition is not bool (tinygrad raises)"];
      dt = this.promo(dts.slice(1));
    } else if (op === "STACK") dt = dts.length ? this.promo(dts) : "void";
    else if (op === "WMMA") dt = dts[2];
    else if (op === "GETTUPLE") {  // the dtype of the tuple's source its arg names (the tuple a FUNCTION's body)
      const tuple = dtOp(rows, srcs[0]) === "FUNCTION" ? rows[srcs[0]][3][0] : srcs[0], at = rows[tuple]?.[3][Number(contents[rows[m][5]][1][1])];
      dt = at === undefined ? undefined : dtOfRow(rows, contents, at);
    }
    else if (op === "GETADDR") dt = "ulong";
    else if (op === "SHL" || op === "SHR") {
      if (!srcs.every((s, i) => this.ints.has(dts[i]) || this.invalid(rows, contents, s))) return [null, "a shift of a non-int (tinygrad raises)"];
      dt = dts[0];
    } else if (op === "BINARY") dt = "uchar";
    else if (op === "CAST" || op === "BITCAST") dt = /^dtypes\.(\w+)$/.exec(contents[rows[m][5]][1][1] ?? "")?.[1];  // its arg
    else if (op === "BUFFER" || op === "PARAM") dt = DT_PARAM.exec(contents[rows[m][5]][0])?.[1];  // its ParamArg's
    else if (this.broadcastable.has(op)) dt = this.promo(dts);
    if (!dt) return [null, `a ${op} rebuilt over a source of another dtype`];
    return [dt, null];
  }

  /** is_image_shape(PARAM.shape): its shape (its source's as_shape) three dims, the last 4; null where that needs
   * tinygrad's simplifier (a last dim that is no constant). @param {Row[]} rows @param {Content[]} contents @param {number} p */
  imageShaped(rows, contents, p) {
    const [shape] = rows[p][3];
    if (shape === undefined) return null;
    if (dtOp(rows, shape) !== "STACK" || rows[shape][3].length !== 3) return false;
    const last = rows[shape][3][2];
    return dtOp(rows, last) === "CONST" ? contents[rows[last][5]][2][2] === "4" : null;
  }

  /** UOp.base.is_invalid: the row, through movement ops and DETACH, a CONST of Invalid. @param {Row[]} rows
   * @param {Content[]} contents @param {number} r */
  invalid(rows, contents, r) {
    while (this.movement.has(dtOp(rows, r)) || dtOp(rows, r) === "DETACH") r = rows[r][3][0];
    return dtOp(rows, r) === "CONST" && contents[rows[r][5]][2][2] === "Invalid";
  }

  /** A content as NodeTable.add makes it for the UOp of content c with dtype dt: its text, its label's dtype line and
   * its fold info's dtype; null where that is not a change of those alone (a dtype line added or dropped).
   * @param {Content} c @param {string} dt @returns {Content|null} */
  withDtype(c, dt) {
    const [text, label, fold] = c, old = fold[0], at = text.indexOf(", "), was = `, dtypes.${old}, `;  // "(Ops.ADD, dtypes.int, arg)"
    if (old === "void" || dt === "void" || label[label.length - 1] !== old || !text.startsWith(was, at)) return null;
    /** @type {Content} */
    const out = [`${text.slice(0, at)}, dtypes.${dt}, ${text.slice(at + was.length)}`, [...label.slice(0, -1), dt],
      [dt, this.ints.has(dt) || dt === "bool", fold[2], fold[3]]];
    if (c.length > 3) out.push(/** @type {string} */ (c[3]));
    return out;
  }

  /** The id of content c with dtype dt in the table (see withDtype): the table's own where it holds it (by its JSON,
   * tag and all), else appended; null where withDtype makes none. @param {{contents: Content[], contentIds?: Map<string, number>,
   * redtyped?: Map<string, number>}} table @param {number} c @param {string} dt @returns {number|null} */
  contentWith(table, c, dt) {
    const redtyped = table.redtyped ??= new Map(), at = `${c} ${dt}`;
    let id = redtyped.get(at);
    if (id !== undefined) return id;
    const made = this.withDtype(table.contents[c], dt);
    if (!made) return null;
    const ids = table.contentIds ??= new Map(table.contents.map((x, i) => [JSON.stringify(x), i])), text = JSON.stringify(made);
    id = ids.get(text);
    if (id === undefined) { ids.set(text, id = table.contents.length); table.contents.push(made); }
    redtyped.set(at, id);
    return id;
  }
}

/** A content's text without its dtype (the texts a replay can make from it, with another). @param {string} text */
export const withoutDtype = (text) => {
  const at = text.indexOf(", "), end = text.indexOf(", ", at + 2);
  return at < 0 || end < 0 || !text.startsWith(", dtypes.", at) ? text : text.slice(0, at) + text.slice(end);
};

/** @type {WeakMap<DtypeRules, Dtypes>} */
const DT_READ = new WeakMap();
/** A report's rules, read once. @param {DtypeRules} rules */
export const dtypesOf = (rules) => { let d = DT_READ.get(rules); if (!d) DT_READ.set(rules, d = new Dtypes(rules)); return d; };
