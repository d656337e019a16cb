"""The run message (tgviz.views.run): what the timeline, memory and roofline tabs draw, against trace.timeline(),
trace.memory() and trace.roofline(); sent by the widget when asked, embedded in the report, compact for a long run."""
import json
import re
import statistics
import time

from helpers import kernel_launches
from workloads import jit_loop, jit_train

import tgviz
from tgviz.notebook.widget import TraceWidget
from tgviz.report.contents import unchunk
from tgviz.trace.run import Launch, Timeline
from tgviz.trace.units import copy_name
from tgviz.views import protocol as P
from tgviz.views import run as runview


def test_the_run_message_is_the_runs_views(tutorial_trace):
  msg = runview.run_message(tutorial_trace)
  tl, mem, t = tutorial_trace.timeline(), tutorial_trace.memory(), msg["timeline"]
  assert msg["kernels"] == [[k.display_name, P.step_key(k.group.steps[0])] for k in tutorial_trace.kernels]
  columns = ("lane", "name", "kind", "start", "dur", "kernel", "jit", "replay")
  assert all(len(t[c]) == len(tl) for c in columns) and len(tl) > 0
  assert t["kind"].count(runview.KINDS.index("kernel")) == kernel_launches(tutorial_trace)
  for i, x in enumerate(tl):  # each launch as trace.timeline() has it, its kernel by index
    # (tinygrad's names; a copy's bytes told by tgviz's one rule: "copy 16 B PYTHON <- CL", not "copy       16 B,  ...")
    assert (t["lanes"][t["lane"][i]], t["names"][t["name"][i]], t["kinds"][t["kind"][i]]) == (x.lane, copy_name(x.name, x.nbytes), x.kind)
    assert t["start"][i] == round(x.start_us, 3) and t["dur"][i] == (round(x.duration_us, 3) if x.duration_us is not None else None)
    assert (msg["kernels"][t["kernel"][i]][0] if t["kernel"][i] >= 0 else None) == (x.kernel.display_name if x.kernel else None)
  kernels = [i for i, x in enumerate(tl) if x.kind == "kernel"]
  assert t["slowest"] == sorted(kernels, key=lambda i: -tl[i].duration_us)[:runview.SLOWEST]
  m = msg["memory"]
  assert m["peak"] == mem.peak > 0 and m["in_use"] == [e.in_use for e in mem.events] and len(m["t"]) == len(mem.events)
  assert [b["num"] for b in m["at_peak"]] == [r["num"] for r in mem.table()]
  b, launches = m["buffers"], {id(x): i for i, x in enumerate(tl)}
  assert [(n, b["devices"][d], b["dtypes"][dt], sz, nb, a, f) for n, d, dt, sz, nb, a, f in zip(
    b["num"], b["device"], b["dtype"], b["size"], b["nbytes"], b["alloc"], b["free"], strict=True)] == \
    [(r["num"], r["device"], r["dtype"], r["size"], r["nbytes"], r["alloc_us"], r["free_us"]) for r in (x.row() for x in mem.buffers)]
  assert b["writes"] == [[launches[id(x)] for x in bl.writes] for bl in mem.buffers] and any(b["reads"])
  assert [b["num"][i] if i >= 0 else None for i in m["buf"]] == [e.buffer.num if e.buffer in mem.buffers else None for e in mem.events]
  assert msg["estimates"] == [[k.flops, k.bytes] if k.flops is not None else None for k in tutorial_trace.kernels]
  assert all(msg["kernels"][k][0] in b["writers"] + b["readers"] for b in m["at_peak"] for k in b["kernels"])
  r = msg["roofline"]
  ran = [k for k in tutorial_trace.kernels if k.run_times]
  assert r["ran"] == len(ran) == len(r["points"]) and {msg["kernels"][p["kernel"]][0] for p in r["points"]} == {k.display_name for k in ran}
  assert r["peaks"]["CL"]["gflops"] > 0 and r["peaks"]["CL"]["ridge"] == r["peaks"]["CL"]["gflops"] / r["peaks"]["CL"]["gbs"]
  over = sum(p["gflops"] > r["peaks"][p["device"]]["gflops"] for p in r["points"] if p["device"] in r["peaks"])
  pk = r["peaks"]["CL"]
  assert over == 0 and (pk["gflops"] > pk["benchmark"]) == any("the compute roof is" in n for n in r["notes"])  # said where raised
  assert json.loads(json.dumps(msg)) == msg


def test_the_run_message_is_compact_for_a_long_tinyjit_loop():
  with tgviz.capture() as trace: jit_loop(500)
  msg = runview.run_message(trace, peaks=False)
  t = msg["timeline"]
  assert len(t["start"]) >= 1000 and len(t["names"]) < 10 and [r[1] for r in t["jit_runs"]] == list(range(499))
  # the launches' part (the compiler's spans are the compile's, as many for a loop of 5 steps as of 500)
  per_launch = len(json.dumps({k: v for k, v in msg.items() if k != "compile"}, separators=(",", ":"))) / len(t["start"])
  assert per_launch < 64, per_launch  # columns of numbers, each name once
  c = msg["compile"]
  per_span = len(json.dumps(c, separators=(",", ":"))) / len(c["start"])
  assert len(c["start"]) > 500 and per_span < 40, per_span


def test_the_widget_sends_the_run_when_asked(tutorial_trace, recording_comm):
  w = TraceWidget(tutorial_trace)
  w._on_msg(w, {"type": "run"}, [])
  deadline = time.time() + 60
  while not (sent := [m for m in w.comm.custom() if m["type"] == "run"]) and time.time() < deadline: time.sleep(0.05)
  assert sent and sent[0]["timeline"]["kind"].count(0) == kernel_launches(tutorial_trace)


