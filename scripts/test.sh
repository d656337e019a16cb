#!/usr/bin/env bash
# Installs everything the tests need, then runs the whole suite (browser tests included).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh test
exec .venv/bin/python -m pytest -q "$@"
