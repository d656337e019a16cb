"""Saving and opening traces: Trace.save -> tgviz.load in a fresh process, tinygrad's own VIZ=-1 dump, `tgviz open`."""
import glob
import gzip
import json
import os
import pickle
import runpy
import subprocess
import sys
from pathlib import Path

import pytest
import workloads

import tgviz
from tgviz import bridge as tg
from tgviz import cli
from tgviz.bridge.files import relocated

TESTS = Path(__file__).resolve().parents[1]


def fingerprint(trace: tgviz.Trace) -> dict:
  """Everything a trace shows, as plain data: groups, steps, matches, graphs (by UOp key), kernels, origins."""
  steps = []
  for s in trace.steps:
    mid = len(s.matches) // 2
    steps.append([s.group.name, s.group.kind, s.name, s.depth, list(s.loc), [[list(m.loc), m.source] for m in s.matches],
                  s.before().key.hex(), s.after().key.hex(), s.at(mid).key.hex(), s.error])
  kernels = [[k.name, k.source, list(k.global_size), k.local_size and list(k.local_size), k.device, k.renderer] for k in trace.kernels]
  stacks = [[list(f) for f in g.stack] for g in trace.groups]
  return {"steps": steps, "kernels": kernels, "stacks": stacks, "device": trace.device, "summary": trace.summary()}


def _in_fresh_process(code: str, **env: str) -> subprocess.CompletedProcess:
  return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=Path(__file__).parent,
                        env={**os.environ, "PYTHONPATH": str(TESTS), **env}, check=True)


@pytest.fixture(scope="module")
def softmax_trace() -> tgviz.Trace:
  with tgviz.capture() as trace: workloads.softmax()
  return trace


def test_save_then_load_in_a_fresh_process(softmax_trace, tmp_path):
  path = softmax_trace.save(tmp_path / "softmax.tgviz")
  assert path.read_bytes()[:2] == b"\x1f\x8b"  # gzip
  code = f"import json, tgviz, test_saveload as t; print(json.dumps(t.fingerprint(tgviz.load({str(path)!r}))))"
  loaded = json.loads(_in_fresh_process(code).stdout)
  want = json.loads(json.dumps(fingerprint(softmax_trace)))
  assert loaded == want
  assert len(want["kernels"]) == 5 and sum(len(s[5]) for s in want["steps"]) > 1000


def test_load_gives_the_same_graphs_in_this_process(softmax_trace, tmp_path):
  trace = tgviz.load(softmax_trace.save(tmp_path / "t.tgviz"))
  assert isinstance(trace, tgviz.Trace) and trace.device == softmax_trace.device
  step = max(softmax_trace.steps, key=lambda s: len(s.matches))
  again = trace.find(step.name, kernel=step.group.kernel.name if step.group.kernel else None)
  assert again.before() is step.before() and again.after() is step.after()  # hash-consing: the very same UOps
  assert [m.uops() for m in again.matches] == [m.uops() for m in step.matches]
  assert again.svg(side="both").startswith("<svg")


def test_the_error_that_ended_a_capture_is_kept(tmp_path):
  class ShapeTrouble(Exception): pass
  with pytest.raises(ShapeTrouble), tgviz.capture() as trace:
    workloads.softmax()
    raise ShapeTrouble("bad shape (3, 4)")
  trace = tgviz.load(trace.save(tmp_path / "err.tgviz"))
  assert type(trace.error).__name__ == "ShapeTrouble" and str(trace.error) == "bad shape (3, 4)"
  assert "stopped by ShapeTrouble: bad shape (3, 4)" in trace.summary() and "raise ShapeTrouble" in (trace.traceback or "")


def test_an_empty_trace_round_trips(tmp_path):
  with tgviz.capture() as trace: pass
  loaded = tgviz.load(trace.save(tmp_path / "empty.tgviz"))
  assert loaded.groups == [] and loaded.kernels == [] and loaded.error is None


def _write(path: Path, header: dict, body=None) -> Path:
  with gzip.open(path, "wb") as f:
    pickle.dump(header, f)
    pickle.dump(body, f)
  return path


