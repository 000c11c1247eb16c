"""Every held change can be brought back (issue 34), with real processes: the real
entry script with payloads on stdin, HOME in a temp dir, a real git repository, and
the real `agent-hooks restore` run as the holder's shell would run it. For each way a
held file changes unseen — a `python3 -c` write, a removal, git run from a script, a
formatter, another client's shell — the holder is told who and when, that its
version is kept, and the commands that show and undo the change; it runs them and
gets its exact last bytes and mode back. Then: a 1 MiB file, a restore refused over
another live holder, the undo of a restore, `--from` by a person, and nothing said
at the holder's next hook about its own restore."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from git_repo import git, init
from hook_runner import HookRunner, context_of

ME, OTHER, CODEX = "proj__cc_1", "proj__cc_2", "proj__cod_1"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return Path(os.path.realpath(init(tmp_path / "repo")))


@pytest.fixture
def run(home: Path, repo: Path) -> HookRunner:
    return HookRunner(home, repo)


def edit(run: HookRunner, rel: str, data: bytes, mode: int = 0o644, agent: str = ME) -> None:
    """A Write as Claude Code runs it: PreToolUse (the lease), the write, PostToolUse."""
    path = run.project / rel
    text = data.decode("utf-8", "replace")
    pre = run.payload("PreToolUse_Write", tool_input={"file_path": str(path), "content": text})
    allowed = run("PreToolUse", pre, agent=agent).out  # None, or a note with an allow
    assert allowed is None or allowed["hookSpecificOutput"]["permissionDecision"] == "allow"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    path.chmod(mode)
    post = run.payload("PostToolUse_Write", tool_input={"file_path": str(path), "content": text})
    result = run("PostToolUse", post, agent=agent)
    assert result.code == 0 and not [line for line in result.logged if "not kept" in line]


def next_call(run: HookRunner, agent: str = ME) -> str:
    """The holder's next tool call (a Read's PostToolUse): what it is told."""
    (run.project / "notes.md").touch()
    payload = run.payload(
        "PostToolUse_Read", tool_input={"file_path": str(run.project / "notes.md")}
    )
    result = run("PostToolUse", payload, agent=agent)
    return context_of(result, "PostToolUse") if result.out else ""


def shell(run: HookRunner, command: str) -> subprocess.CompletedProcess[str]:
    """What the holder's Bash tool runs: a shell in the project, the agent's env."""
    env = run.env(ME)
    env["PATH"] = f"{Path(sys.executable).parent}:{env['PATH']}"
    return subprocess.run(
        ["sh", "-c", command], cwd=run.project, env=env, capture_output=True, text=True, timeout=60
    )


def commands(told: str) -> tuple[str, str]:
    """The two commands the notice names: (the difference, the way back)."""
    quoted = [part for i, part in enumerate(told.split("`")) if i % 2]
    diff = next(c for c in quoted if c.startswith("agent-hooks restore") and c.endswith("--diff"))
    back = next(c for c in quoted if c.startswith("agent-hooks restore") and c != diff)
    return diff, back


def told_and_restored(run: HookRunner, rel: str, by: str = "someone else") -> str:
    """The holder hears of the change with the commands, runs them, and its file is back."""
    told = next_call(run)
    assert f"{rel}, which you are changing, was changed by {by}" in told, told
    assert "Your last version of it is kept" in told
    assert "Restore only work that was lost" in told and "without asking the user" in told
    diff, back = commands(told)
    assert (diff, back) == (f"agent-hooks restore {rel} --diff", f"agent-hooks restore {rel}")
    shown = shell(run, diff)
    assert shown.returncode == 0, shown.stderr
    restored = shell(run, back)
    assert restored.returncode == 0, restored.stderr
    assert restored.stdout.startswith(f"restored {rel} to version ")
    assert next_call(run) == ""  # its own restore is not taken for someone else's change
    return shown.stdout


MINE = b"def app():\n    return 'mine'\n"


def test_a_python_write_is_told_and_undone(run: HookRunner) -> None:
    edit(run, "src/app.py", MINE, 0o755)
    subprocess.run(
        [sys.executable, "-c", "open('src/app.py', 'w').write('clobbered\\n')"],
        cwd=run.project, check=True,
    )  # fmt: skip
    diff = told_and_restored(run, "src/app.py")
    assert "-    return 'mine'" in diff and "+clobbered" in diff
    assert (run.project / "src/app.py").read_bytes() == MINE
    assert stat.S_IMODE((run.project / "src/app.py").stat().st_mode) == 0o755


def test_reservations_and_watch_show_a_changed_held_file_as_restorable(run: HookRunner) -> None:
    edit(run, "src/app.py", MINE)
    (run.project / "src/app.py").write_bytes(b"clobbered\n")
    next_call(run)  # the holder is told, and its lease marked changed
    rows = json.loads(shell(run, "agent-hooks reservations --json").stdout)
    [row] = [r for r in rows if r["pattern"] == "src/app.py"]
    assert row["restorable"] is True
    assert row["state"] == "live; changed by someone else; restorable", row["state"]
    frame = shell(run, "agent-hooks watch --once").stdout
    [line] = [line for line in frame.splitlines() if "src/app.py" in line]
    assert "restorable" in line, frame


def test_a_removal_is_told_and_the_file_recreated(run: HookRunner) -> None:
    edit(run, "src/app.py", MINE, 0o640)
    subprocess.run(["rm", "-r", str(run.project / "src")], check=True)
    told = next_call(run)
    assert "src/app.py, which you are changing, was changed by someone else" in told
    _, back = commands(told)
    assert shell(run, back).returncode == 0
    assert (run.project / "src/app.py").read_bytes() == MINE
    assert stat.S_IMODE((run.project / "src/app.py").stat().st_mode) == 0o640
    listed = json.loads(shell(run, "agent-hooks restore src/app.py --list --json").stdout)
    assert [row["kind"] for row in listed] == ["write", "delete", "restore"]


def test_git_run_from_a_script_is_told_and_undone(run: HookRunner) -> None:
    """`git stash` in a script the gate never reads swept the holder's edit away."""
    (run.project / "src").mkdir()
    (run.project / "src/app.py").write_bytes(b"committed\n")
    git(run.project, "add", "src/app.py")
    git(run.project, "commit", "-q", "-m", "app")
    edit(run, "src/app.py", MINE)
    script = run.project / "tidy.sh"
    script.write_text("git stash -q\n")
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(run.home)}
    env |= {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@t"}  # fmt: skip
    subprocess.run(["sh", "tidy.sh"], cwd=run.project, env=env, check=True)
    assert (run.project / "src/app.py").read_bytes() == b"committed\n"
    told_and_restored(run, "src/app.py")
    assert (run.project / "src/app.py").read_bytes() == MINE


def test_a_formatter_is_told_and_undone(run: HookRunner) -> None:
    edit(run, "src/app.py", b"x   =   1\n")
    formatter = "import sys; p = sys.argv[1]; t = open(p).read(); open(p, 'w').write(' '.join(t.split()) + '\\n')"
    subprocess.run([sys.executable, "-c", formatter, "src/app.py"], cwd=run.project, check=True)
    assert (run.project / "src/app.py").read_bytes() == b"x = 1\n"
    told_and_restored(run, "src/app.py")
    assert (run.project / "src/app.py").read_bytes() == b"x   =   1\n"


def test_another_clients_shell_is_named_and_undone(run: HookRunner) -> None:
    """A Codex agent's shell command clobbers the file (a write its command line does
    not show): its PostToolUse runs, nobody sees the write; the holder is told whose
    command ran when the file changed (ADR-0027)."""
    edit(run, "src/app.py", MINE)
    command = "python3 -c \"open('src/app.py', 'w').write('from codex\\n')\""
    pre = run.payload("codex/PreToolUse_Bash_shell_write", tool_input={"command": command})
    assert run("PreToolUse", pre, agent=CODEX, client="codex").out is None  # not refused
    subprocess.run(["sh", "-c", command], cwd=run.project, check=True)
    post = run.payload("codex/PostToolUse_Bash_shell_write", tool_input={"command": command})
    assert run("PostToolUse", post, agent=CODEX, client="codex").code == 0
    told_and_restored(run, "src/app.py", by=f'Codex agent "{CODEX}"\'s shell command')
    assert (run.project / "src/app.py").read_bytes() == MINE


def test_a_codex_patch_and_a_gemini_write_are_kept_for_their_writers(run: HookRunner) -> None:
    """Each client's own edits are kept: a Codex apply_patch, a Gemini write_file."""
    (run.project / "a.txt").write_text("alpha\n")
    patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-alpha\n+beta\n*** End Patch\n"
    pre = run.payload("codex/PreToolUse_apply_patch_patch_update", tool_input={"command": patch})
    assert run("PreToolUse", pre, agent=CODEX, client="codex").out is None
    (run.project / "a.txt").write_text("beta\n")
    post = run.payload("codex/PostToolUse_apply_patch_patch_update", tool_input={"command": patch})
    post["tool_response"] = (
        "Exit code: 0\nOutput:\nSuccess. Updated the following files:\nM a.txt\n"
    )
    assert run("PostToolUse", post, agent=CODEX, client="codex").code == 0
    gemini = "proj__gmi_1"
    pre = run.payload(
        "gemini/BeforeTool_write_file", tool_input={"file_path": "g.txt", "content": "g\n"}
    )
    assert run("BeforeTool", pre, agent=gemini, client="gemini").out in (None, {})
    (run.project / "g.txt").write_text("g\n")
    post = run.payload(
        "gemini/AfterTool_write_file", tool_input={"file_path": "g.txt", "content": "g\n"}
    )
    assert run("AfterTool", post, agent=gemini, client="gemini").code == 0
    listed = {}
    for rel in ("a.txt", "g.txt"):
        out = shell(run, f"agent-hooks restore {rel} --list --json")
        listed[rel] = [(row["writer"], row["size"]) for row in json.loads(out.stdout)]
    assert listed == {"a.txt": [(CODEX, 5)], "g.txt": [(gemini, 2)]}


def test_a_one_mib_file_comes_back_byte_for_byte(run: HookRunner) -> None:
    data = os.urandom(1 << 20)
    edit(run, "assets/blob.bin", data, 0o600)
    (run.project / "assets/blob.bin").write_bytes(data[: 1 << 19])
    told = next_call(run)
    _, back = commands(told)
    assert shell(run, back).returncode == 0
    assert (run.project / "assets/blob.bin").read_bytes() == data
    assert stat.S_IMODE((run.project / "assets/blob.bin").stat().st_mode) == 0o600


def test_a_restore_over_another_live_holder_writes_nothing(run: HookRunner) -> None:
    """The holder's conversation ended (its leases with it); another agent then edits
    the file and holds it: the holder's later restore writes nothing and says why."""
    edit(run, "src/app.py", MINE)
    assert run("SessionEnd", "SessionEnd", agent=ME).code == 0
    edit(run, "src/app.py", b"the other agent's edit\n", agent=OTHER)
    refused = shell(run, "agent-hooks restore src/app.py")
    assert refused.returncode == 1
    [line] = refused.stderr.splitlines()
    assert line.startswith(f'Error: src/app.py is held by agent "{OTHER}"'), line
    assert "nothing was written" in line
    assert (run.project / "src/app.py").read_bytes() == b"the other agent's edit\n"


def test_the_undo_of_a_restore_and_from_by_a_person(run: HookRunner) -> None:
    edit(run, "src/app.py", MINE)
    (run.project / "src/app.py").write_bytes(b"their deliberate change\n")
    _, back = commands(next_call(run))
    restored = shell(run, back)
    undo = restored.stdout.strip().splitlines()[-1].split("`")[1]
    assert shell(run, undo).returncode == 0  # the user says the change was deliberate
    assert (run.project / "src/app.py").read_bytes() == b"their deliberate change\n"
    person = {k: v for k, v in run.env(ME).items() if k not in ("AGENT_NAME", "CLAUDE_PID")}
    person["PATH"] = f"{Path(sys.executable).parent}:{person['PATH']}"
    done = subprocess.run(
        ["agent-hooks", "restore", "src/app.py", "--from", ME, "--json"],
        cwd=run.project, env=person, capture_output=True, text=True, check=False,
    )  # fmt: skip
    # The agent still holds its lease: a person is told so, and may force it.
    assert done.returncode == 1 and "held by" in done.stderr
    forced = subprocess.run(
        ["agent-hooks", "restore", "src/app.py", "--from", ME, "--force", "--json"],
        cwd=run.project, env=person, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert forced.returncode == 0, forced.stderr
    assert json.loads(forced.stdout)["forced"] is True
    assert (run.project / "src/app.py").read_bytes() == MINE
    told = next_call(run)  # the holder hears who changed its file: the person's restore
    assert "was changed by an agent without AGENT_NAME's restore" in told


def test_an_ignored_file_is_never_kept_and_the_holder_told_as_before(run: HookRunner) -> None:
    (run.project / ".gitignore").write_text(".cache/\n")
    edit(run, ".cache/token.txt", b"s3cret\n")
    (run.project / ".cache/token.txt").write_bytes(b"gone\n")
    told = next_call(run)
    assert "was changed by someone else" in told and "is kept" not in told
    assert "check that your changes are still there" in told
    objects = run.project / ".git" / "agent-hooks" / "kept" / "objects"
    stored = (
        b"".join(p.read_bytes() for p in objects.rglob("*") if p.is_file())
        if objects.exists()
        else b""
    )
    assert b"s3cret" not in stored


def test_each_worktree_finds_its_own_versions(home: Path, repo: Path, tmp_path: Path) -> None:
    """One store for the repository (its common git directory), keyed by worktree: the
    same path written in the main checkout and in a linked worktree comes back, in each,
    as that checkout's writer left it."""
    from git_repo import worktree

    linked = Path(os.path.realpath(worktree(repo, tmp_path / "linked", "feature")))
    main_run, linked_run = HookRunner(home, repo), HookRunner(home, linked)
    edit(main_run, "src/app.py", b"main's\n")
    edit(linked_run, "src/app.py", b"linked's\n", agent=OTHER)
    for checkout in (repo, linked):
        (checkout / "src/app.py").write_bytes(b"clobbered\n")
    assert not (linked / ".git").is_dir()  # a worktree's .git is a file: one store
    stores = list((repo / ".git" / "agent-hooks" / "kept" / "versions").iterdir())
    assert sorted(p.name for p in stores) == ["%2E", "worktrees%2Flinked"]
    for checkout, agent, data in ((repo, ME, b"main's\n"), (linked, OTHER, b"linked's\n")):
        env = {**main_run.env(agent), "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
        env.pop("CLAUDE_PROJECT_DIR")
        done = subprocess.run(
            ["agent-hooks", "restore", "src/app.py"], cwd=checkout, env=env,
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert (checkout / "src/app.py").read_bytes() == data
