"""A held file found changed by someone else, put down to the shell commands that
were running when it changed (`command_windows`, from `command_log`): who the holder is told made the
change, and what each of those writers is told at its next hook
(docs/adr/0027-changes-put-down-to-commands.md).

Invariants:

* A change is put down to the writers whose shell command in the file's work tree
  ran at the change's moment (its mtime; a removal's, its directory's), give or
  take `tool_use.SLACK` — never to the holder itself (its own command is judged by
  the holder's own window) — read once per ledger per hook, only when a change was
  found. One such writer made it; several may each have made it, and are each
  named so.
* Each writer is told once per hook (its agent's alerts, `state_file.tell`): which
  held files its command changed or may have changed, whose they are, that the
  holder has been told. A writer of the holder's own agent is not told (the holder
  is, and it shares that agent's alerts); a writer whose agent keeps no state here
  (another machine, another HOME) cannot be: the holder is not told it was.
* Every name shown comes from `writers.describe` over what `command_windows` read
  as safe to show.

Loaded only when a held file was found changed.
"""

from __future__ import annotations

import time

from agent_hooks import writers
from agent_hooks.leases import command_windows, lease_messages, writer_cards

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from agent_hooks.leases.command_windows import Commands, Running
    from agent_hooks.leases.held_files import Change

MAX_NAMED = 10  # files one writer's notice names; the rest are counted


def clock(moment: float) -> str:
    """A moment of today as people read it on a clock: `14:03:07`."""
    return time.strftime("%H:%M:%S", time.localtime(moment))


class Blame:
    """Which writers' shell commands ran when held files changed, and what they are
    told: `running` for each change (windows read once per ledger), `told` for whom
    `tell` reached."""

    __slots__ = ("_cards", "_commands", "_for", "holder", "now", "state_dir", "told")

    def __init__(self, holder: writers.Writer, state_dir: str, now: float) -> None:
        self.holder = holder
        self.state_dir = state_dir
        self.now = now
        self._commands: dict[str, Commands] = {}
        self._cards: dict[tuple[str, str], dict[str, Any] | None] = {}
        # writer key -> (the writer, the ledger, [(change, the other runners' labels)])
        self._for: dict[str, tuple[dict[str, Any], str, list[tuple[Change, list[str]]]]] = {}
        self.told: set[str] = set()

    def running(self, change: Change, earliest: float) -> list[Running]:
        """The writers whose shell command was running when `change` was made (see
        the module); `earliest`: the earliest change of this hook in that ledger."""
        commands = self._commands.get(change.ledger)
        if commands is None:
            commands = command_windows.load(change.ledger, earliest, self.now)
            self._commands[change.ledger] = commands
        return commands.running_at(change.worktree, change.at, skip=self.holder.key)

    def label(self, ledger: str, writer: dict[str, Any]) -> str:
        """How a writer is named (its card's description and name, when it has one)."""
        key = (ledger, str(writer.get("writer")))
        if key not in self._cards:
            self._cards[key] = writer_cards.card(ledger, key[1])
        return lease_messages.holder_label(writer, self._cards[key])

    def note(self, change: Change, running: list[Running], holder_ran: bool) -> None:
        """Keep what each writer in `running` is to be told of `change`;
        `holder_ran`: the holder's own command ran then too."""
        labels = [self.label(change.ledger, item.writer) for item in running]
        if holder_ran:
            labels.append(f"{self.holder.label()} (its holder) itself")
        for n, item in enumerate(running):
            key = str(item.writer["writer"])
            owner = writers.owner_of(item.writer.get("agent"), item.writer.get("conversation"))
            if owner == self.holder.owner:
                continue  # the holder's own agent: it shares the holder's alerts
            entry = self._for.setdefault(key, (item.writer, change.ledger, []))
            entry[2].append((change, labels[:n] + labels[n + 1 :]))

    def tell(self) -> None:
        """Tell each writer kept by `note` what its commands did (once)."""
        from agent_hooks.agents import state_file

        holder = self.holder.label()
        for key, (writer, ledger, found) in self._for.items():
            text = writer_notice(self.label(ledger, writer), writer, holder, found)
            agent = writer.get("agent")
            conversation = None if isinstance(agent, str) else writer.get("conversation")
            if state_file.tell(self.state_dir, agent, text, self.now, conversation=conversation):
                self.told.add(key)


