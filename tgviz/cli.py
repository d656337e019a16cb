"""The command line: ``tgviz run SCRIPT.py [--out DIR] [--device DEV] [--env NAME=VALUE] [--what-if N]`` writes an HTML
report (with retries of the slowest kernels under other opts) and SVGs.
``tgviz show FILE [--debug N] [--kernel K] [--step S] [--search TEXT] [--json]`` prints tinygrad's DEBUG listings, a step's
matches or a search's hits, from a saved trace or a script run traced (for scripts and coding agents).

With several scripts, each gets its own report folder under DIR and DIR/index.html links them with their summaries.
``tgviz open FILE`` writes the report of a saved trace (``Trace.save``) or of tinygrad's own rewrites.pkl (``VIZ=-1``).
``tgviz compare A.py B.py [--env-a NAME=VALUE] [--env-b NAME=VALUE]`` writes an HTML comparison of the two."""
from __future__ import annotations

import argparse
import atexit
import contextlib
import gc
import json
import os
import runpy
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from tgviz import bridge as tg
from tgviz.api import Trace, TraceFileError, capture, compare, load
from tgviz.bridge import parse_settings
from tgviz.draw.scene import DEFAULT_MAX_NODES
from tgviz.draw.svg import text as escaped
from tgviz.report import writer as report
from tgviz.report.early import EarlySegments
from tgviz.trace import debug
from tgviz.trace.retime import SLOWEST
from tgviz.trace.units import plural, time_text
from tgviz.trace.whatif import WHAT_IFS, beam_seconds, what_if_seconds, what_ifs
from tgviz.views import picture
from tgviz.views import protocol as P
from tgviz.work import forked

BAR = 30  # the progress bar's width in characters
EVERY_S = 10.0  # in a log, a progress line at most this often (a report written faster prints none: the bar is the terminal's)


def _progress(label: str, every_s: float = EVERY_S, clock: Callable[[], float] = time.perf_counter) -> Callable[[int, int], None]:
  """A progress report for writing something in steps: where stderr is a terminal, one bar redrawn in place (\\r);
  elsewhere (a log, a pipe) a line on stdout each every_s seconds, and the last step's where one was printed (work
  done within every_s prints none)."""
  if sys.stderr.isatty():
    shown = [-1]
    def bar(done: int, total: int) -> None:
      filled = BAR * done // total
      if filled == shown[0] and done != total: return  # (redrawn only when the bar moves)
      shown[0] = filled
      sys.stderr.write(f"\r  {label} [{'#' * filled}{'.' * (BAR - filled)}] {done:,}/{total:,} ({done * 100 // total}%)"
                       + ("\n" if done == total else ""))
      sys.stderr.flush()
    return bar
  last, printed = [clock()], [False]
  def lines(done: int, total: int) -> None:
    now = clock()
    if now - last[0] >= every_s or (done == total and printed[0]):
      print(f"  {label}: {done:,}/{total:,} ({done * 100 // total}%)", flush=True)
      last[0], printed[0] = now, True
  return lines


def unwritable(folder: Path, option: str) -> str | None:
  """Why the output folder cannot be written, as one line saying what to do (None: it can). The folder is made and a
  file tried in it before anything runs, then what was made for the try is removed: a bad --out fails in a second, not
  after the script, and a run stopped before it writes (a missing script, a refused trace file) leaves no folder."""
  made = [p for p in (folder, *folder.parents) if not p.exists()]  # the innermost first
  try:
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryFile(dir=folder): pass
  except OSError as e:
    return (f"tgviz: cannot write to the folder {folder} ({e.strerror or type(e).__name__}): give {option} a folder you "
            f"can write to")
  finally:
    for p in made:
      with contextlib.suppress(OSError): p.rmdir()
  return None


def _svgs(writer: report.Writer, which: tuple[Path, int, bool, dict[str, str]]) -> tuple[int, float]:
  """Write the SVG files asked for (directory, node budget, landmarks only, those drawn already by step key); returns
  how many, and the seconds it took."""
  st = time.perf_counter()
  directory, max_nodes, landmarks, drawn = which
  steps = writer.trace.select(landmarks=landmarks)
  directory.mkdir(parents=True, exist_ok=True)
  todo = []
  for s in steps:
    if (svg := drawn.get(P.step_key(s))) is None: todo.append(s)
    else: picture.svg_path(directory, s).write_text(svg, encoding="utf-8")
  return len(steps) - len(todo) + len(picture.export_svg(todo, directory, max_nodes=max_nodes)), time.perf_counter() - st


