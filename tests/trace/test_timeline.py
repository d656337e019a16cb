"""The run's timeline and memory (trace.timeline(), trace.memory()) against tinygrad's own figures: its kernel launches
(the kernel table's runs, the device times it measured), its memory counter (GlobalCounters.mem_used's high-water mark),
its profile events (ProfilePointEvent exec/alloc/free, ProfileRangeEvent, ProfileGraphEvent, ProfileDeviceEvent) as its
VIZ reads them (flatten_events, graph_layout), its profile.pkl, and TinyJit runs (the captured batch and its replays)."""
import gc
import os
import pickle
import re
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
import workloads
from helpers import counting_memory, kernel_launches, synthetic_events
from tinygrad import Tensor
from tinygrad.device import ProfileDeviceEvent
from tinygrad.helpers import GlobalCounters, ProfilePointEvent, ProfileRangeEvent, TracingKey, ansistrip
from tinygrad.viz import serve
from workloads import jit_loop

import tgviz
from tgviz.views import run as runview


def test_the_tutorials_launches_are_the_kernel_tables(tutorial_trace):
  tl = tutorial_trace.timeline()
  assert len(tl.kernels()) == kernel_launches(tutorial_trace) > 0
  assert "CL" in tl.lanes and tl.source == "capture" and tl.duration_us > 0
  starts = [x.start_us for x in tl]
  assert starts == sorted(starts) and all(0 <= s <= tl.duration_us for s in starts)
  for k in tutorial_trace.kernels:  # each launch is its kernel's, with the device time tinygrad measured for it
    mine = sorted(x.duration_us for x in tl.kernels() if x.kernel is k)
    assert mine == pytest.approx(sorted(t * 1e6 for t in k.run_times))
    assert all(x.name == k.name and x.lane == k.device for x in tl.kernels() if x.kernel is k)
  copies = [x for x in tl if x.kind == "copy"]
  assert copies and all(x.timed_by == "host" and x.duration_us > 0 and "<-" in x.name for x in copies)  # .tolist() reads back
  assert tl.table()[0].keys() >= {"lane", "name", "kind", "start_us", "duration_us", "kernel", "jit", "replay"}


@pytest.fixture(scope="module")
def train_step():
  """A model-sized training step captured, with tinygrad's own memory counter followed at every allocation."""
  start = GlobalCounters.mem_used
  with counting_memory() as marks, tgviz.capture() as trace: workloads.mlp_train()
  return trace, max(marks) - start, start


def test_a_buffer_from_before_the_run_freed_in_it_counts_as_tinygrad_counts_it():
  """A notebook's earlier tensor freed during the run: tinygrad stops counting it, and so does the peak."""
  old = Tensor.ones(1024).contiguous().realize()
  start = GlobalCounters.mem_used
  with counting_memory() as marks, tgviz.capture() as trace:
    del old
    gc.collect()
    (Tensor.ones(8192).contiguous() + 1).realize()
  mem = trace.memory()
  assert mem.peak == max(marks) - start > 0 and mem.freed_before == mem.freed == 1024 * 4
  assert sum(b.nbytes for b in mem.at_peak) == mem.peak + mem.freed_before


def test_a_training_steps_launches_and_memory_peak_are_tinygrads(train_step):
  trace, high_water, start = train_step
  assert len(trace.timeline().kernels()) == kernel_launches(trace) > 10
  mem = trace.memory()
  assert mem.peak == high_water > 0                          # GlobalCounters.mem_used's high-water mark, over the capture
  assert sum(mem.before.values()) == start
  assert sum(b.nbytes for b in mem.at_peak) == mem.peak + mem.freed_before  # earlier tests' buffers may be freed in the run
  assert mem.device_peaks["CL"] >= max(b.nbytes for b in mem.at_peak)
  biggest = max(mem.at_peak, key=lambda b: b.nbytes)
  assert biggest.dtype == "float" and biggest.nbytes == biggest.size * 4
  # each buffer is linked to the launches that wrote and read it, the kernels of the trace
  assert all(b.writes for b in mem.buffers if b.device == "CL")
  kernels = set(map(id, trace.kernels))
  assert all(id(k) in kernels for b in mem.buffers for k in b.kernels)
  assert any(b.reads for b in mem.at_peak)
  for b in mem.buffers:
    assert all(b.alive(x.start_us + (x.duration_us or 0)) or x.start_us <= b.alloc_us for x in b.writes)
  ins = [e.in_use for e in mem.events]
  # in use at the end: the run's buffers still alive, less those from before the run it freed (earlier tests' buffers)
  assert max(ins) == mem.peak and mem.events[-1].in_use == sum(b.nbytes for b in mem.buffers if b.free_us is None) - mem.freed
  assert mem.table()[0]["nbytes"] == biggest.nbytes
  # its copies from numpy, named with their bytes by tgviz's rule (tinygrad's own names say "copy   24.50 KB, ...")
  shown = [n for r in mem.table() for n in r["writers"] + r["readers"]] + runview.timeline_data(trace, {})["names"]
  copies = [n for n in shown if n.startswith("copy")]
  assert copies and all(re.fullmatch(r"copy [\d,.]+ (B|KiB|MiB|GiB) \S+ <- \S+", n) for n in copies), copies


