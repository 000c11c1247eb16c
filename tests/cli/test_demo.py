"""`agent-hooks demo`: two simulated agents drive the real hook entry points.

The command object is invoked directly (the group registers it via `register`).
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agent_hooks.cli import demo as demo_module
from agent_hooks.cli.demo import demo

LEASE_DENY = 'agent-hooks: src/app.py is being changed by agent "alice": it last wrote the file '
RESERVATION_DENY = (
    'agent-hooks: docs/guide.md is reserved by another agent: agent "bob" holds docs/** '
    "(exclusive, reason: demo-42, "
)


@pytest.fixture(autouse=True)
def isolated_user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """The user's own HOME and CLAUDE_CONFIG_DIR: the demo must leave them alone."""
    dirs = {"HOME": tmp_path / "user-home", "CLAUDE_CONFIG_DIR": tmp_path / "user-config"}
    for name, path in dirs.items():
        path.mkdir()
        monkeypatch.setenv(name, str(path))
    monkeypatch.setenv("AGENT_NAME", "the-user")
    monkeypatch.chdir(tmp_path)
    return dirs


def run_json(*args: str) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(demo, ["--json", *args])
    doc: dict[str, Any] = json.loads(result.stdout)
    return result.exit_code, doc


def test_demo_narrates_every_step_and_cleans_up(isolated_user: dict[str, Path]) -> None:
    result = CliRunner().invoke(demo, [])
    assert result.exit_code == 0, result.output
    out = result.stdout
    steps = re.findall(r"^Step (\d+)\. ", out, re.MULTILINE)
    assert steps == [str(n) for n in range(1, 12)]
    assert f"{sys.executable} -IS " in out and "hooks/entry.py <Event>" in out
    # the real SessionStart context, the real CLI output, the real deny messages
    assert '    | agent-hooks: you are agent "alice" in project ' in out
    # the automatic lease comes first, then the reservation
    lease, reserve = out.index(f"    | {LEASE_DENY}"), out.index(f"    | {RESERVATION_DENY}")
    assert lease < out.index("    $ AGENT_NAME=bob agent-hooks reserve 'docs/**' --reason demo-42")
    assert out.index("agent-hooks reserve") < reserve
    assert re.search(
        r"^    reserved docs/\*\* \(exclusive, id r-[0-9a-f]{8}, reason: demo-42, 60 min left\)$",
        out,
        re.MULTILINE,
    )
    assert "warning" not in out  # docs/** matches a file
    assert "    | - wait: a reservation ends when its holder releases it or is done" in out
    assert re.search(r"^    released docs/\*\* \(id r-[0-9a-f]{8}\)$", out, re.MULTILINE)
    # both trails, as the trail command prints them
    alice = out.index("$ AGENT_NAME=alice agent-hooks trail alice")
    bob = out.index("$ AGENT_NAME=bob agent-hooks trail bob")
    assert "created (0):\n    modified (1):\n      src/app.py\n    read (0):" in out[alice:bob]
    assert "created (0):\n    modified (1):\n      src/app.py\n    read (0):" in out[bob:]
    [base] = re.findall(r"The temporary directory (\S+) was removed", out)
    assert not Path(base).exists()
    assert all(not any(path.iterdir()) for path in isolated_user.values())