def test_files_of_another_version_or_kind_say_so(tmp_path):
  base = {"format": "tgviz-trace", "version": 1, "tinygrad": tg.SUPPORTED_TINYGRAD}
  cases = [(_write(tmp_path / "v9", {**base, "version": 9}), "format version 9"),
           (_write(tmp_path / "tg", {**base, "tinygrad": "0.13.0"}), "saved with tinygrad 0.13.0"),
           (_write(tmp_path / "other", {"format": "something"}), "not a tgviz trace"),
           (_write(tmp_path / "bad", base, "not groups"), "not a readable tgviz trace")]
  (tmp_path / "list.pkl").write_bytes(pickle.dumps([1, 2]))
  (tmp_path / "text").write_text("hello\n")
  cases += [(tmp_path / "list.pkl", "pickled list"), (tmp_path / "text", "neither a tgviz trace nor tinygrad's rewrites.pkl")]
  for path, words in cases:
    with pytest.raises(tgviz.TraceFileError, match=words): tgviz.load(path)
  for path in (tmp_path / "list.pkl", tmp_path / "text"):  # and how to make one (a new user's text file: what now?)
    with pytest.raises(tgviz.TraceFileError, match=r"made by `tgviz run --save script.py`.*VIZ=-1"): tgviz.load(path)
  with pytest.raises(FileNotFoundError): tgviz.load(tmp_path / "missing")


def test_tinygrad_paths_from_another_machine_point_here():
  here = tg.StepRecord("s", 0, ("/elsewhere/lib/python3.12/site-packages/tinygrad/uop/ops.py", 10), 0,
                       [(0, 1, ("/opt/tinygrad/tinygrad/codegen/__init__.py", 5), 0.0)], False, False, False)
  gone = tg.StepRecord("s", 0, ("/elsewhere/my_script.py", 3), 0, [(0, 1, ("/elsewhere/my_script.py", 4), 0.0)], False, False, False)
  relocated([tg.GroupRecord("g", "other", [here, gone], ())])
  assert os.path.isfile(here.loc[0]) and here.loc[0].endswith(os.path.join("tinygrad", "uop", "ops.py")) and here.loc[1] == 10
  assert os.path.isfile(here.matches[0][2][0]) and here.matches[0][2][1] == 5
  assert gone.loc == ("/elsewhere/my_script.py", 3) and gone.matches[0][2] == ("/elsewhere/my_script.py", 4)


@pytest.mark.skipif(tg.clang_missing() is not None, reason="tinygrad's CPU device needs clang")
def test_tinygrads_own_viz_dump_shows_the_same_kernels_as_a_capture(tmp_path):
  script = workloads.EXAMPLES / "tutorial_conv2d.py"
  # plain tinygrad, as on another machine: VIZ=-1 writes rewrites.pkl.<user> into tempfile's folder (TMPDIR) at exit
  subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, check=True,
                 env={**os.environ, "VIZ": "-1", "TRACK_MATCH_STATS": "2", "TMPDIR": str(tmp_path), "DEV": "CPU"})
  dump = tgviz.load(glob.glob(str(tmp_path / "rewrites.pkl*"))[0])
  with tgviz.capture(device="CPU") as trace: runpy.run_path(str(script), run_name="__main__")
  assert [k.name for k in dump.kernels] == [k.name for k in trace.kernels] == ["E_4", "r_2_2_2_2"]
  for a, b in zip(dump.kernels, trace.kernels, strict=True):
    assert (a.source, a.global_size, a.local_size, a.device, a.renderer) == (b.source, b.global_size, b.local_size, b.device, b.renderer)
  # the same groups, steps and matches (each pattern that fired, in order) as tinygrad's own tracking records
  assert [(g.name, g.kind, [(s.name, [m.loc for m in s.matches]) for s in g.steps]) for g in dump.groups] == \
         [(g.name, g.kind, [(s.name, [m.loc for m in s.matches]) for s in g.steps]) for g in trace.groups]
  compared = 0
  for a, b in zip(dump.steps, trace.steps, strict=True):  # the kernels' graphs, but those with buffers (numbered per process)
    if a.group.kind != "kernel" or any(u.op.name == "BUFFER" for g in (a.before(), a.after()) for u in g.toposort()): continue
    assert a.before().key == b.before().key and a.after().key == b.after().key, a.path
    assert [(u0.key, u1.key) for u0, u1 in a.pairs()] == [(u0.key, u1.key) for u0, u1 in b.pairs()], a.path
    compared += 1
  assert compared > 50
  assert "(tinygrad's rewrites.pkl)" in dump.device and dump.error is None
  assert all(k.lines is None and "did not see this kernel rendered" in k.lines_note for k in dump.kernels)


def test_open_writes_the_report(softmax_trace, tmp_path, capsys):
  path = softmax_trace.save(tmp_path / "t.tgviz")
  assert cli.main(["open", str(path), "--out", str(tmp_path / "out")]) == 0
  assert (tmp_path / "out" / "index.html").is_file() and list((tmp_path / "out" / "svg").glob("*View_*.svg"))
  assert "report:" in capsys.readouterr().out
  (tmp_path / "text").write_text("hello\n")
  for bad in (tmp_path / "missing", tmp_path / "text", tmp_path):
    assert cli.main(["open", str(bad), "--out", str(tmp_path / "bad")]) == 2
    assert f"cannot open {bad}" in capsys.readouterr().err
  assert not (tmp_path / "bad").exists()
