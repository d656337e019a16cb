"""The tutorial's conv2d: a 3x3 input, a 2x2 filter of ones, one output channel."""
from tinygrad import Tensor

x = Tensor.arange(9).reshape(1, 1, 3, 3).float().realize()
weight = Tensor.ones(1, 1, 2, 2).realize()
result = x.conv2d(weight)
assert result.shape == (1, 1, 2, 2)
assert result.tolist() == [[[[8.0, 12.0], [20.0, 24.0]]]]
print(result.tolist())