def test_demo_json_transcript() -> None:
    code, doc = run_json()
    assert code == 0 and doc["ok"] is True and doc["error"] is None
    assert doc["agents"] == ["alice", "bob"] and doc["kept"] is False
    assert not Path(doc["directory"]).exists()
    steps = doc["steps"]
    assert [s["step"] for s in steps] == list(range(1, 12))
    assert [(s["agent"], s["kind"], s.get("event") or s["command"][1]) for s in steps] == [
        ("alice", "hook", "SessionStart"),
        ("bob", "hook", "SessionStart"),
        ("alice", "hook", "PreToolUse"),
        ("bob", "hook", "PreToolUse"),
        ("bob", "cli", "reserve"),
        ("alice", "hook", "PreToolUse"),
        ("alice", "hook", "SessionEnd"),
        ("bob", "hook", "PreToolUse"),
        ("bob", "cli", "release"),
        ("alice", "cli", "trail"),
        ("bob", "cli", "trail"),
    ]
    writes = [(s["agent"], s["tool"], s["path"], s["decision"]) for s in steps if s.get("tool")]
    assert writes == [
        ("alice", "Write", "src/app.py", "allow"),
        ("bob", "Write", "src/app.py", "deny"),
        ("alice", "Write", "docs/guide.md", "deny"),
        ("bob", "Write", "src/app.py", "allow"),
    ]
    assert steps[3]["text"].startswith(LEASE_DENY)
    assert steps[5]["text"].startswith(RESERVATION_DENY)
    for denied in (steps[3], steps[5]):
        assert denied["output"]["hookSpecificOutput"]["permissionDecision"] == "deny"
        assert denied["output"]["hookSpecificOutput"]["permissionDecisionReason"] == denied["text"]
    assert steps[0]["output"]["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert steps[4]["command"] == ["agent-hooks", "reserve", "docs/**", "--reason", "demo-42"]
    assert "src/app.py" in steps[9]["text"] and "src/app.py" in steps[10]["text"]


def test_demo_keep_leaves_a_directory_to_inspect() -> None:
    code, doc = run_json("--keep")
    base = Path(doc["directory"])
    try:
        assert code == 0 and doc["kept"] is True and base.is_dir()
        project, state = Path(doc["project"]), Path(doc["home"]) / ".claude"
        assert (project / "src" / "app.py").read_text() == 'print("hello from bob")\n'
        assert not (project / "docs" / "guide.md").exists()  # refused
        alice = json.loads((state / "state-alice.json").read_text())
        bob = json.loads((state / "state-bob.json").read_text())
        assert alice["files_modified"] == [str(project / "src" / "app.py")]
        assert bob["files_modified"] == [str(project / "src" / "app.py")]
        assert bob["reservations"] == []  # released in step 9
        ledger = project / ".git" / "agent-hooks" / "reservations.json"
        assert json.loads(ledger.read_text())["reservations"] == []
        log = (state / "agent-hooks.log").read_text()
        assert "denied Write: agent-hooks: src/app.py is being changed by" in log
        assert "denied Write: agent-hooks: docs/guide.md is reserved" in log
    finally:
        shutil.rmtree(base, ignore_errors=True)
    result = CliRunner().invoke(demo, ["--keep"])
    kept = re.findall(r"^Kept (\S+)\. To look around:", result.stdout, re.MULTILINE)
    assert result.exit_code == 0 and len(kept) == 1 and Path(kept[0]).is_dir()
    assert "agent-hooks trail bob" in result.stdout
    shutil.rmtree(kept[0])


def test_demo_fails_loudly_when_the_hooks_do_not_enforce(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A broken install (here: a PreToolUse that allows everything) must not pass as a demo."""
    real = demo_module.find_entry()
    fake = tmp_path / "hooks" / "entry.py"
    fake.parent.mkdir()
    fake.write_text(
        "import sys, runpy\n"
        "if sys.argv[1:] == ['PreToolUse']:\n"
        "    sys.stdin.read()\n"
        "    sys.exit(0)\n"
        f"sys.argv[0] = {str(real)!r}\n"
        f"runpy.run_path({str(real)!r}, run_name='__main__')\n"
    )
    monkeypatch.setattr(demo_module, "find_entry", lambda: fake)
    code, doc = run_json()
    assert code == 1 and doc["ok"] is False
    assert doc["error"] == "bob's Write of src/app.py was allowed; it should be denied"
    assert len(doc["steps"]) == 4 and not Path(doc["directory"]).exists()
    result = CliRunner().invoke(demo, [])
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        "Error: demo step 4: bob's Write of src/app.py was allowed; "
        "it should be denied (run with --keep to inspect)"
    )


def test_entry_is_found_in_a_clone_or_beside_the_install_venv(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = Path(__file__).resolve().parents[2]
    assert demo_module.find_entry() == repo / "hooks" / "entry.py"
    # install.sh's layout: <data>/venv/lib/python3.X/site-packages/agent_hooks beside
    # <data>/hooks/entry.py
    data = tmp_path / "data"
    package = data / "venv" / "lib" / "python3.11" / "site-packages" / "agent_hooks"
    package.mkdir(parents=True)
    monkeypatch.setattr(demo_module.agent_hooks, "__file__", str(package / "__init__.py"))
    monkeypatch.setattr(demo_module.sys, "prefix", str(data / "venv"))
    with pytest.raises(Exception, match="cannot find the hook entry script"):
        demo_module.find_entry()
    (data / "hooks").mkdir()
    (data / "hooks" / "entry.py").write_text("")
    assert demo_module.find_entry() == data / "hooks" / "entry.py"


def test_demo_help() -> None:
    result = CliRunner().invoke(demo, ["--help"])
    assert result.exit_code == 0
    assert "no Claude Code needed" in result.stdout
    assert "--keep" in result.stdout and "--json" in result.stdout
