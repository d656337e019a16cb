"""All of tgviz's background work, bounded and cancellable: forked processes (``forked``: the report's worker pool, the
early writers), background threads (``threads``: the widgets' latest-request-wins workers, the -g builds), cancellation
of a request and of the child processes it waits on (``cancel``), and results handed from one process to another
(``remembered``).

Must not: know what the work is (no tinygrad, no trace, no picture); start a thread or a process outside these helpers
(tests/test_structure.py checks that no other package imports threading's or concurrent.futures' pools, or forks).
"""
