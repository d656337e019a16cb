#!/usr/bin/env bash
# Installs what tgviz needs on a fresh Debian/Ubuntu machine: Debian's clang (tinygrad's CPU device compiles with it)
# and binutils (objdump: tinygrad disassembles the CPU device's kernels with it), a virtual environment in .venv with tgviz and its dependencies at the exact versions of constraints.txt. Pass "test"
# to add the test dependencies (Debian's chromium-headless-shell for the browser tests and chromium for the benchmarks'
# page timings, JupyterLab, Playwright, pytest; Debian's nodejs and npm, and TypeScript at the version of
# package-lock.json in node_modules/, for the JS checks).
set -euo pipefail
cd "$(dirname "$0")/.."
want=(clang objdump)
[ "${1:-}" = "test" ] && want+=(chromium chromium-headless-shell node npm)
declare -A package=([node]=nodejs [objdump]=binutils)  # the Debian package of a command, where it is named otherwise
missing=()
for p in "${want[@]}"; do command -v "$p" >/dev/null 2>&1 || missing+=("${package[$p]:-$p}"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "tgviz: installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${missing[@]}"
fi
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
# the exact versions of constraints.txt (scripts/lock.sh writes it from pyproject.toml's ranges): the same set every time
if [ "${1:-}" = "test" ]; then .venv/bin/python -m pip install -q -c constraints.txt -e ".[test]"; else .venv/bin/python -m pip install -q -c constraints.txt -e .; fi
if [ "${1:-}" = "test" ]; then npm ci --no-audit --no-fund --loglevel=error; fi  # TypeScript for scripts/test.sh
