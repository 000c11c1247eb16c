"""Several "machines" sharing one git remote, for the remote-ledger tests: each is a
clone of a bare repository with a HOME of its own and its own `AGENT_HOOKS_HOST`.
The remote is reached through `file://` or through a `git daemon` on 127.0.0.1
(started and stopped by the tests). Real git only; git never sees the user's
configuration.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agent_hooks import identity, writers
from agent_hooks.leases import lease_store
from agent_hooks.ledger import ledger_sync, remote_git, remote_ledger, reservation_store
from agent_hooks.ledger.repo import Repo
from agent_hooks.reservations import pattern, reservation, reservation_index
from agent_hooks.writers import Writer

NOW = 1_800_000_000.0
REMOTE = "origin"
SRC = Path(__file__).resolve().parents[1] / "src"


@contextmanager
def lock_held_elsewhere(path: str) -> Iterator[None]:
    """`storage.Lock(path)` held by another process (fcntl locks never block their
    own process) until the block ends."""
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys;sys.path.insert(0,sys.argv[2]);from agent_hooks import storage;"
            "l=storage.Lock(sys.argv[1]);assert l.acquire(5);print('held',flush=True);"
            "sys.stdin.read()",
            path,
            str(SRC),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        yield
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(30)


def base_env(home: Path) -> dict[str, str]:
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }


def run_git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(
        ["git", *args],
        cwd=cwd,
        env=env or base_env(cwd),
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode:
        raise RuntimeError(f"git {' '.join(args)}: {proc.stderr.strip()}")
    return proc.stdout.strip()


def bare(path: Path) -> Path:
    """An empty bare repository at `path` (receive-pack allowed for git daemon)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    run_git(path.parent, "init", "-q", "--bare", str(path))
    run_git(path, "config", "daemon.receivepack", "true")
    return path


