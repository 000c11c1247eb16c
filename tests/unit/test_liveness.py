"""liveness: is the process behind a claim still running? Judged with real processes:
our own, a child that exited, a pid whose start time does not match (a reused
pid), and a process whose command name holds `)` and spaces."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agent_hooks import liveness
from agent_hooks.clients import claude_code


def holder(pid: int | None, start: Any = "now", host: str | None = None) -> dict[str, Any]:
    """A claim's holder fields for `pid`, with its real start time unless told otherwise."""
    if start == "now":
        start = liveness.start_time(pid) if pid else None
    return {"pid": pid, "start": start, "host": liveness.host() if host is None else host}


def test_our_own_process_is_alive() -> None:
    me = holder(os.getpid())
    assert isinstance(me["start"], int)
    assert liveness.alive(me) is True
    assert liveness.alive(holder(os.getppid())) is True


def test_a_child_that_exited_is_dead() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        claim = holder(child.pid)
        assert liveness.alive(claim) is True
    finally:
        child.kill()
        child.wait()
    assert liveness.alive(claim) is False
    assert liveness.start_time(child.pid) is None


def test_a_child_that_exited_but_was_not_reaped_is_dead() -> None:
    """A zombie still has its pid (and its start time) until its parent waits for it."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    claim = holder(child.pid)
    os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # exited, left unreaped
    try:
        assert Path(f"/proc/{child.pid}").exists()  # the pid still names a process
        assert liveness.alive(claim) is False
    finally:
        child.wait()


def test_asking_whether_a_holder_lives_sends_it_nothing() -> None:
    """The probe is signal 0. The holder blocks every signal, so whatever the probe sent
    would wait, pending, until the holder looks: it looks after the probe and finds none."""
    script = (
        "import signal, sys\n"
        "signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())\n"
        "print('ready', flush=True)\n"
        "sys.stdin.readline()\n"
        "print(sorted(int(s) for s in signal.sigpending()), flush=True)\n"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert child.stdin is not None and child.stdout is not None
    try:
        assert child.stdout.readline() == "ready\n"
        assert liveness.alive(holder(child.pid)) is True
        assert liveness.pid_exists(child.pid) is True
        child.stdin.write("look\n")
        child.stdin.flush()
        assert child.stdout.readline() == "[]\n"
    finally:
        child.kill()
        child.wait()


@pytest.mark.parametrize("offset", [1, -1, 10**6])
def test_a_reused_pid_is_not_mistaken_for_the_holder(offset: int) -> None:
    """A live process with the holder's pid but another start time is someone else."""
    real = liveness.start_time(os.getpid())
    assert real is not None
    assert liveness.alive(holder(os.getpid(), start=real + offset)) is False
    assert liveness.alive(holder(os.getpid(), start=real)) is True  # control


@pytest.mark.parametrize("start", [None, "123", 1.5, True])
def test_without_a_usable_start_time_the_pid_alone_decides(start: Any) -> None:
    assert liveness.alive(holder(os.getpid(), start=start)) is True


@pytest.mark.parametrize("host", ["elsewhere/boot/pid:[1]", "", None])
def test_another_host_cannot_be_judged(host: str | None) -> None:
    """Another host (or none recorded): None, even for a pid that exists here."""
    claim = {**holder(os.getpid()), "host": host}
    assert liveness.alive(claim) is None


@pytest.mark.parametrize("pid", [None, 0, -1, True, "123", 2**31, 1.0])
def test_no_usable_pid_cannot_be_judged(pid: Any) -> None:
    assert liveness.alive({"pid": pid, "start": None, "host": liveness.host()}) is None


def test_host_names_the_node_the_boot_and_the_pid_namespace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(liveness, "_HOST", [])  # worked out here, not remembered
    node, boot, namespace = liveness.host().split("/", 2)
    assert node == os.uname().nodename
    assert boot == Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    assert namespace == os.readlink("/proc/self/ns/pid") and namespace.startswith("pid:[")


def test_host_leaves_the_parts_it_cannot_read_empty(monkeypatch: pytest.MonkeyPatch) -> None:
    """No boot id and no pid namespace to read (a /proc that hides them): the host is
    the node name and two empty parts, the same in every process of that machine."""

    def unreadable(path: str) -> str:
        raise PermissionError(13, "Permission denied", path)

    monkeypatch.setattr(liveness, "_HOST", [])
    monkeypatch.setattr(liveness, "_read", lambda path, limit=4096: None)
    monkeypatch.setattr(liveness.posix, "readlink", unreadable)
    assert liveness.host() == f"{os.uname().nodename}//"


