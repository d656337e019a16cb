"""Helpers for the browser tests and benchmarks: a real JupyterLab server, and Debian's Chromium driven by Playwright
(nothing downloads a browser)."""
import collections
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

from tgviz.trace.trace import Trace
from tgviz.views.run import opening

REPO = Path(__file__).resolve().parents[2]
LAB_SETTINGS = REPO / "jupyter-config" / "lab" / "settings" / "overrides.d" / "tgviz.json"
ARTIFACTS = Path(os.environ.get("TGVIZ_ARTIFACTS", REPO / "test-artifacts"))
# A wait's limit (ms) is against a hang only: every wait returns as soon as its event comes, so a generous one costs a
# passing test nothing. With two CPU-bound jobs beside the suite on 2 cores, a kernel's start, a first capture or a
# layout took minutes where a quiet machine takes seconds.
LIMIT = 300_000
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]


def _free_port() -> int:
  with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    return s.getsockname()[1]


def answer_kernel_dialogs(page) -> None:
  """JupyterLab and Notebook 7 may ask for a kernel ("Select Kernel") whenever its kernelspecs come late, also after the
  notebook's kernel is up (a loaded machine): the page answers as _answering_kernel_dialogs does (the notebook's own
  kernel, as a user would), before any action the dialog would block."""
  page.add_locator_handler(page.locator(".jp-Dialog:has-text('Select Kernel') .jp-mod-accept"), lambda accept: accept.click())


# The tests' browser: Debian's Chromium as its headless shell (package chromium-headless-shell, the same build as the
# chromium package: the same Blink and V8, without the browser's window layer). It draws and runs the pages as the
# full browser does, for a third less CPU on a report page and a fifth less on a JupyterLab one; the suite is CPU-bound
# (benchmarks/README.md, suite_cpu.py). The benchmarks time pages in the full browser, as a user opens them (USER_BROWSER).
TEST_BROWSER, USER_BROWSER = "chromium-headless-shell", "chromium"


@contextlib.contextmanager
def chromium(program: str = TEST_BROWSER):
  """Debian's Chromium (program: the tests' headless shell, or USER_BROWSER, the full one) under Playwright; its
  contexts wait up to LIMIT in any action, as the tests' waits do, and their pages answer a late kernel dialog."""
  exe = shutil.which(program)
  if exe is None: raise RuntimeError(f"Debian's {program} is not installed: run scripts/install.sh test (apt-get install {program})")
  from playwright.sync_api import sync_playwright
  with sync_playwright() as p:
    b = p.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS)
    new_context = b.new_context
    def patient(*args, **kwargs):  # every context's actions (a click waiting for its element) wait up to LIMIT too
      ctx = new_context(*args, **kwargs)
      ctx.set_default_timeout(LIMIT)
      new_page = ctx.new_page
      def answering():
        page = new_page()
        answer_kernel_dialogs(page)
        return page
      ctx.new_page = answering
      return ctx
    b.new_context = patient
    yield b
    b.close()


def _settings(root: Path) -> Path:
  """The server's application settings: no news/update popups over the notebook, no autosave (a notebook is saved when
  a test saves it: an autosave two minutes in would pass a test of Ctrl+S that saved nothing), and the settings defaults
  tgviz ships (pip puts them in share/jupyter/lab/settings/overrides.d/; the tests' server reads its own folder instead)."""
  settings = root / "settings"
  (settings / "overrides.d").mkdir(parents=True)
  (settings / "overrides.json").write_text(json.dumps({
    "@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False},
    "@jupyterlab/docmanager-extension:plugin": {"autosave": False}}))
  shutil.copy(LAB_SETTINGS, settings / "overrides.d" / LAB_SETTINGS.name)
  return settings


def _ipython_dir(root: Path) -> Path:
  """The IPython folder of the server's kernels: a startup file has each dump its threads' stacks to its stderr (the
  server's log) on SIGUSR1 (dump_kernel_threads)."""
  startup = root / "ipython" / "profile_default" / "startup"
  startup.mkdir(parents=True)
  (startup / "00-dump-threads.py").write_text("import faulthandler, signal\nfaulthandler.register(signal.SIGUSR1, all_threads=True)\n")
  return root / "ipython"


def dump_kernel_threads(root: Path) -> list[int]:
  """Have each running kernel of the server rooted in root write every thread's stack to the server's log (a test whose
  kernel stopped answering says where it is stuck); the kernels' process ids. Only processes started with that server's
  IPYTHONDIR are signalled (SIGUSR1 ends a process that did not register for it)."""
  mark, pids = f"IPYTHONDIR={root / 'ipython'}".encode(), []
  for proc in Path("/proc").iterdir():
    if not proc.name.isdigit(): continue
    try: env, cmd = (proc / "environ").read_bytes().split(b"\0"), (proc / "cmdline").read_bytes()
    except OSError: continue
    if mark in env and b"ipykernel" in cmd:
      with contextlib.suppress(OSError): os.kill(int(proc.name), signal.SIGUSR1)
      pids.append(int(proc.name))
  if pids: time.sleep(1)  # (faulthandler writes from the signal handler: at once, but the log is another process's file)
  return pids


