"""One rule for durations: tgviz.trace.units.time_text (Python's texts) and js/units.js's fmtTime (the pages) write the
same duration the same way, 3 significant figures in the unit that reads best, ties and unit changes included; one
rule for byte counts (bytes_text / fmtSize: binary units only, never KB), for counts with their nouns (plural) and for a
buffer's size in elements (count_text / fmtCount: never written as a shape is, "float[...]")."""
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tgviz.trace.retime import Timing
from tgviz.trace.units import bytes_text, copy_name, count_text, percent_text, plural, time_text

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


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node (scripts/install.sh test)")
def test_the_page_writes_a_messages_time_as_python_writes_the_time():
  """A message carries a time rounded to the ns (round(us, 3)): the page, writing that, writes what Python's texts write
  of the time itself, even where the rounding lands on a tie (1.1249 µs reaches the page as 1.125)."""
  times = [1.1249, 1.37449, 6.0625, 12.2499, 112.4996, 0.06249, 5.6249, 987.6249, *VALUES]
  sent = json.dumps([round(v, 3) for v in times])
  script = f"import {{ fmtTime }} from {json.dumps(UNITS_JS.as_uri())}; console.log(JSON.stringify({sent}.map(fmtTime)));"
  page = subprocess.run(["node", "--input-type=module", "-e", script], capture_output=True, text=True, check=True).stdout
  assert json.loads(page) == [time_text(v) for v in times]


def test_a_kernels_timing_writes_its_times_by_the_rule():
  t = Timing((9.638, 7.23, 12.0, 8.5), "re-timed")
  assert t.text().startswith(f"median {time_text(t.median_us)} (min 7.23 µs, max 12.0 µs; 4 runs, re-timed")


BYTES = [0, 96, 1023, 1024, 1152, 10234, 25088, 25120, 102348, 278784, 1048044, 1048100, 1073184, 2 ** 30 - 1, 3 * 2 ** 30 + 5,
         2 ** 41]


def node(script: str) -> object:
  return json.loads(subprocess.run(["node", "--input-type=module", "-e", script], capture_output=True, text=True, check=True).stdout)


def test_bytes_are_written_in_binary_units_only():
  assert [bytes_text(n) for n in (96, 1023, 25088, 25120, 278784, 1048044, 1048100, 1073184)] == \
         ["96 B", "1,023 B", "24.5 KiB", "24.5 KiB", "272 KiB", "1023 KiB", "1.00 MiB", "1.02 MiB"]
  assert copy_name("copy   24.50 KB,  CL <- NPY", 25088) == "copy 24.5 KiB CL <- NPY"  # tinygrad's KB (of 1024 B) retold
  assert copy_name("copy   24.50 KB,  CL <- NPY") == "copy 24.5 KiB CL <- NPY" and copy_name("copy 16 B, NV <- CPU") == "copy 16 B NV <- CPU"
  assert copy_name("copy    1.50 MB, CL <- NPY") == "copy 1.50 MiB CL <- NPY" and copy_name("r_4", 16) == "r_4"


def test_counts_agree_with_their_nouns_and_sizes_are_not_shapes():
  assert [plural(1, "node"), plural(2, "node"), plural(1, "copy", "copies"), plural(3, "copy", "copies"), plural(0, "node")] == \
         ["1 node", "2 nodes", "1 copy", "3 copies", "0 nodes"]
  assert plural(69696, "float") == "69,696 floats" and count_text("float", 69696) == "float × 69,696"


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node (scripts/install.sh test)")
def test_the_page_writes_bytes_and_counts_as_python_does():
  script = (f"import {{ fmtSize, fmtBytes, plural, fmtCount }} from {json.dumps(UNITS_JS.as_uri())}; console.log(JSON.stringify("
            f"[{json.dumps(BYTES)}.map(fmtSize), {json.dumps(BYTES)}.map(fmtBytes), [0, 1, 2, 1234].map(n => [plural(n, 'node'), "
            f"plural(n, 'copy', 'copies'), fmtCount('half', n)])]));")
  sizes, full, counts = node(script)  # type: ignore[misc]
  assert sizes == [bytes_text(n) for n in BYTES]
  assert full == [bytes_text(n) if n < 1024 else f"{bytes_text(n)} ({n:,} B)" for n in BYTES]
  assert counts == [[plural(n, "node"), plural(n, "copy", "copies"), count_text("half", n)] for n in (0, 1, 2, 1234)]


def test_a_percentage_keeps_two_significant_figures():
  # a latency-bound kernel reaches a tiny share of its roof: "0.0%" said nothing ("0.0042%" does), never an exponent
  assert [percent_text(f) for f in (0.0, 4e-7, 4.2e-5, 0.009, 0.3, 1.5)] == ["0%", "<0.0001%", "0.0042%", "0.90%", "30%", "150%"]


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node (scripts/install.sh test)")
def test_a_spread_wraps_between_whole_figures():
  """The kernel table's spread goes on more lines between pieces, each figure whole with its unit: a range of one unit
  stays one piece; one of two units may break after its dash (whole, "2.33 µs – 3.11 ms," alone made the table wider
  than the widget)."""
  table_js = UNITS_JS.parent / "table.js"
  script = (f"import {{ fmtRange }} from {json.dumps(UNITS_JS.as_uri())}; import {{ wrapPieces }} from {json.dumps(table_js.as_uri())}; "
            "console.log(JSON.stringify([[2.33, 3110], [9.23, 30.6], [0.908, 2.88]].map(([a, b]) => wrapPieces(`${fmtRange(a, b)}, 3 launches`))"
            ".concat([wrapPieces('latency 21×, 1/2 units')])));")
  assert node(script) == [["2.33 µs –", "3.11 ms,", "3 launches"], ["9.23–30.6 µs,", "3 launches"], ["908 ns –", "2.88 µs,", "3 launches"],
                          ["latency", "21×,", "1/2 units"]]
