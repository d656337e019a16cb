"""README's "Where is what" (near the top, after the two commands) stays true: every Python name it gives exists on
tgviz's classes, every command and option is the CLI's, every key and control it names is the widget's, every link
goes to a heading and every path exists. (tests/browser/test_readme_map_browser.py: the controls on screen.)"""
import re
import subprocess
import sys
from pathlib import Path

import tgviz

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text()
JS = "\n".join(p.read_text() for p in sorted((REPO / "js").glob("*.js")))
OWNERS = {"trace": tgviz.Trace, "kernel": tgviz.Kernel, "step": tgviz.Step, "tgviz": tgviz}


def section() -> str:
  start = README.index("\n## Where is what\n")
  return README[start:README.index("\n## ", start + 1)]


def test_it_is_near_the_top_after_the_two_commands():
  assert README.index("bash scripts/test.sh") < README.index("## Where is what") < README.index("## Fresh machine")
  rows = [ln for ln in section().splitlines() if ln.startswith("| ") and not ln.startswith("| ---")]
  assert len(rows) >= 12 and len(section().splitlines()) < 30  # a map, short


def test_every_python_name_exists():
  names = re.findall(r"`(?:with )?(trace|kernel|step|tgviz)\.(\w+)", section())
  assert len(names) >= 15
  missing = [f"{o}.{n}" for o, n in names if not hasattr(OWNERS[o], n)]
  assert not missing, missing


def test_every_link_goes_to_a_heading():
  def slug(h: str) -> str: return re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
  headings = {slug(h) for h in re.findall(r"^#+ (.+)$", README, re.M)}
  links = re.findall(r"\]\(#([^)]+)\)", section())
  assert len(links) >= 7 and not [a for a in links if a not in headings], (links, headings)


def test_every_command_and_option_is_the_clis():
  for cmd in sorted(set(re.findall(r"`tgviz (run|open|compare)\b", section()))):
    out = subprocess.run([sys.executable, "-m", "tgviz", cmd, "--help"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    if cmd == "run": assert "--svg {landmarks,all,none}" in out.stdout
  assert "| `--compare NAME` |" in README and "| `-o NAME`, `--out NAME` |" in README  # %%tgviz -o b --compare a


def test_every_key_and_control_is_the_widgets():
  keys = re.search(r"f: \(\) => .*?, 1: \(\) => onView\(view\.oneToOne\), z: \(\) => onView\(view\.toChange\), r: toggleRaw, m: .*?\"/\": ", JS)
  assert keys and "Home: live(" in JS and "End: live(" in JS and "ArrowLeft" in JS
  for label in ("kernel table", "timeline · memory · roofline", "what if…", "Export SVG", '"code", "uops", "asm"', "launches", "whole run"):
    assert label in JS, label
  for path in ("examples/01_conv2d.ipynb", "examples/06_what_if.ipynb", "examples/scripts", "benchmarks/timeline_speed.py"):
    assert (REPO / path).exists(), path
