"""The program map's message (tgviz.views.programmap): its views' boxes and arrows are the program's kernels and buffers,
its text escaped, the kernel table's causes, where a trace opens; js/port/why.js held equal to Program.why in node."""
import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest
import workloads

import tgviz
from tgviz import bridge as tg
from tgviz.trace.units import time_text
from tgviz.views import failure as FV
from tgviz.views import programmap as PM
from tgviz.views import protocol as P
from tgviz.views import run as RV

NODE = shutil.which("node")


def _boxes_of(view: dict) -> dict[int, str]:
  return {k: key for key, ks in view["boxes"].items() for k in ks}


def test_the_map_is_the_program(attention_trace):
  program, msg = attention_trace.program(), PM.program_map(attention_trace)
  assert [k["name"] for k in msg["kernels"]] == [k.name for k in program.kernels]
  assert [(b["reason"], b["label"], b["detail"]) for b in msg["buffers"]] == [(b.reason, b.label, b.detail) for b in program.buffers]
  assert msg["counts"] == program.counts() and sum(msg["counts"].values()) == sum(bool(k.writes) for k in program.kernels)
  # its calls, apart from the kernels compiled (the trace's count): "30 calls of 19 kernels and 2 copies · calls by cause: ..."
  compiled, copies = len(attention_trace.kernels), sum(k.kind == "copy" for k in program.kernels)
  assert copies and msg["summary"].startswith(f"{len(program.kernels)} calls of {compiled} kernels and {copies} copies · calls by cause: user ")
  for view in msg["views"]:
    box = _boxes_of(view)
    assert sorted(box) == list(range(len(program.kernels)))  # every kernel in exactly one box
    svg = ET.fromstring(view["svg"])
    drawn = {g.get("data-node") for g in svg.iter("{http://www.w3.org/2000/svg}g") if g.get("data-node")}
    assert set(view["boxes"]) <= drawn
    keys = [g.get("data-key") for g in svg.iter("{http://www.w3.org/2000/svg}g") if g.get("data-key") is not None]
    assert sorted(map(int, keys)) == list(range(len(view["arrows"])))
    # each arrow stands for buffers between its two boxes; every buffer a kernel writes and another box reads is on one
    for arrow in svg.iter("{http://www.w3.org/2000/svg}g"):
      if arrow.get("data-key") is None: continue
      for i in view["arrows"][int(arrow.get("data-key"))]:
        b = program.buffers[i]
        assert arrow.get("data-from") == (box[b.writer.index] if b.writer else f"in{arrow.get('data-to')}")
        assert arrow.get("data-to") in {box[r.index] for r in b.readers} | {f"out{arrow.get('data-from')}"}
    shown = {i for members in view["arrows"] for i in members}
    assert {i for i, b in enumerate(program.buffers) if b.between and any(box[r.index] != box[b.writer.index] for r in b.readers)} <= shown


@pytest.fixture(scope="module")
def adam_trace() -> tgviz.Trace:
  with tgviz.capture() as trace: workloads.adam_train()
  return trace


def test_the_maps_calls_and_the_timelines_launches_reconcile(attention_cell_trace):
  """A notebook cell's attention, read back with .numpy(): the map's "14 calls of 8 kernels and 2 copies" and the
  timeline's "16 launches (3 copy, 12 kernel, 1 sync)" reconcile, by tinygrad's launches and the program's calls: the
  kernel launches are the program's kernel calls, and the one copy more is the result read back outside any schedule,
  which both say in the same words."""
  trace = attention_cell_trace
  tl, prog = trace.timeline(), trace.program()
  launches = Counter(x.kind for x in tl)
  outside = tl.outside_schedules()
  assert [x.name.split(",")[-1].split() for x in outside] == [["PYTHON", "<-", "CL"]]  # .numpy()'s copy into host memory
  copies = sum(k.kind == "copy" for k in prog.kernels)
  assert launches["kernel"] == len(prog.kernels) - copies and launches["copy"] == copies + len(outside)
  text = "1 copy outside any schedule: a result read back"
  assert tl.outside_text() == text
  assert f"{len(tl)} launches (" in tl.summary() and tl.summary().count(f"; {text}) on ") == 1
  assert RV.timeline_data(trace, {})["outside"] == text  # the timeline tab's head says it after its counts
  summary = PM.program_map(trace)["summary"]
  assert summary.startswith(f"{len(prog.kernels)} calls of {len(trace.kernels)} kernels and {copies} copies (besides {text}) · calls by cause: ")