def whose(blame: Blame, ledger: str, running: list[Running]) -> str:
    """Who changed the file, for the holder's lease (`reservations`, `watch`)."""
    labels = [blame.label(ledger, item.writer) for item in running]
    if len(labels) == 1:
        return f"{labels[0]}'s shell command"
    return "a shell command of " + " or of ".join(labels)


def holder_words(blame: Blame, ledger: str, running: list[Running], *, also: bool = False) -> str:
    """What the holder is told of the writers whose shell commands ran when its file
    changed: after "was changed by <`whose`> at …, after your last write to it" for
    one writer, after "was changed at …" for several; `also`, a sentence of its own
    after "changed while your last shell command ran"."""
    labels = [blame.label(ledger, item.writer) for item in running]
    told = [
        label
        for item, label in zip(running, labels, strict=True)
        if item.writer["writer"] in blame.told
    ]
    said = ""
    if told and len(told) == len(labels) and len(labels) > 1:
        said = "; each has been told"
    elif told:
        said = f"; {_joined(told)} {'has' if len(told) == 1 else 'have'} been told"
    if also:
        return (
            f" A shell command of {_joined(labels, 'and of')} ran at that moment too: "
            f"{'it' if len(labels) == 1 else 'each'} may have made the change{said}."
        )
    if len(running) == 1:
        item = running[0]
        return (
            f" — the change fell inside that command, which ran from {clock(item.start)} "
            f"to {clock(item.end)}{said}"
        )
    return (
        f" — it fell inside shell commands of {_joined(labels)}, which all ran at that "
        f"moment: each may have made the change{said}"
    )


def writer_notice(
    label: str, writer: dict[str, Any], holder: str, found: list[tuple[Change, list[str]]]
) -> str:
    """What a writer is told of the held files its shell commands changed (`found`:
    each change, and the others whose commands ran then too)."""
    whose_command = "your" if not writer.get("agent_id") else f"{label}'s"
    alone = [change for change, others in found if not others]
    shared = [(change, others) for change, others in found if others]
    parts = []
    if alone:
        parts.append(
            f"{whose_command} shell command changed {_files(alone)}, which {holder} is "
            f"changing (at {clock(alone[0].at)}, while the command ran)"
        )
    for change, others in shared[:MAX_NAMED]:
        parts.append(
            f"{whose_command} shell command may have changed {change.rel}, which {holder} is "
            f"changing: the change at {clock(change.at)} fell inside that command and inside "
            f"a shell command of {_joined(others)}"
        )
    if len(shared) > MAX_NAMED:
        parts.append(f"and {len(shared) - MAX_NAMED} more such files")
    them, these = ("it", "that file") if len(found) == 1 else ("them", "these files")
    return (
        "agent-hooks: "
        + "; ".join(parts)
        + f"; {holder} has been told. Leave {these} to {'its' if len(found) == 1 else 'their'} "
        f"holder: do not write {them} again, nor undo the change yourself; if your command "
        f"was not meant to write {them}, tell the user."
    )


def _files(changes: list[Change]) -> str:
    names = [change.rel for change in changes[:MAX_NAMED]]
    if len(changes) > MAX_NAMED:
        names.append(f"{len(changes) - MAX_NAMED} more")
    return _joined(names)


def _joined(items: list[str], last: str = "and") -> str:
    """`a`, `a and b`, `a, b and c`."""
    if len(items) <= 2:
        return f" {last} ".join(items)
    return ", ".join(items[:-1]) + f" {last} " + items[-1]
