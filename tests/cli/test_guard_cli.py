"""`agent-hooks guard install | uninstall | status` through click's CliRunner, in real
temporary git repositories; the clock and the environment come from Env. `guard
check` is test_guard_check_cli.py."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from guard_harness import as_json, make_repo, run

from agent_hooks.git_guard import guard_hooks


@pytest.fixture
def repo(tmp_path: Path, home: Path) -> Path:
    return make_repo(tmp_path, home)


def test_install_status_uninstall_round_trip(home: Path, repo: Path) -> None:
    hooks = repo / ".git" / "hooks"
    hook = hooks / "pre-commit"
    hook.write_text("#!/bin/sh\nexit 0\n")
    hook.chmod(0o755)
    installed = run(home, "install", "--repo", str(repo), "--json")
    assert installed.exit_code == 0, installed.output
    doc = as_json(installed)
    assert doc["mode"] == "block" and doc["git_version"]
    assert doc["hooks"] == [
        {
            "hook": str(hook),
            "result": "installed, chaining the existing hook",
            "chained": str(hooks / "pre-commit.agent-hooks-chained"),
        },
        {"hook": str(hooks / "reference-transaction"), "result": "installed", "chained": None},
    ]

    again = as_json(run(home, "install", "--repo", str(repo), "--json"))
    assert [h["result"] for h in again["hooks"]] == ["unchanged", "unchanged"]
    status = as_json(run(home, "status", "--repo", str(repo), "--json"))
    assert status["installed"] is True
    for item in status["hooks"]:
        assert item["installed"] and item["mode"] == "block" and item["python_ok"]

    removed = run(home, "uninstall", "--repo", str(repo))
    assert removed.exit_code == 0
    assert removed.output == (
        f"{hook}: removed; the original hook is back\n{hooks / 'reference-transaction'}: removed\n"
    )
    assert hook.read_text() == "#!/bin/sh\nexit 0\n"
    assert not (hooks / "reference-transaction").exists()
    assert as_json(run(home, "status", "--repo", str(repo), "--json"))["installed"] is False


def test_install_warn_only_and_human_status(home: Path, repo: Path) -> None:
    subprocess.run(["git", "config", "core.hooksPath", "hooks"], cwd=repo, check=True)
    result = run(home, "install", "--repo", str(repo), "--warn-only")
    assert result.exit_code == 0, result.output
    assert f"{repo}/hooks/pre-commit: installed (warn-only)" in result.output
    assert f"{repo}/hooks/reference-transaction: installed (warn-only)" in result.output
    text = run(home, "status", "--repo", str(repo)).output
    assert "core.hooksPath = hooks" in text
    assert "\npre-commit:            installed (warn mode), runs " in text
    assert "\nreference-transaction: installed (warn mode), runs " in text
    assert "Run `agent-hooks guard install`" not in text


def test_human_status_of_a_partial_or_broken_guard(home: Path, repo: Path, tmp_path: Path) -> None:
    hooks = repo / ".git" / "hooks"
    (hooks / "pre-commit").write_text(
        guard_hooks.render("pre-commit", str(tmp_path / "gone"), "block")
    )
    (hooks / "reference-transaction").write_text("#!/bin/sh\nexit 0\n")
    text = run(home, "status", "--repo", str(repo)).output
    assert "— MISSING: the hook lets everything through" in text
    assert (
        "reference-transaction: not installed (another reference-transaction hook is there)" in text
    )
    assert text.endswith("Run `agent-hooks guard install` to install what is missing.\n")
    assert run(home, "install", "--repo", str(repo)).exit_code == 0
    text = run(home, "status", "--repo", str(repo)).output
    assert "chains " + str(hooks / "reference-transaction.agent-hooks-chained") in text
    assert "MISSING" not in text


def test_errors_are_one_line(home: Path, repo: Path, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    for args in (
        ["install", "--repo", str(plain)],
        ["check", "--repo", str(plain)],
        ["status", "--repo", str(tmp_path / "missing")],
    ):
        result = run(home, *args)
        assert result.exit_code == 1, args
        assert result.output.startswith("Error: ") and result.output.count("\n") == 1
    bad = run(home, "check", "--repo", str(repo), agent="../evil")
    assert bad.exit_code == 1 and "AGENT_NAME" in bad.output


def test_help_texts(home: Path) -> None:
    for command in ("install", "uninstall", "status", "check"):
        result = run(home, command, "--help")
        assert result.exit_code == 0 and "--json" in result.output
    text = " ".join(run(home, "--help").output.split())
    assert "AGENT_HOOKS_GUARD=off lets one git command through" in text  # for people
    assert "--no-verify skips pre-commit but not the branch check" in text
    assert "docs/trust-model.md" in text  # where the README's trust model moved


def test_install_and_uninstall_keep_the_record_purge_reads(home: Path, repo: Path) -> None:
    from agent_hooks.git_guard import guard_record
    from agent_hooks.install import purge

    state_dir = str(home / ".claude")
    hooks = repo / ".git" / "hooks"
    (hooks / "reference-transaction").write_text("#!/bin/sh\nexit 0\n")
    assert run(home, "install", "--repo", str(repo)).exit_code == 0
    assert run(home, "install", "--repo", str(repo)).exit_code == 0  # once per hook file
    entries = guard_record.load(state_dir)
    assert {e["repo"] for e in entries} == {str(repo)}
    assert [e["hook"] for e in entries] == [str(hooks / n) for n in guard_hooks.HOOKS]
    items = purge.guard_items(state_dir)
    assert [i.path for i in items] == [str(hooks / n) for n in guard_hooks.HOOKS]
    assert "reference-transaction.agent-hooks-chained is put back" in items[1].what
    assert run(home, "uninstall", "--repo", str(repo)).exit_code == 0
    assert guard_record.load(state_dir) == []


def test_purge_removes_every_guard_file_and_puts_chained_hooks_back(home: Path, repo: Path) -> None:
    from agent_hooks.install import purge

    hooks = repo / ".git" / "hooks"
    (hooks / "reference-transaction").write_text("#!/bin/sh\nexit 0\n")
    assert run(home, "install", "--repo", str(repo)).exit_code == 0
    for item in purge.guard_items(str(home / ".claude")):
        purge.remove_guard(item.path)
    assert not (hooks / "pre-commit").exists()
    assert (hooks / "reference-transaction").read_text() == "#!/bin/sh\nexit 0\n"
    assert not list(hooks.glob("*.agent-hooks-chained"))
