"""Comparisons on the tutorial's pairs (WINO=0 vs WINO=1, IMAGE=1; an arange for indexing vs read out as data): kernels
paired and unpaired, code diffs, the kernel table, the HTML page, the widget, the magic's options and the command line."""
import inspect
import json
import re

import pytest
from IPython.core.error import UsageError
from tinygrad import Tensor
from workloads import EXAMPLES, example

import tgviz
from tgviz import cli
from tgviz.notebook.compare_widget import CompareWidget
from tgviz.notebook.widget import TraceWidget
from tgviz.views.protocol import step_of

RAND = [("E_2", "E_2"), ("E_6_3_2", "E_6_3_2"), ("E_2", "E_2"), ("E_3_3", "E_3_3")]  # the kernels that make x and w


def _capture(script: str, **env) -> tgviz.Trace:
  with tgviz.capture(env=env) as trace: example(script)
  return trace


@pytest.fixture(scope="module")
def conv():
  """The same 3x3 conv2d on the general path, with Winograd and with the IMAGE branch."""
  return {k: _capture("conv2d_3x3.py", **env) for k, env in (("general", {}), ("wino", {"WINO": 1}), ("image", {"IMAGE": "1"}))}


@pytest.fixture(scope="module")
def arange():
  with tgviz.capture() as weights:
    from tinygrad import Tensor
    Tensor.manual_seed(0)
    x = Tensor.rand(10).realize()
    (x * Tensor.arange(10).float()).sum().realize()
  return {"indexing": _capture("arange_for_indexing.py"), "as_data": _capture("arange_as_data.py"), "weights": weights}


def test_winograd_pairs_the_unchanged_kernels_and_leaves_the_conv_unpaired(conv):
  c = tgviz.compare(conv["general"], conv["wino"], labels=("WINO=0", "WINO=1"))
  assert [(p.a.name, p.b.name) for p in c.pairs] == RAND and all(p.how == "ast" for p in c.pairs)
  assert all(p.identical and p.code_diff == "" for p in c.pairs)  # an identical kernel: an empty diff
  assert [[k.name for k in side] for side in c.unpaired] == [["r_4_4_3_3"], ["E_6_6", "E_6_6", "E_4_4"]]
  a, b = c.counts
  assert (a.kernels, b.kernels) == (5, 7) and b.steps > a.steps > 0 and b.matches > a.matches > 0 and a.rewrite_time > 0
  deltas = [abs(d.a - d.b) for d in c.step_deltas]
  assert deltas == sorted(deltas, reverse=True) and deltas[0] > 0
  assert c.step_deltas[0].name in {s.name for s in conv["wino"].steps}
  text = str(c)
  assert "WINO=0 vs WINO=1" in text and "only in WINO=0 (1): r_4_4_3_3" in text and "only in WINO=1 (3): E_6_6 #1, E_6_6 #2, E_4_4" in text
  assert "E_6_3_2 ~ E_6_3_2  same AST, same code" in text and f"{c.step_deltas[0].name}: {c.step_deltas[0].a} -> {c.step_deltas[0].b}" in text


