"""tinygrad's DEBUG listings rebuilt from a trace (what ``tgviz show`` prints), as records (plain dicts: a JSON line each)
and as text (:func:`render`: what tinygrad prints at that DEBUG level, with tgviz's additions after it).

Levels, as tinygrad's: 2 each launch of the run (``*** CL  3 r_2_2 arg 2 mem 0.00 GB tm ...``, then the launch dimensions
and the kernel's key), 3 each kernel's opts (``r_2_2  opts: (...)``; before them a ``---`` line naming the kernel), 4 its
code, 5 its AST as tinygrad's Python (pyrender), 6 its linearized program (print_uops, which tinygrad 0.14 prints only
for a kernel that fails its checks). A kernel is listed before the launches of its schedule, where tinygrad compiles it.
Also: a step's listing (:func:`steps`), a search's hits (:func:`hits`) and where tinygrad failed (first, when it did).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from tgviz import bridge as tg
from tgviz.trace import failure as F
from tgviz.trace import search as S
from tgviz.trace.kernel import Kernel
from tgviz.trace.run import Launch
from tgviz.trace.steps import Step, where
from tgviz.trace.trace import Trace
from tgviz.trace.units import plural

Record = dict[str, Any]


def named(trace: Trace, spec: str | None) -> list[Kernel]:
  """The kernels spec names, in compile order: by name, display name, a glob of them or their key (Kernel.named), or by
  the user's line an origin of theirs came from, "FILE:LINE" ("train.py:27", a path's end) or ":LINE"."""
  if spec is None: return list(trace.kernels)
  file, _, line = spec.rpartition(":")
  def from_line(k: Kernel) -> bool:
    return any(o.file is not None and str(o.line) == line and (not file or Path(o.file).name == file or o.file.endswith(file))
               for o in k.origins)
  return [k for k in trace.kernels if k.named(spec) or (line.isdigit() and from_line(k))]


def _dims(size: tuple[int, ...] | None) -> list[int] | None:
  return list(size) if size is not None else None


def kernel_record(k: Kernel, level: int) -> Record:
  """A kernel at a DEBUG level: name, key, device and launch dimensions; opts (3), code (4), AST (5), program (6)."""
  r: Record = {"type": "kernel", "name": k.name, "label": k.display_name, "key": k.short_key, "device": k.device,
               "global": _dims(k.global_size), "local": _dims(k.local_size)}
  if level >= 5: r["ast"] = tg.python_text(k.group.steps[0].before()) if k.group.steps else ""
  if level >= 3: r["opts"] = tg.opts_text(k._program_uop) if k._program_uop is not None else ""
  if level >= 4: r["code"] = k.source
  if level >= 6: r["uops"] = k.print_uops()
  return r


def _launch_records(trace: Trace, launches: list[Launch]) -> list[Record]:
  mem, total = trace.memory(), 0.0
  before, events, e = sum(mem.before.values()), mem.events, 0
  out = []
  for n, x in enumerate(launches, 1):
    end = x.start_us + (x.host_us if x.host_us is not None else x.duration_us or 0.0)
    while e < len(events) and events[e].t_us <= end: e += 1  # tinygrad says the memory in use once the call has run
    total += x.duration_us or 0.0
    k = x.kernel
    out.append({"type": "launch", "n": n, "device": x.lane, "name": x.name, "kernel": k.display_name if k is not None else None,
                "key": k.short_key if k is not None else None, "args": x.args, "mem": before + (events[e - 1].in_use if e else 0),
                "us": x.duration_us, "total_ms": total * 1e-3, "flops": k.flops if k else None, "bytes": k.bytes if k else None,
                "lds": k._program.lds if k is not None and k._program is not None else None,
                "global": _dims(k.global_size) if k else None, "local": _dims(k.local_size) if k else None})
  return out


def failure_record(f: F.Failure) -> Record:
  k = f.kernel
  return {"type": "failure", "kind": f.kind, "summary": f.summary(), "step": f.step.path, "group": f.step.group.index,
          "index": f.step.index, "match": f.match, "node": f.node, "line": f.line, "kernel": k.display_name if k else None,
          "error": f.error, "traceback": f.traceback}


def listing(trace: Trace, level: int = 2, kernel: str | None = None) -> list[Record]:
  """The DEBUG=level listing of the kernels kernel names (see named; None: all) and their launches: where tinygrad failed
  first, if it did; then the run's launches (level 2), each kernel listed (from level 3) before the first launch of its
  schedule's kernels; the kernels never launched (or all, in a trace without the run) at the end."""
  out = [failure_record(f)] if (f := F.failure(trace)) is not None else []
  kernels = named(trace, kernel)
  chosen = {id(k) for k in kernels}
  run = [x for x in trace.timeline() if x.args is not None and x.counted]  # the runner's calls, numbered as tinygrad counts them
  kept = [(x, r) for x, r in zip(run, _launch_records(trace, run), strict=True)
          if kernel is None or (x.kernel is not None and id(x.kernel) in chosen)]
  batch: dict[int, int] = {}  # kernel -> its schedule's number: the kernels compiled between two schedules
  b, after_kernel = 0, False
  for g in trace.groups:
    if g.kind == "schedule" and after_kernel: b, after_kernel = b + 1, False
    if g.kernel is not None: batch[id(g.kernel)], after_kernel = b, True
  listed = 0
  for x, r in kept:
    if level >= 3 and x.kernel is not None and id(x.kernel) in chosen:
      while listed < len(kernels) and batch[id(kernels[listed])] <= batch[id(x.kernel)]:
        out.append(kernel_record(kernels[listed], level))
        listed += 1
    out.append(r)
  if level >= 3 or not kept: out += [kernel_record(k, level) for k in kernels[listed:]]
  return out


