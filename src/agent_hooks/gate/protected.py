"""agent-hooks' own files, which agents change only through the CLI.

An agent's Write, Edit, NotebookEdit or visible Bash write into a ledger (any
repository's `<common git dir>/agent-hooks/`, or the state directory's
`agent-hooks/`) or into the state directory's own files (`state-*.json`,
`agent-state.json`, their `.lock`, `.aside` and `.corrupt-*` copies, `agent-hooks.log*`)
is refused: a hand-edited ledger is how one bad entry once switched enforcement
off for a whole project.

Invariants: paths are compared resolved; a directory target is refused when
it holds one of these files (`rm -rf .git` takes the ledger with it). Built-ins
only (PreToolUse asks on every edit): `storage` is not loaded by every PreToolUse.
"""

from __future__ import annotations

from agent_hooks import identity
from agent_hooks import posix_fs as fs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Iterable


def _state_file_name(name: str) -> bool:
    base = name.split(".corrupt-")[0]
    if base.endswith(".lock"):
        base = base[:-5]
    if base.startswith(".") and base.endswith(".aside"):  # `storage.aside_name`
        base = base[1:-6]
    return identity.agent_from_state_file("", base) is not None or base.startswith(
        identity.LOG_FILE
    )


def guarded(
    resolved: str, state_dir: str, ledgers: Iterable[str], directory: bool = False
) -> str | None:
    """What protected thing the resolved target is (or, for a directory target,
    holds): a one-line description, or None when the write is none of our business.
    `ledgers` are the ledger directories of the repositories the target lies in
    (`tool_call.Place`: its `repo.ledger`): a target inside one, or a directory target
    holding one (`rm -rf` of the repository, or above), is refused."""
    data = identity.data_dir(state_dir)
    if fs.is_within(resolved, data) or (directory and fs.is_within(data, resolved)):
        return f"agent-hooks' data in {data}"
    if fs.dirname(resolved) == state_dir and _state_file_name(fs.basename(resolved)):
        return "an agent's state file (or its lock or the hook log)"
    if directory and fs.is_within(state_dir, resolved):
        return f"the agents' state directory {state_dir}"
    for book in ledgers:
        if fs.is_within(resolved, book) or (directory and fs.is_within(book, resolved)):
            return f"the repository's ledger {book}"
    return None


def message(what: str, shown: str) -> str:
    return (
        f"agent-hooks: {shown} is {what}: reservations, leases and state change only through "
        "the `agent-hooks` command (reserve, release, renew, …), never by editing files. "
        "Do not write there; run `agent-hooks --help` for the command you need."
    )
