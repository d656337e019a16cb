"""The %%tgviz magic through a real IPython shell, and the widget's message contract through a recording comm."""
import html
import json
import re
import threading
import time
import xml.etree.ElementTree as ET

from tinygrad import Tensor

import tgviz
from tgviz.draw.engine import set_engine
from tgviz.notebook import widget as W
from tgviz.notebook.widget import TraceWidget, kept_picture
from tgviz.views import program as PV
from tgviz.views import protocol as P
from tgviz.views.protocol import step_key, step_of

CELL = """from tinygrad import Tensor
x = Tensor.arange(9).reshape(1, 1, 3, 3).float().realize()
weight = Tensor.ones(1, 1, 2, 2).realize()
result = x.conv2d(weight)
print(result.tolist())
result.shape
"""


def test_magic_runs_cell_like_ipython(ip, capsys, recording_comm):
  plain = ip.run_cell(CELL)
  plain_out = capsys.readouterr().out
  result = ip.run_cell("%%tgviz --no-widget\n" + CELL)
  assert result.success and result.result == plain.result == (1, 1, 2, 2)  # same value shown, as Out
  out = capsys.readouterr().out
  assert out.startswith(plain_out.replace(f"Out[{plain.execution_count}]", f"Out[{result.execution_count}]"))
  assert "(1, 1, 2, 2)" in out and ip.user_ns["_"] == (1, 1, 2, 2)  # last expression displayed
  assert ip.user_ns["result"].tolist() == [[[[8.0, 12.0], [20.0, 24.0]]]]  # variables left in the namespace
  trace = ip.user_ns["tgviz_trace"]
  assert isinstance(trace, tgviz.Trace) and "r_2_2_2_2" in [k.name for k in trace.kernels]
  assert "2 kernels" in out


def test_magic_options(ip, tmp_path, capsys, recording_comm):
  assert ip.run_cell(f"%%tgviz -o mine --device NULL:CUDA:sm_90 --export {tmp_path} --kernel r_* --no-widget\n"
                     "from tinygrad import Tensor\n(Tensor.ones(4, 4).contiguous().sum(1)).realize()").success
  trace = ip.user_ns["mine"]
  assert trace.device == "NULL:CUDA:sm_90" and "__global__" in trace.kernels[-1].source
  files = list(tmp_path.glob("*.svg"))
  assert files and all("r_" in f.name for f in files)
  assert f"wrote {len(files)} SVG files" in capsys.readouterr().out


def test_magic_input_transforms_apply(ip, capsys, recording_comm):
  assert ip.run_cell("%%tgviz --no-widget\nv = 41\n%time w = v + 1").success
  assert ip.user_ns["w"] == 42


def test_magic_error_keeps_trace_and_shows_traceback(ip, recording_comm, capsys):
  result = ip.run_cell("%%tgviz -o failed\nfrom tinygrad import Tensor\n(Tensor.ones(3).contiguous() + 1).realize()\n"
                       "raise ValueError('boom in cell')")
  assert not result.success and isinstance(result.error_in_exec, ValueError)
  trace = ip.user_ns["failed"]
  assert isinstance(trace.error, ValueError) and trace.kernels
  assert "boom in cell" in trace.traceback


def test_help_documents_options(ip):
  doc = ip.find_cell_magic("tgviz").__doc__
  for opt in ("--out", "--device", "--export", "--max-nodes", "--kernel", "--env", "--compare", "--no-widget"): assert opt in doc


