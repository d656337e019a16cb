"""The JS that ports Python, run in node on the HTML report's own data (no browser; seconds) and held equal to the
Python it mirrors: js/port/replay.js's graph after every match (Step.replay: VIZ's graphs), js/port/picture.js and js/port/layout.js's
DOT text and, from the same dot output, SVG bytes (tgviz.views.picture, tgviz.draw), and js/port/protocol.js's picture message
(tgviz.views.protocol), on the tutorial and on a CNN step. tests/views/js_parity.mjs is the node side;
tests/browser/test_report_browser.py checks the page itself. And every module text tgviz ships (assets.esm) parses,
its sibling modules inlined once each."""
import hashlib
import itertools
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from tinygrad.dtype import dtypes, least_upper_dtype, least_upper_float

from tgviz import bridge as tg
from tgviz.bridge import replay
from tgviz.bridge import uops as tg_uops
from tgviz.draw import dot as Dot
from tgviz.draw.engine import DEFAULT_TIMEOUT
from tgviz.report import contents
from tgviz.report.contents import unchunk
from tgviz.report.writer import Contents, Writer, pattern_rows, step_data
from tgviz.views import picture as PI
from tgviz.views import protocol as P
from tgviz.views.assets import esm, modules, static_file

NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node is missing: scripts/install.sh test installs Debian's nodejs")
DRIVER = Path(__file__).with_name("js_parity.mjs")


def _node(payload: dict, tmp_path: Path) -> dict:
  path = tmp_path / "input.json"
  path.write_text(json.dumps(payload))
  proc = subprocess.run([NODE, str(DRIVER), str(path)], capture_output=True, text=True, timeout=300)
  assert proc.returncode == 0, proc.stderr
  return json.loads(proc.stdout)


def _report_data(trace, steps) -> dict:
  """The report's state and its data chunks (tgviz.report.writer.Writer's, as the page decodes them) for these steps."""
  w, keys, contents = Writer(trace), {P.step_key(s) for s in steps}, Contents()
  chunks = dict(w.groups()) | {"patterns": pattern_rows(w.patterns), "lacking": {}}
  for i, segment in enumerate(w.segments):
    if keys & {P.step_key(s) for s in segment}:
      chunk, own, short = w.segment(i)
      chunks[f"t-{i}"] = unchunk(re.sub(r"<[^>]*>", "", chunk))
      contents.add(i, own)
      chunks["lacking"].update(short)
  chunks.update(contents.chunks())
  return json.loads(json.dumps({"state": w.state(), "chunks": chunks}))


def _digest(graph) -> str:
  return hashlib.sha256("\n".join(tg.node_key(u) for u in tg.toposort(graph)).encode()).hexdigest()


def _pictures(trace, sels, monkeypatch, max_nodes: int | None = None) -> list[tuple[dict, list[tuple[str, str]]]]:
  """Python's picture message of each (step, match, view) (at a node budget of max_nodes: default the default), with
  each DOT text it laid out (a tall graph is laid out again wrapped into columns) and dot's plain output of it."""
  laid: list[tuple[str, str]] = []
  run_dot = Dot.run_dot
  def recording(dot, fmt="plain", timeout=DEFAULT_TIMEOUT):
    out = run_dot(dot, fmt, timeout)
    laid.append((dot, out))
    return out
  monkeypatch.setattr(Dot, "run_dot", recording)
  PI.CACHE.clear()  # every picture laid out here, its dot output seen
  out = []
  for step, m, view in sels:
    laid.clear()
    msg = P.picture_message(trace, P.step_key(step), m, view, **({} if max_nodes is None else {"max_nodes": max_nodes}))
    out.append((msg, list(laid)))
  return out


