"""Durations, byte counts and counts as tgviz writes them, in its texts and on its pages: one rule each (a duration: 3
significant figures in the unit that reads best). js/units.js holds their twins in the page (tests/views/test_units.py
holds each pair equal)."""
import math
import re
from decimal import ROUND_HALF_UP, Decimal

UNITS = ((Decimal("1e6"), "s"), (Decimal("1e3"), "ms"), (Decimal(1), "µs"), (Decimal("1e-3"), "ns"))


def time_text(us: float | None) -> str:
  """A time given in µs, to 3 significant figures in ns, µs, ms or s: "9.64 µs", "7.20 µs", "123 µs", "1.23 ms"; "–"
  for none. Rounded to the ns first, as the messages carry times (round(us, 3)), so that the page, which writes the
  message's value, writes what Python writes (1.1249 µs reaches it as 1.125: "1.13 µs" both); then as the page's
  toPrecision rounds: the float's exact value, ties away from zero."""
  if us is None or not math.isfinite(us): return "–"
  d = Decimal(round(us, 3))
  if d == 0: return "0 µs"
  r = d.quantize(Decimal(1).scaleb(d.adjusted() - 2), ROUND_HALF_UP)  # rounded first: 999.7 µs is "1.00 ms"
  div, unit = next(((div, unit) for div, unit in UNITS if abs(r) >= div), UNITS[-1])
  v = r / div
  return f"{v:.{0 if abs(v) >= 100 else 1 if abs(v) >= 10 else 2}f} {unit}"


BYTE_UNITS = ((2 ** 30, "GiB"), (2 ** 20, "MiB"), (2 ** 10, "KiB"))


def bytes_text(n: int) -> str:
  """A byte count as tgviz writes one: exact below 1 KiB ("96 B"), else 3 significant figures in KiB, MiB or GiB (binary
  units, everywhere): "24.5 KiB", "1.02 MiB", "1023 KiB". js/units.js's fmtSize is its twin (tests/views/test_units.py)."""
  if abs(n) < 1024: return f"{n:,} B"
  k = next(i for i, (div, _) in enumerate(BYTE_UNITS) if abs(n) >= div)
  if k > 0 and abs(n) / BYTE_UNITS[k][0] >= 1023.5: k -= 1  # would round to 1024: one unit up ("1.00 MiB")
  div, unit = BYTE_UNITS[k]
  m = abs(n) / div
  v = Decimal(n / div).quantize(Decimal(1).scaleb(-(0 if m >= 99.95 else 1 if m >= 9.995 else 2)), ROUND_HALF_UP)
  return f"{v} {unit}"


def percent_text(f: float) -> str:
  """A fraction as a percentage: whole from 10% ("45%"), else 2 significant figures ("4.5%", "0.0042%"), "0%", and
  "<0.0001%" below that (never an exponent)."""
  p = Decimal(f * 100)
  if p == 0: return "0%"
  if p < Decimal("0.0001"): return "<0.0001%"
  q = p.quantize(Decimal(1).scaleb(min(0, p.adjusted() - 1)), ROUND_HALF_UP)
  return f"{q.quantize(Decimal(1), ROUND_HALF_UP) if q >= 10 else q}%"


def plural(n: int, word: str, many: str | None = None) -> str:
  """A count with its noun in agreement: "1 node", "2 nodes", "1 copy"/"3 copies" (many: the plural where not word+s);
  the count grouped by thousands ("1,024 nodes"). js/units.js's plural is its twin."""
  return f"{n:,} {word if n == 1 else many or word + 's'}"


def count_text(dtype: str, n: int) -> str:
  """A buffer's size in elements, told from a shape: "float × 69,696" (a shape is written "float[8,1,28,28]", its
  numbers never grouped). js/units.js's fmtCount is its twin."""
  return f"{dtype} × {n:,}"


def copy_text(nbytes: int, dst: str, src: str) -> str:
  """A copy between devices by its bytes: "copy 24.5 KiB CL <- NPY" (tinygrad's own name says "copy 24.50 KB, ...")."""
  return f"copy {bytes_text(nbytes)} {dst} <- {src}"


_COPY = re.compile(r"copy\s+([\d.]+) ([KMG]?)B,\s*(\S+)\s*<-\s*(\S+)\s*")


def copy_name(name: str, nbytes: int | None = None) -> str:
  """tinygrad's name of a launch, a copy's ("copy   24.50 KB,  CL <- NPY", KB of 1024 B) with its bytes by tgviz's rule:
  "copy 24.5 KiB CL <- NPY"; nbytes: what it moved where known exactly, else tinygrad's figure in the name."""
  if (m := _COPY.fullmatch(name)) is None: return name
  n = nbytes if nbytes is not None else round(float(m[1]) * 1024 ** " KMG".index(m[2] or " "))
  return copy_text(n, m[3], m[4])
