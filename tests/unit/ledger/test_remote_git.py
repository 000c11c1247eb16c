"""Git plumbing of the remote ledger against real repositories: the private
repository, fetch, read, commit, leased push, and telling a lost race from an
unreachable remote."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from agent_hooks.ledger import remote_git
from ledger_machines import NOW, REMOTE, Machine, free_port, run_git


def test_git_runs_without_prompts_or_the_callers_repository() -> None:
    env = remote_git.environment(
        {"PATH": "/bin", "GIT_DIR": "/elsewhere", "GIT_OBJECT_DIRECTORY": "/x", "HOME": "/h"}
    )
    assert "GIT_DIR" not in env and "GIT_OBJECT_DIRECTORY" not in env
    assert env["GIT_TERMINAL_PROMPT"] == "0" and env["LC_ALL"] == "C"
    assert env["GIT_SSH_COMMAND"] == "ssh -o BatchMode=yes -o ConnectTimeout=10"
    own = remote_git.environment({"GIT_SSH_COMMAND": "ssh -i /k/id"})
    assert own["GIT_SSH_COMMAND"] == "ssh -i /k/id -o BatchMode=yes -o ConnectTimeout=10"
    plink = remote_git.environment({"GIT_SSH_COMMAND": "plink -batch"})
    assert plink["GIT_SSH_COMMAND"] == "plink -batch"
    assert "GIT_SSH_COMMAND" not in remote_git.environment({"GIT_SSH": "/usr/bin/wrapper"})
    configured = remote_git.environment({}, "/usr/bin/ssh -F /cfg")
    assert configured["GIT_SSH_COMMAND"].endswith("-o BatchMode=yes -o ConnectTimeout=10")


def test_messages_are_one_line_without_credentials() -> None:
    err = (
        b"remote: something\n"
        b"fatal: unable to access 'https://user:s3cret@example.com/r.git/': Could not resolve host\n"
        b"fatal: Could not read from remote repository.\n"
    )
    reason = remote_git.reason_of(err, "x")
    assert reason == "fatal: unable to access 'https://example.com/r.git/': Could not resolve host"
    assert remote_git.reason_of(b"", "fallback") == "fallback"
    generic = b"fatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\nand the repository exists.\n"
    assert remote_git.reason_of(b"ERROR: Permission denied (publickey).\n" + generic, "x") == (
        "ERROR: Permission denied (publickey)."
    )


def test_the_private_repository_includes_the_users_config_and_follows_a_move(
    world: Any,
) -> None:
    alpha = world.machine("alpha")
    git = alpha.git()
    git.ensure()
    config = (alpha.ledger / remote_git.PRIVATE_REPO / "config").read_text()
    assert f'path = "{alpha.common}/config"' in config and "hooksPath = /dev/null" in config
    assert git.remote_url(REMOTE) == world.url
    assert git.remote_url("nope") is None
    moved = alpha.repo.parent / "moved"
    alpha.repo.rename(moved)
    again = remote_git.Git(str(moved / ".git"), str(moved / ".git" / "agent-hooks"), alpha.environ)
    again.ensure()
    config = (moved / ".git" / "agent-hooks" / remote_git.PRIVATE_REPO / "config").read_text()
    assert f'path = "{moved}/.git/config"' in config
    assert again.fetch(REMOTE).commit is None  # the remote is found through the new path


def test_fetch_push_and_a_lost_race(world: Any) -> None:
    alpha, beta = world.machine("alpha"), world.machine("beta")
    a, b = alpha.git(), beta.git()
    assert a.fetch(REMOTE).commit is None
    a.ensure()
    first = a.commit(
        {"reservations.json": a.blob(b"{}"), "hosts/alpha.json": a.blob(b"{}")}, NOW, "m"
    )
    a.push(REMOTE, first, None)
    seen = b.fetch(REMOTE)
    assert seen.commit == first and seen.files == {
        "reservations.json": b"{}",
        "hosts/alpha.json": b"{}",
    }
    assert seen.problems == [] and seen.unread == {} and seen.broken is None
    b_new = b.commit({**seen.entries, "hosts/beta.json": b.blob(b'{"b":1}')}, NOW, "m")
    a_new = a.commit({"reservations.json": a.blob(b"[]")}, NOW + 1, "m")
    b.push(REMOTE, b_new, first)
    with pytest.raises(remote_git.LostRace, match="moved meanwhile"):
        a.push(REMOTE, a_new, first)  # expected `first`, the remote is at b_new
    with pytest.raises(remote_git.LostRace):
        a.push(REMOTE, a_new, None)  # expected absent
    assert a.fetch(REMOTE).commit == b_new


def test_reading_never_trusts_the_commit_and_never_loses_what_it_did_not_read(
    world: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file over the limit, a symlink, a submodule, a file beyond the first
    MAX_FILES: listed in `entries`, not read (`unread`, why), and a commit made
    from the entries carries each over byte for byte."""
    alpha = world.machine("alpha")
    git = alpha.git()
    git.ensure()
    big = git.blob(b"x" * 100)
    small = git.blob(b"{}")
    link = git.blob(b"/etc/passwd")
    tree_lines = (
        f"100644 blob {small}\tok.json\n100644 blob {big}\tbig.json\n"
        f"120000 blob {link}\tlink.json\n160000 commit {'1' * 40}\tsub\n"
        f"100644 blob {small}\tz1.json\n100644 blob {small}\tz2.json\n"
    )
    tree = git.run("mktree", "--missing", data=tree_lines.encode()).out.decode().strip()
    commit = git.run("commit-tree", tree, "-m", "x").out.decode().strip()
    monkeypatch.setattr(remote_git, "MAX_BLOB", 50)
    monkeypatch.setattr(remote_git, "MAX_FILES", 2)
    snap = git.read(commit)
    assert snap.broken is None
    assert snap.files == {"ok.json": b"{}", "z1.json": b"{}"}
    assert snap.unread == {
        "big.json": "big.json is 100 bytes, over the 50-byte limit",
        "link.json": "link.json is not a file (blob 120000)",
        "sub": "sub is not a file (commit 160000)",
        "z2.json": "z2.json lies beyond the first 2 files",
    }
    again = git.read(git.commit(snap.entries, NOW, "carried"))
    assert again.entries == snap.entries  # every entry carried over, read or not
    broken = git.read("0" * 40)
    assert broken.files == {} and broken.broken and "cannot be read" in broken.broken


