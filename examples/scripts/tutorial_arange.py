"""The tutorial's arange cases: positive, negative and empty ranges."""
from tinygrad import Tensor

assert Tensor.arange(2, 11, 3).tolist() == [2, 5, 8]
assert Tensor.arange(5, -1, -2).tolist() == [5, 3, 1]
assert Tensor.arange(0).tolist() == []
print("positive, negative, and empty ranges match")
