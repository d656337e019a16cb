"""Opening a trace file never runs code from it: crafted files in both formats (tgviz's, tinygrad's rewrites.pkl) are
refused naming the global they asked for, and nothing they carry happens; damaged files (empty, truncated, bit-flipped)
give TraceFileError, never another exception."""
import gzip
import io
import os
import pickle
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest
import workloads

import tgviz
from tgviz import bridge as tg
from tgviz import cli
from tgviz.bridge import records, safe_pickle

LIMIT_BEFORE = resource.getrlimit(resource.RLIMIT_DATA)
HEADER = {"format": "tgviz-trace", "version": 2, "tinygrad": tg.SUPPORTED_TINYGRAD}


class MakesAFile:
  """What a crafted file carries: when unpickled, it creates a file (as any code could)."""

  def __init__(self, path: Path): self.path = str(path)
  def __reduce__(self): return (open, (self.path, "w"))


class GetsAnAttribute:
  """An attempt through getattr, which newer Pythons use for enum members: getattr(Ops, "__class__") is no member."""

  def __reduce__(self): return (getattr, (records.Ops, "__class__"))


def _saved(path: Path, header, body) -> Path:
  with gzip.open(path, "wb") as f:
    pickle.dump(header, f)
    pickle.dump(body, f)
  return path


@pytest.fixture(scope="module")
def tutorial_file(tmp_path_factory) -> Path:
  with tgviz.capture() as trace: workloads.tutorial()
  return trace.save(tmp_path_factory.mktemp("traces") / "tutorial.tgviz")


@pytest.fixture(scope="module")
def viz_dump(tmp_path_factory) -> Path:
  """tinygrad's own rewrites.pkl of the tutorial (plain tinygrad, VIZ=-1, as on another machine)."""
  tmp = tmp_path_factory.mktemp("dump")
  subprocess.run([sys.executable, str(workloads.EXAMPLES / "tutorial_conv2d.py")], capture_output=True, text=True, timeout=300,
                 check=True, env={**os.environ, "VIZ": "-1", "TMPDIR": str(tmp), "DEV": "CPU"})
  return next(tmp.glob("rewrites.pkl*"))


def test_the_crafted_payload_is_real(tmp_path):
  """The payload does what it says under plain pickle, so a refusal below is a refusal of something real."""
  marker = tmp_path / "ran"
  pickle.loads(pickle.dumps(MakesAFile(marker))).close()
  assert marker.exists()


@pytest.mark.parametrize("where", ["header", "body", "groups"])
def test_a_crafted_tgviz_file_is_refused_and_runs_nothing(tmp_path, where):
  marker = tmp_path / "ran"
  bad = MakesAFile(marker)
  header, body = dict(HEADER), ([], {}, None)
  if where == "header": header["device"] = bad
  elif where == "body": body = ([], {0: bad}, None)
  else: body = ([records.GroupRecord("g", "other", [bad], ())], {}, None)
  path = _saved(tmp_path / "crafted.tgviz", header, body)
  with pytest.raises(tgviz.TraceFileError, match=r"names (io|builtins)\.open.*nothing in the file was run"): tgviz.load(path)
  assert not marker.exists()


def test_a_crafted_rewrites_pkl_is_refused_and_runs_nothing(tmp_path):
  marker = tmp_path / "ran"
  path = tmp_path / "rewrites.pkl.someone"
  path.write_bytes(pickle.dumps({"keys": [MakesAFile(marker)]}))
  with pytest.raises(tgviz.TraceFileError, match=r"names (io|builtins)\.open.*trusted=True.*--trust"): tgviz.load(path)
  assert not marker.exists()
  assert cli.main(["open", str(path), "--out", str(tmp_path / "out")]) == 2
  assert not marker.exists() and not (tmp_path / "out").exists()


class AMemberByName:
  """An enum member pickled by name, as newer Pythons may write one: getattr(Ops, "ADD")."""

  def __reduce__(self): return (getattr, (records.Ops, "ADD"))


def test_getattr_reaches_enum_members_only(tmp_path):
  path = _saved(tmp_path / "getattr.tgviz", HEADER, ([], {0: GetsAnAttribute()}, None))
  with pytest.raises(tgviz.TraceFileError, match="not an enum member"): tgviz.load(path)
  assert safe_pickle.SafeUnpickler(io.BytesIO(pickle.dumps([AMemberByName()]))).load() == [records.Ops.ADD]


