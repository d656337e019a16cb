"""What the frontend is sent, and the pictures in it: every message defined once (``messages``, from which
js/messages.js is written), the trace browser's messages built (``protocol``), a step's picture (``picture``: the trace
drawn with tgviz.draw, folded), highlighted code (``highlight``), the code column's uops and asm tabs (``program``),
the run's sheet (``run``), the program map (``programmap``: kernels and buffers, why each exists, what a trace opens on),
the comparison (``compare``) and what-if panel (``whatif``), and the frontend's files (``assets``).

Must not: hold a widget or write a report (notebook and report send and write what this package builds); keep state
past a bounded cache.
"""