def write(trace: Trace, out: Path, title: str, max_nodes: int, svg: str, jobs: int | None = None,
          early: EarlySegments | None = None) -> None:
  """out/index.html (every step and match) and the SVG files asked for in out/svg/, written by `jobs` forked worker
  processes at once (default: one per core, see tgviz.work.forked; 0: in this process); early: the segments written during
  the capture, taken where they hold."""
  writer = report.Writer(trace, title, max_nodes)
  head = writer.head()  # (this process's own part, made while the writer after the run goes on: take() stops it)
  done = early.take(writer) if early is not None else None
  if early is not None and early.written:
    tabs = plural(early.kernels, "kernel's", "kernels'")
    # (a segment written early whose steps the rest of the run changed, a schedule's, is written again: not taken)
    again = f"; {early.written - early.taken} more written, then changed by the run" if early.written > early.taken else ""
    print(f"  written during the run: {early.taken} of {plural(len(writer.segments), 'report segment')} (by "
          f"{plural(early.forks, 'process', 'processes')}{again}), {tabs} code and asm tabs made"
          + (f", {plural(len(early.svgs), 'SVG file')} drawn" if early.pictures is not None else ""))
  with forked.Workers(writer, forked.cores() if jobs is None else jobs) as workers:
    drawn = early.svgs if early is not None else {}
    svgs = workers.submit(_svgs, (out / "svg", max_nodes, svg == "landmarks", drawn)) if svg != "none" else None
    html = writer.write(out / "index.html", workers, progress=_progress("report steps"), written=done, head=head)
    n, seconds = svgs.result() if svgs is not None else (0, 0.0)
    print(f"  wrote {plural(n, 'SVG file')} ({svg}" + (f"; {len(drawn)} drawn during the run) in {seconds:.1f} s" if svgs is not None else ")"))
  print(f"tgviz: report: {html.resolve()}" + (f"\n       SVGs:   {(out / 'svg').resolve()}/" if svgs is not None else ""))


def run(script: Path, out: Path, device: str | None, max_nodes: int, args: list[str], svg: str = "landmarks",
        jobs: int | None = None, save: bool = False, env: dict[str, Any] | None = None, retime: int = SLOWEST,
        what_if: int = WHAT_IFS) -> tuple[int, Trace | None]:
  """Run script under capture (with tinygrad Context settings env), time kernels again until the retime slowest
  are warm medians (see Trace.retime), retry the what_if slowest kernels with other opts (see tgviz.trace.whatif.what_ifs), write
  out/index.html and out/svg/ (save: and the trace, out/trace.tgviz); returns the exit status and the trace."""
  with EarlySegments(on=jobs != 0, pictures=(max_nodes, svg == "landmarks") if svg != "none" else None) as early:
    st = time.perf_counter()
    status, trace = trace_script(script, device, args, env, early)
    ran = time.perf_counter() - st
    # what the run made stays till the report is written: the cyclic collector would rescan it (millions of objects)
    # at each full collection the retries' compiles and the report's work set off (0.6 s in making the report's writer)
    gc.freeze()
    try:
      if trace is not None: early.after(trace)  # (on the core the retries leave idle)
      if trace is not None and retime > 0: retimed(trace, retime)
      if trace is not None and what_if > 0: retried(trace, what_if, beam_seconds(ran), what_if_seconds(ran))
      if trace is not None: write(trace, out, f"tgviz: {script.name}", max_nodes, svg, jobs, early)
    finally: gc.unfreeze()
  if trace is not None and save:
    print(f"tgviz: trace:  {trace.save(out / 'trace.tgviz').resolve()} (tgviz open it, or tgviz.load it, anywhere)")
  return status, trace


def retimed(trace: Trace, slowest: int) -> None:
  """Kernels timed again (warm, until their medians settle) until the `slowest` kernels by device time are warm medians
  (see Trace.retime)."""
  st = time.perf_counter()
  try: done = trace.retime(slowest=slowest)
  except Exception as e:
    print(f"tgviz: kernels not timed again: {type(e).__name__}: {e}", file=sys.stderr)
    return
  if done:
    # (each a median and its runs: the kernel table gives the spread; a line of Timing.text()s ran to 400 characters,
    # and of every kernel timed, the slowest and the ones that dropped out below them, to 1,000)
    ranked = sorted(done, key=lambda k: (-(k.warm_total_us or 0.0), k.display_name))  # (ties, as tiny kernels' are: by name)
    said = [f"{k.display_name} {time_text(t.median_us)} ({t.n} runs{', not settled' if t.stable is False else ''})"
            for k in ranked[:slowest] if (t := k.timing) is not None]
    more = f", and {len(ranked) - slowest} more" if len(ranked) > slowest else ""
    print(f"  timed again in {time.perf_counter() - st:.1f} s, {len(done)} kernels (medians re-timed warm until the {slowest} "
          f"slowest by device time are warm, not cold first launches; all in the kernel table, with their spread): "
          + ", ".join(said) + more)