def test_tinygrads_dump_opens_without_building_its_renderers(viz_dump):
  """rewrites.pkl holds each kernel's renderer, whose constructor loads a compiler: it is read as a bare renderer of the
  same class and target (all a trace reads of it), without calling that constructor."""
  dump = viz_dump
  from tinygrad.renderer.cstyle import ClangRenderer
  init = ClangRenderer.__init__
  def refuse(*_a, **_k): raise AssertionError("the renderer's constructor ran")
  ClangRenderer.__init__ = refuse
  try: trace = tgviz.load(dump)
  finally: ClangRenderer.__init__ = init
  assert [(k.name, k.renderer, k.device) for k in trace.kernels] == [("E_4", "ClangRenderer", "CPU"), ("r_2_2_2_2", "ClangRenderer", "CPU")]
  assert [k.name for k in tgviz.load(dump, trusted=True).kernels] == ["E_4", "r_2_2_2_2"]


def test_a_trace_saved_before_the_bridge_was_a_package_opens(tmp_path, monkeypatch):
  """Files from the tgviz before this one name their records tgviz._tinygrad.*: they open, through the same allowlist."""
  with tgviz.capture() as trace: workloads.tutorial()
  old = type(sys)("tgviz._tinygrad")
  for cls in (records.GroupRecord, records.StepRecord, records.Origin):
    setattr(old, cls.__name__, cls)
    monkeypatch.setattr(cls, "__module__", "tgviz._tinygrad")
  monkeypatch.setitem(sys.modules, "tgviz._tinygrad", old)
  path = trace.save(tmp_path / "old.tgviz")
  monkeypatch.undo()
  with gzip.open(path, "rb") as f: f.readline(); assert b"tgviz._tinygrad" in f.read()
  assert [k.name for k in tgviz.load(path).kernels] == [k.name for k in trace.kernels]


def _outcome(path: Path) -> str:
  st = time.perf_counter()
  try: tgviz.load(path)
  except tgviz.TraceFileError: result = "refused"
  else: result = "opened"
  assert time.perf_counter() - st < 10, "no hang"
  return result


def test_damaged_files_give_trace_file_error(tutorial_file, viz_dump, tmp_path):
  """Empty, truncated and bit-flipped files, in the compressed bytes and in the pickles inside (recompressed, so the
  damage reaches the unpickler), in both formats: TraceFileError or a good trace, never another exception."""
  rng = random.Random(0)
  data = tutorial_file.read_bytes()
  raw = gzip.decompress(data)
  dump = viz_dump.read_bytes()
  cases = [b"", data[:1], data[:2], data[:100], data[:len(data) // 2], data[:-1], dump[:1], dump[:len(dump) // 2], dump[:-1]]
  cases += [gzip.compress(raw[:n]) for n in (1, 50, len(raw) // 3, len(raw) - 1)]
  for blob, squeeze in ((data, None), (raw, gzip.compress), (dump, None)):
    for _ in range(60):
      b = bytearray(blob)
      for _ in range(rng.choice((1, 1, 3))): b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
      cases.append(squeeze(bytes(b)) if squeeze else bytes(b))
  outcomes = []
  for i, blob in enumerate(cases):
    (p := tmp_path / f"damaged{i}").write_bytes(blob)
    outcomes.append(_outcome(p))
  assert outcomes.count("refused") > len(cases) // 2, outcomes  # most damage is noticed; what opens is a trace


def test_a_file_asking_for_more_memory_than_its_size_can_need_is_refused_at_once(tmp_path):
  """One flipped bit made a REDUCE of tinygrad's dump a LONG_BINPUT with a memo index of 1.3 billion: CPython's unpickler
  filled a 20 GB memo table for 65 s before the file was refused. Here a valid 10-byte pickle puts its one object at memo
  index 100 million (a 1.6 GB table, more than the bound for its size): refused at once, and nothing else is touched."""
  blob = b"\x80\x04K\x01r" + (100_000_000).to_bytes(4, "little") + b"."
  assert pickle.loads(blob) == 1  # plain pickle reads it, taking the 1.6 GB
  path = tmp_path / "rewrites.pkl"
  path.write_bytes(blob)
  st = time.perf_counter()
  with pytest.raises(tgviz.TraceFileError, match="more memory than a file of 10 bytes can need"): tgviz.load(path)
  assert time.perf_counter() - st < 5
  assert resource.getrlimit(resource.RLIMIT_DATA) == LIMIT_BEFORE  # the bound is put back
  assert len(bytearray(2**31)) == 2**31


def test_real_traces_open_in_a_fresh_process(tutorial_file):
  code = "import sys, tgviz; t = tgviz.load(sys.argv[1]); print(len(t.kernels), sum(len(s.matches) for s in t.steps))"
  out = subprocess.run([sys.executable, "-c", code, str(tutorial_file)], capture_output=True, text=True, timeout=300, check=True).stdout
  with tgviz.capture() as trace: workloads.tutorial()
  assert out.split() == [str(len(trace.kernels)), str(sum(len(s.matches) for s in trace.steps))]
