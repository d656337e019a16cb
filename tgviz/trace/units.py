"""Durations as tgviz writes them, in its texts and on its pages: one rule, 3 significant figures in the unit that
reads best. js/units.js's fmtTime is its twin in the page (tests/views/test_units.py holds the two equal)."""
import math
from decimal import ROUND_HALF_UP, Decimal

UNITS = ((Decimal("1e6"), "s"), (Decimal("1e3"), "ms"), (Decimal(1), "µs"), (Decimal("1e-3"), "ns"))


def time_text(us: float | None) -> str:
  """A time given in µs, to 3 significant figures in ns, µs, ms or s: "9.64 µs", "7.20 µs", "123 µs", "1.23 ms"; "–"
  for none. Rounded as the page's toPrecision rounds: the float's exact value, ties away from zero."""
  if us is None or not math.isfinite(us): return "–"
  d = Decimal(us)
  if d == 0: return "0 µs"
  r = d.quantize(Decimal(1).scaleb(d.adjusted() - 2), ROUND_HALF_UP)  # rounded first: 999.7 µs is "1.00 ms"
  div, unit = next(((div, unit) for div, unit in UNITS if abs(r) >= div), UNITS[-1])
  v = r / div
  return f"{v:.{0 if abs(v) >= 100 else 1 if abs(v) >= 10 else 2}f} {unit}"
