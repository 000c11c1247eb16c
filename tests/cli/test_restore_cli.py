"""`agent-hooks restore` through click's CliRunner, in a real git repository: the last
kept version put back with its bytes and mode, a deleted file recreated, the
restore undone, `--list`, `--diff`, `--to`, `--from` by a person; and every refusal
one line, exit 1, nothing written: a path outside the project, nothing kept, no
such version, damaged content, another live holder, a change between the check
and the write. `settings kept-…` change the store's bounds."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from agent_hooks import writers
from agent_hooks.cli import main
from agent_hooks.cli._common import Env
from agent_hooks.kept import kept_restore, kept_store, kept_versions
from agent_hooks.leases import lease_store
from agent_hooks.ledger.repo import Repo
from git_repo import init

NOW = 1_800_000_000.0
ME, OTHER = "proj__cc_1", "proj__cc_2"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git repository, the working directory (relative PATHs are read from there)."""
    path = Path(os.path.realpath(init(tmp_path / "repo")))
    monkeypatch.chdir(path)
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


def ledger(repo: Path) -> str:
    path = repo / ".git" / "agent-hooks"
    path.mkdir(mode=0o700, exist_ok=True)
    return str(path)


def run(
    home: Path, repo: Path, *args: str, agent: str | None = ME, now: float = NOW,
    extra: dict[str, str] | None = None,
) -> Result:  # fmt: skip
    environ = {"HOME": str(home), "CLAUDE_PROJECT_DIR": str(repo)}
    if agent is not None:
        environ["AGENT_NAME"] = agent
    environ.update(extra or {})
    return CliRunner().invoke(main, ["restore", *args], obj=Env(environ=environ, now=now))


def wrote(repo: Path, rel: str, data: bytes, agent: str = ME, mode: int = 0o644,
          at: float = NOW - 60) -> None:  # fmt: skip
    """`agent`'s write of `rel`, as PostToolUse keeps it (the agent holds the file)."""
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    path.chmod(mode)
    record = writers.Writer(agent, "conv-" + agent).as_dict()
    held = [(str(path), ledger(repo), rel, ".", at + 600)]
    assert kept_store.keep_held(held, record, at, {"HOME": str(repo.parent / "gh")}) == []


def holds(repo: Path, rel: str, agent: str) -> None:
    """`agent` holds a live lease on `rel` (its process: this test's, alive)."""
    where = Repo(str(repo), str(repo.parent / "state"), {"AGENT_HOOKS_LEASE_MINUTES": "60"})
    claim = lease_store.claim(
        where, rel, writers.Writer(agent, "conv-" + agent), NOW, holder_pid=os.getpid()
    )
    assert claim.written and not claim.blockers


def error(result: Result, *needles: str) -> str:
    assert result.exit_code == 1, (result.exit_code, result.output, result.exception)
    assert result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith("Error: ")
    for needle in needles:
        assert needle in line, line
    return line


def ok(result: Result) -> Result:
    assert result.exit_code == 0, (result.output, result.exception)
    return result


def test_the_holder_gets_its_exact_last_bytes_and_mode_back(home: Path, repo: Path) -> None:
    data = bytes(range(256)) * 4096 + b"\r\n\x00end"  # 1 MiB and more, not text
    wrote(repo, "bin/tool.sh", data, mode=0o755)
    (repo / "bin/tool.sh").write_bytes(b"clobbered by a script\n")
    (repo / "bin/tool.sh").chmod(0o600)
    out = ok(run(home, repo, "bin/tool.sh", "--json"))
    done = json.loads(out.stdout)
    assert (repo / "bin/tool.sh").read_bytes() == data
    assert stat.S_IMODE((repo / "bin/tool.sh").stat().st_mode) == 0o755
    assert done["restored"] is True and done["mode"] == 0o755 and done["size"] == len(data)
    assert done["undo"] == f"agent-hooks restore bin/tool.sh --version {done['replaced']}"
    assert [p.name for p in (repo / "bin").iterdir()] == ["tool.sh"]  # no temporary left


def test_a_restore_is_undone_with_the_command_it_prints(home: Path, repo: Path) -> None:
    wrote(repo, "app.py", b"mine\n")
    (repo / "app.py").write_bytes(b"theirs\n")
    first = ok(run(home, repo, "app.py"))
    assert (repo / "app.py").read_bytes() == b"mine\n"
    undo = first.stdout.strip().splitlines()[-1].split("`")[1]
    assert undo.startswith("agent-hooks restore app.py --version ")
    ok(run(home, repo, *undo.split()[2:]))
    assert (repo / "app.py").read_bytes() == b"theirs\n"


