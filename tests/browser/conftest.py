"""Fixtures for the browser tests: one JupyterLab server, one Notebook 7 server and one Chromium per session."""
import pytest
from harness import chromium, jupyterlab, notebook7, shut_down_kernels


@pytest.fixture(scope="session")
def browser():
  with chromium() as b: yield b


@pytest.fixture(scope="session")
def lab(tmp_path_factory):
  with jupyterlab(tmp_path_factory.mktemp("lab")) as server: yield server


@pytest.fixture(scope="session")
def nb7(tmp_path_factory):
  with notebook7(tmp_path_factory.mktemp("nb7")) as server: yield server


@pytest.fixture(autouse=True)
def _kernels_shut_down_after_each_test(request):
  """Each test's kernels end with it: idle kernels of earlier tests (each holding an OpenCL context on PoCL, whose
  worker threads stay alive) would otherwise pile up on a 2-core machine and slow the next kernel's start."""
  yield
  for name in ("lab", "nb7"):
    if name in request.fixturenames:
      url, token, _ = request.getfixturevalue(name)
      shut_down_kernels(url, token)
