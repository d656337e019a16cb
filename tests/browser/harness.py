"""Helpers for the browser tests and benchmarks: a real JupyterLab server, and Debian's Chromium driven by Playwright
(nothing downloads a browser)."""
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ARTIFACTS = Path(os.environ.get("TGVIZ_ARTIFACTS", Path(__file__).resolve().parents[2] / "test-artifacts"))
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]


def _free_port() -> int:
  with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    return s.getsockname()[1]


@contextlib.contextmanager
def chromium():
  """Debian's Chromium under Playwright."""
  exe = shutil.which("chromium")
  if exe is None: raise RuntimeError("Debian's chromium is not installed: run scripts/install.sh test (apt-get install chromium)")
  from playwright.sync_api import sync_playwright
  with sync_playwright() as p:
    b = p.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS)
    yield b
    b.close()


@contextlib.contextmanager
def jupyterlab(root: Path):
  """A JupyterLab server on loopback, rooted in root; yields (base url, token, root)."""
  port, token = _free_port(), "tgviz-test-token"
  settings = root / "settings" / "overrides.json"
  settings.parent.mkdir()
  # no news/update popups over the notebook
  settings.write_text('{"@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": false}}')
  env = {**os.environ, "JUPYTERLAB_SETTINGS_DIR": str(root / "user-settings")}
  proc = subprocess.Popen([sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
                           f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
                           "--ServerApp.disable_check_xsrf=True", "--LabApp.news_url=", "--allow-root",
                           "--LabApp.expose_app_in_browser=True",  # window.jupyterapp: tests switch the theme with it
                           f"--LabServerApp.app_settings_dir={root / 'settings'}"],
                          cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
  url = f"http://127.0.0.1:{port}"
  deadline = time.time() + 90
  while time.time() < deadline:
    try:
      urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2)
      break
    except OSError:
      if proc.poll() is not None: raise RuntimeError(proc.stdout.read().decode()) from None
      time.sleep(0.5)
  else: raise RuntimeError("JupyterLab did not start in 90 s")
  try: yield url, token, root
  finally:
    proc.terminate()
    try: proc.wait(10)
    except subprocess.TimeoutExpired: proc.kill()


def notebook(*cells: str) -> str:
  """A notebook file's text with these code cells."""
  return json.dumps({"cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                                "source": c} for c in cells],
                     "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
                     "nbformat": 4, "nbformat_minor": 5})


NOTEBOOK = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook"


def _ready(page) -> None:
  """Wait for the open notebook and its idle kernel; dismiss JupyterLab's news / update popups."""
  page.locator(f"{NOTEBOOK} .jp-Cell").first.wait_for(timeout=60_000)
  page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=60_000)
  for sel in ("button:has-text('No')", ".jp-Notification-Toast-Close"):
    for b in page.locator(sel).all():
      try: b.click(timeout=500)
      except Exception: pass


def run_every_cell(page) -> None:
  """Run every cell of the open notebook with JupyterLab's own Run All command (no keys or clicks to go astray); the
  command is given again if the first cell has not started 20 s later."""
  _ready(page)
  started = f"document.querySelector('{NOTEBOOK} .jp-Cell .jp-InputPrompt').textContent.trim() !== '[ ]:'"
  for attempt in range(3):
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")  # not awaited: it ends with the last cell
    try:
      page.wait_for_function(started, timeout=20_000)
      return
    except Exception:
      if attempt == 2:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "run-every-cell-failed.png"))
        raise


def run_all(page, count: int) -> None:
  """Run the first count cells of the open notebook with Shift+Enter, once its kernel is idle."""
  nb = NOTEBOOK
  _ready(page)
  page.locator(f"{nb} .jp-Cell .jp-InputArea-editor").first.click()
  for _ in range(count):
    page.keyboard.press("Shift+Enter")
    page.wait_for_timeout(300)
