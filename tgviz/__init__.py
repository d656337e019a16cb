"""tgviz: see what tinygrad's compiler did, rewrite by rewrite, next to the code it generated.

In Jupyter: ``%load_ext tgviz`` then a ``%%tgviz`` cell. In Python::

    import tgviz
    with tgviz.capture() as trace:
        ...tinygrad code...
    print(trace.summary())
"""
from tgviz.trace import Trace, Group, Step, Match, Kernel, Diff, capture

__all__ = ["Trace", "Group", "Step", "Match", "Kernel", "Diff", "capture"]
__version__ = "0.1.0"