def step_record(s: Step, level: int) -> Record:
  """A step: its path, match count and where graph_rewrite was called; each match's rule (3); the graph after it (5) and
  before it (6), as tinygrad's Python."""
  k = s.group.kernel
  r: Record = {"type": "step", "path": s.path, "kernel": k.display_name if k else None, "key": k.short_key if k else None,
               "group": s.group.index, "index": s.index, "matches": s.match_count, "where": where(*s.loc), "error": s.error}
  if level >= 3: r["rules"] = [[m.index, where(*m.loc), m.source] for m in s.matches]
  if level >= 5: r["after"] = tg.python_text(s.after())
  if level >= 6: r["before"] = tg.python_text(s.before())
  return r


def steps(trace: Trace, name: str, level: int = 2, kernel: str | None = None) -> list[Record]:
  """The steps whose name contains name (case-insensitive), of the kernels kernel names (None: every group's)."""
  groups = [k.group for k in named(trace, kernel)] if kernel is not None else trace.groups
  return [step_record(s, level) for g in groups for s in g.steps if name.lower() in s.name.lower()]


def hits(trace: Trace, text: str) -> list[Record]:
  """A search's hits (trace.search): a line counting them by kind, then each hit."""
  found = S.search(trace, text)
  counts = {kind: n for kind in S.KINDS if (n := sum(h.kind == kind for h in found))}
  out: list[Record] = [{"type": "search", "text": text, "hits": len(found), "counts": counts}]
  for h in found:
    k = h.kernel
    out.append({"type": "hit", "kind": h.kind, "kernel": k.display_name if k else None, "key": k.short_key if k else None,
                "step": h.step.path if h.step is not None else None, "group": h.step.group.index if h.step is not None else None,
                "index": h.step.index if h.step is not None else None, "match": h.match, "line": h.line, "text": h.text,
                "node": h.node, "count": h.count})
  return out


# *** text ***

def _time_to_str(t: float, w: int) -> str:
  """tinygrad's helpers.time_to_str."""
  return next((f"{t * d:{w}.2f}{unit}" for d, unit in ((1, "s "), (1e3, "ms")) if t > 10 / d), f"{t * 1e6:{w}.2f}us")


