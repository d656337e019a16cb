"""What if (#25): a kernel's opts as tinygrad applied them, the kernel retried with other opts (compiled, traced, run on the
same inputs as the original, compared), and BEAM's candidates, on the real compiler and the real PoCL / CPU devices."""
import contextlib
import io
import re
import statistics

import pytest
import workloads

import tgviz
from tgviz.trace.retime import APART, NOISE, timing_of
from tgviz.trace.units import time_text
from tgviz.trace.whatif import BESIDE, most_telling

MATMUL_OPTS = [[], [("UPCAST", 0, 4)], [("UPCAST", 1, 8)], [("LOCAL", 0, 8)], [("LOCAL", 0, 4), ("LOCAL", 1, 4)],
               [("UPCAST", 0, 4), ("UNROLL", 0, 4)], [("GROUP", 0, 4)]]
CONV_OPTS = [[], [("UPCAST", 0, 0)], [("UNROLL", 0, 0)], [("LOCAL", 0, 2)], [("LOCAL", 1, 2), ("UNROLL", 0, 0)], [("GROUP", 0, 0)]]


@pytest.fixture(scope="module")
def matmul_trace() -> tgviz.Trace:
  from tinygrad import Tensor
  Tensor.manual_seed(0)
  a, b = Tensor.randn(32, 32).realize(), Tensor.randn(32, 32).realize()
  out = io.StringIO()
  with contextlib.redirect_stdout(out), tgviz.capture(env={"DEBUG": 3}) as trace: (a @ b).realize()
  trace.debug_log = out.getvalue()
  return trace


def _check_retry(kernel: tgviz.Kernel, opts: list, runs: int = 3) -> tgviz.Retry:
  r = kernel.retry(opts, runs=runs)
  assert r.ok, r.error
  assert r.same, f"{opts}: outputs differ by {r.run.max_diff}"
  k = r.retried
  assert [(o.op, o.axis, o.arg) for o in k.opts] == [tuple(o) for o in opts] and k.opts_by == "user"
  assert len(r.run.times_a) == len(r.run.times_b) == runs and all(t > 0 for t in r.run.times_a + r.run.times_b)
  assert k.run_times == r.run.times_b and None not in r.times_us()
  assert all(s is not None and s.name.startswith("shift") for o, s in k.opt_steps if o.op not in ("SWAP", "NOLOCALS"))
  names = [s.name for s in k.group.steps]
  assert names[0] == "View Base AST" and "View Program" in names and "__kernel" in k.source
  return r


def test_opts_are_tinygrads_with_who_chose_them(tutorial_trace, matmul_trace):
  conv = next(k for k in tutorial_trace.kernels if k.name == "r_2_2_2_2")
  assert [str(o) for o in conv.opts] == ["UNROLL(1, 0)", "UNROLL(0, 0)", "LOCAL(0, 2)", "LOCAL(0, 2)"] and conv.opts_by == "heuristic"
  # each opt's step: the shift its application made, in the kernel's own steps
  assert [(str(o), s.name) for o, s in conv.opt_steps] == [("UNROLL(1, 0)", "shift (1,) 2 unroll"), ("UNROLL(0, 0)", "shift (0,) 2 unroll"),
                                                           ("LOCAL(0, 2)", "shift (2,) 2 local"), ("LOCAL(0, 2)", "shift (3,) 2 local")]
  assert all(s.group is conv.group for _, s in conv.opt_steps)
  e3 = [k for k in tutorial_trace.kernels if k.name == "E_3"]
  assert e3 and all(k.opts == [] and k.opts_by == "none" for k in e3)
  # tinygrad's own DEBUG=3 line for the kernel: "<name> opts: (Opt(op=OptOps.UPCAST, axis=0, arg=4), ...)"
  (k,) = matmul_trace.kernels
  printed = re.search(rf"{k.name}\s+opts: \((.*)\)", re.sub(r"\x1b\[[0-9;]*m", "", matmul_trace.debug_log)).group(1)
  assert re.findall(r"OptOps\.(\w+), axis=(\d+), arg=(\d+)", printed) == [(o.op, str(o.axis), str(o.arg)) for o in k.opts]
  assert k.opts and k.opts_by == "heuristic"


