"""`tgviz run` in-process: its error paths."""
from tinygrad.uop.ops import Ops, PatternMatcher, UOp, UPat, graph_rewrite

import tgviz
from tgviz import cli

_RUN: dict = {}


def _run_inside_a_rewrite():
  """A pattern's callback (tinygrad pattern matchers take no closures): runs the command line mid-rewrite."""
  _RUN["status"] = cli.main(_RUN["argv"])


def test_run_when_the_capture_cannot_start(tmp_path, capsys):
  script = tmp_path / "ok.py"
  script.write_text("print('ran')\n")
  _RUN["argv"] = ["run", str(script), "--out", str(tmp_path / "out")]
  with tgviz.capture():  # a capture cannot start while tinygrad is in the middle of a rewrite
    graph_rewrite(UOp(Ops.CUSTOM, arg="x").sink(), PatternMatcher([(UPat(Ops.CUSTOM), _run_inside_a_rewrite)]))
  err = capsys.readouterr().err
  assert _RUN["status"] == 1 and "cannot start inside" in err and f"could not trace {script}" in err
  assert not (tmp_path / "out" / "index.html").exists()


def test_run_writes_every_step_svg_when_asked(tmp_path, capsys):
  script = tmp_path / "small.py"
  script.write_text("from tinygrad import Tensor\n(Tensor.ones(4, 4).contiguous().sum(1)).realize()\n")
  assert cli.main(["run", str(script), "--out", str(tmp_path / "all"), "--svg", "all"]) == 0
  assert cli.main(["run", str(script), "--out", str(tmp_path / "default")]) == 0
  every, landmarks = list((tmp_path / "all" / "svg").glob("*.svg")), list((tmp_path / "default" / "svg").glob("*.svg"))
  assert len(every) > 50 and 0 < len(landmarks) < len(every) // 5
  assert {p.name for p in landmarks} <= {p.name for p in every} and all("View_" in p.name for p in landmarks)
  assert "(landmarks)" in capsys.readouterr().out
