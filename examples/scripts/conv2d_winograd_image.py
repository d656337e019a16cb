"""A 3x3 conv2d on the general path, with Winograd (WINO=1) and with the IMAGE branch: same result, other kernels."""
import numpy as np
from tinygrad import Tensor
from tinygrad.helpers import Context

Tensor.manual_seed(0)
x, w = Tensor.rand(1, 1, 6, 6).realize(), Tensor.rand(1, 1, 3, 3).realize()
general = x.conv2d(w).numpy()
with Context(WINO=1): winograd = x.conv2d(w).numpy()
with Context(IMAGE=1): image = x.conv2d(w).numpy()
assert np.allclose(general, winograd, atol=1e-5) and np.allclose(general, image, atol=1e-5)
print("general, Winograd and IMAGE agree:", general.shape)
