"""Where tinygrad fails inside a capture: a rewrite that raises, a kernel that fails to compile, a kernel that fails to
run. Each is found (trace.failure) at the step, match and UOp where it happened, kept by a saved trace, said in one line
by `tgviz run` and first by `tgviz show`; an error in the user's own code is no tinygrad failure."""
import json

import pytest
import workloads

import tgviz
from tgviz import bridge as tg
from tgviz import cli


@pytest.fixture(scope="module", params=["rewrite", "compile", "run"])
def failed(request):
  with pytest.raises(Exception) as raised, tgviz.capture() as trace: workloads.failing(request.param)
  return request.param, trace, raised.value


def test_the_failure_is_found_where_tinygrad_raised(failed, tmp_path):
  where, trace, error = failed
  f = trace.failure
  assert f is not None and f.kind == where and f.error.startswith(f"{type(error).__name__}: ") and f.traceback == trace.traceback
  if where == "rewrite":  # the step and match tinygrad recorded the error at, the node the pattern was matching
    m = f.step.matches[f.match]
    assert m.is_error and str(error) in tg.error_text(m.uops()[1])
    assert tg.node_key(m.uops()[0]) == f.node and tg.op_name(m.uops()[0]) == "STORE"
    assert f.kernel is None and "at match" in f.summary() and "doesn't have a shape" in f.summary()
  else:  # the kernel's program: its SOURCE (a compile) or PROGRAM (a launch) marked
    assert f.kernel is not None and f.kernel.name == "fill" and f.step.name == "View Program" and f.match is None
    node = next(u for u in tg.toposort(f.step.before()) if tg.node_key(u) == f.node)
    assert tg.op_name(node) == ("SOURCE" if where == "compile" else "PROGRAM")
    if where == "compile":  # the line PoCL named, in the kernel's code: the one calling the missing function
      assert "no_such_function" in f.kernel.source.splitlines()[f.line - 1] and "no_such_function" in f.summary()
    else: assert "CL_INVALID_WORK_GROUP_SIZE" in f.summary() and f.kernel.opts[0].arg == 8192
  loaded = tgviz.load(trace.save(tmp_path / "failed.tgviz")).failure
  assert loaded is not None
  assert (loaded.kind, loaded.step.path, loaded.match, loaded.node, loaded.line) == (f.kind, f.step.path, f.match, f.node, f.line)


def test_run_says_where_it_failed_in_one_line_and_show_first(failed, tmp_path, capsys):
  where, trace, _ = failed
  script = tmp_path / f"failing_{where}.py"
  script.write_text(workloads.FAILING[where])
  status, ran = cli.run(script, tmp_path / "out", None, 300, [], "none", jobs=0)
  err = capsys.readouterr().err
  said = [x for x in err.splitlines() if x.startswith("tgviz: tinygrad failed: ")]
  assert status == 1 and ran is not None and said == [f"tgviz: tinygrad failed: {ran.failure.summary()}"]
  saved = trace.save(tmp_path / "t.tgviz")
  assert cli.main(["show", str(saved)]) == 0
  first = capsys.readouterr().out.splitlines()[0]
  assert first.startswith(f"FAILED ({where}") and trace.failure.summary() in first
  assert cli.main(["show", str(saved), "--json"]) == 0
  record = json.loads(capsys.readouterr().out.splitlines()[0])
  assert record["type"] == "failure" and record["step"] == trace.failure.step.path and record["match"] == trace.failure.match


def test_an_error_of_the_users_own_is_no_failure_of_tinygrads():
  with pytest.raises(ZeroDivisionError), tgviz.capture() as trace:
    workloads.softmax()
    _ = 1 / 0
  assert trace.error is not None and trace.failure is None
  with tgviz.capture() as fine: workloads.softmax()
  assert fine.failure is None
