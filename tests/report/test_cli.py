"""`tgviz run` in-process: its error paths; and as a child process: what it prints."""
import contextlib
import io
import os
import pty
import re
import statistics
import subprocess
import sys
import threading

import pytest
from helpers import TIME
from tinygrad.uop.ops import Ops, PatternMatcher, UOp, UPat, graph_rewrite

import tgviz
from tgviz import cli
from tgviz.report.contents import unchunk
from tgviz.trace import whatif
from tgviz.trace.retime import APART, NOISE
from tgviz.trace.units import time_text

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
  out = capsys.readouterr().out
  for n, which in ((len(every), "all"), (len(landmarks), "landmarks")):  # (a small script: nothing drawn during its run)
    assert re.search(rf"wrote {n} SVG files \({which}; \d+ drawn during the run\) in [\d.]+ s", out), out


def test_run_shows_the_scripts_own_traceback_and_a_clean_exit_is_no_error(tmp_path, capsys):
  failing = tmp_path / "failing.py"
  failing.write_text("from tinygrad import Tensor\na = Tensor.ones(3, 4).contiguous().realize()\n"
                     "def f():\n  raise RuntimeError('bad input')\nf()\n")
  status, trace = cli.run(failing, tmp_path / "out", None, 300, [], "none")
  err = capsys.readouterr().err
  assert status == 1 and trace is not None and type(trace.error).__name__ == "RuntimeError" and trace.kernels
  for text in (err, trace.traceback):  # printed and in the report: from the script's own lines, not tgviz's or runpy's
    assert text.startswith(f'Traceback (most recent call last):\n  File "{failing}", line 5, in <module>'), text[:200]
    assert "tgviz" not in text.split("RuntimeError")[0] and "runpy" not in text
  exiting = tmp_path / "exiting.py"
  exiting.write_text("import sys\nfrom tinygrad import Tensor\nTensor.ones(3).contiguous().realize()\nsys.exit(0)\n")
  status, trace = cli.run(exiting, tmp_path / "out2", None, 300, [], "none")
  out = capsys.readouterr().out
  assert status == 0 and trace is not None and trace.error is None and trace.kernels and "stopped by" not in out
  assert "SVGs:" not in out and not (tmp_path / "out2" / "svg").exists()  # --svg none: no folder, and none named


def test_an_output_folder_that_cannot_be_written_is_one_line_and_status_2(tmp_path, capsys):
  script = tmp_path / "small.py"
  script.write_text("from tinygrad import Tensor\nTensor.ones(4).contiguous().realize()\nprint('the script ran')\n")
  (tmp_path / "a_file").write_text("")
  (tmp_path / "out").mkdir()
  (tmp_path / "out" / "svg").write_text("")  # the report's svg/ folder is a file
  for argv, folder in ((["run", str(script), "--out", "/proc/nope"], "/proc/nope"),
                       (["run", str(script), "--out", str(tmp_path / "out")], str(tmp_path / "out" / "svg")),
                       (["compare", str(script), str(script), "--out", str(tmp_path / "a_file" / "cmp")], str(tmp_path / "a_file" / "cmp")),
                       (["open", str(tmp_path / "nothing.tgviz"), "--out", "/proc/nope/deeper"], "/proc/nope/deeper")):
    assert cli.main(argv) == 2, argv
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and "Traceback" not in err, err  # one line, before the script runs
    assert err.startswith(f"tgviz: cannot write to the folder {folder} (") and "give --out a folder you can write to" in err
    assert "the script ran" not in out


WARNS = '''
import os, subprocess
import tgviz  # (its device set-up: PoCL for the CL device)
from tinygrad import Device, Tensor
cpu = Device["CPU"].compiler
cpu.compile("void warns(int* restrict a) { a[0] = 1 / 0; }")  # clang: "warning: division by zero ... 1 warning generated."
try: cpu.compile("void fails(int* a) { a[0] = nope; }")
except subprocess.CalledProcessError: print("the bad kernel failed to compile")
print("PoCL builds with", os.environ.get("POCL_EXTRA_BUILD_FLAGS"))
import uuid, warnings, pyopencl as cl  # PoCL, the CL device's compiler, says "1 warning generated." on stderr itself
ctx = cl.Context([cl.get_platforms()[0].get_devices()[0]])
with warnings.catch_warnings():
  warnings.simplefilter("ignore")
  cl.Program(ctx, f"__kernel void k(__global int* a) {{ a[0] = 1 / 0; }} // {uuid.uuid4()}").build()
Tensor.ones(4, device="CPU").contiguous().realize()
'''