def test_a_program_of_many_kernels_opens_by_line(adam_trace):
  msg = PM.program_map(adam_trace)
  assert len(msg["kernels"]) > PM.LINES_ABOVE
  lines, kernels = msg["views"]
  assert (lines["name"], kernels["name"]) == ("lines", "kernels") and len(lines["boxes"]) < len(kernels["boxes"])
  program = adam_trace.program()
  def line(k):  # the user's line a kernel's ops came from, else the one that asked for its schedule
    o = tg.main_origin(k.origins) or program.schedules[k.schedule]
    return (o.file, o.line)
  for key, ks in lines["boxes"].items():  # a box of several kernels: one line of the user's code
    assert len({line(program.kernels[k]) for k in ks}) == 1 or len(ks) == 1, key
  assert sum(len(ks) > 1 for ks in lines["boxes"].values()) >= 3


def test_user_text_is_escaped(tmp_path):
  script = tmp_path / "lt.py"
  script.write_text("from tinygrad import Tensor\nx = Tensor.ones(8, 8).contiguous().realize()\n"
                    "y = ((x < 2) & (x > 0)).where(x, 0).contiguous()  # <b>&amp;\n(y.sum(0) + y.T.max(0)).realize()\n")
  with tgviz.capture() as trace: exec(compile(script.read_text(), str(script), "exec"), {})
  for view in PM.program_map(trace)["views"]:
    ET.fromstring(view["svg"])  # well formed: the user's text is escaped
    assert "<b>" not in view["svg"]
  assert any("<b>&amp;" in b["source"] for b in PM.program_map(trace)["buffers"])  # the message carries it as text


def test_a_small_map_comes_top_to_bottom_too(tutorial_trace, attention_trace):
  """A small map (the tutorial's 5 kernels) is laid out top to bottom too, the same boxes and arrows (the page shows it
  where it fits a narrow canvas better); a big one (the attention block's 30) only left to right."""
  view = PM.program_map(tutorial_trace)["views"][0]
  def drawn(svg):
    root = ET.fromstring(svg)
    return {g.get("data-node"): g.get("transform") for g in root.iter("{http://www.w3.org/2000/svg}g") if g.get("data-node")}, \
           sorted(g.get("data-key") for g in root.iter("{http://www.w3.org/2000/svg}g") if g.get("data-key") is not None)
  (across, arrows), (down, arrows_down) = drawn(view["svg"]), drawn(view["svg_down"])
  assert across.keys() == down.keys() and arrows == arrows_down and across != down
  assert all(not v["svg_down"] for v in PM.program_map(attention_trace)["views"])


def test_opening_and_the_kernel_tables_causes(tutorial_trace):
  assert FV.opening(tutorial_trace, None)[2] == "program"
  assert FV.opening(tgviz.Trace("CL"), None)[2] == "step"
  assert FV.opening(tutorial_trace, None, tab="access")[2] == FV.opening(tutorial_trace, None, kernel="r_2_2_2_2")[2] == "step"
  causes = tutorial_trace.program().kernel_causes()
  rows = P.kernel_rows(tutorial_trace)
  assert [r["causes"] for r in rows] == [causes.get(g.index, []) for g in tutorial_trace.groups if g.kernel is not None and g.steps]
  assert all(r["causes"] for r in rows)
  assert {c for r in rows for c in r["causes"]} <= set(PM.REASONS)


@pytest.mark.skipif(NODE is None, reason="node is missing: scripts/install.sh test installs Debian's nodejs")
def test_why_in_the_page_is_program_why(attention_trace, tmp_path):
  program, msg = attention_trace.program(), PM.program_map(attention_trace)
  n = len(program.kernels)
  pairs = [[a, b] for a in range(n) for b in range(n) if a != b]
  path = tmp_path / "why.json"
  path.write_text(json.dumps({"kernels": msg["kernels"], "buffers": msg["buffers"], "pairs": pairs}))
  proc = subprocess.run([NODE, str(Path(__file__).with_name("why_parity.mjs")), str(path)], capture_output=True, text=True, timeout=120)
  assert proc.returncode == 0, proc.stderr
  index = {id(b): i for i, b in enumerate(program.buffers)}
  expected = [[index[id(b)] for b in program.why(a, b)] for a, b in pairs]
  assert json.loads(proc.stdout) == expected and any(expected)


def test_a_boxs_limit_is_the_kernel_tables(tutorial_trace):
  """A kernel's box says the limit the kernel table's row says (Kernel.verdict, the same cached peaks)."""
  table = {id(k): r["limit"] for k, r in zip(tutorial_trace.kernels, tutorial_trace.kernel_table(), strict=True)}
  kernels = [(k, tutorial_trace.program().kernels[k["index"]].kernel) for k in PM.program_map(tutorial_trace)["kernels"]]
  assert kernels and all(k["limit"] == table[id(kern)] for k, kern in kernels if kern is not None)


