"""codex_config: agent-hooks' handlers in a Codex hooks.json, and their trust hashes in the
user's config.toml, put in and taken out again without touching anything else."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from agent_hooks.install import codex_config as cc
from agent_hooks.install import hooks_file

NOW = 1_800_000_000.0
OTHER_HOOK = {"type": "command", "command": "/usr/local/bin/other-guard --strict", "timeout": 5}
OTHER_GROUP = {"matcher": "Bash", "hooks": [OTHER_HOOK]}

# Hashes Codex 0.169.0 itself reported (`codex app-server` → `hooks/list` → `currentHash`) for
# these handlers: plain, matcher, explicit timeout, async, statusMessage, the SessionEnd and
# Interrupt defaults, and the clamps (SessionEnd/Interrupt at most 3 s, every timeout at least 1 s).
MEASURED: list[tuple[str, str, str | None, dict[str, Any], str]] = [
    (
        "plain",
        "Stop",
        None,
        {"type": "command", "command": "echo plain"},
        "a3084675476a8a8ef8d0bd5c04c31b5a45d59bb3f4569f4761463a67d803512e",
    ),
    (
        "matcher",
        "PreToolUse",
        "Bash",
        {"type": "command", "command": "echo a"},
        "e858b0fa107866bd5702cb2dffd866040cad81f83f76ff7697d1c7fad904b5e5",
    ),
    (
        "explicit timeout",
        "SessionEnd",
        None,
        {"type": "command", "command": "echo c", "timeout": 3},
        "42fe19e85c78f234129119c29b7eb341556fabd392cd90536d14c143b444821b",
    ),
    (
        "async",
        "PostToolUse",
        "Bash",
        {"type": "command", "command": "echo async", "timeout": 5, "async": True},
        "67f3fa5629ad5ca6be36fbe1576c72fd355bf9a0c7ebb7bae903f6af8aac5cf3",
    ),
    (
        "statusMessage",
        "SessionEnd",
        None,
        {"type": "command", "command": "echo d", "timeout": 3, "statusMessage": "hi"},
        "ed9a178310889316311bec1530fd4183520404a77e21a7471dcea301f22ebe2a",
    ),
    (
        "SessionEnd default 1 s",
        "SessionEnd",
        None,
        {"type": "command", "command": "echo b"},
        "dc094649cf4ebd5431512d1c0648346497f7e68e185e77ccf16b36a9587fb552",
    ),
    (
        "Interrupt default 1 s",
        "Interrupt",
        None,
        {"type": "command", "command": "echo int"},
        "6b89a2afec063e62643cbe5c88a99575a94d1cdc30dd20ee7ee13ad24d1fbbfe",
    ),
    (
        "SessionEnd 30 s clamped to 3",
        "SessionEnd",
        None,
        {"type": "command", "command": "echo b", "timeout": 30},
        "7fdcfde7cebf533caec0e61dd15d95edd097d182e378b222f3398ee015d76340",
    ),
    (
        "Interrupt 10 s clamped to 3",
        "Interrupt",
        None,
        {"type": "command", "command": "echo int10", "timeout": 10},
        "8d5bae5988e140c9359c8116f307240948740cb57f0e92f5509980a9da878c14",
    ),
    (
        "timeout 0 counts as 1",
        "Stop",
        None,
        {"type": "command", "command": "echo s", "timeout": 0},
        "599b9ea3b670d7a3ce7ef9558affd9831eb0fdbc3f6c898f1598ff8433bc9a28",
    ),
    (
        "non-ASCII, quotes and a control character",
        "PreToolUse",
        "Bash|apply_patch",
        {"type": "command", "command": 'echo ünï "q" \x1f'},
        "1e02964701c8bef888f15cf7fd9b3f7b80306e45a4fd1ca25d9c05201748e4d2",
    ),
]

# A config.toml with everything a text editor can trip over: comments, a multi-line string whose
# lines look like table headers, a nested array over several lines, an array of tables, another
# tool's trust entry and a trusted project.
USER_CONFIG = '''\
# my Codex settings
model = "o4"   # trailing comment
notify = ["notify-send", "Codex"]

instructions = """
[hooks.state."/fake/hooks.json:stop:0:0"]
trusted_hash = "sha256:not-a-table"
"""

matrix = [
  [1, 2]
]

[tui]
theme = 'dark'

[[mcp_servers_list]]
name = "one"

[hooks.state."/elsewhere/.codex/hooks.json:stop:0:0"]
trusted_hash = "sha256:0000000000000000000000000000000000000000000000000000000000000000"

[projects."/srv/repo"]
trust_level = "trusted"
'''


@pytest.fixture
def codex_home(tmp_path: Path) -> Path:
    home = tmp_path / "codex-home"
    home.mkdir()
    return home


@pytest.fixture
def entry(tmp_path: Path) -> str:
    path = tmp_path / "share" / "agent-hooks" / "hooks" / "entry.pyc"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"")
    return str(path)


PY = sys.executable


def hooks_json(codex_home: Path) -> Path:
    return Path(os.path.realpath(codex_home)) / "hooks.json"


def config_file(codex_home: Path) -> Path:
    return Path(os.path.realpath(codex_home)) / "config.toml"


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def state_of(codex_home: Path) -> dict[str, Any]:
    doc = tomllib.loads(config_file(codex_home).read_text(encoding="utf-8"))
    return cc.trust_state(doc)


def our_keys(codex_home: Path) -> dict[str, str]:
    """Trust key → hash for each of our handlers, computed from the hooks file on disk."""
    path = str(hooks_json(codex_home))
    return {p.key(path): p.hash() for p in cc.positions(read_json(Path(path))) if p.ours}


# --------------------------------------------------------------------------- hash and commands


@pytest.mark.parametrize(
    ("event", "matcher", "handler", "digest"),
    [case[1:] for case in MEASURED],
    ids=[case[0] for case in MEASURED],
)
def test_the_hash_is_the_one_codex_reports(
    event: str, matcher: str | None, handler: dict[str, Any], digest: str
) -> None:
    assert cc.handler_hash(event, matcher, handler) == f"sha256:{digest}"


@pytest.mark.parametrize(
    ("event", "snake"),
    [
        ("PreToolUse", "pre_tool_use"),
        ("SessionStart", "session_start"),
        ("SubagentStop", "subagent_stop"),
        ("Stop", "stop"),
        ("PreModelRequest", "pre_model_request"),
    ],
)
def test_event_names_in_keys_are_snake_case(event: str, snake: str) -> None:
    assert cc.event_snake(event) == snake
    assert cc.trust_key("/h/hooks.json", event, 2, 1) == f"/h/hooks.json:{snake}:2:1"


def test_the_block_has_one_group_per_event_with_our_matchers_and_timeouts() -> None:
    block = cc.hooks_block(cc.installed_command("/opt/py/bin/python", "/opt/ah/hooks/entry.pyc"))
    assert list(block) == [
        "SessionStart",
        "PreToolUse",
        "PostToolUse",
        "SubagentStart",
        "SubagentStop",
        "Stop",
        "SessionEnd",
    ]
    assert "matcher" not in block["SessionStart"][0]
    assert (
        block["PreToolUse"][0]["matcher"]
        == block["PostToolUse"][0]["matcher"]
        == ("Bash|apply_patch")
    )
    assert block["SessionEnd"][0]["hooks"][0]["timeout"] == 3
    for groups in block.values():
        (group,) = groups
        (handler,) = group["hooks"]
        assert handler["type"] == "command"
        assert 1 <= handler["timeout"] <= 30
    assert block["Stop"][0]["hooks"][0]["command"] == hooks_file.hook_command(
        "/opt/py/bin/python", "/opt/ah/hooks/entry.pyc", "codex", "Stop"
    )


@pytest.mark.parametrize(
    ("command", "ours"),
    [
        ('"/opt/py/bin/python" -IS "/opt/ah/hooks/entry.pyc" codex PreToolUse', True),
        ("/opt/py/bin/python -IS /opt/ah/hooks/entry.py codex Stop", True),
        ("'/opt/a b/python' -IS '/opt/a b/hooks/entry.pyc' codex SessionEnd", True),
        ('"/p/python" -IS "/p/hooks/entry.pyc" codex UserPromptSubmit', True),  # an older install
        # one rule for every client and event: a handler of ours put here by mistake, or of
        # an event dropped since, is taken out too
        ('"/p/python" -IS "/p/hooks/entry.pyc" PreToolUse', True),  # Claude Code's form
        ('"/p/python" -IS "/p/hooks/entry.pyc" gemini BeforeTool', True),
        ('"/p/python" -IS "/p/hooks/entry.pyc" codex NotAnEvent', True),
        (hooks_file.hook_command("/p/python", "/p/hooks/entry.pyc", "codex", "Stop"), True),
        ('"/p/python" -IS "/p/hooks/entry.pyc"', False),  # no event after it
        ('"/p/python" -IS "/p/my_entry.pyc" codex Stop', False),
        ("/usr/local/bin/other-guard --strict", False),
    ],
)
def test_ours_is_our_entry_script_run_for_codex(command: str, ours: bool) -> None:
    assert cc.is_ours({"type": "command", "command": command}) is ours


def test_the_command_runs_under_bash_with_odd_characters_in_the_paths(tmp_path: Path) -> None:
    odd = tmp_path / 'we ird $HOME `x` "q" \\ dir'
    (odd / "hooks").mkdir(parents=True)
    script = odd / "hooks" / "entry.py"
    script.write_text("import sys\nprint(sys.argv)\n", encoding="utf-8")
    command = cc.hook_command(sys.executable, str(script), "PreToolUse")
    assert cc.is_ours({"command": command})
    done = subprocess.run(
        ["/bin/bash", "-c", command], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == repr([str(script), "codex", "PreToolUse"])


# --------------------------------------------------------------------------- install / uninstall


def test_install_into_an_empty_home_trusts_exactly_our_handlers(
    codex_home: Path, entry: str
) -> None:
    outcome = cc.install(str(codex_home), PY, entry, now=NOW)
    assert outcome.hooks_changed and outcome.config_changed
    doc = read_json(hooks_json(codex_home))
    assert doc == {"hooks": cc.hooks_block(cc.installed_command(PY, entry))}
    expected = our_keys(codex_home)
    assert len(expected) == len(cc.HOOKS)
    assert {k: v["trusted_hash"] for k, v in state_of(codex_home).items()} == expected
    assert sorted(outcome.keys) == sorted(expected)
    assert f"{hooks_json(codex_home)}:pre_tool_use:0:0" in expected
    assert outcome.backups == []  # nothing existed to back up


def test_install_is_idempotent(codex_home: Path, entry: str) -> None:
    cc.install(str(codex_home), PY, entry, now=NOW)
    files = [hooks_json(codex_home), config_file(codex_home)]
    before = [(f.read_bytes(), f.stat().st_mtime_ns) for f in files]
    outcome = cc.install(str(codex_home), PY, entry, now=NOW + 1)
    assert not outcome.changed
    assert [(f.read_bytes(), f.stat().st_mtime_ns) for f in files] == before
    assert cc.backups(str(files[0])) == [] and cc.backups(str(files[1])) == []


def test_foreign_hooks_and_toml_survive_install_and_uninstall_byte_for_byte(
    codex_home: Path, entry: str
) -> None:
    foreign: dict[str, Any] = {
        "description": "team hooks",
        "hooks": {
            "PreToolUse": [OTHER_GROUP],
            "Stop": [{"hooks": [OTHER_HOOK, {"type": "command", "command": "say done"}]}],
            "Notification": [{"hooks": [OTHER_HOOK]}],
        },
    }
    original = json.dumps(foreign, indent=4, sort_keys=True)  # not how we would write it
    hooks_json(codex_home).write_text(original, encoding="utf-8")
    config_file(codex_home).write_text(USER_CONFIG, encoding="utf-8")

    cc.install(str(codex_home), PY, entry, now=NOW)
    text = config_file(codex_home).read_text(encoding="utf-8")
    assert text.startswith(USER_CONFIG)  # ours only appended
    doc = read_json(hooks_json(codex_home))
    assert doc["description"] == "team hooks"
    assert doc["hooks"]["PreToolUse"][0] == OTHER_GROUP
    assert doc["hooks"]["Notification"] == foreign["hooks"]["Notification"]
    assert doc["hooks"]["Stop"][0] == foreign["hooks"]["Stop"][0]

    outcome = cc.uninstall(str(codex_home), now=NOW + 1)
    assert outcome.changed and not outcome.renamed
    assert config_file(codex_home).read_text(encoding="utf-8") == USER_CONFIG
    assert hooks_json(codex_home).read_text(encoding="utf-8") == original


def test_other_tools_groups_before_ours_shift_our_index(codex_home: Path, entry: str) -> None:
    hooks_json(codex_home).write_text(
        json.dumps({"hooks": {"PreToolUse": [OTHER_GROUP, OTHER_GROUP]}}), encoding="utf-8"
    )
    cc.install(str(codex_home), PY, entry, now=NOW)
    path = hooks_json(codex_home)
    state = state_of(codex_home)
    assert f"{path}:pre_tool_use:2:0" in state
    assert f"{path}:pre_tool_use:0:0" not in state  # the other tool's handlers: not ours to trust
    assert f"{path}:post_tool_use:0:0" in state


def test_removing_ours_before_a_foreign_handler_moves_its_trust_along(
    codex_home: Path, entry: str
) -> None:
    cc.install(str(codex_home), PY, entry, now=NOW)
    path = hooks_json(codex_home)
    doc = read_json(path)
    doc["hooks"]["Stop"].append({"hooks": [OTHER_HOOK]})  # another tool installs after us
    path.write_text(json.dumps(doc), encoding="utf-8")
    theirs = cc.handler_hash("Stop", None, OTHER_HOOK)
    with config_file(codex_home).open("a", encoding="utf-8") as handle:
        handle.write(f'\n[hooks.state."{path}:stop:1:0"]\ntrusted_hash = "{theirs}"\n')

    outcome = cc.uninstall(str(codex_home), now=NOW + 1)

    assert outcome.renamed == {f"{path}:stop:1:0": f"{path}:stop:0:0"}
    assert read_json(path) == {"hooks": {"Stop": [{"hooks": [OTHER_HOOK]}]}}
    assert state_of(codex_home) == {f"{path}:stop:0:0": {"trusted_hash": theirs}}


def test_reinstall_with_another_interpreter_rewrites_our_hashes_only(
    codex_home: Path, entry: str, tmp_path: Path
) -> None:
    config_file(codex_home).write_text(USER_CONFIG, encoding="utf-8")
    cc.install(str(codex_home), PY, entry, now=NOW)
    first = our_keys(codex_home)
    other_python = tmp_path / "venv2" / "bin" / "python"
    other_python.parent.mkdir(parents=True)
    other_python.symlink_to(sys.executable)

    outcome = cc.install(str(codex_home), str(other_python), entry, now=NOW + 1)

    second = our_keys(codex_home)
    assert outcome.changed and set(first) == set(second)
    assert all(first[k] != second[k] for k in first)
    state = state_of(codex_home)
    assert {k: state[k]["trusted_hash"] for k in second} == second
    text = config_file(codex_home).read_text(encoding="utf-8")
    assert text.startswith(USER_CONFIG)
    # ours replaced in place, not added (+2: the foreign table and the look-alike in a string)
    assert text.count("[hooks.state.") == len(second) + 2
    assert len(cc.backups(str(config_file(codex_home)))) == 1  # the newest backup only


def test_ours_in_a_users_group_is_moved_out_and_the_users_handler_keeps_its_trust(
    codex_home: Path, entry: str
) -> None:
    ours = {"type": "command", "command": cc.hook_command(PY, entry, "Stop"), "timeout": 10}
    path = hooks_json(codex_home)
    path.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [ours, OTHER_HOOK]}]}}))
    theirs = cc.handler_hash("Stop", None, OTHER_HOOK)
    config_file(codex_home).write_text(
        f'[hooks.state."{path}:stop:0:1"]\ntrusted_hash = "{theirs}"\n', encoding="utf-8"
    )

    cc.install(str(codex_home), PY, entry, now=NOW)

    doc = read_json(path)
    assert doc["hooks"]["Stop"][0] == {"hooks": [OTHER_HOOK]}
    state = state_of(codex_home)
    assert state[f"{path}:stop:0:0"] == {"trusted_hash": theirs}
    assert state[f"{path}:stop:1:0"]["trusted_hash"] == our_keys(codex_home)[f"{path}:stop:1:0"]
    assert f"{path}:stop:0:1" not in state


def test_a_handler_of_an_event_we_no_longer_install_goes_with_its_trust(
    codex_home: Path, entry: str
) -> None:
    path = hooks_json(codex_home)
    old = {"type": "command", "command": cc.hook_command(PY, entry, "UserPromptSubmit")}
    path.write_text(json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [old]}]}}))
    digest = cc.handler_hash("UserPromptSubmit", None, old)
    config_file(codex_home).write_text(
        f'[hooks.state."{path}:user_prompt_submit:0:0"]\ntrusted_hash = "{digest}"\n'
    )
    cc.install(str(codex_home), PY, entry, now=NOW)
    assert "UserPromptSubmit" not in read_json(path)["hooks"]
    assert f"{path}:user_prompt_submit:0:0" not in state_of(codex_home)


def test_uninstall_removes_a_hooks_file_left_empty_and_is_then_a_no_op(
    codex_home: Path, entry: str
) -> None:
    config_file(codex_home).write_text(USER_CONFIG, encoding="utf-8")
    cc.install(str(codex_home), PY, entry, now=NOW)
    outcome = cc.uninstall(str(codex_home), now=NOW + 1)
    assert outcome.hooks_removed and not hooks_json(codex_home).exists()
    assert config_file(codex_home).read_text(encoding="utf-8") == USER_CONFIG
    again = cc.uninstall(str(codex_home), now=NOW + 2)
    assert not again.changed


def test_extra_keys_of_our_trust_table_survive_a_reinstall(codex_home: Path, entry: str) -> None:
    cc.install(str(codex_home), PY, entry, now=NOW)
    path = config_file(codex_home)
    key = f"{hooks_json(codex_home)}:stop:0:0"
    text = path.read_text(encoding="utf-8")
    header = f'[hooks.state."{key}"]\n'
    path.write_text(
        text.replace(header, header + "enabled = false  # the user switched it off\n"),
        encoding="utf-8",
    )
    text = path.read_text(encoding="utf-8").replace("sha256:", "sha256:0", 1)  # stale hash
    path.write_text(text, encoding="utf-8")

    cc.install(str(codex_home), PY, entry, now=NOW + 1)

    assert state_of(codex_home)[key]["enabled"] is False
    assert cc.trust_status(str(codex_home)).ok


def test_entries_codex_itself_wrote_are_edited_in_place(codex_home: Path, entry: str) -> None:
    """Codex's own writer (app-server `config/value/write`) puts an empty `[hooks.state]` header
    before the keyed tables; ours are recognised there and the header stays."""
    cc.install(str(codex_home), PY, entry, now=NOW)
    keys = our_keys(codex_home)
    lines = ["# my config", 'model = "o4"', "", "[hooks.state]", ""]
    for key in keys:
        lines += [f'[hooks.state."{key}"]', 'trusted_hash = "sha256:stale"', ""]
    codex_written = "\n".join(lines)
    config_file(codex_home).write_text(codex_written, encoding="utf-8")

    cc.install(str(codex_home), PY, entry, now=NOW + 1)
    assert cc.trust_status(str(codex_home)).ok
    assert config_file(codex_home).read_text(encoding="utf-8") == codex_written.replace(
        "sha256:stale", "{}"
    ).format(*keys.values())

    cc.uninstall(str(codex_home), now=NOW + 2)
    assert (
        config_file(codex_home)
        .read_text(encoding="utf-8")
        .startswith('# my config\nmodel = "o4"\n\n[hooks.state]\n')
    )
    assert state_of(codex_home) == {}


def test_a_crlf_config_keeps_its_line_ends(codex_home: Path, entry: str) -> None:
    original = USER_CONFIG.replace("\n", "\r\n")
    config_file(codex_home).write_bytes(original.encode())
    cc.install(str(codex_home), PY, entry, now=NOW)
    data = config_file(codex_home).read_bytes()
    assert data.startswith(original.encode()) and b"\n" not in data.replace(b"\r\n", b"")
    cc.uninstall(str(codex_home), now=NOW + 1)
    assert config_file(codex_home).read_bytes() == original.encode()


def test_a_config_without_a_final_newline_gets_one_before_our_tables(
    codex_home: Path, entry: str
) -> None:
    config_file(codex_home).write_text('model = "o4"', encoding="utf-8")
    cc.install(str(codex_home), PY, entry, now=NOW)
    assert config_file(codex_home).read_text(encoding="utf-8").startswith('model = "o4"\n\n[')
    assert len(state_of(codex_home)) == len(cc.HOOKS)


# --------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    "content",
    [
        "model = \n",
        "[tui]\ntheme = 1\n[tui]\n",
        'hooks = "not a table"\n',
        "[hooks]\nstate = 3\n",
        "projects = 1\n",
    ],
)
def test_a_config_that_does_not_parse_is_refused_and_left_alone(
    codex_home: Path, entry: str, content: str
) -> None:
    config_file(codex_home).write_text(content, encoding="utf-8")
    with pytest.raises(ValueError) as caught:
        cc.install(str(codex_home), PY, entry, now=NOW)
    assert "\n" not in str(caught.value)
    assert "nothing was changed" in str(caught.value)
    assert config_file(codex_home).read_text(encoding="utf-8") == content
    assert not hooks_json(codex_home).exists()


@pytest.mark.parametrize(
    "content",
    ["{not json", "[]", '{"hooks": []}', '{"hooks": {"Stop": {}}}', b"\xff\xfe{}"],
)
def test_a_hooks_file_that_does_not_parse_is_refused_and_left_alone(
    codex_home: Path, entry: str, content: str | bytes
) -> None:
    data = content if isinstance(content, bytes) else content.encode()
    hooks_json(codex_home).write_bytes(data)
    config_file(codex_home).write_text(USER_CONFIG, encoding="utf-8")
    for action in (
        lambda: cc.install(str(codex_home), PY, entry, now=NOW),
        lambda: cc.uninstall(str(codex_home), now=NOW),
        lambda: cc.trust_status(str(codex_home)),
    ):
        with pytest.raises(ValueError) as caught:
            action()
        assert "\n" not in str(caught.value)
    assert hooks_json(codex_home).read_bytes() == data
    assert config_file(codex_home).read_text(encoding="utf-8") == USER_CONFIG


@pytest.mark.parametrize(
    "form",
    [
        '[hooks]\nstate = {{ "{key}" = {{ trusted_hash = "sha256:x" }} }}\n',  # an inline table
        'hooks.state."{key}".trusted_hash = "sha256:x"\n',  # dotted keys
    ],
)
def test_our_trust_entry_in_another_form_is_edited_where_it_is(
    codex_home: Path, entry: str, form: str
) -> None:
    """tomlkit edits an entry wherever and however it is written (the hand-written editor
    refused these); the result is still checked against the intended document."""
    cc.install(str(codex_home), PY, entry, now=NOW)
    key = next(iter(our_keys(codex_home)))
    text = "# mine\n" + form.format(key=key) + 'model = "o4"\n'
    config_file(codex_home).write_text(text, encoding="utf-8")
    cc.install(str(codex_home), PY, entry, now=NOW + 1)
    assert cc.trust_status(str(codex_home)).ok
    edited = config_file(codex_home).read_text(encoding="utf-8")
    assert edited.startswith("# mine\n") and 'model = "o4"' in edited
    assert "sha256:x" not in edited


def test_a_trust_entry_that_is_not_a_table_is_refused(codex_home: Path, entry: str) -> None:
    cc.install(str(codex_home), PY, entry, now=NOW)
    key = next(iter(our_keys(codex_home)))
    text = f'[hooks.state]\n"{key}" = "sha256:x"\n'
    config_file(codex_home).write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match="edit it by hand"):
        cc.install(str(codex_home), PY, entry, now=NOW + 1)
    assert config_file(codex_home).read_text(encoding="utf-8") == text


@pytest.mark.parametrize(
    ("python", "entry_name", "message"),
    [
        ("python3", "hooks/entry.pyc", "--python must be an absolute path"),
        ("/nonexistent/python", "hooks/entry.pyc", "is not an executable file"),
        (sys.executable, "hooks/hook.py", "must end in /hooks/entry.py"),
        (sys.executable, "missing/hooks/entry.py", "does not exist"),
    ],
)
def test_bad_paths_are_refused(
    codex_home: Path, tmp_path: Path, python: str, entry_name: str, message: str
) -> None:
    target = tmp_path / "hooks" / "hook.py"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("")
    (tmp_path / "hooks" / "entry.pyc").write_bytes(b"")
    with pytest.raises(ValueError, match=message):
        cc.install(str(codex_home), python, str(tmp_path / entry_name))
    assert list(codex_home.iterdir()) == []


# --------------------------------------------------------------------------- projects


def test_project_hooks_go_to_the_project_and_trust_to_the_user_config(
    codex_home: Path, entry: str, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "sub").mkdir()
    link = tmp_path / "repo-link"
    link.symlink_to(repo)

    outcome = cc.install(str(codex_home), PY, entry, project=str(link / "sub"), now=NOW)

    path = repo / "sub" / ".codex" / "hooks.json"  # resolved, as Codex keys it
    assert outcome.hooks_path == str(path) and path.exists()
    assert not hooks_json(codex_home).exists()
    assert all(k.startswith(f"{path}:") for k in state_of(codex_home))
    assert outcome.project_root == str(repo) and outcome.project_trusted is False
    (advice,) = outcome.advice
    assert f'[projects."{repo}"] trust_level = "trusted"' in advice
    assert "codex exec --trust" in advice
    doc = tomllib.loads(config_file(codex_home).read_text(encoding="utf-8"))
    assert "projects" not in doc  # never trusted on the user's behalf unasked
    status = cc.trust_status(str(codex_home), project=str(repo / "sub"))
    assert all(h.status == "trusted" for h in status.handlers) and not status.ok

    outcome = cc.install(
        str(codex_home), PY, entry, project=str(repo / "sub"), trust_project=True, now=NOW + 1
    )
    assert outcome.advice == []
    doc = tomllib.loads(config_file(codex_home).read_text(encoding="utf-8"))
    assert doc["projects"] == {str(repo): {"trust_level": "trusted"}}
    assert cc.trust_status(str(codex_home), project=str(repo / "sub")).ok

    cc.uninstall(str(codex_home), project=str(repo / "sub"), now=NOW + 2)
    assert not path.exists()  # it held only ours
    doc = tomllib.loads(config_file(codex_home).read_text(encoding="utf-8"))
    assert doc == {"projects": {str(repo): {"trust_level": "trusted"}}}  # the user's call now


def test_a_project_marked_untrusted_is_not_overruled(
    codex_home: Path, entry: str, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    content = f'[projects."{repo}"]\ntrust_level = "untrusted"\n'
    config_file(codex_home).write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match="change it by hand"):
        cc.install(str(codex_home), PY, entry, project=str(repo), trust_project=True, now=NOW)
    assert config_file(codex_home).read_text(encoding="utf-8") == content
    assert not (repo / ".codex").exists()


def test_the_project_root_of_a_linked_worktree_is_the_main_one(tmp_path: Path) -> None:
    main = tmp_path / "main"
    (main / ".git" / "worktrees" / "feature").mkdir(parents=True)
    feature = tmp_path / "feature"
    (feature / "deep").mkdir(parents=True)
    (feature / ".git").write_text(f"gitdir: {main}/.git/worktrees/feature\n")
    plain = tmp_path / "plain"
    plain.mkdir()
    assert cc.project_root(str(feature / "deep")) == str(main)
    assert cc.project_root(str(main)) == str(main)
    assert cc.project_root(str(plain)) == str(plain)


# --------------------------------------------------------------------------- status


def test_status_tells_trusted_modified_missing_and_not_installed(
    codex_home: Path, entry: str
) -> None:
    report = cc.trust_status(str(codex_home))
    assert {h.status for h in report.handlers} == {"not installed"} and not report.ok
    cc.install(str(codex_home), PY, entry, now=NOW)
    assert cc.trust_status(str(codex_home)).ok

    keys = list(our_keys(codex_home))
    text = config_file(codex_home).read_text(encoding="utf-8")
    tampered = text.replace(
        f'[hooks.state."{keys[0]}"]\ntrusted_hash = "sha256:',
        f'[hooks.state."{keys[0]}"]\ntrusted_hash = "sha256:0',
    )
    block = f'[hooks.state."{keys[1]}"]\ntrusted_hash = "{our_keys(codex_home)[keys[1]]}"\n'
    tampered = tampered.replace(block, "")
    config_file(codex_home).write_text(tampered, encoding="utf-8")

    by_key = {h.key: h for h in cc.trust_status(str(codex_home)).handlers}
    assert by_key[keys[0]].status == "modified"
    assert by_key[keys[0]].stored_hash != by_key[keys[0]].current_hash
    assert by_key[keys[1]].status == "missing"
    assert {h.status for k, h in by_key.items() if k not in keys[:2]} == {"trusted"}


# --------------------------------------------------------------------------- command line


def run_main(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cc.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_command_line_installs_reports_and_uninstalls(
    codex_home: Path, entry: str, capsys: pytest.CaptureFixture[str]
) -> None:
    home = ["--codex-home", str(codex_home)]
    code, out, _ = run_main(capsys, "status", *home)
    assert code == 3 and "not installed" in out
    code, out, err = run_main(capsys, "install", *home, "--python", PY, "--entry", entry)
    assert (code, err) == (0, "") and "agent-hooks installed for Codex" in out
    code, out, _ = run_main(capsys, "install", *home, "--python", PY, "--entry", entry)
    assert code == 0 and "already up to date" in out
    code, out, _ = run_main(capsys, "status", *home)
    assert code == 0 and out.count("  trusted ") == len(cc.HOOKS)
    code, out, _ = run_main(capsys, "uninstall", *home)
    assert code == 0 and "removed" in out
    code, out, _ = run_main(capsys, "uninstall", *home)
    assert code == 0 and "already without agent-hooks" in out


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (["install"], 2),
        (["install", "--python", "/x/python"], 2),
        (["frobnicate"], 2),
        (["status", "--trust-project"], 2),
        (["install", "--python", "python", "--entry", "/x/hooks/entry.py"], 1),
        (["status", "--project", "/nonexistent/dir"], 1),
    ],
)
def test_bad_command_lines_get_one_line_and_a_non_zero_exit(
    codex_home: Path, capsys: pytest.CaptureFixture[str], argv: list[str], code: int
) -> None:
    try:
        actual = cc.main([*argv, "--codex-home", str(codex_home)])
    except SystemExit as exc:  # argparse's usage errors
        actual = exc.code  # type: ignore[assignment]
    out, err = capsys.readouterr()
    assert actual == code and out == ""
    assert err.startswith("agent-hooks: ") and err.count("\n") == 1


def test_a_bad_config_on_the_command_line_is_one_line(
    codex_home: Path, entry: str, capsys: pytest.CaptureFixture[str]
) -> None:
    config_file(codex_home).write_text("model = = 1\n", encoding="utf-8")
    code, out, err = run_main(
        capsys, "install", "--codex-home", str(codex_home), "--python", PY, "--entry", entry
    )
    assert code == 1 and out == "" and err.count("\n") == 1
    assert "is not valid TOML" in err


# --------------------------------------------------------------------------- keys tomlkit quotes


def test_trust_keys_with_odd_characters_round_trip(tmp_path: Path, entry: str) -> None:
    """A CODEX_HOME whose path holds quotes, a backslash, `#`, `=` and non-ASCII: the keys
    tomlkit writes parse back to the paths Codex names (tomllib reads them)."""
    home = tmp_path / 'co "dex" \\ #=é'
    home.mkdir()
    cc.install(str(home), PY, entry, now=NOW)
    state = cc.trust_state(tomllib.loads(config_file(home).read_text(encoding="utf-8")))
    path = cc.hooks_path(str(home))
    assert set(state) == {f"{path}:{cc.event_snake(e)}:0:0" for e, _, _ in cc.HOOKS}
    assert cc.trust_status(str(home)).ok
    cc.uninstall(str(home), now=NOW + 1)
    assert not config_file(home).exists() or not cc.trust_state(
        tomllib.loads(config_file(home).read_text(encoding="utf-8"))
    )


def test_without_tomlkit_uninstall_still_takes_the_handlers_out(
    codex_home: Path, entry: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An uninstall run by an interpreter without tomlkit (the venv gone): hooks.json loses
    our handlers; config.toml is left as it is, and the outcome says so in one line."""
    config_file(codex_home).write_text(USER_CONFIG, encoding="utf-8")
    cc.install(str(codex_home), PY, entry, now=NOW)
    before = config_file(codex_home).read_text(encoding="utf-8")
    monkeypatch.setitem(sys.modules, "tomlkit", None)  # `import tomlkit` raises ImportError
    outcome = cc.uninstall(str(codex_home), now=NOW + 1)
    assert not hooks_json(codex_home).exists()
    assert config_file(codex_home).read_text(encoding="utf-8") == before
    (note,) = outcome.advice
    assert "tomlkit" in note and "\n" not in note