def test_widget_sends_svg_and_code_for_selected_step(tutorial_trace, recording_comm):
  w = TraceWidget(tutorial_trace)
  w.wait()
  first = step_of(tutorial_trace, w.selected)
  assert first.name == "View Base AST" and first.group.kind == "kernel"
  state = json.dumps({k: getattr(w, k) for k in ("tree", "selected", "match", "view", "summary")})
  assert len(state) < 200_000 and "<svg" not in state  # only small state is synced
  conv = next(gr for gr in tutorial_trace.groups if gr.name == "r_2_2_2_2")
  step = next(st for st in conv.steps if st.name == "devectorize2")
  w.comm.messages.clear()
  w.selected = step_key(step)
  w.wait()
  msgs = w.comm.custom()
  assert msgs[0]["type"] == "busy"
  pic = next(m for m in w.comm.pictures())
  assert (pic["step"], pic["match"]) == (step_key(step), None)
  assert sum("<svg" in json.dumps(m) for m in w.comm.messages) == 1  # a whole step's picture crosses once (kept_picture)
  assert ET.fromstring(pic["svg"]).find(".//{http://www.w3.org/2000/svg}g[@data-side='after']") is not None
  assert "__kernel" in pic["kernel"]["source"] and "r_2_2_2_2" in pic["kernel"]["html"]
  w.comm.messages.clear()
  w.match = 2
  w.wait()
  pic = next(m for m in w.comm.pictures())
  assert pic["match"] == 2 and pic["match_info"]["index"] == 2 and pic["match_info"]["source"]
  assert "match 3/" in pic["svg"]


def test_a_page_asking_again_gets_the_picture_it_holds_as_kept(tutorial_trace, recording_comm):
  """The page asks (ready) after the kept picture crossed (it came up later, or asks again having no answer): the same
  picture, which syncs nothing as the kept picture, is answered as a message, not left waiting on "busy"."""
  w = TraceWidget(tutorial_trace)
  w.wait()
  w.comm.messages.clear()
  w._on_msg(w, {"type": "ready"}, [])
  w.wait()
  msgs = w.comm.custom()
  assert msgs[0]["type"] == "busy" and msgs[-1]["type"] == "picture" and msgs[-1]["step"] == w.selected, msgs


def test_a_tab_asked_again_is_left_to_its_answer_under_way_or_answered_again(tutorial_trace, recording_comm, monkeypatch):
  """With no answer to a tab's request after ASK_AGAIN_MS the page asks again (an answer can be lost: the uops tab said
  "asking…" for good): a request still under way is left to answer (a CPU kernel's -g compile takes longer than the
  page waits: started over, it never ended), one answered already is answered again."""
  conv = next(k for k in tutorial_trace.kernels if k.name == "r_2_2_2_2")
  w = TraceWidget(tutorial_trace)
  w.wait()
  w.comm.messages.clear()
  ask = {"type": "uops", "step": step_key(conv.group.steps[0])}
  started, hold, answer = threading.Event(), threading.Event(), PV.uops_message
  def slow(kernel):  # the answer under way when the page asks again (as a -g compile is)
    started.set()
    hold.wait()
    return answer(kernel)
  monkeypatch.setattr(PV, "uops_message", slow)
  w._on_msg(w, ask, [])
  assert started.wait(30)
  w._on_msg(w, {**ask, "again": True}, [])
  hold.set()
  w.wait()
  assert [m["kernel"] for m in w.comm.custom() if m["type"] == "uops"] == [conv.display_name]  # answered once
  w._on_msg(w, {**ask, "again": True}, [])  # (its answer lost on the way)
  w.wait()
  assert [m["kernel"] for m in w.comm.custom() if m["type"] == "uops"] == [conv.display_name] * 2


def test_a_selection_asked_again_is_taken_and_laid_out(tutorial_trace, recording_comm):
  """A step clicked in the tree never reached the kernel (a loaded JupyterLab: ipywidgets holds a model's change back
  until the kernel's status for the change before comes, and one was lost): with no picture after ASK_AGAIN_MS the
  page asks again with its selection, which the kernel takes and lays out. The same selection asked again is the
  picture asked again."""
  conv = next(k for k in tutorial_trace.kernels if k.name == "r_2_2_2_2")
  w = TraceWidget(tutorial_trace)
  w.wait()
  key = step_key(conv.group.steps[-1])
  assert w.selected != key
  w.comm.messages.clear()
  w._on_msg(w, {"type": "ready", "selection": {"step": key, "match": None, "view": "auto"}}, [])
  w.wait()
  assert (w.selected, w.match, w.view) == (key, None, "auto")
  pictures = [m for m in w.comm.custom() if m["type"] == "picture"] or [w.kept_picture]
  assert pictures[-1]["step"] == key, pictures
  w.comm.messages.clear()
  w._on_msg(w, {"type": "ready", "selection": {"step": key, "match": None, "view": "auto"}}, [])
  w.wait()
  assert [m["step"] for m in w.comm.custom() if m["type"] in ("busy", "picture")][:1] == [key]


