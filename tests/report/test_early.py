"""`tgviz run` writes its report's segments, highlights and links its kernels' code and draws their landmarks' SVG files
while the script still runs (tgviz.report.early): the report and the SVG files are the ones its trace gives, byte for
byte."""
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import workloads
from tinygrad import dtypes
from tinygrad.uop.ops import UOp, graph_rewrite, rewrite_group
from tinygrad.uop.symbolic import symbolic

import tgviz
from tgviz import cli
from tgviz.report import early
from tgviz.report import writer as report
from tgviz.report.contents import SEGMENT
from tgviz.views import picture as V
from tgviz.views import protocol as P
from tgviz.work import forked

pytestmark = pytest.mark.skipif(forked.cores() < 2, reason="nothing is written early on one core")
TESTS = Path(__file__).resolve().parents[1]
SCRIPT = f"""import sys
sys.path.insert(0, {str(TESTS)!r})
import glob, tempfile, workloads
workloads.mlp_train_until(lambda: len(glob.glob(tempfile.gettempdir() + "/tgviz-early-*/k-*.json")) >= 3)
"""


def wait_for(done, limit: float = 600) -> None:
  """Until done(): what another process writes, looked at every 50 ms (at most limit seconds)."""
  end = time.monotonic() + limit
  while not done():
    assert time.monotonic() < end, "not written"
    time.sleep(0.05)


def _written(tmp: Path) -> bool:
  """Whether the writers have made some kernels' tabs (the segments of their groups before them)."""
  return len(list(tmp.glob("tgviz-early-*/k-*.json"))) >= 3


def _first_info(path: Path) -> dict:
  """The panel of the first step of a segment a writer wrote (as its check holds it)."""
  return json.loads(json.loads(path.read_text())["check"])[0][1]["info"]


def _schedules_written(tmp: Path) -> bool:
  """Whether the writers have written three of a schedule's segments (after the closed kernels' in each writer): the
  MLP step's schedule's first two hold steps whose output the script drops, which the report does not take."""
  return sum(_first_info(p)["kind"] == "schedule" for p in tmp.glob("tgviz-early-*/s-*.json")) >= 3


@pytest.fixture
def often(monkeypatch, tmp_path):
  """A writer forked at every quiet point where the one before has ended (a small script gives few otherwise); its files
  in tmp_path/tmp. The scripts run until the writers have written some (mlp_train_until): on a busy machine they may
  get little of a core."""
  monkeypatch.setattr(early.EarlySegments, "EVERY", 0.0)
  monkeypatch.setattr(early.EarlySegments, "MIN_STEPS", 1)
  (tmp := tmp_path / "tmp").mkdir()
  monkeypatch.setattr(tempfile, "tempdir", str(tmp))
  return tmp


def test_a_report_written_as_the_script_runs_is_its_traces_report(tmp_path, capsys, often):
  script = tmp_path / "mlp.py"
  script.write_text(SCRIPT)
  # (what_if=0: the retries --what-if adds to the report are not in the trace file the report is written again from)
  status, _ = cli.run(script, tmp_path / "out", "CPU", 300, [], "landmarks", jobs=2, save=True, what_if=0)
  out = capsys.readouterr().out
  m = re.search(r"written during the run: (\d+) of (\d+) report segments \(by (\d+) process(?:es)?(?:; \d+ more written, then changed by the "
                r"run)?\), (\d+) kernel(?:'s|s') code and asm"
                r" tabs made, (\d+) SVG files drawn", out)
  assert status == 0 and m, out
  taken, total, forks, kernels, drawn = (int(x) for x in m.groups())
  assert 0 < taken < total and forks > 1 and kernels > 0 and drawn > 0, out
  assert not list(often.iterdir()), "the writers' files are gone"
  # the same trace's report, written from its file in a fresh process (nothing highlighted or linked there before)
  again = tmp_path / "again.html"
  code = (f"import tgviz; from tgviz.report.writer import write_report; t = tgviz.load({str(tmp_path / 'out' / 'trace.tgviz')!r}); "
          f"write_report(t, {str(again)!r}, {f'tgviz: {script.name}'!r}, workers=2); "
          f"t.export_svg({str(tmp_path / 'svg')!r}, max_nodes=300, landmarks=True)")
  subprocess.run([sys.executable, "-c", code], check=True, cwd=TESTS.parent)
  assert (tmp_path / "out" / "index.html").read_bytes() == again.read_bytes()
  svgs = {p.name: p.read_bytes() for p in (tmp_path / "out" / "svg").iterdir()}
  assert len(svgs) > drawn and svgs == {p.name: p.read_bytes() for p in (tmp_path / "svg").iterdir()}
  assert f"wrote {len(svgs)} SVG files (landmarks; {drawn} drawn during the run) in " in out, out


