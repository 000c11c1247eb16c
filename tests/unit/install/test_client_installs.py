"""install.clients: which clients install.sh goes into, installing into Codex and Gemini CLI
and taking exactly that out again, the record of it, and what `agent-hooks doctor` finds."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_hooks.install import claude_settings, clients, codex_config, gemini_settings


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Any]:
    home = tmp_path / "home"
    home.mkdir()
    entry = tmp_path / "data" / "hooks" / "entry.pyc"
    entry.parent.mkdir(parents=True)
    entry.write_bytes(b"")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    environ = {"HOME": str(home), "PATH": str(bin_dir), "AGENT_HOOKS_HOME": str(tmp_path / "data")}
    return {
        "home": home,
        "entry": str(entry),
        "python": os.path.realpath(sys.executable),
        "bin": bin_dir,
        "project": Path(os.path.realpath(project)),
        "environ": environ,
        "record": str(tmp_path / "data" / clients.RECORD_NAME),
    }


def _install(world: dict[str, Any], names: list[str], project: Path | None = None) -> int:
    return clients.install(
        names,
        world["python"],
        world["entry"],
        project=str(project) if project else None,
        record=world["record"],
        environ=world["environ"],
    )


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() if p.is_file() else b"<dir>"
        for p in sorted(root.rglob("*"))
    }


# --------------------------------------------------------------------------- choosing


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("claude,codex,gemini", ["claude", "codex", "gemini"]),
        ("gemini, Codex", ["codex", "gemini"]),
        ("codex", ["codex"]),
    ],
)
def test_clients_asked_for(text: str, expected: list[str]) -> None:
    assert clients.parse_clients(text) == expected


@pytest.mark.parametrize("text", ["", "claude,cursor", ","])
def test_an_unknown_client_is_refused_in_one_line(text: str) -> None:
    with pytest.raises(ValueError, match="--clients takes a comma-separated list"):
        clients.parse_clients(text)


def test_without_clients_claude_code_and_each_client_found(world: dict[str, Any]) -> None:
    environ = world["environ"]
    chosen, lines = clients.choose(None, environ)
    assert chosen == ["claude"]
    assert lines[0] == "Claude Code: always"
    assert lines[1].startswith("Codex: not found (no `codex` on PATH, no ")
    assert "`--clients claude,gemini` installs it anyway" in lines[2]
    codex = world["bin"] / "codex"
    codex.write_text("#!/bin/sh\n")
    codex.chmod(0o755)
    (world["home"] / ".gemini").mkdir()
    chosen, lines = clients.choose(None, environ)
    assert chosen == ["claude", "codex", "gemini"]
    assert lines[1] == f"Codex: found (`codex` is on PATH ({codex}))"
    assert lines[2] == f"Gemini CLI: found ({world['home'] / '.gemini'} exists)"
    moved = {**environ, "CODEX_HOME": str(world["home"] / "cx"), "GEMINI_CLI_HOME": "/nowhere"}
    codex.unlink()
    assert clients.choose(None, moved)[0] == ["claude"]
    (world["home"] / "cx").mkdir()
    assert clients.choose(None, moved)[0] == ["claude", "codex"]


def test_asked_clients_are_not_detected(world: dict[str, Any]) -> None:
    chosen, lines = clients.choose("codex", world["environ"])
    assert chosen == ["codex"]
    assert lines == [
        "Claude Code: not asked for (--clients)",
        "Codex: asked for (--clients)",
        "Gemini CLI: not asked for (--clients)",
    ]


# --------------------------------------------------------------------------- install, uninstall


def test_install_into_both_at_user_level_and_take_exactly_that_out(
    world: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    home = world["home"]
    (home / ".codex").mkdir()
    config = home / ".codex" / "config.toml"
    config.write_text('model = "gpt-5.5"\n# mine\n')
    before = _tree(home)
    assert _install(world, ["claude", "codex", "gemini"]) == 0
    out = capsys.readouterr().out
    assert "Codex:\n" in out and "agent-hooks installed for Codex (7 handlers trusted" in out
    assert "Gemini CLI:\n" in out
    report = codex_config.trust_status(str(home / ".codex"))
    assert report.ok
    gemini = claude_settings.read_settings(str(home / ".gemini" / "settings.json"))
    assert set(gemini_settings.ours_block(gemini)) == set(gemini_settings.EVENTS)
    record = json.loads(Path(world["record"]).read_text())
    assert [(i["client"], i["project"], i["created"]) for i in record["installs"]] == [
        ("codex", None, []),
        ("gemini", None, [str(home / ".gemini")]),
    ]
    assert _install(world, ["codex"]) == 0  # again: nothing changes, one record entry
    assert len(json.loads(Path(world["record"]).read_text())["installs"]) == 2

    assert clients.uninstall(project=None, record=world["record"], environ=world["environ"]) == 0
    after = _tree(home)
    assert {k: v for k, v in after.items() if "backup" not in k} == before
    assert config.read_text() == 'model = "gpt-5.5"\n# mine\n'
    assert not Path(world["record"]).exists()


def test_a_project_install_records_and_removes_the_directories_it_made(
    world: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    project = world["project"]
    assert _install(world, ["codex", "gemini"], project) == 0
    out = capsys.readouterr().out
    assert f'add [projects."{project}"] trust_level = "trusted" to ' in out  # what to do
    assert f'or add "{project}": "TRUST_FOLDER" to ' in out
    assert (project / ".codex" / "hooks.json").exists()
    assert (project / ".gemini" / "settings.json").exists()
    assert _install(world, ["codex"]) == 0  # user level too: both keep ~/.codex
    home = world["home"]
    assert clients.uninstall(project=None, record=world["record"], environ=world["environ"]) == 0
    assert (home / ".codex" / "config.toml").exists()  # the project's trust entries live there
    assert (
        clients.uninstall(project=str(project), record=world["record"], environ=world["environ"])
        == 0
    )
    assert not (project / ".codex").exists() and not (project / ".gemini").exists()
    assert not (home / ".codex").exists()  # made by install, left empty: inherited, removed
    assert sorted(p.name for p in home.iterdir()) == []
    assert not Path(world["record"]).exists()


def test_trust_project_only_when_asked(world: dict[str, Any]) -> None:
    project = world["project"]
    assert (
        clients.install(
            ["codex", "gemini"],
            world["python"],
            world["entry"],
            project=str(project),
            record=world["record"],
            environ=world["environ"],
            trust_project=True,
        )
        == 0
    )
    found = clients.check(world["environ"])
    assert [(c.client, c.project, c.ok, c.problems) for c in found] == [
        ("codex", str(project), True, []),
        ("gemini", str(project), True, []),
    ]


def test_uninstall_also_finds_our_handlers_it_has_no_record_of(world: dict[str, Any]) -> None:
    """A record lost (or from an older release): the user level's files are still read."""
    assert _install(world, ["codex", "gemini"]) == 0
    os.unlink(world["record"])
    assert clients.uninstall(project=None, record=world["record"], environ=world["environ"]) == 0
    assert not codex_config.read_hooks(str(world["home"] / ".codex" / "hooks.json"))
    assert not (world["home"] / ".gemini" / "settings.json").exists()