def free_port() -> int:
    """A TCP port on 127.0.0.1 nothing listens on now (bound to port 0, then freed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Daemon:
    """`git daemon` serving every repository under `base` on a free loopback port."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.port = free_port()
        self.proc = subprocess.Popen(
            [
                "git",
                "daemon",
                "--reuseaddr",
                f"--base-path={base}",
                "--export-all",
                "--enable=receive-pack",
                "--listen=127.0.0.1",
                f"--port={self.port}",
                str(base),
            ],
            env=base_env(base),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + 20
        while True:  # readiness, not an outcome: the tests start once it answers
            if self.proc.poll() is not None:
                raise RuntimeError(f"git daemon exited with {self.proc.returncode}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError("git daemon did not listen within 20 s") from None
                time.sleep(0.02)

    def url(self, repo: Path) -> str:
        return f"git://127.0.0.1:{self.port}/{repo.relative_to(self.base)}"

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except OSError:
                pass
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


class Machine:
    """One machine: a clone of the shared remote with its own HOME and host name."""

    def __init__(self, root: Path, name: str, url: str) -> None:
        self.name = name
        self.home = root / f"home-{name}"
        self.home.mkdir(parents=True)
        self.repo = root / name
        self.environ = {**base_env(self.home), "AGENT_HOOKS_HOST": name}
        run_git(root, "clone", "-q", url, str(self.repo), env=self.environ)
        self.common = self.repo / ".git"
        self.ledger = self.common / "agent-hooks"
        self.ledger.mkdir(mode=0o700)
        self.state_dir = identity.state_dir(self.environ)

    def git(self, **kw: Any) -> remote_git.Git:
        return remote_git.Git(str(self.common), str(self.ledger), self.environ, **kw)

    def switch_on(self, now: float = NOW) -> remote_ledger.Switched:
        return remote_ledger.switch_on(str(self.ledger), self.git(), REMOTE, self.name, now)

    def sync(self, now: float = NOW) -> ledger_sync.SyncResult:
        return ledger_sync.sync(
            str(self.ledger), self.git(), REMOTE, self.name, now, state_dir=self.state_dir
        )

    def claim(self, rel: str, agent: str, now: float = NOW) -> lease_store.Claim:
        minutes = {"AGENT_HOOKS_LEASE_MINUTES": "10"}
        repo = Repo(str(self.repo), self.state_dir, minutes, branch="main")
        return lease_store.claim(
            repo, rel, writers.Writer(agent, "conv-" + agent), now, holder_pid=None
        )

    def meet(self, agent: str, now: float = NOW) -> None:
        """Give `agent` a state file here (what its first hook does): an agent with
        none is told nothing."""
        from agent_hooks.agents import state_file

        state_file.update(identity.Agent(agent, self.state_dir), lambda d: None, now, print)

    def alerts(self, agent: str, now: float = NOW) -> list[str]:
        """What `agent` will be told at its next hook that carries context."""
        from agent_hooks.agents import state_file

        doc, _ = state_file.read(identity.Agent(agent, self.state_dir), now)
        return list(doc.get("alerts") or [])

    def blockers(self, agent: str, rel: str, now: float = NOW) -> list[str]:
        """The patterns of the reservations that refuse `agent` an edit of `rel`
        here (what PreToolUse reads: the hot index, and whether holders count)."""
        from agent_hooks.reservations import blocking, index_records

        hot = reservation_index.load_hot(str(self.ledger))
        if hot is None:
            return []
        counts = blocking.holder_counts(str(self.ledger), 10, now)
        return [
            rec[index_records.PATTERN]
            for rec in blocking.blocking_edit(hot, rel, agent, now, counts)
        ]

    def dropped(self) -> list[dict[str, Any]]:
        found = self.truth().get("dropped")
        return list(found) if isinstance(found, list) else []

    def truth(self) -> dict[str, Any]:
        return reservation_index.load_truth(str(self.ledger)).doc or {}

    def live(self, now: float = NOW) -> list[dict[str, Any]]:
        found = self.truth().get("reservations") or []
        return [r for r in found if reservation.is_live(reservation.checked(r), now)]

    def reserve(
        self, agent: str, text: str, now: float = NOW, *, ttl: int = 3600
    ) -> tuple[bool, remote_ledger.WriteThrough]:
        """What phase 2's `store.reserve` will do when the ledger is shared: under
        the ledger's lock, the store's own tidy and `reservation.plan_reserve`,
        written through to the remote."""
        return reserve_through(str(self.ledger), self.git(), self.name, agent, text, now, ttl=ttl)

    def store_reserve(
        self, agent: str, text: str, now: float = NOW, **kw: Any
    ) -> reservation.Outcome:
        """`reservation_store.reserve` as the CLI calls it on this machine (raises
        ReservationError when the remote does not answer)."""
        return store_reserve(self.state_dir, self.repo, self.environ, agent, text, now, **kw)

    def store_reserve_all(
        self, agent: str, texts: list[str], now: float = NOW, *, reason: str = ""
    ) -> reservation.Outcome:
        """One `agent-hooks reserve` of many patterns (all or none)."""
        return reservation_store.reserve(
            self.place(),
            Writer(agent, None),
            [(text, pattern.compile(text)) for text in texts],
            now,
            reason=reason,
            ttl=3600,
        )

    def force_release(self, rid: str, now: float = NOW) -> reservation.Outcome:
        """`agent-hooks release --force ID` by a person on this machine."""
        return reservation_store.release(
            self.place(), Writer("person", None), now, ids=[rid], force=True, forced_by="person"
        )

    def store_renew(self, agent: str, ttl: int, now: float = NOW) -> reservation.Outcome:
        """`agent-hooks renew` of all the agent's reservations on this machine."""
        return reservation_store.renew(self.place(), Writer(agent, None), now, patterns=[], ttl=ttl)

    def place(self) -> Repo:
        """This machine's repository as the store sees it (its environment: HOME,
        AGENT_HOOKS_HOST, git's)."""
        return Repo(str(self.repo), self.state_dir, self.environ)

    def store_release(self, agent: str, now: float = NOW, **kw: Any) -> reservation.Outcome:
        return reservation_store.release(self.place(), Writer(agent, None), now, **kw)


def store_reserve(
    state_dir: str,
    repo: Path | str,
    environ: dict[str, str],
    agent: str,
    text: str,
    now: float,
    *,
    ttl: int = 3600,
    **kw: Any,
) -> reservation.Outcome:
    kw.setdefault("shared", False)
    kw.setdefault("keep", False)
    return reservation_store.reserve(
        Repo(str(repo), state_dir, environ),
        Writer(agent, None),
        [(text, pattern.compile(text))],
        now,
        reason="",
        ttl=ttl,
        **kw,
    )


def reserve_through(
    ledger: str,
    git: remote_git.Git,
    host: str,
    agent: str,
    text: str,
    now: float,
    *,
    ttl: int = 3600,
) -> tuple[bool, remote_ledger.WriteThrough]:
    from agent_hooks import storage

    requested = [
        {
            "id": "r-" + os.urandom(4).hex(),
            "agent": agent,
            "pattern": text,
            "compiled": pattern.compile(text),
            "mode": reservation.EXCLUSIVE,
            "reason": "",
            "created_at": int(now),
            "expires_at": int(now) + ttl,
            "keep": False,
            "conversation_id": None,
            "holder": None,
            "source": "cli",
        }
    ]
    granted: dict[str, bool] = {}

    def change(doc: dict[str, Any]) -> bool:
        outcome = reservation.Outcome()
        reservation_store._tidy(doc, now, outcome)
        result, conflicts = reservation.plan_reserve(doc["reservations"], requested, now)
        granted["ok"] = not conflicts
        if conflicts:
            return False
        doc["reservations"] = result
        return True

    lock = storage.Lock(reservation_index.lock_path(ledger))
    assert lock.acquire(60)
    try:
        done = remote_ledger.write_through(ledger, git, REMOTE, host, now, change, what="reserved")
    finally:
        lock.release()
    return granted["ok"], done


def sync_processes(ledger: Path) -> list[int]:
    """The detached syncs of `ledger` running now (`remote_view.start_sync`: the
    sh that defers it, then the interpreter), by their command lines."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as handle:
                argv = handle.read().split(b"\0")
        except OSError:
            continue
        if str(ledger).encode() in argv and any(b"ledger_sync" in a for a in argv):
            found.append(int(name))
    return found


def sync_running(ledger: Path) -> bool:
    """Does a detached sync of `ledger` run now? (The scan is repeated a few times:
    a command line read in the instant of an `exec` is empty.)"""
    for _ in range(5):
        if sync_processes(ledger):
            return True
        time.sleep(0.01)
    return False


def _running(pid: int) -> bool:
    """Is `pid` a process that has not ended (a zombie nobody reaped has)?"""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rpartition(b")")[2].split()[0] != b"Z"
    except (OSError, IndexError):
        return False


def wait_for_syncs(ledger: Path, timeout: float = 90.0) -> None:
    """Wait until no detached sync of `ledger` runs (a hook started one): waiting for
    those processes to end, not guessing how long they take. A sync keeps its pid
    from the sh that defers it to the interpreter (each `exec`s the next); its pid is
    followed once seen, and the scan is repeated, since a command line read in the
    instant of an `exec` is empty."""
    deadline = time.monotonic() + timeout
    seen: set[int] = set()
    quiet = 0
    while quiet < 3:
        seen.update(sync_processes(ledger))
        if any(_running(pid) for pid in seen):
            quiet = 0
            if time.monotonic() > deadline:
                raise AssertionError(f"a sync of {ledger} still runs after {timeout:g} s")
        else:
            quiet += 1
        time.sleep(0.02)


def remote_reservations(repo: Path) -> list[dict[str, Any]]:
    """Every reservation in the machines' documents (`grants/<host>.json`) of the
    ledger in the bare repository `repo`, each with its `machine`, ended or not
    by a tombstone (`remote_tombstones`)."""
    import json

    found: list[dict[str, Any]] = []
    for name, text in sorted(remote_files(repo).items()):
        if name.startswith("grants/"):
            found += json.loads(text)["reservations"]
    return found


def remote_tombstones(repo: Path) -> list[dict[str, Any]]:
    import json

    found: list[dict[str, Any]] = []
    for name, text in sorted(remote_files(repo).items()):
        if name.startswith("grants/"):
            found += json.loads(text)["tombstones"]
    return found


def remote_files(repo: Path) -> dict[str, str]:
    """The ledger commit's files in the bare repository `repo` ({} when absent)."""
    try:
        commit = run_git(repo, "rev-parse", "--verify", "-q", remote_git.REF)
    except RuntimeError:
        return {}
    names = run_git(repo, "ls-tree", "-r", "--name-only", commit).splitlines()
    return {name: run_git(repo, "cat-file", "blob", f"{commit}:{name}") for name in names}


class World:
    """One shared remote and the machines that clone it."""

    def __init__(self, tmp: Path, daemon: Daemon | None) -> None:
        self.tmp = tmp
        self.daemon = daemon
        base = daemon.base if daemon is not None else tmp
        self.remote = bare(base / f"remote-{os.urandom(4).hex()}.git")
        self.url = daemon.url(self.remote) if daemon is not None else f"file://{self.remote}"
        self.transport = "daemon" if daemon is not None else "file"

    def machine(self, name: str) -> Machine:
        return Machine(self.tmp, name, self.url)


def bare_git(repo: Path, *args: str, data: bytes | None = None) -> str:
    """git run in the bare repository `repo` itself, as a person on the server could."""
    env = {
        **base_env(repo),
        "GIT_DIR": str(repo),
        "GIT_AUTHOR_NAME": "p",
        "GIT_COMMITTER_NAME": "p",
    }
    out = subprocess.run(["git", *args], env=env, input=data, capture_output=True, check=False)
    if out.returncode:
        raise RuntimeError(f"git {' '.join(args)}: {out.stderr.decode().strip()}")
    return out.stdout.decode().strip()


def set_ref_by_hand(repo: Path, files: dict[str, bytes], kind: str = "commit") -> str:
    """Point the ledger ref of the bare repository `repo` at a commit holding
    `files` (or, `kind="blob"`, at the first file's blob), made by hand."""
    blobs = {
        name: bare_git(repo, "hash-object", "-w", "--stdin", data=data)
        for name, data in files.items()
    }

    def tree(found: dict[str, str]) -> str:
        top = {n: b for n, b in found.items() if "/" not in n}
        folders = {n.partition("/")[0] for n in found if "/" in n}
        lines = [f"100644 blob {b}\t{n}\n" for n, b in top.items()]
        for folder in sorted(folders):
            inner = {n.partition("/")[2]: b for n, b in found.items() if n.startswith(folder + "/")}
            lines.append(f"040000 tree {tree(inner)}\t{folder}\n")
        return bare_git(repo, "mktree", data="".join(lines).encode())

    target = (
        next(iter(blobs.values()))
        if kind == "blob"
        else bare_git(repo, "commit-tree", tree(blobs), "-m", "by hand")
    )
    bare_git(repo, "update-ref", remote_git.REF, target)
    return target


def ledger_commit(repo: Path) -> str | None:
    """The commit the ledger ref of the bare repository `repo` names now (None: absent)."""
    try:
        return bare_git(repo, "rev-parse", "--verify", "-q", remote_git.REF) or None
    except RuntimeError:
        return None


class History:
    """Every commit the ledger ref of a bare repository has named, in order: what a
    fault can set it back to. `record` after each change (the ledger's commits
    have no parents: a rewind picks one from here)."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.commits: list[str] = []

    def record(self) -> None:
        found = ledger_commit(self.repo)
        if found is not None and (not self.commits or self.commits[-1] != found):
            self.commits.append(found)

    def rewind(self, index: int) -> str:
        """Set the ref back to the `index`-th commit recorded (a stale mirror pushed,
        a restore from backup)."""
        target = self.commits[index]
        bare_git(self.repo, "update-ref", remote_git.REF, target)
        return target

    def delete(self) -> None:
        bare_git(self.repo, "update-ref", "-d", remote_git.REF)
