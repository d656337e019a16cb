"""The shape of the code: imports form a DAG (lazy imports included), and only the bridge package (tgviz/bridge/) knows tinygrad."""
import ast
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "tgviz"
MODULES = {p.stem: p for p in PKG.glob("*.py")}
BRIDGE = {p.stem: p for p in (PKG / "bridge").glob("*.py")}  # one layer for the rest of tgviz
# names of tinygrad's internals that only the bridge may spell out
TINYGRAD_NAMES = ("linearize/render", "View Base AST", "View Program", "OpenCLRenderer", "ProgramInfo", "function_name",
                  "REWRITE_ERROR", "uop_fields", "tracked_ctxs")


def _type_checking_block(node: ast.AST) -> bool:
  return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def imports(path: Path) -> set[str]:
  """Every module a file imports, at top level or inside functions, except under `if TYPE_CHECKING:`."""
  out: set[str] = set()
  def visit(node: ast.AST) -> None:
    if _type_checking_block(node): return
    if isinstance(node, ast.Import): out.update(a.name for a in node.names)
    elif isinstance(node, ast.ImportFrom) and node.module:
      out.add(node.module)
      out.update(f"{node.module}.{a.name}" for a in node.names)  # `from tgviz import model` imports tgviz.model
    for child in ast.iter_child_nodes(node): visit(child)
  visit(ast.parse(path.read_text()))
  return out


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


def graph() -> dict[str, set[str]]:
  """tgviz module -> the tgviz modules it imports (the package itself, tgviz/__init__, is the top)."""
  out = {}
  for name, path in MODULES.items():
    deps = {i.split(".")[1] for i in imports(path) if i.startswith("tgviz.") and i.split(".")[1] in {*MODULES, "bridge"}}
    out[name] = deps - {name}
  out["bridge"] = {d for path in BRIDGE.values() for i in imports(path) if i.startswith("tgviz.") and (d := i.split(".")[1]) in MODULES}
  return out


def test_imports_form_a_dag():
  g = graph()
  order: list[str] = []
  state: dict[str, str] = {}
  def visit(n: str, path: list[str]) -> None:
    if state.get(n) == "done": return
    assert state.get(n) != "open", f"import cycle: {' -> '.join([*path, n])}"
    state[n] = "open"
    for d in sorted(g[n]): visit(d, [*path, n])
    state[n] = "done"
    order.append(n)
  for n in sorted(g): visit(n, [])
  assert "__init__" not in {d for deps in g.values() for d in deps}, "nothing imports the package back"
  # the layers, bottom up
  pos = {n: i for i, n in enumerate(order)}
  for low, high in [("bridge", "steps"), ("steps", "model"), ("model", "comparison"), ("comparison", "compare_view"), ("model", "picture"),
                    ("picture", "protocol"), ("picture", "compare_view"), ("compare_view", "compare_widget"), ("widget", "compare_widget"),
                    ("protocol", "widget"), ("protocol", "report"), ("bridge", "asm"), ("asm", "model"), ("protocol", "programview"),
                    ("programview", "widget"), ("programview", "report"), ("protocol", "runview"), ("runview", "widget"),
                    ("runview", "report"), ("report", "api"), ("compare_view", "api"), ("widget", "magic"),
                    ("compare_widget", "magic"), ("api", "cli"), ("compare_view", "whatif"), ("whatif", "api"),
                    ("ranks", "layout"), ("api", "early"), ("report", "early"), ("early", "cli"), ("remembered", "asm"),
                    ("remembered", "highlight")]:
    assert pos[low] < pos[high], (low, high, order)
  assert not g["graph"] and g["bridge"] <= {"graph"}


def test_only_the_bridge_knows_tinygrad():
  assert BRIDGE, "the bridge package is there"
  for name, path in MODULES.items():
    assert not any(i == "tinygrad" or i.startswith("tinygrad.") for i in imports(path)), name
    code = code_words(path)
    for word in TINYGRAD_NAMES: assert not any(word in w for w in code), (name, word)


def test_the_dag_sees_lazy_imports(tmp_path):
  src = tmp_path / "m.py"
  src.write_text("import os\ndef f():\n  from tgviz.model import Trace\nif TYPE_CHECKING:\n  from tgviz.api import Step\n")
  found = imports(src)
  assert "tgviz.model" in found and "tgviz.api" not in found


def test_the_bridge_inside_imports_one_way_env_first():
  """Inside the bridge too, imports run one way: env (tinygrad's version and device set-up) at the bottom, then uops,
  replay, page_replay, events, records, safe_pickle, recorders, machine (its ListingBuilds is a recorders.Patch), opts,
  beam, profiler, peaks, parallel,
  capture and files; the package's __init__ only re-exports, importing env first."""
  inside = {name: {i.split(".")[2] for i in imports(path) if i.startswith("tgviz.bridge.") and i.split(".")[2] in BRIDGE} - {name}
            for name, path in BRIDGE.items()}
  order = ["env", "uops", "replay", "page_replay", "events", "records", "safe_pickle", "recorders", "machine", "opts", "beam", "profiler", "peaks",
           "parallel", "capture",
           "files",
           "__init__"]
  assert sorted(order) == sorted(BRIDGE), "a bridge module this test does not place"
  for name, deps in inside.items():
    assert all(order.index(d) < order.index(name) for d in deps), (name, deps)
  first = next(n for n in ast.parse(BRIDGE["__init__"].read_text()).body if isinstance(n, (ast.Import, ast.ImportFrom)))
  assert isinstance(first, ast.ImportFrom) and first.module == "tgviz.bridge" and [a.name for a in first.names] == ["env"]
  init = ast.parse(BRIDGE["__init__"].read_text())
  assert all(isinstance(n, (ast.Import, ast.ImportFrom, ast.Assign)) or (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))
             for n in init.body), "the bridge's __init__ holds no logic"


def test_small_modules_that_say_what_they_own():
  for path in [*PKG.glob("*.py"), *BRIDGE.values()]:
    n = len(path.read_text().splitlines())
    assert n <= 420, f"{path.relative_to(PKG)} has {n} lines: split it by concern"
  for name, path in BRIDGE.items():
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    assert len(doc.splitlines()) >= 3, f"bridge/{name}.py opens with a docstring of a few lines saying what it owns and must not do"
