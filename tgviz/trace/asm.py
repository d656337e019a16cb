"""Assembly linked to source lines: objdump's listings read as text, and the line table of a debug build carried over to
the run's own disassembly.

The run's binary has no line info; a second build of the same source with -g (bridge.debug_listing, done when a view
asks) has. -g can change the code a little (clang schedules a prologue, allocates registers and stack slots differently with debug
info), so the two listings are aligned instruction by instruction (mnemonic and operands, addresses left out; where a
stretch differs, by mnemonic) and each instruction of the run's listing takes the line of the debug build's instruction
it aligns with; one that aligns with none has no line.
Owns only that text work: it runs nothing and knows no tinygrad.
"""
from __future__ import annotations

import difflib
import re
from collections.abc import Iterator

from tgviz.work.remembered import remembered

# an instruction row of objdump -d: address, bytes, then (but on a row continuing a long instruction's bytes) its text
_ROW = re.compile(r"^\s*([0-9a-f]+):\t[0-9a-f]{2}(?: [0-9a-f]{2})*\s*(?:\t(.*))?$")
# a line marker of objdump -l: file:line, maybe with a discriminator (line 0: code the compiler made for no line)
_MARKER = re.compile(r"^(\S.*):(\d+)(?: \(discriminator \d+\))?$")
_TARGET = re.compile(r"\b[0-9a-f]+ <[^>]*>")  # a branch target or objdump's note of an address: moves between builds
_COMMENT = re.compile(r"\s+(#|//|;).*$")


def _insn(text: str) -> str:
  """An instruction as compared across builds: mnemonic and operands, without addresses and objdump's comment."""
  return " ".join(_TARGET.sub("<>", _COMMENT.sub("", text)).split())


def rows(listing: str) -> list[tuple[int, str | None]]:
  """Per row of an objdump -d listing that is an instruction row: (its index in the listing's lines, the instruction
  text; None on a row that continues the previous instruction's bytes)."""
  out: list[tuple[int, str | None]] = []
  for i, ln in enumerate(listing.splitlines()):
    if m := _ROW.match(ln): out.append((i, _insn(m.group(2)) if m.group(2) else None))
  return out


def marked(listing: str) -> list[tuple[str, int | None]]:
  """Each instruction of an objdump -d -l listing with the source line its last line marker names (None: line 0, or
  before any marker)."""
  line: int | None = None
  out: list[tuple[str, int | None]] = []
  for ln in listing.splitlines():
    if (m := _ROW.match(ln)) and m.group(2): out.append((_insn(m.group(2)), line))
    elif not m and (mk := _MARKER.match(ln)): line = int(mk.group(2)) or None
  return out


def _pairs(a: list[str], b: list[str]) -> Iterator[tuple[int, int, bool]]:
  """Instructions of a aligned with instructions of b, in order: (index in a, index in b, whether they are the same
  instruction); where a stretch differs, its instructions of the same mnemonic are aligned (registers and stack slots
  are what -g changes most)."""
  if a == b:  # the usual case, -g changed no instruction: what difflib would say, in a fraction of its time
    yield from ((k, k, True) for k in range(len(a)))
    return
  for tag, a0, a1, b0, b1 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
    if tag == "equal": yield from ((a0 + k, b0 + k, True) for k in range(a1 - a0))
    elif tag == "replace":
      ops = difflib.SequenceMatcher(None, [t.split(" ")[0] for t in a[a0:a1]], [t.split(" ")[0] for t in b[b0:b1]], autojunk=False)
      for x, y, n in ops.get_matching_blocks(): yield from ((a0 + x + k, b0 + y + k, False) for k in range(n))


def source_lines(disassembly: str, debug: str) -> tuple[list[list[int]], int, int, int]:
  """For each line of a disassembly (objdump -d of the run's binary), the source lines it was compiled from, from the
  listing with line numbers (objdump -d -l) of a debug build of the same source: [] for a line that is no instruction
  or aligns with none; a row continuing an instruction's bytes takes its lines. Also how many instructions aligned with
  the same instruction, how many with one of the same mnemonic only, and how many there are."""
  run, dbg = rows(disassembly), marked(debug)
  insns = [(i, t) for i, t in run if t is not None]
  found: dict[int, int | None] = {}
  same = 0
  for a, b, exact in _pairs([t for _, t in insns], [t for t, _ in dbg]):
    found[insns[a][0]] = dbg[b][1]
    same += exact
  out: list[list[int]] = [[] for _ in disassembly.splitlines()]
  last: list[int] = []
  for i, t in run:
    if t is not None: last = [line] if (line := found.get(i)) is not None else []
    out[i] = list(last)
  return out, same, len(found) - same, len(insns)


@remembered()
def linked(disassembly: str, debug: str) -> tuple[list[list[int]], str | None]:
  """source_lines' lines, and a note of the instructions placed by mnemonic only or without a line (None: every one
  has its line exactly)."""
  lines, same, near, total = source_lines(disassembly, debug)
  notes = [f"{near} of {total} instructions differ from the -g build's (registers, stack slots): each has the line of "
           "the instruction of its mnemonic at its place there"] if near else []
  if total - same - near: notes.append(f"{total - same - near} of {total} instructions have no line (not at their place in the -g build)")
  return lines, "; ".join(notes) + "." if notes else None
