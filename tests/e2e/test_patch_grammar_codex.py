"""The patch grammar against the real thing: every case of
``tests/patch_cases.py`` applied by the pinned codex binary's own
``apply_patch`` (the native binary started under that name, as Codex's PATH helper is).

For each patch: Codex parses it exactly when ``patch_targets`` finds no problem (else it
exits 1 having written nothing), and the
files it created, changed or removed are among the paths ``patch_targets`` names (a
patch whose context does not match may change nothing; one Codex refuses changes nothing).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from agent_hooks.shell.patch_targets import parse
from patch_cases import CASES

from .codex_cli import CodexUnavailable, native_binary

SEED = {"old.txt": "old\n", "keep.txt": "k1\nk2\n"}


@pytest.fixture(scope="module")
def apply_patch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    try:
        binary = native_binary()
    except CodexUnavailable as exc:
        pytest.skip(f"codex CLI unavailable: {exc.reason}")
    link = tmp_path_factory.mktemp("bin") / "apply_patch"
    link.symlink_to(binary)
    return link


def _files(root: Path) -> dict[str, str]:
    found = {}
    for base, _, names in os.walk(root):
        for name in names:
            path = Path(base, name)
            found[str(path)] = path.read_text()
    return found


@pytest.mark.parametrize("name", list(CASES))
def test_codex_writes_only_what_the_parser_names(
    apply_patch: Path, tmp_path: Path, name: str
) -> None:
    text, _, ok = CASES[name]
    work = tmp_path / "work" / "sub" / "deeper"
    work.mkdir(parents=True)
    text = text.replace("/tmp/x/", f"{tmp_path}/abs/")
    for rel, content in SEED.items():
        (work / rel).write_text(content)
    before = _files(tmp_path)

    done = subprocess.run(
        [str(apply_patch), text], cwd=work, capture_output=True, text=True, timeout=60
    )

    after = _files(tmp_path)
    touched = {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}
    named = {os.path.normpath(os.path.join(work, p)) for _, p in parse(text).paths()}
    assert touched <= named, (done.stdout, done.stderr)
    if ok:
        assert "Invalid patch" not in done.stderr + done.stdout, done.stderr
    else:
        assert (done.returncode, touched) == (1, set()), (done.stdout, done.stderr)
