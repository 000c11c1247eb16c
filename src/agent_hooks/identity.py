"""Who the agent is, which project it works in, and where its files live.

Invariants:

* An `AGENT_NAME` becomes part of a file name only after `check_agent_name`
  accepted it: no `/`, no `..`, no NUL or other control character (C0 or C1),
  no invisible or format character (bidi overrides, zero-width marks, line
  separators: they let one name pose as another), no blank at either end, no
  `#` and no leading `~` (the ledger's writer keys use them), at most 128
  characters and at most 200 bytes in UTF-8 (so that every file named after it
  fits in a file name). ntm's pane titles (`proj__cc_1`, `proj__cc_2_opus`)
  pass unchanged.
* Every path derived here lies directly inside the state directory
  (`CLAUDE_CONFIG_DIR`, else `~/.claude`) or inside `<state dir>/agent-hooks/`.
* Without `AGENT_NAME` the agent is the legacy shared identity whose state is
  `agent-state.json` (the original ADR-0003).
"""

from __future__ import annotations

import posix

from agent_hooks import posix_fs as fs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Mapping

MAX_AGENT_NAME = 128
MAX_AGENT_NAME_BYTES = 200
SHARED_STATE_FILE = "agent-state.json"
STATE_PREFIX = "state-"
STATE_SUFFIX = ".json"
LOG_FILE = "agent-hooks.log"
DATA_SUBDIR = "agent-hooks"


class IdentityError(ValueError):
    """`AGENT_NAME` (or another name from outside) cannot be used; the message says why."""


def check_agent_name(name: str) -> str:
    """Return `name` if it is safe inside a file name, else raise IdentityError."""
    if len(name) > MAX_AGENT_NAME:
        raise IdentityError(
            f"AGENT_NAME is {len(name)} characters long; the limit is {MAX_AGENT_NAME}"
        )
    if "/" in name:
        raise IdentityError(f"AGENT_NAME {name!r} contains '/'")
    if ".." in name:
        raise IdentityError(f"AGENT_NAME {name!r} contains '..'")
    for ch in name:
        if ch < " " or "\x7f" <= ch <= "\x9f":
            raise IdentityError(f"AGENT_NAME {name!r} contains a control character")
        if not ch.isprintable():  # bidi and zero-width marks, line separators, lone surrogates
            raise IdentityError(
                f"AGENT_NAME {name!a} contains an invisible or format character "
                f"(U+{ord(ch):04X}), which lets one name pose as another"
            )
    if name != name.strip():
        raise IdentityError(f"AGENT_NAME {name!r} starts or ends with a blank")
    if "#" in name or name.startswith("~"):
        raise IdentityError(
            f"AGENT_NAME {name!r} contains '#' or starts with '~' (both mark writers in the ledger)"
        )
    size = len(name.encode("utf-8", "surrogatepass"))
    if size > MAX_AGENT_NAME_BYTES:
        raise IdentityError(
            f"AGENT_NAME is {size} bytes in UTF-8; the limit is {MAX_AGENT_NAME_BYTES} "
            "(it becomes part of file names)"
        )
    return name


def suspicious(name: str) -> str | None:
    """Why an accepted AGENT_NAME probably is not the name the person meant: a
    pane title a client wrote (`✳ Claude Code`: one starting with a symbol, or holding
    the client's `PANE_TITLE`), a tmux pane id (`%17`), or blank. None for a name that
    looks chosen."""
    stripped = name.strip()
    if not stripped:
        return "it is blank"
    if stripped[0] == "%" and stripped[1:].isdigit():
        return f"it looks like a tmux pane id ({stripped})"
    from agent_hooks.clients import client_table  # a session's start, the CLI

    for client in client_table.modules():
        title = client.PANE_TITLE
        if title and title in stripped.lower():
            return f"it looks like a pane title {client.LABEL} sets ({stripped[:40]})"
    if not (stripped[0].isalnum() or stripped[0] in "_-."):
        return f"it looks like a pane title a client sets ({stripped[:40]})"
    return None


def state_dir(environ: Mapping[str, str]) -> str:
    """`CLAUDE_CONFIG_DIR` when set (Claude Code's own relocation), else `~/.claude`."""
    home = environ.get("HOME") or _home_from_passwd()
    configured = environ.get("CLAUDE_CONFIG_DIR", "")
    if configured:
        return fs.abspath(fs.expanduser(configured, home))
    return fs.join(fs.abspath(home), ".claude")


def _home_from_passwd() -> str:
    import pwd  # built in; only when HOME is unset

    return pwd.getpwuid(posix.getuid()).pw_dir


class Agent:
    """One agent identity and the files that belong to it."""

    __slots__ = ("name", "state_dir", "state_file")

    def __init__(self, name: str | None, state_dir: str) -> None:
        self.name = name
        self.state_dir = state_dir
        self.state_file = (
            f"{STATE_PREFIX}{name}{STATE_SUFFIX}" if name is not None else SHARED_STATE_FILE
        )

    @property
    def label(self) -> str:
        """How people and models see the agent named."""
        return self.name if self.name is not None else "(no AGENT_NAME: shared agent-state.json)"

    @property
    def state_path(self) -> str:
        return fs.join(self.state_dir, self.state_file)

    @property
    def key(self) -> str:
        """A file-name-safe key, distinct for every agent (the state file's stem)."""
        return self.state_file[: -len(STATE_SUFFIX)]


def resolve_agent(environ: Mapping[str, str]) -> Agent:
    """The agent of this process, from `AGENT_NAME`; raises IdentityError for a bad name."""
    name = environ.get("AGENT_NAME", "")
    return Agent(check_agent_name(name) if name else None, state_dir(environ))


def agent_from_state_file(state_dir: str, file_name: str) -> Agent | None:
    """The agent a file in the state directory belongs to, or None if it is not a state file."""
    if file_name == SHARED_STATE_FILE:
        return Agent(None, state_dir)
    if not (file_name.startswith(STATE_PREFIX) and file_name.endswith(STATE_SUFFIX)):
        return None
    name = file_name[len(STATE_PREFIX) : -len(STATE_SUFFIX)]
    try:
        return Agent(check_agent_name(name), state_dir) if name else None
    except IdentityError:
        return None


def data_dir(state_dir: str) -> str:
    """Where agent-hooks keeps everything that is not an agent's state file."""
    return fs.join(state_dir, DATA_SUBDIR)


def log_path(state_dir: str) -> str:
    return fs.join(state_dir, LOG_FILE)
