"""One rule for durations: tgviz.trace.units.time_text (Python's texts) and js/units.js's fmtTime (the pages) write the
same duration the same way, 3 significant figures in the unit that reads best, ties and unit changes included."""
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tgviz.trace.retime import Timing
from tgviz.trace.units import time_text

UNITS_JS = Path(__file__).resolve().parents[2] / "js" / "units.js"
VALUES = [0.0, 0.0125, 0.5, 0.95, 0.9995, 1.0, 1.125, 2.675, 7.2, 7.23, 9.638, 9.995, 99.95, 123.4, 999.5, 999.7, 1234.5,
          12345.6, 564060.5, 999999.0, 1.5e7, 2.5e9, -3.14159]


def test_time_text_writes_3_significant_figures():
  assert [time_text(v) for v in (7.23, 9.638, 7.2, 123.4, 999.7, 1234.5, 0.5, 0.0, None)] == \
         ["7.23 µs", "9.64 µs", "7.20 µs", "123 µs", "1.00 ms", "1.23 ms", "500 ns", "0 µs", "–"]


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node (scripts/install.sh test)")
def test_the_page_writes_a_duration_as_python_does():
  script = f"import {{ fmtTime }} from {json.dumps(UNITS_JS.as_uri())}; console.log(JSON.stringify({json.dumps(VALUES)}.map(fmtTime)));"
  page = subprocess.run(["node", "--input-type=module", "-e", script], capture_output=True, text=True, check=True).stdout
  assert json.loads(page) == [time_text(v) for v in VALUES]


def test_a_kernels_timing_writes_its_times_by_the_rule():
  t = Timing((9.638, 7.23, 12.0, 8.5), "re-timed")
  assert t.text().startswith(f"median {time_text(t.median_us)} (min 7.23 µs, max 12.0 µs; 4 runs, re-timed")