def test_a_picture_asked_again_while_it_is_laid_out_says_how_long_the_kernel_has_been_on_it(tutorial_trace, recording_comm,
                                                                                             monkeypatch):
  """The page asks again for a picture still being laid out (a slow layout, or one stuck): the layout is left to answer,
  not started over, and the kernel's busy message says how long it has been on it (the page's status shows it; a page
  whose ask got no busy back says the kernel did not answer: two different things to wait for)."""
  conv = next(k for k in tutorial_trace.kernels if k.name == "r_2_2_2_2")
  w = TraceWidget(tutorial_trace)
  w.wait()
  started, hold, answer = threading.Event(), threading.Event(), P.picture_message
  def slow(*args, **kwargs):  # the layout under way when the page asks again
    started.set()
    hold.wait()
    return answer(*args, **kwargs)
  monkeypatch.setattr(P, "picture_message", slow)
  w.comm.messages.clear()
  key = step_key(conv.group.steps[-1])
  w._on_msg(w, {"type": "ready", "selection": {"step": key, "match": None, "view": "auto"}}, [])
  assert started.wait(30)
  time.sleep(0.2)  # (the kernel on it for a while: since counts from the ask)
  w._on_msg(w, {"type": "ready", "selection": {"step": key, "match": None, "view": "auto"}}, [])
  hold.set()
  w.wait()
  busy = [m for m in w.comm.custom() if m["type"] == "busy"]
  assert [(m["step"], m["since"] is None) for m in busy] == [(key, True), (key, False)] and busy[1]["since"] >= 0.2, busy
  pictures = [m for m in w.comm.custom() if m["type"] == "picture"] or [w.kept_picture]
  assert [p["step"] for p in pictures] == [key]  # laid out once


def test_widget_export_message_writes_svg(tutorial_trace, recording_comm, tmp_path):
  w = TraceWidget(tutorial_trace, export_dir=tmp_path)
  w.wait()
  w.comm.messages.clear()
  w._on_msg(w, {"type": "export"}, [])
  done = next(m for m in w.comm.custom() if m["type"] == "exported")
  assert len(done["paths"]) == 1 and done["paths"][0].endswith(".svg")
  whole = ET.parse(done["paths"][0]).getroot()
  # the part of the picture on screen, as the frontend says it: that box, the same nodes inside
  w.comm.messages.clear()
  w._on_msg(w, {"type": "export", "box": [30.5, 40, 200, 150]}, [])
  done = next(m for m in w.comm.custom() if m["type"] == "exported")
  part = ET.parse(done["paths"][0]).getroot()
  assert (part.get("viewBox"), part.get("width"), part.get("height")) == ("30.5 40 200 150", "200", "150")
  assert whole.get("viewBox").startswith("0 0 ") and len(part.findall(".//*")) == len(whole.findall(".//*"))


def test_widget_static_fallback(tutorial_trace, recording_comm):
  w = TraceWidget(tutorial_trace)
  data, _ = w._repr_mimebundle_()
  assert "r_2_2_2_2" in data["text/plain"] and "<pre" in data["text/html"]
  assert "application/vnd.jupyter.widget-view+json" in data
  # the picture kept for saved notebooks and frontends without widgets: the selected step, whole
  snap = w.kept_picture
  assert (snap["step"], snap["match"]) == (w.selected, None) and snap["svg"].startswith("<svg") and snap["svg"] in data["text/html"]
  w.match = 1
  w.wait()
  assert w.kept_picture == snap  # a match does not replace it; another step does
  with w.hold_trait_notifications():
    w.selected, w.match = next(k for g in w.tree for k in (s["key"] for s in g["steps"]) if k != snap["step"]), None
  w.wait()
  assert w.kept_picture["step"] == w.selected and w.kept_picture["svg"].startswith("<svg")