def test_winograd_links_the_conv_to_the_kernels_that_replace_it(conv):
  """The plain conv's one kernel and Winograd's three compute the same user op (conv2d on line 7 of the script): linked
  as a group, its times summed, each side's kernel naming the other side's as its counterparts."""
  c = tgviz.compare(conv["general"], conv["wino"], labels=("WINO=0", "WINO=1"))
  (g,) = c.groups
  assert [k.name for k in g.a] == ["r_4_4_3_3"] and [k.name for k in g.b] == ["E_6_6", "E_6_6", "E_4_4"]
  assert g.label == "conv2d (line 7): 1 kernel ↔ 3 kernels"
  table = c.kernel_table()
  assert g.times_us == pytest.approx((table[4]["a_time_us"], sum(r["b_time_us"] for r in table[5:])), abs=0.002)
  assert [r["group"] for r in table] == [None] * 4 + [0] * 4
  assert c.counterparts(g.a[0]) == g.b and all(c.counterparts(k) == g.a for k in g.b)
  assert c.counterparts(c.pairs[1].a) == (c.pairs[1].b,) and c.group_of(c.pairs[1].a) is None
  assert "conv2d (line 7): 1 kernel ↔ 3 kernels: r_4_4_3_3 ↔ E_6_6 #1, E_6_6 #2, E_4_4" in c.summary()
  # IMAGE computes the conv with three kernels of its own: linked the same way
  assert [([k.name for k in g.a], [k.name for k in g.b]) for g in tgviz.compare(conv["general"], conv["image"]).groups] == \
    [(["r_4_4_3_3"], ["E_3_3_4_4", "E_2_2_3_3_4", "r_4_4_3_12"])]


def test_conv_on_another_line_is_linked_by_its_op():
  """Two cells (or scripts) whose conv is on other lines: linked by the op, the label giving each side's line."""
  x, w = Tensor.rand(1, 1, 6, 6).realize(), Tensor.rand(1, 1, 3, 3).realize()
  line = inspect.currentframe().f_lineno + 1
  with tgviz.capture() as plain: x.conv2d(w).realize()
  with tgviz.capture(env={"WINO": 1}) as wino:
    x.conv2d(w).realize()
  c = tgviz.compare(plain, wino)
  (g,) = c.groups
  assert (len(g.a), len(g.b)) == (1, 3) and g.label == f"conv2d (line {line} ↔ {line + 2}): 1 kernel ↔ 3 kernels"
  # the tally (the page's head line): a group's kernels are neither pairs nor "only in" a side
  tally = "0 pairs · 1 group of the same ops (1 kernel in a ↔ 3 in b)"
  assert c.summary().splitlines()[0] == f"tgviz comparison: a vs b · {tally}" and repr(c) == f"<Comparison a vs b: {tally}>"


def test_a_conv_is_linked_to_the_same_call_not_to_another_conv():
  """a computes a grouped strided conv (of two randn) and, lines below, the plain conv that b computes with Winograd on
  another line (new-user pass 9: the group read "conv2d (line 1, 4 ↔ 3): 7 kernels ↔ 3 kernels", randn's kernels and
  the grouped conv, which Winograd never replaces, in it). The plain conv is linked by its line's text."""
  x, w = Tensor.rand(1, 1, 6, 6).realize(), Tensor.rand(1, 1, 3, 3).realize()
  line = inspect.currentframe().f_lineno + 3
  with tgviz.capture() as plain:
    Tensor.randn(1, 4, 9, 9).conv2d(Tensor.randn(4, 2, 3, 3), groups=2, stride=2).relu().sum().realize()
    general_out = x.conv2d(w).numpy()
  with tgviz.capture(env={"WINO": 1}) as wino:
    winograd_out = x.conv2d(w).numpy()  # (the same call, assigned to another name: new-user pass 10)
  c = tgviz.compare(plain, wino)
  (g,) = c.groups
  assert [k.name for k in g.a] == ["r_4_4_3_3"] and [k.name for k in g.b] == ["E_6_6", "E_6_6", "E_4_4"], (g.a, g.b)
  assert g.label == f"conv2d (line {line} ↔ {line + 2}): 1 kernel ↔ 3 kernels"
  assert abs(general_out - winograd_out).max() < 1e-4  # (the same conv)