def test_the_report_embeds_the_run(tutorial_trace, tmp_path):
  page = tutorial_trace.to_html(tmp_path / "index.html").read_text()
  blob = re.search(r'<script type="application/octet-stream" id="tgviz-run">([^<]+)</script>', page).group(1)
  assert unchunk(blob) == json.loads(json.dumps(runview.run_message(tutorial_trace)))
  assert ".tgviz-run >" in page  # its styles


def _launches(*spans: tuple[float, int]) -> Timeline:
  """A timeline of 10 µs kernel launches: for each (start, n) n of them from start (µs), 1 ms apart."""
  ls = [Launch("CL", "E_4", "kernel", start + i * 1e3, 10.0) for start, n in spans for i in range(n)]
  return Timeline(ls, ["CL"], duration_us=max(x.end_us for x in ls) + 1e3)


def test_the_timeline_opens_on_the_launches_no_wide_gap_splits():
  """The rule (tgviz.views.run.opening): a gap with no launch splits the launches where it is over 10 times their usual
  spacing and over two thirds of the stretch it is in; the part with more launches is kept (the later on a tie)."""
  one = runview.opening(_launches((0, 20), (1e6, 5)))  # a step, a 1 s compile, the loss read back
  assert (one["what"], one["first"], one["last"], one["start"], one["end"]) == ("launches", 0, 19, 0.0, 19010.0)
  assert one["gap_before"] is None and one["gap_after"] == 1e6 - 19010.0 and one["compiling_after"] is None  # no compile times given
  tie = runview.opening(_launches((0, 5), (1e6, 5)))
  assert (tie["first"], tie["last"], tie["gap_before"], tie["gap_after"]) == (5, 9, 1e6 - 4010.0, None)
  # launches sparse all along (a script's few realizes, each after its compile): no gap is wide, all of them open
  sparse = runview.opening(_launches((0, 1), (1e5, 1), (3e5, 1), (3.5e5, 1)))
  assert (sparse["first"], sparse["last"]) == (0, 3)
  # a gap wider than the rest but at the launches' usual spacing (two launches) is no compile
  two = runview.opening(_launches((0, 1), (1e5, 1)))
  assert (two["first"], two["last"]) == (0, 1)
  assert runview.opening(Timeline()) is None


def test_a_single_training_step_opens_on_its_launches_not_on_the_compile_after_them(mnist_trace):
  """The MNIST training step: its launches, then about a second with no launch (tinygrad compiling the loss's .item():
  the TINY lane's spans fill most of it), then the few launches that read the loss. All the launches' span would be
  mostly that gap, two slivers either side; the timeline opens on the step's launches, the gap and the loss's launches
  left out and said, each number as the trace's launches have it (their times tinygrad's profile events'). Where the
  gap is not wide by the rule (a loaded machine's launches as slow as the compile), it opens on all of them."""
  tl = mnist_trace.timeline()
  ls, o = tl.launches, runview.run_message(mnist_trace, peaks=False)["timeline"]["opening"]
  ends = [max(x.end_us for x in ls[:i]) for i in range(1, len(ls))]
  gaps = [x.start_us - e for x, e in zip(ls[1:], ends, strict=True)]
  cut = max(range(len(gaps)), key=gaps.__getitem__) + 1  # the first launch after the widest gap
  whole = ends[-1] - ls[0].start_us
  usual = statistics.median(gaps)
  if not (gaps[cut - 1] > runview.WIDE * usual and gaps[cut - 1] > runview.SHARE * whole):
    # a loaded machine's launches can take as long as the compile after them (there the gap was 53% of the span): no
    # gap is wide by the rule, and the timeline opens on all the launches, as the rule says
    assert (o["what"], o["first"], o["last"], o["gap_before"], o["gap_after"]) == ("launches", 0, len(ls) - 1, None, None), o
    return
  compiling = sum(max(0.0, min(ls[cut].start_us, s.start_us + s.time_us) - max(ends[cut - 1], s.start_us))
                  for s in mnist_trace.compile_times().spans if s.lane == "TINY" and s.depth == 0)
  assert compiling > gaps[cut - 1] / 2 and o["compiling_after"] == round(compiling, 3)  # tinygrad compiling, as the head says
  assert (o["what"], o["first"], o["last"]) == ("launches", 0, cut - 1) and cut > len(ls) / 2
  assert (o["start"], o["end"], o["gap_before"], o["gap_after"]) == (
    round(ls[0].start_us, 3), round(ends[cut - 1], 3), None, round(gaps[cut - 1], 3))
  # what opens: launches no wide gap splits (a loaded machine's pause may be long, but not wide by the rule)
  assert not [g for g in gaps[:cut - 1] if g > runview.WIDE * usual and g > runview.SHARE * (o["end"] - o["start"])], gaps[:cut - 1]


def test_a_tinyjit_training_loop_still_opens_on_its_replays():
  """A jitted loop opens on its replays (its steady state), its first call and the captured batch before them left out."""
  with tgviz.capture() as trace: jit_train(6)
  tl = trace.timeline()
  replays = [r for r in tl.jit_runs if r.replay > 0]
  o = runview.run_message(trace, peaks=False)["timeline"]["opening"]
  assert len(replays) == 4 and o["what"] == "replays" and o["first"] == replays[0].first
  assert (o["start"], o["end"]) == (round(replays[0].start_us, 3), round(max(r.end_us for r in replays), 3))
  assert o["last"] == len(tl) - 1 and o["gap_after"] is None and o["gap_before"] is not None