def test_retry_the_tutorials_conv_with_six_opt_lists(tutorial_trace):
  conv = next(k for k in tutorial_trace.kernels if k.name == "r_2_2_2_2")
  sources = {_check_retry(conv, opts).retried.source for opts in CONV_OPTS}
  assert len(sources) >= 5  # the opts change the code


def test_retry_a_matmul_with_seven_opt_lists(matmul_trace):
  (k,) = matmul_trace.kernels
  assert re.fullmatch(r"r_\w+", k.name)
  retries = [_check_retry(k, opts) for opts in MATMUL_OPTS]
  assert retries[0].retried.name == "r_32_32_32"  # no opts: tinygrad's name is the plain shape
  assert len({r.retried.source for r in retries}) == len(MATMUL_OPTS)
  same = _check_retry(k, [(o.op, o.axis, o.arg) for o in k.opts])  # the heuristic's own opts: the same code
  assert same.retried.source == k.source and same.retried.name == k.name


def test_a_refused_opt_gives_tinygrads_message(matmul_trace):
  (k,) = matmul_trace.kernels
  r = k.retry([("UPCAST", 0, 3)])
  assert not r.ok and r.retried is None and r.run is None
  assert "3 can't divide" in r.error and "\x1b" not in r.error and "UPCAST(0, 3)" in r.error
  assert r.error in str(r)
  with pytest.raises(ValueError, match="nothing to compare"): r.comparison()
  bad = k.retry([("SHRINK", 0, 2)])
  assert not bad.ok and "'SHRINK' is not one of tinygrad's opts: TC, UPCAST" in bad.error
  assert "is not an opt" in k.retry([42]).error
  with pytest.raises(ValueError, match="refused"): k.allowed_opts([("LOCAL", 0, 5)])


def test_allowed_opts_all_retry(tutorial_trace):
  conv = next(k for k in tutorial_trace.kernels if k.name == "r_2_2_2_2")
  allowed = conv.allowed_opts()
  assert {str(o) for o in allowed} >= {"UPCAST(0, 0)", "UNROLL(0, 0)", "LOCAL(0, 2)", "GROUP(0, 0)"}
  assert all(conv.retry([o], runs=1).same for o in allowed)
  after = conv.allowed_opts([("UNROLL", 0, 0)])
  assert after and all(o.op != "UNROLL" or o.axis == 0 for o in after)  # one reduce axis left to unroll


def test_the_opts_tinygrad_applied_are_allowed_and_retry_to_the_same_program():
  """Opts count the axes codegen has before it applies them (after simplify ranges merged some), not the base AST's:
  the opts a random draw's kernels were given ("UPCAST(0, 0), LOCAL(0, 32)") were refused by the what-if editor
  ("don't upcast more than 16") as soon as it opened on them. Every kernel's own opts are allowed, and retried give its
  program back."""
  from tinygrad import Tensor
  with tgviz.capture() as trace:
    Tensor.randn(2, 6, 16).realize()
  merged = [k for k in trace.kernels if k.opts and len(k.opts) > 1]
  assert merged, [(k.display_name, k.opts) for k in trace.kernels]
  for k in trace.kernels:
    k.allowed_opts(k.opts)  # (raises where tinygrad refuses them)
    again = k.retry(k.opts, runs=1)
    assert again.error is None and again.same and again.retried.source == k.source, (k.display_name, k.opts, again.error)