def test_image_changes_a_kernel_with_the_same_ast(conv):
  c = tgviz.compare(conv["general"], conv["image"])
  rand = c.pair("E_6_3_2")
  assert (rand.b.name, rand.how, rand.identical) == ("E_6_2_3", "ast", False)
  diff = rand.code_diff.splitlines()
  assert diff[:2] == ["--- E_6_3_2", "+++ E_6_2_3"] and any(x.startswith("-") and "get_local_id" in x for x in diff[2:])
  assert any(x.startswith("+") and "E_6_2_3" in x for x in diff[2:])
  assert rand.launch_dims == (((6, 1, 1), (3, 1, 1)), ((6, 1, 1), (2, 3, 1)))  # launch dimensions of each side
  assert [k.name for k in c.only_b] == ["E_3_3_4_4", "E_2_2_3_3_4", "r_4_4_3_12"]
  assert "E_6_3_2 ~ E_6_2_3  same AST, code differs" in c.summary() and "local=(3, 1, 1) -> global=(6, 1, 1) local=(2, 3, 1)" in c.summary()


def test_arange_for_indexing_vs_as_data(arange):
  c = tgviz.compare(arange["indexing"], arange["as_data"])
  assert [(p.a.name, p.b.name, p.how) for p in c.pairs] == [("E_2", "E_2", "ast"), ("E_5_2", "E_5_2", "ast"), ("r_10", "r_10", "ast")]
  assert c.pair("r_10").code_diff == "" and c.only_a == [] and [k.name for k in c.only_b] == ["E_10"]
  # the arange's values as weights: another reduce of the same name, paired by name, its code changed
  w = tgviz.compare(arange["indexing"], arange["weights"]).pair("r_10")
  assert w.how == "name" and not w.identical
  removed = [x for x in w.code_diff.splitlines()[2:] if x.startswith("-")]
  assert removed and any("*2.0f" in x for x in w.code_diff.splitlines() if x.startswith("+"))


def test_kernel_table_of_a_trace(conv):
  rows = conv["general"].kernel_table()
  assert [r["name"] for r in rows] == ["E_2", "E_6_3_2", "E_2", "E_3_3", "r_4_4_3_3"]
  for r, k in zip(rows, conv["general"].kernels, strict=True):
    assert (r["global_size"], r["local_size"]) == (list(k.global_size), list(k.local_size)) and r["device"] == "CL"
    assert r["bytes"] > 0 and r["flops"] is not None and r["runs"] == 1 and r["time_us"] > 0  # measured on the device
  conv_row = rows[-1]
  assert conv_row["flops"] >= 16 * 9 and conv_row["bytes"] >= 4 * (36 + 9 + 16)  # 16 outputs of 9 MACs; x, w and out in float32
  assert json.loads(json.dumps(rows)) == rows  # plain rows (a DataFrame takes them)



def test_kernel_table_has_no_time_on_a_null_device():
  """A NULL device runs nothing (tinygrad's NULL program reports a made-up 1 ms): the table says "not measured"."""
  with tgviz.capture(device="NULL:CUDA:sm_90") as trace:
    (Tensor.ones(4, 4).contiguous() + 1).realize()
  rows = trace.kernel_table()
  assert rows and all(r["device"] == "NULL" and r["runs"] == 0 and r["time_us"] is None for r in rows)

def test_trace_widget_and_report_carry_the_kernel_table(conv, recording_comm, tmp_path):
  rows = TraceWidget(conv["general"]).kernels
  assert [{k: v for k, v in r.items() if k not in ("step", "label", "matches")} for r in rows] == conv["general"].kernel_table()
  for r, k in zip(rows, conv["general"].kernels, strict=True):  # a row opens its kernel's first step, the View Base AST
    assert step_of(conv["general"], r["step"]).group is k.group and step_of(conv["general"], r["step"]).name == "View Base AST"
    assert (r["label"], r["matches"]) == (k.display_name, k.group.match_count)  # the name shown, its steps' matches
  assert [r["label"] for r in rows][::2] == ["E_2 #1", "E_2 #2", "r_4_4_3_3"]
  assert [r["name"] for r in TraceWidget(conv["general"], kernel="r_*").kernels] == ["r_4_4_3_3"]


