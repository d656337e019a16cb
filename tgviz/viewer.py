"""What the trace browser shows, as plain data: the tree, and the message for one selected step or match.

Shared by the live widget and the standalone HTML report, so both show the same thing.
"""
from __future__ import annotations

import difflib
import fnmatch
from functools import lru_cache
from pathlib import Path
from typing import Any

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name

from tgviz import layout as L
from tgviz.picture import export, picture
from tgviz.trace import Group, Step, Trace

# renderer class name -> pygments lexer
LEXERS = {"OpenCLRenderer": "c", "IntelRenderer": "c", "ClangRenderer": "c", "ClangJITRenderer": "c", "CUDARenderer": "cuda",
          "HIPRenderer": "cpp", "MetalRenderer": "cpp", "WGSLRenderer": "wgsl", "LLVMRenderer": "llvm",
          "CPULLVMRenderer": "llvm", "AMDLLVMRenderer": "llvm", "QCOMRenderer": "c", "NullRenderer": "c"}
LANDMARKS = ("View Base AST", "View Program", "View Output AST", "View Kernel Graph")
UOP_DIFF_LINES = 80


def _shown(trace: Trace, kernel: str | None) -> list[Group]:
  """The groups listed: all, except kernels whose name does not match the glob pattern kernel."""
  return [g for g in trace.groups
          if not kernel or g.kind != "kernel" or fnmatch.fnmatch(g.kernel.name if g.kernel else g.name, kernel)]


def tree(trace: Trace, kernel: str | None = None) -> list[dict[str, Any]]:
  """The trace tree: groups with their steps (name, depth, matches), in compile order. kernel: a glob pattern that
  limits the kernels listed (other groups stay)."""
  out = []
  for g in _shown(trace, kernel):
    out.append({"index": g.index, "name": g.name, "kind": g.kind, "matches": g.match_count,
                "kernel": g.kernel.name if g.kernel else None,
                "steps": [{"index": s.index, "name": s.name, "depth": s.depth, "matches": len(s.matches),
                           "snapshot": s.is_snapshot} for s in g.steps]})
  return out


def first_selection(trace: Trace, kernel: str | None = None) -> tuple[int, int]:
  """The most telling picture to open on, not bookkeeping: the View Base AST (else another landmark) of the kernel the
  compiler worked on most."""
  groups = [g for g in _shown(trace, kernel) if g.steps]
  for name in LANDMARKS:
    for g in sorted(groups, key=lambda g: (g.kind != "kernel", -g.match_count)):
      for s in g.steps:
        if s.name == name: return g.index, s.index
  return (groups[0].index, 0) if groups else (-1, -1)


@lru_cache(maxsize=None)
def code_css() -> str:
  """Pygments CSS for the code panel: a light style, and a dark one under JupyterLab's dark theme."""
  light = HtmlFormatter(style="default").get_style_defs(".tgviz-code")
  dark = HtmlFormatter(style="monokai").get_style_defs("body[data-jp-theme-light='false'] .tgviz-code")
  return light + "\n" + dark


@lru_cache(maxsize=256)
def highlight_code(source: str, renderer: str) -> str:
  """Generated device code as highlighted HTML (pygments escapes the text)."""
  return highlight(source, get_lexer_by_name(LEXERS.get(renderer, "c")), HtmlFormatter(nowrap=False))


def _kernel_info(step: Step) -> dict[str, Any] | None:
  k = step.group.kernel
  if k is None: return None
  return {"name": k.name, "device": k.device, "renderer": k.renderer, "global_size": list(k.global_size),
          "local_size": list(k.local_size) if k.local_size is not None else None,
          "html": highlight_code(k.source, k.renderer) if k.source else "", "source": k.source}


def _match_info(step: Step, match: int) -> dict[str, Any]:
  m = step.matches[match]
  u0, u1 = m.uops()
  diff = list(difflib.unified_diff(str(u0).splitlines(), str(u1).splitlines(), "matched", "replacement", lineterm="", n=2))
  return {"index": match, "file": m.loc[0], "line": m.loc[1], "where": f"{Path(m.loc[0]).name}:{m.loc[1]}",
          "source": m.source, "us": round(m.time * 1e6, 2), "error": m.is_error,
          "diff": "\n".join(diff[:UOP_DIFF_LINES]) + ("\n…" if len(diff) > UOP_DIFF_LINES else "")}


def step_message(trace: Trace, group: int, step: int, match: int = -1, view: str = "auto",
                 max_nodes: int = L.DEFAULT_MAX_NODES) -> dict[str, Any]:
  """Everything the browser shows for one selection: the SVG, the step and match details, the kernel's code."""
  s = trace.groups[group].steps[step]
  m = None if match < 0 else match
  side = "both" if s.matches else "before"  # a snapshot or no-op step shows its one graph
  pic = picture(s, side=side, match=m, max_nodes=max_nodes, view=view)
  return {"type": "picture", "group": group, "step": step, "match": match, "view": view, "svg": pic.svg,
          "partial": pic.partial, "message": pic.message, "shown": pic.shown, "total": pic.total,
          "info": {"name": s.name, "group": s.group.name, "kind": s.group.kind, "depth": s.depth, "matches": len(s.matches),
                   "where": f"{Path(s.loc[0]).name}:{s.loc[1]}", "file": s.loc[0], "line": s.loc[1], "error": s.error,
                   "stack": [f"{Path(f).name}:{ln} {fn}: {src}" for f, ln, fn, src in s.group.stack][:12]},
          "match_info": _match_info(s, m) if m is not None else None, "kernel": _kernel_info(s)}


def export_selection(trace: Trace, group: int, step: int, match: int, view: str, directory: str | Path,
                     max_nodes: int = L.DEFAULT_MAX_NODES) -> list[Path]:
  """Write the selected view as SVG, through the same code path as Trace.export_svg."""
  s = trace.groups[group].steps[step]
  return export([s], directory, side="both" if s.matches else "before", max_nodes=max_nodes, view=view,
                match=None if match < 0 else match)
