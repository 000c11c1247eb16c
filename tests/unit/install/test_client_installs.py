"""install.clients: the family of client installers in one table — choosing them, installing
into each and taking exactly that out again (every project recorded too), the record of it,
hooks left behind that must never refuse a call, and what `agent-hooks doctor` finds."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_hooks.clients import client_table
from agent_hooks.install import (
    claude_settings,
    clients,
    codex_config,
    gemini_settings,
    hooks_file,
    opencode_plugin,
    qwen_settings,
)

ALL = ["claude", "codex", "gemini", "qwen", "opencode"]
# The shell each client runs a hook command with (reference/*/PROTOCOL.md, OTHER-CLIENTS.md):
# Claude Code `sh -c`, Codex `/bin/bash -c`, Gemini CLI `bash -c`, Qwen Code bash.
SHELLS = {"claude": "/bin/sh", "codex": "/bin/bash", "gemini": "/bin/bash", "qwen": "/bin/bash"}


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Any]:
    home = tmp_path / "home"
    home.mkdir()
    data = tmp_path / "data"
    entry = data / "hooks" / "entry.py"
    entry.parent.mkdir(parents=True)
    # a stand-in entry script: prints what it was run with (the real one is e2e's), and
    # its parent process in the environment variable's place the test reads
    entry.write_text(
        "import json, os, sys\n"
        "print(json.dumps(sys.argv[1:]))\n"
        "open(os.environ['PARENT_FILE'], 'w').write(str(os.getppid())) "
        "if os.environ.get('PARENT_FILE') else None\n"
    )
    venv_bin = data / "venv" / "bin"
    venv_bin.mkdir(parents=True)
    python = venv_bin / "python"
    python.symlink_to(os.path.realpath(sys.executable))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    environ = {"HOME": str(home), "PATH": str(bin_dir), "AGENT_HOOKS_HOME": str(data)}
    return {
        "home": home,
        "entry": str(entry),
        "python": str(python),
        "bin": bin_dir,
        "project": Path(os.path.realpath(project)),
        "environ": environ,
        "record": str(data / clients.RECORD_NAME),
        "settings_record": str(data / clients.SETTINGS_RECORD_NAME),
    }


def _install(
    world: dict[str, Any], names: list[str], project: Path | None = None, **extra: Any
) -> int:
    return clients.install(
        names,
        world["python"],
        world["entry"],
        project=str(project) if project else None,
        record=world["record"],
        environ=world["environ"],
        settings_record=world["settings_record"],
        now=1_800_000_000.0,
        **extra,
    )


def _uninstall(world: dict[str, Any], project: Path | None = None) -> int:
    return clients.uninstall(
        project=str(project) if project else None,
        record=world["record"],
        environ=world["environ"],
        settings_record=world["settings_record"],
        everywhere=project is None,
        now=1_800_000_100.0,
    )


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() if p.is_file() else b"<dir>"
        for p in sorted(root.rglob("*"))
        if hooks_file.BACKUP_INFIX not in p.name
    }


def _target(world: dict[str, Any], client: str, project: Path | None = None) -> Path:
    module = clients.INSTALLERS[client]
    return Path(module.target(module.home(world["environ"]), str(project) if project else None))


# --------------------------------------------------------------------------- the table


def test_one_table_holds_every_client_and_each_module_names_itself() -> None:
    assert tuple(ALL) == clients.CLIENTS
    for name, module in clients.INSTALLERS.items():
        assert name == module.NAME and module.LABEL and module.PROJECT_DIR.startswith(".")
    assert clients.LABELS["qwen"] == "Qwen Code" and clients.LABELS["opencode"] == "opencode"


def test_no_client_is_special_cased_outside_its_module() -> None:
    """install, uninstall, purge and doctor reach a client only through the table."""
    root = Path(clients.__file__).parent
    for name in ("clients.py", "purge.py"):
        text = (root / name).read_text()
        for client in ALL:
            assert f'== "{client}"' not in text and f"== '{client}'" not in text, (name, client)


# --------------------------------------------------------------------------- choosing


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("claude,codex,gemini", ["claude", "codex", "gemini"]),
        ("gemini, Codex", ["codex", "gemini"]),
        ("opencode,qwen", ["qwen", "opencode"]),
        ("codex", ["codex"]),
    ],
)
def test_clients_asked_for(text: str, expected: list[str]) -> None:
    assert clients.parse_clients(text) == expected


@pytest.mark.parametrize("text", ["", "claude,cursor", ","])
def test_an_unknown_client_is_refused_in_one_line(text: str) -> None:
    with pytest.raises(ValueError, match="--clients takes a comma-separated list"):
        clients.parse_clients(text)


def _command(bin_dir: Path, name: str) -> Path:
    path = bin_dir / name
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def test_without_clients_claude_code_and_each_client_found(world: dict[str, Any]) -> None:
    environ, home = world["environ"], world["home"]
    chosen, lines = clients.choose(None, environ)
    assert chosen == ["claude"]
    assert lines[0] == "Claude Code: always"
    assert lines[1].startswith("Codex: not found (no `codex` on PATH, no ")
    assert "`--clients claude,gemini` installs it anyway" in lines[2]
    assert (
        lines[3]
        == f"Qwen Code: not found (no `qwen` on PATH, no {home / '.qwen'}); `--clients claude,qwen` installs it anyway"
    )
    assert lines[4].startswith(
        f"opencode: not found (no `opencode` on PATH, no {home / '.config' / 'opencode'})"
    )
    codex = _command(world["bin"], "codex")
    qwen = _command(world["bin"], "qwen")
    (home / ".gemini").mkdir()
    (home / ".config" / "opencode").mkdir(parents=True)
    chosen, lines = clients.choose(None, environ)
    assert chosen == ALL
    assert lines[1] == f"Codex: found (`codex` is on PATH ({codex}))"
    assert lines[2] == f"Gemini CLI: found ({home / '.gemini'} exists)"
    assert lines[3] == f"Qwen Code: found (`qwen` is on PATH ({qwen}))"
    assert lines[4] == f"opencode: found ({home / '.config' / 'opencode'} exists)"
    moved = {
        **environ,
        "CODEX_HOME": str(home / "cx"),
        "GEMINI_CLI_HOME": "/nowhere",
        "QWEN_HOME": str(home / "qw"),
        "XDG_CONFIG_HOME": str(home / "xdg"),
    }
    codex.unlink()
    qwen.unlink()
    assert clients.choose(None, moved)[0] == ["claude"]
    for made in ("cx", "qw", "xdg/opencode"):
        (home / made).mkdir(parents=True)
    assert clients.choose(None, moved)[0] == ["claude", "codex", "qwen", "opencode"]
    (home / ".config" / "opencode").rmdir()
    assert "opencode" not in clients.choose(None, environ)[0]
    _command(world["bin"], "opencode")
    assert clients.choose(None, environ)[0] == ["claude", "gemini", "opencode"]


def test_asked_clients_are_not_detected(world: dict[str, Any]) -> None:
    chosen, lines = clients.choose("codex", world["environ"])
    assert chosen == ["codex"]
    assert lines == [
        "Claude Code: not asked for (--clients)",
        "Codex: asked for (--clients)",
        "Gemini CLI: not asked for (--clients)",
        "Qwen Code: not asked for (--clients)",
        "opencode: not asked for (--clients)",
    ]


# --------------------------------------------------------------------------- install, uninstall

USER_HOOK = {"type": "command", "command": "/usr/local/bin/my-guard --strict", "timeout": 5}


def _users_file(world: dict[str, Any], client: str, project: Path | None) -> tuple[Path, bytes]:
    """The user's own file where agent-hooks goes, with their own hooks and settings in the
    user's own formatting (and for opencode: their own plugin beside ours)."""
    target = _target(world, client, project)
    target.parent.mkdir(parents=True, exist_ok=True)
    if client == "opencode":
        mine = target.parent / "my-plugin.js"
        mine.write_text("export const Mine = async () => ({});\n")
        return mine, mine.read_bytes()
    doc: dict[str, Any] = {
        "model": "mine",
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [USER_HOOK]}],
            "Stop": [{"hooks": [USER_HOOK]}],
        },
    }
    if client == "codex":
        doc = {"hooks": doc["hooks"]}
    data = (json.dumps(doc, indent=4, ensure_ascii=True) + "\n\n").encode()
    target.write_bytes(data)
    target.chmod(0o640)
    return target, data


