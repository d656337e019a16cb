"""Fixtures for the browser tests: one JupyterLab server, one Notebook 7 server and one Chromium per session."""
import pytest
from harness import chromium, jupyterlab, notebook7


@pytest.fixture(scope="session")
def browser():
  with chromium() as b: yield b


@pytest.fixture(scope="session")
def lab(tmp_path_factory):
  with jupyterlab(tmp_path_factory.mktemp("lab")) as server: yield server


@pytest.fixture(scope="session")
def nb7(tmp_path_factory):
  with notebook7(tmp_path_factory.mktemp("nb7")) as server: yield server