def test_tinyjit_shows_its_captured_batch_once_and_marks_its_replays():
  with tgviz.capture() as trace: jit_loop(5)
  tl = trace.timeline()
  assert len(tl.kernels()) == kernel_launches(trace)
  assert tl.jits == ["jit_loop.<locals>.step"]
  assert [(r.jit, r.replay, r.launches) for r in tl.jit_runs] == [(0, 0, 2), (0, 1, 2), (0, 2, 2), (0, 3, 2)]  # the first call is no JIT run
  assert [x.replay for x in tl if x.jit is not None] == [0, 0, 1, 1, 2, 2, 3, 3]
  assert len(tl.without_replays()) == len(tl) - 6
  for r in tl.jit_runs:
    assert tl[r.first].replay == r.replay and r.start_us <= r.end_us


def test_graph_batches_on_a_null_device():
  """A NULL device batches a TinyJit's launches into graphs, as GPUs do: the batch is a launch and tinygrad's
  ProfileGraphEvent gives each launch inside it, linked to its kernel; nothing ran, so no time."""
  with tgviz.capture(device="NULL") as trace: jit_loop(3)
  tl = trace.timeline()
  batches = [x for x in tl if x.kind == "graph"]
  assert [(x.jit, x.replay) for x in batches] == [(0, 0), (0, 1)]
  inside = [x for x in tl if x.graph is not None]
  assert [(x.graph, x.replay) for x in inside] == [(0, 0), (0, 0), (1, 1), (1, 1)]
  assert all(x.kernel is not None and x.kernel.name == x.name and x.duration_us is None for x in inside)


def test_saved_and_loaded(tutorial_trace, train_step, tmp_path):
  for trace in (tutorial_trace, train_step[0]):
    back = tgviz.load(trace.save(tmp_path / "t.tgviz"))
    assert back.timeline().table() == trace.timeline().table()
    assert [b.row() for b in back.memory().buffers] == [b.row() for b in trace.memory().buffers]
    assert back.memory().peak == trace.memory().peak


def viz_peaks(events: list) -> dict[str, int]:
  """tinygrad's VIZ's memory peak per device (its get_profile: flatten_events, then graph_layout per device lane)."""
  diffs = {e.device: e.tdiff for e in events if isinstance(e, ProfileDeviceEvent)}
  lanes: dict[str, list] = {}
  for st, en, e in serve.flatten_events(events, diffs): lanes.setdefault(e.device, []).append((int(st), int(en), float(en - st), e))
  start, end = min(x[0] for v in lanes.values() for x in v), max(x[1] for v in lanes.values() for x in v)
  out = {}
  for dev, v in lanes.items():
    if not any(isinstance(e, ProfilePointEvent) and e.name == "alloc" for *_, e in v): continue
    peaks: list[int] = []
    serve.graph_layout(dev, sorted(v, key=lambda x: x[0]), start, end, peaks, {}, {})
    out[dev] = peaks[0]
  return out


@pytest.fixture(scope="module")
def profile_pkl(tmp_path_factory) -> Path:
  """tinygrad's own profile.pkl of the tutorial: a plain VIZ=-1 PROFILE=1 run, as on another machine."""
  tmp = tmp_path_factory.mktemp("profile")
  subprocess.run([sys.executable, str(workloads.EXAMPLES / "tutorial_conv2d.py")], capture_output=True, text=True, timeout=300,
                 check=True, env={**os.environ, "VIZ": "-1", "PROFILE": "1", "TMPDIR": str(tmp), "DEV": "CPU"})
  return next(tmp.glob("profile.pkl*"))