@pytest.mark.parametrize("scope", ["user", "project"])
@pytest.mark.parametrize("client", ALL)
def test_each_client_installs_and_uninstall_gives_the_users_file_back_byte_for_byte(
    world: dict[str, Any], client: str, scope: str, capsys: pytest.CaptureFixture[str]
) -> None:
    project = world["project"] if scope == "project" else None
    if client == "codex":
        config = world["home"] / ".codex" / "config.toml"
        config.parent.mkdir()
        config.write_bytes(b'model = "gpt-5.5"\r\n# mine\r\n')
    users, data = _users_file(world, client, project)
    before_home, before_project = _tree(world["home"]), _tree(world["project"])
    assert _install(world, [client], project) == 0
    out = capsys.readouterr().out
    assert f"{clients.LABELS[client]}:\n" in out and "installed" in out
    target = _target(world, client, project)
    module = clients.INSTALLERS[client]
    home = module.home(world["environ"])
    assert module.commands(home, str(project) if project else None)  # ours are in
    assert _install(world, [client], project) == 0  # idempotent
    assert "already up to date" in capsys.readouterr().out
    (found,) = clients.check(world["environ"])
    assert found.client == client and found.where == str(target)
    if project is None or client not in ("codex", "gemini"):  # their project trust: said
        assert found.ok, found.problems
    assert users.read_bytes() == data or client != "opencode"

    assert _uninstall(world, project) == 0
    assert users.read_bytes() == data
    assert (users.stat().st_mode & 0o777) in (0o640, 0o644)
    assert _tree(world["home"]) == before_home
    assert _tree(world["project"]) == before_project
    assert not Path(world["record"]).exists()
    assert not module.commands(home, str(project) if project else None)