def test_a_remote_that_cannot_be_reached_is_one_line(world: Any) -> None:
    alpha = world.machine("alpha")
    git = alpha.git()
    with pytest.raises(remote_git.Unreachable) as caught:
        git.fetch("no-such-remote")
    assert "\n" not in str(caught.value) and "no-such-remote" in str(caught.value)
    run_git(
        alpha.repo, "remote", "set-url", REMOTE, f"file://{world.tmp}/gone.git", env=alpha.environ
    )
    with pytest.raises(remote_git.Unreachable, match="does not appear to be a git repository"):
        git.fetch(REMOTE)
    git.ensure()
    commit = git.commit({"a": git.blob(b"1")}, NOW, "m")
    with pytest.raises(remote_git.Unreachable, match="cannot push the ledger"):
        git.push(REMOTE, commit, None)


def test_ssh_without_credentials_fails_at_once_instead_of_asking(world: Any) -> None:
    """Decided by what ran, not by the clock: git ran the real ssh in batch mode
    (it never asks), and the failure is ssh's own refusal, not the timeout that
    a question nobody answers would end in."""
    alpha = world.machine("alpha")
    url = f"ssh://git@127.0.0.1:{free_port()}/repo.git"
    run_git(alpha.repo, "remote", "set-url", REMOTE, url, env=alpha.environ)
    trace = world.tmp / "trace"
    git = remote_git.Git(
        str(alpha.common), str(alpha.ledger), {**alpha.environ, "GIT_TRACE": str(trace)}
    )
    with pytest.raises(remote_git.Unreachable) as caught:
        git.fetch(REMOTE)
    message = str(caught.value)
    assert "\n" not in message and "git@" not in message
    assert "timed out" not in message and "Connection refused" in message
    ran = [
        line for line in trace.read_text().splitlines() if "run_command:" in line and "ssh" in line
    ]
    assert ran and all("-o BatchMode=yes" in line for line in ran), ran


