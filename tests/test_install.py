"""Installing tgviz: pyproject.toml gives ranges and constraints.txt the exact versions the scripts install; tgviz works
with every dependency at its declared minimum; installed into an existing environment, it moves none of its packages."""
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

REPO = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
RUNTIME = [Requirement(r) for r in PROJECT["dependencies"]]
TEST = [Requirement(r) for r in PROJECT["optional-dependencies"]["test"]]
# a year-old notebook environment, the kind tgviz gets installed into
OLD_STACK = ["numpy==1.26.4", "ipython==8.31.0", "ipywidgets==8.1.5", "traitlets==5.14.3", "pygments==2.18.0"]


def locked() -> dict[str, list[Requirement]]:
  """constraints.txt: package name -> its lines (one per platform or Python fork)."""
  out: dict[str, list[Requirement]] = {}
  for line in (REPO / "constraints.txt").read_text().splitlines():
    if line := line.split("#")[0].strip():
      req = Requirement(line)
      out.setdefault(canonicalize_name(req.name), []).append(req)
  return out


def fresh_env() -> dict[str, str]:
  """A shell's environment without this venv, nor the device settings importing tgviz made here."""
  return {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "OPENCL_PATH", "DEV", "OCL_ICD_VENDORS")}


def run(cmd: list, timeout: float = 600, **kwargs) -> str:
  proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout, env=fresh_env(), **kwargs)
  out = proc.stdout  # (a test run's failures, not the screenshots' lines printed after them)
  failures = out[out.find("= FAILURES ="):][:8000] if "= FAILURES =" in out else ""
  assert proc.returncode == 0, f"{' '.join(map(str, cmd))}\n{failures}\n{out[-3000:]}\n{proc.stderr[-6000:]}"
  return proc.stdout


def freeze(python: Path) -> dict[str, str]:
  lines = run([python, "-m", "pip", "freeze", "--all"]).splitlines()
  return {canonicalize_name(n): v for n, _, v in (ln.partition("==") for ln in lines) if v}


def test_lock_pins_every_dependency_within_its_range():
  lock = locked()
  for pins in lock.values():
    for pin in pins: assert [s.operator for s in pin.specifier] == ["=="], f"constraints.txt: {pin} is not an exact version"
  for req in RUNTIME + TEST:
    pins = lock.get(canonicalize_name(req.name))
    assert pins, f"{req.name} is not in constraints.txt: run bash scripts/lock.sh"
    for pin in pins:
      version = next(iter(pin.specifier)).version
      assert req.specifier.contains(version, prereleases=True), f"constraints.txt has {pin}, pyproject.toml asks {req}: run bash scripts/lock.sh"
  assert "-c constraints.txt" in (REPO / "scripts" / "install.sh").read_text()


def test_runtime_dependencies_are_ranges_without_caps():
  """Only tinygrad is exact (tgviz reads its internals); the rest are minimums, so an existing environment keeps its versions."""
  for req in RUNTIME:
    ops = {s.operator for s in req.specifier}
    assert ops == ({"=="} if req.name == "tinygrad" else {">="}), f"{req}: a minimum only, no cap or pin without a known break"


# The quick tests of the code that calls a dependency (tinygrad is pinned: the tests of what only reads tinygrad run at
# the lock's versions alone): a capture on the default device (pyopencl's ICD loader, PoCL, numpy), pyopencl's
# profiling events, graphviz-pure's layouts, the widget and the magics (anywidget, ipywidgets, traitlets, IPython,
# pygments), the report and the command line (zstandard, pygments) and the page's pictures (graphviz-pure's layouts in
# the page's data); the package's structure and the README. Left out: the page's ports of tgviz's own computations (the
# rest of test_js_parity), the report's memory and early writers, and, of those files, the tests of tgviz's own rules
# over what the others there call too (DESELECTED: big steps' shapes, the timing verdicts and launch floors, clang's
# warnings, the what-if retries in the report; 80 s of the run's CPU).
AT_MINIMUM = ["tests/bridge/test_capture_safety.py", "tests/trace/test_timing.py", "tests/draw", "tests/views/test_layout.py",
              "tests/notebook", "tests/views/test_messages.py", "tests/views/test_programmap.py", "tests/views/test_program_view.py",
              "tests/report/test_cli.py", "tests/report/test_forked.py", "tests/report/test_report_load.py",
              "tests/views/test_js_parity.py::test_folded_pictures_in_node_are_python",
              "tests/views/test_js_parity.py::test_wrapped_columns_in_node_are_python", "tests/test_structure.py", "tests/test_readme_map.py"]
