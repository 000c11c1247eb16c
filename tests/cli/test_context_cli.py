"""`agent-hooks context add | find | list | rm` through click's CliRunner, with HOME,
AGENT_NAME, the project and the clock given by `Env`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_harness import AGENT, NOW, Cli
from click.testing import Result

from agent_hooks.cli import context, workspace
from agent_hooks.workspaces import workspace_store


@pytest.fixture
def cli(home: Path, project: Path) -> Cli:
    runner = Cli(home, project, context, workspace)
    runner.begin("conv-1")
    return runner


def error_of(result: Result) -> str:
    assert result.exit_code == 1, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    return lines[0]


def test_add_writes_the_template_and_prints_the_path(cli: Cli) -> None:
    result = cli.ok(
        "context",
        "add",
        "User Auth",
        "--category",
        "features",
        "--keywords",
        "authentication,Login",
        "--for",
        "@subagents/core/task-manager",
        "--summary",
        "Build the login flow.",
        "--constraints",
        "No new deps.",
    )
    path = Path(result.stdout.strip())
    ws_dir = path.parents[1]
    assert path.parent.name == "features" and path.name == "user-auth-context.md"
    assert ws_dir.parent == cli.project / ".tmp" / "sessions"
    text = path.read_text()
    assert text.startswith(
        f"# Context: User Auth\nSession: {ws_dir.name}\n\n## Request Summary\n"
        "Build the login flow.\n"
    )
    assert "## Background\n" in text and "## Expected Output\n" in text
    assert text.endswith("## Constraints\nNo new deps.\n")
    manifest = json.loads((ws_dir / ".manifest.json").read_text())
    assert (
        manifest["context_files"]["features/user-auth-context.md"]["for"]
        == "@subagents/core/task-manager"
    )
    assert manifest["context_files"]["features/user-auth-context.md"]["keywords"] == [
        "authentication",
        "login",
        "user-auth",
        "features",
    ]
    assert manifest["context_index"]["login"] == ["features/user-auth-context.md"]
    doc = json.loads((cli.home / ".claude" / f"state-{AGENT}.json").read_text())
    assert doc["workspace"] == {"id": ws_dir.name, "path": str(ws_dir), "conversation_id": "conv-1"}


def test_add_reuses_the_workspace_and_takes_content_from_stdin_or_a_file(
    cli: Cli, tmp_path: Path
) -> None:
    first = Path(cli.ok("context", "add", "a", "-c", "code").stdout.strip())
    second = Path(
        cli.ok(
            "context", "add", "b", "-c", "tasks", "--file", "-", input="Step 1\nStep 2\n"
        ).stdout.strip()
    )
    assert first.parents[1] == second.parents[1]
    assert (
        second.read_text() == f"# Context: b\nSession: {second.parents[1].name}\n\nStep 1\nStep 2\n"
    )
    source = tmp_path / "ctx.md"
    source.write_text("# Context: Already Shaped\nSession: x\n\nbody\n")
    third = Path(
        cli.ok("context", "add", "c", "-c", "general", "--file", str(source)).stdout.strip()
    )
    assert third.read_text() == source.read_text()


def test_add_as_json(cli: Cli) -> None:
    data = json.loads(cli.ok("context", "add", "Api Docs", "-c", "documentation", "--json").output)
    assert data["relative"].startswith(".tmp/sessions/") and data["relative"].endswith(
        "/documentation/api-docs-context.md"
    )
    assert data["workspace_created"] is True and data["keywords"] == ["api-docs", "documentation"]
    again = json.loads(cli.ok("context", "add", "other", "-c", "code", "--json").output)
    assert again["workspace_created"] is False and again["workspace"] == data["workspace"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["context", "add", "x", "--category", "bogus"],
            "use one of: features, documentation, code",
        ),
        (["context", "add", "../..", "-c", "code"], "no letter or digit"),
        (["context", "add", "x", "-c", "code", "--for", "two\nlines"], "--for"),
        (
            ["context", "add", "x", "-c", "code", "--file", "/nonexistent/file"],
            "--file /nonexistent/file",
        ),
        (["context", "add", "x", "-c", "code", "--file", "-", "--summary", "s"], "--file replaces"),
    ],
)
def test_add_refuses_bad_input_in_one_line(cli: Cli, args: list[str], message: str) -> None:
    assert message in error_of(cli(*args))
    assert workspace_store.workspace_ids(str(cli.project)) == []  # checked before anything is made


def test_add_refuses_to_overwrite_without_replace(cli: Cli) -> None:
    path = Path(cli.ok("context", "add", "x", "-c", "code", "--summary", "one").stdout.strip())
    assert "--replace" in error_of(cli("context", "add", "x", "-c", "code", "--summary", "two"))
    assert "one" in path.read_text()
    cli.ok("context", "add", "x", "-c", "code", "--summary", "two", "--replace")
    assert "two" in path.read_text()


def test_find_and_delegate(cli: Cli) -> None:
    cli.ok("context", "add", "User Auth", "-c", "features", "-k", "login")
    cli.ok("context", "add", "User Auth Tasks", "-c", "tasks")
    cli.ok("context", "add", "Api Docs", "-c", "documentation")
    ws_id = workspace_store.workspace_ids(str(cli.project))[0]
    block = cli.ok("context", "find", "user-auth", "--delegate").output
    assert block == (
        "Related context available at:\n"
        f"- .tmp/sessions/{ws_id}/features/user-auth-context.md\n"
        f"- .tmp/sessions/{ws_id}/tasks/user-auth-tasks-context.md\n\n"
        "Read these files for full context on requirements and task breakdown.\n"
    )
    absolute = cli.ok("context", "find", "login", "--delegate", "--absolute").output
    assert f"- {cli.project}/.tmp/sessions/{ws_id}/features/user-auth-context.md\n" in absolute
    found = json.loads(cli.ok("context", "find", "auth", "login", "--json").output)
    assert [f["relative"].split("/", 3)[3] for f in found] == [
        "features/user-auth-context.md",
        "tasks/user-auth-tasks-context.md",
    ]
    assert [f["matched"] for f in found] == [2, 1]
    only = json.loads(cli.ok("context", "find", "--category", "documentation", "--json").output)
    assert [f["relative"].rsplit("/", 1)[1] for f in only] == ["api-docs-context.md"]
    assert cli.ok("context", "find", "nothing").output == "No context file matches.\n"
    assert "nothing to delegate" in error_of(cli("context", "find", "nothing", "--delegate"))
    assert "KEYWORD or --category" in error_of(cli("context", "find"))
    assert "use one of" in error_of(cli("context", "find", "x", "--category", "nope"))


def test_find_all_searches_every_live_workspace(cli: Cli) -> None:
    cli.ok("context", "add", "Payments", "-c", "features")
    cli.begin("conv-b", agent="proj__cc_2")
    cli.ok("context", "add", "Payments Tasks", "-c", "tasks", agent="proj__cc_2")
    mine = json.loads(cli.ok("context", "find", "payments", "--json").output)
    everyone = json.loads(cli.ok("context", "find", "payments", "--all", "--json").output)
    assert len(mine) == 1 and len(everyone) == 2
    assert len({f["workspace"] for f in everyone}) == 2
    stale = json.loads(
        cli.ok("context", "find", "payments", "--all", "--json", now=NOW + 2 * 86400).output
    )
    assert stale == []


def test_find_without_a_workspace_says_so(cli: Cli) -> None:
    assert "no workspace is bound" in error_of(cli("context", "find", "x"))
    assert "no workspace is bound" in error_of(cli("context", "list"))


def test_a_new_conversation_gets_a_new_workspace(cli: Cli) -> None:
    first = Path(cli.ok("context", "add", "x", "-c", "code").stdout.strip()).parents[1]
    cli.begin("conv-2")
    assert "no workspace is bound" in error_of(cli("context", "list"))
    second = Path(cli.ok("context", "add", "x", "-c", "code").stdout.strip()).parents[1]
    assert first != second and first.exists()


def test_list_and_rm(cli: Cli) -> None:
    a = Path(cli.ok("context", "add", "a", "-c", "code", "--for", "@coder").stdout.strip())
    b = Path(cli.ok("context", "add", "b", "-c", "code").stdout.strip())
    listed = cli.ok("context", "list").output.splitlines()
    assert len(listed) == 2 and "for @coder" in listed[0]
    cli.ok("context", "rm", "code/a-context.md")
    assert not a.exists() and b.exists()
    out = json.loads(cli.ok("context", "rm", str(b), "--json").output)
    assert out["file"] == "removed" and not b.exists()
    assert json.loads(cli.ok("context", "list", "--json").output) == []
    assert "not tracked" in error_of(cli("context", "rm", "code/a-context.md"))
    assert "not a context file inside a workspace" in error_of(cli("context", "rm", "/etc/passwd"))


def test_rm_refuses_another_agents_file(cli: Cli) -> None:
    cli.ok("context", "add", "mine", "-c", "code")
    cli.begin("conv-b", agent="proj__cc_2")
    theirs = Path(
        cli.ok("context", "add", "theirs", "-c", "code", agent="proj__cc_2").stdout.strip()
    )
    assert "not yours" in error_of(cli("context", "rm", str(theirs)))
    relative = str(theirs.relative_to(cli.project))
    assert "not yours" in error_of(cli("context", "rm", relative))
    assert theirs.exists()


def test_help_and_outside_a_project(cli: Cli, home: Path) -> None:
    for sub in ("add", "find", "list", "rm"):
        result = cli.ok("context", sub, "--help")
        assert "--json" in result.output
    result = cli("context", "list", "--project", "/nonexistent", env={"CLAUDE_PROJECT_DIR": ""})
    assert result.exit_code == 1 and "not a directory" in result.output


def test_list_gives_people_local_time_and_json_utc(cli: Cli, far_timezone: None) -> None:
    cli.ok("context", "add", "a", "-c", "code")
    [line] = cli.ok("context", "list").output.splitlines()
    assert "(created 2027-01-15 13:30 IST;" in line
    [entry] = json.loads(cli.ok("context", "list", "--json").output)
    assert entry["created"] == "2027-01-15T08:00:00Z"


def test_add_says_which_sections_still_hold_placeholders(cli: Cli) -> None:
    result = cli.ok("context", "add", "bare", "-c", "code")
    path = Path(result.stdout.strip())  # stdout stays the path alone
    assert path.is_file() and "[Brief description" in path.read_text()
    note = result.stderr.strip()
    assert note.startswith("note: the file is the template")
    for word in ("Request Summary", "Constraints", "--summary", "--constraints", "--replace"):
        assert word in note
    assert "edit the file" in note and "\n" not in note
    data = json.loads(
        cli.ok("context", "add", "half", "-c", "code", "--summary", "s", "--json").stdout
    )
    assert data["placeholders"] == ["Background", "Expected Output", "Constraints"]


def test_add_with_every_section_or_a_file_says_nothing_more(cli: Cli, tmp_path: Path) -> None:
    full = cli.ok(
        "context", "add", "full", "-c", "code", "--summary", "s", "--background", "b",
        "--expected", "e", "--constraints", "c",
    )  # fmt: skip
    assert full.stderr == ""
    body = tmp_path / "body.md"
    body.write_text("all of it\n")
    given = cli.ok("context", "add", "given", "-c", "code", "--file", str(body), "--json")
    assert given.stderr == "" and json.loads(given.stdout)["placeholders"] == []