def test_a_symlinked_config_is_written_through(
    codex_home: Path, entry: str, tmp_path: Path
) -> None:
    dotfiles = tmp_path / "dotfiles" / "codex.toml"
    dotfiles.parent.mkdir()
    dotfiles.write_text(USER_CONFIG, encoding="utf-8")
    config_file(codex_home).symlink_to(dotfiles)
    cc.install(str(codex_home), PY, entry, now=NOW)
    assert config_file(codex_home).is_symlink()
    assert dotfiles.read_text(encoding="utf-8").startswith(USER_CONFIG)
    cc.uninstall(str(codex_home), now=NOW + 1)
    assert (
        dotfiles.read_text(encoding="utf-8") == USER_CONFIG and config_file(codex_home).is_symlink()
    )


def test_a_crlf_config_keeps_its_line_ends_where_tomlkit_rewrites_a_table(
    codex_home: Path, entry: str
) -> None:
    """A foreign handler's trust moves to its new position: tomlkit writes that table's
    header anew, with the file's own line ends."""
    cc.install(str(codex_home), PY, entry, now=NOW)
    path = hooks_json(codex_home)
    doc = read_json(path)
    doc["hooks"]["Stop"].append({"hooks": [OTHER_HOOK]})
    path.write_text(json.dumps(doc), encoding="utf-8")
    theirs = cc.handler_hash("Stop", None, OTHER_HOOK)
    config = config_file(codex_home)
    text = (
        config.read_text(encoding="utf-8")
        + f'\n[hooks.state."{path}:stop:1:0"]\n# theirs\ntrusted_hash = "{theirs}"\n'
    )
    config.write_bytes(text.replace("\n", "\r\n").encode())
    outcome = cc.uninstall(str(codex_home), now=NOW + 1)
    assert outcome.renamed == {f"{path}:stop:1:0": f"{path}:stop:0:0"}
    data = config.read_bytes()
    assert b"\n" not in data.replace(b"\r\n", b""), data
    assert b"# theirs\r\n" in data
    assert state_of(codex_home) == {f"{path}:stop:0:0": {"trusted_hash": theirs}}


