"""Pictures of plain graphs (tgviz.draw), on hand-built graphs: no tinygrad, no trace. Escaping, big graphs cut to a
focused view, the layout engine's errors, and a layout cancelled when a newer request supersedes it."""
import threading
import xml.etree.ElementTree as ET

import pytest

from tgviz.draw.dot import layout
from tgviz.draw.engine import DEFAULT_TIMEOUT, LayoutCancelled, LayoutError, engine, run_dot, set_engine
from tgviz.draw.graph import Graph, Node
from tgviz.draw.scene import DEFAULT_MAX_NODES, cap_fan_in, focus, make_scene
from tgviz.draw.svg import scene_svg
from tgviz.work.threads import Worker

NS = "{http://www.w3.org/2000/svg}"


def test_hostile_labels_are_escaped():
  evil = 'x<script>alert("1")</script>]]> & \' "q" \x1b[31m'
  g = Graph({"a": Node("a", "CUSTOM", "other", ("CUSTOM", evil)), "b": Node("b", "SINK<>", "other", ("SINK", evil))},
            (("a", "b"),), "b")
  scene = make_scene(g, g, set(), set(), {})
  svg = scene_svg(scene, layout(scene), ("before",), f"title {evil}", message=evil)
  root = ET.fromstring(svg)  # valid XML
  assert not root.findall(f".//{NS}script")
  texts = ["".join(t.itertext()) for t in root.iter(f"{NS}text")]
  assert any('x<script>alert("1")</script>]]> & \' "q" [31m' in t for t in texts)


def _big_graph(n: int) -> Graph:
  nodes = {f"k{i}": Node(f"k{i}", "ADD", "alu", ("ADD", f"node {i}", "float")) for i in range(n)}
  edges = tuple((f"k{i // 2}", f"k{i}") for i in range(1, n)) + tuple((f"k{i}", f"k{n - 1}") for i in range(0, n - 1, 7))
  return Graph(nodes, edges, f"k{n - 1}")


def test_huge_graph_degrades_to_a_partial_picture_in_time():
  g = _big_graph(3000)
  scene = make_scene(g, g, added=set(), removed=set(), changed={"k2000": "k2000"})
  focused = focus(cap_fan_in(scene), DEFAULT_MAX_NODES)
  svg = scene_svg(focused, layout(focused, timeout=DEFAULT_TIMEOUT), ("before", "after"), "big", "partial")
  assert focused.partial and focused.total == 3000 and len(focused.nodes) <= DEFAULT_MAX_NODES
  assert "k2000" in focused.nodes and "hidden-count" in svg
  ET.fromstring(svg)


def test_missing_engine_is_a_clear_error(monkeypatch):
  monkeypatch.setenv("PATH", "/nonexistent")
  with pytest.raises(LayoutError, match=r"pip install graphviz-pure.*apt-get install graphviz"):
    set_engine("no-such-dot")
  set_engine(None)


def test_a_running_layout_is_cancelled_by_a_newer_request():
  """The widgets' worker: a newer picture supersedes the one being laid out, whose dot process is killed."""
  scene = make_scene(_big_graph(1500), _big_graph(1500), set(), set(), {})
  started = threading.Event()
  def slow() -> object:
    started.set()
    return layout(scene, timeout=600)   # (dot takes many seconds on 1,500 nodes: it is killed long before)
  with Worker("test-layout") as worker:
    older = worker.submit(slow, kind="picture")
    started.wait()
    newer = worker.submit(lambda: "newer", kind="picture")
    with pytest.raises(LayoutCancelled): older.result()
    assert newer.result() == "newer"


@pytest.fixture
def crashing_engine(tmp_path):
  """A layout engine that dies of a signal, as a crashing dot does."""
  exe = tmp_path / "crashing-dot"
  exe.write_text("#!/bin/sh\nkill -SEGV $$\n")
  exe.chmod(0o755)
  set_engine(str(exe))
  yield exe
  set_engine(None)


def test_a_crashing_engine_is_an_error_not_a_cancel(crashing_engine):
  with pytest.raises(LayoutError, match="crashed") as e: run_dot("digraph { a -> b }")
  assert not isinstance(e.value, LayoutCancelled)


def test_a_layout_asked_again_is_not_made_again(tmp_path):
  """dot is deterministic: the same DOT text (a kernel's landmarks where nothing changed in between, kernels of one AST)
  is laid out once, and the engine not run again for it; another text, or another engine, is run."""
  real, runs = engine()[0], tmp_path / "runs"
  exe = tmp_path / "counting-dot"
  exe.write_text(f"#!/bin/sh\necho run >> {runs}\nexec {real} \"$@\"\n")
  exe.chmod(0o755)
  set_engine(str(exe))
  try:
    text = f"digraph {{ counted_{tmp_path.name} -> b }}"
    first = run_dot(text)
    assert run_dot(text) == first and "counted_" in first
    assert runs.read_text().count("run") == 1
    run_dot(text.replace("-> b", "-> c"))
    assert runs.read_text().count("run") == 2
  finally: set_engine(None)
  assert runs.read_text().count("run") == 2
