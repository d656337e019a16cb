"""Side by side with tinygrad's VIZ on the same run: everything VIZ's timeline and memory view list for a run (its own
data-building code, tinygrad/viz/serve.py's get_profile, called in-process on the run's profile events and its binary
payload decoded as VIZ's index.js reads it) is in tgviz's run message (tgviz.views.run) for that run: every launch per
device with its name, start and duration, graph batches, what a copy moved, every buffer's allocation and free with its
size and dtype, the launches that used it, each device's memory peak and the peak of all."""
import contextlib
import gc
import json
import pickle
import struct
from collections import Counter

import pytest
import workloads
from helpers import synthetic_events
from tinygrad.device import Buffer, Compiled
from tinygrad.helpers import Context, ProfilePointEvent, ansistrip, cpu_events
from tinygrad.viz import serve
from workloads import jit_loop

import tgviz
from tgviz.trace.units import copy_name
from tgviz.views import run as runview

HOST_LANES = ("TINY", "USER", "GC")  # tinygrad's host-side spans (its rewrites, Tensor methods): not launches


def viz_payload(events: list) -> dict:
  """VIZ's /get_profile payload for these events (serve.get_profile), decoded as its index.js decodes it: the lanes by
  name, a timeline lane's events (name, start, duration in µs from VIZ's start, its metadata) and a memory lane's
  allocations and frees (with the launches that used the buffer), its peak; and the peak of all."""
  blob = serve.get_profile(serve.VizData(), events)
  _end, peak, n_index, n_lanes = struct.unpack_from("<IQII", blob, 0)
  o = 20
  strings = json.loads(blob[o:o + n_index])["strings"]
  o += n_index
  lanes: dict[str, dict] = {}
  for _ in range(n_lanes):
    n = blob[o]
    name = blob[o + 1:o + 1 + n].decode()
    o += 1 + n
    if blob[o] == 0:  # a timeline lane
      count = struct.unpack_from("<I", blob, o + 1)[0]
      o += 5
      evs = []
      for _ in range(count):
        s, _ref, _key, st, dur, fmt = struct.unpack_from("<IIIIfI", blob, o)
        o += 24
        evs.append({"name": ansistrip(strings[s]), "st": st, "dur": dur, "fmt": json.loads(strings[fmt])})
      lanes[name] = {"events": evs}
      continue
    _, count, line, lane_peak = struct.unpack_from("<BIBQ", blob, o)
    o += 14
    assert not line, "a counter lane: none in these runs"
    allocs, frees = [], []
    for _ in range(count):
      if blob[o] == 1:
        _, ts, key, dt, sz = struct.unpack_from("<BIIIQ", blob, o)
        o += 21
        allocs.append({"ts": ts, "key": key, "dtype": strings[dt], "sz": sz})
      else:
        _, ts, key, n_users = struct.unpack_from("<BIII", blob, o)
        o += 13
        users = [struct.unpack_from("<IIIB", blob, o + 13 * i) for i in range(n_users)]
        o += 13 * n_users
        frees.append({"ts": ts, "key": key, "users": [(ansistrip(strings[u[1]]), u[3]) for u in users]})
    lanes[name] = {"allocs": allocs, "frees": frees, "peak": lane_peak}
  assert o == len(blob)
  return {"peak": peak, "lanes": lanes}


@contextlib.contextmanager
def profiled():
  """PROFILE=1 for the whole block, as VIZ=1 runs a script: tinygrad keeps its events (a capture inside adds its own
  records); yields the list the run's events land in, taken out of tinygrad's lists again afterwards. As in a script
  profiled from its start, no buffer of earlier tests is freed inside: VIZ cannot place the free of a buffer it never
  saw allocated (it raises), so those frees (the rng state manual_seed replaces, say) are left out of what it is given;
  tgviz counts them as tinygrad's GlobalCounters does (test_timeline)."""
  lists = (cpu_events, Compiled.profile_events, Buffer.profile_events)
  starts = [len(x) for x in lists]
  events: list = []
  try:
    with Context(PROFILE=1): yield events
    run = [e for lst, n in zip(lists, starts, strict=True) for e in lst[n:]]
    # a free is kept where its number is allocated in the run at the time: an earlier test's buffer may be freed here
    # under a number a buffer of this run has too (tinygrad numbers buffers by the length of its event list)
    live: Counter = Counter()
    earlier: set[int] = set()
    for e in sorted((e for e in run if isinstance(e, ProfilePointEvent) and e.name in ("alloc", "free")), key=lambda e: e.ts):
      if e.name == "alloc": live[e.key] += 1
      elif live[e.key]: live[e.key] -= 1
      else: earlier.add(id(e))
    events += [e for e in run if id(e) not in earlier]
  finally:
    for lst, n in zip(lists, starts, strict=True): del lst[n:]


