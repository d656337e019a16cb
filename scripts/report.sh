#!/usr/bin/env bash
# The main job on a fresh Debian/Ubuntu machine: installs tgviz (scripts/install.sh), runs the examples (the tutorial and two real models)
# through `tgviz run`, and leaves an HTML report per example plus SVGs under tgviz-report/, printing where.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
.venv/bin/tgviz run examples/scripts/*.py --out tgviz-report
echo
echo "Open tgviz-report/index.html in a browser (no server needed)."
echo "For the notebooks: .venv/bin/pip install jupyterlab && .venv/bin/jupyter lab examples/"