def test_a_deleted_file_is_recreated_with_its_directories(home: Path, repo: Path) -> None:
    wrote(repo, "deep/er/gone.py", b"x = 1\n", mode=0o640)
    (repo / "deep/er/gone.py").unlink()
    (repo / "deep/er").rmdir()
    (repo / "deep").rmdir()
    ok(run(home, repo, str(repo / "deep/er/gone.py")))
    assert (repo / "deep/er/gone.py").read_bytes() == b"x = 1\n"
    assert stat.S_IMODE((repo / "deep/er/gone.py").stat().st_mode) == 0o640


def test_the_restoring_writer_takes_the_lease_and_the_store_records_the_restore(
    home: Path, repo: Path
) -> None:
    wrote(repo, "app.py", b"mine\n")
    (repo / "app.py").write_bytes(b"theirs\n")
    ok(run(home, repo, "app.py", extra={"CLAUDE_PID": str(os.getpid())}))
    [held] = lease_store.read(ledger(repo), "app.py")
    assert held["writer"] == ME and held["fp"].split(":")[1] == "5"  # its fingerprint noted
    kinds = [e["kind"] for e in kept_versions.read_versions(ledger(repo), ".", "app.py")]
    assert kinds == ["write", "replaced", "restore"]
    log = (home / ".claude" / "agent-hooks.log").read_text()
    assert "event=restore " in log and "restored app.py" in log


def test_a_file_already_as_the_version_is_left_alone(home: Path, repo: Path) -> None:
    wrote(repo, "app.py", b"mine\n")
    out = ok(run(home, repo, "app.py", "--json"))
    assert json.loads(out.stdout)["restored"] is False
    assert len(kept_versions.read_versions(ledger(repo), ".", "app.py")) == 1


def test_list_shows_who_when_size_and_which_is_current(home: Path, repo: Path) -> None:
    wrote(repo, "app.py", b"one\n", at=NOW - 120)
    wrote(repo, "app.py", b"two!\n", agent=OTHER, at=NOW - 60)
    rows = json.loads(ok(run(home, repo, "app.py", "--list", "--json")).stdout)
    assert [(r["writer"], r["size"], r["current"], r["kind"]) for r in rows] == [
        (ME, 4, False, "write"),
        (OTHER, 5, True, "write"),
    ]
    assert rows[0]["id"] == rows[0]["hash"][:12] and rows[1]["writer_label"] == f'agent "{OTHER}"'
    text = ok(run(home, repo, "app.py", "--list")).stdout
    assert "*" in text.splitlines()[-1] and f'agent "{ME}"' in text and "(2m ago)" in text
    mine = json.loads(ok(run(home, repo, "app.py", "--list", "--json", "--from", ME)).stdout)
    assert [r["writer"] for r in mine] == [ME]


def test_list_of_a_path_with_nothing_kept_says_why(home: Path, repo: Path) -> None:
    (repo / ".gitignore").write_text("*.log\n")
    assert json.loads(ok(run(home, repo, "x.log", "--list", "--json")).stdout) == []
    assert "git ignores it" in ok(run(home, repo, "x.log", "--list")).stdout


def test_diff_shows_what_the_version_and_the_file_differ_by(home: Path, repo: Path) -> None:
    wrote(repo, "app.py", b"a\nb\nc\n")
    (repo / "app.py").write_bytes(b"a\nB\nc\n")
    (repo / "app.py").chmod(0o755)
    text = ok(run(home, repo, "app.py", "--diff")).stdout
    assert "-b\n+B\n" in text and "old mode 644\nnew mode 755" in text
    assert "--- app.py (kept " in text and "+++ app.py (now)" in text
    doc = json.loads(ok(run(home, repo, "app.py", "--diff", "--json")).stdout)
    assert doc["same"] is False and doc["binary"] is False and "+B" in doc["diff"]
    assert (repo / "app.py").read_bytes() == b"a\nB\nc\n"  # nothing written
    (repo / "app.py").unlink()
    doc = json.loads(ok(run(home, repo, "app.py", "--diff", "--json")).stdout)
    assert doc["exists"] is False and "-a" in doc["diff"]


def test_to_writes_a_new_file_and_never_replaces_one(
    home: Path, repo: Path, tmp_path: Path
) -> None:
    wrote(repo, "app.py", b"mine\n", mode=0o700)
    (repo / "app.py").write_bytes(b"theirs\n")
    target = tmp_path / "copy.py"
    ok(run(home, repo, "app.py", "--to", str(target)))
    assert target.read_bytes() == b"mine\n" and stat.S_IMODE(target.stat().st_mode) == 0o700
    assert (repo / "app.py").read_bytes() == b"theirs\n"
    error(run(home, repo, "app.py", "--to", str(target)), "it exists")


