"""The README's main job from a clean checkout: its install part on a fresh virtual environment, then `tgviz run`."""
import json
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def test_readme_starts_with_the_two_commands():
  lines = (REPO / "README.md").read_text().splitlines()
  block = lines[lines.index("```bash") + 1:lines.index("```bash") + 3]
  assert [ln.split("#")[0].strip() for ln in block] == ["bash scripts/report.sh", "bash scripts/test.sh"]
  assert "bash scripts/test.sh" in (REPO / ".ci" / "run").read_text()
  assert "scripts/install.sh" in (REPO / "scripts" / "report.sh").read_text()
  assert "tgviz run examples/scripts/*.py --out tgviz-report" in (REPO / "scripts" / "report.sh").read_text()


@pytest.mark.slow
@pytest.mark.skipif(not (REPO / ".git").exists(), reason="needs the git checkout to clone")
def test_clean_checkout_installs_and_writes_a_report(tmp_path):
  clone = tmp_path / "tgviz"
  subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
  # a fresh shell: not this venv, nor the device settings importing tgviz made here (OPENCL_PATH points into this venv)
  env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "OPENCL_PATH", "DEV", "OCL_ICD_VENDORS")}
  subprocess.run(["bash", "scripts/install.sh"], cwd=clone, env=env, check=True, timeout=900)
  # the settings default that saves widget state with notebooks (a saved tgviz output reopens as a picture)
  lab_default = json.loads((clone / ".venv" / "share" / "jupyter" / "lab" / "settings" / "overrides.d" / "tgviz.json").read_text())
  assert lab_default["@jupyter-widgets/jupyterlab-manager:plugin"]["saveState"] is True
  proc = subprocess.run([".venv/bin/tgviz", "run", "examples/scripts/tutorial_conv2d.py", "examples/scripts/tutorial_arange.py",
                         "--out", "tgviz-report"], cwd=clone, env=env, capture_output=True, text=True,
                        timeout=900)
  assert proc.returncode == 0, proc.stdout + proc.stderr
  report = clone / "tgviz-report"
  assert f"all reports: {(report / 'index.html').resolve()}" in proc.stdout
  assert "tutorial_conv2d/index.html" in (report / "index.html").read_text()
  assert (report / "tutorial_conv2d" / "index.html").stat().st_size > 10_000
  assert list((report / "tutorial_arange" / "svg").glob("*.svg"))
