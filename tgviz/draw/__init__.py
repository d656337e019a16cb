"""Pictures of plain graphs: graph data (``graph``), the rows and columns nodes go in (``ranks``), what one picture
shows (``scene``: before and after as one, marked, focused), the layout engine (``engine``), the DOT text and the
positions dot gives back (``dot``), SVG (``svg``), and folding, a view that draws less (``fold``).

Must not: import tinygrad or know what a trace is (tgviz.bridge turns UOps into ``graph.Graph``; tests/draw/ runs on
hand-built graphs); import any tgviz package but ``tgviz.work``.
"""
