"""Layouts kept on disk from run to run (tgviz.draw.layout_store): a layout made once is not made again by the next
process, whatever forked it; another engine lays out anew; the folder stays bounded, the layouts used longest ago let go
of first; a folder that cannot be written is said once, and a damaged file costs nothing but the time."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tgviz.draw import engine as E
from tgviz.draw import layout_store as L


@pytest.fixture
def counted(tmp_path, monkeypatch):
  """The engine behind a script that counts its runs, and layouts kept in a file of this test's: yields the file
  runs are counted in."""
  real, runs = E.engine()[0], tmp_path / "runs"
  exe = tmp_path / "counting-dot"
  exe.write_text(f"#!/bin/sh\necho run >> {runs}\nexec {real} \"$@\"\n")
  exe.chmod(0o755)
  monkeypatch.setattr(E, "_kept", L.LayoutStore(tmp_path / "cache" / "layouts"))
  E.set_engine(str(exe))
  yield runs
  E.set_engine(None)


def _runs(runs: Path) -> int:
  return runs.read_text().count("run") if runs.exists() else 0


def _forget_this_process() -> None:
  E._made.clear()  # what a fresh process knows: nothing but the file


def test_a_layout_made_once_is_taken_from_the_file_by_the_next_run(counted):
  text = "digraph { kept -> b; kept -> c }"
  first = E.run_dot(text)
  assert _runs(counted) == 1 and "node kept" in first
  _forget_this_process()
  assert E.run_dot(text) == first and _runs(counted) == 1
  E.run_dot(text.replace("-> c", "-> d"))  # another text is laid out
  assert _runs(counted) == 2


def test_a_fresh_process_takes_the_layout_a_forked_writer_kept(counted, tmp_path):
  """tgviz run's report writers are forked processes, and layouts are made in threads meanwhile: what one kept the next
  run (another process) finds."""
  text = "digraph { forked -> b }"
  E.run_dot("digraph { kept_before_the_fork -> b }")
  if (pid := os.fork()) == 0:
    try: E.run_dot(text)
    finally: os._exit(0)
  os.waitpid(pid, 0)
  assert _runs(counted) == 2
  script = (f"import sys; from tgviz.draw import engine as E; E.set_engine({str(counted.parent / 'counting-dot')!r}); "
            f"sys.stdout.write(E.run_dot({text!r}))")
  out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                       env={**os.environ, "TGVIZ_LAYOUT_CACHE": str(E._kept.path)}).stdout
  assert "node forked" in out and _runs(counted) == 2  # laid out by the forked writer only


def test_another_engine_lays_out_anew(counted, tmp_path):
  text = "digraph { engines -> b }"
  E.run_dot(text)
  other = tmp_path / "other-dot"
  other.write_text((tmp_path / "counting-dot").read_text())
  other.chmod(0o755)
  E.set_engine(str(other))
  _forget_this_process()
  E.run_dot(text)
  assert _runs(counted) == 2


def test_the_folder_keeps_the_layouts_used_last(tmp_path, monkeypatch):
  monkeypatch.setattr(L, "MAX_LAYOUTS", 3)
  monkeypatch.setattr(L, "_PRUNE_EVERY", 1)
  store = L.LayoutStore(tmp_path / "layouts")
  for i in range(5):
    store.put(b"k%d" % i, f"layout {i}")
    os.utime(tmp_path / "layouts" / (b"k%d" % i).hex(), ns=(i, i))  # (an mtime a tick apart: the clock is coarser)
  assert store.get(b"k0") is None and store.get(b"k1") is None and store.get(b"k2") == "layout 2"  # (k2 used now)
  store.put(b"k5", "layout 5")
  assert [store.get(b"k%d" % i) for i in range(6)] == [None, None, "layout 2", None, "layout 4", "layout 5"]


def test_a_folder_that_cannot_be_written_is_said_once_and_layouts_are_made_afresh(counted, tmp_path, monkeypatch, capfd):
  taken = tmp_path / "a-file"
  taken.write_text("not a folder")
  monkeypatch.setattr(E, "_kept", L.LayoutStore(taken))
  first = E.run_dot("digraph { unkept -> b }")
  _forget_this_process()
  assert E.run_dot("digraph { unkept -> b }") == first and "node unkept" in first and _runs(counted) == 2
  err = capfd.readouterr().err
  assert err.count("tgviz: layouts cannot be kept") == 1 and str(taken) in err and "TGVIZ_LAYOUT_CACHE" in err
  assert taken.read_text() == "not a folder"  # (left as it was)


def test_a_damaged_layout_is_made_again(counted):
  text = "digraph { damaged -> b }"
  first = E.run_dot(text)
  for f in E._kept.path.iterdir(): f.write_bytes(b"\x78\x9c damaged")
  _forget_this_process()
  assert E.run_dot(text) == first and _runs(counted) == 2
  _forget_this_process()
  assert E.run_dot(text) == first and _runs(counted) == 2  # (kept again, whole)


def test_where_layouts_are_kept(monkeypatch, tmp_path):
  monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
  monkeypatch.delenv("TGVIZ_LAYOUT_CACHE", raising=False)
  assert L.default_path() == tmp_path / "tgviz" / "layouts"
  monkeypatch.setenv("TGVIZ_LAYOUT_CACHE", str(tmp_path / "mine"))
  assert L.default_path() == tmp_path / "mine"
  monkeypatch.setenv("TGVIZ_LAYOUT_CACHE", "")
  assert L.default_path() is None
  store = L.LayoutStore(None)
  store.put(b"k", "layout")
  assert store.get(b"k") is None and not list(tmp_path.iterdir())
