"""tinygrad's version and the process environment tgviz runs it in.

Owns: refusing an unsupported tinygrad, the default OpenCL-on-PoCL device (set up before tinygrad is imported),
keeping tinygrad's exit hook from writing files or starting a server, restoring the environment on unload, and
tinygrad Context settings given by name. Imported first by the rest of the bridge, which is why it must not import
tinygrad before the version check and the device set-up ran; it knows nothing of captures or traces.
"""
from __future__ import annotations

import atexit
import difflib
import glob
import importlib.metadata
import os
import shutil
from typing import Any

SUPPORTED_TINYGRAD = "0.14.0"


class UnsupportedTinygrad(ImportError):
  """The installed tinygrad is not the version tgviz reads the internals of."""


def _check_version() -> None:
  try: found = importlib.metadata.version("tinygrad")
  except importlib.metadata.PackageNotFoundError:
    raise UnsupportedTinygrad(f"tinygrad is not installed; tgviz needs tinygrad=={SUPPORTED_TINYGRAD} "
                              f"(pip install tinygrad=={SUPPORTED_TINYGRAD})") from None
  if found != SUPPORTED_TINYGRAD:
    raise UnsupportedTinygrad(f"tgviz supports tinygrad {SUPPORTED_TINYGRAD} only, found tinygrad {found}: "
                              f"pip install tinygrad=={SUPPORTED_TINYGRAD}")


_ENV_BEFORE = {k: os.environ.get(k) for k in ("OPENCL_PATH", "DEV")}


def _setup_default_device() -> None:
  """Make tinygrad's CL device run on PoCL from pip: point OPENCL_PATH at pyopencl's bundled ICD loader and
  load pyopencl first (without that early import the ICD loader segfaults). DEV defaults to CL."""
  try:
    import pyopencl  # before tinygrad opens the CL device
  except ImportError: return
  if "OPENCL_PATH" not in os.environ:
    libs = sorted(glob.glob(os.path.join(os.path.dirname(pyopencl.__file__), ".libs", "libOpenCL*.so*")))
    if libs: os.environ["OPENCL_PATH"] = libs[0]
  if not os.environ.get("DEV"): os.environ["DEV"] = "CL"


_check_version()
_setup_default_device()

from tinygrad.helpers import DEV, Context  # noqa: E402
from tinygrad.uop import ops  # noqa: E402

if not DEV.device and os.environ.get("DEV"): DEV.value = os.environ["DEV"]  # tinygrad was imported before tgviz

# tinygrad's exit hooks write rewrites.pkl and profile.pkl and may start the VIZ server: tgviz never lets them run.
if hasattr(ops, "print_match_stats"): atexit.unregister(ops.print_match_stats)
from tinygrad import device as _device  # noqa: E402

if hasattr(_device, "finalize_profile"): atexit.unregister(_device.finalize_profile)


def restore_environment() -> None:
  """Undo the device defaults tgviz set at import (OPENCL_PATH, DEV)."""
  for k, v in _ENV_BEFORE.items():
    if v is None: os.environ.pop(k, None)
    else: os.environ[k] = v
  DEV.value = _ENV_BEFORE["DEV"] or ""


def clang_missing() -> str | None:
  """A message when tinygrad's CPU device has no C compiler, else None."""
  if shutil.which("clang"): return None
  return ("clang was not found: tinygrad's CPU device compiles with clang, and tinygrad uses that device for some tensors "
          "even when another is the default (e.g. Tensor.arange(...).tolist()). Install it: sudo apt-get install clang")


def default_device() -> str:
  """The device a capture uses when none is given."""
  if DEV.device: return repr(DEV)
  from tinygrad import Device
  return Device.DEFAULT


def settings(env: dict[str, Any]) -> dict[str, Any]:
  """tinygrad Context settings (e.g. {"WINO": "1"}) checked against tinygrad's own variables and converted to their types;
  ValueError says which name or value is wrong and what to do."""
  from tinygrad.helpers import ContextVar
  out = {}
  for name, value in env.items():
    var = ContextVar._cache.get(name)
    if var is None:
      close = difflib.get_close_matches(name, ContextVar._cache, n=3)
      raise ValueError(f"tinygrad has no setting {name!r}" + (f" (did you mean {', '.join(close)}?)" if close else "") +
                       "; use a tinygrad Context variable such as WINO, IMAGE, BEAM, DEBUG")
    if isinstance(var.value, int) and not isinstance(value, int):
      try: value = int(value)
      except (TypeError, ValueError): raise ValueError(f"tinygrad's {name} takes an integer, not {value!r} (e.g. {name}=1)") from None
    out[name] = value
  return out


def parse_settings(items: list[str]) -> dict[str, Any]:
  """["WINO=1", "IMAGE=2"] as checked settings (see settings); ValueError for an item that is not NAME=VALUE."""
  env = {}
  for item in items:
    name, eq, value = item.partition("=")
    if not eq or not name.strip(): raise ValueError(f"{item!r} is not a setting: write NAME=VALUE, e.g. WINO=1")
    env[name.strip()] = value.strip()
  return settings(env)


def context(env: dict[str, Any]) -> Context:
  """A tinygrad Context that applies checked settings (see settings) for a block."""
  return Context(**settings(env))

