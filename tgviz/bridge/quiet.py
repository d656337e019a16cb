"""The device compilers' warnings kept out of the user's output during a capture.

Owns: QuietCompilers, the Patch that, for a capture, has tinygrad's CPU device run clang (a child process, in
``runtime/support/compiler_cpu.py``) with its stderr captured, shown only where compiling failed, and has the CL
device's PoCL, whose embedded clang writes "1 warning generated." straight to the process's stderr, build with -w
(PoCL's ``POCL_EXTRA_BUILD_FLAGS``, read at each build). A warning about tinygrad's own generated code is noise to the
user: a few dozen of them in a model's run, some above a widget. It must not change what is compiled (only
diagnostics are silenced) nor hide an error.
"""
from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

from tgviz.bridge.recorders import Patch

POCL_FLAGS = "POCL_EXTRA_BUILD_FLAGS"


class _QuietSubprocess:
  """The subprocess module as compiler_cpu uses it, with check_output keeping the child's stderr unless it fails."""

  def __getattr__(self, name: str) -> Any:
    return getattr(subprocess, name)

  @staticmethod
  def check_output(cmd: Any, **kwargs: Any) -> bytes:
    done = subprocess.run(cmd, capture_output=True, **kwargs)
    if done.returncode != 0:  # clang's errors (and the warnings with them) as the user would have seen them
      sys.stderr.write(done.stderr.decode(errors="replace"))
      raise subprocess.CalledProcessError(done.returncode, cmd, done.stdout, done.stderr)
    return done.stdout


class QuietCompilers(Patch):
  """While entered, the CPU device's clang says nothing unless it fails, and PoCL builds with -w."""

  def patches(self) -> list[tuple[Any, dict[str, Any]]]:
    from tinygrad.runtime.support import compiler_cpu
    return [(compiler_cpu, {"subprocess": _QuietSubprocess()})]

  def __enter__(self) -> QuietCompilers:
    self._flags = os.environ.get(POCL_FLAGS)
    os.environ[POCL_FLAGS] = f"{self._flags or ''} -w".strip()
    try: super().__enter__()
    except BaseException:
      self._put_back()
      raise
    return self

  def __exit__(self, *exc: object) -> None:
    try: super().__exit__(*exc)
    finally: self._put_back()

  def _put_back(self) -> None:
    if self._flags is None: os.environ.pop(POCL_FLAGS, None)
    else: os.environ[POCL_FLAGS] = self._flags
