"""Who is writing: an agent's main conversation, or one of its subagents or teammates.

A writer is the agent (`AGENT_NAME`; without it, the conversation) plus, for an
event from inside a subagent or teammate, the payload's `agent_id`
(docs/adr/0014-writers-and-leases.md).

Invariants:

* `owner` is the identity reservations belong to: the agent's name, or for an
  agent without `AGENT_NAME` `~<conversation id>` (every unnamed conversation is
  its own agent), or `~` when not even the conversation is known.
* `key` tells writers apart: `owner`, plus `#<agent_id>` inside a subagent.
  Both are safe inside file names: names and ids that are not are refused
  (`IdentityError`) or, for ids from a payload, ignored.
* A subagent's writes never count as its parent's and the other way round;
  `relation` says how two writers are related, and the rules that use it live in
  `leases.lease`.

Built-ins only: PreToolUse builds one on every edit.
"""

from __future__ import annotations

from agent_hooks.clients import client_table

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Mapping
    from typing import Any

    from agent_hooks.tool_use import HookEvent

_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
MAX_ID = 128
MAX_TYPE = 64
MAX_PERSON = 64  # characters of a person's user name shown as a holder

SELF = "self"  # the same writer
PARENT = "parent"  # the other is this writer's parent (same agent, main conversation)
CHILD = "child"  # the other is one of this writer's subagents
SIBLING = "sibling"  # both are subagents of the same agent
OTHER = "other"  # another agent


def safe_id(value: object) -> str | None:
    """An id from a payload (`agent_id`, `session_id`) usable in a file name, else None."""
    if isinstance(value, str) and 0 < len(value) <= MAX_ID and _ID_CHARS.issuperset(value):
        return value
    return None


def short_text(value: object, limit: int) -> str | None:
    """A one-line label from a payload: printable, at most `limit` characters."""
    if not isinstance(value, str):
        return None
    text = "".join(c for c in value if c.isprintable()).strip()
    return text[:limit] or None


def owner_of(agent: str | None, conversation: str | None) -> str:
    """The reservation owner for an agent name (or, unnamed, its conversation)."""
    if agent is not None:
        return agent
    return "~" + (conversation or "")


class Writer:
    """One writer, as a hook payload (or the CLI's environment) describes it."""

    __slots__ = ("agent", "agent_id", "agent_type", "client", "conversation")

    def __init__(
        self,
        agent: str | None,
        conversation: str | None,
        agent_id: str | None = None,
        agent_type: str | None = None,
        client: str | None = None,
    ) -> None:
        self.agent = agent
        self.conversation = conversation
        self.agent_id = agent_id
        self.agent_type = agent_type
        self.client = client  # the client it works in (`clients.<name>.NAME`), when known

    @property
    def owner(self) -> str:
        return owner_of(self.agent, self.conversation)

    @property
    def key(self) -> str:
        return self.owner + (f"#{self.agent_id}" if self.agent_id else "")

    def relation(self, other_key: str) -> str:
        """How the writer `other_key` relates to this one (SELF, PARENT, CHILD, …)."""
        if other_key == self.key:
            return SELF
        owner, _, other_id = other_key.partition("#")
        if owner != self.owner:
            return OTHER
        if not other_id:
            return PARENT  # the other is the agent's main conversation; this is a subagent
        return CHILD if not self.agent_id else SIBLING

    def label(self, description: str | None = None, name: str | None = None) -> str:
        """How people and models see this writer named."""
        return describe(self.as_dict(), description=description, name=name)

    def as_dict(self) -> dict[str, Any]:
        return {
            "writer": self.key,
            "agent": self.agent,
            "conversation": self.conversation,
            "agent_id": self.agent_id,
            "agent_type": self.agent_type,
            "client": self.client,
        }


NOBODY = "\x00"  # the conversation of a writer that can hold nothing (a bad AGENT_NAME)


def nobody() -> Writer:
    """A writer whose AGENT_NAME cannot be used: it is checked against everyone
    else's reservations and leases, but can never be a holder (its owner can
    equal no other: conversation ids never hold a NUL)."""
    return Writer(None, NOBODY)


def from_event(agent: str | None, hook: HookEvent, client: str | None = None) -> Writer:
    """The writer of a hook event of `client` (its name, when known): `agent` (a
    checked AGENT_NAME or None), the event's conversation, and its subagent's or
    teammate's id and type (every client that has subagents names them, where it
    tells them apart at all); ids unusable in a file name are left out."""
    agent_id = safe_id(hook.agent_id)
    agent_type = short_text(hook.agent_type, MAX_TYPE) if agent_id else None
    return Writer(agent, safe_id(hook.session), agent_id, agent_type, client)


def from_environ(agent: str | None, environ: Mapping[str, str]) -> Writer:
    """The writer a CLI process acts for: the agent, in its conversation when the
    command runs inside a client that says which (a client's `SESSION_VARIABLES`)."""
    for name in client_table.session_variables():  # every client's module: the CLI only
        conversation = safe_id(environ.get(name))
        if conversation is not None:
            return Writer(agent, conversation)
    return Writer(agent, None)


def person(record: Mapping[str, Any]) -> str | None:
    """Who made a reservation at a terminal, no agent process above the command: the
    user name its holder records (`"person"`), "" for one an earlier release made
    from a plain shell (no holder at all); None for an agent's claim (a lease, or a
    reservation with a holder process)."""
    if "holder" not in record:
        return None
    holder = record.get("holder")
    if holder is None:
        return "" if not (record.get("conversation") or record.get("conversation_id")) else None
    found = holder.get("person") if isinstance(holder, dict) else None
    if not isinstance(found, str):
        return None
    return short_text(found, MAX_PERSON) or ""  # a ledger is outside input: one clean line


def describe(
    record: Mapping[str, Any], description: str | None = None, name: str | None = None
) -> str:
    """`agent "a"`, `person "ann"` (a reservation made at a terminal by no agent), `the general-purpose subagent "fix login" (a4d71bd7) of agent "a"`,
    `teammate "alice" (a4d71bd7) of agent "a"`, `the unnamed agent of conversation 54c88e3a`;
    an agent of another client than the default one is named with its label: `Codex agent
    "b"` (`clients.client_table`)."""
    agent = record.get("agent")
    conversation = record.get("conversation") or record.get("conversation_id")
    client = record.get("client")
    label = ""
    if client != client_table.DEFAULT_CLIENT:  # its agents are named without it
        known = client_table.label(client)
        label = f"{known} " if known else ""
    someone = person(record)
    if someone is not None and not isinstance(agent, str):
        return f'person "{someone}"' if someone else "a person"
    if isinstance(agent, str):
        owner = f'{label}agent "{agent}"'
    elif isinstance(conversation, str) and conversation:
        owner = f"the unnamed {label}agent of conversation {conversation[:8]}"
    else:
        owner = f"{'a ' + label if label else 'an '}agent without AGENT_NAME"
    agent_id = record.get("agent_id")
    if not isinstance(agent_id, str) or not agent_id:
        return owner
    short = agent_id[:8]
    if name:
        return f'teammate "{name}" ({short}) of {owner}'
    kind = record.get("agent_type")
    kind = f"{kind} " if isinstance(kind, str) and kind else ""
    about = f' "{description}"' if description else ""
    return f"the {kind}subagent{about} ({short}) of {owner}"
