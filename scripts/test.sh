#!/usr/bin/env bash
# Installs everything the tests need, then runs the lint and type checks (Python and JS) and the whole suite (browser tests
# included).
# Extra arguments go to pytest, e.g. the quick subset: bash scripts/test.sh -m "not slow and not browser"
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh test
.venv/bin/ruff check .
.venv/bin/mypy
node_modules/.bin/tsc -p tsconfig.json  # the JS (js/*.js) type-checked from its JSDoc: checkJs, see tsconfig.json
# tinygrad compiles in a pool of worker processes by default (PARALLEL: the core count), and so do captures; each of the
# suite's many short-lived processes (`tgviz run`s, notebook kernels) would start and stop a pool of its own. The suite
# compiles in-process unless PARALLEL is set; tests/test_parallel.py sets PARALLEL itself and covers the pool.
export PARALLEL="${PARALLEL:-0}"
# Two test processes (pytest-xdist), each taking whole files (a file's fixtures, a JupyterLab server, a browser, are
# made once): one keeps a core busy while the other waits on a browser, a notebook's kernel or a subprocess (one
# process took 28 minutes on CI's 2 cores). TEST_WORKERS=0 runs the suite in one process.
exec .venv/bin/python -m pytest -q -n "${TEST_WORKERS:-2}" --dist loadfile --durations=15 "$@"