@contextlib.contextmanager
def _server(module: str, app: str, root: Path):
  """A Jupyter server application (python -m module) on loopback, rooted in root; yields (base url, token, root)."""
  port, token = _free_port(), "tgviz-test-token"
  settings = _settings(root)
  env = {**os.environ, "JUPYTERLAB_SETTINGS_DIR": str(root / "user-settings"), "IPYTHONDIR": str(_ipython_dir(root))}
  url = f"http://127.0.0.1:{port}"
  # the server's and its kernels' output go to a file: a pipe nobody reads fills up, and then they block writing to it
  with (root / "server.log").open("wb") as log:
    proc = subprocess.Popen([sys.executable, "-m", module, "--no-browser", f"--port={port}", "--ip=127.0.0.1",
                             f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
                             "--ServerApp.disable_check_xsrf=True", "--LabApp.news_url=", "--allow-root",
                             f"--{app}.expose_app_in_browser=True",  # window.jupyterapp: tests switch the theme with it
                             f"--LabServerApp.app_settings_dir={settings}"],
                            cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:  # the server ends with the tests, or when it did not come up in time
      deadline = time.time() + 90
      while time.time() < deadline:
        try:
          urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2)
          break
        except OSError:
          if proc.poll() is not None: raise RuntimeError((root / "server.log").read_text(errors="replace")) from None
          time.sleep(0.5)
      else: raise RuntimeError(f"{module} did not start in 90 s")
      yield url, token, root
    finally:
      proc.terminate()
      try: proc.wait(10)
      except subprocess.TimeoutExpired: proc.kill()


def jupyterlab(root: Path):
  """A JupyterLab server on loopback, rooted in root; yields (base url, token, root)."""
  return _server("jupyterlab", "LabApp", root)


def notebook7(root: Path):
  """A Jupyter Notebook 7 server on loopback, rooted in root; yields (base url, token, root)."""
  return _server("notebook", "JupyterNotebookApp", root)


# JupyterLab's own kernel connection, cancelling requests of its own (a subshell asked for while the kernel is slow to
# answer, on a loaded machine): not the widget's errors
LAB_OWN = ("Error: Canceled future for ",)


@contextlib.contextmanager
def new_page(browser, width: int = 1500, height: int = 1000, offline: bool = False):
  """A page in a fresh browser context; the page's uncaught errors collect in page.errors."""
  ctx = browser.new_context(viewport={"width": width, "height": height}, offline=offline)
  page = ctx.new_page()
  page.errors = []
  page.on("pageerror", lambda e: None if str(e).startswith(LAB_OWN) else page.errors.append(str(e)))
  page.console = collections.deque(maxlen=200)  # the page's last console lines: a failed test's report shows them
  page.on("console", lambda m: page.console.append(f"{m.type}: {m.text}"))
  try: yield page
  except BaseException:  # a test's own page that fails leaves what the user would have seen, as the page fixture's do
    test = os.environ.get("PYTEST_CURRENT_TEST", "page").split(" ")[0].split("::")[-1]
    with contextlib.suppress(Exception):
      ARTIFACTS.mkdir(parents=True, exist_ok=True)
      page.screenshot(path=str(ARTIFACTS / f"failed-{re.sub(r'[^A-Za-z0-9_.-]+', '_', test)}.png"), full_page=True)
      print("failed page's cell outputs:", page.locator(".jp-OutputArea-output").all_inner_texts(), "errors:", page.errors)
      print("failed page's console:", *page.console, sep="\n  ")
    raise
  finally: ctx.close()


def notebook(*cells: str) -> str:
  """A notebook file's text with these code cells."""
  return json.dumps({"cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                                "source": c} for c in cells],
                     "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
                     "nbformat": 4, "nbformat_minor": 5})


NOTEBOOK = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook"


def open_in_lab(page, lab, name: str, *cells: str) -> Path:
  """Write a notebook of these cells into JupyterLab's root and open it in a workspace of its own, reset: JupyterLab
  restores a workspace's tabs, and another test's notebook open beside it hid its cells. Its kernel is started first,
  through the server's REST API, and the page joins it: a page that starts one itself may ask for a kernel seconds
  after the first is idle (before the server listed its kernelspecs, as after other tests shut theirs down), and a
  Shift+Enter on that dialog changed the kernel under a queued cell, which never ran. Returns the file's path."""
  url, token, root = lab
  path = root / f"{name}.ipynb"
  path.write_text(notebook(*cells))
  _api(url, token, "POST", "/api/sessions", {"path": path.name, "name": path.name, "type": "notebook", "kernel": {"name": "python3"}})
  page.goto(f"{url}/lab/workspaces/{name}/tree/{name}.ipynb?token={token}&reset")
  return path