def _check(trace, steps, sels, tmp_path, monkeypatch, every_match: bool = True) -> None:
  """The graph after every match of each step, and each selection's picture (folded, "auto", or raw, "raw:auto"), in
  node and in Python."""
  graphs = [(s, list(range(len(s.matches) + 1)) if every_match else [0]) for s in steps]
  pics = _pictures(trace, sels, monkeypatch)
  got = _node({**_report_data(trace, steps), "graphs": [{"step": P.step_key(s), "ks": ks} for s, ks in graphs],
               "pictures": [{"step": P.step_key(s), "match": m, "view": v, "plain": dict(laid)}
                            for (s, m, v), (_, laid) in zip(sels, pics, strict=True)]},
              tmp_path)
  for (step, ks), js in zip(graphs, got["graphs"], strict=True):
    py = [_digest(g) for g in itertools.islice(step.replay(), len(ks))]
    assert len(py) == len(js) == len(ks)
    for k in ks: assert js[k] == py[k], f"{step.path}: the graph after match {k} differs"
  for (step, m, view), (py, laid), js in zip(sels, pics, got["pictures"], strict=True):
    where = f"{step.path}, match {m}, {view}"
    assert js["dots"] == [dot for dot, _ in laid], where
    assert js["svg"] == py["svg"], where
    assert (js["shown"], js["total"], js["partial"], js["message"]) == (py["shown"], py["total"], py["partial"], py["message"]), where
    assert js["info"] == py["info"] and (js["kernel"], js["produced"], js["schedule"]) == (py["kernel"], py["produced"], py["schedule"]), where
    assert js["node_matches"] == py["node_matches"], where
    if m is None: assert js["match_info"] is None
    else: assert js["match_info"] == {**py["match_info"], "diff": ""}, where  # the page has no UOps to diff


@needs_node
@pytest.mark.parametrize("name", ["tutorial_trace", "cnn_trace"])
def test_packed_rows_unpack_to_the_node_tables_rows(name, request, tmp_path):
  """The report stores a segment's rows packed (tg.pack_rows: keys, families, labels and folds left to the page where
  it derives them); what the page unpacks is each row as tgviz.bridge.NodeTable made it, in every segment."""
  trace = request.getfixturevalue(name)
  w = Writer(trace)
  got = _node({**_report_data(trace, trace.steps), "graphs": [], "pictures": [], "tables": True}, tmp_path)["tables"]
  assert len(got) == len(w.segments)
  derived = 0
  for i, segment in enumerate(w.segments):
    table = tg.NodeTable(tg.NodeCache(trace.call_notes))
    inputs = [(step_data(s, table, w.patterns)["graphs"][0], s.before()) for s in segment]
    # every row's key derived (NodeTable.key): tinygrad's own UOp.key where the table has the UOp
    assert all(table.key(row) == tg.node_key(u) for row, u in inputs)
    for row in range(len(table.rows)): table.key(row)
    assert got[f"t-{i}"] == json.loads(json.dumps(table.rows)), f"segment {i}"
    derived += len(table.rows) - len(w.segment_data(i)["over"])
  assert derived > 0.95 * sum(len(t) for t in got.values())  # nearly all rows stored as content and sources only