def test_kernel_table_of_a_comparison(conv):
  rows = tgviz.compare(conv["general"], conv["wino"]).kernel_table()
  assert [r["how"] for r in rows] == ["ast"] * 4 + ["only a"] + ["only b"] * 3
  assert [r["a_name"] for r in rows] == [a for a, _ in RAND] + ["r_4_4_3_3", None, None, None]
  assert [r["b_name"] for r in rows] == [b for _, b in RAND] + [None, "E_6_6", "E_6_6", "E_4_4"]
  assert all(r["b_time_us"] > 0 for r in rows if r["b_name"]) and rows[4]["b_flops"] is None and rows[4]["a_flops"] > 0


def test_run_times_and_settings_are_saved(conv, tmp_path):
  loaded = tgviz.load(conv["wino"].save(tmp_path / "wino.tgviz"))
  assert loaded.kernel_table() == conv["wino"].kernel_table() and loaded.env == {"WINO": 1}


def test_bad_settings_say_what_to_do():
  with pytest.raises(ValueError, match=r"no setting 'WINOO'.*WINO"), tgviz.capture(env={"WINOO": 1}): pass
  with pytest.raises(ValueError, match="WINO takes an integer"), tgviz.capture(env={"WINO": "yes"}): pass


def test_html_page_is_self_contained_and_escapes_labels(conv, tmp_path):
  c = tgviz.compare(conv["general"], conv["image"], labels=("<b>general</b>", "IMAGE=1"))
  page = c.to_html(tmp_path / "cmp.html", title="<i>conv</i>").read_text()
  assert "<b>general" not in page and "<i>conv" not in page and "&lt;i&gt;conv" in page
  data = json.loads(re.search(r'id="tgviz-compare">(.*?)</script>', page, re.S).group(1))
  assert data["state"]["labels"] == ["<b>general</b>", "IMAGE=1"] and len(data["pairs"]) == 4 + 1 + 3
  assert [r.get("kind") for r in data["state"]["rows"]] == [None] * 8 + ["group"]  # and the row of the conv's kernels
  changed = data["pairs"][1]
  assert changed["diff"].startswith("--- E_6_3_2") and [s["name"] for s in changed["sides"]] == ["E_6_3_2", "E_6_2_3"]
  assert [[g["step"] for g in s["graphs"]] for s in changed["sides"]] == [["View Base AST", "View Program"]] * 2
  assert all(g["svg"].startswith("<svg") for s in changed["sides"] for g in s["graphs"])
  conv = data["pairs"][4]  # the plain conv's kernel, beside the first kernel IMAGE computes the conv with
  assert [s["name"] for s in conv["sides"]] == ["r_4_4_3_3", "E_3_3_4_4"] and conv["diff"] == ""
  assert "http" not in re.sub(r"http://www\.w3\.org/[\w/]+", "", page)
  # the default title names the two sides, escaped
  page = c.to_html(tmp_path / "default.html").read_text()
  assert "<title>tgviz comparison: &lt;b&gt;general&lt;/b&gt; vs IMAGE=1</title>" in page and "<b>general" not in page


def test_compare_widget_sends_a_pair(conv, recording_comm):
  w = CompareWidget(conv["general"], conv["wino"], labels=("WINO=0", "WINO=1"))
  assert w.labels == ["WINO=0", "WINO=1"] and [r["code"] for r in w.rows] == ["same"] * 4 + ["–"] * 5
  group = w.rows[-1]  # the conv's kernels on both sides: a row of their own, its runs and times summed, theirs under it
  assert (group["kind"], group["name"], group["a_runs"], group["b_runs"]) == ("group", "conv2d (line 7): 1 kernel ↔ 3 kernels", 1, 3)
  assert group["b_time_us"] == pytest.approx(sum(r["b_time_us"] for r in w.rows[5:8]), abs=0.002)
  assert [r.get("under") for r in w.rows] == [None] * 4 + [8] * 4 + [None]
  assert "<svg" not in json.dumps(w.rows)  # graphs are sent on demand
  w._on_msg(w, {"type": "pair", "index": 4}, [])
  w.wait()
  msg = next(m for m in w.comm.custom() if m["type"] == "pair")
  assert msg["index"] == 4 and [s["name"] for s in msg["sides"]] == ["r_4_4_3_3", "E_6_6 #1"]  # beside its counterpart
  assert "__kernel" in msg["sides"][0]["html"] and len(msg["sides"][0]["graphs"]) == 2
  assert "only in WINO=0" in w._repr_mimebundle_()[0]["text/plain"]


