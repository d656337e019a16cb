"""The workloads tests and benchmarks trace: the tutorial's code, a small CNN, a 2-layer MLP, an attention block (and a
notebook cell's attention), a long kernel."""
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "scripts"


def example(name: str) -> dict:
  """Run one of examples/scripts/ as a script; returns its globals."""
  env = {"__name__": "__main__"}
  exec(compile((EXAMPLES / name).read_text(), name, "exec"), env)
  return env


def tutorial() -> None:
  """The seed tutorial's conv2d and arange examples, with their asserts."""
  for name in ("tutorial_conv2d.py", "tutorial_arange.py"): example(name)


def cnn() -> None:
  """conv 3->16->32 on 1x3x32x32, relu, linear."""
  from tinygrad import Tensor
  Tensor.manual_seed(0)
  x = Tensor.randn(1, 3, 32, 32)
  w1, w2, lin = Tensor.randn(16, 3, 3, 3), Tensor.randn(32, 16, 3, 3), Tensor.randn(32 * 28 * 28, 10)
  x.conv2d(w1).relu().conv2d(w2).relu().flatten(1).matmul(lin).realize()


def mlp() -> None:
  """A 2-layer MLP, forward and backward."""
  from tinygrad import Tensor
  Tensor.manual_seed(0)
  x, w1, w2 = Tensor.randn(8, 64), Tensor.randn(64, 32), Tensor.randn(32, 10)
  loss = x.matmul(w1).relu().matmul(w2).log_softmax().mean()
  loss.backward()
  Tensor.realize(loss, w1.grad, w2.grad)


def long_kernel(n: int = 120) -> None:
  """One elementwise kernel of hundreds of lines of code: a chain of n products, each value used twice (its own line)."""
  from tinygrad import Tensor
  Tensor.manual_seed(0)
  y = Tensor.rand(8).realize()
  for i in range(n): y = y * (y + i)
  y.realize()


def softmax() -> None:
  """A small program: softmax of 8x33."""
  from tinygrad import Tensor
  Tensor.manual_seed(0)
  Tensor.randn(8, 33).softmax(1).realize()


def mlp_train(sizes: tuple[int, int, int] = (784, 128, 10), batch: int = 32) -> list:
  """One SGD training step of a 784-128-10 MLP on a batch of 32 (its biggest rewrite step has thousands of matches), or
  of other sizes; returns the loss and both weights after the step (Tensors)."""
  from tinygrad import Context, Tensor, nn
  from tinygrad.nn.optim import SGD
  Tensor.manual_seed(0)
  l1, l2 = nn.Linear(sizes[0], sizes[1]), nn.Linear(sizes[1], sizes[2])
  opt = SGD([l1.weight, l1.bias, l2.weight, l2.bias], lr=0.01)
  x, y = Tensor.randn(batch, sizes[0]), Tensor.randint(batch, high=sizes[2])
  with Context(TRAINING=1):
    opt.zero_grad()
    loss = l2(l1(x).relu()).sparse_categorical_crossentropy(y).backward()
    opt.step()
  return [loss, l1.weight, l2.weight]


def jit_train(steps: int = 4) -> None:
  """A TinyJit training loop: the 784-128-10 MLP's SGD step (batch 32), jitted, run steps times."""
  from tinygrad import Context, Tensor, TinyJit, nn
  from tinygrad.nn.optim import SGD
  Tensor.manual_seed(0)
  l1, l2 = nn.Linear(784, 128), nn.Linear(128, 10)
  opt = SGD([l1.weight, l1.bias, l2.weight, l2.bias], lr=0.01)
  x, y = Tensor.randn(32, 784).realize(), Tensor.randint(32, high=10).realize()

  @TinyJit
  def step(x: Tensor, y: Tensor) -> Tensor:
    with Context(TRAINING=1):
      opt.zero_grad()
      loss = l2(l1(x).relu()).sparse_categorical_crossentropy(y).backward()
      opt.step()
      return loss.realize()

  for _ in range(steps): step(x, y)


def attention() -> None:
  """A small causal attention block, forward and backward: 2 sequences of 6 tokens of width 8."""
  from tinygrad import Tensor
  Tensor.manual_seed(0)
  x = Tensor.randn(2, 6, 8)
  wq, wk, wv = Tensor.randn(8, 8), Tensor.randn(8, 8), Tensor.randn(8, 8)
  for w in (wq, wk, wv): w.requires_grad = True
  q, k, v = x @ wq, x @ wk, x @ wv
  scores = Tensor.ones(6, 6).tril().bool().where((q @ k.transpose(1, 2)) / 8 ** 0.5, -float("inf"))
  loss = (scores.softmax(-1) @ v).sum()
  loss.backward()
  Tensor.realize(loss, wq.grad, wk.grad, wv.grad)


def attention_cell() -> None:
  """A notebook cell's attention: softmax(q @ k.T) @ v of randn inputs, its result read back with .numpy() (a copy
  outside any schedule); its schedule copies randn's seeds in."""
  from tinygrad import Tensor
  Tensor.manual_seed(0)
  q, k, v = Tensor.randn(4, 8), Tensor.randn(4, 8), Tensor.randn(4, 8)
  out = ((q @ k.T).softmax(-1) @ v).numpy()
  assert out.shape == (4, 8)


