"""conv2d with groups, stride and dilation: each changes the indexing of the one kernel it becomes."""
from tinygrad import Tensor

x = Tensor.rand(1, 4, 5, 5).realize()
grouped = x.conv2d(Tensor.rand(4, 2, 2, 2).realize(), groups=2).realize()   # 2 groups of 2 input channels
strided = x.conv2d(Tensor.rand(1, 4, 2, 2).realize(), stride=2).realize()   # windows start every 2nd pixel
dilated = x.conv2d(Tensor.rand(1, 4, 2, 2).realize(), dilation=2).realize()  # filter taps 2 pixels apart
print(grouped.shape, strided.shape, dilated.shape)
assert (grouped.shape, strided.shape, dilated.shape) == ((1, 4, 4, 4), (1, 1, 2, 2), (1, 1, 3, 3))