def test_retry_opens_as_a_comparison(matmul_trace, tmp_path):
  (k,) = matmul_trace.kernels
  r = k.retry([("LOCAL", 0, 8)])
  cmp = r.comparison()
  assert [(p.a.name, p.b.name, p.how) for p in cmp.pairs] == [(k.name, r.retried.name, "given")] and not cmp.only_a and not cmp.only_b
  assert cmp.pairs[0].code_diff and cmp.labels == ("original (heuristic)", "retry")
  (row,) = cmp.kernel_table()
  assert row["a_time_us"] == round(sum(r.run.times_a) * 1e6, 3) and row["b_time_us"] == round(sum(r.run.times_b) * 1e6, 3)
  assert row["a_flops"] == k.flops and row["b_flops"] and row["a_bytes"] == k.bytes and row["b_bytes"]
  assert row["b_local_size"] == [8, 1, 1] and row["a_name"] == k.name
  page = r.to_html(tmp_path / "retry.html").read_text()
  assert k.name in page and r.retried.name in page and "original (heuristic)" in page
  # the summary gives the medians the comparison's table shows first, each said to be a median of so many launches
  a, b = r.times_us()
  assert row["a_median_us"] == a and row["b_median_us"] == b and row["a_timed_runs"] == row["b_timed_runs"] == 5
  speed = "within noise" if row["time"] == "within noise" else f"{a / b:.2f}x faster" if a >= b else f"{b / a:.2f}x slower"
  # (written as the page's table writes them: time_text, held to the page's own in tests/views/test_units.py)
  ta, tb = (timing_of([], ts) for ts in (r.run.times_a, r.run.times_b))
  spread = [f"{time_text(t.min_us)} – {time_text(t.max_us)}" for t in (ta, tb)]
  rule = f"({NOISE if row['time'] == 'within noise' else APART})"
  assert r.summary().endswith(f"; 5 launches each ({BESIDE}): median {time_text(a)} (min – max {spread[0]}) -> {time_text(b)} "
                              f"({spread[1]}), {speed} {rule}"), r.summary()
  assert r.speedup == pytest.approx(a / b)


def overlapping_times(r: tgviz.Retry, a: list[float], b: list[float]) -> None:
  """Give a retry these launch times (µs) of the original and of the retry, as if measured so: in place, where its
  comparison's traces hold them too."""
  r.run.times_a[:] = [t * 1e-6 for t in a]
  r.run.times_b[:] = [t * 1e-6 for t in b]


@pytest.mark.parametrize(("b", "said", "speed"), [([1.1, 2.1, 3.1, 4.1, 5.1], "within noise", "within noise"),
                                                  ([10, 11, 12, 13, 14], "b slower", "4.00x slower"),
                                                  ([0.1, 0.2, 0.3, 0.4, 0.5], "b faster", "10.00x faster")])
def test_a_retrys_summary_says_of_its_times_what_its_comparison_says(matmul_trace, b, said, speed):
  """Medians apart by less than the launches' spread (a median inside the other's min-max) are "within noise" in the
  retry's summary as in its comparison's table (the summary said "1.03x slower"); apart by more, the speedup. The
  summary states the rule and each side's min – max, so that "216 µs -> 154 µs, within noise" reads as it is meant."""
  (k,) = matmul_trace.kernels
  r = k.retry([])
  overlapping_times(r, [1, 2, 3, 4, 5], b)
  (row,) = r.comparison().kernel_table()
  assert row["time"] == r.time_compared == said
  rule = "a median inside the other's min – max" if said == "within noise" else "each median outside the other's min – max"
  assert r.summary().endswith(f"({BESIDE}): median 3.00 µs (min – max 1.00 µs – 5.00 µs) -> {time_text(statistics.median(b))} "
                              f"({time_text(min(b))} – {time_text(max(b))}), {speed} ({rule})"), r.summary()


def test_a_retrys_summary_says_which_of_the_kernels_own_opts_it_drops(tutorial_trace):
  """The opts given replace the kernel's own: a retry with the first of the conv's UNROLL(1, 0), UNROLL(0, 0), LOCAL(0,
  2), LOCAL(0, 2) says the opts it drops ("in place of its own UNROLL(0, 0), LOCAL(0, 2), LOCAL(0, 2)"), as a retry
  tgviz chose does (one size up, BEAM's pick); one with all of them, or none given (no opts), says nothing more."""
  k = next(k for k in tutorial_trace.kernels if k.name == "r_2_2_2_2")
  own = [str(o) for o in k.opts]
  assert len(own) == 4, own
  first = k.opts[0]
  r = k.retry([(first.op, first.axis, first.arg)], runs=1)
  assert r.summary().startswith(f"retry of {k.display_name} with {own[0]} in place of its own {', '.join(own[1:])}: "), r.summary()
  assert "in place of" not in k.retry([(o.op, o.axis, o.arg) for o in k.opts], runs=1).summary()
  assert "in place of" not in k.retry([], runs=1).summary()