def retried(trace: Trace, slowest: int, beam: float, budget: float) -> None:
  """The slowest kernels retried with other opts for the report's what-if sheet (BEAM searching each for beam seconds at
  most; no retry begun past budget seconds), each retry said in a line."""
  st = time.perf_counter()
  try: done = what_ifs(trace, slowest, beam, budget)
  except Exception as e:
    print(f"tgviz: kernels not retried: {type(e).__name__}: {e}", file=sys.stderr)
    return
  print(f"  what if, for the report (--what-if {slowest}), in {time.perf_counter() - st:.1f} s:"
        + ("" if done else " no retry made (the report's what-if sheet says why)"))
  for r in done: print(f"    {r.summary()}")


def trace_script(script: Path, device: str | None, args: list[str], env: dict[str, Any] | None = None,
                 early: EarlySegments | None = None) -> tuple[int, Trace | None]:
  """Run script under capture (with tinygrad Context settings env; early: writing its report's segments as it runs);
  returns the exit status and the trace (None when there is no script or the capture could not start)."""
  if not script.is_file():
    print(f"tgviz: no such script: {script}", file=sys.stderr)
    return 2, None
  print(f"tgviz: running {script}{''.join(f' {k}={v}' for k, v in (env or {}).items())} with tinygrad's compiler traced")
  st = time.perf_counter()
  status, saved_argv = 0, sys.argv
  sys.argv = [str(script), *args]
  trace: Trace | None = None
  try:
    # the report's -g builds, and its segments, made as the script runs
    with tg.ListingBuilds(), capture(device=device, env=env) as trace, (early or EarlySegments(on=False)).during(trace):
      runpy.run_path(str(script), run_name="__main__")
  except SystemExit as e:
    status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
  except BaseException as e:
    text = _script_traceback(e, script)
    print(text, end="", file=sys.stderr)
    status = 1
    if trace is not None:
      trace.traceback = text
      if (failed := trace.failure) is not None: print(f"tgviz: tinygrad failed: {failed.summary()}", file=sys.stderr)
      print(f"tgviz: {script} failed; writing the report of what was traced up to the failure", file=sys.stderr)
  finally:
    sys.argv = saved_argv
  if trace is None:  # the capture itself could not start: there is nothing to report
    print(f"tgviz: could not trace {script}: see the error above", file=sys.stderr)
    return 1, None
  print(f"tgviz: traced in {time.perf_counter() - st:.1f} s: {trace.summary(kernels=False)}")
  return status, trace


def _script_traceback(e: BaseException, script: Path) -> str:
  """The traceback of what the script raised, from the script's own outermost frame on (the frames of tgviz and runpy
  above it say nothing about the script); all of it when the error did not come from the script."""
  tb = e.__traceback__
  while tb is not None and tb.tb_frame.f_code.co_filename != str(script): tb = tb.tb_next
  return "".join(traceback.format_exception(type(e), e, tb or e.__traceback__))


def _summary_row(name: str, link: str, trace: Trace | None, status: int) -> str:
  if trace is None: return f"<tr><td>{escaped(name)}</td><td colspan='5'>not traced (exit status {status})</td></tr>"
  steps = list(trace.steps)
  error = f"{type(trace.error).__name__}: {trace.error}" if trace.error is not None else ("" if status == 0 else f"exit status {status}")
  kernels = ", ".join(k.display_name for k in trace.kernels[:8]) + (f", … ({len(trace.kernels)})" if len(trace.kernels) > 8 else "")
  return (f"<tr><td><a href='{escaped(link)}/index.html'>{escaped(name)}</a></td><td>{len(trace.kernels)}: {escaped(kernels)}</td>"
          f"<td>{len(steps)}</td><td>{sum(s.match_count for s in steps)}</td><td class='err'>{escaped(error)}</td>"
          f"<td><a href='{escaped(link)}/svg/'>SVGs</a></td></tr>")