@pytest.mark.parametrize("raw", ["", "abc", "-1", "1234567890", "12 3", "١٢٣", "+5"])
def test_claude_pid_refuses_what_is_not_a_pid(raw: str) -> None:
    assert claude_code.agent_pid({"CLAUDE_PID": raw}) is None
    assert liveness.process(claude_code.agent_pid({"CLAUDE_PID": raw}))["start"] is None


def test_process_records_the_pid_its_start_and_the_host() -> None:
    pid = os.getpid()
    assert liveness.process(pid) == holder(pid)
    assert liveness.process(None) == {"pid": None, "start": None, "host": liveness.host()}


def test_the_cli_finds_its_client_by_claude_pid_first() -> None:
    assert liveness.agent_process({"CLAUDE_PID": "4242"}) == 4242


def test_the_cli_finds_a_client_among_its_ancestors(tmp_path: Path) -> None:
    """A command run from a Codex agent's shell: no CLAUDE_PID; the nearest ancestor
    named `codex` is the holder (here a link named codex to this Python, running a
    shell that runs the probe)."""
    codex = tmp_path / "codex"
    codex.symlink_to(sys.executable)
    probe = (
        f"import sys; sys.path.insert(0, {str(Path(liveness.__file__).resolve().parents[1])!r}); from agent_hooks import liveness; "
        "print(liveness.agent_process({}))"
    )
    outer = f"import subprocess, sys, os; print(os.getpid()); sys.stdout.flush(); subprocess.run(['/bin/sh', '-c', {sys.executable!r} + ' -c ' + {probe!r}.__repr__()])"
    proc = subprocess.run([str(codex), "-c", outer], capture_output=True, text=True, check=True)
    parent, found = proc.stdout.split()
    assert found == parent


@pytest.mark.parametrize(
    ("argv0", "extra", "client"),
    [("codex", [], "codex"), ("node", ["/opt/gemini-cli/bundle/gemini.js"], "gemini")],
)
def test_the_cli_knows_which_client_it_runs_under(
    tmp_path: Path, argv0: str, extra: list[str], client: str
) -> None:
    """A process named `codex` is Codex; a `node` process running a gemini script is
    Gemini CLI. (A link so named to this Python, running the probe through a shell.)"""
    link = tmp_path / argv0
    link.symlink_to(sys.executable)
    src = str(Path(liveness.__file__).resolve().parents[1])
    probe = (
        f"import sys; sys.path.insert(0, {src!r}); from agent_hooks import liveness; "
        "print(*liveness.agent_client({}))"
    )
    outer = (
        "import os, subprocess, sys; print(os.getpid(), flush=True); "
        f"subprocess.run(['/bin/sh', '-c', {sys.executable!r} + ' -c ' + {probe!r}.__repr__()])"
    )
    script = tmp_path / "outer.py"
    if extra:  # the script itself is the client's (its path names it)
        script = tmp_path / extra[0].lstrip("/")
        script.parent.mkdir(parents=True)
    script.write_text(outer)
    argv = [str(link), str(script)] if extra else [str(link), "-c", outer]
    proc = subprocess.run(argv, capture_output=True, text=True, check=True)
    parent, pid, name = proc.stdout.split()
    assert (pid, name) == (parent, client)
    assert liveness.agent_client({"CLAUDE_PID": "4242"}) == (4242, "claude")


NAMES = ["a) b c) 1 2", ") ) ) ) ) ) )", "x (y) z", "sleep 9 9 9 9", "slé€p"]


@pytest.mark.parametrize("name", NAMES)
def test_start_time_parses_a_command_name_with_parens_and_spaces(tmp_path: Path, name: str) -> None:
    """`/proc/<pid>/stat` puts the command name in parentheses: a name holding `)` and
    spaces must not shift field 22. The process runs `sleep` through a symlink so
    named; the expected value is read knowing that name."""
    link = tmp_path / name
    sleep = shutil.which("sleep")
    assert sleep is not None
    link.symlink_to(sleep)
    child = subprocess.Popen([str(link), "30"])
    try:
        stat = ""
        deadline = time.monotonic() + 10
        while f"({name[:15]})" not in stat:  # until the exec has happened
            assert time.monotonic() < deadline, stat
            stat = Path(f"/proc/{child.pid}/stat").read_text()
        expected = int(stat[len(f"{child.pid} ({name[:15]}) ") :].split()[19])
        assert liveness.start_time(child.pid) == expected
        mine = liveness.start_time(os.getpid())
        assert mine is not None and expected >= mine
        assert liveness.alive(holder(child.pid)) is True
        assert liveness.alive(holder(child.pid, start=expected + 1)) is False
    finally:
        child.kill()
        child.wait()


def test_a_holder_that_is_pid_1_counts() -> None:
    """In a container the client may be the init process."""
    assert liveness.alive(holder(1)) is True


@pytest.mark.parametrize(("raw", "pid"), [("7", 7), ("123456789", 123456789), ("", None),
                                          ("1234567890", None), ("12a", None), ("٣", None)])  # fmt: skip
