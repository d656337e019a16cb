"""A real model: one SGD training step of a ResNet basic block (two 3x3 convolutions with batch norm, the skip
connection, global pooling and a linear head; batch 4 of 16x16 images with 16 channels), with tinygrad.nn."""
import numpy as np
from tinygrad import Context, Tensor, nn
from tinygrad.nn.optim import SGD


class BasicBlock:
  def __init__(self, ch: int):
    self.c1, self.b1 = nn.Conv2d(ch, ch, 3, padding=1, bias=False), nn.BatchNorm(ch)
    self.c2, self.b2 = nn.Conv2d(ch, ch, 3, padding=1, bias=False), nn.BatchNorm(ch)

  def __call__(self, x: Tensor) -> Tensor:
    out = self.b1(self.c1(x)).relu()
    return (self.b2(self.c2(out)) + x).relu()


class Net:
  def __init__(self):
    self.block, self.head = BasicBlock(16), nn.Linear(16, 10)

  def __call__(self, x: Tensor) -> Tensor:
    return self.head(self.block(x).mean((2, 3)))


Tensor.manual_seed(0)
rng = np.random.default_rng(0)
model = Net()
opt = SGD(nn.state.get_parameters(model), lr=0.01, momentum=0.9)
x = Tensor(rng.standard_normal((4, 16, 16, 16), dtype=np.float32))
y = Tensor(rng.integers(0, 10, 4, dtype=np.int32))
with Context(TRAINING=1):
  opt.zero_grad()
  loss = model(x).sparse_categorical_crossentropy(y)
  loss.backward()
  opt.step()
value = loss.item()
assert np.isfinite(value)
print(f"loss {value:.4f}")
