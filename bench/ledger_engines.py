#!/usr/bin/env python3
"""Ledger engines on loopback (docs/adr/0016-ledger-beyond-one-machine.md): what
one ledger operation costs with the local file ledger, with compare-and-swap
pushes of a ref to a bare git repository (file://, git daemon, ssh), with Redis,
and with the mcp_agent_mail server. Prints median and p95 milliseconds over
--runs runs, and ratios to `python -I -S -c pass` for whole hook-like
processes; exits 0 (a report, not a test). Every server it starts listens on
127.0.0.1 only and is stopped before it exits.

    python bench/ledger_engines.py [--runs 60] [--only local,git,redis,mcp,process]
        [--mcp-agent-mail-python /abs/venv/bin/python] [--no-ssh]

Needs `git` (and `git daemon`); Redis cases need `redis-server` on PATH and the
`redis` client in this interpreter; ssh cases need root and /usr/sbin/sshd (a
throwaway sshd on a loopback port with keys made here, in a temp directory);
mcp_agent_mail cases need an interpreter that has it installed. A missing one is
reported as skipped.
"""

from __future__ import annotations

import argparse
import http.client
import json
import math
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from agent_hooks import jsonio, storage  # noqa: E402

REF = "refs/agent-hooks/ledger"
LEASE = {
    "path": "src/pkg/module.py",
    "agent": "bench__cc_1",
    "pid": 4242,
    "started": 1.7e9,
    "host": "box-1",
    "claimed_at": 1.7e9,
    "expires_at": 1.7e9 + 600,
}


def stats(times: list[float]) -> tuple[float, float]:
    """(median, p95) in milliseconds."""
    ordered = sorted(times)
    p95 = ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]
    return statistics.median(ordered) * 1000, p95 * 1000


def timed(
    action: Callable[[int], object], runs: int, prepare: Callable[[int], object] | None = None
) -> list[float]:
    action(-1)  # warm caches and connections
    times = []
    for n in range(runs):
        if prepare is not None:
            prepare(n)
        began = time.perf_counter()
        action(n)
        times.append(time.perf_counter() - began)
    return times


def report(label: str, times: list[float]) -> None:
    median, p95 = stats(times)
    print(f"  {label:<62} median {median:8.3f} ms   p95 {p95:8.3f} ms   (n={len(times)})")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_for_port(port: int, proc: subprocess.Popen[bytes], limit: float = 60.0) -> float:
    """Seconds until 127.0.0.1:port accepts a connection."""
    began = time.perf_counter()
    while time.perf_counter() - began < limit:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return time.perf_counter() - began
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listened on {port} within {limit:g} s")