def test_claude_pid_is_a_decimal_pid_of_at_most_nine_digits(raw: str, pid: int | None) -> None:
    assert claude_code.agent_pid({"CLAUDE_PID": raw}) == pid


def fake_processes(
    monkeypatch: pytest.MonkeyPatch, tree: dict[int, tuple[str, int, str]], parent: int
) -> None:
    """/proc as `liveness` reads it: pid -> (comm, its parent, its command line)."""

    def read(path: str, limit: int = 4096) -> str | None:
        _, _, pid, name = path.split("/")
        if int(pid) not in tree:
            return None
        comm, ppid, cmdline = tree[int(pid)]
        if name == "stat":
            return f"{pid} ({comm}) S {ppid} {pid} {pid} 0 -1 4194560"
        return cmdline.replace(" ", "\x00") + "\x00"

    monkeypatch.setattr(liveness, "_read", read)
    monkeypatch.setattr(liveness.posix, "getppid", lambda: parent)


@pytest.mark.parametrize(
    ("tree", "found"),
    [
        ({30: ("sh", 20, "sh"), 20: ("codex", 10, "codex"), 10: ("bash", 1, "bash")}, (20, "codex")),
        ({30: ("sh", 20, "sh"), 20: ("claude", 1, "claude")}, (20, "claude")),
        ({30: ("sh", 20, "sh"), 20: ("node", 1, "node /opt/gemini-cli/bundle/gemini.js")},
         (20, "gemini")),
        ({30: ("MainThread", 1, "node /usr/lib/node_modules/@openai/codex/bin/codex.js")},
         (30, "codex")),
        ({30: ("node-22", 1, "node claude-code/cli.js")}, (30, "claude")),
        # opencode's bash runs commands straight under its binary (measured, 1.18.33)
        ({30: ("bash", 20, "bash"), 20: ("opencode", 1, "opencode")}, (20, "opencode")),
        ({30: ("opencode.exe", 1, "opencode-ai/bin/opencode.exe")}, (30, "opencode")),
        # Qwen Code's relaunched node process (a Gemini CLI fork: never taken for Gemini)
        ({30: ("bash", 20, "bash"),
          20: ("node", 10, "/usr/bin/node --expose-gc /x/@qwen-code/qwen-code/cli-entry.js -p"),
          10: ("node", 1, "/usr/bin/node /x/.bin/qwen -p")}, (20, "qwen")),
        # only the script a Node.js process runs says which client: never its prompt
        ({30: ("node", 1, "node /x/qwen-code/cli-entry.js -p fix the gemini and claude code")},
         (30, "qwen")),
        ({30: ("node", 20, "node server.js"), 20: ("bash", 1, "bash")}, (None, None)),
        ({30: ("codex) (x", 1, "x")}, (None, None)),  # a `)` in a name: read to the last one
        ({30: ("(codex", 1, "x")}, (None, None)),  # ... and from the first `(`
        ({30: ("a) b", 20, "a"), 20: ("codex", 1, "codex")}, (20, "codex")),  # its parent after
        ({30: ("python3", 1, "python3 claude_helper.py")}, (None, None)),  # not Node.js: by name
        ({30: ("sh", 1, "sh"), 1: ("codex", 0, "codex")}, (1, "codex")),  # a container's init
        ({30: ("sh", 1, "sh"), 1: ("init", 0, "init")}, (None, None)),
        ({30: ("sh", 20, "sh")}, (None, None)),  # an ancestor that cannot be read
    ],
)  # fmt: skip
def test_the_client_is_the_nearest_ancestor_that_is_one(
    monkeypatch: pytest.MonkeyPatch,
    tree: dict[int, tuple[str, int, str]],
    found: tuple[int | None, str | None],
) -> None:
    fake_processes(monkeypatch, tree, parent=30)
    assert liveness.agent_client({}) == found
    assert liveness.agent_process({}) == found[0]


def test_the_walk_up_stops_after_max_ancestors(monkeypatch: pytest.MonkeyPatch) -> None:
    depth = liveness.MAX_ANCESTORS
    tree = {100 + k: ("sh", 100 + k + 1, "sh") for k in range(depth)}
    tree[100 + depth] = ("codex", 1, "codex")
    fake_processes(monkeypatch, tree, parent=100)
    assert liveness.agent_client({}) == (None, None)  # one too far
    fake_processes(monkeypatch, tree, parent=101)
    assert liveness.agent_client({}) == (100 + depth, "codex")


def test_a_stat_line_without_a_parent_ends_the_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(liveness, "_read", lambda path, limit=4096: "30 (sh) S")
    monkeypatch.setattr(liveness.posix, "getppid", lambda: 30)
    assert liveness.agent_client({}) == (None, None)
