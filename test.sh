#!/usr/bin/env bash
# The test command (README): ./test.sh [pytest arguments]
# Creates .venv on first use, installs the package with its test extras, then
# runs the linters and the whole suite (unit, hook, concurrency, end-to-end).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
if ! [ -x .venv/bin/python ]; then
  "${PYTHON:-python3}" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
.venv/bin/ruff check src tests bench hooks/entry.py
.venv/bin/mypy
exec .venv/bin/python -m pytest "$@"
