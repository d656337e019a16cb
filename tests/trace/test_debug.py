"""`tgviz show`: tinygrad's DEBUG listings rebuilt from a trace, held to what tinygrad itself prints at each DEBUG level
for the same program (the tutorial, the MNIST training step), times and colours aside; its JSON lines read back into the
same text; its selections (kernel, step, the user's line) and search."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from tinygrad.helpers import ansistrip

from tgviz import cli
from tgviz.trace import debug

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "scripts"
ENV = {**os.environ, "PARALLEL": "0"}  # (compiles in the process, in one order, both sides)
# tinygrad's DEBUG=2 line of a launch, to its memory figure (what follows, the times and GFLOP/s, differs from run to run)
LAUNCH = re.compile(r"^\*\*\* (\S+)\s+(\d+) (.+?)\s+arg\s+(\d+) mem\s+([\d.]+) GB")
OPTS = re.compile(r"^\S+\s+opts: \(")
SIGNATURE = re.compile(r"^(?:__kernel )?void (\w+)\(")  # a C-style kernel's first line
# the plain run: the script, then each compiled program's linearized UOps as tinygrad's print_uops lists them
PLAIN = """
import runpy, sys, tgviz
runpy.run_path(sys.argv[1], run_name="__main__")
from tinygrad.codegen import to_program_cache
from tinygrad.helpers import Context
from tinygrad.uop.ops import Ops
from tinygrad.uop.render import print_uops
print("=== programs")
with Context(DEBUG=0):
  for prg in to_program_cache.values():
    lin = next(s for s in prg.src if s.op is Ops.LINEAR)
    print("=== uops", prg.src[0].arg.function_name)
    print_uops(list(lin.src))