def _answering_kernel_dialogs(page, done, failure: str, shot: str, seconds: float = LIMIT / 1000) -> None:
  """Wait until done(), answering JupyterLab's kernel dialog meanwhile: it asks for a kernel ("Select Kernel") when a
  notebook opens before the server lists its kernelspecs, as after shutting kernels down; its default answer is the
  notebook's own kernel, as a user would give. Past `seconds`, a screenshot goes to ARTIFACTS/shot and TimeoutError."""
  deadline = time.time() + seconds
  while not done():
    if (accept := page.locator(".jp-Dialog .jp-mod-accept")).count(): accept.first.click()
    if time.time() > deadline:
      ARTIFACTS.mkdir(parents=True, exist_ok=True)
      page.screenshot(path=str(ARTIFACTS / shot))
      raise TimeoutError(f"{failure} in {seconds:.0f} s (screenshot: test-artifacts/{shot})")
    page.wait_for_timeout(250)


def _ready(page) -> None:
  """Wait for the open notebook and its idle kernel; dismiss JupyterLab's news / update popups."""
  page.locator(f"{NOTEBOOK} .jp-Cell").first.wait_for(timeout=LIMIT)
  idle = page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").first
  _answering_kernel_dialogs(page, idle.is_visible, "the notebook's kernel did not become idle", "not-idle.png")
  for sel in ("button:text-is('No')", ".jp-Notification-Toast-Close"):  # news / update popups
    for b in page.locator(sel).all():
      try: b.click(timeout=500)
      except Exception: pass


def run_all(page, count: int) -> None:
  """Run the first count cells of the open notebook one by one with Shift+Enter, once its kernel is idle, and wait until
  each has run ("[n]")."""
  nb = NOTEBOOK
  _ready(page)
  prompt = f"(document.querySelectorAll('{nb} .jp-Cell .jp-InputPrompt')[{{i}}]?.textContent || '')"
  def queue(i: int) -> None:  # the cell queued or run ("[*]" or "[n]"); a key pressed before the kernel is connected
    for _ in range(5):        # only moves to the next cell, so then the cell is run again
      page.locator(f"{nb} .jp-Cell .jp-InputArea-editor").nth(i).click()
      page.keyboard.press("Shift+Enter")
      try:
        page.wait_for_function(prompt.format(i=i) + ".match(/\\[[*0-9]/)", timeout=5_000)
        return
      except Exception: pass
    raise TimeoutError(f"cell {i + 1} did not run")
  # one cell at a time, each waited for before the next is queued: JupyterLab can drop a queued cell's request on a loaded
  # machine ("Canceled future for create_subshell_request"): its prompt goes back to "[ ]" and it never runs, while the
  # cells queued after it do; such a cell is run again, and only then the cells after it, so they run in order
  for i in range(count):
    for _ in range(3):
      queue(i)
      page.wait_for_function(prompt.format(i=i) + ".match(/\\[[ 0-9]/)", timeout=LIMIT)
      if page.evaluate(prompt.format(i=i) + ".match(/\\[[0-9]/) !== null"): break
    else: raise TimeoutError(f"cell {i + 1} was dropped three times")


# the attention block a new user tried (the user's code, without the %%tgviz line)
ATTENTION = """from tinygrad import Tensor
x = Tensor.randn(2, 6, 16).realize()
wq, wk, wv = [Tensor.randn(16, 16).realize() for _ in range(3)]
q, k, v = x @ wq, x @ wk, x @ wv
scores = (q @ k.transpose(-2, -1)) / 4
out = scores.softmax(-1) @ v
out.realize()"""


TUTORIAL = """%%tgviz
from tinygrad import Tensor
x = Tensor.arange(9).reshape(1, 1, 3, 3).float().realize()
weight = Tensor.ones(1, 1, 2, 2).realize()
result = x.conv2d(weight)
print(result.tolist())"""


LABEL_PX = """() => { const t = document.querySelector('.tgviz-stage svg g.side g.node text tspan');
  return parseFloat(getComputedStyle(t).fontSize) * t.getBoundingClientRect().height / t.getBBox().height; }"""
CHANGED_IN_VIEW = """() => { const c = document.querySelector('.tgviz-canvas').getBoundingClientRect();
  const marked = [...document.querySelectorAll('.tgviz-stage g.side g.node.added, .tgviz-stage g.side g.node.removed, '
                                               + '.tgviz-stage g.side g.node.changed')];
  return marked.length > 0 && marked.some((n) => { const r = n.getBoundingClientRect();
    return r.right > c.left && r.left < c.right && r.bottom > c.top && r.top < c.bottom; }); }"""
MARKED = """(every) => { const c = document.querySelector('.tgviz-canvas').getBoundingClientRect();
  const own = every ? [] : [...document.querySelectorAll('.tgviz-stage g.side g.node.match-node')];
  const ns = own.length ? own : [...document.querySelectorAll(
    '.tgviz-stage g.side g.node:is(.match-node, .added, .removed, .changed)')];
  const box = (r) => [r.left, r.top, r.right, r.bottom];
  return {canvas: box(c), nodes: ns.map((n) => box(n.getBoundingClientRect())),
          after: ns.map((n) => n.closest('g.side').dataset.side === 'after')}; }"""


