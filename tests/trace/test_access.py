"""What each thread reads: kernel.accesses(), kernel.reads() and kernel.thread() against definitions computed here."""
import itertools
import re

import numpy as np
import pytest
from tinygrad import Tensor

import tgviz

CONVS = list(itertools.product((1, 2), (1, 2), (0, 1), (1, 2)))  # stride, dilation, padding, groups
N, CIN, H, W, COUT, K = 1, 4, 7, 7, 4, 3  # input numel 196, weight 4*(4/groups)*9 (144 or 72): inputs told apart by size


def receptive_field(out: tuple[int, int, int, int], stride: int, dilation: int, padding: int, groups: int) -> tuple[set[int], set[int]]:
  """The flat input and weight elements read for output element out = (n, co, oy, ox) of conv2d, from its definition:

    out[n, co, oy, ox] = sum over ci in 0..CIN/groups-1, ky, kx in 0..K-1 of
                         x[n, g*CIN/groups + ci, oy*stride + ky*dilation - padding, ox*stride + kx*dilation - padding] * w[co, ci, ky, kx]
    with g = co // (COUT/groups); an input coordinate outside 0..H-1 x 0..W-1 is the padding's zero: no read.
  """
  n, co, oy, ox = out
  cpg, g = CIN // groups, co // (COUT // groups)
  xs, ws = set(), set()
  for ci, ky, kx in itertools.product(range(cpg), range(K), range(K)):
    ws.add(int(np.ravel_multi_index((co, ci, ky, kx), (COUT, cpg, K, K))))
    iy, ix = oy * stride + ky * dilation - padding, ox * stride + kx * dilation - padding
    if 0 <= iy < H and 0 <= ix < W: xs.add(int(np.ravel_multi_index((n, g * cpg + ci, iy, ix), (N, CIN, H, W))))
  return xs, ws