def test_tinygrads_profile_pkl_opens_with_its_timeline_and_memory(profile_pkl):
  events = pickle.loads(profile_pkl.read_bytes())
  trace = tgviz.load(profile_pkl)
  assert not trace.groups and "profile.pkl" in trace.device
  tl, mem = trace.timeline(), trace.memory()
  execs = [e for e in events if isinstance(e, ProfilePointEvent) and e.name == "exec"]
  assert len(tl) == len(execs) and tl.source == "profile.pkl"
  assert [x.name for x in tl] == [ansistrip(e.arg["name"]) for e in sorted(execs, key=lambda e: e.ts)]
  assert {x.kind for x in tl} == {"kernel", "copy"} and {x.lane for x in tl} == {e.device for e in execs}
  assert mem.device_peaks == viz_peaks(events) and max(mem.device_peaks.values()) > 0
  allocs = [e for e in events if isinstance(e, ProfilePointEvent) and e.name == "alloc"]
  assert [(b.num, b.device, b.size) for b in mem.buffers] == [(e.key, e.device, e.arg["sz"]) for e in allocs]
  assert all(b.writes for b in mem.buffers if b.dtype == "float")


def test_tgviz_open_reads_a_profile_pkl(profile_pkl, tmp_path, capsys):
  from tgviz import cli
  assert cli.open_file(profile_pkl, tmp_path / "out", 300, "none", jobs=0) == 0
  assert "timeline: " in capsys.readouterr().out


def test_a_crafted_profile_pkl_is_refused(tmp_path):
  marker = tmp_path / "ran"
  class MakesAFile:
    def __reduce__(self): return (open, (str(marker), "w"))
  path = tmp_path / "profile.pkl"
  path.write_bytes(pickle.dumps([ProfileRangeEvent("CL", TracingKey("x", ret=MakesAFile()), Decimal(1), Decimal(2))]))
  with pytest.raises(tgviz.TraceFileError, match="trusted=True"): tgviz.load(path)
  assert not marker.exists()


def test_tinygrads_events_as_its_viz_reads_them(tmp_path):
  events = synthetic_events()
  path = tmp_path / "profile.pkl"
  path.write_bytes(pickle.dumps(events))
  trace = tgviz.load(path)
  tl, mem = trace.timeline(), trace.memory()
  t0 = min(float(e.ts) for e in events if isinstance(e, ProfilePointEvent))
  # every device span where VIZ puts it (flatten_events: the device's tdiff added, graph batches flattened)
  # (a graph batch on its device's lane, timed as VIZ's "NV Graph" lane times it: its launches' span)
  viz = {(e.device.removesuffix(" Graph"), ansistrip(e.name.display_name if isinstance(e.name, TracingKey) else e.name),
          float(st) - t0, float(en - st))
         for st, en, e in serve.flatten_events(events, {"NV": Decimal(-500)}) if not isinstance(e, ProfilePointEvent)}
  mine = {(x.lane, x.name, x.start_us, x.duration_us) for x in tl if x.timed_by == "device"}
  assert mine == viz
  r4 = tl[0]  # the exec's launch, timed by the device span after it (as VIZ pairs them)
  assert (r4.name, r4.kind, r4.start_us, r4.duration_us, r4.graph) == ("r_4", "kernel", 200.0, 100.0, None)
  assert [x.graph for x in tl if x.lane == "NV" and x.graph is not None] == [0, 0]
  assert {x.kind for x in tl} == {"kernel", "copy", "graph"} and tl.lanes[0] == "NV"
  assert mem.device_peaks == viz_peaks(events)
  assert mem.peak == 16 * 4 + 64 * 2 + 4 * 4  # DISK left out, as GlobalCounters leaves it out
  assert {b.num for b in mem.at_peak} == {1, 2, 3}
  b1 = next(b for b in mem.buffers if b.num == 1)
  assert [x.name for x in b1.writes] == ["r_4"] and [x.name for x in b1.reads] == ["copy       16 B,  PYTHON <- NV", "batched 2"]
  # tinygrad's names kept (DEBUG=2's), shown by tgviz's one byte rule: the memory table and the timeline say "copy 16 B ..."
  assert next(r for r in mem.table() if r["num"] == 1)["readers"] == ["batched 2", "copy 16 B PYTHON <- NV"]
  assert [n for n in runview.timeline_data(trace, {})["names"] if n.startswith("copy")] == ["copy 16 B PYTHON <- NV"]