def test_kept_picture_is_kept_small(tutorial_trace):
  msg = P.picture_message(tutorial_trace, P.first_selection(tutorial_trace))
  assert kept_picture(msg) == msg
  small = kept_picture(msg, limit=100)
  assert small["svg"] == "" and small["kernel"]["html"] == "" and "too big to keep" in small["message"]
  assert small["info"] == msg["info"] and small["kernel"]["name"] == msg["kernel"]["name"]


def test_kept_picture_is_at_most_300_kB_of_json(cnn_trace):
  """Whatever step is selected, what a saved notebook keeps of it is at most 300 kB of JSON: as it is where it fits;
  else trimmed (the code's source and line map left out, the SVG and highlighted code kept); else without the picture."""
  limit = W.KEPT_PICTURE_CHARS
  assert limit == 300_000
  pics = [P.picture_message(cnn_trace, step_key(s), view="full") for s in sorted(cnn_trace.steps, key=lambda s: -len(s.matches))[:2]]
  pics.append(P.picture_message(cnn_trace, P.first_selection(cnn_trace)))
  assert max(len(json.dumps(m)) for m in pics) > 3 * limit  # the biggest steps drawn whole: a megabyte
  for msg in pics:
    kept = kept_picture(msg)
    assert len(json.dumps(kept)) <= limit
    if len(json.dumps(msg)) <= limit: assert kept is msg
  msg = pics[-1]
  size = len(json.dumps(msg))
  trimmed = kept_picture(msg, limit=size - 1)
  assert trimmed["trimmed"] and trimmed["svg"] == msg["svg"] and trimmed["kernel"]["html"] == msg["kernel"]["html"]
  assert trimmed["kernel"]["source"] == "" and trimmed["kernel"]["lines"] is None and "run the cell again" in trimmed["kernel"]["lines_note"]
  bare = kept_picture(msg, limit=len(json.dumps(trimmed)) - 1)
  assert bare["trimmed"] and bare["svg"] == "" and "too big to keep" in bare["message"] and len(json.dumps(bare)) < 20_000


def test_a_trimmed_kept_picture_crosses_whole_as_a_message(tutorial_trace, recording_comm, monkeypatch):
  """A kept picture trimmed to fit the notebook: the kernel sends the whole picture as a message too (the frontend
  draws that one: js/adapter.js passes on only an untrimmed kept picture)."""
  msg = P.picture_message(tutorial_trace, P.first_selection(tutorial_trace))
  limit = len(json.dumps(msg)) - 1
  monkeypatch.setattr(W, "kept_picture", lambda m: kept_picture(m, limit=limit))
  w = TraceWidget(tutorial_trace)
  w.wait()
  sent = [m for m in w.comm.custom() if m["type"] == "picture"]
  assert len(sent) == 1 and sent[0]["kernel"]["source"] and sent[0]["kernel"]["lines"] and "trimmed" not in sent[0]
  assert w.kept_picture["trimmed"] and w.kept_picture["svg"] == sent[0]["svg"]


