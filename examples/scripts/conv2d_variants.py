"""conv2d with groups, stride, dilation and padding: each changes the indexing of the one kernel it becomes (the report's
access tab draws what each output element reads)."""
from tinygrad import Tensor

x = Tensor.rand(1, 4, 5, 5).realize()
grouped = x.conv2d(Tensor.rand(4, 2, 2, 2).realize(), groups=2).realize()   # 2 groups of 2 input channels
strided = x.conv2d(Tensor.rand(1, 4, 2, 2).realize(), stride=2).realize()   # windows start every 2nd pixel
dilated = x.conv2d(Tensor.rand(1, 4, 2, 2).realize(), dilation=2).realize()  # filter taps 2 pixels apart
padded = x.conv2d(Tensor.rand(1, 4, 2, 2).realize(), padding=1).realize()    # windows hang over the edge: masked reads
print(grouped.shape, strided.shape, dilated.shape, padded.shape)
assert (grouped.shape, strided.shape, dilated.shape, padded.shape) == ((1, 4, 4, 4), (1, 1, 2, 2), (1, 1, 3, 3), (1, 1, 6, 6))
