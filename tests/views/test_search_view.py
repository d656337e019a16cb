"""The search's answer in the browser: the report page's search (js/port/search.js, run in node over the index the
report stores) is the widget's (Python's views/search.py) on the MNIST step, hit for hit; the widget answers a search
and opens on where tinygrad failed, as the report does."""
import json
import shutil
import subprocess
from pathlib import Path

import pytest
import workloads

import tgviz
from tgviz.notebook.widget import TraceWidget
from tgviz.report.writer import Writer
from tgviz.trace import search as S
from tgviz.views import protocol as P
from tgviz.views import search as SV

NODE = shutil.which("node")
TEXTS = ["log_softmax", "EXP2", "CONST 0.5", "mnist_train_step.py:27", "do_devectorize", "uop/symbolic.py", "get_local_id",
         "View Base AST", "E_2", "r_8_10 #2", "float", "  RANGE  ", "no such thing", "", "Schedule"]


@pytest.mark.skipif(NODE is None, reason="node is missing: scripts/install.sh test installs Debian's nodejs")
def test_the_pages_search_is_pythons(mnist_trace, tmp_path):
  index = json.loads(json.dumps(S.index(mnist_trace)))  # as the report stores it
  texts = [*TEXTS, mnist_trace.kernels[5].short_key, mnist_trace.kernels[5].key[:4], "e"]  # a key, its prefix, a letter
  path = tmp_path / "input.json"
  path.write_text(json.dumps({"index": index, "texts": texts}))
  proc = subprocess.run([NODE, str(Path(__file__).with_name("search_parity.mjs")), str(path)], capture_output=True, text=True, timeout=120)
  assert proc.returncode == 0, proc.stderr
  for text, js in zip(texts, json.loads(proc.stdout), strict=True):
    py = json.loads(json.dumps(SV.search_message(mnist_trace, text)))
    assert js == py, text
  many = SV.search_message(mnist_trace, "float")  # a big answer: each kind cut at SHOWN, its count whole
  assert many["total"] == len(mnist_trace.search("float")) and max(many["counts"].values()) > SV.SHOWN
  assert all(sum(h["kind"] == k for h in many["hits"]) == min(n, SV.SHOWN) for k, n in many["counts"].items())


def test_hits_say_where_they_are_by_the_trees_names(mnist_trace):
  msg = SV.search_message(mnist_trace, "EXP2")
  for h, hit in zip(msg["hits"], mnist_trace.search("EXP2"), strict=True):
    assert P.step_of(mnist_trace, h["step"]) is hit.step and h["where"] == hit.step.path and (h["match"], h["node"]) == (hit.match, hit.node)


def test_the_widget_answers_a_search_and_opens_on_a_failure(mnist_trace, recording_comm):
  w = TraceWidget(mnist_trace)
  w.wait()
  w._on_msg(w, {"type": "search", "text": "log_softmax"}, [])
  w.wait()
  said = [m for m in w.comm.custom() if m["type"] == "search"]
  # the 5 kernels that compute sparse_categorical_crossentropy (which calls log_softmax), the gradient's E_5_8_2 among
  # them: it computes the forward's exp and one-hot again
  assert said == [json.loads(json.dumps(SV.search_message(mnist_trace, "log_softmax")))] and said[0]["total"] == 5
  assert w.failure is None
  with pytest.raises(RuntimeError), tgviz.capture() as failed: workloads.failing("rewrite")
  f = failed.failure
  w = TraceWidget(failed)
  state = Writer(failed).state()
  assert (w.selected, w.match) == (state["selected"], state["match"]) == (P.step_key(f.step), f.match)
  assert w.failure == state["failure"] and w.failure["node"] == f.node and w.failure["summary"] == f.summary()