def stop(proc: subprocess.Popen[bytes] | None) -> None:
    if proc is not None and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def run(
    cmd: list[str],
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    data: bytes | None = None,
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(cmd, cwd=cwd, env=env, input=data, capture_output=True, check=False)


def git(
    work: Path, *args: str, env: dict[str, str] | None = None, data: bytes | None = None
) -> str:
    done = run(["git", "-C", str(work), *args], env=env, data=data)
    if done.returncode:
        raise RuntimeError(f"git {' '.join(args)}: {done.stderr.decode(errors='replace')}")
    return done.stdout.decode().strip()


# --- the local file ledger -----------------------------------------------------------


def bench_local(tmp: Path, runs: int) -> None:
    print("local file ledger (in process; what a hook does after start-up)")
    directory = tmp / "ledger"
    directory.mkdir()
    lease = directory / "lease.json"
    storage.write_json_atomic(str(lease), LEASE, durable=False)
    report(
        f"read + parse one lease file ({lease.stat().st_size} B)",
        timed(lambda n: jsonio.loads(storage.read_bytes(str(lease)) or b"{}"), runs),
    )

    def locked_write(durable: bool) -> Callable[[int], object]:
        def write(n: int) -> None:
            with storage.Lock(str(lease) + ".lock") as lock:
                assert lock is not None
                storage.write_json_atomic(str(lease), dict(LEASE, claimed_at=n), durable=durable)

        return write

    report(
        "fcntl-locked write of a lease (temp + rename), no fsync", timed(locked_write(False), runs)
    )
    report("fcntl-locked write of a lease (temp + rename), fsync", timed(locked_write(True), runs))


# --- git: compare-and-swap pushes of one ref ----------------------------------------


def make_commits(work: Path, parent: str, count: int) -> list[str]:
    """A chain of `count` ledger commits on top of `parent` (untimed)."""
    made = []
    for n in range(count):
        blob = git(work, "hash-object", "-w", "--stdin", data=json.dumps(dict(LEASE, n=n)).encode())
        tree = git(work, "mktree", data=f"100644 blob {blob}\tledger.json\n".encode())
        parent = git(work, "commit-tree", tree, "-p", parent, "-m", f"ledger {os.urandom(8).hex()}")
        made.append(parent)
    return made


def push_cas(work: Path, url: str, old: str, new: str, env: dict[str, str]) -> bool:
    done = run(
        [
            "git",
            "-C",
            str(work),
            "push",
            "--quiet",
            "--porcelain",
            f"--force-with-lease={REF}:{old}",
            url,
            f"{new}:{REF}",
        ],
        env=env,
    )
    return done.returncode == 0


def race(work: Path, url: str, env: dict[str, str], contenders: int, rounds: int) -> list[int]:
    """Each round `contenders` processes push different commits expecting the same old
    value at once; the number that succeeded in each round."""
    winners = []
    for _ in range(rounds):
        old = git(work, "ls-remote", url, REF, env=env).split()[0]
        candidates = [make_commits(work, old, 1)[0] for _ in range(contenders)]
        procs = [
            subprocess.Popen(
                [
                    "git",
                    "-C",
                    str(work),
                    "push",
                    "--quiet",
                    f"--force-with-lease={REF}:{old}",
                    url,
                    f"{new}:{REF}",
                ],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for new in candidates
        ]
        winners.append(sum(1 for p in procs if p.wait() == 0))
    return winners


def bench_git_url(
    name: str, work: Path, other: Path, url: str, env: dict[str, str], runs: int
) -> None:
    print(f"  -- {name}: {url}")
    old = git(work, "ls-remote", url, REF, env=env).split()[0]
    chain = make_commits(work, old, runs + 1)
    state = {"old": old}

    def push(n: int) -> None:
        new = chain[n + 1]  # n = -1 is the warm-up
        if not push_cas(work, url, state["old"], new, env):
            raise RuntimeError(f"CAS push to {url} refused")
        state["old"] = new

    report("CAS push of a new ledger commit (--force-with-lease)", timed(push, runs))
    stale = make_commits(work, old, 1)[0]
    print(
        f"  a push expecting a stale old value is refused: {not push_cas(work, url, old, stale, env)}"
    )
    report(
        "git ls-remote of the ref", timed(lambda n: git(work, "ls-remote", url, REF, env=env), runs)
    )
    fetch = ["fetch", "--quiet", "--no-tags", url, f"+{REF}:refs/agent-hooks/seen"]
    report("git fetch of the ref, unchanged", timed(lambda n: git(other, *fetch, env=env), runs))
    report(
        "git fetch + cat-file after another writer's push",
        timed(
            lambda n: (
                git(other, *fetch, env=env),
                git(other, "cat-file", "blob", "refs/agent-hooks/seen:ledger.json"),
            ),
            runs,
            prepare=lambda n: push_one_more(work, url, state, env),
        ),
    )
    rounds = race(work, url, env, contenders=8, rounds=10)
    print(f"  8 processes CAS-pushing at once, 10 rounds: winners per round {rounds}")


def push_one_more(work: Path, url: str, state: dict[str, str], env: dict[str, str]) -> None:
    new = make_commits(work, state["old"], 1)[0]
    if not push_cas(work, url, state["old"], new, env):
        raise RuntimeError("CAS push refused")
    state["old"] = new


def start_sshd(tmp: Path) -> tuple[subprocess.Popen[bytes], int, str] | None:
    sshd = shutil.which("sshd") or "/usr/sbin/sshd"
    if os.geteuid() != 0 or not os.path.exists(sshd) or not shutil.which("ssh-keygen"):
        return None
    keys = tmp / "ssh"
    keys.mkdir()
    for key in ("host", "user"):
        run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(keys / key)])
    port = free_port()
    (keys / "sshd_config").write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {keys / 'host'}\n"
        f"AuthorizedKeysFile {keys / 'user.pub'}\nStrictModes no\nPasswordAuthentication no\n"
        "PermitRootLogin prohibit-password\nUsePAM no\nPidFile none\n"
    )
    Path("/run/sshd").mkdir(exist_ok=True)  # sshd's privilege-separation directory
    proc = subprocess.Popen(
        [sshd, "-D", "-e", "-f", str(keys / "sshd_config")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_for_port(port, proc)
    command = (
        f"ssh -i {keys / 'user'} -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null "
        "-o LogLevel=ERROR -o BatchMode=yes"
    )
    return proc, port, command


def bench_git(tmp: Path, runs: int, ssh: bool) -> None:
    print("git: a ref on a shared bare repository (each operation spawns git)")
    remote = tmp / "remote.git"
    work, other = tmp / "work", tmp / "other"
    run(["git", "init", "--quiet", "--bare", str(remote)])
    for repo in (work, other):
        run(["git", "init", "--quiet", str(repo)])
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="bench",
        GIT_AUTHOR_EMAIL="bench@localhost",
        GIT_COMMITTER_NAME="bench",
        GIT_COMMITTER_EMAIL="bench@localhost",
        GIT_TERMINAL_PROMPT="0",
    )
    os.environ.update(env)
    root = make_commits_root(work)
    git(work, "push", "--quiet", f"file://{remote}", f"{root}:{REF}")
    report("git --version (spawning git at all)", timed(lambda n: run(["git", "--version"]), runs))
    report(
        "make one ledger commit (hash-object, mktree, commit-tree)",
        timed(lambda n: make_commits(work, root, 1), runs),
    )
    bench_git_url("file", work, other, f"file://{remote}", env, runs)

    port = free_port()
    daemon = subprocess.Popen(
        [
            "git",
            "daemon",
            "--reuseaddr",
            f"--base-path={tmp}",
            "--export-all",
            "--enable=receive-pack",
            "--listen=127.0.0.1",
            f"--port={port}",
            str(tmp),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, daemon)
        bench_git_url("git daemon", work, other, f"git://127.0.0.1:{port}/remote.git", env, runs)
    finally:
        stop(daemon)

    started = start_sshd(tmp) if ssh else None
    if started is None:
        print("  -- ssh: skipped (needs root, sshd and ssh-keygen, and not --no-ssh)")
        return
    sshd, port, command = started
    try:
        url = f"ssh://root@127.0.0.1:{port}{remote}"
        bench_git_url(
            "ssh, a new connection per operation",
            work,
            other,
            url,
            dict(env, GIT_SSH_COMMAND=command),
            runs,
        )
        mux = (
            f"{command} -o ControlMaster=auto -o ControlPath={tmp}/ssh/mux-%C -o ControlPersist=120"
        )
        bench_git_url(
            "ssh, multiplexed (ControlMaster, ControlPersist)",
            work,
            other,
            url,
            dict(env, GIT_SSH_COMMAND=mux),
            runs,
        )
        run(
            [
                "ssh",
                "-o",
                f"ControlPath={tmp}/ssh/mux-%C",
                "-O",
                "exit",
                "-p",
                str(port),
                "root@127.0.0.1",
            ]
        )
    finally:
        stop(sshd)


def make_commits_root(work: Path) -> str:
    blob = git(work, "hash-object", "-w", "--stdin", data=b"{}")
    tree = git(work, "mktree", data=f"100644 blob {blob}\tledger.json\n".encode())
    return git(work, "commit-tree", tree, "-m", "ledger")


# --- Redis ---------------------------------------------------------------------------


def resp(*args: str) -> bytes:
    out = [f"*{len(args)}\r\n".encode()]
    for arg in args:
        data = arg.encode()
        out.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(out)


def raw_redis(port: int, command: bytes) -> bytes:
    """One command on a new connection, as a new hook process would have to."""
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(command)
        reply = s.recv(65536)
        if reply.startswith(b"$") and not reply.startswith(b"$-1"):
            header, _, rest = reply.partition(b"\r\n")
            while len(rest) < int(header[1:]) + 2:
                rest += s.recv(65536)
        return reply


CAS_LUA = """
if (redis.call('GET', KEYS[2]) or '0') ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
return redis.call('INCR', KEYS[2])
"""


def redis_cases(client: Any, port: int, runs: int) -> None:
    doc = json.dumps(LEASE)
    client.set("ledger:doc", json.dumps({"reservations": []}))
    client.set("ledger:ver", 0)
    report(
        "GET, new connection (raw RESP over a socket)",
        timed(lambda n: raw_redis(port, resp("GET", "ledger:doc")), runs),
    )
    report(
        "SET lease NX PX 600000, new connection (raw RESP)",
        timed(
            lambda n: raw_redis(port, resp("SET", f"lease:raw{n}", doc, "NX", "PX", "600000")), runs
        ),
    )
    report("GET, open connection (redis-py)", timed(lambda n: client.get("ledger:doc"), runs))
    report(
        "SET lease NX PX 600000, open connection (redis-py)",
        timed(lambda n: client.set(f"lease:{n}", doc, nx=True, px=600_000), runs),
    )
    cas = client.register_script(CAS_LUA)

    def lua_cas(n: int) -> None:
        version = client.get("ledger:ver") or b"0"
        if not cas(keys=["ledger:doc", "ledger:ver"], args=[version.decode(), doc]):
            raise RuntimeError("Lua CAS refused")

    report("GET version + Lua CAS of the document (EVALSHA)", timed(lua_cas, runs))

    def watch_multi(n: int) -> None:
        with client.pipeline() as pipe:
            pipe.watch("ledger:doc")
            pipe.get("ledger:doc")
            pipe.multi()
            pipe.set("ledger:doc", doc)
            pipe.execute()

    report("WATCH, GET, MULTI, SET, EXEC of the document", timed(watch_multi, runs))
    client.set("lease:taken", "a", px=600_000)
    second = client.set("lease:taken", "b", nx=True, px=600_000)
    print(f"  a second SET NX on a held lease is refused: {second is None}")
    client.close()


def bench_redis(tmp: Path, runs: int) -> None:
    try:
        import redis
    except ImportError:
        print("Redis: skipped (no `redis` client in this interpreter)")
        return
    server = shutil.which("redis-server")
    if server is None:
        print("Redis: skipped (no redis-server on PATH)")
        return
    version = run([server, "--version"]).stdout.decode().split()[2]
    print(f"Redis ({version}, client redis-py {redis.__version__})")
    for persistence, flags in (
        ("no persistence", ["--save", "", "--appendonly", "no"]),
        (
            "appendonly, appendfsync always",
            ["--save", "", "--appendonly", "yes", "--appendfsync", "always"],
        ),
    ):
        port = free_port()
        data = tmp / f"redis-{port}"
        data.mkdir()
        proc = subprocess.Popen(
            [server, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(data), *flags],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_for_port(port, proc)
            print(f"  -- {persistence}")
            redis_cases(redis.Redis(host="127.0.0.1", port=port), port, runs)
        finally:
            stop(proc)


# --- mcp_agent_mail ------------------------------------------------------------------


class Mcp:
    def __init__(self, port: int) -> None:
        self.port = port

    def call(self, method: str, params: dict[str, object]) -> dict[str, object]:
        """One JSON-RPC request on a new HTTP connection (a hook is a new process)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
        conn.request(
            "POST",
            "/api/",
            body,
            {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
        )
        reply = json.loads(conn.getresponse().read())
        conn.close()
        if "error" in reply or reply.get("result", {}).get("isError"):
            raise RuntimeError(f"{method} {params}: {reply}")
        result: dict[str, object] = reply["result"]
        return result

    def tool(self, tool: str, /, **arguments: object) -> dict[str, object]:
        structured = self.call("tools/call", {"name": tool, "arguments": arguments})
        content = structured.get("structuredContent")
        assert isinstance(content, dict)
        return content


def start_mcp_agent_mail(python: str, tmp: Path) -> tuple[subprocess.Popen[bytes], int, float]:
    port = free_port()
    store = tmp / "mcp-agent-mail"
    store.mkdir()
    env = dict(
        os.environ,
        STORAGE_ROOT=str(store / "archive"),
        DATABASE_URL=f"sqlite+aiosqlite:///{store}/db.sqlite3",
        HTTP_ALLOW_LOCALHOST_UNAUTHENTICATED="true",
        LLM_ENABLED="false",
        LITELLM_LOCAL_MODEL_COST_MAP="True",
    )  # no fetch of litellm's remote price list
    proc = subprocess.Popen(
        [
            python,
            "-m",
            "mcp_agent_mail.http",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "warning",
        ],
        cwd=store,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return proc, port, wait_for_port(port, proc, limit=120)


def bench_mcp(tmp: Path, runs: int, python: str | None) -> None:
    if python is None:
        print("mcp_agent_mail: skipped (give --mcp-agent-mail-python)")
        return
    version = run(
        [python, "-c", "import importlib.metadata as m; print(m.version('mcp-agent-mail'))"]
    )
    print(
        f"mcp_agent_mail {version.stdout.decode().strip()} (HTTP transport, SQLite + its git archive)"
    )
    proc, port, began = start_mcp_agent_mail(python, tmp)
    try:
        rss = next(
            line
            for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines()
            if line.startswith("VmRSS")
        )
        print(f"  server listening after {began:.1f} s; {rss.split(':')[1].strip()} resident")
        project = tmp / "project"
        run(["git", "init", "--quiet", str(project)])
        mcp = Mcp(port)
        slug = mcp.tool("ensure_project", human_key=str(project))["slug"]
        tokens = {
            name: mcp.tool(
                "register_agent", project_key=str(project), program="bench", model="none", name=name
            )["registration_token"]
            for name in ("GreenCastle", "BlueLake")
        }

        def reserve(agent: str, path: str) -> dict[str, object]:
            return mcp.tool(
                "file_reservation_paths",
                project_key=str(project),
                agent_name=agent,
                paths=[path],
                ttl_seconds=600,
                exclusive=True,
                registration_token=tokens[agent],
            )

        uri = f"resource://file_reservations/{slug}?active_only=true"
        report(
            "resources/read file_reservations (the hot read), no reservation",
            timed(lambda n: mcp.call("resources/read", {"uri": uri}), runs),
        )
        report(
            "health_check tool call (an MCP call doing no ledger work)",
            timed(lambda n: mcp.tool("health_check"), runs),
        )
        report(
            "file_reservation_paths of one new path (a claim)",
            timed(lambda n: reserve("GreenCastle", f"src/f{n}.py"), runs),
        )
        report(
            f"resources/read file_reservations, {runs + 1} held",
            timed(lambda n: mcp.call("resources/read", {"uri": uri}), runs),
        )
        report(
            "release_file_reservations of one path",
            timed(
                lambda n: mcp.tool(
                    "release_file_reservations",
                    project_key=str(project),
                    agent_name="GreenCastle",
                    paths=[f"src/f{n}.py"],
                    registration_token=tokens["GreenCastle"],
                ),
                runs,
            ),
        )
        reserve("GreenCastle", "src/held.py")
        clash = reserve("BlueLake", "src/held.py")
        granted, conflicts = clash.get("granted"), clash.get("conflicts")
        print(
            f"  a conflicting exclusive request: granted {len(granted) if isinstance(granted, list) else granted}, "
            f"conflicts reported {len(conflicts) if isinstance(conflicts, list) else conflicts}"
        )
    finally:
        stop(proc)


# --- whole processes, as a hook is one -----------------------------------------------


def bench_process(tmp: Path, runs: int, python: str, venv_site: str | None) -> None:
    """Paired (A B A B …) wall time of a fresh `python -I -S -c CODE` against `-c pass`."""
    print(f"whole processes, ratio to `{python} -I -S -c pass` (paired, median of {runs})")
    lease = tmp / "proc-lease.json"
    storage.write_json_atomic(str(lease), LEASE, durable=False)
    cases: dict[str, str] = {
        "read a lease file (posix.open/read)": f"import posix\nfd = posix.open({str(lease)!r}, posix.O_RDONLY)\nposix.read(fd, 65536)",
    }
    redis_proc = None
    server = shutil.which("redis-server")
    if server:
        port = free_port()
        redis_proc = subprocess.Popen(
            [
                server,
                "--port",
                str(port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(tmp),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for_port(port, redis_proc)
        get = resp("GET", "ledger:doc")
        cases["Redis GET on a new connection (_socket, raw RESP)"] = (
            f"import _socket\ns = _socket.socket()\ns.connect(('127.0.0.1', {port}))\n"
            f"s.sendall({get!r})\ns.recv(65536)\ns.close()"
        )
    if venv_site:
        cases["import redis (redis-py, from the venv's site-packages)"] = (
            f"import sys\nsys.path.append({venv_site!r})\nimport redis"
        )
    try:
        baseline = [python, "-I", "-S", "-c", "pass"]
        ratios: dict[str, list[float]] = {name: [] for name in cases}
        walls: dict[str, list[float]] = {name: [] for name in cases}
        bases: list[float] = []
        for code in cases.values():
            run([python, "-I", "-S", "-c", code])
        for _ in range(runs):
            for name, code in cases.items():
                began = time.perf_counter()
                subprocess.run(baseline, check=False)
                base = time.perf_counter() - began
                began = time.perf_counter()
                subprocess.run(
                    [python, "-I", "-S", "-c", code], check=False, stdout=subprocess.DEVNULL
                )
                took = time.perf_counter() - began
                bases.append(base)
                walls[name].append(took)
                ratios[name].append(took / base)
        report("python -I -S -c pass", bases)
        for name in cases:
            median, p95 = stats(walls[name])
            print(
                f"  {name:<62} {statistics.median(ratios[name]):5.2f}x   "
                f"median {median:7.2f} ms   p95 {p95:7.2f} ms"
            )
    finally:
        stop(redis_proc)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--only", default="local,git,redis,mcp,process")
    parser.add_argument("--mcp-agent-mail-python", default=None)
    parser.add_argument("--no-ssh", action="store_true")
    args = parser.parse_args()
    only = set(args.only.split(","))
    python = os.path.realpath(sys.executable)
    venv_site = next((p for p in sys.path if p.endswith("site-packages") and sys.prefix in p), None)
    print(
        f"{run(['git', '--version']).stdout.decode().strip()}; Python {sys.version.split()[0]}; "
        f"{os.cpu_count()} cores; {args.runs} runs per case"
    )
    print(f"load average at start: {Path('/proc/loadavg').read_text().split()[:3]}")
    with tempfile.TemporaryDirectory(prefix="ledger-engines-") as tmpdir:
        tmp = Path(tmpdir)
        if "local" in only:
            bench_local(tmp, args.runs)
        if "git" in only:
            bench_git(tmp, args.runs, ssh=not args.no_ssh)
        if "redis" in only:
            bench_redis(tmp, args.runs)
        if "mcp" in only:
            bench_mcp(tmp, args.runs, args.mcp_agent_mail_python)
        if "process" in only:
            bench_process(tmp, args.runs, python, venv_site)
    print(f"load average at end: {Path('/proc/loadavg').read_text().split()[:3]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
