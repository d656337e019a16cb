import atexit
import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# the tests are about what is drawn, not how fast: a layout past the user's 10 s budget (a busy machine) would draw a
# partial view instead; tests of that fallback pass their own timeout
os.environ.setdefault("TGVIZ_LAYOUT_TIMEOUT", "600")
# layouts kept for this run of the suite only (and its children: CLI runs, Jupyter kernels), not the user's file
if "TGVIZ_LAYOUT_CACHE" not in os.environ:
  atexit.register(shutil.rmtree, kept := tempfile.mkdtemp(prefix="tgviz-test-layouts-"), ignore_errors=True)
  os.environ["TGVIZ_LAYOUT_CACHE"] = str(Path(kept) / "layouts")

import comm
import pytest
from IPython.testing.globalipapp import get_ipython

sys.path.insert(0, str(Path(__file__).resolve().parent))
import workloads

import tgviz


@pytest.fixture(scope="session")
def tutorial_trace() -> tgviz.Trace:
  with tgviz.capture() as trace: workloads.tutorial()
  return trace


@pytest.fixture(scope="session")
def cpu_trace() -> tgviz.Trace:
  """The tutorial on tinygrad's CPU device (clang), whose binaries objdump disassembles."""
  with tgviz.capture(device="CPU") as trace: workloads.tutorial()
  return trace


@pytest.fixture(scope="session")
def cnn_trace() -> tgviz.Trace:
  with tgviz.capture() as trace: workloads.cnn()
  return trace


@pytest.fixture(scope="session")
def mnist_trace() -> tgviz.Trace:
  """The MNIST training step (examples/scripts/mnist_train_step.py): 67 kernels, some 5,000 steps."""
  with tgviz.capture() as trace: workloads.example("mnist_train_step.py")
  return trace


@pytest.fixture(scope="session")
def attention_trace() -> tgviz.Trace:
  """The attention block, forward and backward: its matmul kernels' expander steps index with vectors of constants."""
  with tgviz.capture() as trace: workloads.attention()
  return trace


@pytest.fixture(scope="session")
def attention_cell_trace() -> tgviz.Trace:
  """A notebook cell's attention (workloads.attention_cell): its schedule's calls copies and kernels, its result read back."""
  with tgviz.capture() as trace: workloads.attention_cell()
  return trace


@pytest.fixture(scope="session")
def gpt_run(tmp_path_factory) -> tuple[Path, str]:
  """`tgviz run --save` on the GPT training step (its slowest kernels re-timed, its devices' peaks measured), no SVGs: the
  report's folder (its trace saved there as trace.tgviz) and what the command printed. Made once for the whole run, its
  test processes (pytest-xdist's workers) taking turns at a lock: the first to ask makes it, the others read it (a
  minute or two of a CI's 2 cores each time)."""
  root = tmp_path_factory.getbasetemp()
  if "PYTEST_XDIST_WORKER" in os.environ: root = root.parent  # the workers' base folders are in this run's own
  out = root / "gpt-run"
  with open(root / "gpt-run.lock", "w") as lock:
    fcntl.flock(lock, fcntl.LOCK_EX)
    if not (out / "stdout.txt").exists():
      script = Path(__file__).resolve().parents[1] / "benchmarks" / "models" / "gpt_train_step.py"
      proc = subprocess.run([sys.executable, "-m", "tgviz", "run", str(script), "--out", str(out), "--svg", "none", "--save"],
                            capture_output=True, text=True, timeout=1800)
      assert proc.returncode == 0, proc.stderr
      (out / "stdout.txt").write_text(proc.stdout)
  return out, (out / "stdout.txt").read_text()


class RecordingComm:
  """Stands in for the kernel's comm: records every message the widget sends (ipywidgets' own test approach)."""
  comm_id, kernel = "tgviz-test", "Truthy"
  def __init__(self, *args, **kwargs): self.messages = []
  def open(self, *args, **kwargs): pass
  def on_msg(self, callback): self.callback = callback
  def send(self, data=None, metadata=None, buffers=None): self.messages.append(data)
  def close(self, *args, **kwargs): pass
  def custom(self): return [m["content"] for m in self.messages if m and m.get("method") == "custom"]
  def pictures(self):
    """The pictures sent, in order: as messages, and a whole step's as the kept picture (the trait's updates)."""
    return [m["content"] if m["method"] == "custom" else m["state"]["kept_picture"] for m in self.messages
            if m and ((m.get("method") == "custom" and m["content"].get("type") == "picture") or
                      (m.get("method") == "update" and m["state"].get("kept_picture", {}).get("svg")))]


@pytest.fixture
def recording_comm(monkeypatch):
  monkeypatch.setattr(comm, "create_comm", lambda **kwargs: RecordingComm())
  monkeypatch.setattr(comm, "get_comm_manager", lambda **kwargs: {})


@pytest.fixture(scope="session")
def ip():
  """IPython's test shell (one per process) with tgviz loaded."""
  shell = get_ipython()
  shell.run_line_magic("load_ext", "tgviz")
  yield shell
  shell.run_line_magic("unload_ext", "tgviz")


def pytest_collection_modifyitems(items) -> None:
  """Everything under tests/browser/ drives a real browser."""
  for item in items:
    if "browser" in item.path.parts: item.add_marker(pytest.mark.browser)


def pytest_terminal_summary(terminalreporter) -> None:
  """Say where the browser tests left their screenshots (CI artifacts)."""
  from browser.harness import ARTIFACTS
  shots = sorted(ARTIFACTS.glob("*.png")) if ARTIFACTS.is_dir() else []
  for shot in shots: terminalreporter.write_line(f"tgviz screenshot: {shot}")