@pytest.mark.parametrize("client", ALL)
def test_a_file_and_directories_install_made_are_gone_after_uninstall(
    world: dict[str, Any], client: str
) -> None:
    before = _tree(world["home"])
    assert _install(world, [client], world["project"]) == 0
    assert _target(world, client, world["project"]).exists()
    assert _uninstall(world, world["project"]) == 0
    assert _tree(world["project"]) == {".git": b"<dir>"}
    assert _tree(world["home"]) == before


def test_a_plain_uninstall_takes_out_every_project_it_recorded(world: dict[str, Any]) -> None:
    """The venv and entry script go with `./install.sh --uninstall`: no project may keep a
    hook that runs them (issue 32: Gemini CLI refused every call in such a project)."""
    other = world["project"].parent / "other"
    other.mkdir()
    assert _install(world, ALL) == 0
    assert _install(world, ALL, world["project"]) == 0
    assert _install(world, ["gemini", "qwen"], other) == 0
    assert _uninstall(world) == 0
    for project in (None, world["project"], other):
        for client in ALL:
            module = clients.INSTALLERS[client]
            home = module.home(world["environ"])
            assert not module.commands(home, str(project) if project else None), (client, project)
    assert not Path(world["record"]).exists() and not Path(world["settings_record"]).exists()


def test_uninstall_also_finds_our_hooks_it_has_no_record_of(world: dict[str, Any]) -> None:
    """A record lost (or from an older release): the user level's files are still read,
    and a project's when it is named."""
    assert _install(world, ALL) == 0
    assert _install(world, ALL, world["project"]) == 0
    os.unlink(world["record"])
    os.unlink(world["settings_record"])
    assert _uninstall(world, world["project"]) == 0
    assert _uninstall(world) == 0
    for client in ALL:
        for project in (None, str(world["project"])):
            module = clients.INSTALLERS[client]
            assert not module.commands(module.home(world["environ"]), project), (client, project)