def marked_boxes(page, after: bool = False, every: bool = False) -> tuple[list[float], list[list[float]]]:
  """The graph canvas's box and the boxes of the nodes the change marks (a match's own, else every added, removed or
  changed one; every: all of those, the nodes rebuilt above a match's own too; after: those of the after side, the
  replacement), each [left, top, right, bottom] in CSS px on screen."""
  got = page.evaluate(MARKED, every)
  return got["canvas"], [b for b, a in zip(got["nodes"], got["after"], strict=True) if a or not after]


def inside(box: list[float], canvas: list[float], margin: float = 0) -> bool:
  """Whether box lies whole inside canvas, `margin` px in from its edges."""
  return (box[0] >= canvas[0] + margin and box[2] <= canvas[2] - margin and box[1] >= canvas[1] + margin
          and box[3] <= canvas[3] - margin)


NODE_PANEL_MS = """async () => { const n = document.querySelector('.tgviz-stage g.side g.node[data-node]');
  const c = document.querySelector('.tgviz-canvas'), p = document.querySelector('.tgviz-node-panel'), r = n.getBoundingClientRect();
  const at = {bubbles: true, clientX: r.x + 3, clientY: r.y + 3, pointerId: 1, button: 0};
  const t0 = performance.now();
  n.dispatchEvent(new PointerEvent('pointerdown', at)); c.dispatchEvent(new PointerEvent('pointerup', at));
  const at_once = !p.hidden && p.dataset.key === n.dataset.node && p.dataset.state === 'page';
  await new Promise((done) => requestAnimationFrame(() => done()));  // and painted
  return {ms: performance.now() - t0, at_once, shown: !p.hidden && p.dataset.key === n.dataset.node, state: p.dataset.state,
          text: p.innerText, key: n.dataset.node, op: n.dataset.op}; }"""


def node_panel_ms(page) -> dict:
  """Click the first node drawn (as a pointer down and up, which is what picks it) and time, in the page, until its
  node panel is shown and painted; returns the time (ms, a figure to print: benchmarks/ measure speed), at_once
  (whether the panel showed the node, from what the page holds, within the click's own handler: no round trip to
  Python, no wait for a frame, so it is quick on any machine), whether it shows that node, its state ("page": what the
  page holds; "full": the kernel's answer too) and text, and the node's key and op."""
  return page.evaluate(NODE_PANEL_MS)


_POINT_ON = """(sel) => new Promise((done) => {
  let last = '', same = 0;
  const look = () => {
    const el = document.querySelector(sel), r = el.getBoundingClientRect(), at = `${r.left},${r.top},${r.width},${r.height}`;
    same = at === last ? same + 1 : 0; last = at;
    if (same < 3) { requestAnimationFrame(look); return; }
    for (const fy of [0.5, 0.35, 0.65, 0.2, 0.8, 0.08, 0.92]) for (const fx of [0.5, 0.3, 0.7]) {
      const x = r.left + r.width * fx, y = r.top + r.height * fy;
      if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) continue;
      const hit = document.elementFromPoint(x, y);
      if (hit && el.contains(hit)) { done({x, y}); return; }
    }
    done(null);
  };
  look();
})"""


def point_on(page, selector: str) -> tuple[float, float]:
  """A point of the first element matching selector where the pointer is over it (not over a toolbar above it, a panel
  on it, or off the window), once the element has stayed put for three frames: a scroll that is still moving the page
  (a wheel scrolls smoothly) would move the element from under a point taken earlier."""
  at = page.evaluate(_POINT_ON, selector)
  assert at, f"no point of {selector} is in view and uncovered"
  return at["x"], at["y"]


def ctrl_wheel(page, dy: float) -> None:
  """A ctrl+wheel where the pointer is: what zooms a graph or a chart in a notebook, where the plain wheel scrolls the
  notebook (and in the report, where the plain wheel zooms too)."""
  page.keyboard.down("Control")
  page.mouse.wheel(0, dy)
  page.keyboard.up("Control")


def settled(page) -> None:
  """Until the page has drawn twice: what a click, a key or a resize set off in the page (its handlers, observers and
  the layout that follows) is on screen. An event to wait for, not a time: it holds on a busy machine too."""
  page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => done())))")


