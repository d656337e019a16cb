"""The tutorial's experiment: an arange used only for indexing vs one realized as data."""
from tinygrad import Tensor

x = Tensor.rand(10).realize()
# indexing only: the arange becomes index arithmetic inside the one kernel that reads x; no buffer holds it
first_half = (x * (Tensor.arange(10) < 5).float()).sum().realize()
# realized as data: reading the values out needs storage, so a kernel writes the sequence into a buffer
values = Tensor.arange(10).numpy()
print(first_half.item(), values.tolist())
assert values.tolist() == list(range(10))