def test_a_segment_is_taken_only_where_all_it_was_written_from_holds(often):
  with early.EarlySegments(pictures=(300, True)) as e:
    with tgviz.capture(device="CPU") as trace, e.during(trace):
      workloads.mlp_train_until(lambda: _written(often) and _schedules_written(often))
    writer = report.Writer(trace)
    keys = {i: tuple(P.step_key(s) for s in seg) for i, seg in enumerate(writer.segments)}
    before = e.take(writer)  # (a schedule's segment whose step's output the script dropped since is not: see below)
    files = {tuple(json.loads(p.read_text())["keys"]): p for p in often.glob("*/s-*.json")}
    assert e.forks > 1 and e.written == len(files) > 3 and len(before.segments) > 3
    # a schedule's segments are written as soon as its group is closed (the core is idle till kernels close), its
    # pictures not (its CALL nodes name kernels compiled later): the kernels' landmarks are drawn, none of a schedule's
    assert any(writer.segments[i][0].group.kind == "schedule" for i in before.segments)
    steps = {P.step_key(s): s for s in trace.steps}
    assert e.svgs and all(steps[k].group.kind == "kernel" for k in e.svgs)
    # two that were taken: one whose first step differs now (its depth), one whose first step returned another graph
    changed = [keys[i] for i in sorted(before.segments)[:2]]
    for k, change in zip(changed, ("depth", "returned"), strict=True):
      data = json.loads(files[k].read_text())
      check = json.loads(data["check"])
      if change == "depth": check[0][1]["info"]["depth"] += 1
      else: check[0][2] = ["k", "0123456789ab"]
      data["check"] = json.dumps(check)
      files[k].write_text(json.dumps(data))
    taken = e.take(writer)
  assert set(taken.segments) == set(before.segments) - {i for i in before.segments if keys[i] in changed} and e.taken == len(before.segments) - 2
  # what was not taken without a change: a schedule's segment with a step whose output the script dropped after the
  # writer wrote it (the report, written from the whole trace, has no graph after that step)
  for i in {i for i in keys if keys[i] in files} - set(before.segments):
    assert writer.segments[i][0].group.kind == "schedule" and any(s.returned_num is None for s in writer.segments[i]), keys[i]
  for i, written in taken.segments.items(): assert written == writer.segment(i), keys[i]  # what the writer writes now


def _rewrites(name: str, n: int) -> None:
  for i in range(n): graph_rewrite(UOp.const(i, dtypes.int) + 0, symbolic, name=name)


@rewrite_group()
def _inner_group() -> None: _rewrites("in B", 3)


@rewrite_group()
def _next_group() -> None: _rewrites("in C", 1)


@rewrite_group()
def _outer_group(tmp: Path) -> None:
  """Group A: rewrites, then groups B and C inside it, then rewrites (writers fork after one) until a writer has
  written B's segment (B is closed then, A is not), then as many again, so that A has a segment more, before B's."""
  _rewrites("in A", SEGMENT + 8)
  _inner_group()
  _next_group()
  def b_written() -> bool:
    _rewrites("in A", 1)
    return any(_first_info(p)["name"].startswith("in B") for p in tmp.glob("*/s-*.json"))
  wait_for(b_written)
  _rewrites("in A", SEGMENT + 8)


def test_a_segment_whose_index_moved_is_not_taken(often, tmp_path):
  """A segment's chunk is named by its index: where a group before its own, open when it was written, has gained a
  segment since, it is written again (taken, the page would read another segment's steps)."""
  with early.EarlySegments() as e:
    with tgviz.capture(device="CPU") as trace, e.during(trace): _outer_group(often)
    writer = report.Writer(trace)
    taken = e.take(writer)
    written = {tuple(json.loads(p.read_text())["keys"]) for p in often.glob("*/s-*.json")}
    writer.write(tmp_path / "early.html", written=taken)
  b = next(i for i, seg in enumerate(writer.segments) if seg[0].name == "in B")
  assert writer.segments[b - 1][0].group is writer.segments[b - 3][0].group  # (A's three segments before it)
  assert tuple(P.step_key(s) for s in writer.segments[b]) in written and b not in taken.segments
  assert (tmp_path / "early.html").read_bytes() == report.write_report(trace, tmp_path / "again.html", "tgviz trace").read_bytes()


def test_what_is_written_after_the_run_is_the_reports(often, tmp_path):
  """The writer forked once the script has ended (while `tgviz run` times and retries kernels) writes every segment
  not written yet, the kernels' tabs and the pictures, schedules' too, then the groups' chunks and the search index:
  all of it is taken, the report the same bytes."""
  with early.EarlySegments(pictures=(300, True)) as e:
    with tgviz.capture(device="CPU") as trace: workloads.tutorial()
    writer = report.Writer(trace)
    e.after(trace)
    landmarks = [s for s in trace.steps if s.is_snapshot]
    assert any(s.group.kind == "schedule" for s in landmarks)
    counts = {"s-*": len(writer.segments), "k-*": len({k.source for k in trace.kernels if k.source}), "v-*": len(landmarks),
              "g-*": len(trace.groups), "search": 1}
    wait_for(lambda: all(len(list(often.glob(f"*/{c}.json"))) == n for c, n in counts.items()))
    written = e.take(writer)
    assert sorted(written.segments) == list(range(len(writer.segments))) and e.kernels == len(trace.kernels)
    assert sorted(written.groups) == list(range(len(trace.groups))) and written.search is not None
    assert set(e.svgs) == {P.step_key(s) for s in landmarks}
    writer.write(tmp_path / "early.html", written=written)
  again = report.write_report(trace, tmp_path / "again.html", "tgviz trace")
  assert (tmp_path / "early.html").read_bytes() == again.read_bytes()
  assert e.svgs == {P.step_key(s): V.step_svg(s, max_nodes=300) for s in landmarks}
