"""login_path: does a login shell find `agent-hooks`, and the PATH line offered — added only
when asked (a yes on a terminal, or --yes), never otherwise. Real login shells (`sh -l`
reads ~/.profile)."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from agent_hooks.install import login_path

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Path]:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".profile").write_text("# mine\numask 022")  # no final newline
    bin_dir = home / ".local" / "bin"
    bin_dir.mkdir(parents=True)
    link = bin_dir / "agent-hooks"
    link.write_text("#!/bin/sh\n")
    link.chmod(0o755)
    return {"home": home, "bin": bin_dir, "link": link}


def _environ(world: dict[str, Path], shell: str = "/bin/sh") -> dict[str, str]:
    return {"HOME": str(world["home"]), "SHELL": shell, "PATH": "/usr/bin:/bin"}


@pytest.mark.parametrize(
    ("shell", "profile", "line"),
    [
        ("/bin/bash", ".profile", 'export PATH="$HOME/.local/bin:$PATH"'),
        ("/usr/bin/zsh", ".zprofile", 'export PATH="$HOME/.local/bin:$PATH"'),
        ("/usr/bin/fish", ".config/fish/config.fish", 'fish_add_path "{bin}"'),
        ("/bin/sh", ".profile", 'export PATH="$HOME/.local/bin:$PATH"'),
    ],
)
def test_the_profile_and_line_of_each_shell(
    world: dict[str, Path], shell: str, profile: str, line: str
) -> None:
    home = str(world["home"])
    assert login_path.profile_line(shell, str(world["bin"]), home, {}) == (
        f"{home}/{profile}",
        line.format(bin=world["bin"]),
    )


def test_bash_reads_its_own_profile_first(world: dict[str, Path]) -> None:
    (world["home"] / ".bash_login").write_text("")
    home = str(world["home"])
    assert login_path.profile_line("/bin/bash", str(world["bin"]), home, {})[0] == (
        f"{home}/.bash_login"
    )


def test_a_login_shell_is_asked_and_the_line_fixes_it(world: dict[str, Path]) -> None:
    finding = login_path.check(str(world["link"]), str(world["bin"]), _environ(world))
    assert not finding.ok and finding.shell == "/bin/sh"
    assert finding.profile == f"{world['home']}/.profile"
    problem = finding.problem(str(world["link"]), str(world["bin"]))
    assert problem is not None and problem.endswith("or run ./install.sh --yes)")
    assert login_path.add_line(finding.profile, finding.line or "")
    assert not login_path.add_line(finding.profile, finding.line or "")  # once only
    text = (world["home"] / ".profile").read_text()
    assert text.startswith("# mine\numask 022\n# added by agent-hooks")
    assert login_path.check(str(world["link"]), str(world["bin"]), _environ(world)).ok


def _offer(world: dict[str, Path], *extra: str, stdin: int | None = None) -> tuple[int, str]:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "agent_hooks.install.login_path",
            "offer",
            "--link",
            str(world["link"]),
            "--bin-dir",
            str(world["bin"]),
            *extra,
        ],
        stdin=subprocess.DEVNULL if stdin is None else stdin,
        capture_output=True,
        text=True,
        env={**_environ(world), "PYTHONPATH": str(ROOT / "src")},
        timeout=60,
    )
    return proc.returncode, proc.stdout + proc.stderr


def test_without_a_terminal_and_without_yes_the_profile_is_never_edited(
    world: dict[str, Path],
) -> None:
    before = (world["home"] / ".profile").read_bytes()
    code, out = _offer(world)
    assert code == 3 and "warning:" in out and "(fix: add `export PATH=" in out
    assert (world["home"] / ".profile").read_bytes() == before


def test_yes_adds_the_line(world: dict[str, Path]) -> None:
    code, out = _offer(world, "--yes")
    assert code == 0 and "added" in out
    assert 'export PATH="$HOME/.local/bin:$PATH"' in (world["home"] / ".profile").read_text()


@pytest.mark.parametrize(("answer", "added"), [("y\n", True), ("n\n", False), ("\n", False)])
def test_a_terminal_is_asked(world: dict[str, Path], answer: str, added: bool) -> None:
    main, child = pty.openpty()
    try:
        os.write(main, answer.encode())
        code, out = _offer(world, stdin=child)
    finally:
        os.close(child)
        os.close(main)
    assert "[y/N]" in out
    assert ("export PATH=" in (world["home"] / ".profile").read_text()) is added
    assert code == (0 if added else 3)


def test_a_link_the_login_shell_finds_is_ok(world: dict[str, Path]) -> None:
    (world["home"] / ".profile").write_text(f'PATH="{world["bin"]}:$PATH"\n')
    code, out = _offer(world)
    assert code == 0 and f"a login shell finds {world['link']}" in out