def check_maximise(page, shot: str) -> None:
  """The focused widget, maximised with m, fills the window (it is moved out of the notebook's transformed, clipping
  containers while maximised), the graph canvas at least 1040x850 of 1600x1000 and the code column 360 px wide or more;
  the first Escape puts it back in its cell, keeping the focus, the second returns to the notebook. A screenshot of the
  maximised widget goes to ARTIFACTS/shot."""
  vw, vh = page.viewport_size["width"], page.viewport_size["height"]
  root = page.locator(".tgviz-root")
  to_steps(page)  # from the program map the widget opens on, to the steps
  inline = root.bounding_box()
  page.locator(".tgviz-title").click()
  page.keyboard.press("m")
  page.wait_for_function("document.querySelector('.tgviz-root').classList.contains('maximised')", timeout=LIMIT)
  settled(page)
  box, canvas, code = root.bounding_box(), page.locator(".tgviz-canvas").bounding_box(), page.locator(".tgviz-right").bounding_box()
  assert (box["x"], box["y"], box["width"], box["height"]) == (0, 0, vw, vh), box
  assert canvas["width"] >= 1040 and canvas["height"] >= 850, canvas
  assert code["width"] >= 360, code  # the code column's lines readable beside it, not wrapped into many rows
  print(f"\nmaximised canvas at {vw}x{vh}: {canvas['width']:.0f}x{canvas['height']:.0f} px "
        f"(the widget inline: {inline['width']:.0f}x{inline['height']:.0f})")
  # what is drawn at the window's corners and centre is the widget's, over the notebook
  for x, y in ((2, 2), (vw - 3, vh - 3), (vw // 2, vh // 2)):
    assert page.evaluate("([x, y]) => !!document.elementFromPoint(x, y)?.closest('.tgviz-root')", [x, y]), (x, y)
  assert page.locator(".tgviz-maximise").get_attribute("aria-pressed") == "true"
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  page.screenshot(path=str(ARTIFACTS / shot))
  page.keyboard.press("Escape")  # back in its cell, still focused
  page.wait_for_function("!document.querySelector('.tgviz-root').classList.contains('maximised')", timeout=LIMIT)
  assert page.evaluate("!!document.querySelector('.tgviz-root').closest('.jp-OutputArea')")
  assert page.evaluate("document.activeElement === document.querySelector('.tgviz-root')")
  back = root.bounding_box()
  assert abs(back["width"] - inline["width"]) <= 1 and abs(back["height"] - inline["height"]) <= 1, (inline, back)
  page.keyboard.press("Escape")  # then back to the notebook
  assert not page.evaluate("document.querySelector('.tgviz-root').contains(document.activeElement)")
  page.locator(".tgviz-maximise").click()  # the button too, and again to restore
  page.wait_for_function("document.querySelector('.tgviz-root').classList.contains('maximised')", timeout=LIMIT)
  page.locator(".tgviz-maximise").click()
  page.wait_for_function("!document.querySelector('.tgviz-root').classList.contains('maximised')", timeout=LIMIT)


GRAPH_FITTED = """() => { const c = document.querySelector('.tgviz-canvas').getBoundingClientRect();
  const rs = [...document.querySelectorAll('.tgviz-stage g.side g.node, .tgviz-stage g.side g.hidden-count, .tgviz-stage g.side > text.title')]
    .map((n) => n.getBoundingClientRect());
  const r = {left: Math.min(...rs.map((b) => b.left)), right: Math.max(...rs.map((b) => b.right)),
             top: Math.min(...rs.map((b) => b.top)), bottom: Math.max(...rs.map((b) => b.bottom))};
  return {whole: r.left >= c.left - 1 && r.right <= c.right + 1 && r.top >= c.top - 1 && r.bottom <= c.bottom + 1,
          fills: Math.abs(r.right - r.left - c.width + 20) < 2 || Math.abs(r.bottom - r.top - c.height + 20) < 2}; }"""


def graph_fitted(page) -> dict:
  """What f shows of the step's graph (its nodes, hidden-node counts and sides' names; not the title and legend above,
  which may be cut): whether all of it is whole on the canvas, and whether it fills the canvas across or down less f's
  10 px margin all round (as large as fits)."""
  return page.evaluate(GRAPH_FITTED)


def label_px(page) -> float:
  """The on-screen size of a node label: its font size times the SVG's scale, in CSS px."""
  return page.evaluate(LABEL_PX)


SHOWN_LABELS = """(root) => [...root.querySelectorAll('.tgviz-pair:not([hidden]) .tgviz-landmark-svg')].map((box) => {
  const r = box.getBoundingClientRect();
  return [...box.querySelectorAll('g.node text')].filter((t) => { const b = t.getBoundingClientRect();
    return b.width > 0 && b.left >= r.left && b.right <= r.right && b.top >= r.top && b.bottom <= r.bottom; })
    .map((t) => parseFloat(getComputedStyle(t).fontSize) * t.getBoundingClientRect().height / t.getBBox().height); })"""


def shown_labels_px(root) -> list[list[float]]:
  """A comparison's open pair (inside root, a locator): per graph box, the on-screen size (CSS px: font size times the
  SVG's scale) of each node label that lies whole inside the box."""
  return root.evaluate(SHOWN_LABELS)


def changed_in_view(page) -> bool:
  return page.evaluate(CHANGED_IN_VIEW)


def check_zoomed_to_change(page, again: bool = False) -> None:
  """What z shows: every node the change marks (a match's own, else every added, removed or changed one) whole on the
  canvas, with labels readable (11 CSS px or more) where those nodes fit the canvas at that size (with z's 20 px margin
  all round). Where they do not, the replacement (those of the after side) whole, readable where it fits so, else as
  large as fits it; z again (again): all of them whole, as large as fits them (zoomed out below readable only as far as
  it must: a change wider or taller than the canvas at a readable size), and the nodes rebuilt above a match's own."""
  (canvas, nodes), px = marked_boxes(page, every=again), label_px(page)
  after = marked_boxes(page, after=True)[1]

  def room(ns: list[list[float]]) -> float:  # how much larger the nodes' box could be drawn, z's margin kept
    w, h = max(n[2] for n in ns) - min(n[0] for n in ns), max(n[3] for n in ns) - min(n[1] for n in ns)
    return min((canvas[2] - canvas[0] - 40) / w, (canvas[3] - canvas[1] - 40) / h)
  assert nodes, canvas
  # 1%: the nodes' boxes on screen against their SVG boxes
  shown = nodes if again or px * room(nodes) >= 11 * 0.99 or not after or len(after) == len(nodes) else after
  assert all(inside(n, canvas) for n in shown), (canvas, shown, again)
  assert px >= min(11, px * room(shown) * 0.99), (px, room(shown), canvas, again)


def saved_kept_picture(path: Path) -> dict:
  """Wait for the notebook file to hold the widget state (Jupyter widgets' saveState), check what a reader without the
  kernel gets (the tgviz widget's kept picture in the state, the picture in the output's HTML, a file under 1 MB) and
  return the kept picture."""
  deadline, nb = time.time() + 120, {}  # the save follows Ctrl+S at once on a quiet machine; minutes on a loaded one
  while time.time() < deadline:
    try: nb = json.loads(path.read_text())
    except json.JSONDecodeError: nb = {}  # caught while Jupyter writes the file (it is not written atomically)
    if "application/vnd.jupyter.widget-state+json" in nb.get("metadata", {}).get("widgets", {}): break
    time.sleep(0.3)
  else: raise AssertionError("the widget state was not saved with the notebook (jupyterlab-manager's saveState)")
  state = nb["metadata"]["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
  snaps = [m["state"]["kept_picture"] for m in state.values() if m["state"].get("kept_picture")]
  assert len(snaps) == 1 and snaps[0]["svg"].startswith("<svg") and "data-node" in snaps[0]["svg"]
  assert len(json.dumps(snaps[0])) <= 300_000  # a widget keeps at most 300 kB of picture in the notebook
  assert path.stat().st_size < 1_000_000
  outputs = [o for c in nb["cells"] for o in c.get("outputs", []) if "text/html" in o.get("data", {})]
  assert any("<svg" in "".join(o["data"]["text/html"]) for o in outputs)  # the picture for frontends without widgets
  return snaps[0]


def _api(url: str, token: str, method: str, path: str, body: dict | None = None):
  """A call to the server's REST API (with a JSON body, if given); its JSON answer."""
  data = None if body is None else json.dumps(body).encode()
  req = urllib.request.Request(f"{url}{path}", data=data, method=method,
                               headers={"Authorization": f"token {token}", "Content-Type": "application/json"})
  with urllib.request.urlopen(req, timeout=30) as r: return json.loads(r.read() or b"null")


def sessions(url: str, token: str) -> list[dict]:
  """The server's sessions (a notebook's, with its kernel, while the kernel runs), through its REST API."""
  return _api(url, token, "GET", "/api/sessions")


def shut_down_kernels(url: str, token: str) -> None:
  """End every session and its kernel through the server's REST API, as the Kernel menu's "Shut Down" does."""
  for s in sessions(url, token): _api(url, token, "DELETE", f"/api/sessions/{s['id']}")
  assert _api(url, token, "GET", "/api/kernels") == []


def check_saved_notebook(page, path: Path, url: str, token: str, shot: str) -> None:
  """Run the open notebook's two cells (%load_ext, a %%tgviz cell), save it, shut its kernel down and reload: the widget
  shows the picture kept with the notebook (see assert_static_picture); a screenshot goes to ARTIFACTS/shot."""
  run_all(page, 2)
  page.wait_for_selector(".tgviz-stage svg g.node", timeout=LIMIT)
  page.wait_for_timeout(1000)
  page.keyboard.press("Control+s")
  snap = saved_kept_picture(path)
  shut_down_kernels(url, token)
  page.reload()
  assert_static_picture(page, snap)
  ARTIFACTS.mkdir(parents=True, exist_ok=True)
  page.locator(".tgviz-root").screenshot(path=str(ARTIFACTS / shot))


def assert_static_picture(page, snap: dict) -> None:
  """A reopened notebook whose kernel is gone shows the kept picture (nodes, the kernel's code) and a note, no error."""
  # the widgets come back once the notebook's session is settled, a kernel dialog answered
  note = page.locator(".tgviz-static-note:not([hidden])")
  _answering_kernel_dialogs(page, lambda: note.count() > 0, "no static picture after reopening the notebook", "no-static-picture.png")
  assert page.locator(".tgviz-static-note").inner_text().startswith("static picture")
  assert page.locator(".tgviz-progmap[open]").count() == 0  # the map (it needs the kernel) gives way to the picture
  assert page.locator(".tgviz-stage svg g.side g.node").count() > 5
  assert page.locator(".tgviz-stage").get_attribute("data-step") == snap["step"]
  assert "__kernel" in page.locator(".tgviz-right > .tgviz-code").inner_text()
  assert "Error displaying widget" not in page.locator(".jp-NotebookPanel").first.inner_text()
  # no live-looking controls: what needs the kernel is visibly off (dimmed, not clickable); the view's own still work
  assert page.locator(".tgviz-root.tgviz-offline").count() == 1
  page.wait_for_timeout(1000)  # dimmed after a moment: a live kernel would have answered before
  for sel in (".tgviz-slider", ".tgviz-next", ".tgviz-export", ".tgviz-busiest", ".tgviz-tree"):
    el = page.locator(sel)
    assert el.get_attribute("aria-disabled") == "true", sel
    assert el.evaluate("e => getComputedStyle(e).pointerEvents === 'none' && Number(getComputedStyle(e).opacity) < 0.6"), sel
  assert page.locator(".tgviz-fit").evaluate("e => getComputedStyle(e).pointerEvents !== 'none' && getComputedStyle(e).opacity === '1'")


def search_for(page, text: str) -> None:
  """Type `text` into the search box and wait until the page has followed it: the tree rebuilt for it (after typing
  pauses) and its hits listed above the tree (or gone, for no text). Clicking a row before both have happened can land
  on whatever the late layout shift moved under the pointer."""
  page.locator(".tgviz-filter").fill(text)
  page.wait_for_function("""(t) => { const tree = document.querySelector('.tgviz-tree'), res = document.querySelector('.tgviz-results');
    if (tree.dataset.filter !== t.trim().toLowerCase()) return false;
    if (!t.trim()) return res.hidden;
    const head = res.querySelector('.tgviz-results-head');
    return !res.hidden && head && head.textContent.includes(t.trim()); }""", arg=text, timeout=LIMIT)
  settled(page)


def to_steps(where) -> None:
  """Leave the program map a trace opens on (js/programmap.js) for the step browser, as a user does: its × (where: a
  page, or a widget's root locator). Nothing where the map is not open."""
  close = where.locator(".tgviz-progmap[open] .tgviz-map-head .tgviz-sheet-close")
  for i in range(close.count()): close.nth(i).click()


# How the lines of a pane (`sel`: its code lines or listing cells) wrap on screen, read from where each character is
# drawn (Range.getClientRects): the visual lines of each, and every break between two of them that falls inside a token
# (between two characters of a name, a number or a dotted name such as dtypes.float, or of an operator such as << or
# ->), or whose continuation does not start further in than the line itself (no hanging indent). Also whether the pane
# scrolls sideways (a line runs past its edge) and the elements that wrapped.
WRAPS = """(sel) => { const els = [...document.querySelectorAll(sel)].filter((e) => e.offsetParent);
  const word = /[A-Za-z0-9_.'"]/, op = /[<>=!&|-]/;
  let wrapped = 0, visual = 0; const bad = [], hang = [];
  for (const e of els) {
    const chars = [], walk = document.createTreeWalker(e, NodeFilter.SHOW_TEXT);
    for (let t = walk.nextNode(); t; t = walk.nextNode())
      for (let i = 0; i < t.data.length; i++) {
        const r = document.createRange(); r.setStart(t, i); r.setEnd(t, i + 1);
        const b = [...r.getClientRects()].find((q) => q.width > 0);
        if (b && t.data[i] !== '\\n') chars.push({c: t.data[i], top: b.top, left: b.left, h: b.height});
      }
    const lines = [];
    for (const ch of chars) {
      const last = lines[lines.length - 1];
      if (last && ch.top < last[0].top + last[0].h / 2) last.push(ch); else lines.push([ch]);
    }
    visual += lines.length;
    if (lines.length < 2) continue;
    wrapped++;
    const text = chars.map((q) => q.c).join('');
    const start = lines[0].find((q) => q.c.trim()) ?? lines[0][0];
    for (let k = 1; k < lines.length; k++) {
      const prev = lines[k - 1].filter((q) => q.c.trim()), a = prev[prev.length - 1], b = lines[k].find((q) => q.c.trim());
      if (!a || !b) continue;
      const where = lines[k - 1].map((q) => q.c).join('').slice(-12) + '|' + lines[k].map((q) => q.c).join('').slice(0, 12);
      const inside = word.test(a.c) && word.test(b.c) && lines[k - 1][lines[k - 1].length - 1] === a;
      if (inside || (op.test(a.c) && op.test(b.c))) bad.push({text, where});
      if (b.left < start.left + 1) hang.push({text, where, start: start.left, at: b.left});
    }
  }
  const pane = els[0]?.closest('.tgviz-code, .tgviz-uops, .tgviz-asm, .tgviz-diff');
  return {elements: els.length, wrapped, visual, bad, hang, sideways: pane ? pane.scrollWidth > pane.clientWidth + 1 : null}; }"""


def wraps(page, sel: str) -> dict:
  """See WRAPS."""
  return page.evaluate(WRAPS, sel)


UOPS_CELLS = """() => { const pane = [...document.querySelectorAll('.tgviz-uops')].find((e) => e.offsetParent);
  // a cell whose text is wider than its box: a column squeezed, its text cut or running over the next
  const clipped = [...pane.querySelectorAll('tr[data-n] td')].filter((e) => e.scrollWidth > e.clientWidth)
    .map((e) => ({n: e.parentElement.dataset.n, cell: e.className, text: e.textContent, scroll: e.scrollWidth, client: e.clientWidth}));
  // the rows whose argument is on a line of its own, under the row's other cells
  const below = [...pane.querySelectorAll('tr[data-n]')].filter((r) => {
    const a = r.querySelector('.tgviz-uop-arg'), d = r.querySelector('.tgviz-uop-dt');
    return a.getBoundingClientRect().top >= d.getBoundingClientRect().bottom - 1; }).map((r) => Number(r.dataset.n));
  return {rows: pane.querySelectorAll('tr[data-n]').length, clipped: clipped.slice(0, 8), below,
          scroll: pane.scrollWidth, client: pane.clientWidth}; }"""


def uops_cells(page) -> dict:
  """The uops tab shown: its rows, the cells whose text is wider than their box (clipped: the first 8), the rows whose
  argument is on a line of its own (below), and the pane's scrollWidth and clientWidth."""
  return page.evaluate(UOPS_CELLS)


TRIES = 3  # captures of a timing test's run before it gives up on an undisturbed one


def undisturbed(capture: Callable[[], Trace], ok: Callable[[Trace], bool], what: str) -> Trace:
  """A run whose timing is the program's own: captured again, at most TRIES times, while ok(trace) is false. A test of
  what the timeline or the memory chart opens on asserts on the run's times; on a busy machine the OS can stall the
  script between two launches for a quarter second, a gap that is the machine's, not the program's, and the views
  (rightly) draw it. What the test checks is unchanged; a run with such a stall is not the run it is about."""
  for _ in range(TRIES):
    trace = capture()
    if ok(trace): return trace
  raise AssertionError(f"{TRIES} captures of {what} were all stalled by the machine (see undisturbed)")


def stall_share(trace: Trace) -> float:
  """The widest time between two launches in the timeline's opening window with no launch running and tinygrad not
  compiling, as a share of the window: 0 where the launches follow each other as the program issues them."""
  o = opening(trace.timeline(), trace.compile_times())
  return 0.0 if o is None else stalled(trace, o["first"], o["last"] + 1)


def stalled(trace: Trace, first: int, end: int) -> float:
  """The widest time between two of the launches first..end-1 with no launch running and tinygrad not compiling, as a
  share of their span (first start to last end)."""
  ls, ct = trace.timeline().launches[first:end], trace.compile_times()
  span = max(x.end_us for x in ls) - ls[0].start_us if ls else 0.0
  if span <= 0: return 0.0
  widest, last = 0.0, ls[0].end_us
  for x in ls[1:]:
    if x.start_us > last: widest = max(widest, x.start_us - last - ct.compiling_us(last, x.start_us))
    last = max(last, x.end_us)
  return widest / span


# the kernel table as read: its sheet's scroll, its headers, each cell's text whole in its cell (a clip column's cut
# short on purpose, whole in its tooltip), each piece of a cell that wraps on one line, the rows' heights
KERNEL_TABLE = """() => { const s = document.querySelector('.tgviz-kernels > .tgviz-sheet');
  const cells = [...s.querySelectorAll('tbody td')];
  return {scroll: s.scrollWidth, client: s.clientWidth, window: innerWidth,
          heads: [...s.querySelectorAll('thead th')].map((t) => t.innerText.replace(/[ ▲▼]+$/, '')),
          right: Math.max(...[...s.querySelectorAll('th')].map((t) => t.getBoundingClientRect().right)),
          cut: cells.filter((c) => !c.classList.contains('clip') && c.scrollWidth > c.clientWidth + 1).map((c) => c.textContent),
          broken: [...s.querySelectorAll('tbody td.wrap > span')].filter((p) => p.getClientRects().length > 1).map((p) => p.textContent),
          names: [...s.querySelectorAll('tbody tr')].map((r) => [r.cells[0].textContent, r.cells[0].title]),
          spreads: [...s.querySelectorAll('tbody tr')].map((r) => r.querySelector('td.wrap').textContent),
          heights: [...s.querySelectorAll('tbody tr')].map((r) => r.getBoundingClientRect().height)}; }"""
