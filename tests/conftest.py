import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import workloads

import tgviz


@pytest.fixture(scope="session")
def tutorial_trace() -> tgviz.Trace:
  with tgviz.capture() as trace: workloads.tutorial()
  return trace


@pytest.fixture(scope="session")
def cnn_trace() -> tgviz.Trace:
  with tgviz.capture() as trace: workloads.cnn()
  return trace


def pytest_collection_modifyitems(items) -> None:
  """Everything under tests/browser/ drives a real browser."""
  for item in items:
    if "browser" in item.path.parts: item.add_marker(pytest.mark.browser)


def pytest_terminal_summary(terminalreporter) -> None:
  """Say where the browser tests left their screenshots (CI artifacts)."""
  from browser.harness import ARTIFACTS
  shots = sorted(ARTIFACTS.glob("*.png")) if ARTIFACTS.is_dir() else []
  for shot in shots: terminalreporter.write_line(f"tgviz screenshot: {shot}")