def test_a_remote_that_hangs_is_given_up_after_the_timeout_and_killed(world: Any) -> None:
    alpha = world.machine("alpha")
    marker = "37.25"
    environ = {
        **alpha.environ,
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "protocol.ext.allow",
        "GIT_CONFIG_VALUE_0": "always",
    }
    run_git(alpha.repo, "remote", "set-url", REMOTE, f"ext::sleep {marker}", env=alpha.environ)
    git = remote_git.Git(str(alpha.common), str(alpha.ledger), environ, timeout=1.0)
    git.ensure()
    with pytest.raises(remote_git.Unreachable, match="timed out after 1 s"):
        git.fetch(REMOTE)
    left = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if cmdline == f"sleep\0{marker}\0".encode():
            left.append(pid)
    assert left == []


def test_ledger_commits_ignore_the_users_hooks_and_signing(world: Any) -> None:
    alpha = world.machine("alpha")
    hooks = world.tmp / "hooks"
    hooks.mkdir()
    for name in ("reference-transaction", "pre-push"):
        (hooks / name).write_text("#!/bin/sh\nexit 1\n")
        (hooks / name).chmod(0o755)
    for key, value in (
        ("core.hooksPath", str(hooks)),
        ("commit.gpgSign", "true"),
        ("push.gpgSign", "true"),
    ):
        run_git(alpha.repo, "config", key, value, env=alpha.environ)
    git = alpha.git()
    assert git.fetch(REMOTE).commit is None
    commit = git.commit({"a": git.blob(b"1")}, NOW, "m")
    git.push(REMOTE, commit, None)
    assert git.fetch(REMOTE).commit == commit


def test_prune_removes_fetch_refs_of_dead_processes_at_most_hourly(world: Any) -> None:
    alpha = world.machine("alpha")
    git = alpha.git()
    git.ensure()
    commit = git.commit({"a": git.blob(b"1")}, NOW, "m")
    gone = subprocess.Popen(["true"])
    gone.wait()
    stale = f"{remote_git.TMP_REFS}/{gone.pid}-abcd/ledger"
    alive = f"{remote_git.TMP_REFS}/{os.getpid()}-abcd/ledger"
    for ref in (stale, alive):
        git.run("update-ref", ref, commit)
    assert git.prune(time.time())
    refs = git.run("for-each-ref", "--format=%(refname)").out.decode().split()
    assert refs == [alive]
    assert not git.prune(time.time() + 60)
    assert git.prune(time.time() + remote_git.PRUNE_EVERY + 1)


def test_machines_reach_the_remote_through_git_daemon(any_world: Any) -> None:
    alpha: Machine = any_world.machine("alpha")
    git = alpha.git()
    assert git.fetch(REMOTE).commit is None
    commit = git.commit({"reservations.json": git.blob(b"{}")}, NOW, "m")
    git.push(REMOTE, commit, None)
    assert any_world.machine("beta").git().fetch(REMOTE).files == {"reservations.json": b"{}"}


def test_a_commit_reuses_the_trees_of_folders_it_left_alone_and_only_those(world: Any) -> None:
    alpha = world.machine("alpha")
    git = alpha.git()
    git.ensure()
    first = git.read(
        git.commit(
            {"hosts/a.json": git.blob(b"1"), "grants/a.json": git.blob(b"2"), "x": git.blob(b"3")},
            NOW,
            "m",
        )
    )
    changed = {**first.entries, "grants/a.json": ("100644", git.blob(b"new"))}
    second = git.read(git.commit(changed, NOW, "m", first))
    assert second.trees["hosts"] == first.trees["hosts"]
    assert second.trees["grants"] != first.trees["grants"]
    assert second.files == {"hosts/a.json": b"1", "grants/a.json": b"new", "x": b"3"}
    gone = {p: e for p, e in first.entries.items() if p != "hosts/a.json"}
    third = git.read(git.commit(gone, NOW, "m", first))
    assert "hosts" not in third.trees and sorted(third.files) == ["grants/a.json", "x"]