def run_many(scripts: list[Path], out: Path, device: str | None, max_nodes: int, svg: str, jobs: int | None = None,
             save: bool = False, env: dict[str, Any] | None = None, retime: int = SLOWEST, what_if: int = WHAT_IFS) -> int:
  """Run several scripts, each into out/<script name>/, and write out/index.html: each one's summary and links."""
  results = [(s, *run(s, out / s.stem, device, max_nodes, [], svg, jobs, save, env, retime, what_if)) for s in scripts]
  rows = "".join(_summary_row(s.name, s.stem, trace, rc) for s, rc, trace in results)
  (out / "index.html").write_text(
    "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>tgviz reports</title><style>"
    "body{font-family:system-ui,sans-serif;margin:16px} table{border-collapse:collapse} td,th{padding:4px 10px;"
    "border-bottom:1px solid #ddd;text-align:left;vertical-align:top} .err{color:#b00020}"
    "@media (prefers-color-scheme: dark){body{background:#1e1e1e;color:#ddd} a{color:#8ab4f8}}</style></head>"
    "<body><h1>tgviz reports</h1><table><tr><th>script</th><th>kernels</th><th>steps</th><th>matches</th><th>error</th>"
    f"<th></th></tr>{rows}</table></body></html>", encoding="utf-8")
  print(f"tgviz: all reports: {(out / 'index.html').resolve()}")
  return max(rc for _, rc, _ in results)


def open_file(path: Path, out: Path, max_nodes: int, svg: str, jobs: int | None = None, trusted: bool = False) -> int:
  """Open a trace file (trusted: with plain pickle, see tgviz.load), write out/index.html and the SVGs in out/svg/;
  returns the exit status."""
  try: trace = load(path, trusted=trusted)
  except (OSError, TraceFileError) as e:
    print(f"tgviz: cannot open {path}: {e}", file=sys.stderr)
    return 2
  print(f"tgviz: opened {path}: {trace.summary(kernels=False)}")
  if len(timeline := trace.timeline()): print(f"  {timeline.summary()}\n  {trace.memory().summary()}")
  write(trace, out, f"tgviz: {path.name}", max_nodes, svg, jobs)
  return 0


def show(path: Path, level: int, kernel: str | None, step: str | None, search: str | None, as_json: bool, device: str | None,
         args: list[str], env: dict[str, Any] | None = None) -> int:
  """Print, from a saved trace or a script run traced (.py), what tinygrad's DEBUG=level prints (tgviz.trace.debug), the
  steps whose name has step, or the hits of search; of the kernels kernel names; as JSON lines if as_json. Everything
  else (the script's own output, tgviz's) goes to stderr. Returns the exit status: the script's, else 0; 2 when there is
  nothing to show (no such file or kernel)."""
  status = 0
  if path.suffix == ".py":
    with contextlib.redirect_stdout(sys.stderr): status, trace = trace_script(path, device, args, env)
    if trace is None: return status or 2
  else:
    try: trace = load(path)
    except (OSError, TraceFileError) as e:
      print(f"tgviz show: cannot open {path}: {e}", file=sys.stderr)
      return 2
  if kernel is not None and not debug.named(trace, kernel):
    print(f"tgviz show: no kernel {kernel!r} in {path} (kernels: {', '.join(k.display_name for k in trace.kernels) or 'none'})", file=sys.stderr)
    return 2
  if search is not None: records = debug.hits(trace, search)
  elif step is not None: records = debug.steps(trace, step, level, kernel)
  else: records = debug.listing(trace, level, kernel)
  try:
    for r in records: print(json.dumps(r) if as_json else debug.render(r))
    sys.stdout.flush()
  except BrokenPipeError:  # the reader had enough (| head): the rest goes nowhere, quietly
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
  return status


