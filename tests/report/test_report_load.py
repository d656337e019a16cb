"""The HTML report's page computes tinygrad's node keys (sha256 of each row) only for the graphs it shows: a segment
holds the rows of up to 32 steps, and keying them all cost a big report's first graph over a second
(benchmarks/report_speed.py). tests/report/report_load.mjs runs js/port/replay.js and js/report.js in node on the report's data:
the keys computed lazily are the keys unpacked eagerly (which tests/views/test_js_parity.py holds equal to Python's), and
opening one step leaves the other steps' rows unkeyed. Likewise it decodes only the pieces of the tables' contents its
segment needs (an LSTM's contents are 4.9 MB of JSON, its first step's a few kB)."""
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tgviz.report.contents import unchunk
from tgviz.report.writer import Contents, Writer, pattern_rows

NODE = shutil.which("node")
DRIVER = Path(__file__).with_name("report_load.mjs")


@pytest.mark.skipif(NODE is None, reason="node is missing: scripts/install.sh test installs Debian's nodejs")
def test_page_keys_only_the_graphs_it_shows(cnn_trace, tmp_path):
  w, contents = Writer(cnn_trace), Contents(piece_bytes=4096)  # small pieces: the CNN's contents are some 100 kB
  chunks = dict(w.groups()) | {"patterns": pattern_rows(w.patterns), "lacking": {}}
  for i in range(len(w.segments)):
    chunk, own, short = w.segment(i)
    chunks[f"t-{i}"] = unchunk(re.sub(r"<[^>]*>", "", chunk))
    contents.add(i, own)
    chunks["lacking"].update(short)
  chunks.update(contents.chunks())
  path = tmp_path / "input.json"
  path.write_text(json.dumps({"state": w.state(), "chunks": chunks}))
  proc = subprocess.run([NODE, str(DRIVER), str(path)], capture_output=True, text=True, timeout=300)
  assert proc.returncode == 0, proc.stderr
  out = json.loads(proc.stdout)
  assert len(out["tables"]) == len(w.segments)
  for name, t in out["tables"].items():
    assert t["contents"] == [contents.items[c] for c in contents.maps[name[2:]]], name  # put together from the pieces
    assert t["lazy"] == t["eager"], name
  assert out["shownKeyed"] and 0 < out["unkeyed"] < out["rows"], out  # the first step's graphs keyed, not its segment
  pieces = [n for n in chunks if n.startswith("c-")]
  opened = [n for n in out["loaded"] if n.startswith("c-")]
  assert len(pieces) > 3 and 0 < len(opened) < len(pieces) / 2, (opened, pieces)  # the first step's pieces, not all
