"""Every example runs: notebooks headlessly through nbclient, scripts through `tgviz run`; the kernels are the truth."""
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

pytestmark = pytest.mark.slow

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
WIDGET = "application/vnd.jupyter.widget-view+json"

# what each notebook's widgets say, as their text fallbacks: a trace's kernels, a comparison's paired and unpaired kernels
NOTEBOOKS = {
  "01_conv2d.ipynb": ["kernel E_4 ", "kernel r_2_2_2_2 "],
  "02_conv2d_groups_stride_dilation.ipynb": ["kernel r_2_2_4_4_2_2_2 ", "kernel r_2_2_4_2_2 ", "kernel r_3_3_4_2_2 ", "kernel r_6_6_4_2_2 "],
  "03_winograd_and_image.ipynb": ["kernel r_4_4_3_3 ", "E_6_3_2 ~ E_6_3_2  same AST, same code", "only in general (1): r_4_4_3_3",
                                  "only in winograd (3): E_6_6 #1, E_6_6 #2, E_4_4",
                                  "conv2d (line 4 ↔ 3): 1 kernel ↔ 3 kernels: r_4_4_3_3 ↔ E_6_6 #1, E_6_6 #2, E_4_4",
                                  "E_6_3_2 ~ E_6_2_3  same AST, code differs",
                                  "only in image (3): E_3_3_4_4, E_2_2_3_3_4, r_4_4_3_12"],
  "04_arange.ipynb": ["kernel E_3 "],
  "05_arange_indexing_vs_data.ipynb": ["kernel r_10 ", "r_10 ~ r_10  same AST, same code", "only in as_data (1): E_10",
                                       "r_10 ~ r_10  same name, code differs"],
  "06_what_if.ipynb": ["kernel r_2_2_2_2 ", "r_2_2_2_2 ~ r_2_2_2_2  paired as given", "kernel r_2_8_16_4_4_16_4 ",
                       "r_2_8_16_4_4_16_4 ~ r_2_2_8_8_4_4_64  paired as given, code differs"],
}
SCRIPTS = {
  "tutorial_conv2d.py": ["r_2_2_2_2"],
  "tutorial_arange.py": ["E_3"],
  "conv2d_variants.py": ["r_2_2_4_4_2_2_2", "r_2_2_4_2_2", "r_3_3_4_2_2", "r_6_6_4_2_2"],
  "conv2d_winograd_image.py": ["r_4_4_3_3", "E_6_6", "E_4_4"],
  "conv2d_3x3.py": ["E_6_3_2", "r_4_4_3_3"],
  "arange_for_indexing.py": ["r_10"],
  "arange_as_data.py": ["E_10", "r_10"],
  # real models: a training step's convolutions, backward and Adam update; attention's matmuls forward and backward
  "mnist_train_step.py": ["r_11_11_2_4_4_4_8_3_3", "r_4_5_5_32_2_2", "r_8_10"],
  "transformer_block.py": ["r_4_16_16_16", "r_16_64_16_16", "r_4_2_8_16_3_16_16_16"],
  # its own captures: the conv's and the matmul's kernels retried with other opts, then BEAM=2 (it asserts the rest)
  "what_if.py": ["r_2_2_2_2", "r_2_8_16_4_4_16_4"],
}


def test_every_example_is_listed():
  assert {p.name for p in EXAMPLES.glob("*.ipynb")} == set(NOTEBOOKS)
  assert {p.name for p in (EXAMPLES / "scripts").glob("*.py")} == set(SCRIPTS)


@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_notebook_runs(name, tmp_path):
  nb = nbformat.read(EXAMPLES / name, as_version=4)
  NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
  widgets = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if WIDGET in o.get("data", {})]
  assert widgets, "a %%tgviz cell shows the widget"
  summaries = "\n".join(o["data"]["text/plain"] for o in widgets)
  for text in NOTEBOOKS[name]: assert text in summaries, (text, summaries)
  assert not [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_script_report(name, tmp_path):
  proc = subprocess.run([sys.executable, "-m", "tgviz", "run", str(EXAMPLES / "scripts" / name), "--out", str(tmp_path), "--save"],
                        capture_output=True, text=True, timeout=900)
  assert proc.returncode == 0, proc.stdout + proc.stderr
  assert not [ln for ln in proc.stdout.splitlines() if ln.startswith("  kernel ")]  # the run's output: no line per kernel
  # the saved trace opens in a fresh process, through the unpickler that runs nothing from the file, with the run's
  # counts, and holds the kernels the script makes
  counts = next(ln for ln in proc.stdout.splitlines() if ln.startswith("tgviz: traced in ")).split(": ", 2)[2]
  opened = subprocess.run([sys.executable, "-c", "import sys, tgviz; print(tgviz.load(sys.argv[1]).summary())", str(tmp_path / "trace.tgviz")],
                          capture_output=True, text=True, timeout=300)
  assert opened.returncode == 0, opened.stderr
  assert opened.stdout.splitlines()[0] == counts, (opened.stdout, counts)
  # (what_if.py makes its kernels in captures of its own, and prints them: "kernel r_2_2_2_2 opts by heuristic")
  for kernel in SCRIPTS[name]: assert f"kernel {kernel} " in opened.stdout + proc.stdout, (kernel, opened.stdout, proc.stdout)
  assert (tmp_path / "index.html").stat().st_size > 10_000
  svgs = list((tmp_path / "svg").glob("*.svg"))
  assert svgs
  for p in svgs[:: max(1, len(svgs) // 10)]: ET.parse(p)


def test_failing_script_still_writes_report(tmp_path):
  script = tmp_path / "fails.py"
  script.write_text("from tinygrad import Tensor\n(Tensor.ones(4).contiguous() * 3).realize()\nraise RuntimeError('script broke')\n")
  proc = subprocess.run([sys.executable, "-m", "tgviz", "run", str(script), "--out", str(tmp_path / "out")],
                        capture_output=True, text=True, timeout=600)
  assert proc.returncode == 1
  assert "RuntimeError: script broke" in proc.stderr and "Traceback" in proc.stderr
  assert (tmp_path / "out" / "index.html").exists() and "stopped by RuntimeError" in proc.stdout