def assert_viz_in_tgviz(events: list, msg: runview.RunMsg, *, null: bool = False) -> int:
  """Every launch, buffer and peak VIZ lists for events is in tgviz's run message for the same run (null: a NULL
  device, whose made-up times tgviz shows as not timed). Returns how many VIZ items were checked."""
  viz, t, m = viz_payload(events), msg["timeline"], msg["memory"]
  b = m["buffers"]
  buffers = {(b["devices"][b["device"][i]], num): i for i, num in enumerate(b["num"])}
  # VIZ's times are whole µs from its first event (its host spans included), tgviz's from the capture's start: the
  # same clock, so one offset, read off the first allocation, fits every event
  first = next(lane for name, lane in viz["lanes"].items() if name.endswith(" Memory"))["allocs"][0]
  offset = b["alloc"][buffers[(next(n for n in viz["lanes"] if n.endswith(" Memory"))[:-7], first["key"])]] - first["ts"]
  checked = 0
  for name, lane in viz["lanes"].items():
    if name.split(" ")[0].split(":")[0] in HOST_LANES: continue
    if name.endswith(" Memory"):
      dev = name[:-len(" Memory")]
      assert m["device_peaks"][dev] == lane["peak"]
      for a in lane["allocs"]:
        i = buffers[(dev, a["key"])]
        assert (b["size"][i], b["dtypes"][b["dtype"][i]]) == (a["sz"], a["dtype"])
        assert b["alloc"][i] - offset == pytest.approx(a["ts"], abs=1.01)
        checked += 1
      for f in lane["frees"]:
        i = buffers[(dev, f["key"])]
        if b["free"][i] is not None: assert b["free"][i] - offset == pytest.approx(f["ts"], abs=1.01)
        else: assert f["ts"] >= b["alloc"][i] - offset - 1  # VIZ frees what is still alive at its last event
        # the launches that used it (tgviz also counts those that used a view of it, which VIZ lists under the view)
        names = lambda ls: Counter(t["names"][t["name"][x]] for x in ls)  # noqa: E731
        # (a copy's name by tgviz's byte rule: tinygrad's "copy   24.50 KB,  CL <- NPY" is "copy 24.5 KiB CL <- NPY")
        assert not Counter(copy_name(n) for n, mode in f["users"] if mode >= 1) - names(b["writes"][i])  # 1: written, 2: both
        assert not Counter(copy_name(n) for n, mode in f["users"] if mode != 1) - names(b["reads"][i])   # 0: read
        checked += 1
      continue
    dev, graph = name.removesuffix(" Graph"), name.endswith(" Graph")
    lane_ix = t["lanes"].index(dev)
    mine = [i for i in range(len(t["start"])) if t["lane"][i] == lane_ix and (t["kinds"][t["kind"][i]] == "graph") == graph]
    moved = dict(map(tuple, t["moved"]))
    for e in lane["events"]:  # its launch: on that device's lane, by name, starting where VIZ draws it
      near = [i for i in mine if t["names"][t["name"][i]] == copy_name(e["name"]) and abs(t["start"][i] - offset - e["st"]) <= 1.01]
      assert len(near) == 1, (name, e, [(t["names"][t["name"][i]], t["start"][i] - offset) for i in mine])
      i = near[0]
      if null: assert t["dur"][i] is None  # nothing ran: tgviz says so rather than draw NULL's made-up time
      else: assert t["dur"][i] == pytest.approx(e["dur"], rel=1e-6, abs=1e-3)
      if "B" in e["fmt"]: assert moved[i] == e["fmt"]["B"]  # a copy's bytes (VIZ's "B", and "B/s" from the duration)
      checked += 1
  assert viz["peak"] == max(m["device_peaks"].values())
  return checked


def test_a_tinyjit_training_loop_on_pocl_side_by_side_with_viz():
  with profiled() as events, tgviz.capture() as trace: workloads.jit_train(4)
  msg = runview.run_message(trace, peaks=False)
  viz = viz_payload(events)
  assert "CL Memory" in viz["lanes"] and viz["peak"] == trace.memory().device_peaks["CL"] > 0
  assert assert_viz_in_tgviz(events, msg) >= len(viz["lanes"]["CL Memory"]["allocs"]) > 10
  # PoCL's launches are "exec" points to VIZ (it draws a lane only for devices that time their own launches): tgviz
  # draws each with the time the capture measured
  assert not [n for n in viz["lanes"] if n.startswith("CL") and not n.endswith("Memory")]
  assert msg["timeline"]["kind"].count(0) == sum(r["runs"] for r in trace.kernel_table()) > 40


