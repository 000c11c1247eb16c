"""The hook log: one line per event worth knowing, in `<state dir>/agent-hooks.log`.

Invariants: a log call never raises and never blocks a hook; each entry is a
single line written with one O_APPEND write, so concurrent hooks never
interleave within a line; the file is 0600 and is rotated to `agent-hooks.log.1`
once it passes 1 MiB. Nothing from outside reaches the file raw: every character
that is not printable (NUL, BEL, ESC and every other C0 or C1 control, DEL,
newlines, format characters, lone surrogates) is escaped (`\\n`, `\\x1b`,
`\\u202e`) and a backslash doubled, so a file path cannot split a line, forge
one or send escape sequences to the terminal of whoever reads the log.
"""

from __future__ import annotations

import posix
import time

from agent_hooks import identity, timestamps
from agent_hooks import posix_fs as fs

MAX_LOG_BYTES = 1 << 20


_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def escape(text: str) -> str:
    """`text` as printable characters on one line (see the module's invariants)."""
    if text.isprintable() and "\\" not in text:
        return text
    out = []
    for c in text:
        if c == "\\":
            out.append("\\\\")
        elif c.isprintable():
            out.append(c)
        elif c in _NAMED:
            out.append(_NAMED[c])
        else:
            code = ord(c)
            out.append(
                f"\\x{code:02x}"
                if code < 0x100
                else f"\\u{code:04x}"
                if code < 0x10000
                else f"\\U{code:08x}"
            )
    return "".join(out)


def log(state_dir: str, event: str, agent: str, message: str, now: float | None = None) -> None:
    stamp = timestamps.iso(time.time() if now is None else now)
    line = (
        f"{stamp} pid={posix.getpid()} agent={escape(agent)} event={escape(event)} "
        f"{escape(message)}\n"
    )
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