def mlp_train_until(done, seconds: float = 60) -> None:
  """A small MLP's training step (mlp_train (64, 32, 10) on 8), then a small kernel of a new size every 0.1 s (each one
  rewrites, compiles and runs) until done() or seconds pass: time for a capture's background work (tgviz.report.early)."""
  import time

  from tinygrad import Tensor
  mlp_train((64, 32, 10), 8)
  deadline, n = time.time() + seconds, 1
  while not done() and time.time() < deadline:
    n += 1
    (Tensor.ones(n).contiguous() * 2).realize()
    time.sleep(0.1)


def jit_loop(steps: int) -> None:
  """A TinyJit run steps times: its first call, its capture, its replays."""
  from tinygrad import Tensor, TinyJit
  x = Tensor.ones(16, 16).contiguous().realize()

  @TinyJit
  def step(x: Tensor) -> Tensor:
    a = (x * 2 + 1).contiguous()
    return (a.sum(1) + a.T.max(1)).contiguous().realize()

  for _ in range(steps): step(x)


def layernorm() -> None:
  """A layernorm of 16x64 with a learned scale and shift."""
  from tinygrad import Tensor
  Tensor.manual_seed(0)
  x, w, b = Tensor.randn(16, 64), Tensor.randn(64), Tensor.randn(64)
  (x.layernorm() * w + b).realize()


def conv_bn() -> None:
  """A conv (3->8, 3x3) and a batchnorm in training mode, then relu, on 2x3x16x16."""
  from tinygrad import Context, Tensor, nn
  Tensor.manual_seed(0)
  conv, bn = nn.Conv2d(3, 8, 3), nn.BatchNorm(8)
  x = Tensor.randn(2, 3, 16, 16)
  with Context(TRAINING=1): bn(conv(x)).relu().realize()


def adam_train() -> None:
  """One Adam training step of a 64-32-10 MLP on a batch of 8."""
  from tinygrad import Context, Tensor, nn
  from tinygrad.nn.optim import Adam
  Tensor.manual_seed(0)
  l1, l2 = nn.Linear(64, 32), nn.Linear(32, 10)
  opt = Adam([l1.weight, l1.bias, l2.weight, l2.bias], lr=1e-3)
  x, y = Tensor.randn(8, 64), Tensor.randint(8, high=10)
  with Context(TRAINING=1):
    opt.zero_grad()
    l2(l1(x).relu()).sparse_categorical_crossentropy(y).backward()
    opt.step()


def contiguous(keep: bool = True) -> None:
  """A value made contiguous by the user (keep=False: the same program without the .contiguous()), read twice."""
  from tinygrad import Tensor
  x = Tensor.ones(16, 16).contiguous().realize()
  y = x * 2 + 1
  if keep: y = y.contiguous()
  (y.sum(1) + y.T.max(1)).realize()


def big_sum() -> None:
  """A sum over 131,072 elements: tinygrad splits it into two kernels (split_reduceop)."""
  from tinygrad import Tensor
  Tensor.ones(256, 512).contiguous().sum().realize()


# Programs that make tinygrad fail inside a capture, one in each place it can (each a script's text): a custom kernel
# that stores a UOp with no shape, which a rewrite asks the shape of; one whose OpenCL C calls a function OpenCL has not
# (PoCL refuses to compile it); one that asks for 8192 work-items in one work-group (PoCL refuses to run it).
FAILING = {
  "rewrite": "from tinygrad import Tensor, dtypes\nfrom tinygrad.uop.ops import KernelInfo, Ops, UOp\n\n"
             "def fill(out: UOp) -> UOp:\n  i = UOp.range(out.numel(), 0)\n  v = UOp(Ops.CUSTOMI, dtypes.float, (), '1.0f')\n"
             "  return out.flatten()[i].store(v).end(i).sink(arg=KernelInfo(name='fill'))\n\n"
             "print(Tensor.empty(16).custom_kernel(fxn=fill)[0].numpy())\n",
  "compile": "from tinygrad import Tensor, dtypes\nfrom tinygrad.uop.ops import KernelInfo, Ops, UOp\n\n"
             "def fill(out: UOp) -> UOp:\n  i = UOp.range(out.numel(), 0)\n"
             "  v = UOp(Ops.CUSTOMI, dtypes.float, (i.cast(dtypes.float),), 'no_such_function({0})')\n"
             "  return out.flatten()[i].store(v).end(i).sink(arg=KernelInfo(name='fill'))\n\n"
             "print(Tensor.empty(16).custom_kernel(fxn=fill)[0].numpy())\n",
  "run": "from tinygrad import Tensor\nfrom tinygrad.codegen.opt import Opt, OptOps\nfrom tinygrad.uop.ops import KernelInfo, UOp\n\n"
         "def fill(out: UOp) -> UOp:\n  i = UOp.range(out.numel(), 0)\n"
         "  return out.flatten()[i].store(1.0).end(i).sink(arg=KernelInfo(name='fill', opts_to_apply=(Opt(OptOps.LOCAL, 0, 8192),)))\n\n"
         "print(Tensor.empty(8192).custom_kernel(fxn=fill)[0].numpy())\n",
}


def failing(where: str) -> None:
  """Run FAILING[where] (it raises)."""
  exec(compile(FAILING[where], f"failing_{where}.py", "exec"), {"__name__": "__main__"})
