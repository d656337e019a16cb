"""The device's peaks, measured once per cache: processes that share it show the same figures."""
import json
import subprocess
import sys

import pytest

PEAKS = """
import json, sys
from tgviz.bridge.peaks import device_peaks
got, why = device_peaks("CL", sys.argv[1])
print(json.dumps({"gflops": got["gflops"], "gbs": got["gbs"], "cached": got["cached"]}))
"""


@pytest.mark.slow
def test_two_processes_measuring_at_once_cache_and_show_one_figure(tmp_path):
  """A report and its early copy (tgviz run), or two notebooks, may ask for a device's peaks at once on an empty cache:
  one measures, the other waits for it and shows the same roofs (each measuring would give each figures of its own)."""
  runs = [subprocess.Popen([sys.executable, "-c", PEAKS, str(tmp_path)], stdout=subprocess.PIPE, text=True) for _ in range(2)]
  got = [json.loads(p.communicate(timeout=600)[0]) for p in runs]
  assert all(p.returncode == 0 for p in runs)
  assert (got[0]["gflops"], got[0]["gbs"]) == (got[1]["gflops"], got[1]["gbs"]), got
  assert sorted(g["cached"] for g in got) == [False, True], got  # measured once
  assert json.loads((tmp_path / "device_peaks.json").read_text())  # and cached
