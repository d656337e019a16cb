"""The access tab's message (tgviz.views.access) and the page's evaluation of it (js/port/access.js, run in node), held
equal to the model's answers (Kernel.reads, Kernel.thread, Kernel.buffer_use) on real kernels."""
import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from tinygrad import Tensor

import tgviz
from tgviz.views.access import access_message, answer_later
from tgviz.views.protocol import step_key

NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node is missing: scripts/install.sh test installs Debian's nodejs")
DRIVER = Path(__file__).with_name("access_parity.mjs")


@pytest.fixture(scope="module")
def kernels(attention_trace):
  """Kernels whose accesses differ: a strided dilated grouped padded conv, a pad, a gather, an expand, a transpose, a
  matmul with locals and upcasts, and the attention block's matmuls (forward and backward)."""
  x, w = Tensor.rand(1, 4, 9, 9).realize(), Tensor.rand(4, 2, 3, 3).realize()
  a, b, m = Tensor.rand(8, 4).realize(), Tensor.rand(4, 1).realize(), Tensor.rand(64, 64).realize()
  idx = Tensor([3, 1, 0, 7]).realize()
  with tgviz.capture() as trace:
    x.conv2d(w, stride=2, dilation=2, padding=1, groups=2).realize()
    a.pad(((1, 1), (2, 0))).contiguous().realize()
    a[idx].contiguous().realize()
    b.expand(4, 8).contiguous().realize()
    a.T.contiguous().realize()
    (m @ m).realize()
  matmuls = [k for k in attention_trace.kernels if k.name.startswith("r_")][:3]
  return trace.kernels + matmuls


def _node(payload: list, tmp_path: Path) -> list:
  path = tmp_path / "input.json"
  path.write_text(json.dumps(payload))
  proc = subprocess.run([NODE, str(DRIVER), str(path)], capture_output=True, text=True, timeout=300)
  assert proc.returncode == 0, proc.stderr
  return json.loads(proc.stdout)


def test_message_has_both_stages_and_the_buffers(kernels):
  conv = kernels[0]
  msg = json.loads(json.dumps(access_message(conv)))  # plain JSON: what the widget and the report send
  assert msg["type"] == "access" and msg["kernel"] == conv.display_name and msg["note"] is None
  assert [s["stage"] for s in msg["stages"]] == ["ast", "program"]
  ast = msg["stages"][0]
  assert [a["pattern"] for a in ast["accesses"]] == [a.pattern for a in conv.accesses("ast")]
  assert {b["slot"]: tuple(b["shape"]) for b in msg["buffers"]} == {b.slot: b.shape for b in conv.buffer_use()}
  masked = next(a for a in ast["accesses"] if a["pattern"] == "masked")
  assert masked["valid"] is not None and masked["valid_text"] and "r" in masked["index_text"]
  assert len(json.dumps(msg)) < 40_000  # small: the tables of the index UOps, not the elements


def test_answer_in_the_background_and_errors(kernels, tutorial_trace):
  k = next(k for k in tutorial_trace.kernels if k.name == "r_2_2_2_2")
  assert answer_later(tutorial_trace, {"type": "access", "step": step_key(k.group.steps[0])})()["type"] == "access"
  schedule = next(g for g in tutorial_trace.groups if g.kind == "schedule")
  msg = answer_later(tutorial_trace, {"type": "access", "step": step_key(schedule.steps[0])})()
  assert msg["type"] == "error" and msg["message"].startswith("access:")


def _threads(msg) -> list[dict[int, int]]:
  """Some threads of the program: the first, the last, one in the middle (thread ids only; loops run whole)."""
  prog = next(s for s in msg["stages"] if s["stage"] == "program")
  ids = [i for i, v in enumerate(prog["vars"]) if v["kind"] != "loop"]
  return [{i: f(prog["vars"][i]["size"]) for i in ids} for f in (lambda n: 0, lambda n: n - 1, lambda n: n // 2)]


@needs_node
def test_page_answers_as_python(kernels, tmp_path):
  payload, want = [], []
  for k in kernels:
    msg = access_message(k)
    store = next(a for a in k.accesses("ast") if a.kind == "store")
    n = int(np.prod(store.shape))
    outs = sorted({int(e) for e in np.linspace(0, n - 1, min(n, 48))})
    threads = _threads(msg)
    payload.append({"msg": msg, "outs": outs, "threads": threads})
    names = [v["name"] for v in next(s for s in msg["stages"] if s["stage"] == "program")["vars"]]
    want.append((k, outs, [{names[i]: v for i, v in t.items()} for t in threads]))
  got = _node(payload, tmp_path)
  for (k, outs, threads), g in zip(want, got, strict=True):
    for e, reads in zip(outs, g["reads"], strict=True):
      py = k.reads(e)
      assert set(map(int, reads)) == set(py), (k.name, e)
      for b, r in py.items():
        js = reads[str(b)]
        assert (js["flat"], js["count"], js["masked"], js["data"]) == (r.flat.tolist(), r.count, r.masked, r.data_dependent), (k.name, e, b)
    for ids, t in zip(threads, g["threads"], strict=True):
      py = k.thread(**ids)
      assert set(map(int, t)) == set(py), (k.name, ids)
      for b, (r, w) in py.items():
        for js, p in ((t[str(b)]["reads"], r), (t[str(b)]["writes"], w)):
          assert (js["flat"], js["count"], js["masked"], js["data"]) == (p.flat.tolist(), p.count, p.masked, p.data_dependent), (k.name, ids, b)
    for b in k.buffer_use():
      c = g["counts"][str(b.slot)]
      assert (c["read"], c["written"], c["reads"], c["masked"]) == (b.read, b.written, b.reads, b.masked), (k.name, b)
  classes = {a.pattern for k in kernels for a in k.accesses()}
  assert classes == {"contiguous", "strided", "broadcast", "gather", "masked"}
