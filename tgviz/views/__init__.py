"""What the frontend is sent, and the pictures in it: every message defined once (``messages``, from which
js/messages.js is written), the trace browser's messages built (``protocol``), a step's picture (``picture``: the trace
drawn with tgviz.draw, folded), highlighted code (``highlight``), the code column's uops and asm tabs (``program``) and
access tab (``access``), the run's sheet (``run``; its compiler lanes: ``compile``), the program map (``programmap``:
kernels and buffers, why each exists), the comparison (``compare``) and what-if panel (``whatif``), a search's answer
(``search``), where the browser opens (``failure``: on where tinygrad failed, first; else on the program map), and the
frontend's files (``assets``).

Must not: hold a widget or write a report (notebook and report send and write what this package builds); keep state
past a bounded cache.
"""
