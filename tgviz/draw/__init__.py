"""Pictures of plain graphs: graph data (``graph``), the rows and columns nodes go in (``ranks``), what one picture
shows (``scene``: before and after as one, marked, focused), the layout engine (``engine``; its layouts kept on disk
from run to run: ``layout_store``), the DOT text and the positions dot gives back (``dot``), SVG (``svg``), folding, a
view that draws less (``fold``), and flow pictures read left to right, boxes and labelled arrows (``flow``: the program
map).

Must not: import tinygrad or know what a trace is (tgviz.bridge turns UOps into ``graph.Graph``; tests/draw/ runs on
hand-built graphs); import any tgviz package but ``tgviz.work``.
"""
