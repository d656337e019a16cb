"""Code inside capture() behaves exactly as without it: tinygrad test-suite-style computations, run plain and captured
with the same seeds, give bit-identical results."""
import numpy as np
import pytest
from tinygrad import Context, Tensor, dtypes, nn

import tgviz


def elementwise():
  Tensor.manual_seed(0)
  a, b = Tensor.randn(4, 33), Tensor.rand(4, 33) + 0.5
  return [a + b, a * b - 3, a / b, a.exp(), b.log(), b.sqrt(), a.relu(), a.sigmoid(), a.tanh(), (a > 0).where(a, b), a.maximum(b),
          a.cast(dtypes.int32), (a.abs() ** 1.5), a.clip(-0.5, 0.5), -a, a.sin()]

def reductions():
  Tensor.manual_seed(1)
  a = Tensor.randn(5, 7, 9)
  return [a.sum(), a.sum(1), a.max(2), a.min(0), a.mean((0, 2)), a.std(1), a.argmax(1), a.softmax(-1), a.logsumexp(0), a.cumsum(2)]

def matmul():
  Tensor.manual_seed(2)
  a, b, c = Tensor.randn(16, 32), Tensor.randn(32, 8), Tensor.randn(3, 8, 5)
  return [a @ b, (a @ b) @ c, a.T @ a, a.dot(b).relu().sum(0)]

def conv2d():
  Tensor.manual_seed(3)
  x, w, b = Tensor.randn(2, 3, 9, 9), Tensor.randn(4, 3, 3, 3), Tensor.randn(4)
  return [x.conv2d(w, b), x.conv2d(w, stride=2, padding=1), x.conv2d(w, dilation=2), x.max_pool2d(), x.avg_pool2d(3)]

def backward():
  Tensor.manual_seed(4)
  x, w1, w2 = Tensor.randn(8, 16), Tensor.randn(16, 12), Tensor.randn(12, 4)
  loss = x.matmul(w1).relu().matmul(w2).log_softmax().mean()
  loss.backward()
  return [loss, x.grad, w1.grad, w2.grad]

def _train(opt_fn):
  Tensor.manual_seed(5)
  lin = nn.Linear(6, 3)
  opt = opt_fn(nn.state.get_parameters(lin))
  x = Tensor.randn(4, 6)
  out = []
  with Context(TRAINING=1):
    for _ in range(2):
      opt.zero_grad()
      loss = lin(x).relu().square().mean()
      loss.backward()
      opt.step()
      out += [loss.numpy(), lin.weight.numpy(), lin.bias.numpy()]
  return out

def sgd(): return _train(lambda ps: nn.optim.SGD(ps, lr=0.1, momentum=0.9))
def adam(): return _train(lambda ps: nn.optim.Adam(ps, lr=0.01))

def indexing():
  Tensor.manual_seed(6)
  a = Tensor.randn(6, 5)
  idx = Tensor([4, 0, 2, 2])
  return [a[idx], a[:, idx], a.gather(1, Tensor([[0, 4], [1, 1], [3, 2], [0, 0], [4, 4], [2, 1]])), a[1:5:2, ::-1], a[None, ..., 2],
          a.pad(((1, 2), (0, 1))), a.shrink(((1, 4), (2, 5))), a.flip(0), a.repeat(2, 1), a.reshape(3, 10).permute(1, 0)]

def arange():
  return [Tensor.arange(10), Tensor.arange(3, 20, 4), Tensor.arange(12).reshape(3, 4).cumsum(1), Tensor.ones(33).cumsum(),
          Tensor.arange(0, 1, 0.125), Tensor.eye(4), Tensor.arange(9).reshape(3, 3).float().triu()]

CASES = [elementwise, reductions, matmul, conv2d, backward, sgd, adam, indexing, arange]


def _numpy(out):
  if ts := [o for o in out if isinstance(o, Tensor)]: Tensor.realize(*ts)  # one schedule for all outputs
  return [o.numpy() if isinstance(o, Tensor) else o for o in out]


@pytest.mark.parametrize("case", CASES, ids=lambda f: f.__name__)
def test_same_results_under_capture(case):
  plain = _numpy(case())
  with tgviz.capture() as trace: captured = _numpy(case())
  assert trace.kernels, "the capture saw the computation"
  assert len(plain) == len(captured)
  for i, (p, c) in enumerate(zip(plain, captured, strict=True)):
    assert p.dtype == c.dtype, i
    np.testing.assert_array_equal(c, p, err_msg=f"{case.__name__} output {i}")
