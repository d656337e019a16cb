"""Fixtures for the browser tests: one JupyterLab server, one Notebook 7 server and one Chromium per session."""
import re
import runpy

import pytest
from harness import ARTIFACTS, ATTENTION, chromium, dump_kernel_threads, jupyterlab, notebook7, shut_down_kernels, stall_share, undisturbed

import tgviz
from tgviz.trace.trace import Trace


@pytest.fixture(scope="session")
def browser():
  with chromium() as b: yield b


@pytest.fixture(scope="session")
def lab(tmp_path_factory):
  with jupyterlab(tmp_path_factory.mktemp("lab")) as server: yield server


@pytest.fixture(scope="session")
def attention_report(tmp_path_factory):
  """The new user's attention block run as a script, attention.py: its trace and its HTML report."""
  script = tmp_path_factory.mktemp("attention") / "attention.py"
  script.write_text(ATTENTION)
  def capture() -> Trace:
    with tgviz.capture() as trace: runpy.run_path(str(script))  # (the user's lines: attention.py's)
    return trace
  trace = undisturbed(capture, lambda t: stall_share(t) < 1 / 3, "the attention block")
  return trace, trace.to_html(script.parent / "index.html", workers=2)


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


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
  """A browser test that fails leaves a screenshot of its page (its `page` fixture's, else each open page of its
  `context` fixture's), the page's errors and console, and the end of its Jupyter server's log, to see what the user
  would have and why."""
  outcome = yield
  report = outcome.get_result()
  if report.when != "call" or not report.failed: return
  pages = [p] if (p := item.funcargs.get("page")) is not None else list(getattr(item.funcargs.get("context"), "pages", []))
  name = f"failed-{re.sub(r'[^A-Za-z0-9_.-]+', '_', item.name)}"
  for i, page in enumerate(pages):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / f"{name}{f'-{i}' if i else ''}.png"
    try: page.screenshot(path=str(shot), full_page=True)
    except Exception as e: report.sections.append(("failure screenshot", f"none: {e}"))
    else: report.sections.append(("failure screenshot", str(shot)))
    if getattr(page, "errors", None): report.sections.append(("page errors", "\n".join(page.errors)))
    try:  # what each widget was showing and saying (its status line can lie below the screenshot's fold)
      said = page.eval_on_selector_all(".tgviz-root", "rs => rs.map((r) => [r.querySelector('.tgviz-stage')?.dataset.step, "
                                       "r.querySelector('.tgviz-stage')?.dataset.match, r.querySelector('.tgviz-status')?.textContent])")
      report.sections.append(("widgets: step, match, status", "\n".join(map(str, said))))
    except Exception: pass
    if getattr(page, "console", None): report.sections.append(("page console", "\n".join(page.console)))
  for name in ("lab", "nb7"):  # the server's log: its kernels' errors (a comm handler's traceback) and threads' stacks
    if (server := item.funcargs.get(name)) is not None and (log := server[2] / "server.log").exists():
      pids = dump_kernel_threads(server[2])
      report.sections.append((f"{name} server log, its end (kernels {pids} dumped their threads)", log.read_text(errors="replace")[-20000:]))
