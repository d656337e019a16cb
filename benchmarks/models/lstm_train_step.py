"""A real model: one Adam training step of an LSTM (one layer, width 32, over 6 time steps unrolled, batch 4) with a
linear head on its last state, written from tinygrad.nn's Linear layers."""
import numpy as np
from tinygrad import Context, Tensor, nn
from tinygrad.nn.optim import Adam

IN, HID, STEPS = 16, 32, 6


class LSTM:
  def __init__(self):
    self.x2g, self.h2g = nn.Linear(IN, 4 * HID), nn.Linear(HID, 4 * HID, bias=False)
    self.head = nn.Linear(HID, 10)

  def __call__(self, xs: Tensor) -> Tensor:
    h = c = Tensor.zeros(xs.shape[0], HID)
    for t in range(xs.shape[1]):
      i, f, g, o = (self.x2g(xs[:, t]) + self.h2g(h)).chunk(4, dim=1)
      c = f.sigmoid() * c + i.sigmoid() * g.tanh()
      h = o.sigmoid() * c.tanh()
    return self.head(h)


Tensor.manual_seed(0)
rng = np.random.default_rng(0)
model = LSTM()
opt = Adam(nn.state.get_parameters(model), lr=1e-3)
x = Tensor(rng.standard_normal((4, STEPS, IN), dtype=np.float32))
y = Tensor(rng.integers(0, 10, 4, dtype=np.int32))
with Context(TRAINING=1):
  opt.zero_grad()
  loss = model(x).sparse_categorical_crossentropy(y)
  loss.backward()
  opt.step()
value = loss.item()
assert np.isfinite(value)
print(f"loss {value:.4f}")