def compare_scripts(scripts: tuple[Path, Path], envs: tuple[list[str], list[str]], out: Path, device: str | None,
                    max_nodes: int) -> int:
  """Run two scripts (each under its tinygrad Context settings, NAME=VALUE) and write the comparison page out/index.html;
  returns the exit status (2: a bad setting or no such script; 1: a script failed, compared up to the failure)."""
  try: settings = [parse_settings(e) for e in envs]
  except ValueError as e:
    print(f"tgviz compare: {e}", file=sys.stderr)
    return 2
  labels = [f"{p.name}{''.join(f' {k}={v}' for k, v in env.items())}" for p, env in zip(scripts, settings, strict=True)]
  if labels[0] == labels[1]: labels = [f"a: {labels[0]}", f"b: {labels[1]}"]
  results = [trace_script(p, device, [], env) for p, env in zip(scripts, settings, strict=True)]
  traces = [t for _, t in results if t is not None]
  if len(traces) < 2: return max(rc for rc, _ in results) or 1
  comparison = compare(traces[0], traces[1], labels=(labels[0], labels[1]))
  print(comparison.summary())
  page = comparison.to_html(out / "index.html", title=f"tgviz: {labels[0]} vs {labels[1]}", max_nodes=max_nodes)
  print(f"tgviz: comparison: {page.resolve()}")
  return max(rc for rc, _ in results)