def test_kernels_sharing_a_name_are_told_apart(tutorial_trace):
  """The tutorial's two E_3 kernels are E_3 #1 and E_3 #2 wherever tgviz names them (the tree, the kernel table, the
  code header, step titles, schedules' kernel lists, the text summary); kernel.name and kernel_table() keep tinygrad's."""
  from tgviz.trace.trace import display_names
  assert display_names(["E_2", None, "r_4", "E_2", "E_2"]) == ["E_2 #1", None, "r_4", "E_2 #2", "E_2 #3"]
  e3 = [k for k in tutorial_trace.kernels if k.name == "E_3"]
  conv = next(k for k in tutorial_trace.kernels if k.name == "r_2_2_2_2")
  assert [k.display_name for k in e3] == ["E_3 #1", "E_3 #2"] and conv.display_name == "r_2_2_2_2"
  assert [r["name"] for r in tutorial_trace.kernel_table()].count("E_3") == 2
  text = tutorial_trace.summary()
  assert "kernel E_3 #1  global" in text and "kernel E_3 #2  global" in text and "kernel r_2_2_2_2  global" in text
  tree = {g["index"]: g for g in P.tree(tutorial_trace)}
  assert [(tree[k.group.index]["name"], tree[k.group.index]["kernel"]) for k in e3] == [("E_3 #1", "E_3"), ("E_3 #2", "E_3")]
  rows = {r["step"]: r for r in P.kernel_rows(tutorial_trace)}
  for k in [*e3, conv]:
    row, first = rows[step_key(k.group.steps[0])], k.group.steps[0]
    assert (row["name"], row["label"], row["matches"]) == (k.name, k.display_name, k.group.match_count)
    assert P.kernel_info(k.group)["label"] == k.display_name and P.kernel_info(k.group)["name"] == k.name
    assert P.step_info(first)["title"] == f"{k.display_name} / {first.name}" and P.step_info(first)["group"] == k.display_name
  assert sum(r["matches"] for r in rows.values()) == sum(k.group.match_count for k in tutorial_trace.kernels)
  produced = [p["name"] for g in tutorial_trace.groups for p in P.produced_kernels(tutorial_trace, g)]
  assert "E_3 #1" in produced and "E_3 #2" in produced and "E_3" not in produced
  pic = P.picture_message(tutorial_trace, step_key(e3[1].group.steps[0]))
  assert pic["info"]["title"].startswith("E_3 #2 / ") and pic["kernel"]["label"] == "E_3 #2"


def test_a_picture_too_big_to_keep_crosses_as_a_message(tutorial_trace, recording_comm, monkeypatch):
  monkeypatch.setattr(W, "kept_picture", lambda msg: kept_picture(msg, limit=100))
  w = TraceWidget(tutorial_trace)
  w.wait()
  (pic,) = w.comm.pictures()
  assert pic in w.comm.custom() and pic["svg"].startswith("<svg") and (pic["step"], pic["match"]) == (w.selected, None)
  assert w.kept_picture["svg"] == "" and "too big to keep" in w.kept_picture["message"]
  assert sum("<svg" in json.dumps(m) for m in w.comm.messages) == 1


def test_widget_shows_an_error_when_the_engine_crashes(recording_comm, tmp_path):
  exe = tmp_path / "crashing-dot"
  exe.write_text("#!/bin/sh\nkill -SEGV $$\n")
  exe.chmod(0o755)
  with tgviz.capture() as trace: (Tensor.ones(7).contiguous() * 5).realize()
  set_engine(str(exe))
  try:
    w = TraceWidget(trace)
    w.wait()
  finally: set_engine(None)
  msgs = w.comm.custom()
  assert msgs[0]["type"] == "busy" and msgs[-1]["type"] == "error", msgs  # not a spinner forever
  assert "crashed" in msgs[-1]["message"]


def test_error_traceback_once_from_the_users_frames(ip, recording_comm, capsys, monkeypatch):
  shown = []
  monkeypatch.setattr(tgviz.magic, "display", shown.append)
  result = ip.run_cell("%%tgviz -o failed2\nfrom tinygrad import Tensor\n(Tensor.ones(3).contiguous() + 2).realize()\n"
                       "raise ValueError('boom twice?')", store_history=True)
  assert not result.success and isinstance(result.error_in_exec, ValueError)
  out = capsys.readouterr().out
  assert out.count("Traceback (most recent call last)") == 1 and out.count("ValueError: boom twice?") == 1
  assert f"Cell In[{result.execution_count}], line 3" in out  # the cell's own label and line
  assert "magic.py" not in out and "api.py" not in out  # starts at the user's frames, not tgviz's
  assert isinstance(shown[0], TraceWidget)  # the widget says it stopped and points below, no second traceback
  assert shown[0].error == "stopped by ValueError: boom twice?: its traceback follows below"