def test_from_lets_a_person_restore_an_agents_version(home: Path, repo: Path) -> None:
    """A person at the terminal (no AGENT_NAME, no conversation) restores the work
    of an agent whose lease ended; without --from nothing of theirs is kept."""
    wrote(repo, "app.py", b"the agent's work\n", at=NOW - 3600)
    (repo / "app.py").write_bytes(b"lost\n")
    error(run(home, repo, "app.py", agent=None), "nothing of yours", f'agent "{ME}"', "--from")
    ok(run(home, repo, "app.py", "--from", ME, agent=None))
    assert (repo / "app.py").read_bytes() == b"the agent's work\n"
    [held] = lease_store.read(ledger(repo), "app.py")
    assert held["writer"] == "~"  # the person holds it now (by time: no process)


def test_a_later_conversation_of_the_agent_restores_its_own_version(home: Path, repo: Path) -> None:
    wrote(repo, "app.py", b"yesterday's work\n", at=NOW - 86400)
    (repo / "app.py").write_bytes(b"lost\n")
    ok(run(home, repo, "app.py", extra={"CLAUDE_CODE_SESSION_ID": "a-new-one"}))
    assert (repo / "app.py").read_bytes() == b"yesterday's work\n"


def test_version_picks_one_and_bad_ids_are_one_line(home: Path, repo: Path) -> None:
    wrote(repo, "app.py", b"first\n", at=NOW - 120)
    wrote(repo, "app.py", b"second\n", at=NOW - 60)
    first = kept_versions.read_versions(ledger(repo), ".", "app.py")[0]["hash"]
    ok(run(home, repo, "app.py", "--version", first[:6]))
    assert (repo / "app.py").read_bytes() == b"first\n"
    error(run(home, repo, "app.py", "--version", "ffffffff"), "no version ffffffff")
    error(run(home, repo, "app.py", "--version", "xyz!"), "not a version id")


def test_bad_input_is_one_line_and_exit_1(home: Path, repo: Path, tmp_path: Path) -> None:
    error(run(home, repo, str(tmp_path / "elsewhere.py")), "outside the project")
    error(run(home, repo, "never.py"), "nothing is kept for never.py")
    error(run(home, repo, ".git/config"), "inside git's own directory")
    (repo / ".gitignore").write_text("*.log\n")
    error(run(home, repo, "debug.log"), "nothing is kept for debug.log: git ignores it")
    usage = run(home, repo, "app.py", "--list", "--force")
    assert usage.exit_code == 2


def test_damaged_content_is_refused_and_nothing_written(home: Path, repo: Path) -> None:
    wrote(repo, "app.py", b"mine\n")
    (repo / "app.py").write_bytes(b"theirs\n")
    [entry] = kept_versions.read_versions(ledger(repo), ".", "app.py")
    Path(kept_store.object_path(ledger(repo), entry["hash"])).write_bytes(b"mINE\n")
    error(run(home, repo, "app.py"), "missing or damaged", "nothing was written")
    assert (repo / "app.py").read_bytes() == b"theirs\n"


def test_a_restore_over_another_live_holder_is_refused_unless_forced(
    home: Path, repo: Path
) -> None:
    wrote(repo, "app.py", b"mine\n")
    (repo / "app.py").write_bytes(b"the other agent's work\n")
    holds(repo, "app.py", OTHER)
    error(run(home, repo, "app.py"), f'held by agent "{OTHER}"', "nothing was written", "--force")
    assert (repo / "app.py").read_bytes() == b"the other agent's work\n"
    assert [e["kind"] for e in kept_versions.read_versions(ledger(repo), ".", "app.py")] == [
        "write"
    ]  # not even its content kept: nothing happened
    ok(run(home, repo, "app.py", "--force"))
    assert (repo / "app.py").read_bytes() == b"mine\n"
    [lease] = lease_store.read(ledger(repo), "app.py")
    assert lease["writer"] == OTHER and lease["changed"]["by"] == f'agent "{ME}"\'s restore'
    log = (home / ".claude" / "agent-hooks.log").read_text()
    assert "event=restore --force" in log and f'over agent "{OTHER}"' in log