def main(argv: list[str] | None = None) -> int:
  parser = argparse.ArgumentParser(prog="tgviz", description="See what tinygrad's compiler did.")
  sub = parser.add_subparsers(dest="command", required=True)
  r = sub.add_parser("run", help="run a script with tinygrad's compiler traced; write an HTML report and SVGs")
  r.add_argument("script", type=Path, nargs="+", help="the script (several: each gets its own report, no script args)")
  r.add_argument("--device", default=None, help="tinygrad device, e.g. CL, CPU, NULL:CUDA:sm_90 (default: DEV, else CL)")
  r.add_argument("--save", action="store_true", help="also save the trace as DIR/trace.tgviz (tgviz open or tgviz.load it later)")
  r.add_argument("--retime", type=int, default=SLOWEST, metavar="N",
                 help=f"after the run, time kernels again, warm, until the N slowest by device time are settled medians, not "
                      f"cold first launches (default {SLOWEST}; 0: none)")
  r.add_argument("--what-if", type=int, default=WHAT_IFS, metavar="N",
                 help=f"after the run, retry the N slowest kernels with other opts (none, one size up, BEAM's pick in a short "
                      f"search), each run on the same inputs as the original and compared: the report's what-if sheet shows "
                      f"them (default {WHAT_IFS}; 0: none)")
  r.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                 help="run under this tinygrad Context setting, e.g. --env BEAM=2 (repeatable)")
  o = sub.add_parser("open", help="write the HTML report and SVGs of a saved trace or of tinygrad's rewrites.pkl (VIZ=-1)")
  o.add_argument("file", type=Path, help="a file Trace.save wrote, or tinygrad's rewrites.pkl (read without running anything in it)")
  o.add_argument("--trust", action="store_true", help="unpickle the file as plain pickle, which can run code in it: only for a "
                                                      "tinygrad dump of your own that holds more than a trace does")
  w = sub.add_parser("show", help="print what tinygrad's DEBUG levels print (kernels, launches, opts, code, ASTs, programs), "
                                    "a step's matches, or a search's hits, from a saved trace or a script run traced")
  w.add_argument("file", type=Path, help="a saved trace (trace.tgviz; tinygrad's rewrites.pkl) or a script (.py: run traced first)")
  w.add_argument("--debug", type=int, default=2, choices=range(2, 7), metavar="N",
                 help="as tinygrad's DEBUG=N: 2 each launch (time, GFLOP/s, launch dims), 3 each kernel's opts, 4 its code, "
                      "5 its AST, 6 its linearized program (default 2)")
  w.add_argument("--kernel", metavar="K", help="only the kernels K names: a name or glob (r_*), a display name (E_2 #2), a key "
                                               "(4+ hex digits), or the user's line they came from (train.py:27)")
  w.add_argument("--step", metavar="S", help="the steps whose name has S instead: each with its matches' rules (--debug 3), "
                                             "the graph after it (5) and before it (6)")
  w.add_argument("--search", metavar="TEXT", help="the hits of a search instead (kernels, steps, origins, UOps, rules, code)")
  w.add_argument("--json", action="store_true", help="one JSON object per line (the same records the text is printed from)")
  w.add_argument("--device", default=None, help="for a script: tinygrad device, e.g. CL, CPU, NULL:CUDA:sm_90")
  w.add_argument("--env", action="append", default=[], metavar="NAME=VALUE", help="for a script: a tinygrad Context setting (repeatable)")
  c = sub.add_parser("compare", help="run two scripts with tinygrad's compiler traced and write an HTML comparison: kernels "
                                      "paired, code diffs, landmark graphs, kernel table")
  c.add_argument("script_a", type=Path, help="the first script (side a)")
  c.add_argument("script_b", type=Path, help="the second script (side b; may be the same script under other settings)")
  c.add_argument("--env", action="append", default=[], metavar="NAME=VALUE", help="tinygrad Context setting for both sides")
  c.add_argument("--env-a", action="append", default=[], metavar="NAME=VALUE", help="tinygrad Context setting for side a only")
  c.add_argument("--env-b", action="append", default=[], metavar="NAME=VALUE", help="... for side b only, e.g. --env-b WINO=1")
  c.add_argument("--out", type=Path, default=Path("tgviz-compare"), help="output folder (default: tgviz-compare)")
  c.add_argument("--device", default=None, help="tinygrad device, e.g. CL, CPU, NULL:CUDA:sm_90 (default: DEV, else CL)")
  c.add_argument("--max-nodes", type=int, default=DEFAULT_MAX_NODES, help="node budget of the focused view")
  for p in (r, o):
    p.add_argument("--out", type=Path, default=Path("tgviz-report"), help="output folder (default: tgviz-report)")
    p.add_argument("--max-nodes", type=int, default=DEFAULT_MAX_NODES, help="node budget of the focused view")
    p.add_argument("--svg", choices=("landmarks", "all", "none"), default="landmarks",
                   help="which steps get an SVG file in DIR/svg/: tinygrad's 'View ...' landmarks of every group (default), "
                        "every step (thousands on a real model), or none")
    p.add_argument("-j", "--jobs", type=int, default=None, metavar="N",
                   help=f"worker processes that write the report and SVGs (default: one per core, at most {forked.MAX_WORKERS}; "
                        "0: all in this process)")
  ns, script_args = parser.parse_known_args(argv)  # options tgviz does not know go to the script
  if getattr(ns, "jobs", None) is not None and ns.jobs < 0: parser.error(f"--jobs takes 0 or more worker processes, not {ns.jobs}")
  if getattr(ns, "retime", 0) < 0: parser.error(f"--retime takes 0 or more kernels, not {ns.retime}")
  if getattr(ns, "what_if", 0) < 0: parser.error(f"--what-if takes 0 or more kernels, not {ns.what_if}")
  if ns.command in ("open", "compare") and script_args: parser.error(f"unrecognized arguments: {' '.join(script_args)}")
  if ns.command == "show":
    if script_args and ns.file.suffix != ".py": parser.error(f"unrecognized arguments: {' '.join(script_args)}")
    try: show_env = parse_settings(ns.env)
    except ValueError as e: parser.error(f"--env: {e}")
    return show(ns.file, ns.debug, ns.kernel, ns.step, ns.search, ns.json, ns.device, script_args, show_env)
  svg = getattr(ns, "svg", "none") != "none" and len(getattr(ns, "script", [])) <= 1  # (several scripts: each its own svg/)
  outs = [(ns.out, "--out")] + ([(ns.out / "svg", "--out")] if svg else [])
  if ns.command in ("run", "open", "compare") and (why := next(filter(None, (unwritable(f, o) for f, o in outs)), None)):
    print(why, file=sys.stderr)
    return 2
  if ns.command == "compare":
    return compare_scripts((ns.script_a, ns.script_b), (ns.env + ns.env_a, ns.env + ns.env_b), ns.out, ns.device, ns.max_nodes)
  if ns.command == "open":
    return open_file(ns.file, ns.out, ns.max_nodes, ns.svg, ns.jobs, trusted=ns.trust)
  try: env = parse_settings(ns.env)
  except ValueError as e: parser.error(f"--env: {e}")
  if len(ns.script) > 1:
    if script_args: parser.error(f"arguments {script_args} can only be passed to a single script")
    return run_many(ns.script, ns.out, ns.device, ns.max_nodes, ns.svg, ns.jobs, ns.save, env, ns.retime, ns.what_if)
  return run(ns.script[0], ns.out, ns.device, ns.max_nodes, script_args, ns.svg, ns.jobs, ns.save, env, ns.retime, ns.what_if)[0]


def console() -> NoReturn:
  """The `tgviz` command: main(), then the process ends without taking its objects apart one by one (a traced run holds
  millions: Python's teardown took a second after a GPT step's report was written); what is registered to run at exit
  runs, and the output is flushed."""
  code = main()
  atexit._run_exitfuncs()
  sys.stdout.flush()
  sys.stderr.flush()
  os._exit(code)


if __name__ == "__main__":
  console()
