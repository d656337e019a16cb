"""A real model: one Adam training step of a small MNIST convnet (batch 8, random 28x28 images), with tinygrad.nn."""
import numpy as np
from tinygrad import Context, Tensor, nn
from tinygrad.nn.optim import Adam


class ConvNet:
  def __init__(self):
    self.c1, self.c2 = nn.Conv2d(1, 8, 3), nn.Conv2d(8, 16, 3)
    self.l1 = nn.Linear(16 * 5 * 5, 10)

  def __call__(self, x: Tensor) -> Tensor:
    x = self.c1(x).relu().max_pool2d()
    x = self.c2(x).relu().max_pool2d()
    return self.l1(x.flatten(1))


Tensor.manual_seed(0)
rng = np.random.default_rng(0)
model = ConvNet()
opt = Adam(nn.state.get_parameters(model), lr=1e-3)
x = Tensor(rng.standard_normal((8, 1, 28, 28), dtype=np.float32))
y = Tensor(rng.integers(0, 10, 8, dtype=np.int32))
with Context(TRAINING=1):
  opt.zero_grad()
  loss = model(x).sparse_categorical_crossentropy(y)
  loss.backward()
  opt.step()
value = loss.item()
assert np.isfinite(value)
print(f"loss {value:.4f}")
