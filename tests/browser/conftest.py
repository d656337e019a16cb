"""Fixtures for the browser tests: one JupyterLab server and one Chromium per session."""
import pytest
from harness import chromium, jupyterlab


@pytest.fixture(scope="session")
def browser():
  with chromium() as b: yield b


@pytest.fixture(scope="session")
def lab(tmp_path_factory):
  with jupyterlab(tmp_path_factory.mktemp("lab")) as server: yield server
