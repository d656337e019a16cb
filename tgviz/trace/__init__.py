"""The model of what tinygrad did, built from what the bridge recorded: a Trace of groups (schedules, kernels' codegen),
their rewrite Steps with Matches, graph Diffs and a node's history (``steps``, ``trace``); each compiled Kernel with its
code, opts, estimates, program and machine code (``kernel``, ``asm``: objdump's listings and a debug build's line table);
the run (``run``: timeline, memory, roofline); where the compile time goes (``compile``: tinygrad's spans, steps' and
kernels' times); run times as spreads, re-timed, compared against their noise (``retime``); which limit a kernel ran
into (``verdicts``); the program as kernels and buffers with the reason for each buffer (``program``, ``reasons``) and
a schedule run again with a condition lifted (``fusion``); two traces compared (``comparison``); a kernel retried with
other opts (``whatif``); what each thread of a kernel reads and writes (``access``: its loads and stores, their index
UOps evaluated); the trace searched (``search``: its index and hits), where tinygrad failed (``failure``) and
tinygrad's DEBUG listings rebuilt from a trace (``debug``: what ``tgviz show`` prints).

Must not: import tinygrad (only through ``tgviz.bridge``'s names) or draw, send or write anything (views, notebook,
report and api build on this package; it imports none of them).
"""