DESELECTED = ["tests/views/test_layout.py::test_big_steps_lay_out_no_wider_than_four_times_their_height",
              "tests/trace/test_timing.py::test_no_kernel_reads_under_the_launch_floor",
              "tests/trace/test_timing.py::test_verdicts_say_which_limit_and_how_close",
              "tests/report/test_cli.py::test_clangs_warnings_on_a_kernel_are_not_in_the_output_of_tgviz_run",
              "tests/report/test_cli.py::test_run_writes_retries_of_the_slowest_kernels_into_the_report"]


@pytest.mark.slow
def test_quick_tests_pass_with_every_dependency_at_its_minimum(tmp_path):
  """uv's lowest-direct resolution: every direct dependency at the minimum pyproject.toml declares (their own
  dependencies at the newest that fit), then the quick tests (not slow, not browser) of the code that calls them
  (AT_MINIMUM) against it, on two workers."""
  venv = tmp_path / "lowest"
  run([sys.executable, "-m", "venv", "--without-pip", venv])
  python = venv / "bin" / "python"
  pins = [str(locked()[name][0]) for name in ("pytest", "pytest-xdist")]
  run([sys.executable, "-m", "uv", "pip", "install", "-q", "--python", python, "--resolution", "lowest-direct", "-e", REPO, *pins])
  frozen = run([sys.executable, "-m", "uv", "pip", "freeze", "--python", python]).splitlines()
  versions = {canonicalize_name(n): v for n, _, v in (ln.partition("==") for ln in frozen) if v}
  for req in RUNTIME:
    if req.marker is None or req.marker.evaluate():
      (spec,) = req.specifier
      found = versions[canonicalize_name(req.name)]
      assert Version(found) == Version(spec.version), f"lowest-direct installed {req.name} {found}, not {spec.version}"
  # Two workers (pytest-xdist), a test file each at a time. The limit is against a hang only: the whole quick subset
  # took over 15 minutes with two other CPU-bound jobs on the 2 cores
  out = run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not slow and not browser", *AT_MINIMUM,
             *(a for t in DESELECTED for a in ("--deselect", t)),
             "-n", "2", "--dist", "loadfile", "--basetemp", tmp_path / "pytest"], cwd=REPO, timeout=3600)
  assert " passed" in out and " failed" not in out


CAPTURE = """
import tgviz
from IPython.core.interactiveshell import InteractiveShell
from tinygrad import Tensor
with tgviz.capture() as trace:
  x = Tensor.arange(9).reshape(1, 1, 3, 3).float().realize()
  assert x.conv2d(Tensor.ones(1, 1, 2, 2)).numpy().tolist() == [[[[8.0, 12.0], [20.0, 24.0]]]]
conv = next(k for k in trace.kernels if k.name == "r_2_2_2_2")
assert conv.device == "CL" and "__kernel" in conv.source, trace.summary()  # OpenCL on PoCL, from pip
ip = InteractiveShell.instance()
ip.run_line_magic("load_ext", "tgviz")
result = ip.run_cell("%%tgviz -o traced\\nfrom tinygrad import Tensor\\n(Tensor.ones(4, 4).contiguous() * 2).sum(1).realize()")
assert result.success and ip.user_ns["traced"].kernels, result
print("kernels:", [k.name for k in trace.kernels], [k.name for k in ip.user_ns["traced"].kernels])
"""


@pytest.mark.slow
def test_install_into_an_old_stack_moves_nothing(tmp_path):
  """pip install tgviz into a venv with a year-old numpy/IPython/ipywidgets/traitlets/pygments: every package there keeps
  its version, and a capture (Python API and %%tgviz, widget included) works on it."""
  venv = tmp_path / "old"
  run([sys.executable, "-m", "venv", venv])
  python = venv / "bin" / "python"
  run([python, "-m", "pip", "install", "-q", *OLD_STACK])
  before = freeze(python)
  run([python, "-m", "pip", "install", "-q", REPO])
  after = freeze(python)
  moved = {name: (version, after.get(name)) for name, version in before.items() if after.get(name) != version}
  assert not moved, f"installing tgviz moved {moved}"
  assert after["tinygrad"] == "0.14.0" and "tgviz" in run([python, "-m", "pip", "list"])
  out = run([python, "-c", CAPTURE], cwd=tmp_path, timeout=300)
  assert "kernels:" in out