def test_a_retry_that_changes_one_of_the_kernels_opts_says_only_that_one():
  """A retry that keeps the kernel's other opts and changes one (as one size up does) says the change alone: "with
  UPCAST(0, 2) in place of its own UPCAST(0, 4), its other opts kept", not the whole new set, which read as six changes
  (new-user pass 9)."""
  from tinygrad import Tensor
  x, w = Tensor.randn(1, 4, 16, 16).realize(), Tensor.randn(8, 4, 3, 3).realize()
  with tgviz.capture() as trace: x.conv2d(w).realize()
  (k,) = trace.kernels
  first, rest = k.opts[0], [(o.op, o.axis, o.arg) for o in k.opts[1:]]
  assert len(rest) >= 2 and first.arg >= 4, k.opts
  r = k.retry([(first.op, first.axis, first.arg // 2), *rest], runs=1)
  assert r.error is None, r.error
  assert r.summary().startswith(f"retry of {k.display_name} with {r.opts[0]} in place of its own {first}, its other opts kept: "), r.summary()


def test_the_most_telling_retry_is_the_largest_change_beyond_noise(matmul_trace):
  """The report's what-if sheet opens on most_telling: of retries within noise, 2x slower and 1.5x faster, the 2x
  slower (the largest change either way); of retries all within noise, the first."""
  (k,) = matmul_trace.kernels
  noise, slower, faster = (k.retry([]) for _ in range(3))
  for r, b in ((noise, [1.1, 2.1, 3.1, 4.1, 5.1]), (slower, [6, 6, 6, 6, 6]), (faster, [2, 2, 2, 2, 2])):
    overlapping_times(r, [3, 3, 3, 3, 3] if r is not noise else [1, 2, 3, 4, 5], b)
  assert [r.time_compared for r in (noise, slower, faster)] == ["within noise", "b slower", "b faster"]
  assert most_telling([noise, slower, faster]) is slower and most_telling([noise, faster]) is faster
  overlapping_times(again := k.retry([]), [1, 2, 3, 4, 5], [1, 2, 3, 4, 5])
  assert most_telling([noise, again]) is noise and most_telling([k.retry([("UPCAST", 0, 3)])]) is None  # (refused: no comparison)


def _beam_log_count(log: str) -> int:
  """How many candidates BEAM timed, as its DEBUG=2 log says: each round ends "from N -> M actions" (M timed)."""
  return sum(int(m) for m in re.findall(r"from +\d+ -> +(\d+) actions\x1b\[K", log))


def test_beam_candidates_are_every_one_the_search_timed(tmp_path):
  from tinygrad import Tensor
  a, b = Tensor.rand(8, 8, device="CPU").realize(), Tensor.rand(8, 8, device="CPU").realize()
  out = io.StringIO()
  with contextlib.redirect_stdout(out), tgviz.capture("CPU", env={"BEAM": 2, "CACHELEVEL": 0, "DEBUG": 2}) as trace:
    c = (a @ b).realize()
  assert c.tolist()
  (k,) = trace.kernels
  s = k.search
  assert k.opts_by == "BEAM" and not s.cached and s.amount == 2
  assert len(s.timed) == _beam_log_count(out.getvalue()) > 0
  assert tuple(k.opts) == s.winner and s.winner in [c.opts for c in s.timed]
  rows = k.beam_table()
  assert len(rows) == len(s.candidates) and sum(r["winner"] for r in rows) >= 1
  assert all((r["time_us"] is None) == (c.time is None) for r, c in zip(rows, s.candidates, strict=True))
  # the search's own compiles are not the trace's kernels; the winner's opts are the kernel's rewrite steps
  assert [g.kind for g in trace.groups].count("kernel") == 1
  assert sum(n.name.startswith("shift") for n in k.group.steps) >= 1 and all(s is not None for _, s in k.opt_steps)
  loaded = tgviz.load(trace.save(tmp_path / "beam.tgviz"))
  assert loaded.kernels[0].beam_table() == rows and loaded.kernels[0].opts_by == "BEAM"
  assert [s.name for _, s in loaded.kernels[0].opt_steps] == [s.name for _, s in k.opt_steps]


def test_beam_cache_answering_is_reported():
  from tinygrad import Tensor
  a = Tensor.rand(4, 12, device="CPU").realize()
  for _ in range(2):  # the first may search (and fill the cache); the second finds it there
    with tgviz.capture("CPU", env={"BEAM": 1}) as trace: a.sum(axis=1).realize()
  (k,) = trace.kernels
  assert k.opts_by == "BEAM cache" and k.search.cached and k.search.candidates == [] and k.beam_table() == []
  assert tuple(k.opts) == k.search.winner


def test_the_widget_answers_allowed_and_retry(recording_comm):
  from tgviz.notebook.widget import TraceWidget
  with tgviz.capture() as trace: workloads.example("tutorial_conv2d.py")
  w = TraceWidget(trace)
  assert w.whatif["r_2_2_2_2"]["text"] == ["UNROLL(1, 0)", "UNROLL(0, 0)", "LOCAL(0, 2)", "LOCAL(0, 2)"]
  assert w.whatif["r_2_2_2_2"]["by"] == "heuristic" and w.whatif["r_2_2_2_2"]["retries"] == []
  w._on_msg(w, {"type": "allowed", "kernel": "r_2_2_2_2", "before": [["UNROLL", 0, 0]]}, [])
  w.wait()
  allowed = w.comm.custom()[-1]
  assert allowed["type"] == "allowed" and allowed["error"] is None and ["UNROLL", 0, 0] in allowed["opts"]
  w._on_msg(w, {"type": "retry", "kernel": "r_2_2_2_2", "opts": [["LOCAL", 0, 2]]}, [])  # answered from the worker thread
  w.wait(120)
  done = w.comm.custom()[-1]
  assert done["type"] == "retried" and done["error"] is None and done["same"] and None not in done["times_us"]
  assert done["compare"]["state"]["rows"][0]["how"] == "given" and done["compare"]["pairs"][0]["diff"]
  assert [r["summary"] for r in w.whatif["r_2_2_2_2"]["retries"]] == [done["summary"]]
  for bad, said in (({"kernel": "r_2_2_2_2", "opts": [["UPCAST", 0, 3]]}, "tinygrad refused UPCAST(0, 3)"),
                    ({"kernel": "nope", "opts": []}, "no kernel 'nope'"), ({"kernel": "r_2_2_2_2", "opts": 5}, "opts must be a list"),
                    ({"kernel": "r_2_2_2_2", "opts": [["UPCAST", "x", 2]]}, "")):
    w._on_msg(w, {"type": "retry", **bad}, [])
    w.wait(120)
    answer = w.comm.custom()[-1]
    assert answer["type"] == "retried" and answer["error"].startswith(said) and answer["compare"] is None, answer


def test_tgviz_run_with_beam(tmp_path):
  import subprocess
  import sys
  script = tmp_path / "mm.py"
  script.write_text("from tinygrad import Tensor\na = Tensor.ones(8, 8).contiguous().realize()\nprint((a @ a).sum().item())\n")
  proc = subprocess.run([sys.executable, "-m", "tgviz", "run", str(script), "--device", "CPU", "--env", "BEAM=1", "--env", "CACHELEVEL=0",
                         "--out", str(tmp_path / "out"), "--save", "--svg", "none"], capture_output=True, text=True, timeout=600)
  assert proc.returncode == 0, proc.stdout + proc.stderr
  assert "running " in proc.stdout and " BEAM=1 CACHELEVEL=0 with tinygrad's compiler traced" in proc.stdout
  trace = tgviz.load(tmp_path / "out" / "trace.tgviz")
  assert trace.env == {"BEAM": 1, "CACHELEVEL": 0}
  searched = [k for k in trace.kernels if k.search is not None]
  assert searched and all(k.opts_by == "BEAM" and k.search.timed for k in searched)
  assert (tmp_path / "out" / "index.html").stat().st_size > 10_000
  bad = subprocess.run([sys.executable, "-m", "tgviz", "run", str(script), "--env", "BEEM=1"], capture_output=True, text=True, timeout=300)
  assert bad.returncode == 2 and "tinygrad has no setting 'BEEM' (did you mean BEAM" in bad.stderr


def test_what_ifs_retry_the_slowest_kernels_with_no_opts_one_size_up_and_beams_pick():
  """tgviz run --what-if's retries (tgviz.trace.whatif.what_ifs) on the CPU device, BEAM given time to search: each of
  the slowest kernels with no opts, one amount doubled, and BEAM's pick, each labelled, none repeating the opts applied."""
  from tinygrad import Tensor

  from tgviz.trace.whatif import beam_pick, what_ifs
  Tensor.manual_seed(0)
  a, b = Tensor.randn(32, 32, device="CPU").realize(), Tensor.randn(32, 32, device="CPU").realize()
  with tgviz.capture("CPU") as trace: (a @ b).realize()
  (k,) = trace.kernels
  done = what_ifs(trace, 1, beam_seconds=120)  # (a narrow search on CPU ends by itself in seconds; the limit: a hang)
  assert done == k.retries and [r.why for r in done][:2] == ["no opts", "one size up"] and all(r.same for r in done), done
  assert done[0].opts == () and sum(x.arg != y.arg for x, y in zip(done[1].opts, k.opts, strict=True)) == 1
  assert len({tuple(r.opts) for r in done} | {tuple(k.opts)}) == len(done) + 1  # none repeats another or the opts applied
  beam = [r for r in done if r.why.startswith("BEAM's pick")]  # (none where BEAM picked what is there already)
  assert len(beam) <= 1 and all("(BEAM's pick: width 2, 120 s at most)" in r.summary() for r in beam)
  assert what_ifs(trace, 0) == [] and len(k.retries) == len(done)
  pick, _ = beam_pick(k, 120)  # tinygrad's own search ran (its timings vary: another run may pick other opts), a retry runs it
  assert isinstance(pick, tuple) and k.retry(pick).same


def test_retries_stop_when_their_time_is_spent():
  """tgviz run's retries, all told, take a tenth of the run (2 s at least): none is begun that would end past that, by
  its kernel's codegen and compile in the run (an LSTM step's retries of its big kernels took 42 s after a 29 s run);
  those not made say why."""
  from tinygrad import Tensor

  from tgviz.trace.whatif import what_if_seconds, what_ifs
  assert what_if_seconds(100) == 10 and what_if_seconds(5) == 2
  a, b = Tensor.randn(16, 16, device="CPU").realize(), Tensor.randn(16, 16, device="CPU").realize()
  with tgviz.capture("CPU") as trace: (a @ b).realize()
  (k,) = trace.kernels
  assert what_ifs(trace, 1, beam_seconds=0.5, budget=0) == [] and not k.retries
  assert all(t.split(": ", 1)[1].startswith("the what-if's 0.0 s would run out before it ended (0.00 s left, and the "
                                            "kernel's codegen and compile took ") for t in k.not_tried), k.not_tried
  assert [t.split(":")[0] for t in k.not_tried] == ["no opts", "one size up", "BEAM's pick (width 2, 0.5 s at most)"]


def test_tgviz_runs_beam_searches_a_share_of_the_run():
  """tgviz run's BEAM pick searches a kernel for 5% of the run's time, at least half a second and at most 3 s: the
  report's retries stay a small part of what the run cost."""
  from tgviz.trace.whatif import beam_seconds
  assert [beam_seconds(s) for s in (1.0, 15.0, 30.0, 200.0)] == [0.5, 0.75, 1.5, 3.0]