def test_a_failing_client_is_reported_and_not_recorded(
    world: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    (world["home"] / ".codex").mkdir()
    (world["home"] / ".codex" / "config.toml").write_text("this is = not toml [")
    assert _install(world, ["codex", "gemini"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "config.toml" in err
    assert [i["client"] for i in clients.load_record(world["record"])] == ["gemini"]


# --------------------------------------------------------------------------- doctor


def test_doctor_finds_a_stale_codex_hash_and_a_reinstall_rewrites_it(world: dict[str, Any]) -> None:
    assert _install(world, ["codex"]) == 0
    config = world["home"] / ".codex" / "config.toml"
    text = config.read_text()
    start = text.index('trusted_hash = "sha256:') + len('trusted_hash = "sha256:')
    config.write_text(text[:start] + ("0" if text[start] != "0" else "1") + text[start + 1 :])
    (found,) = clients.check(world["environ"])
    assert (found.client, found.ok) == ("codex", False)
    (problem,) = found.problems
    assert problem == (
        "Codex's SessionStart hook is modified: Codex silently skips it "
        "(install again: ./install.sh --clients codex)"
    )
    assert _install(world, ["codex"]) == 0
    assert [c.ok for c in clients.check(world["environ"])] == [True]


def test_doctor_finds_gemini_hooks_disabled_by_name(world: dict[str, Any]) -> None:
    assert _install(world, ["gemini"]) == 0
    path = world["home"] / ".gemini" / "settings.json"
    doc = json.loads(path.read_text())
    doc["hooksConfig"] = {"disabled": ["agent-hooks-BeforeTool"]}
    path.write_text(json.dumps(doc))
    (found,) = clients.check(world["environ"])
    assert not found.ok and "agent-hooks-BeforeTool" in found.problems[0]


def test_doctor_checks_claude_code_settings_for_every_event(world: dict[str, Any]) -> None:
    settings = world["home"] / ".claude" / "settings.json"
    settings.parent.mkdir()
    block = claude_settings.hooks_block(
        claude_settings.installed_command(world["python"], world["entry"])
    )
    settings.write_text(json.dumps({"hooks": block}))
    (found,) = clients.check(world["environ"])
    assert (found.client, found.ok, found.where) == ("claude", True, str(settings))
    del block["PreSkillShellCommand"]  # an install from before 2.1.332's event
    settings.write_text(json.dumps({"hooks": block}))
    (found,) = clients.check(world["environ"])
    assert found.problems == [
        f"{settings}: no agent-hooks handler for PreSkillShellCommand: install again"
    ]
    os.unlink(world["entry"])
    (found,) = clients.check(world["environ"])
    assert found.problems[0].endswith(
        "its entry script " + world["entry"] + " is missing: install again"
    )


def test_nothing_installed_is_nothing_to_check(world: dict[str, Any]) -> None:
    assert clients.check(world["environ"]) == []
