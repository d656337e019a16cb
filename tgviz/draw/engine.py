"""The layout engine: graphviz's ``dot`` in a child process, with a time budget, cancellable.

By default the ``graphviz-pure`` executable from PyPI, or a system ``dot`` when asked for (``TGVIZ_ENGINE=dot`` or
:func:`set_engine`). Owns only running the engine on DOT text; what is laid out is :mod:`tgviz.draw.dot`'s. A layout
run as a request of a :class:`tgviz.work.threads.Worker` is cancelled with it (its process killed). What dot gave is
kept, by its text: the last ones in memory, and on disk from run to run (:mod:`tgviz.draw.layout_store`).
"""
from __future__ import annotations

import hashlib
import os
import shutil
import sys
import threading
from collections import OrderedDict

from tgviz.draw.layout_store import LayoutStore, default_path
from tgviz.work.cancel import Cancelled, run_child

# seconds a layout may take before a smaller view is drawn (TGVIZ_LAYOUT_TIMEOUT sets it: the tests, which are about
# what is drawn, not how fast, give it minutes, so that a busy machine does not turn a picture into a partial one)
DEFAULT_TIMEOUT = float(os.environ.get("TGVIZ_LAYOUT_TIMEOUT", "10"))


class LayoutError(RuntimeError):
  """The layout engine is missing or failed."""


class LayoutCancelled(LayoutError, Cancelled):
  """The layout was cancelled: the request it was part of was superseded."""


_engine: list[str] | None = None
_engine_id = b""  # what tells this engine's layouts from another's on disk: its path, size and date


def set_engine(name: str | None) -> list[str]:
  """Pick the layout engine: "graphviz-pure" (default, from PyPI), "dot" (a system graphviz), or a path."""
  global _engine, _engine_id
  name = name or os.environ.get("TGVIZ_ENGINE") or "graphviz-pure"
  exe = shutil.which(name) or shutil.which(name, path=os.path.dirname(sys.executable))
  if exe is None:
    raise LayoutError(f"graph layout engine {name!r} not found. Install the embedded one with `pip install graphviz-pure`, "
                      "or Debian's dot with `apt-get install graphviz` and set TGVIZ_ENGINE=dot")
  real = os.path.realpath(exe)
  st = os.stat(real)
  _engine, _engine_id = [exe, "-Kdot"], f"{real}\0{st.st_size}\0{st.st_mtime_ns}".encode()
  return _engine


def engine() -> list[str]:
  """The engine command line, resolved once."""
  return _engine if _engine is not None else set_engine(None)



# the last layouts made, by their DOT text and format: dot is deterministic, and the same text comes again often (a
# kernel's landmarks where no rewrite changed its graph in between, kernels of the same AST: a third of a GPT step's)
_made: OrderedDict[bytes, str] = OrderedDict()  # (by the digest of the format, the engine and the text)
_MADE = 256
_made_lock = threading.Lock()
_kept = LayoutStore(default_path())  # (TGVIZ_LAYOUT_CACHE is read once, at import)


def run_dot(dot: str, fmt: str = "plain", timeout: float | None = DEFAULT_TIMEOUT) -> str:
  """Run the layout engine on DOT text in a child process (or give what it gave for this text before, in this process
  or kept on disk); raises TimeoutError past timeout (the process is killed), LayoutCancelled when the request it runs
  in is cancelled, and LayoutError when the engine fails or crashes."""
  engine()  # (its _engine_id)
  key = hashlib.sha256(b"\0".join((fmt.encode(), _engine_id, dot.encode()))).digest()  # (in memory and on disk)
  with _made_lock:
    if (out := _made.get(key)) is not None:
      _made.move_to_end(key)
      return out
  if (out := _kept.get(key)) is None:
    out = _run(dot, fmt, timeout)
    _kept.put(key, out)
  with _made_lock:
    _made[key] = out
    if len(_made) > _MADE: _made.popitem(last=False)
  return out


def _run(dot: str, fmt: str, timeout: float | None) -> str:
  try: code, out, err = run_child([*engine(), f"-T{fmt}"], dot, timeout)
  except TimeoutError: raise TimeoutError(f"layout took longer than {timeout:.0f} s") from None
  except Cancelled: raise LayoutCancelled("layout cancelled") from None
  if code < 0:
    raise LayoutError(f"the graph layout engine {engine()[0]} crashed (signal {-code}). {err.strip()[:300]} "
                      "Try a smaller view, or another engine (TGVIZ_ENGINE=dot with Debian's graphviz).")
  if code != 0: raise LayoutError(f"graph layout failed: {err.strip()[:500]}")
  return out