def test_kernel_origins_name_the_cell_line(ip, recording_comm):
  """The tutorial's x.conv2d(weight) comes out as its kernel r_2_2_2_2 <- conv2d <- the cell's line 4."""
  result = ip.run_cell("%%tgviz --no-widget -o traced\n" + CELL)
  assert result.success
  conv = next(k for k in ip.user_ns["traced"].kernels if k.name == "r_2_2_2_2")
  assert [(o.op, o.backward, o.line, o.source) for o in conv.origins] == [("conv2d", False, 4, "result = x.conv2d(weight)")]
  w = TraceWidget(ip.user_ns["traced"])
  w.selected = step_key(conv.group.steps[0])
  w.wait()
  msg = w.comm.pictures()[-1]
  (origin,) = msg["kernel"]["origins"]
  assert origin["op"] == "conv2d" and origin["where"] == f"Cell In[{ip.execution_count}], line 4"
  assert "→   4  result = x.conv2d(weight)" in origin["context"]


def test_node_panel_history_and_rules_messages(tutorial_trace, recording_comm):
  conv = next(k for k in tutorial_trace.kernels if k.name == "r_2_2_2_2")
  store = next(ln[0] for ln in conv.lines if ln and ln[0].op.name == "STORE")
  w = TraceWidget(tutorial_trace)
  w.selected = step_key(conv.codegen_step)
  w.wait()
  w._on_msg(w, {"type": "node", "key": tgviz.bridge.node_key(store)}, [])
  node = w.comm.custom()[-1]
  assert node["type"] == "node" and node["op"] == "STORE"
  kinds = [e["kind"] for e in node["history"]]
  assert kinds[0] == "rebuilt" and "lives" in kinds  # tinygrad rebuilt the STORE when a source changed
  made = node["history"][0]
  assert step_of(tutorial_trace, made["step"]).group is conv.group and made["match"] is not None and made["other"] == "STORE"
  # the node it came from is a link: its key, drawn in that match's picture
  assert made["other_key"] == tgviz.bridge.node_key(tutorial_trace.history(store, conv.group)[0].other)
  assert f'data-node="{made["other_key"]}"' in P.picture_message(tutorial_trace, made["step"], made["match"])["svg"]
  lives = [e for e in node["history"] if e["kind"] == "lives"]
  assert sum(e["steps"] for e in lives) == len([e for e in tutorial_trace.history(store, conv.group) if e.kind == "lives"])
  w._on_msg(w, {"type": "rules"}, [])
  rules = w.comm.custom()[-1]
  assert rules["type"] == "rules" and sum(r["count"] for r in rules["rules"]) == sum(len(s.matches) for s in tutorial_trace.steps)
  top = rules["rules"][0]
  assert step_of(tutorial_trace, top["step"]).matches[top["match"]].loc == (top["file"], top["line"])


def test_code_lines_and_a_schedules_kernels(tutorial_trace):
  """The code panel's HTML: one element per source line with its number (data-line, from 1), the text unchanged; a
  schedule step's panel lists the kernels compiled after it, each with the step to open."""
  k = next(k for k in tutorial_trace.kernels if k.name == "r_2_2_2_2")
  code = P.kernel_info(k.group)["html"]
  lines = re.findall(r'<span class="tgviz-line" data-line="(\d+)"[^>]*>(.*?)</span>(?=<span class="tgviz-line"|</pre>)', code)
  assert [int(n) for n, _ in lines] == list(range(1, len(k.source.splitlines()) + 1))
  assert [html.unescape(re.sub("<[^>]+>", "", text)) for _, text in lines] == k.source.splitlines()
  sched = next(g for g in tutorial_trace.groups if g.kind == "schedule" and g.name.startswith("Schedule") and
               tutorial_trace.groups[g.index + 1].kernel is k.group.kernel)
  produced = P.produced_kernels(tutorial_trace, sched)
  assert [p["name"] for p in produced] == ["r_2_2_2_2"]
  assert P.step_of(tutorial_trace, produced[0]["step"]).name == "View Base AST" and produced[0]["group"] == k.group.index
  callify = tutorial_trace.groups[sched.index - 1]
  assert callify.kind == "schedule" and P.produced_kernels(tutorial_trace, callify) == produced  # Callify, then Schedule
  assert P.produced_kernels(tutorial_trace, k.group) == []
  pic = P.picture_message(tutorial_trace, P.step_key(sched.steps[0]))
  assert pic["kernel"] is None and pic["produced"] == produced