def test_an_edit_that_does_not_parse_to_the_intended_document_writes_nothing(
    codex_home: Path, entry: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The re-parse check: whatever tomlkit made is compared with what was meant."""
    config_file(codex_home).write_text(USER_CONFIG, encoding="utf-8")
    monkeypatch.setattr(cc, "_intended", lambda doc, plan, delete: {**doc, "model": "other"})
    with pytest.raises(ValueError, match="could not edit its trust entries safely"):
        cc.install(str(codex_home), PY, entry, now=NOW)
    assert config_file(codex_home).read_text(encoding="utf-8") == USER_CONFIG
    assert not hooks_json(codex_home).exists()


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_the_users_config_comes_back_byte_for_byte_after_interleaved_installs(
    codex_home: Path, entry: str, tmp_path: Path, newline: str
) -> None:
    """User level and a project share config.toml: installs and uninstalls of the two in any
    order leave the user's bytes exactly (no blank line of ours left where a table was)."""
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    original = USER_CONFIG.replace("\n", newline)
    config_file(codex_home).write_bytes(original.encode())
    cc.install(str(codex_home), PY, entry, now=NOW)
    cc.install(str(codex_home), PY, entry, project=str(project), now=NOW + 1)
    cc.uninstall(str(codex_home), project=str(project), now=NOW + 2)
    cc.install(str(codex_home), PY, entry, project=str(project), now=NOW + 3)
    cc.uninstall(str(codex_home), now=NOW + 4)
    assert state_of(codex_home) and not any(str(codex_home) in k for k in state_of(codex_home))
    cc.uninstall(str(codex_home), project=str(project), now=NOW + 5)
    assert config_file(codex_home).read_bytes() == original.encode()
