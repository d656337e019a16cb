"""How tinygrad gives a node rebuilt over new sources its dtype (uop/ops.py _rebuild_dtype, dtype_from_uop), as data
for the HTML report's page: js/port/dtypes.js derives, from it, the dtype of each node its replays rebuild over a
source whose dtype a match changed, so the report stores none of those graphs (tgviz.report.contents.step_data).

Owns: the rules' data (tinygrad's promo lattice, its default float, the op groups the rules name) and whether the
page labels every node a step's replay rebuilds (page_derives).
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tinygrad.dtype import DType, DTypes, _get_recursive_parents, dtypes, promo_lattice
from tinygrad.uop.ops import GroupOp, Ops, UOp

from tgviz.bridge.uops import dtype_name


def dtype_rules() -> dict[str, Any]:
  """What js/port/dtypes.js derives dtypes from: each dtype of the promo lattice with its parents in tinygrad's order
  (least_upper_dtype is the first that all the dtypes share), the float and int dtypes, the default float, and the
  op groups tinygrad's rules name (Unary, Broadcastable, Movement)."""
  every = sorted({v for v in vars(DTypes).values() if isinstance(v, DType) and v in promo_lattice} | {dtypes.float64})
  return {"parents": {dtype_name(d): [dtype_name(p) for p in sorted(_get_recursive_parents(d))] for d in every},
          "floats": [dtype_name(d) for d in (*dtypes.floats, dtypes.weakfloat)],
          "ints": [dtype_name(d) for d in (*dtypes.ints, dtypes.weakint)],
          "defaultFloat": dtype_name(dtypes.default_float),
          "unary": sorted(o.name for o in GroupOp.Unary), "broadcastable": sorted(o.name for o in GroupOp.Broadcastable),
          "movement": sorted(o.name for o in GroupOp.Movement)}


def page_derives(stacks: Iterable[UOp], pairs: list[tuple[UOp, UOp]]) -> bool:
  """Whether the page labels every node it rebuilds in a replay by these matches' (node, replacement) pairs over a
  table that holds these STACKs (js/port/dtypes.js derives every dtype): not where a vector of constants may be rebuilt
  (a STACK whose sources are all constants or replaced, each maybe by a constant along its values): its users' labels
  fold in its text as only tinygrad renders it."""
  values: dict[UOp, list[UOp]] = {}
  for u0, u1 in pairs: values.setdefault(u0, []).append(u1)
  const: dict[UOp, bool] = {}
  def may_be_const(u: UOp) -> bool:
    if (hit := const.get(u)) is not None: return hit
    const[u] = False  # (a cycle of values: no constant along it)
    const[u] = u.op is Ops.CONST or any(may_be_const(v) for v in values.get(u, ()))
    return const[u]
  return not any(u.src and any(s in values for s in u.src) and all(map(may_be_const, u.src)) for u in stacks)
