"""Background work (tgviz.work): a newer request supersedes an older one of its kind, what waits is bounded, a cancelled
request's child process is killed, a forked child runs once and is stopped; no tinygrad, no trace."""
import os
import sys
import threading
import time
from concurrent.futures import CancelledError

import pytest

from tgviz.work import forked
from tgviz.work.cancel import Cancel, Cancelled, current, run_child, under
from tgviz.work.threads import Busy, Worker


def test_a_newer_request_of_a_kind_drops_the_waiting_one_and_cancels_the_running_one():
  gate, started, seen = threading.Event(), threading.Event(), []
  def blocking() -> str:
    started.set()
    gate.wait()
    token = current()
    assert token is not None
    seen.append(token.cancelled)
    return "first"
  with Worker("test") as w:
    first = w.submit(blocking, kind="picture")
    started.wait()
    waiting = w.submit(lambda: "second", kind="picture")   # waits behind the first
    third = w.submit(lambda: "third", kind="picture")       # drops the second, cancels the first
    other = w.submit(lambda: "other kind", kind="tab")      # another kind is not touched
    gate.set()
    assert first.result() == "first" and seen == [True]    # it ran on, told it was cancelled
    with pytest.raises(CancelledError): waiting.result()
    assert third.result() == "third" and other.result() == "other kind"


def test_requests_without_a_kind_all_run_in_order_and_what_waits_is_bounded():
  gate, started, order = threading.Event(), threading.Event(), []
  with Worker("test", bound=3) as w:
    w.submit(lambda: (started.set(), gate.wait()))
    started.wait()
    futures = [w.submit(lambda i=i: order.append(i)) for i in range(3)]
    with pytest.raises(Busy, match="3 requests are waiting"): w.submit(lambda: None)
    gate.set()
    assert w.drain(None)
    assert order == [0, 1, 2] and all(f.done() for f in futures)


def test_a_cancelled_request_kills_the_child_process_it_waits_on():
  token = Cancel()
  killer = threading.Timer(0.0, token.cancel)
  def run() -> None:
    with under(token):
      killer.start()
      run_child([sys.executable, "-c", "import time; time.sleep(600)"], "", None)
  with pytest.raises(Cancelled): run()


def test_a_child_process_past_its_time_is_killed():
  with pytest.raises(TimeoutError, match="longer than 0 s"):
    run_child([sys.executable, "-c", "import time; time.sleep(600)"], "", 0.2)
  assert run_child([sys.executable, "-c", "import sys; print(sys.stdin.read().upper())"], "dot", 60) == (0, "DOT\n", "")


@pytest.mark.skipif(not forked.FORKS, reason="fork: Linux only")
def test_a_forked_child_runs_once_and_can_be_stopped(tmp_path):
  done = tmp_path / "done"
  child = forked.Child(lambda: done.write_text(str(os.getpid())))
  while child.running(): time.sleep(0.01)   # (it ends by itself: a few ms)
  assert done.read_text() != str(os.getpid())
  sleeper = forked.Child(lambda: time.sleep(600))
  assert sleeper.running()
  sleeper.stop()
  assert not sleeper.running()