def test_claude_codes_record_of_an_earlier_release_counts_as_installs(
    world: dict[str, Any],
) -> None:
    """Releases before this one recorded Claude Code's settings files only in
    install-record.json: a plain uninstall takes those projects out too."""
    assert (
        claude_settings.main(
            [
                "install",
                "--settings",
                str(world["project"] / ".claude" / "settings.json"),
                "--python",
                world["python"],
                "--entry",
                world["entry"],
                "--record",
                world["settings_record"],
            ]
        )
        == 0
    )
    assert not Path(world["record"]).exists()
    assert _uninstall(world) == 0
    assert not (world["project"] / ".claude" / "settings.json").exists()


def test_a_project_gone_is_forgotten(
    world: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    gone = world["project"].parent / "gone"
    gone.mkdir()
    assert _install(world, ["gemini"], gone) == 0
    (gone / ".gemini" / "settings.json").unlink()
    (gone / ".gemini").rmdir()
    gone.rmdir()
    assert _uninstall(world) == 0
    assert "the project is gone; forgotten" in capsys.readouterr().out
    assert not Path(world["record"]).exists()


def test_a_failing_client_is_reported_and_not_recorded(
    world: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    (world["home"] / ".codex").mkdir()
    (world["home"] / ".codex" / "config.toml").write_text("this is = not toml [")
    assert _install(world, ["codex", "gemini"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "config.toml" in err
    assert [i["client"] for i in clients.load_record(world["record"])] == ["gemini"]


def test_an_uninstall_that_fails_keeps_its_record(
    world: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    """install.sh keeps the installed copy while the record names an install: a hook it
    could not take out keeps what it runs (and the output says which)."""
    assert _install(world, ["qwen"], world["project"]) == 0
    target = _target(world, "qwen", world["project"])
    target.write_text("{ broken")
    assert _uninstall(world) == 1
    err = capsys.readouterr().err
    assert "could not uninstall" in err and str(target) in err
    assert [i["client"] for i in clients.load_record(world["record"])] == ["qwen"]


def test_trust_project_only_when_asked(world: dict[str, Any]) -> None:
    project = world["project"]
    settings = world["home"] / ".qwen" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"security": {"folderTrust": {"enabled": True}}}))
    assert _install(world, ["codex", "gemini", "qwen"], project) == 0
    found = {c.client: c for c in clients.check(world["environ"])}
    assert not found["codex"].ok and not found["gemini"].ok and not found["qwen"].ok
    assert "--trust-project" in found["qwen"].problems[0]
    assert _install(world, ["codex", "gemini", "qwen"], project, trust_project=True) == 0
    found = {c.client: c for c in clients.check(world["environ"])}
    assert [(c, f.project, f.ok, f.problems) for c, f in found.items() if c != "claude"] == [
        ("codex", str(project), True, []),
        ("gemini", str(project), True, []),
        ("qwen", str(project), True, []),
    ]
    trusted = json.loads((world["home"] / ".qwen" / "trustedFolders.json").read_text())
    assert trusted == {str(project): "TRUST_FOLDER"}


def test_an_opencode_plugin_of_the_users_own_of_our_name_is_never_overwritten(
    world: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    target = _target(world, "opencode")
    target.parent.mkdir(parents=True)
    target.write_text("// my own agent-hooks.js\n")
    assert _install(world, ["opencode"]) == 1
    assert "is not agent-hooks' plugin; left as it is" in capsys.readouterr().err
    assert target.read_text() == "// my own agent-hooks.js\n"
    assert _uninstall(world) == 0
    assert target.read_text() == "// my own agent-hooks.js\n"


def test_the_opencode_plugin_holds_the_hook_argv_as_the_template_asks(
    world: dict[str, Any],
) -> None:
    assert _install(world, ["opencode"]) == 0
    text = _target(world, "opencode").read_text()
    argv = [world["python"], "-IS", world["entry"], "opencode"]
    assert text.splitlines()[0] == opencode_plugin.MARKER
    assert opencode_plugin.PLACEHOLDER not in text and json.dumps(argv) in text
    assert opencode_plugin.installed_argv(text) == argv
    template = Path(opencode_plugin.template_path(world["entry"])).read_text()
    assert text == template.replace(opencode_plugin.PLACEHOLDER, json.dumps(argv))


@pytest.mark.parametrize(
    "template",
    [
        "const C = __AGENT_HOOKS_COMMAND__;\n",  # no marker
        f"{opencode_plugin.MARKER}\nconst C = 1;\n",  # no placeholder
        f"{opencode_plugin.MARKER}\nconst C = __AGENT_HOOKS_COMMAND__, D = __AGENT_HOOKS_COMMAND__;\n",
    ],
)
def test_a_template_that_breaks_the_contract_is_refused(template: str) -> None:
    with pytest.raises(ValueError, match="template"):
        opencode_plugin.render(template, ["/p", "-IS", "/e/hooks/entry.pyc", "opencode"])


# --------------------------------------------------------------------------- leftovers never block


def _installed_commands(world: dict[str, Any], client: str, project: Path | None) -> list[str]:
    """The commands written into the client's file, as the client reads them."""
    doc = json.loads(_target(world, client, project).read_text())
    return [
        h["command"]
        for groups in doc["hooks"].values()
        for g in groups
        for h in g["hooks"]
        if hooks_file.is_ours(h)
    ]


def _run_as_client(
    client: str, command: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [SHELLS[client], "-c", command],
        input=b'{"hook_event_name": "PreToolUse"}',
        capture_output=True,
        cwd="/",
        env={"PATH": "/usr/bin:/bin", **(env or {})},
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize("client", ["claude", "codex", "gemini", "qwen"])
def test_the_hook_is_the_clients_own_child(
    world: dict[str, Any], client: str, tmp_path: Path
) -> None:
    """The shell the client starts execs the hook, as it did the plain command: the hook's
    parent is the client (Codex's and Gemini CLI's holder process, ADR-0019). Here the
    client is this test's process."""
    assert _install(world, [client]) == 0
    parent = tmp_path / "parent"
    for command in _installed_commands(world, client, None):
        done = _run_as_client(client, command, {"PARENT_FILE": str(parent)})
        assert done.returncode == 0, done.stderr
        assert int(parent.read_text()) == os.getpid(), command


@pytest.mark.parametrize("gone", ["interpreter", "entry script", "both"])
@pytest.mark.parametrize("client", ["claude", "codex", "gemini", "qwen"])
def test_a_hook_left_behind_exits_0_and_says_nothing(
    world: dict[str, Any], client: str, gone: str
) -> None:
    """Every installed command, run by the shell its client runs it with: while agent-hooks
    is there it starts the entry with its arguments; once the interpreter or the entry
    script is gone it exits 0 with nothing on stdout or stderr (Claude Code, Codex and
    Gemini CLI read exit 2 + stderr as a deny, Gemini CLI also 127 + stderr)."""
    assert _install(world, [client], world["project"]) == 0
    commands = _installed_commands(world, client, world["project"])
    assert commands
    for command in commands:
        done = _run_as_client(client, command)
        assert done.returncode == 0 and done.stderr == b""
        argv = json.loads(done.stdout)  # what the stand-in entry was run with
        assert argv == (hooks_file.command_argv(command) or [])[3:]
        assert argv[:-1] == ([] if client == "claude" else [client])
    if gone in ("interpreter", "both"):
        os.unlink(world["python"])
    if gone in ("entry script", "both"):
        os.unlink(world["entry"])
    for command in commands:
        done = _run_as_client(client, command)
        assert (done.returncode, done.stdout, done.stderr) == (0, b"", b""), command


@pytest.mark.parametrize("client", ALL)
def test_doctor_finds_hooks_that_point_at_nothing(world: dict[str, Any], client: str) -> None:
    """A project's file naming another user's copy (committed and cloned), or one uninstall
    could not reach: doctor names it and the fix."""
    assert _install(world, [client], world["project"], trust_project=True) == 0
    os.unlink(world["record"])  # a clone: nothing recorded here
    if os.path.exists(world["settings_record"]):
        os.unlink(world["settings_record"])
    assert clients.check(world["environ"]) == []  # not a project this HOME knows...
    (found,) = clients.check(world["environ"], projects=[str(world["project"])])  # ...but here
    assert found.ok or client == "codex", found.problems
    os.unlink(world["entry"])
    (found,) = clients.check(world["environ"], projects=[str(world["project"])])
    assert not found.ok
    assert (
        f"a hook points at nothing (its entry script {world['entry']} is missing)"
        in (found.problems[0])
    )
    assert found.problems[0].endswith(f"--project {world['project']})")


# --------------------------------------------------------------------------- doctor's client checks


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
        "(fix: ./install.sh --clients codex)"
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


def test_doctor_finds_qwen_hooks_switched_off(world: dict[str, Any]) -> None:
    assert _install(world, ["qwen"]) == 0
    path = world["home"] / ".qwen" / "settings.json"
    doc = json.loads(path.read_text())
    doc["disableAllHooks"] = True
    path.write_text(json.dumps(doc))
    (found,) = clients.check(world["environ"])
    assert not found.ok and "disableAllHooks is true" in found.problems[0]


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
        f"{settings}: no agent-hooks handler for PreSkillShellCommand (fix: ./install.sh)"
    ]


def test_nothing_installed_is_nothing_to_check(world: dict[str, Any]) -> None:
    assert clients.check(world["environ"]) == []


@pytest.mark.parametrize("name", [n for n in clients.CLIENTS if n != "opencode"])
def test_every_event_installed_is_one_its_client_module_routes(name: str) -> None:
    """The installer's hooks table and the runtime client's `EVENTS` agree: an event
    installed but not routed is a hook that answers nothing."""
    installed = {event for event, _, _ in clients.INSTALLERS[name].HOOKS}  # type: ignore[attr-defined]
    assert installed and installed <= set(client_table.module(name).EVENTS), name


def test_the_opencode_plugin_runs_exactly_the_events_its_client_module_routes() -> None:
    """The plugin's `LIMITS` names every event it runs the hook for (a `runHook` of an
    event without a limit would wait forever); each is routed by `clients.opencode`."""
    template = Path(opencode_plugin.CLONE_TEMPLATE).read_text(encoding="utf-8")
    block = template.split("const LIMITS = {", 1)[1].split("};", 1)[0]
    limits = set(re.findall(r'^\s*"?([a-z.]+)"?:', block, re.M))
    run = set(re.findall(r'runHook\(\s*"([a-z.]+)"', template))
    run |= set(re.findall(r'\? "(subagent\.idle)" :', template))
    assert limits == set(client_table.module("opencode").EVENTS)
    assert run <= limits and len(run) >= 5


def test_modules_keep_their_own_tables() -> None:
    """Each client's table names only events its client has (a typo here is a hook that
    never fires)."""
    assert [e for e, _, _ in codex_config.HOOKS][:3] == [
        "SessionStart",
        "PreToolUse",
        "PostToolUse",
    ]
    assert gemini_settings.EVENTS[:3] == ("SessionStart", "BeforeTool", "AfterTool")
    assert qwen_settings.EVENTS[:3] == ("SessionStart", "PreToolUse", "PostToolUse")
    pre = dict((e, m) for e, m, _ in qwen_settings.HOOKS)["PreToolUse"]
    assert pre is not None and set(pre.split("|")) == {
        "write_file",
        "edit",
        "notebook_edit",
        "run_shell_command",
    }