"""
CAPTURE = "import runpy, sys, tgviz\nwith tgviz.capture() as t: runpy.run_path(sys.argv[1], run_name='__main__')\nt.save(sys.argv[2])\n"


def normal(line: str) -> str:
  """A line with its colours off and a launch line cut after its memory figure."""
  line = ansistrip(line).rstrip()
  return "*** " + " ".join(m.groups()) if (m := LAUNCH.match(line)) else line


def code(lines: list[str], launches: list[str]) -> list[str]:
  """The kernels whose code the lines hold, by name, in order: those launched (tinygrad also prints its CPU device's own
  helper programs, which are not the program's kernels)."""
  launched = {x.split()[3] for x in launches}  # "*** CL 1 E_4 1 0.00": its name
  return [m.group(1) for x in lines if (m := SIGNATURE.match(x)) and m.group(1) in launched]


def is_subsequence(short: list[str], long: list[str]) -> bool:
  it = iter(long)
  return all(any(x == y for y in it) for x in short)


@pytest.fixture(scope="module", params=["tutorial_conv2d.py", "tutorial_arange.py", "mnist_train_step.py"])
def program(request, tmp_path_factory):
  """(tinygrad's own DEBUG=5 output of the script, in a fresh process; a trace of it, taken in another; the script)."""
  script, tmp = EXAMPLES / request.param, tmp_path_factory.mktemp("show")
  plain = subprocess.run([sys.executable, "-c", PLAIN, str(script)], env={**ENV, "DEBUG": "5"}, capture_output=True, text=True, timeout=600)
  assert plain.returncode == 0, plain.stderr[-3000:]
  traced = subprocess.run([sys.executable, "-c", CAPTURE, str(script), str(tmp / "trace.tgviz")], env=ENV, capture_output=True, text=True,
                          timeout=600)
  assert traced.returncode == 0, traced.stderr[-3000:]
  return plain.stdout, tmp / "trace.tgviz", script


def show(capsys, *args: str) -> str:
  assert cli.main(["show", *args]) == 0
  return capsys.readouterr().out


@pytest.mark.slow
def test_show_prints_what_tinygrads_debug_levels_print(program, capsys):
  out, trace, _ = program
  theirs = [normal(x) for x in out.split("=== programs")[0].splitlines()]
  their_launches = [x for x in theirs if x.startswith("*** ")]
  assert their_launches, out[:2000]
  for level in (2, 3, 4, 5):
    ours = [normal(x) for x in show(capsys, str(trace), "--debug", str(level)).splitlines() if not x.startswith("--- kernel ")]
    # every line tinygrad prints at this level, in its order (tinygrad prints more besides: its schedules, its devices)
    assert is_subsequence(ours, theirs), (level, [x for x in ours if x not in theirs][:5])
    assert [x for x in ours if x.startswith("*** ")] == their_launches  # each launch: device, number, name, buffers, memory
    if level >= 3: assert [x for x in ours if OPTS.match(x)] == [x for x in theirs if OPTS.match(x)]
    if level >= 4: assert code(ours, their_launches) == code(theirs, their_launches) and code(ours, their_launches)
    if level >= 5: assert sum(x.startswith("ast = ") for x in ours) == len(code(theirs, their_launches))  # each kernel's AST
  # 6: each kernel's linearized program, as tinygrad's print_uops lists the program it compiled
  programs = {}
  for block in out.split("=== uops ")[1:]:
    name, _, listing = block.partition("\n")
    programs.setdefault(name, []).append([ansistrip(x).rstrip() for x in listing.splitlines()])
  kernels = [json.loads(x) for x in show(capsys, str(trace), "--debug", "6", "--json").splitlines()]
  kernels = [r for r in kernels if r["type"] == "kernel"]
  assert kernels and len(kernels) == sum(len(v) for v in programs.values())
  for r in kernels: assert [x.rstrip() for x in r["uops"].splitlines()] in programs[r["name"]], r["label"]


@pytest.mark.slow
def test_show_json_reads_back_into_the_same_text_and_selects(program, capsys):
  _, trace, script = program
  for args in (["--debug", "6"], ["--debug", "3", "--step", "devectorize"], ["--search", "float"]):
    text = show(capsys, str(trace), *args)
    records = [json.loads(x) for x in show(capsys, str(trace), *args, "--json").splitlines()]
    assert records and "\n".join(debug.render(r) for r in records) + "\n" == text
  records = [json.loads(x) for x in show(capsys, str(trace), "--debug", "3", "--json").splitlines()]
  first = next(r for r in records if r["type"] == "kernel")
  for spec in (first["key"], first["label"], first["name"][:3] + "*"):  # by key, by display name, by glob
    picked = [json.loads(x) for x in show(capsys, str(trace), "--debug", "3", "--kernel", spec, "--json").splitlines()]
    assert first in picked and all(r["type"] in ("kernel", "launch") for r in picked)
    assert all(r["key"] == first["key"] for r in picked) or spec.endswith("*")
  if script.name == "mnist_train_step.py":  # which kernels came from line 26 (the loss), by the user's line
    loss = [json.loads(x) for x in show(capsys, str(trace), "--kernel", "mnist_train_step.py:26", "--debug", "3", "--json").splitlines()]
    names = {r["label"] for r in loss if r["type"] == "kernel"}
    from tgviz import load
    want = {k.display_name for k in load(trace).kernels if any(o.line == 26 and o.file.endswith(script.name) for o in k.origins)}
    assert names == want and names


def test_show_runs_a_script_and_keeps_its_output_off_stdout(tmp_path, capfd):
  script = tmp_path / "small.py"
  script.write_text("from tinygrad import Tensor\nprint('the script speaks')\n(Tensor.ones(4, 4).contiguous() * 2).sum(1).realize()\n")
  assert cli.main(["show", str(script), "--debug", "4"]) == 0
  out, err = capfd.readouterr()
  assert "the script speaks" in err and "the script speaks" not in out and "tgviz: running" in err
  lines = out.splitlines()
  assert [x for x in lines if x.startswith("*** ")] and any(x.startswith("__kernel void") for x in lines)
  assert cli.main(["show", str(script), "--kernel", "no_such_kernel"]) == 2
  assert "no kernel 'no_such_kernel'" in capfd.readouterr().err
  assert cli.main(["show", str(tmp_path / "missing.tgviz")]) == 2
