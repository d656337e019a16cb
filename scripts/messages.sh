#!/usr/bin/env bash
# Writes js/messages.js, the JSDoc types of every message between Python and the frontend, from tgviz/views/messages.py
# (tests/views/test_messages.py fails while the two disagree).
set -euo pipefail
cd "$(dirname "$0")/.."
exec .venv/bin/python -c 'from tgviz.views.messages import write_js; print(f"wrote {write_js()}")'