def test_clangs_warnings_on_a_kernel_are_not_in_the_output_of_tgviz_run(tmp_path):
  script = tmp_path / "warns.py"
  script.write_text(WARNS)
  run = subprocess.run([sys.executable, "-m", "tgviz", "run", str(script), "--out", str(tmp_path / "out"), "--svg", "none",
                        "--retime", "0", "-j", "0"], capture_output=True, text=True, timeout=600,
                       env={**os.environ, "DISABLE_COMPILER_CACHE": "1"})
  assert run.returncode == 0, run.stderr
  output = run.stdout + run.stderr
  assert "warning generated" not in output and "division by zero" not in output
  # an error is still said, as clang said it; PoCL's embedded clang builds with -w (its warnings reach fd 2 directly)
  assert "the bad kernel failed to compile" in run.stdout and "use of undeclared identifier 'nope'" in run.stderr
  assert "PoCL builds with -w" in run.stdout
  without = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600,
                           env={**os.environ, "DISABLE_COMPILER_CACHE": "1"})
  assert "1 warning generated" in without.stderr  # (the kernel does make clang warn; PoCL says so only now and then)


def _output_on_a_terminal(argv: list[str]) -> tuple[str, str]:
  """What a child process writes to stdout (a pipe) and to stderr (a terminal: a pty), both whole."""
  master, slave = pty.openpty()
  child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=slave, stdin=subprocess.DEVNULL)
  os.close(slave)
  chunks: list[bytes] = []
  def read() -> None:
    while True:
      try: data = os.read(master, 4096)
      except OSError: return  # EIO: the child closed the terminal
      if not data: return
      chunks.append(data)
  reader = threading.Thread(target=read)
  reader.start()
  out, _ = child.communicate(timeout=600)
  reader.join(timeout=60)
  os.close(master)
  return out.decode(), b"".join(chunks).decode()


def test_the_reports_progress_is_one_bar_on_a_terminal_and_sparse_lines_in_a_log(tmp_path):
  script = tmp_path / "small.py"
  script.write_text("from tinygrad import Tensor\n(Tensor.ones(4, 4).contiguous().sum(1)).realize()\n")
  argv = [sys.executable, "-m", "tgviz", "run", str(script), "--svg", "none", "--retime", "0", "-j", "0", "--out"]
  out, terminal = _output_on_a_terminal([*argv, str(tmp_path / "tty")])
  bar = [line for line in terminal.split("\r") if "report steps [" in line]
  assert len(bar) >= 2 and "report steps" not in out, (out, terminal)  # redrawn in place, on the terminal only
  assert bar[-1].rstrip().endswith("(100%)") and "#" * 30 in bar[-1] and terminal.count("report steps") == len(bar)
  logged = subprocess.run([*argv, str(tmp_path / "log")], capture_output=True, text=True, timeout=600)
  # in a log, a report written within 10 s prints no progress at all; the trace is one line, not one per kernel
  assert "\r" not in logged.stdout + logged.stderr and "report steps" not in logged.stdout, logged.stdout
  assert "global=" not in logged.stdout + out and "tgviz: traced in" in logged.stdout


def test_a_slow_reports_progress_in_a_log_is_a_line_each_10_seconds(capsys):
  """In a log, a report's progress is a line each 10 s, and its end where a line was printed: a 40 s write, 4 lines (a
  line per 10% was 10 lines in 6 s); a write within 10 s, none."""
  for seconds, said in ((40, (50, 100, 150, 200)), (9.9, ())):
    now = [0.0]
    progress = cli._progress("report steps", clock=lambda now=now: now[0])  # (capsys: stderr no terminal)
    for done in range(1, 201):
      now[0] = done * seconds / 200
      progress(done, 200)
    lines = capsys.readouterr().out.splitlines()
    assert lines == [f"  report steps: {n}/200 ({n // 2}%)" for n in said], (seconds, lines)


MATMUL = """from tinygrad import Tensor
Tensor.manual_seed(0)
a, b = Tensor.randn(32, 32).realize(), Tensor.randn(32, 32).realize()
(a @ b).realize()
(a + b).realize()
"""


def page_state(report) -> dict:
  """The state a report's page opens with (its JSON chunk)."""
  blob = re.search(r'<script type="application/octet-stream" id="tgviz-state">([^<]*)</script>', report.read_text()).group(1)
  return unchunk(blob)


@pytest.fixture(scope="module")
def what_if_run(tmp_path_factory):
  """tgviz run of a matmul and an add, with --what-if's default: the 2 slowest kernels retried for the report."""
  out = tmp_path_factory.mktemp("whatif")
  (script := out / "matmul.py").write_text(MATMUL)
  stdout = io.StringIO()
  # (all their retries made on a busy machine too: the time they may take is tests/trace/test_whatif.py's)
  with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(stdout):
    mp.setattr(whatif, "WHAT_IF_LEAST", 600.0)
    status, trace = cli.run(script, out / "report", None, 300, [], "none")
  return status, trace, stdout.getvalue(), page_state(out / "report" / "index.html")


