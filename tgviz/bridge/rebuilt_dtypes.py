"""How tinygrad gives a node rebuilt over new sources its dtype (uop/ops.py _rebuild_dtype, dtype_from_uop), as data
for the HTML report's page: js/port/dtypes.js derives, from it, the dtype of each node its replays rebuild over a
source whose dtype a match changed, so the report stores none of those graphs (tgviz.report.contents.step_data).

Owns: the rules' data (tinygrad's promo lattice, its default float, the op groups the rules name) and whether the
port derives every dtype a step's replay needs (page_derives).
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tinygrad.dtype import DType, DTypes, _get_recursive_parents, dtypes, promo_lattice
from tinygrad.helpers import is_image_shape
from tinygrad.uop.ops import GroupOp, Ops, UOp


def dtype_name(dt: DType) -> str:
  """A dtype as the report's labels and contents say it: tinygrad's repr without "dtypes."."""
  return repr(dt).removeprefix("dtypes.")


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


def page_derives(uops: Iterable[UOp], pairs: list[tuple[UOp, UOp]]) -> bool:
  """Whether js/port/dtypes.js derives every dtype tinygrad would, in a replay over these UOps (a step's table) by these
  matches' (node, replacement) pairs, and the page labels every node it rebuilds: not where an INDEX may take float
  from a PARAM of an image's shape but another dtype (tinygrad reads the PARAM's shape, which the report does not
  hold), nor a GETTUPLE (which reads a tuple's sources), nor where a vector of constants may be rebuilt (a STACK whose
  sources are all constants or replaced, each maybe by a constant: its users' labels fold in its text as only
  tinygrad renders it)."""
  values: dict[UOp, list[UOp]] = {}
  for u0, u1 in pairs: values.setdefault(u0, []).append(u1)
  const: dict[UOp, bool] = {}
  def may_be_const(u: UOp) -> bool:  # a CONST, or replaced, along its values, by one
    if (hit := const.get(u)) is not None: return hit
    const[u] = False  # (a cycle of values: no constant along it)
    const[u] = u.op is Ops.CONST or any(may_be_const(v) for v in values.get(u, ()))
    return const[u]
  for u in uops:
    if u.op is Ops.GETTUPLE: return False
    if u.op is Ops.STACK and u.src and any(s in values for s in u.src) and all(map(may_be_const, u.src)): return False
    if u.op is Ops.PARAM and u.dtype is not dtypes.float:
      try:
        if is_image_shape(u.shape): return False
      except Exception: return False  # (a shape tinygrad cannot say: not derived here either)
  return True
