"""The hook log: one line per event worth knowing, in `<state dir>/agent-hooks.log`.

Invariants: a log call never raises and never blocks a hook; each entry is a
single line (newlines in messages are escaped) written with one O_APPEND write,
so concurrent hooks never interleave within a line; the file is 0600 and is
rotated to `agent-hooks.log.1` once it passes 1 MiB.
"""

from __future__ import annotations

import posix
import time

from agent_hooks import identity
from agent_hooks import posix_fs as fs

MAX_LOG_BYTES = 1 << 20


def log(state_dir: str, event: str, agent: str, message: str, now: float | None = None) -> None:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() if now is None else now))
    text = message.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")
    line = f"{stamp} pid={posix.getpid()} agent={agent} event={event} {text}\n"
    path = identity.log_path(state_dir)
    try:
        fs.makedirs(state_dir, 0o700)
        fd = posix.open(
            path,
            posix.O_WRONLY
            | posix.O_APPEND
            | posix.O_CREAT
            | posix.O_NOFOLLOW
            | posix.O_CLOEXEC
            | posix.O_NONBLOCK,  # a FIFO planted there must not block a hook
            0o600,
        )
        try:
            st = posix.fstat(fd)
            if st.st_mode & fs.S_IFMT != fs.S_IFREG:
                return  # not a regular file: write nothing there
            if st.st_size > MAX_LOG_BYTES:
                posix.replace(path, path + ".1")
            posix.write(fd, line.encode("utf-8", "replace"))
        finally:
            posix.close(fd)
    except OSError:
        pass
