"""The command line: ``tgviz run SCRIPT.py [--out DIR] [--device DEV]`` writes an HTML report and SVGs.

With several scripts, each gets its own report folder under DIR and DIR/index.html links them."""
from __future__ import annotations

import argparse
import runpy
import sys
import time
import traceback
from pathlib import Path

from tgviz import layout as L
from tgviz.api import Trace, capture
from tgviz.report import DEFAULT_MATCH_PICTURES


def _progress(label: str):
  tty, step = sys.stdout.isatty(), [0]
  def report(done: int, total: int) -> None:
    pct = done * 100 // total
    if tty: print(f"\r  {label}: {done}/{total} ({pct}%)", end="\n" if done == total else "", flush=True)
    elif pct >= step[0] or done == total:
      print(f"  {label}: {done}/{total} ({pct}%)", flush=True)
      step[0] = pct + 10
  return report


def run(script: Path, out: Path, device: str | None, max_nodes: int, matches: int, args: list[str], svg: str = "landmarks") -> int:
  """Run script under capture, write out/index.html and out/svg/; returns the exit status."""
  if not script.is_file():
    print(f"tgviz: no such script: {script}", file=sys.stderr)
    return 2
  print(f"tgviz: running {script} with tinygrad's compiler traced")
  st = time.perf_counter()
  status, saved_argv = 0, sys.argv
  sys.argv = [str(script), *args]
  trace: Trace | None = None
  try:
    with capture(device=device) as trace:
      runpy.run_path(str(script), run_name="__main__")
  except SystemExit as e:
    status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
  except BaseException:
    traceback.print_exc()
    status = 1
    if trace is not None: print(f"tgviz: {script} failed; writing the report of what was traced up to the failure", file=sys.stderr)
  finally:
    sys.argv = saved_argv
  if trace is None:  # the capture itself could not start: there is nothing to report
    print(f"tgviz: could not trace {script}: see the error above", file=sys.stderr)
    return 1
  print(f"tgviz: traced in {time.perf_counter() - st:.1f} s: {trace.summary()}")
  svgs = trace.export_svg(out / "svg", max_nodes=max_nodes, landmarks=svg == "landmarks") if svg != "none" else []
  print(f"  wrote {len(svgs)} SVG files ({svg})")
  html = trace.to_html(out / "index.html", title=f"tgviz: {script.name}", max_nodes=max_nodes, match_pictures=matches,
                       progress=_progress("report pictures"))
  print(f"tgviz: report: {html.resolve()}\n       SVGs:   {(out / 'svg').resolve()}/")
  return status


def run_many(scripts: list[Path], out: Path, device: str | None, max_nodes: int, matches: int, svg: str) -> int:
  """Run several scripts, each into out/<script name>/, and write out/index.html linking their reports."""
  results = [(s, run(s, out / s.stem, device, max_nodes, matches, [], svg)) for s in scripts]
  items = "".join(f'<li><a href="{L.text(s.stem)}/index.html">{L.text(s.name)}</a>{"" if rc == 0 else " (failed)"}'
                  f' · <a href="{L.text(s.stem)}/svg/">SVGs</a></li>' for s, rc in results)
  (out / "index.html").write_text(f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>tgviz reports</title></head>"
                                  f"<body><h1>tgviz reports</h1><ul>{items}</ul></body></html>", encoding="utf-8")
  print(f"tgviz: all reports: {(out / 'index.html').resolve()}")
  return max(rc for _, rc in results)


def main(argv: list[str] | None = None) -> int:
  parser = argparse.ArgumentParser(prog="tgviz", description="See what tinygrad's compiler did.")
  sub = parser.add_subparsers(dest="command", required=True)
  r = sub.add_parser("run", help="run a script with tinygrad's compiler traced; write an HTML report and SVGs")
  r.add_argument("script", type=Path, nargs="+", help="the script (several: each gets its own report, no script args)")
  r.add_argument("--out", type=Path, default=Path("tgviz-report"), help="output folder (default: tgviz-report)")
  r.add_argument("--device", default=None, help="tinygrad device, e.g. CL, CPU, NULL:CUDA:sm_90 (default: DEV, else CL)")
  r.add_argument("--max-nodes", type=int, default=L.DEFAULT_MAX_NODES, help="node budget of the focused view")
  r.add_argument("--matches", type=int, default=DEFAULT_MATCH_PICTURES,
                 help="keep per-match pictures of steps with at most this many matches")
  r.add_argument("--svg", choices=("landmarks", "all", "none"), default="landmarks",
                 help="which steps get an SVG file in DIR/svg/: tinygrad's 'View ...' landmarks of every group (default), "
                      "every step (thousands on a real model), or none")
  ns, script_args = parser.parse_known_args(argv)  # options tgviz does not know go to the script
  if len(ns.script) > 1:
    if script_args: parser.error(f"arguments {script_args} can only be passed to a single script")
    return run_many(ns.script, ns.out, ns.device, ns.max_nodes, ns.matches, ns.svg)
  return run(ns.script[0], ns.out, ns.device, ns.max_nodes, ns.matches, script_args, ns.svg)


if __name__ == "__main__":
  sys.exit(main())
