"""The frontend's files (``js/``): shipped in the wheel under ``tgviz/static``, or ``js/`` in a source checkout."""
from __future__ import annotations

from pathlib import Path


def static_file(name: str) -> Path:
  """The path of a frontend file, e.g. "widget.js"."""
  here = Path(__file__).resolve().parent
  return here / "static" / name if (here / "static" / name).exists() else here.parent / "js" / name