def test_run_writes_retries_of_the_slowest_kernels_into_the_report(what_if_run):
  status, trace, printed, state = what_if_run
  assert status == 0, printed
  # the slowest by device time: a median launch (re-timed where it ran once: its one launch was a cold one) times launches
  timed = [k for k in trace.kernels if k.timing is not None]
  slowest = sorted(timed, key=lambda k: -statistics.median(k.timing.times_us) * len(k.run_times))[:2]
  retried = {name: info for name, info in state["whatif"].items() if info["retries"]}
  assert set(retried) == {k.display_name for k in slowest} and len(state["whatif"]) > 2, state["whatif"].keys()
  for name, info in retried.items():
    # each of the three retries is there, or said not to be, and why
    assert len(info["retries"]) + len(info["not_tried"]) == 3, ([r["summary"] for r in info["retries"]], info["not_tried"])
    assert all(re.match(r"(no opts|one size up|BEAM's pick \(width 2, [\d.]+ s at most\)): \w", t) for t in info["not_tried"]), info["not_tried"]
    summaries = [r["summary"] for r in info["retries"]]
    assert summaries[0].startswith(f"retry of {name} with no opts: "), summaries
    for r in info["retries"]:  # each: times, speedup, and the comparison with both kernels' code
      assert r["same"] and r["error"] is None and None not in r["times_us"], r["summary"]
      spread = rf"{TIME} – {TIME}"
      assert re.search(rf"; 5 launches each \({re.escape(whatif.BESIDE)}\): median {TIME} \(min – max {spread}\) -> {TIME} \({spread}\), "
                       rf"([\d.]+x (faster|slower) \({re.escape(APART)}\)|within noise \({re.escape(NOISE)}\))$", r["summary"])
      assert r["compare"]["pairs"][0]["sides"][0]["name"] == name.split(" #")[0] and r["compare"]["pairs"][0]["diff"]
      assert f"    {r['summary']}" in printed.splitlines()  # said in the run's output too
  summaries = [r["summary"] for info in retried.values() for r in info["retries"]]
  # (BEAM's pick is there where its short search found one: tests/trace/test_whatif.py holds it with time to search)
  assert any(re.search(r"with GROUPTOP\(0, 32\) in place of its own GROUPTOP\(0, 16\) \(one size up\): ", t)
             for t in summaries), summaries  # the matmul's GROUPTOP(0, 16) one size up


def test_the_timed_again_line_names_the_slowest_and_counts_the_rest(capsys):
  """tgviz run's line of kernels timed again named every kernel timed (15 of the GPT step's, a line of 1,000
  characters): it names the slowest it was asked for, slowest first, and counts the others (in the kernel table)."""
  from tinygrad import Tensor
  x = Tensor.randn(256).realize()
  with tgviz.capture() as trace:  # eight small kernels, each launched once: a cold first launch each
    for i in range(1, 9): (x * i + x.exp2() if i % 2 else (x * i).sqrt() + x).reshape(16, 16)[:i].contiguous().realize()
  capsys.readouterr()
  cli.retimed(trace, 2)
  line = capsys.readouterr().out.strip()
  done = [k for k in trace.kernels if k.timing is not None and k.timing.source == "re-timed"]
  assert len(done) > 2, line  # (the premise: retime timed more than the two slowest, as each cold launch dropped out)
  ranked = sorted(done, key=lambda k: (-(k.warm_total_us or 0.0), k.display_name))  # (equal times: by name)
  named = ", ".join(f"{k.display_name} {time_text(k.timing.median_us)} ({k.timing.n} runs{', not settled' if k.timing.stable is False else ''})"
                    for k in ranked[:2])
  assert re.fullmatch(rf"timed again in [\d.]+ s, {len(done)} kernels \(.*\): {re.escape(named)}, and {len(done) - 2} more", line), line


def test_what_if_0_retries_nothing(tmp_path, capsys):
  script = tmp_path / "small.py"
  script.write_text("from tinygrad import Tensor\n(Tensor.ones(4, 4).contiguous().sum(1)).realize()\n")
  assert cli.main(["run", str(script), "--out", str(tmp_path / "out"), "--svg", "none", "--what-if", "0"]) == 0
  assert all(not info["retries"] for info in page_state(tmp_path / "out" / "index.html")["whatif"].values())
  assert "what if" not in capsys.readouterr().out