def _selections(steps, views=("auto", "raw:auto")) -> list:
  return [(s, m, v) for s in steps for m in [None, *sorted({0, len(s.matches) // 2, len(s.matches) - 1} if s.matches else ())]
          for v in views]


@needs_node
def test_tutorial_in_node_is_python(tutorial_trace, tmp_path, monkeypatch):
  """Every step of the tutorial: every match's graph; the whole step, the first, middle and last match drawn, folded
  and raw."""
  steps = list(tutorial_trace.steps)
  _check(tutorial_trace, [s for s in steps if s.matches], _selections(steps), tmp_path, monkeypatch)


@needs_node
def test_cnn_step_in_node_is_python(cnn_trace, tmp_path, monkeypatch):
  """A step of the CNN with hundreds of matches on graphs of over a thousand nodes: every match's graph; the whole
  step and matches all through it drawn (focused views: the graphs are over the node budget). The busiest one with at
  most 500 matches, which takes a few seconds; every match of the CNN's 2,800-match steps would take some 15 s
  (tests/trace/test_trace.py holds those graphs equal to VIZ's, tests/browser/test_report_browser.py draws them in the page)."""
  step = max((s for s in cnn_trace.steps if len(s.matches) <= 500), key=lambda s: len(s.matches))
  n = len(step.matches)
  assert n > 300
  sels = [(step, m, v) for m in [None, *sorted({0, 1, n // 4, n // 2, 3 * n // 4, n - 2, n - 1})] for v in ("auto", "raw:auto")]
  _check(cnn_trace, [step], sels, tmp_path, monkeypatch)


@needs_node
def test_folded_pictures_in_node_are_python(cnn_trace, tmp_path, monkeypatch):
  """Folding (tgviz.draw.fold, js/port/fold.js) on the CNN's codegen graphs, where it folds most (expressions, lanes ×N): the
  whole step and matches through it of the busiest codegen steps, folded and raw, the same in node as in Python."""
  k = max(cnn_trace.kernels, key=lambda k: len(k.group.steps))
  steps = sorted((s for s in k.group.steps if s.depth == 0 and s.matches), key=lambda s: -len(s.matches))[:2]
  steps += [s for s in k.group.steps if s.name == "View Output AST"]
  sels = [(s, m, v) for s in steps for m in [None, *sorted({0, len(s.matches) // 2, len(s.matches) - 1} if s.matches else ())]
          for v in ("auto", "raw:auto")]
  _check(cnn_trace, steps, sels, tmp_path, monkeypatch, every_match=False)  # (the graphs of every match: above)
  folded = [P.picture_message(cnn_trace, P.step_key(s), m, v)["svg"] for s, m, v in sels]
  assert any("data-holds=" in svg for svg, (_, _, v) in zip(folded, sels, strict=True) if v == "auto")
  assert not any("data-holds=" in svg for svg, (_, _, v) in zip(folded, sels, strict=True) if v == "raw:auto")


def _step_data(trace, step) -> dict:
  data = _report_data(trace, [step])["chunks"]
  return next(c["steps"][P.step_key(step)] for name, c in data.items() if name.startswith("t-") and P.step_key(step) in c["steps"])


def _devectorize2(trace):
  """The attention's E_2_6_6 devectorize2 (1,579 matches), whose replacements change dtypes: some 1,400 of its matches
  come after the first that does, and tinygrad derives a new dtype for nodes rebuilt over them (Replayer.tinygrad_only)."""
  step = next(s for s in trace.steps if s.group.display_name == "E_2_6_6" and s.name == "devectorize2")
  pairs = step.pairs()
  first = next(i for i, (u0, u1) in enumerate(pairs) if u0.dtype is not u1.dtype)
  assert len(pairs) - first > 1000 and any(derived for _, _, derived in step.later_graphs(first))
  return step, first


@needs_node
def test_rebuilt_dtypes_in_node_are_python(attention_trace, tmp_path, monkeypatch):
  """A step past whose replacements that change a dtype tinygrad derives the dtypes of the nodes rebuilt over them: the
  page derives them too (js/port/dtypes.js), so the report stores none of its graphs but the input, and every graph
  the page makes, each match's labels and keys with their dtypes, is the graph Python replays."""
  step, first = _devectorize2(attention_trace)
  n = len(step.matches)
  stored = _step_data(attention_trace, step)
  assert stored["computed"] == n and stored["stored"] is None and len(stored["graphs"]) == 1
  _check(attention_trace, [step], [(step, m, "auto") for m in (None, first, first + 1, n // 2, n - 1)], tmp_path, monkeypatch)


@needs_node
def test_a_node_rebuilt_with_a_derived_dtype_in_node_is_python(attention_trace, tmp_path):
  """The node panel of a node tinygrad rebuilt, its dtype derived anew, over a replacement that changed a dtype (a
  STACK of int over a weakint CONST), which no graph the report stores holds: the page makes it in its own replay,
  finds it there, and tells where it came from as Python does."""
  step, first = _devectorize2(attention_trace)
  k, g = next((k, g) for k, g, derived in step.later_graphs(first) if derived)
  before, (_, u1) = set(tg.toposort(step.at(k - 1))), step.pairs()[k - 1]
  node = next(u for u in tg.toposort(g) if u not in before and not tg.reaches(u1, u, set()))  # rebuilt at match k
  assert any(s.dtype is not node.dtype for s in node.src)
  got = _node({**_report_data(attention_trace, list(step.group.steps)), "graphs": [], "pictures": [],
               "nodes": [{"step": P.step_key(step), "match": k, "key": tg.node_key(node)}]}, tmp_path)["nodes"][0]
  py = P.node_message(attention_trace, P.step_key(step), k, tg.node_key(node))
  assert got == {f: py[f] for f in ("history", "lineage", "origins", "origins_own", "becomes")}
  assert got["lineage"][0]["kind"] == "rebuilt" and got["lineage"][0]["key"] == tg.node_key(node)[:12] and got["origins"]


@needs_node
def test_stored_graphs_in_node_are_python(attention_trace, tmp_path, monkeypatch):
  """Where the page cannot derive a dtype tinygrad would or label a node it rebuilds (rebuilt_dtypes.page_derives: a
  GETTUPLE, a PARAM of an image's shape in the step's table, a vector of constants a match may rebuild), it chains
  past the first replacement that changes a dtype from the graphs the report stores: only those of the matches whose
  step only tinygrad derives, and every CHECKPOINT-th; every graph it makes, stored or chained to, is the graph
  Python replays."""
  step, first = _devectorize2(attention_trace)
  monkeypatch.setattr(replay, "page_derives", lambda uops, pairs: False)
  n = len(step.matches)
  stored = _step_data(attention_trace, step)
  assert stored["computed"] == first and stored["replay"] is not None
  assert 0 < len(stored["stored"]) < (n - first) / 10 and len(stored["graphs"]) == len(stored["stored"]) + 1
  _check(attention_trace, [step], [(step, m, "auto") for m in (None, first + 1, n - 1)], tmp_path, monkeypatch)


@needs_node
def test_rebuilt_dtypes_in_node_are_tinygrads(tmp_path):
  """js/port/dtypes.js's dtype of a node rebuilt over new sources, on the node table the report stores of it, is
  tinygrad's _rebuild_dtype, case by case: an ALU op's promotion, a comparison, a float op over an int, WHERE, a shift,
  CAST, a movement op, an INDEX over a PARAM (float from one of an image's shape), a PARAM over a new shape, and
  none derived where the sources keep their dtypes."""
  from tinygrad.uop.ops import Ops, ParamArg, UOp, _rebuild_dtype, shape_to_shape_arg
  i, w, f = UOp.const(1, dtypes.int), UOp.const(2, dtypes.weakint), UOp.const(1.5, dtypes.float)
  a = UOp.variable("a", 0, 10, dtypes.int)
  def param(shape, dt=dtypes.int): return UOp(Ops.PARAM, dt, (shape_to_shape_arg(shape),), ParamArg(0, dt))
  cases = [(a + i, (w, i)), (a + i, (w, w)), (a * f, (w, f)), (a < i, (w, i)), (a.cast(dtypes.float).sqrt(), (a.cast(dtypes.float),)),
           (UOp(Ops.SQRT, dtypes.float, (a,)), (w,)), ((a < i).where(a, i), (a < i, w, i)), (a << i, (w, i)),
           (a.cast(dtypes.float), (w,)), (UOp(Ops.RESHAPE, dtypes.int, (a, shape_to_shape_arg((1,)))), (w, shape_to_shape_arg((1,)))),
           (UOp(Ops.INDEX, dtypes.int, (param((2, 3, 4)), i)), (param((2, 3, 4)), w)),
           (UOp(Ops.INDEX, dtypes.int, (param((24,)), i)), (param((24,)), w)),
           (UOp(Ops.INDEX, dtypes.float, (param((2, 3, 4), dtypes.float), i)), (param((2, 3, 4), dtypes.float), w)),
           (param((2, 3)), (shape_to_shape_arg((2, w)),)), (a + i, (a, i))]
  tables = []
  for m, new in cases:
    table = tg.NodeTable(tg.NodeCache({}))
    tables.append({"rows": table.rows, "contents": table.contents, "m": table.add(m), "srcs": [table.add(s) for s in new]})
  script = tmp_path / "rebuilt.mjs"
  script.write_text(f"import {{ Dtypes }} from {json.dumps(str(DRIVER.parent.parent.parent / 'js/port/dtypes.js'))};\n"
                    f"const d = new Dtypes({json.dumps(tg.dtype_rules())}), tables = {json.dumps(tables)};\n"
                    "process.stdout.write(JSON.stringify(tables.map((t) => d.rebuilt(t.rows, t.contents, t.m, t.srcs))));\n")
  proc = subprocess.run([NODE, str(script)], capture_output=True, text=True, timeout=60)
  assert proc.returncode == 0, proc.stderr
  got = json.loads(proc.stdout)
  assert got == [[tg_uops.dtype_name(_rebuild_dtype(m, new)), None] for m, new in cases]
  assert got[10][0] == "float" and got[11][0] == "int"  # an image's shape, and not


@needs_node
def test_the_dtype_lattice_in_node_is_tinygrads(tmp_path):
  """js/port/dtypes.js's least_upper_dtype and least_upper_float, from the rules the report ships, for every pair of
  tinygrad's dtypes (and void, off the lattice: tinygrad raises, the page says it cannot)."""
  rules = tg.dtype_rules()
  names = [*rules["parents"], "void"]
  script = tmp_path / "lattice.mjs"
  script.write_text(f"import {{ Dtypes }} from {json.dumps(str(DRIVER.parent.parent.parent / 'js/port/dtypes.js'))};\n"
                    f"const d = new Dtypes({json.dumps(rules)}), names = {json.dumps(names)};\n"
                    "process.stdout.write(JSON.stringify({up: names.map((a) => names.map((b) => d.leastUpper([a, b]))),"
                    " float: names.map((a) => d.leastUpperFloat(a))}));\n")
  proc = subprocess.run([NODE, str(script)], capture_output=True, text=True, timeout=60)
  assert proc.returncode == 0, proc.stderr
  got = json.loads(proc.stdout)
  def python(f, *ds):
    try: return tg_uops.dtype_name(f(*(getattr(dtypes, d) for d in ds)))
    except KeyError: return None  # off the lattice
  assert got["up"] == [[python(least_upper_dtype, a, b) for b in names] for a in names]
  assert got["float"] == [python(least_upper_float, a) for a in names]
  assert got["up"][names.index("weakint")][names.index("int")] == "int" and got["float"][names.index("weakint")] == "weakfloat"


@needs_node
def test_a_step_too_big_to_store_keeps_its_first_graphs(tutorial_trace, tmp_path, monkeypatch):
  """A step the page can neither replay nor chain (too big for it) stores its later graphs up to STORE_NODES nodes in
  all: the page makes the graphs of its first matches as Python does, and of a later one says that the report keeps
  only those (a big model's schedule step held a report worker 14 minutes storing 5,190 graphs of 21,900 nodes)."""
  # (one whose rewrite's output is kept: the whole step's after side needs no replay)
  step = max((s for s in tutorial_trace.steps if s.depth == 0 and s.returned() is not None), key=lambda s: len(s.matches))
  n, nodes = len(step.matches), len(tg.toposort(step.before()))
  assert n >= 5
  monkeypatch.setattr(tg, "page_replays", lambda *a: (0, False))  # as for a graph over REWRITE_STACK_LIMIT's bound
  monkeypatch.setattr(contents, "STORE_NODES", 3 * nodes)
  data = _report_data(tutorial_trace, [step])["chunks"]
  stored = next(c["steps"][P.step_key(step)] for name, c in data.items() if name.startswith("t-") and P.step_key(step) in c["steps"])
  assert stored["computed"] == 0 and stored["stored"] is None and len(stored["graphs"]) == 4 and stored["after"] is not None
  got = _node({**_report_data(tutorial_trace, [step]), "graphs": [{"step": P.step_key(step), "ks": list(range(n + 1))}],
               "pictures": []}, tmp_path)["graphs"][0]
  py = [_digest(g) for g in step.replay()]
  assert got[:4] == py[:4]
  assert all(g == {"error": f"CannotReplay: this report cannot compute the graph: the report keeps the graphs of the first 3 "
                            f"of {n} matches only of {step.path} (too big to store them all). tgviz in Python shows it "
                            "(Step.at, or the widget)"} for g in got[4:]), got[4:]


@needs_node
def test_a_step_too_big_to_store_opens_on_what_it_keeps(tutorial_trace, tmp_path, monkeypatch):
  """Such a step whose result did not outlive the capture (a big model's whole-model schedule step, 5,190 matches): its
  whole-step picture shows what its stored matches changed (the input against the last graph kept), a match past them
  that graph, and the banner says so, instead of an error that left the previous step's picture under the new step's
  selection. Each picture draws the nodes Python draws of those graphs, the note in its banner too. A node's panel says why it has no history (it
  said nothing: the page's error named the big step, the panel waited for ever)."""
  step = max((s for s in tutorial_trace.steps if s.depth == 0 and s.returned() is not None), key=lambda s: len(s.matches))
  n, nodes, key = len(step.matches), len(tg.toposort(step.before())), P.step_key(step)
  cls, sels = type(step), [(step, m, v) for m in (None, 1, 3, n - 1) for v in ("auto", "raw:auto")]
  returned, graphs = cls.returned, cls.graphs
  monkeypatch.setattr(cls, "returned", lambda s: None if P.step_key(s) == key else returned(s))
  replays, first = tg.page_replays, step.pairs()[0]
  monkeypatch.setattr(tg, "page_replays", lambda pairs, *a: (0, False) if pairs and pairs[0] == first else replays(pairs, *a))
  monkeypatch.setattr(contents, "STORE_NODES", 3 * nodes)
  data = _report_data(tutorial_trace, step.group.steps)  # (a node's history reads its group's steps)
  assert next(c["steps"][key] for name, c in data["chunks"].items() if name.startswith("t-") and key in c["steps"])["after"] is None
  assert data["chunks"]["lacking"] == {key: [3, n, step.label]}  # (a node panel of its group says so before replaying)
  # what the page can show: the input against the graph after match 3, and that graph past it
  kept = lambda s, m=None: (s.before() if m is None else s.at(3), s.at(3)) if P.step_key(s) == key and (m is None or m >= 3) else graphs(s, m)  # noqa: E731
  monkeypatch.setattr(cls, "graphs", kept)
  pics = _pictures(tutorial_trace, sels, monkeypatch)
  node = tg.node_key(step.before())  # (its history needs the step's result, which the report does not keep)
  out = _node({**data, "graphs": [], "pictures": [{"step": key, "match": m, "view": v, "plain": dict(laid)}
                                                   for (_, m, v), (_, laid) in zip(sels, pics, strict=True)],
               "nodes": [{"step": key, "match": None, "key": node}]}, tmp_path)
  got = out["pictures"]
  assert out["nodes"] == [{"history": [], "lineage": [], "origins": [], "origins_own": False, "becomes": None, "unknown":
    f"its history and where it came from: this report cannot compute the graph: the report keeps the graphs of the first 3 "
    f"of {n} matches only of {step.path} (too big to store them all). tgviz in Python shows it (Step.at, or the widget)"}]
  say = f"This report keeps the graphs of this step's first 3 of {n} matches only (too big to store them all): "
  python = " tgviz in Python shows every graph (Step.at, or the widget)."
  drawn = lambda svg: re.findall(r'data-node="([^"]+)"', svg)  # noqa: E731
  for (_, m, v), (py, _), js in zip(sels, pics, got, strict=True):
    where = f"match {m}, {v}"
    assert (js["svg"] == py["svg"]) == (m == 1), where  # (the note is in the picture's banner too: an exported SVG keeps it)
    assert drawn(js["svg"]) == drawn(py["svg"]) and (js["shown"], js["total"]) == (py["shown"], py["total"]), where
    said = py["message"] if m == 1 else f"{say}shown is " + (f"the graph after match 3, not after match {m + 1}." if m else
                                                             "what those 3 changed, not the step's result.")
    assert js["message"] == (said + python if m != 1 else said), where
    if m != 1: assert "matches only (too big to store them all): shown is" in " ".join(re.sub(r"<[^>]+>", " ", js["svg"]).split()), where
  assert re.search(r"\[(added|removed|changed)\]", pics[0][0]["svg"])  # (the first matches changed something)


@needs_node
def test_a_whole_graph_too_big_for_the_page_draws_its_partial_view(tutorial_trace, tmp_path, monkeypatch):
  """The page lays a whole graph ("full graph") out up to a bound (FULL_MOST, 2,000 nodes: gpt-big's 11,562 ran graphviz's
  WebAssembly out of memory after minutes, the page frozen): past it, the partial view of that many nodes, the nodes
  Python's picture draws at that node budget, saying why and what lays it out."""
  step = max((s for s in tutorial_trace.steps if s.depth == 0), key=lambda s: len(tg.toposort(s.before())))
  key, most = P.step_key(step), 10
  ((small, laid),) = _pictures(tutorial_trace, [(step, None, "raw:auto")], monkeypatch, max_nodes=most)
  got = _node({**_report_data(tutorial_trace, [step]), "graphs": [], "pictures": [
    {"step": key, "match": None, "view": "raw:full", "plain": dict(laid), "most": most}]}, tmp_path)["pictures"][0]
  drawn = lambda svg: re.findall(r'data-node="([^"]+)"', svg)  # noqa: E731
  assert small["partial"] and got["partial"] and (got["shown"], got["total"]) == (small["shown"], small["total"]) and got["shown"] <= most
  assert drawn(got["svg"]) == drawn(small["svg"])
  assert got["message"] == (f"Partial view: {got['shown']} of {got['total']} nodes. The whole graph is too big to lay out in the browser "
                            f"(at most {most} nodes: more takes minutes, or more memory than the page has); "
                            "step.svg(view='full', timeout=None) in Python lays it out.")


@needs_node
def test_vector_index_math_in_node_is_python(attention_trace, tmp_path, monkeypatch):
  """The expander's index arithmetic over vectors of constants (the attention's r_2_6_6_8: `{0,1,2,3,4,5}.reshape((6,1,1))`
  feeding ADD and MUL) folds into expressions the same in node as in Python: the expander step (before it and after,
  at every match) and the step after it, folded and raw; the page writes the vectors' text as tinygrad renders it."""
  k = next(k for k in attention_trace.kernels if k.name == "r_2_6_6_8")
  steps = [s for s in k.group.steps if s.depth == 0 and s.name in ("expander", "remove reduces")]
  assert len(steps) == 2 and steps[0].matches
  sels = [(s, m, v) for s in steps for m in [None, *range(len(s.matches))] for v in ("auto", "raw:auto")]
  _check(attention_trace, steps, sels, tmp_path, monkeypatch)
  folded = P.picture_message(attention_trace, P.step_key(steps[1]), None, "auto")["svg"]
  assert "{0,1,2,3,4,5}.reshape((6,1,1))*8+{0,1,2,3,4,5,6,7}.reshape((" in folded


@needs_node
def test_wrapped_columns_in_node_are_python(attention_trace, tmp_path, monkeypatch):
  """A graph too tall for the canvas is laid out again wrapped into columns (clusters, the edges between them
  constraining nothing) and the one the canvas shows most of kept: the attention's threefry kernel E_3_32_2, a chain of
  some 24 rows, step by step, folded and raw: the same DOT texts laid out, and the same SVG, in node as in Python."""
  k = next(k for k in attention_trace.kernels if k.name == "E_3_32_2")
  steps = [s for s in k.group.steps if s.depth == 0][::3]
  sels = [(s, None, v) for s in steps for v in ("auto", "raw:auto")]
  pics = _pictures(attention_trace, sels, monkeypatch)
  assert sum(any("subgraph cluster" in dot for dot, _ in laid) for _, laid in pics) >= 4
  _check(attention_trace, steps, sels, tmp_path, monkeypatch, every_match=False)


def test_frontend_modules_are_small_and_ports_name_their_python():
  """One job per module (none over ~400 lines); a port of Python is named after it and says what each function mirrors."""
  js = static_file("widget.js").parent
  for path in [*js.glob("*.js"), *js.glob("port/*.js")]: assert len(path.read_text().splitlines()) <= 400, f"{path.name}: split it by job"
  ports = {"picture.js": ["tgviz/views/picture.py"], "layout.js": ["tgviz/draw/scene.py", "dot.py", "svg.py"],
           "ranks.js": ["tgviz/draw/ranks.py"], "fold.js": ["tgviz/draw/fold.py"], "replay.js": ["tgviz/bridge/replay.py"],
           "dtypes.js": ["tgviz/bridge/rebuilt_dtypes.py"],
           "protocol.js": ["tgviz/views/protocol.py"], "access.js": ["tgviz/bridge/access.py", "tgviz/trace/access.py"],
           "search.js": ["tgviz/trace/search.py", "tgviz/views/search.py"], "why.js": ["tgviz/trace/program.py"]}
  assert {p.name for p in js.glob("port/*.js")} == set(ports), "js/port/ holds the ports of Python, each named here"
  for port, python in ports.items():
    head = (js / "port" / port).read_text().split("\nimport ", 1)[0].split("\n/**", 1)[0]
    assert all(p in head for p in python) and "mirrors" in head, port


@needs_node
@pytest.mark.parametrize("name", ["widget.js", "report.js", "compare.js"])
def test_shipped_module_texts_parse(name, tmp_path):
  """What anywidget and the HTML pages load: one text per module, each module it imports inlined once (before its
  users), no import left; node parses it (two inlined modules declaring one name would not)."""
  text, names = esm(name), modules(name)
  assert names[-1] == name and len(names) == len(set(names))
  for n in names: assert text.count(static_file(n).read_text().splitlines()[0]) == 1, n  # each file's first line once
  assert not re.search(r"^import ", text, re.M)
  path = tmp_path / f"{name}.mjs"
  path.write_text(text)
  proc = subprocess.run([NODE, "--check", str(path)], capture_output=True, text=True, timeout=60)
  assert proc.returncode == 0, proc.stderr


@needs_node
def test_node_panels_lineage_in_node_is_python(tutorial_trace, tmp_path):
  """The node panel the report's page computes (history, where the node came from back to the kernel's AST and the
  user's line, the kernel a CALL becomes) is Python's: a codegen node, one that lives inside a step (only a match's
  picture shows it), a schedule graph's CALL, and a node tinygrad rebuilt (a source changed) that a later match's
  replacement is or holds (rebuilt there, not made by that match)."""
  conv = next(k for k in tutorial_trace.kernels if k.name == "r_2_2_2_2")
  store = next(ln[0] for ln in conv.lines if ln and ln[0].op.name == "STORE")
  made = tutorial_trace.lineage(store, conv.group).links[0]
  sched = next(s for s in tutorial_trace.steps if s.name == "View Kernel Graph")
  call = next(u for u in tg.toposort(sched.before()) if u.op.name == "CALL")
  def held_later(s, u) -> bool:  # rebuilt at a match, and a later match's replacement is or holds it
    e = next((e for e in tutorial_trace.history(u, s.group) if e.step is s and e.kind == "rebuilt"), None)
    return e is not None and any(tg.reaches(m.uops()[1], u, set()) for m in s.matches[e.match + 1:])
  rebuilt = next((s, u) for s in tutorial_trace.steps if s.name == "reshape" and 0 < len(s.matches) <= 40
                 for u in tg.toposort(s.after()) if held_later(s, u))
  nodes = [(conv.codegen_step, None, store), (made.step, made.match, made.other), (sched, None, call), (rebuilt[0], None, rebuilt[1])]
  got = _node({**_report_data(tutorial_trace, [*conv.group.steps, sched, *rebuilt[0].group.steps]), "graphs": [], "pictures": [],
               "nodes": [{"step": P.step_key(s), "match": m, "key": tg.node_key(u)} for s, m, u in nodes]}, tmp_path)
  for (s, m, u), js in zip(nodes, got["nodes"], strict=True):
    py = P.node_message(tutorial_trace, P.step_key(s), m, tg.node_key(u))
    assert js == {k: py[k] for k in ("history", "lineage", "origins", "origins_own", "becomes")}, (s.path, m)
  assert got["nodes"][0]["lineage"][-1]["kind"] == "input" and got["nodes"][0]["origins"] and got["nodes"][0]["origins_own"]
  assert got["nodes"][2]["becomes"]["name"] in {k.display_name for k in tutorial_trace.kernels}


@needs_node
def test_call_labels_in_node_are_python(attention_cell_trace, tmp_path, monkeypatch):
  """A notebook cell's attention at its last "split kernels" (the schedule's graph of CALLs): the page labels each CALL
  as Python does, with what it becomes (its copies "→ copy 8 B CL <- PYTHON") and without tinygrad's default
  CallInfo; its graphs and pictures are Python's."""
  trace = attention_cell_trace
  step = [s for s in trace.steps if s.group.name.startswith("Schedule") and s.name == "split kernels"][-1]
  n = len(step.matches)
  _check(trace, [step], [(step, m, v) for m in (None, n - 1) for v in ("auto", "raw:auto")], tmp_path, monkeypatch)
  w = Writer(trace)
  got = _node({**_report_data(trace, [step]), "graphs": [], "pictures": [], "tables": True}, tmp_path)["tables"]
  i = next(i for i, seg in enumerate(w.segments) if P.step_key(step) in {P.step_key(s) for s in seg})
  table = tg.NodeTable(tg.NodeCache(trace.call_notes))
  for s in w.segments[i]: step_data(s, table, w.patterns)
  for row in range(len(table.rows)): table.key(row)  # (derived on demand: see NodeTable.key)
  assert got[f"t-{i}"] == json.loads(json.dumps(table.rows))
  calls = [row[2] for row in got[f"t-{i}"] if row[2][0] == "CALL"]
  assert calls and all(len(label) == 2 and label[1].startswith("→ ") for label in calls), calls
  copies = {f"→ {c.name}" for c in trace.program().kernels if c.kind == "copy"}
  assert copies and {label[1] for label in calls if label[1].startswith("→ copy ")} == copies
