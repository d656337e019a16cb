"""Forked workers (tgviz.work.forked): the report and SVGs they write are those written in one process, and a worker that
dies loses nothing."""
import os
import sys

import pytest

from tgviz import cli
from tgviz.work import forked

linux_only = pytest.mark.skipif(sys.platform != "linux", reason="workers fork only on Linux")


class Unpicklable:
  """A state that cannot travel through a pipe: workers must inherit it."""
  def __init__(self): self.parent, self.fn = os.getpid(), lambda: None
  def __reduce__(self): raise TypeError("the state was pickled")


def pid_and_square(state: Unpicklable, x: int) -> tuple[int, int]:
  return os.getpid(), x * x


def die_in_a_worker(state: Unpicklable, x: int) -> int:
  if os.getpid() != state.parent: os._exit(3)  # killed mid-task, as by the OOM killer
  return x + 1


@linux_only
def test_workers_inherit_the_state_and_return_in_order():
  state = Unpicklable()
  with forked.Workers(state, 2) as w:
    got = list(w.map(pid_and_square, range(20)))
  assert [sq for _, sq in got] == [x * x for x in range(20)]
  assert all(pid != state.parent for pid, _ in got)  # done in the workers


def test_no_workers_runs_here_in_order():
  state = Unpicklable()
  with forked.Workers(state, 0) as w:
    assert list(w.map(pid_and_square, [3, 1, 2])) == [(state.parent, 9), (state.parent, 1), (state.parent, 4)]
    assert w.submit(pid_and_square, 5).result() == (state.parent, 25)


@linux_only
def test_a_worker_that_dies_loses_nothing(capsys):
  state = Unpicklable()
  with forked.Workers(state, 2) as w:
    assert list(w.map(die_in_a_worker, range(5))) == [1, 2, 3, 4, 5]  # done here instead
  assert capsys.readouterr().err.count("worker process died") == 1


@linux_only
def test_report_by_workers_is_the_same_file(tutorial_trace, tmp_path):
  one = tutorial_trace.to_html(tmp_path / "here.html").read_bytes()
  assert tutorial_trace.to_html(tmp_path / "forked.html", workers=2).read_bytes() == one


@linux_only
def test_run_with_workers_writes_what_one_process_writes(tutorial_trace, tmp_path):
  for jobs in (0, 2):
    cli.write(tutorial_trace, tmp_path / str(jobs), "tutorial", 300, "landmarks", jobs)
  assert (tmp_path / "0" / "index.html").read_bytes() == (tmp_path / "2" / "index.html").read_bytes()
  svgs = [sorted((tmp_path / str(j) / "svg").iterdir()) for j in (0, 2)]
  assert [p.name for p in svgs[0]] == [p.name for p in svgs[1]] and len(svgs[0]) > 5
  assert all(a.read_bytes() == b.read_bytes() for a, b in zip(*svgs, strict=True))


def test_negative_jobs_is_refused(tmp_path, capsys):
  with pytest.raises(SystemExit) as e: cli.main(["run", str(tmp_path / "x.py"), "-j", "-1"])
  assert e.value.code == 2 and "--jobs takes 0 or more" in capsys.readouterr().err