def test_a_file_that_changed_between_the_check_and_the_write_is_left_alone(
    home: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wrote(repo, "app.py", b"mine\n")
    (repo / "app.py").write_bytes(b"theirs\n")
    real = kept_restore._write_temp

    def meanwhile(directory: str, name: str, data: bytes, mode: int) -> str:
        (repo / "app.py").write_bytes(b"a third writer, meanwhile\n")  # after the check
        return real(directory, name, data, mode)

    monkeypatch.setattr(kept_restore, "_write_temp", meanwhile)
    error(run(home, repo, "app.py"), "changed while it was being restored", "nothing was written")
    assert (repo / "app.py").read_bytes() == b"a third writer, meanwhile\n"
    assert [p.name for p in repo.iterdir() if p.name.startswith(".app.py")] == []


def test_content_that_cannot_be_kept_is_not_overwritten_unless_forced(
    home: Path, repo: Path
) -> None:
    """A restore that could not be undone (the current content too large to keep)."""
    wrote(repo, "app.py", b"mine\n")
    (repo / "app.py").write_bytes(b"z" * ((4 << 20) + 1))
    error(run(home, repo, "app.py"), "cannot be kept", "could not be undone")
    ok(run(home, repo, "app.py", "--force"))
    assert (repo / "app.py").read_bytes() == b"mine\n"


def test_a_directory_or_symlink_where_the_file_was_is_not_replaced(
    home: Path, repo: Path, tmp_path: Path
) -> None:
    wrote(repo, "app.py", b"mine\n")
    (repo / "app.py").unlink()
    (repo / "app.py").mkdir()
    error(run(home, repo, "app.py"), "app.py is a directory now")
    (repo / "app.py").rmdir()
    (repo / "app.py").symlink_to(tmp_path / "outside")
    error(run(home, repo, "app.py"), "app.py is a symlink now")
    assert not (tmp_path / "outside").exists()


def test_a_directory_on_the_way_that_leads_out_of_the_work_tree_is_refused(
    home: Path, repo: Path, tmp_path: Path
) -> None:
    wrote(repo, "sub/app.py", b"mine\n")
    (repo / "sub/app.py").unlink()
    (repo / "sub").rmdir()
    (tmp_path / "elsewhere").mkdir()
    (repo / "sub").symlink_to(tmp_path / "elsewhere")
    result = run(home, repo, str(repo / "sub" / "app.py"))
    assert result.exit_code == 1
    assert not (tmp_path / "elsewhere" / "app.py").exists()


def test_settings_change_the_stores_bounds(home: Path, repo: Path) -> None:
    def settings(*args: str) -> Any:
        environ = {"HOME": str(home), "CLAUDE_PROJECT_DIR": str(repo), "AGENT_NAME": ME}
        result = CliRunner().invoke(main, ["settings", *args], obj=Env(environ=environ, now=NOW))
        assert result.exit_code == 0, result.output
        return result

    assert json.loads(settings("--json").stdout)["kept_file_mib"] == kept_store.FILE_MIB
    settings("kept-file-mib", "1")
    settings("kept-exclude", "data/  *.sqlite")
    doc = json.loads(settings("--json").stdout)
    assert doc["kept_file_mib"] == 1 and doc["kept_exclude"] == "data/ *.sqlite"
    assert "kept-total-mib   256" in settings().stdout
    environ = {"HOME": str(home), "CLAUDE_PROJECT_DIR": str(repo), "AGENT_NAME": ME}
    bad = CliRunner().invoke(main, ["settings", "kept-total-mib", "-3"], obj=Env(environ=environ))
    assert bad.exit_code == 2
    wrote(repo, "data/x.csv", b"1\n")  # excluded now: keep_held keeps nothing of it
    assert kept_versions.read_versions(ledger(repo), ".", "data/x.csv") == []


def test_cleanup_sweeps_the_kept_versions_of_every_known_repository(home: Path, repo: Path) -> None:
    from agent_hooks.ledger import known_ledgers

    wrote(repo, "old.py", b"eight days old\n", at=NOW - 8 * 86400 - 600)
    wrote(repo, "new.py", b"fresh\n")
    known_ledgers.remember(str(home / ".claude"), str(repo), ledger(repo), NOW)
    environ = {"HOME": str(home), "AGENT_NAME": ME}
    result = CliRunner().invoke(main, ["cleanup", "--json"], obj=Env(environ=environ, now=NOW))
    [swept] = json.loads(result.stdout)["kept_versions"]
    assert (swept["ledger"], swept["versions"], swept["objects"]) == (ledger(repo), 1, 1)
    assert kept_versions.read_versions(ledger(repo), ".", "old.py") == []
    assert len(kept_versions.read_versions(ledger(repo), ".", "new.py")) == 1