def _launch_line(r: Record) -> str:
  """As tinygrad's DEBUG=2 prints a launch (engine/realize.py track_stats), then its launch dimensions and kernel key."""
  line = f"*** {r['device'][:7]:7s} {r['n']:4d} {r['name']:46s} arg {r['args']:2d} mem {r['mem'] / 1e9:6.2f} GB"
  if (us := r["us"]) is not None:
    et = max(us * 1e-6, 1e-20)
    flops, membw, ldsbw = (r["flops"] or 0) / et, (r["bytes"] or 0) / et, (r["lds"] or 0) / et
    flops_str = f"{flops * 1e-9:7.0f} GFLOPS" if flops < 1e14 else f"{flops * 1e-12:7.0f} TFLOPS"
    mem_str = f"{membw * 1e-9:4.0f}|{ldsbw * 1e-9:<6.0f} GB/s" if membw < 1e13 and ldsbw < 1e15 else \
      f"{membw * 1e-12:4.0f}|{ldsbw * 1e-12:<6.0f} TB/s"
    line += f" tm {_time_to_str(et, 9)}/{r['total_ms']:9.2f}ms ({flops_str} {mem_str})"
  if r["global"] is not None: line += f"  global={tuple(r['global'])} local={tuple(r['local']) if r['local'] is not None else None} key={r['key']}"
  return line


def _kernel_text(r: Record) -> str:
  local = tuple(r["local"]) if r["local"] is not None else None
  lines = [f"--- kernel {r['label']}  key={r['key']}  {r['device']}  global={tuple(r['global'] or ())} local={local}"]
  if r.get("ast"): lines.append(r["ast"])
  if r.get("opts"): lines.append(f"{r['name']:<25} opts: {r['opts']}")  # as tinygrad's do_linearize prints them
  if "code" in r: lines.append(r["code"])
  if "uops" in r: lines.append(r["uops"])
  return "\n".join(lines)


def _step_text(r: Record) -> str:
  lines = [f"=== {r['path']}  {plural(r['matches'], 'match', 'matches')}  (graph_rewrite at {r['where']})"]
  if r["error"]: lines.append(f"  raised: {r['error']}")
  lines += [f"  match {k + 1:4d}  {at:28s} {source}" for k, at, source in r.get("rules", [])]
  for side in ("before", "after"):
    if side in r: lines += [f"  {side}:", r[side]]
  return "\n".join(lines)


def _hit_text(r: Record) -> str:
  at = r["step"] or ""
  if r["match"] is not None: at += f" match {r['match'] + 1}"
  if r["line"] is not None: at += f" line {r['line']}"
  if r["count"] is not None: at += f" ({plural(r['count'], 'match', 'matches')})"
  return f"{r['kind']:6s}  {at}  {r['text']}"


def render(r: Record) -> str:
  """A record as text (what ``tgviz show`` prints for it; its JSON line reads back into the same record)."""
  kind = r["type"]
  if kind == "launch": return _launch_line(r)
  if kind == "kernel": return _kernel_text(r)
  if kind == "step": return _step_text(r)
  if kind == "hit": return _hit_text(r)
  if kind == "search":
    if not r["hits"]: return f"no match for {r['text']!r}"
    return f"{r['hits']} hits for {r['text']!r}: " + ", ".join(f"{n} {kind}" for kind, n in r["counts"].items())
  if kind == "failure":
    line = f" (line {r['line']})" if r["line"] is not None else ""
    return f"FAILED ({r['kind']}{line}): {r['summary']}\n  at {r['step']}" + \
      (f" match {r['match'] + 1}" if r["match"] is not None else "") + (f", on node {r['node']}" if r["node"] else "") + \
      f"\n{r['traceback'].rstrip() or r['error']}"
  raise ValueError(f"no such listing record: {kind!r}")
