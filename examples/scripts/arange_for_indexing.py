"""The tutorial's experiment, side a: an arange used only for indexing (a mask). Compare with arange_as_data.py:
tgviz compare arange_for_indexing.py arange_as_data.py"""
from tinygrad import Tensor

Tensor.manual_seed(0)
x = Tensor.rand(10).realize()
# the arange becomes index arithmetic inside the one kernel that reads x; no buffer holds it
first_half = (x * (Tensor.arange(10) < 5).float()).sum().realize()
print(first_half.item())
