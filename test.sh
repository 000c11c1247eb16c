#!/usr/bin/env bash
# The test command (README): ./test.sh [pytest arguments]; ./test.sh --help at once.
# Creates .venv on first use, installs the package with its test extras, then
# runs the linters and the whole suite (unit, hook, concurrency, end-to-end) on every
# core, at most 4 (pytest-xdist; ADR-0030) unless the arguments say how (-n, -p no:xdist).
set -euo pipefail
case ${1:-} in
  -h|--help)
    cat <<'EOF'
Usage: ./test.sh [pytest arguments]

Creates .venv/ on first use and installs the package with its test extras into
it, runs the linter (ruff) and the type checker (mypy), then pytest with the
arguments given: the whole suite (unit, hooks, concurrency, install, end-to-end)
when there are none. Tests run in one worker process per core, at most 4
(pytest-xdist's -n): the end-to-end tests, which drive the real clients, one at a
time on one worker, each install module on one worker (tests/suite_schedule.py).
Give -n yourself to choose: -n 0 (or -p no:xdist) runs everything in this process.

  ./test.sh                                 everything, on every core (at most 4)
  ./test.sh -m "not e2e and not install"    the fast part only
  ./test.sh -n 4 tests/cli                  four workers, one directory
  ./test.sh -n 0 tests/unit                 one process (e.g. for --pdb)
  ./test.sh -k trail -x                     by name, stop at the first failure

pytest's own options: .venv/bin/python -m pytest --help
EOF
    exit 0 ;;
esac
cd "$(dirname "${BASH_SOURCE[0]}")"
step() { printf '\n== %s\n' "$*"; }  # a label before each tool, so its output is attributed
if ! [ -x .venv/bin/python ]; then
  step "creating .venv"
  "${PYTHON:-python3}" -m venv .venv
fi
step "pip install -e '.[test]' (into .venv)"
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
step "ruff check (lint)"
.venv/bin/ruff check src tests bench hooks/entry.py
step "mypy (types)"
.venv/bin/mypy
workers=()  # -n <cores, at most 4>, unless the arguments choose
case " $* " in
  *" -n"*|*" --numprocesses"*|*"no:xdist"*) ;;
  *)
    cores=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
    [ "$cores" -le 4 ] 2>/dev/null || cores=4
    [ "$cores" -le 1 ] || workers=(-n "$cores")
    ;;
esac
step "pytest ${workers[*]+${workers[*]} }$*"
exec .venv/bin/python -m pytest ${workers[@]+"${workers[@]}"} "$@"