def test_a_box_far_below_its_roofs_names_no_roof(attention_trace):
  """The limit a kernel's box names after its time is its row's bound, and none where its row says neither roof limits
  it (a new user read "1.38 ms · compute" on the box and "below roofs 0.67%" in the kernel table, for the same kernel)."""
  rows = {id(k): r for k, r in zip(attention_trace.kernels, attention_trace.kernel_table(), strict=True)}
  msg = PM.program_map(attention_trace)
  kernels = [(k, rows[id(kern)]) for k in msg["kernels"] if (kern := attention_trace.program().kernels[k["index"]].kernel) is not None]
  far = [k for k, r in kernels if r["limit"] and r["limit"].startswith("below roofs")]
  assert far and all(k["bound"] is None for k in far)
  assert all(k["bound"] == r["bound"] for k, r in kernels if k not in far)
  said = re.findall(r"· (compute|memory|latency)</title>", next(v for v in msg["views"] if v["name"] == "kernels")["svg"])
  assert len(said) == len(kernels) - len(far), said  # (a box each that names one)


def test_a_boxs_time_is_the_kernel_tables_median():
  """A kernel's box gives the time the kernel table's median column gives: re-timed after the run where it was (the map
  said the run's single launch, 880 µs, beside a table's 349 µs), a single cold launch marked ❄ as there."""
  with tgviz.capture() as trace: workloads.attention_cell()
  assert trace.retime(slowest=1)  # (the slowest warm, at most 3 kernels re-timed: the cell's others stay single cold launches)
  rows = {k.display_name: r for k, r in zip(trace.kernels, trace.kernel_table(), strict=True)}
  prog, msg = trace.program(), PM.program_map(trace)
  view = next(v for v in msg["views"] if v["name"] == "kernels")
  texts = {g.get("data-node"): " ".join(t.text or "" for t in g.iter("{http://www.w3.org/2000/svg}tspan"))
           for g in ET.fromstring(view["svg"]).iter("{http://www.w3.org/2000/svg}g") if g.get("data-node")}
  said = {"re-timed": 0, "cold": 0}
  for key, ks in view["boxes"].items():
    if len(ks) != 1 or (k := prog.kernels[ks[0]].kernel) is None: continue
    r = rows[k.display_name]
    assert ("❄ " if r["cold"] else "") + time_text(r["median_us"]) in texts[key], (k.display_name, r, texts[key])
    said["re-timed"] += r["timed"] == "re-timed"
    said["cold"] += r["cold"]
  assert said["re-timed"] and said["cold"], said


def test_a_map_too_big_to_lay_out_in_time_is_left_out_and_says_so(tutorial_trace, monkeypatch):
  """A big model's map that graphviz does not lay out within the timeout (a GPT of nine blocks: 320 kernels, its
  schedules framed) is left out with a note the summary shows: the report is written all the same (tgviz run stopped
  with a TimeoutError and wrote none)."""
  from collections import OrderedDict

  from tgviz.draw import engine
  from tgviz.draw.layout_store import LayoutStore
  # no layout given again from before, in this process or from the layouts kept on disk: each one runs, and times out
  monkeypatch.setattr(engine, "_made", OrderedDict())
  monkeypatch.setattr(engine, "_kept", LayoutStore(None))
  msg = PM.program_map(tutorial_trace, timeout=1e-6)
  assert msg["views"] == [] and msg["kernels"] and msg["summary"]
  assert any(n.startswith("the kernels view is not drawn: its layout took longer than") for n in msg["notes"]), msg["notes"]


def _randn_twice() -> float:
  from tinygrad import Tensor
  a = Tensor.randn(16, 32).realize()
  b = Tensor.randn(16, 32).realize()
  return (a + b).sum().item()


def test_a_kernels_second_call_is_on_its_own_line():
  """A kernel run again for other Tensors (the same randn AST, asked for on the next line) is on that line in the map,
  its box and its panel, and so is the buffer it writes: every call was on its first call's line (a new user's weight
  init, called on line 7, shown on the line of their input's randn, 18), and so was the RNG counter a later randn's
  E_2 stores into (an assign placed by its kernel's origins) where a randn ran earlier in the process."""
  import inspect
  with tgviz.capture() as trace: _randn_twice()
  first = inspect.getsourcelines(_randn_twice)[1] + 2
  program, msg = trace.program(), PM.program_map(trace)
  twice = Counter(id(k.kernel) for k in program.kernels if k.kernel is not None)
  calls = [k for k in program.kernels if k.kernel is not None and twice[id(k.kernel)] == 2]
  assert len(calls) >= 2 and all("randn" in [o.op for o in k.origins] for k in calls)
  for k in calls:
    line = first if "(call 1 of 2)" in k.name else first + 1
    assert {o.line for o in k.origins} == {line} and [b.line[1] for b in k.writes] == [line], k.name
    assert [ln.split(" ", 1)[0].endswith(f":{line}") for ln in msg["kernels"][k.index]["lines"]] == [True], msg["kernels"][k.index]["lines"]
