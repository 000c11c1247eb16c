"""The two scripts' portable parts, fast and offline: `./test.sh --help` answers at
once, and install.sh's source hash needs nothing but Python (macOS has no
`sha256sum`). The full install life cycle is test_install_sh.py (`-m install`)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from suite_schedule import work_unit

ROOT = Path(__file__).resolve().parents[2]


def run_test_sh(directory: Path, *args: str, path: str = "/usr/bin:/bin") -> Any:
    """A copy of ./test.sh run in `directory` (nothing else of the clone there)."""
    shutil.copy(ROOT / "test.sh", directory / "test.sh")
    return subprocess.run(
        ["bash", str(directory / "test.sh"), *args],
        capture_output=True,
        text=True,
        cwd=directory,
        env={"PATH": path, "HOME": str(directory)},
        timeout=60,
    )


def stand_in(bin_dir: Path, name: str, body: str) -> None:
    bin_dir.mkdir(parents=True, exist_ok=True)
    (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
    (bin_dir / name).chmod(0o755)


def stand_in_tools(directory: Path) -> None:
    """A .venv in `directory` whose tools are stand-ins, each printing what the real one
    prints; the stand-in pytest prints its arguments."""
    bin_dir = directory / ".venv" / "bin"
    stand_in(
        bin_dir, "python", 'case "$2" in pip) ;; pytest) shift 2; echo "pytest ran: $*";; esac'
    )
    stand_in(bin_dir, "ruff", "echo 'All checks passed!'")
    stand_in(bin_dir, "mypy", "echo 'Success: no issues found in 1 source file'")


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_test_sh_help_prints_usage_without_building_anything(tmp_path: Path, flag: str) -> None:
    """It used to create .venv/, install the package and lint before pytest printed
    its help; in a directory with no package that meant a failure, not help."""
    proc = run_test_sh(tmp_path, flag)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Usage: ./test.sh [pytest arguments]")
    assert '-m "not e2e and not install"' in proc.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["test.sh"]  # nothing built


def test_test_sh_says_which_tool_printed_what(tmp_path: Path) -> None:
    """Each tool's output comes under a label line naming it: ruff's bare "All checks
    passed!" was read as the whole suite's verdict. The tools here are stand-ins in a
    .venv of their own, each printing what the real one prints."""
    stand_in_tools(tmp_path)
    proc = run_test_sh(tmp_path, "-n", "3", "-x", "tests/cli")
    assert proc.returncode == 0, proc.stderr
    assert [line for line in proc.stdout.splitlines() if line] == [
        "== pip install -e '.[test]' (into .venv)",
        "== ruff check (lint)",
        "All checks passed!",
        "== mypy (types)",
        "Success: no issues found in 1 source file",
        "== pytest -n 3 -x tests/cli",
        "pytest ran: -n 3 -x tests/cli",
    ]


@pytest.mark.parametrize(
    ("cores", "args", "pytest_args"),
    [
        ("2", [], ["-n", "2"]),
        ("2", ["-x", "tests/cli"], ["-n", "2", "-x", "tests/cli"]),
        ("16", [], ["-n", "4"]),
        ("1", ["-x"], ["-x"]),
        ("2", ["-n", "0"], ["-n", "0"]),
        ("2", ["-n0", "-x"], ["-n0", "-x"]),
        ("2", ["-x", "--numprocesses=3"], ["-x", "--numprocesses=3"]),
        ("2", ["-p", "no:xdist", "-x"], ["-p", "no:xdist", "-x"]),
        ("2", ["-m", "not e2e and not install"], ["-n", "2", "-m", "not e2e and not install"]),
    ],
)
def test_test_sh_runs_one_worker_per_core_at_most_four_unless_told(
    tmp_path: Path, cores: str, args: list[str], pytest_args: list[str]
) -> None:
    """Serial, the suite took 11-15 minutes on two cores; `-n` or `-p no:xdist` given is
    obeyed as it is (`-n 0`: one process, for --pdb)."""
    stand_in_tools(tmp_path)
    stand_in(tmp_path / "cores", "nproc", f"echo {cores}")
    proc = run_test_sh(tmp_path, *args, path=f"{tmp_path / 'cores'}:/usr/bin:/bin")
    assert proc.returncode == 0, proc.stderr
    assert f"pytest ran: {' '.join(pytest_args)}" in proc.stdout.splitlines()


def _source_hash_function() -> str:
    text = (ROOT / "install.sh").read_text()
    match = re.search(r"^source_hash\(\) \{.*?^\}$", text, re.S | re.M)
    assert match, "install.sh defines source_hash"
    return match.group(0)


def _source_hash(repo: Path, empty_path: Path) -> str:
    """install.sh's `source_hash`, run by bash with a PATH holding no program at all:
    no sha256sum, shasum, find, sort or xargs (only the interpreter, by its path)."""
    proc = subprocess.run(
        ["/bin/bash", "-c", _source_hash_function() + "\nsource_hash"],
        capture_output=True,
        text=True,
        env={"PATH": str(empty_path), "python": sys.executable, "repo": str(repo)},
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "clone"
    for rel in ("pyproject.toml", "README.md", "src/agent_hooks/a.py", "hooks/entry.py"):
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(f"{rel}\n")
    return repo


def test_install_sh_source_hash_needs_only_python(repo: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty-path"
    empty.mkdir()
    first = _source_hash(repo, empty)
    assert re.fullmatch(r"[0-9a-f]{64}", first)
    assert _source_hash(repo, empty) == first
    # what pip does not install, or rebuilds, does not count
    (repo / "src/agent_hooks/__pycache__").mkdir()
    (repo / "src/agent_hooks/__pycache__/a.cpython-311.pyc").write_bytes(b"\0")
    (repo / "src/agent_hooks.egg-info").mkdir()
    (repo / "src/agent_hooks.egg-info/PKG-INFO").write_text("x")
    (repo / "tests").mkdir()
    (repo / "tests/test_x.py").write_text("x")
    assert _source_hash(repo, empty) == first
    # a changed, added or renamed source does
    (repo / "src/agent_hooks/a.py").write_text("changed\n")
    changed = _source_hash(repo, empty)
    assert changed != first
    (repo / "hooks/new.py").write_text("")
    added = _source_hash(repo, empty)
    assert added not in (first, changed)
    (repo / "hooks/new.py").rename(repo / "hooks/renamed.py")
    assert _source_hash(repo, empty) not in (first, changed, added)


def test_under_xdist_the_e2e_tests_share_one_worker(tmp_path: Path) -> None:
    """The schedule of tests/suite_schedule.py, run: two real clients at once on two cores
    time out. Mock-only e2e tests stand in for the real-client ones (the rule is by
    directory); each test writes down its worker."""
    (tmp_path / "worker_log.py").write_text(
        "import os\n"
        "def pytest_runtest_call(item):\n"
        f"    with open({str(tmp_path / 'workers')!r}, 'a') as out:\n"
        "        out.write(f\"{item.nodeid} {os.environ['PYTEST_XDIST_WORKER']}\\n\")\n"
    )
    command = [sys.executable, "-m", "pytest", "-q", "-n2", "-p", "no:cacheprovider"]
    command += ["-p", "worker_log", "tests/e2e/test_mock_gemini_api.py"]
    command += ["tests/unit/test_timestamps.py"]
    proc = subprocess.run(
        command,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ran = dict(line.rsplit(" ", 1) for line in (tmp_path / "workers").read_text().splitlines())
    e2e = {worker for nodeid, worker in ran.items() if nodeid.startswith("tests/e2e/")}
    assert len(ran) == 5 + 18, ran
    assert len(e2e) == 1, ran


@pytest.mark.parametrize(
    ("nodeid", "unit"),
    [
        ("tests/e2e/test_harness.py::test_a", "e2e"),
        ("tests/e2e/test_scenarios.py::test_b[plugin]", "e2e"),
        ("tests/install/test_newcomer.py::test_c", "tests/install/test_newcomer.py"),
        ("tests/install/test_install_sh.py::T::test_d", "tests/install/test_install_sh.py"),
        ("tests/unit/test_storage.py::test_e", "tests/unit/test_storage.py::test_e"),
        ("tests/hooks/test_e2e.py::test_f", "tests/hooks/test_e2e.py::test_f"),
    ],
)
def test_the_units_of_work_under_xdist(nodeid: str, unit: str) -> None:
    """Every e2e test in one unit; each install module one unit, so its module-scoped life
    cycle runs once; any other test a unit of its own."""
    assert work_unit(nodeid) == unit