def numpy_conv(x: np.ndarray, w: np.ndarray, stride: int, dilation: int, padding: int, groups: int) -> np.ndarray:
  """conv2d by the same definition, on values."""
  oh, ow = ((H + 2 * padding - dilation * (K - 1) - 1) // stride + 1, (W + 2 * padding - dilation * (K - 1) - 1) // stride + 1)
  out = np.zeros((N, COUT, oh, ow), np.float64)
  for n, co, oy, ox in np.ndindex(*out.shape):
    cpg, g = CIN // groups, co // (COUT // groups)
    for ci, ky, kx in itertools.product(range(cpg), range(K), range(K)):
      iy, ix = oy * stride + ky * dilation - padding, ox * stride + kx * dilation - padding
      if 0 <= iy < H and 0 <= ix < W: out[n, co, oy, ox] += x[n, g * cpg + ci, iy, ix] * w[co, ci, ky, kx]
  return out


@pytest.fixture(scope="module")
def convs():
  """Each combination's conv kernel (the one storing the output), with its values and the inputs'."""
  x = Tensor.rand(N, CIN, H, W).realize()
  ws = {g: Tensor.rand(COUT, CIN // g, K, K).realize() for g in (1, 2)}
  out = []
  with tgviz.capture() as trace:
    for s, d, p, g in CONVS:
      y = x.conv2d(ws[g], stride=s, dilation=d, padding=p, groups=g).realize()
      out.append(((s, d, p, g), y.numpy()))
  kernels = [k for k in trace.kernels if any(o.op == "conv2d" for o in k.origins)]
  assert len(kernels) == len(CONVS), [k.name for k in trace.kernels]
  return [(c, k, y, x.numpy(), ws[c[3]].numpy()) for (c, y), k in zip(out, kernels, strict=True)]


@pytest.mark.parametrize("i", range(len(CONVS)), ids=[f"stride{s}-dilation{d}-pad{p}-groups{g}" for s, d, p, g in CONVS])
def test_reads_are_the_receptive_field_of_every_output_element(convs, i):
  (s, d, p, g), k, y, x, w = convs[i]
  np.testing.assert_allclose(y, numpy_conv(x, w, s, d, p, g), rtol=1e-4, atol=1e-5)  # the definition is the kernel's
  stored = [b for b in k.buffer_use() if b.written]
  assert len(stored) == 1 and int(np.prod(stored[0].shape)) == y.size
  x_slot = next(b.slot for b in k.buffer_use() if not b.written and int(np.prod(b.shape)) == x.size)
  w_slot = next(b.slot for b in k.buffer_use() if not b.written and int(np.prod(b.shape)) == w.size)
  for flat, out in enumerate(np.ndindex(*y.shape)):
    reads = k.reads(flat)
    want_x, want_w = receptive_field(out, s, d, p, g)
    assert set(reads) == {x_slot, w_slot}
    assert reads[x_slot].flat.tolist() == sorted(want_x), (out, reads[x_slot].coords.tolist())
    assert reads[w_slot].flat.tolist() == sorted(want_w), out
    # in the buffer's shape: x's coordinates are (n, c, y, x)
    assert {tuple(c) for c in reads[x_slot].coords} == {np.unravel_index(f, (N, CIN, H, W)) for f in want_x}
    # every multiply-add reads one x (or a masked-off zero) and one w: the counts say so
    assert reads[w_slot].count == len(want_w) and reads[x_slot].count + reads[x_slot].masked == len(want_w)
    assert reads[x_slot].masked == len(want_w) - len(want_x)


def test_reads_by_coordinates_and_out_of_range(convs):
  _, k, y, _, _ = convs[0]
  shape = next(b.shape for b in k.buffer_use() if b.written)  # tinygrad's buffer: (n, groups, cout/groups, oy, ox)
  assert shape == (1, 1, 4, 5, 5) and shape[-2:] == y.shape[-2:]
  at = (0, 0, 1, 2, 3)
  by_coords, by_flat = k.reads(at), k.reads(int(np.ravel_multi_index(at, shape)))
  assert by_coords.keys() == by_flat.keys() and all((by_coords[b].flat == by_flat[b].flat).all() for b in by_flat)
  with pytest.raises(IndexError): k.reads(y.size)
  with pytest.raises(IndexError): k.reads((0, 1, 2, 3))  # coordinates of another shape


def test_padded_conv_loads_are_masked_and_counted(convs):
  _, k, y, x, _ = next(c for c in convs if c[0] == (1, 1, 1, 1))
  load = next(a for a in k.accesses("ast") if a.kind == "load" and a.shape == x.shape)  # (the output has x's shape too)
  assert load.pattern == "masked" and load.valid
  total_masked = sum(len(receptive_field(o, 1, 1, 1, 1)[1]) - len(receptive_field(o, 1, 1, 1, 1)[0]) for o in np.ndindex(*y.shape))
  assert load.masked == total_masked > 0
  use = next(b for b in k.buffer_use() if b.slot == load.slot)
  assert use.read == x.size and use.masked == total_masked and use.reads == y.size * CIN * K * K - total_masked


def classes(fn):
  with tgviz.capture() as trace: fn()
  k = trace.kernels[-1]
  return k, k.accesses()


def test_transpose_load_is_strided():
  a = Tensor.rand(4, 8).realize()
  _, acc = classes(lambda: a.T.contiguous().realize())
  load = next(x for x in acc if x.stage == "ast" and x.kind == "load")
  assert (load.pattern, load.stride) == ("strided", 8)  # neighbouring outputs (along the transposed row) are 8 apart
  assert next(x for x in acc if x.stage == "ast" and x.kind == "store").pattern == "contiguous"
  assert load.shape == (4, 8) and load.count == 32 and load.elements == 32


def test_expand_load_is_broadcast():
  a = Tensor.rand(4, 1).realize()
  k, acc = classes(lambda: a.expand(4, 8).contiguous().realize())
  load = next(x for x in acc if x.stage == "ast" and x.kind == "load")
  assert (load.pattern, load.stride) == ("broadcast", 0)
  assert load.count == 32 and load.elements == 4  # each element read 8 times
  assert k.reads((2, 5))[load.slot].coords.tolist() == [[2, 0]]


def test_tensor_index_is_a_gather_in_the_program():
  a, idx = Tensor.rand(8, 4).realize(), Tensor([3, 1, 0, 7]).realize()
  k, acc = classes(lambda: a[idx].contiguous().realize())
  a_slot = next(b.slot for b in k.buffer_use() if b.shape == (8, 4))
  program = [x for x in acc if x.stage == "program" and x.slot == a_slot]
  assert program and all(x.pattern == "gather" and x.stride is None for x in program)
  # the View Base AST reads every row (a one-hot reduce over the rows, compared with the index's data): no gather yet
  ast = next(x for x in acc if x.stage == "ast" and x.slot == a_slot)
  assert ast.pattern == "contiguous" and ast.elements == 32
  assert len(k.reads(0)[a_slot].flat) == 8
  reads, _ = k.thread()[a_slot]
  assert reads.data_dependent and reads.flat.size == 0


def test_pad_load_is_masked():
  a = Tensor.rand(4, 4).realize()
  k, acc = classes(lambda: a.pad(((1, 1), (1, 1))).contiguous().realize())
  load = next(x for x in acc if x.stage == "ast" and x.kind == "load")
  assert load.pattern == "masked" and load.masked == 36 - 16 and load.count == 16
  assert k.reads((0, 0)) [load.slot].flat.size == 0 and k.reads((0, 0))[load.slot].masked == 1
  assert k.reads((1, 1))[load.slot].coords.tolist() == [[0, 0]]


def test_the_tutorial_conv_reads_its_window(tutorial_trace):
  k = next(k for k in tutorial_trace.kernels if k.name == "r_2_2_2_2")
  store = next(a for a in k.accesses("ast") if a.kind == "store")
  assert store.shape == (1, 1, 2, 2) and store.index and store.tensor and "line" in store.tensor
  w = next(b for b in k.buffer_use() if b.shape == (1, 1, 2, 2) and not b.written)
  assert k.reads((0, 0, 1, 1))[w.slot].flat.tolist() == [0, 1, 2, 3]  # the input is an arange computed in the kernel
  # threads: 2x2 local ids, each writing one element of the output
  written = sorted(int(k.thread(lidx0=i, lidx1=j)[store.slot][1].flat[0]) for i in range(2) for j in range(2))
  assert written == [0, 1, 2, 3]


def test_thread_and_loop_values():
  a, b = Tensor.rand(16, 16, device="CPU").realize(), Tensor.rand(16, 16, device="CPU").realize()
  with tgviz.capture(device="CPU") as trace: (a @ b).realize()
  k = trace.kernels[-1]
  assert k.device == "CPU"
  loops = list(dict.fromkeys(v for a in k.accesses("program") for v in a.vars))
  assert loops, "the CPU device's program runs over loops"
  whole = k.thread()
  for b in k.buffer_use():  # one CPU thread runs the whole matmul: it reads and writes every element
    reads, writes = whole[b.slot]
    assert (writes if b.written else reads).flat.tolist() == list(range(256))
  a_slot = next(b.slot for b in k.buffer_use() if not b.written)
  some = k.thread(**{loops[0]: 0})
  assert 0 < some[a_slot][0].flat.size < 256
  with pytest.raises(KeyError): k.thread(nothing=1)


def test_an_index_too_big_to_print_says_its_size(monkeypatch):
  """tinygrad's render of an expression is quadratic in its length (an LSTM step's unrolled kernel spent minutes and
  gigabytes printing its accesses' indices): past access._RENDER_UOPS UOps the text says what the expression is and how
  big; below, it is tinygrad's render."""
  from tgviz.bridge import access as BA
  a = Tensor.rand(4, 8).realize()
  monkeypatch.setattr(BA, "_RENDER_UOPS", 3)
  _, acc = classes(lambda: a.T.contiguous().realize())
  big = [x for x in acc if re.fullmatch(r"\(\w+ of \d+ UOps: too big to print\)", x.index)]
  assert big and all(int(re.search(r"of (\d+) UOps", x.index).group(1)) > 3 for x in big)
  monkeypatch.setattr(BA, "_RENDER_UOPS", 400)
  _, acc = classes(lambda: a.T.contiguous().realize())
  assert not any("too big to print" in x.index for x in acc) and all(x.index for x in acc)
