"""The shape of the code: packages by layer whose imports (lazy and type-only ones included) only point down the package
order, modules that import one way inside each package, only the bridge knowing tinygrad, background work only in
tgviz/work/, and modules of a bounded size unless named here with a reason."""
import ast
import re
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "tgviz"
# the layers, bottom up: a module may import only from its own package or one lower down. Peers (the same level) must not
# import each other.
LEVELS = {"work": 0, "draw": 1, "bridge": 2, "trace": 3, "views": 4, "notebook": 5, "report": 5, "api": 6, "magic": 7, "cli": 7,
          "__main__": 8, "__init__": 8}
# import circles inside a package that may stay: type-only references between a parent and its children
PARENT_CHILD = {
  ("trace.steps", "trace.trace"): "a Step names its Group (Step.group: type only), which holds the steps",
  ("trace.kernel", "trace.trace"): "a Kernel names its Group and Trace (Kernel.group, Kernel.trace: type only), which hold it",
}
MAX_LINES = 420
BIGGER = {  # modules over MAX_LINES, each with why it stays one module
  "bridge/replay.py": "one algorithm, the Replayer, that js/port/replay.js mirrors method by method",
  "views/messages.py": "the one schema: every message between Python and the page, and the writer of js/messages.js from it",
}
# names of tinygrad's internals that only the bridge may spell out
TINYGRAD_NAMES = ("linearize/render", "View Base AST", "View Program", "OpenCLRenderer", "ProgramInfo", "function_name",
                  "REWRITE_ERROR", "uop_fields", "tracked_ctxs")
# starting threads or processes: only tgviz/work/ does (bridge.parallel wraps tinygrad's own pool, which it starts)
BACKGROUND = ("ThreadPoolExecutor", "ProcessPoolExecutor", "Thread", "fork", "Popen", "get_context")


def modules() -> dict[str, Path]:
  """Every module of tgviz by its dotted name under tgviz ("trace.kernel", "api", "draw.__init__"), recursively."""
  return {".".join(p.relative_to(PKG).with_suffix("").parts): p for p in sorted(PKG.rglob("*.py"))}


def imports(path: Path, type_only: bool = True) -> set[str]:
  """Every module a file imports, at top level, inside functions and (type_only) under `if TYPE_CHECKING:`."""
  out: set[str] = set()
  def visit(node: ast.AST) -> None:
    if not type_only and isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test): return
    if isinstance(node, ast.Import): out.update(a.name for a in node.names)
    elif isinstance(node, ast.ImportFrom) and node.module:
      out.add(node.module)
      out.update(f"{node.module}.{a.name}" for a in node.names)  # `from tgviz.trace import kernel` imports tgviz.trace.kernel
    for child in ast.iter_child_nodes(node): visit(child)
  visit(ast.parse(path.read_text()))
  return out


def tgviz_imports(path: Path, names: set[str]) -> set[str]:
  """The tgviz modules (dotted names under tgviz) a file imports, lazy and type-only imports included: `from tgviz.trace
  import kernel` imports trace.kernel; `from tgviz.bridge import Opt` and `import tgviz.bridge` import bridge.__init__."""
  def module(dotted: str) -> str | None:
    name = dotted.removeprefix("tgviz.")
    return name if name in names else f"{name}.__init__" if f"{name}.__init__" in names else None
  out = set()
  for node in ast.walk(ast.parse(path.read_text())):
    if isinstance(node, ast.Import): found = [module(a.name) for a in node.names if a.name.startswith("tgviz.")]
    elif isinstance(node, ast.ImportFrom) and node.module and (node.module + ".").startswith("tgviz."):
      subs = [module(f"{node.module}.{a.name}") for a in node.names]
      found = [*subs, *([module(node.module)] if None in subs else [])]  # a name that is no module: the package's own
    else: continue
    out.update(f for f in found if f is not None)
  return out


def package(module: str) -> str:
  return module.split(".")[0]


def graph() -> dict[str, set[str]]:
  names = set(modules())
  return {m: tgviz_imports(p, names) - {m} for m, p in modules().items()}


def code_words(path: Path) -> set[str]:
  """The strings, names and attributes a module's code uses (docstrings and comments are prose, not code)."""
  tree = ast.parse(path.read_text())
  docs = {id(n.body[0].value) for n in ast.walk(tree) if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef))
          and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
  words = set()
  for n in ast.walk(tree):
    if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs: words.add(n.value)
    elif isinstance(n, ast.Name): words.add(n.id)
    elif isinstance(n, ast.Attribute): words.add(n.attr)
  return words


def test_every_package_has_a_level_and_says_what_it_owns():
  packages = {package(m) for m in modules()}
  assert packages == set(LEVELS), f"place these in LEVELS: {packages ^ set(LEVELS)}"
  for pkg in (p for p in PKG.iterdir() if p.is_dir() and (p / "__init__.py").exists()):
    doc = ast.get_docstring(ast.parse((pkg / "__init__.py").read_text())) or ""
    assert len(doc.splitlines()) >= 3 and "Must not" in doc, f"tgviz/{pkg.name}/__init__.py: a docstring saying what it owns and must not do"


def test_imports_point_down_the_package_order():
  """Every import across packages, lazy and type-only ones included, goes to a lower level: no circle can cross packages."""
  for m, deps in graph().items():
    for d in deps:
      if package(d) == package(m): continue
      assert LEVELS[package(d)] < LEVELS[package(m)], f"tgviz.{m} imports tgviz.{d}: {package(d)} is not below {package(m)}"


