"""The self-contained HTML report of a trace: the page and how it is written (``writer``), the data it holds, graphs as
node tables and each piece a chunk decoded on demand (``contents``), and the segments written while ``tgviz run`` still
runs its script (``early``).

Must not: change a byte of the report with who writes which part, or when (tests/report/test_early.py); capture
anything (the CLI and the API do).
"""