def test_magic_env_and_compare(ip, capsys, recording_comm):
  cell = (EXAMPLES / "conv2d_3x3.py").read_text()
  assert ip.run_cell("%%tgviz -o general --no-widget\n" + cell).success
  assert ip.run_cell("%%tgviz -o wino --env WINO=1 --compare general --no-widget\n" + cell).success
  out = capsys.readouterr().out
  assert ip.user_ns["wino"].env == {"WINO": 1} and [k.name for k in ip.user_ns["wino"].kernels][-3:] == ["E_6_6", "E_6_6", "E_4_4"]
  assert "tgviz comparison: general vs wino" in out and "only in wino (3): E_6_6 #1, E_6_6 #2, E_4_4" in out
  assert ip.run_cell("%%tgviz -o image --env IMAGE=1 --env WINO=0 --compare general --no-widget\n" + cell).success
  assert ip.user_ns["image"].env == {"IMAGE": 1, "WINO": 0} and "only in image (3): E_3_3_4_4" in capsys.readouterr().out
  for line, message in (("--compare nowhere", "no variable 'nowhere'.*%%tgviz -o nowhere"), ("--compare cell", "cell is a str, not a tgviz Trace"),
                        ("--env WINOO=1", "no setting 'WINOO'"), ("--env WINO", "not a setting: write NAME=VALUE")):
    ip.user_ns["cell"] = cell
    with pytest.raises(UsageError, match=message): ip.run_cell_magic("tgviz", line, "raise SystemExit('the cell must not run')")


def test_magic_shows_the_compare_widget(ip, capsys, recording_comm):
  assert ip.run_cell("%%tgviz -o before --no-widget\nfrom tinygrad import Tensor\n(Tensor.ones(4).contiguous() + 1).realize()").success
  capsys.readouterr()
  assert ip.run_cell("%%tgviz -o after --compare before\n(Tensor.ones(4).contiguous() + 2).realize()").success
  shown = capsys.readouterr().out  # a terminal shell shows the widget's text: the comparison's summary
  assert "tgviz comparison: before vs after" in shown and re.search(r"E_4 #2 ~ E_4 #2  same name, code differs \(\+1 -1 lines\)", shown), shown


def test_command_line_compare(tmp_path, capsys):
  script = str(EXAMPLES / "conv2d_3x3.py")
  assert cli.main(["compare", script, script, "--env-b", "WINO=1", "--out", str(tmp_path / "wino")]) == 0
  out = capsys.readouterr().out
  page = tmp_path / "wino" / "index.html"
  assert f"comparison: {page.resolve()}" in out and "only in conv2d_3x3.py (1): r_4_4_3_3" in out
  assert "only in conv2d_3x3.py WINO=1 (3): E_6_6 #1, E_6_6 #2, E_4_4" in out and page.stat().st_size > 10_000
  assert cli.main(["compare", str(EXAMPLES / "arange_for_indexing.py"), str(EXAMPLES / "arange_as_data.py"), "--out", str(tmp_path / "ar")]) == 0
  assert "only in arange_as_data.py (1): E_10" in capsys.readouterr().out
  assert cli.main(["compare", script, script, "--env", "NOPE=1"]) == 2 and "no setting 'NOPE'" in capsys.readouterr().err
  assert cli.main(["compare", script, str(tmp_path / "missing.py"), "--out", str(tmp_path / "x")]) == 2
  assert "no such script" in capsys.readouterr().err and not (tmp_path / "x").exists()
