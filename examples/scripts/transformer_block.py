"""A real model: one transformer block (attention + MLP, pre-norm), forward and backward, sequence 16, width 64."""
import numpy as np
from tinygrad import Tensor, nn


class Block:
  def __init__(self, dim: int, heads: int):
    self.heads = heads
    self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
    self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
    self.fc1, self.fc2 = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

  def __call__(self, x: Tensor) -> Tensor:
    b, t, d = x.shape
    q, k, v = self.qkv(self.ln1(x)).reshape(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
    att = q.scaled_dot_product_attention(k, v, is_causal=True).transpose(1, 2).reshape(b, t, d)
    x = x + self.proj(att)
    return x + self.fc2(self.fc1(self.ln2(x)).gelu())


Tensor.manual_seed(0)
rng = np.random.default_rng(0)
block = Block(64, 4)
x = Tensor(rng.standard_normal((1, 16, 64), dtype=np.float32))  # backward fills .grad of every float tensor
loss = block(x).square().mean()
loss.backward()
Tensor.realize(loss, x.grad, *[p.grad for p in nn.state.get_parameters(block)])
value = loss.item()
assert np.isfinite(value) and x.grad.shape == (1, 16, 64)
print(f"loss {value:.4f}")
