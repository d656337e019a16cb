#!/usr/bin/env bash
# The main job on a fresh Debian/Ubuntu machine: installs tgviz (scripts/install.sh), runs the examples (the tutorial and two real models)
# through `tgviz run`, and leaves an HTML report per example plus SVGs under tgviz-report/ and two comparison pages
# (tgviz compare) in tgviz-report/compare-*/, printing where.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
.venv/bin/tgviz run examples/scripts/*.py --out tgviz-report
# the tutorial's experiments as comparisons: the same conv under WINO=1, an arange for indexing vs read out as data
.venv/bin/tgviz compare examples/scripts/conv2d_3x3.py examples/scripts/conv2d_3x3.py --env-b WINO=1 --out tgviz-report/compare-winograd
.venv/bin/tgviz compare examples/scripts/arange_for_indexing.py examples/scripts/arange_as_data.py --out tgviz-report/compare-arange
echo
echo "Open tgviz-report/index.html in a browser (no server needed)."
echo "For the notebooks: .venv/bin/pip install jupyterlab && .venv/bin/jupyter lab examples/"
