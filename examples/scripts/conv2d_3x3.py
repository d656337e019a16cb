"""A 3x3 conv2d of random data, to compare under tinygrad's settings:
tgviz compare conv2d_3x3.py conv2d_3x3.py --env-b WINO=1   (or IMAGE=1)."""
from tinygrad import Tensor

Tensor.manual_seed(0)
x, w = Tensor.rand(1, 1, 6, 6).realize(), Tensor.rand(1, 1, 3, 3).realize()
out = x.conv2d(w).numpy()
print("conv2d:", out.shape)