def test_roofline_against_tinygrads_estimates_with_cached_peaks(train_step, tmp_path, monkeypatch):
  from tgviz.bridge import peaks
  trace = train_step[0]
  roof = trace.roofline(cache_dir=tmp_path)
  assert roof.points and all(p.flops == p.kernel.flops and p.bytes == p.kernel.bytes for p in roof.points)  # tinygrad's Estimates
  for p in roof.points:
    assert p.runs == len(p.kernel.run_times) and p.gflops == pytest.approx(p.flops * p.runs / sum(p.kernel.run_times) / 1e9)
  pk = roof.peaks["CL"]
  assert pk.gflops > 0 and pk.gbs > 0 and not pk.cached and "matmul" in pk.how
  assert (tmp_path / "device_peaks.json").exists()
  monkeypatch.setattr(peaks, "measure", lambda device: pytest.fail("measured again"))
  again = trace.roofline(cache_dir=tmp_path).peaks["CL"]
  assert again.cached and again.gflops == pk.gflops
  bounds = [r["bound"] for r in trace.roofline(cache_dir=tmp_path).table()]
  assert set(bounds) <= {"memory", "compute"} and "memory" in bounds  # the small elementwise kernels are memory-bound
  assert not trace.roofline(peaks=False).peaks


def test_no_kernel_of_a_tinyjit_training_loop_lies_above_the_compute_roof(tmp_path):
  """The compute roof is float32 work's, of the kinds of kernel tinygrad makes (a matmul, an elementwise chain of
  multiply-adds; on PoCL it once measured only a 512x512 matmul, and 9 of this loop's 42 kernels ran above it, up to 4x;
  then an int32 chain, which tinygrad folds, and which put the roof at 5x the matmul's). A kernel is placed by its float
  work: tinygrad's FLOPs estimate less its integer ALU ops (a rand's hash), which are counted apart."""
  with tgviz.capture() as trace: workloads.jit_train(4)
  roof = trace.roofline(cache_dir=tmp_path)
  pk, fastest = roof.peaks["CL"], max(roof.points, key=lambda p: p.float_gflops or 0.0)
  assert len(roof.points) == len([k for k in trace.kernels if k.run_times]) > 40
  assert pk.benchmark_gflops >= (fastest.float_gflops or 0.0) / 2, roof.summary()  # within the noise of a shared machine
  assert all((p.float_gflops or 0.0) <= pk.gflops for p in roof.points)  # where a kernel beat the benchmark, the roof is that kernel's, said so
  raised = pk.gflops > pk.benchmark_gflops
  assert raised == any(f"the compute roof is {fastest.kernel.display_name}'s" in n for n in roof.notes) == ("fastest kernel" in pk.how)
  # both kinds of float32 work tried (the roof is the faster's: on PoCL either, by the machine's load), no integer one
  assert "float32 chain" in pk.how and "float32 matmul" in pk.how and "int32" not in pk.how
  # float and integer work split tinygrad's estimate; the rand's hash kernels are mostly integer work
  assert all(p.float_flops is not None and 0 <= p.float_flops <= p.flops for p in roof.points)
  assert any(p.flops > 2 * p.float_flops for p in roof.points if p.float_flops is not None)


def test_no_peaks_for_a_null_device():
  with tgviz.capture(device="NULL") as trace: jit_loop(2)
  roof = trace.roofline()
  assert not roof.points and not roof.peaks and roof.notes


@pytest.mark.slow
def test_a_1000_step_tinyjit_training_loop():
  """Tens of thousands of launches: every one in the timeline, each replay its own run (how fast it is built:
  benchmarks/timeline_speed.py)."""
  with tgviz.capture() as trace: workloads.jit_train(1000)
  tl, mem = trace.timeline(), trace.memory()
  assert len(tl.kernels()) == kernel_launches(trace) > 15_000
  assert len(tl.jit_runs) == 999 and len({r.launches for r in tl.jit_runs}) == 1
  assert [r.replay for r in tl.jit_runs] == list(range(999))
  assert mem.peak > 0


def test_profiling_can_be_left_out():
  from tinygrad.helpers import cpu_events
  before = len(cpu_events)
  with tgviz.capture(profile=False) as trace: jit_loop(2)
  assert kernel_launches(trace) > 0 and len(trace.timeline()) == 0 and trace.memory().peak == 0
  assert len(cpu_events) == before
