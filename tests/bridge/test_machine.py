"""A kernel below its source: the linearized program (kernel.program_uops, tinygrad's print_uops listing) and the machine
code (kernel.disassembly), each checked against tinygrad's own functions run on the same kernel outside the capture."""
import contextlib
import io
import re

import pytest
from tinygrad import Device
from tinygrad.codegen import to_program
from tinygrad.helpers import ansistrip
from tinygrad.uop.ops import Ops
from tinygrad.uop.render import print_uops

import tgviz
from tgviz import bridge as tg

needs_objdump = pytest.mark.skipif(__import__("shutil").which("objdump") is None, reason="objdump (Debian's binutils) is missing")


def _tinygrads_program(kernel):
  """The same kernel compiled by tinygrad itself outside any capture: its AST (the kernel's first graph) through to_program."""
  ast = kernel.group.steps[0].before()
  return to_program(ast, Device[kernel.device].renderer)


def test_program_uops_are_what_the_renderer_consumed(tutorial_trace):
  conv = next(k for k in tutorial_trace.kernels if k.name == "r_2_2_2_2")
  uops = conv.program_uops
  assert uops and uops[-1].op is Ops.SINK and any(u.op is Ops.STORE for u in uops)
  prg = _tinygrads_program(conv)
  lin = next(s for s in prg.src if s.op is Ops.LINEAR)
  assert [u.key for u in uops] == [u.key for u in lin.src]  # the very list tinygrad's renderer gets
  out = io.StringIO()
  with contextlib.redirect_stdout(out): print_uops(list(lin.src))
  assert conv.print_uops() == ansistrip(out.getvalue()).rstrip("\n")
  rows = conv.print_uops().splitlines()
  assert len(rows) == len(uops) and [int(r.split()[0]) for r in rows] == list(range(len(uops)))
  # every row's UOp has the code lines it is behind (the line map), and those lines hold it
  numbered = [u for u in uops if conv.line_numbers(u)]
  assert len(numbered) > len(uops) // 2
  for u in numbered: assert all(u in conv.lines[n - 1] for n in conv.line_numbers(u))


@needs_objdump
def test_cpu_disassembly_is_objdumps(cpu_trace):
  conv = next(k for k in cpu_trace.kernels if k.name == "r_2_2_2_2")
  assert conv.device == "CPU" and conv.disassembly_note is None
  lib = next(s.arg for s in _tinygrads_program(conv).src if s.op is Ops.BINARY)
  out = io.StringIO()
  with contextlib.redirect_stdout(out): Device["CPU"].renderer.compiler.disassemble(lib)
  def body(text: str) -> list[str]:  # objdump's listing without its header naming the temporary file
    return [ln for ln in text.splitlines() if re.match(r"^\s+[0-9a-f]+:\t", ln)]
  assert body(conv.disassembly) == body(ansistrip(out.getvalue())) and len(body(conv.disassembly)) > 10
  assert "r_2_2_2_2" in conv.disassembly


def test_devices_without_machine_code_say_why(tutorial_trace):
  conv = next(k for k in tutorial_trace.kernels if k.name == "r_2_2_2_2")
  assert conv.device == "CL" and conv.disassembly == ""
  assert "no disassembler" in conv.disassembly_note and "CPU" in conv.disassembly_note
  with tgviz.capture(device="NULL:CUDA:sm_90") as trace:
    from tinygrad import Tensor
    Tensor.arange(9).reshape(1, 1, 3, 3).float().conv2d(Tensor.ones(1, 1, 2, 2)).realize()
  null = next(k for k in trace.kernels if k.name.startswith("r_"))
  assert null.disassembly == "" and "NULL device" in null.disassembly_note
  assert null.program_uops and "__global__" in null.source
  assert tg.disassemble("CPU", None)[1].startswith("no binary was recorded")


@needs_objdump
def test_debug_listing_is_built_once_per_kernel(cpu_trace, monkeypatch):
  """The -g build's objdump listing (the asm tab's line table) is kept in tinygrad's disk cache beside its binaries: the
  same kernel's is not built again (here, with no clang to be found), a changed source's is."""
  conv = next(k for k in cpu_trace.kernels if k.name == "r_2_2_2_2")
  listing, why = tg.debug_listing("CPU", conv.source)
  assert why is None and "r_2_2_2_2" in listing and re.search(r"^\S+:\d+", listing, re.M)  # objdump -l's line markers
  monkeypatch.setenv("PATH", "")
  from tgviz.bridge import machine
  machine._listings.clear()  # (the listings this process has had: the disk cache is what answers a new process)
  assert tg.debug_listing("CPU", conv.source) == (listing, None)
  listing2, why2 = tg.debug_listing("CPU", conv.source + "\n// another kernel\n")
  assert listing2 == "" and why2 is not None and why2.startswith("compiling the kernel again with -g for its line info failed")


@needs_objdump
def test_a_runs_listings_are_built_as_its_kernels_compile(monkeypatch):
  """tgviz run's report shows every kernel's asm tab with line info: under ListingBuilds each kernel the CPU device
  compiles has its -g build started in the background at once, and debug_listing takes that build (here with no clang
  to be found by then) rather than building it again; a kernel compiled outside gets none started."""
  from tgviz.bridge import machine
  monkeypatch.setattr(machine, "_cached", lambda cmd, source: None)  # as on a first run: tinygrad's disk cache has none
  from tinygrad import Tensor
  with tg.ListingBuilds(), tgviz.capture(device="CPU") as trace: (Tensor([[1.0, 2, 3], [4, 5, 6]], device="CPU") * 3).sum(1).numpy()
  kernel = next(k for k in trace.kernels if k.name.startswith("r_"))
  started = {source: build for (_, source), build in machine._started.items()}
  assert started[kernel.source].result()[1] is None  # built (the background thread's clang ran: it had PATH)
  for build in started.values(): build.result()  # every build done before PATH goes: none of them races the hiding
  with monkeypatch.context() as hidden:  # clang hidden only for this (the capture below compiles with it)
    hidden.setenv("PATH", "")
    listing, why = tg.debug_listing("CPU", kernel.source)
  assert why is None and kernel.name in listing and re.search(r"^\S+:\d+", listing, re.M)
  assert kernel.source not in {source for _, source in machine._started}  # taken once
  with tgviz.capture(device="CPU") as outside: (Tensor([[1.0, 2, 3, 4], [4, 5, 6, 7]], device="CPU") * 5).sum(1).numpy()
  assert outside.kernels and not {k.source for k in outside.kernels} & {source for _, source in machine._started}
