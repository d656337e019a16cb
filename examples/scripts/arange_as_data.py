"""The tutorial's experiment, side b: the same arange also read out as data. Compare with arange_for_indexing.py:
tgviz compare arange_for_indexing.py arange_as_data.py"""
from tinygrad import Tensor

Tensor.manual_seed(0)
x = Tensor.rand(10).realize()
idx = Tensor.arange(10)
# reading the values out needs storage, so a kernel writes the sequence into a buffer
values = idx.numpy()
first_half = (x * (idx < 5).float()).sum().realize()
print(first_half.item(), values.tolist())
assert values.tolist() == list(range(10))
