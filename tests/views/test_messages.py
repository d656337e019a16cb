"""One schema (tgviz/views/messages.py): js/messages.js is written from it and must equal what it writes now, and the
messages Python really sends have the fields the schema gives them."""
import ast
from pathlib import Path

import pytest

from tgviz.notebook.widget import TraceWidget
from tgviz.views import messages as M
from tgviz.views import program as PV
from tgviz.views import protocol as P
from tgviz.views import run as runview
from tgviz.views import whatif as W
from tgviz.views.assets import static_file

MESSAGES = static_file("messages.js")


def test_js_messages_are_written_from_the_python_schema():
  assert MESSAGES.read_text() == M.jsdoc(), "js/messages.js is stale: run bash scripts/messages.sh"


@pytest.mark.parametrize("change", ["rename", "optional"])
def test_a_field_changed_on_one_side_only_fails(change):
  """What the test above catches: a field renamed (or made optional) in the Python, the JS left as it was."""
  text = Path(M.__file__).read_text()
  edited = text.replace("  other_key: str", "  other_node: str") if change == "rename" else \
    text.replace("  other_key: str", "  other_key: NotRequired[str]")
  assert edited != text
  before, after = M.jsdoc(text), M.jsdoc(edited)
  assert before == MESSAGES.read_text() != after
  assert ("other_node:string" if change == "rename" else "other_key?:string") in after


def fields(cls: type) -> tuple[set[str], set[str]]:
  """(required, all) field names of a TypedDict of messages.py, NotRequired read from its source."""
  tree = next(n for n in ast.parse(Path(M.__file__).read_text()).body if isinstance(n, ast.ClassDef) and n.name == cls.__name__)
  every = {f.target.id: ast.unparse(f.annotation) for f in tree.body if isinstance(f, ast.AnnAssign) and isinstance(f.target, ast.Name)}
  return {k for k, a in every.items() if not a.startswith("NotRequired")}, set(every)


def conforms(msg: dict, cls: type) -> None:
  required, every = fields(cls)
  assert required <= msg.keys() <= every, (cls.__name__, sorted(msg.keys() ^ every))


def test_the_messages_sent_have_the_schemas_fields(tutorial_trace):
  trace = tutorial_trace
  key = P.first_selection(trace)
  pic = P.picture_message(trace, key)
  conforms(pic, M.PictureMsg)
  conforms(pic["info"], M.StepInfo)
  assert pic["kernel"] is not None
  conforms(pic["kernel"], M.KernelInfo)
  for o in pic["kernel"]["origins"]: conforms(o, M.OriginInfo)
  step = P.step_of(trace, key)
  conforms(P.match_info(step, 0) if step.matches else P.match_info(next(s for s in trace.steps if s.matches), 0), M.MatchInfo)
  node = P.node_message(trace, key, None, P.DRAWN.findall(pic["svg"])[0])
  conforms(node, M.NodeMsg)
  for e in node["history"]: conforms(e, M.HistoryEvent)
  rules = P.rules_message(trace)
  conforms(rules, M.RulesMsg)
  conforms(rules["rules"][0], M.RuleInfo)
  for g in P.tree(trace):
    conforms(g, M.TreeGroup)
    for s in g["steps"]: conforms(s, M.TreeStep)
  for row in P.kernel_rows(trace): conforms(row, M.KernelRow)
  run = runview.run_message(trace)
  conforms(run, M.RunMsg)
  for part, cls in (("timeline", M.TimelineData), ("memory", M.MemoryData), ("roofline", M.RooflineData)): conforms(run[part], cls)
  kernel = next(k for k in trace.kernels if k.source)
  conforms(PV.uops_message(kernel), M.UopsMsg)
  conforms(PV.asm_message(kernel), M.AsmMsg)
  for info in W.state(trace).values(): conforms(info, M.OptsInfo)
  widget = TraceWidget(trace)
  widget.wait()
  conforms(widget.kept_picture, M.PictureMsg)