def test_inside_a_package_imports_form_a_dag_but_named_parent_child_types():
  g = graph()
  inside = {m: {d for d in deps if package(d) == package(m) and (m, d) not in PARENT_CHILD} for m, deps in g.items()}
  state: dict[str, str] = {}
  def visit(n: str, path: list[str]) -> None:
    if state.get(n) == "done": return
    assert state.get(n) != "open", f"import cycle: {' -> '.join([*path, n])}"
    state[n] = "open"
    for d in sorted(inside[n]): visit(d, [*path, n])
    state[n] = "done"
  for n in sorted(inside): visit(n, [])
  for (child, parent), why in PARENT_CHILD.items():
    assert parent in g[child] and child in g[parent], f"{child} <-> {parent} is no circle any more: drop it ({why})"
    runtime = {i.removeprefix("tgviz.") for i in imports(modules()[child], type_only=False)}
    assert parent not in runtime, f"{child} imports {parent} for more than its types"


def test_the_house_test_sees_subpackages_type_only_and_lazy_imports(tmp_path):
  src = tmp_path / "m.py"
  src.write_text("import os\ndef f():\n  from tgviz.trace.trace import Trace\nif TYPE_CHECKING:\n  from tgviz.api import Step\n")
  assert {"tgviz.trace.trace", "tgviz.api"} <= imports(src) and "tgviz.api" not in imports(src, type_only=False)
  assert {"trace.kernel", "draw.dot", "bridge.replay", "views.messages", "work.threads"} <= set(modules())
  assert tgviz_imports(src, set(modules())) == {"trace.trace", "api"}


def test_only_the_bridge_knows_tinygrad():
  for m, path in modules().items():
    if package(m) == "bridge": continue
    assert not any(i == "tinygrad" or i.startswith("tinygrad.") for i in imports(path)), m
    code = code_words(path)
    for word in TINYGRAD_NAMES: assert not any(word in w for w in code), (m, word)


def test_background_work_only_in_work():
  for m, path in modules().items():
    if package(m) == "work" or m == "bridge.parallel": continue
    used = code_words(path) & set(BACKGROUND)
    assert not used, f"tgviz.{m} starts threads or processes itself ({', '.join(sorted(used))}): use tgviz.work"


def test_the_bridge_inside_imports_one_way_env_first():
  """Inside the bridge, imports run one way: env (tinygrad's version and device set-up) at the bottom, then graphs (walking
  graphs), uops, packing
  (a report's node tables packed), access, rebuilt_dtypes (what the report's page derives dtypes from), replay, events,
  records (every record type but the scheduler's decisions), decisions (those), recording (records with the UOp
  table), births, safe_pickle, recorders, quiet (the compilers' warnings), origins (what each UOp came from), linear,
  attempts and spans (patches), machine (its ListingBuilds is a recorders.Patch), opts, beam, profiler, peaks,
  schedule, retime, rerun, parallel, capture and files; the package's __init__ only re-exports, importing env first."""
  bridge = {m.split(".")[1]: p for m, p in modules().items() if package(m) == "bridge"}
  order = ["env", "graphs", "uops", "packing", "access", "rebuilt_dtypes", "replay", "events", "records", "decisions", "recording", "births",
           "safe_pickle", "recorders",
           "quiet", "origins", "linear", "attempts", "spans", "machine", "opts", "beam", "profiler", "peaks", "schedule", "retime", "rerun",
           "parallel", "capture", "files", "__init__"]
  assert sorted(order) == sorted(bridge), "a bridge module this test does not place"
  for name, path in bridge.items():
    deps = {i.split(".")[2] for i in imports(path) if i.startswith("tgviz.bridge.") and i.split(".")[2] in bridge} - {name}
    assert all(order.index(d) < order.index(name) for d in deps), (name, deps)
  init = ast.parse(bridge["__init__"].read_text())
  first = next(n for n in init.body if isinstance(n, (ast.Import, ast.ImportFrom)))
  assert isinstance(first, ast.ImportFrom) and first.module == "tgviz.bridge" and [a.name for a in first.names] == ["env"]
  assert all(isinstance(n, (ast.Import, ast.ImportFrom, ast.Assign)) or (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))
             for n in init.body), "the bridge's __init__ holds no logic"


@pytest.mark.parametrize("module", sorted(modules()))
def test_small_modules_that_say_what_they_own(module):
  path = modules()[module]
  rel = path.relative_to(PKG).as_posix()
  n = len(path.read_text().splitlines())
  if rel in BIGGER: assert n > MAX_LINES, f"{rel} is small again: take it out of BIGGER"
  else: assert n <= MAX_LINES, f"{rel} has {n} lines: split it along a seam, or name it in BIGGER with the reason"
  doc = ast.get_docstring(ast.parse(path.read_text())) or ""
  assert doc or module == "__main__", f"{rel} opens with a docstring saying what it owns"
  if package(module) == "bridge":
    assert len(doc.splitlines()) >= 3, f"{rel} opens with a docstring of a few lines saying what it owns and must not do"


def test_the_readmes_package_table_is_the_code():
  """README's "The code" table: every package with its layer, and nothing else."""
  readme = (PKG.parent / "README.md").read_text()
  start = readme.index("\n## The code\n")
  rows = re.findall(r"^\| (`tgviz/[^|]+`) \| (\d+) \|", readme[start:readme.index("\n## ", start + 1)], re.M)
  listed: dict[str, int] = {}
  for names, level in rows:
    for name in re.findall(r"`tgviz/([\w/.]+?)(?:/|\.py)`", names): listed[name] = int(level)
  assert listed == {p: lvl for p, lvl in LEVELS.items() if p not in ("__init__", "__main__")}, listed