def test_graph_batches_on_a_null_device_side_by_side_with_viz():
  with profiled() as events, tgviz.capture(device="NULL") as trace: jit_loop(4)
  msg = runview.run_message(trace, peaks=False)
  viz = viz_payload(events)
  assert {"NULL", "NULL Graph", "NULL Memory"} <= set(viz["lanes"])
  assert assert_viz_in_tgviz(events, msg, null=True) >= len(viz["lanes"]["NULL"]["events"]) + len(viz["lanes"]["NULL Graph"]["events"])


def test_a_gpus_profile_pkl_side_by_side_with_viz(tmp_path):
  """A GPU's profile as tinygrad writes it (device clock offset, device-timed launches and copy, a graph batch)."""
  events = synthetic_events()
  path = tmp_path / "profile.pkl"
  path.write_bytes(pickle.dumps(events))
  msg = runview.run_message(tgviz.load(path), peaks=False)
  viz = viz_payload(events)
  assert {"NV", "NV Graph", "NV:SDMA:0", "NV Memory"} <= set(viz["lanes"])
  every = sum(len(v.get("events", [])) + len(v.get("allocs", [])) + len(v.get("frees", [])) for v in viz["lanes"].values())
  assert assert_viz_in_tgviz(events, msg) == every > 10


def assert_viz_host_lanes_in_tgviz(events: list, trace: tgviz.Trace) -> int:
  """Every span of VIZ's TINY and USER lanes (by name, start and duration) is one of trace.compile_times()'s spans on
  that lane, and the lanes hold no other span but the stages of linearize/render tgviz timed (linearize, render, ...).
  Returns how many VIZ spans were checked."""
  viz = viz_payload(events)
  spans = trace.compile_times().spans
  lanes = {name: lane["events"] for name, lane in viz["lanes"].items() if name in ("TINY", "USER")}
  assert set(lanes) == {"TINY", "USER"}
  # one offset (VIZ's times are from its first event, tgviz's from the capture's start) fits every span: read it off
  # the longest one
  longest = max((e for lane in lanes.values() for e in lane), key=lambda e: e["dur"])
  mine = next(s for s in spans if s.name == longest["name"] and s.time_us == pytest.approx(longest["dur"], rel=1e-6))
  offset = mine.start_us - longest["st"]
  left = Counter(id(s) for s in spans)
  for lane, evs in lanes.items():
    ours = [s for s in spans if s.lane == lane]
    for e in evs:
      near = [s for s in ours if s.name == e["name"] and left[id(s)] and abs(s.start_us - offset - e["st"]) <= 1.01
              and s.time_us == pytest.approx(e["dur"], rel=1e-6, abs=1e-3)]
      assert near, (lane, e)
      left[id(near[0])] -= 1
  extra = [s for s in spans if left[id(s)] and s.time_us > 0]
  assert all(s.kind not in ("group", "step", "span", "user") for s in extra), extra[:5]  # only tgviz's own stages
  return sum(len(evs) for evs in lanes.values())


def test_the_compilers_lanes_side_by_side_with_viz():
  """VIZ's TINY lane (every schedule, kernel codegen and rewrite step, nested) and USER lane (the Tensor methods called)
  for a training step are tgviz's compile spans; each of tinygrad's group and step spans leads to its group or step."""
  gc.collect()  # earlier tests' buffers freed first: VIZ cannot place a free of a number it saw allocated again here
  with profiled() as events, tgviz.capture() as trace: workloads.mlp_train((64, 32, 10), 8)
  assert assert_viz_host_lanes_in_tgviz(events, trace) > 500
  ct = trace.compile_times()
  for s in ct.spans:
    if s.kind == "step": assert trace.groups[s.group].steps[s.step].name == s.name
    elif s.kind == "group": assert trace.groups[s.group].name in s.name  # "do_to_program for r_8_32_16_4", "Schedule 5 Kernels n1"
  assert {s.kind for s in ct.spans} >= {"group", "step", "user", "render", "compile"}
  assert max(s.depth for s in ct.spans if s.lane == "TINY") >= 2  # a group, its steps, the steps nested in them
  # every kernel's codegen, each of its steps, and the stages of its linearize/render are there, linked
  for k in trace.kernels:
    assert k.group.index in ct.groups and all(s.time_us is not None for s in k.group.steps)
    assert {"render", "compile"} <= set(ct.stages[k.group.index])


def test_a_tinyjit_loops_compiler_lanes_side_by_side_with_viz():
  gc.collect()
  with profiled() as events, tgviz.capture() as trace: workloads.jit_train(3)
  assert assert_viz_host_lanes_in_tgviz(events, trace) > 500