def test_widget_opens_on_the_program_map_and_fuses(recording_comm):
  """The widget opens on the program map (its `opening`), sends it when asked, and answers "what if they fused?" with
  the schedule run again twice: the .contiguous()'s buffer gone, one kernel fewer."""
  import workloads
  with tgviz.capture() as trace: workloads.contiguous()
  w = TraceWidget(trace)
  w.wait()
  assert w.opening == "program"
  w.comm.messages.clear()
  w._on_msg(w, {"type": "programmap"}, [])
  w.wait()
  m = next(m for m in w.comm.custom() if m["type"] == "programmap")
  assert [k["name"] for k in m["kernels"]] == [k.name for k in trace.program().kernels] and m["views"][0]["svg"].startswith("<svg")
  i = next(b["index"] for b in m["buffers"] if b["lift"] == "contiguous")
  w._on_msg(w, {"type": "fuse", "buffer": i}, [])
  w.wait(120)
  f = next(m for m in w.comm.custom() if m["type"] == "fused")
  assert f["error"] is None and f["gone"] is True and f["buffer"] == i, f["summary"]
  before, after = f["sides"]
  assert len(after["kernels"]) == len(before["kernels"]) - 1 and after["buffers"] == before["buffers"] - 1
  w._on_msg(w, {"type": "fuse", "buffer": 10_000}, [])
  w.wait()
  assert next(m for m in w.comm.custom() if m["type"] == "fused" and m["buffer"] == -1)["error"] == "no such buffer"


def test_access_tab_answered_and_kept(tutorial_trace, recording_comm):
  """The access tab's request is answered in the background with the kernel's accesses, which the widget keeps in its
  state (a saved notebook's access tab draws them without a kernel); a step without a kernel is an error message."""
  conv = next(k for k in tutorial_trace.kernels if k.name == "r_2_2_2_2")
  w = TraceWidget(tutorial_trace)
  assert w.tab == "code" and w.kept_access == {}
  w._on_msg(w, {"type": "access", "step": step_key(conv.group.steps[0])}, [])
  w.wait()
  msg = next(m for m in reversed(w.comm.custom()) if m["type"] == "access")
  assert msg["kernel"] == conv.display_name and [s["stage"] for s in msg["stages"]] == ["ast", "program"]
  assert w.kept_access == msg
  schedule = next(g for g in tutorial_trace.groups if g.kind == "schedule")
  w._on_msg(w, {"type": "access", "step": step_key(schedule.steps[0])}, [])
  w.wait()
  assert w.comm.custom()[-1]["type"] == "error" and w.kept_access == msg


def test_magic_opens_on_the_access_tab(ip, recording_comm, monkeypatch):
  """%%tgviz --tab access: the widget opens on the access tab, the first kernel's accesses kept at once."""
  import tgviz.magic
  made = []
  class Recorded(TraceWidget):
    def __init__(self, *args, **kwargs):
      super().__init__(*args, **kwargs)
      made.append(self)
  monkeypatch.setattr(tgviz.magic, "TraceWidget", Recorded)
  assert ip.run_cell("%%tgviz -o opened --tab access\n" + CELL).success
  (w,) = made
  kernel = step_of(ip.user_ns["opened"], w.selected).group.kernel
  assert w.tab == "access" and w.kept_access["type"] == "access" and w.kept_access["kernel"] == kernel.display_name
  assert not ip.run_cell("%%tgviz --tab nothing\n1").success  # one of code, uops, asm, access
