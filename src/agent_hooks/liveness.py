"""Is the client process behind a claim still running?

Every reservation and lease records its holder's process (the client's: a hook's
client says which, `holder_pid`; the CLI finds it, `agent_process`), the process's
start time, and the host it runs on.

Invariants:

* `host` names a process namespace, not a machine name alone:
  `<nodename>/<boot id>/<pid namespace>`. Two containers on one kernel have
  different pid namespaces, so neither ever judges the other's pid.
* On this host a holder is alive while a process with its pid exists, has not
  exited (a zombie waiting to be reaped is dead), *and* was started when the
  claim says (`/proc/<pid>/stat` field 22); a reused pid is therefore not
  mistaken for the holder. Where `/proc` cannot be read, the pid alone decides.
* `alive` returns None when it cannot tell (another host, no pid recorded): the
  caller falls back to time (a lease's idle limit, a reservation's expiry or its
  holder's heartbeat).

Built-ins only; nothing is read until a claim is written or a holder would block.
"""

from __future__ import annotations

import posix

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Mapping
    from typing import Any

_HOST: list[str] = []


def _read(path: str, limit: int = 4096) -> str | None:
    try:
        fd = posix.open(path, posix.O_RDONLY | posix.O_CLOEXEC)
    except OSError:
        return None
    try:
        return posix.read(fd, limit).decode("ascii", "replace")
    except OSError:
        return None
    finally:
        posix.close(fd)


def host() -> str:
    """This process's host: `<nodename>/<boot id>/<pid namespace>` (parts it cannot
    read are left empty)."""
    if not _HOST:
        boot = (_read("/proc/sys/kernel/random/boot_id") or "").strip()[:36]
        try:
            namespace = posix.readlink("/proc/self/ns/pid")
        except OSError:
            namespace = ""
        _HOST.append(f"{posix.uname().nodename}/{boot}/{namespace}")
    return _HOST[0]


def _proc_stat(pid: int) -> tuple[str, int] | None:
    """(state, start time in clock ticks after boot) of process `pid`, if readable."""
    text = _read(f"/proc/{pid}/stat")
    if text is None:
        return None
    fields = text.rpartition(")")[2].split()  # fields 1-2 (pid, name) come before ")"
    try:
        return fields[0], int(fields[19])  # fields 3 and 22 of the whole line
    except (IndexError, ValueError):
        return None


def start_time(pid: int) -> int | None:
    """When process `pid` started (clock ticks after boot), or None if unknown."""
    found = _proc_stat(pid)
    return found[1] if found is not None else None


def _pid(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 1 << 31:
        return value
    return None


MAX_ANCESTORS = 16


def agent_process(environ: Mapping[str, str]) -> int | None:
    """The client process (any client of `clients.client_table`) a command runs under —
    what a reservation made by `agent-hooks reserve` from an agent's shell lives with:
    the process the client names in the environment (`agent_pid`: Claude Code's
    `CLAUDE_PID`), else the nearest ancestor process that is one of the clients. None
    from a plain shell, or where /proc cannot be read. Not for hooks: a hook's client
    passes its own (`holder_pid`)."""
    return agent_client(environ)[0]


def agent_client(environ: Mapping[str, str]) -> tuple[int | None, str | None]:
    """(`agent_process`, the name of that client), or (None, None). An ancestor is a
    client when its `comm` is one of the client's `PROCESS_NAMES`, or when it is a
    Node.js process whose script (its first argument that is no option) holds one of
    the client's `SCRIPT_WORDS` — never a word elsewhere on the line (a prompt)."""
    from agent_hooks.clients import client_table  # the CLI only: every client's module

    clients = client_table.modules()
    for client in clients:
        pid = client.agent_pid(environ)
        if pid is not None:
            return pid, client.NAME
    here = posix.getppid()
    for _ in range(MAX_ANCESTORS):
        if here < 1:  # pid 1 is asked too: in a container the client may be its init
            return None, None
        stat = _read(f"/proc/{here}/stat")
        if stat is None:
            return None, None
        comm = stat[stat.find("(") + 1 : stat.rfind(")")]
        for client in clients:
            if comm in client.PROCESS_NAMES:
                return here, client.NAME
        if comm in ("node", "MainThread") or comm.startswith("node"):
            script = _script((_read(f"/proc/{here}/cmdline") or "").split("\x00"))
            for client in clients:
                if any(word in script for word in client.SCRIPT_WORDS):
                    return here, client.NAME
        try:
            here = int(stat.rpartition(")")[2].split()[1])
        except (IndexError, ValueError):
            return None, None
    return None, None


def _script(argv: list[str]) -> str:
    """The script a Node.js command line runs: its first argument that is no option."""
    for word in argv[1:]:
        if word and not word.startswith("-"):
            return word
    return ""


def process(pid: int | None) -> dict[str, Any]:
    """The holder fields of a claim made now on behalf of the client process `pid`
    (None: no process, as from a plain shell: the claim then lives by time alone)."""
    return {"pid": pid, "start": start_time(pid) if pid else None, "host": host()}


def pid_exists(pid: int) -> bool:
    try:
        posix.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: it exists
    except OSError:
        return True
    return True


def alive(holder: Mapping[str, Any]) -> bool | None:
    """True/False when the holder's process can be judged from here, else None."""
    pid = _pid(holder.get("pid"))
    if pid is None or holder.get("host") != host():
        return None
    if not pid_exists(pid):
        return False
    found = _proc_stat(pid)
    if found is None:
        return True  # no /proc: the pid alone decides
    state, started = found
    if state in ("Z", "X"):
        return False  # exited, not yet reaped by its parent
    recorded = holder.get("start")
    if not isinstance(recorded, int) or isinstance(recorded, bool):
        return True
    return started == recorded
