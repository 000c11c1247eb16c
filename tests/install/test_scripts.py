"""The two scripts' portable parts, fast and offline: `./test.sh --help` answers at
once, and install.sh's source hash needs nothing but Python (macOS has no
`sha256sum`). The full install life cycle is test_install_sh.py (`-m install`)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run_test_sh(directory: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """A copy of ./test.sh run in `directory` (nothing else of the clone there)."""
    shutil.copy(ROOT / "test.sh", directory / "test.sh")
    return subprocess.run(
        ["bash", str(directory / "test.sh"), *args],
        capture_output=True,
        text=True,
        cwd=directory,
        env={"PATH": "/usr/bin:/bin", "HOME": str(directory)},
        timeout=60,
    )


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
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    stand_ins = {
        "python": 'case "$2" in pip) ;; pytest) shift 2; echo "pytest ran: $*";; esac',
        "ruff": "echo 'All checks passed!'",
        "mypy": "echo 'Success: no issues found in 1 source file'",
    }
    for name, body in stand_ins.items():
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    proc = run_test_sh(tmp_path, "-x", "tests/cli")
    assert proc.returncode == 0, proc.stderr
    assert [line for line in proc.stdout.splitlines() if line] == [
        "== pip install -e '.[test]' (into .venv)",
        "== ruff check (lint)",
        "All checks passed!",
        "== mypy (types)",
        "Success: no issues found in 1 source file",
        "== pytest -x tests/cli",
        "pytest ran: -x tests/cli",
    ]


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
