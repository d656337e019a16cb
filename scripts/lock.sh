#!/usr/bin/env bash
# Regenerates constraints.txt: the exact versions scripts/install.sh installs (tgviz's dependencies and the test
# extra's), resolved from pyproject.toml's ranges for every platform. Versions already in constraints.txt are kept where
# they still fit; newer ones: bash scripts/lock.sh --upgrade (everything) or --upgrade-package NAME. Then run the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/uv ] || bash scripts/install.sh test  # uv comes with the test extra
exec .venv/bin/uv pip compile -q pyproject.toml --extra test --universal --python-version 3.11 \
  --custom-compile-command "bash scripts/lock.sh" -o constraints.txt "$@"
