"""A real model: one Adam training step of a 2-layer GPT (token and position embeddings, two pre-norm blocks of causal
attention and MLP, a language-model head; vocabulary 64, width 32, 4 heads, batch 2 of 12 tokens), with tinygrad.nn.
GPT_LAYERS, GPT_DIM, GPT_HEADS, GPT_SEQ, GPT_VOCAB, GPT_OPT (Adam or AdamW) and GPT_WIDER (each block's MLP that many
wider than the block's before it, so that its kernels are its own, not the same kernels compiled once for every block)
in the environment make it bigger (benchmarks/model_scale.py's "gpt-big")."""
import os

import numpy as np
from tinygrad import Context, Tensor, nn
from tinygrad.nn import optim

VOCAB, DIM, HEADS, SEQ, LAYERS, WIDER = (int(os.environ.get(f"GPT_{k}", d)) for k, d in
                                         (("VOCAB", 64), ("DIM", 32), ("HEADS", 4), ("SEQ", 12), ("LAYERS", 2), ("WIDER", 0)))


class Block:
  def __init__(self, i: int):
    self.ln1, self.ln2 = nn.LayerNorm(DIM), nn.LayerNorm(DIM)
    self.qkv, self.proj = nn.Linear(DIM, 3 * DIM), nn.Linear(DIM, DIM)
    self.fc1, self.fc2 = nn.Linear(DIM, 4 * DIM + i * WIDER), nn.Linear(4 * DIM + i * WIDER, DIM)

  def __call__(self, x: Tensor) -> Tensor:
    b, t, d = x.shape
    q, k, v = self.qkv(self.ln1(x)).reshape(b, t, 3, HEADS, d // HEADS).permute(2, 0, 3, 1, 4)
    att = q.scaled_dot_product_attention(k, v, is_causal=True).transpose(1, 2).reshape(b, t, d)
    x = x + self.proj(att)
    return x + self.fc2(self.fc1(self.ln2(x)).gelu())


class GPT:
  def __init__(self):
    self.tok, self.pos = nn.Embedding(VOCAB, DIM), nn.Embedding(SEQ, DIM)
    self.blocks = [Block(i) for i in range(LAYERS)]
    self.ln, self.head = nn.LayerNorm(DIM), nn.Linear(DIM, VOCAB, bias=False)

  def __call__(self, idx: Tensor) -> Tensor:
    x = self.tok(idx) + self.pos(Tensor.arange(idx.shape[1]))
    for blk in self.blocks: x = blk(x)
    return self.head(self.ln(x))


Tensor.manual_seed(0)
rng = np.random.default_rng(0)
model = GPT()
opt = getattr(optim, os.environ.get("GPT_OPT", "Adam"))(nn.state.get_parameters(model), lr=1e-3)
tokens = rng.integers(0, VOCAB, (2, SEQ + 1), dtype=np.int32)
x, y = Tensor(tokens[:, :-1]), Tensor(tokens[:, 1:])
with Context(TRAINING=1):
  opt.zero_grad()
  loss = model(x).sparse_categorical_crossentropy(y)
  loss.backward()
  opt.step()
value = loss.item()
assert np.isfinite(value)
print(f"loss {value:.4f}")
