"""writer: who is writing (an agent's main conversation, or one of its subagents),
the owner reservations belong to, the key that tells writers apart, how two
writers are related, and how a writer is named to people and models."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_hooks import identity, writers
from agent_hooks.clients import claude_code, envelope
from agent_hooks.writers import CHILD, OTHER, PARENT, SELF, SIBLING, Writer

CONV = "54c88e3a-1f2e-4d5c-9b8a-0123456789ab"
AID = "a4d71bd7e8f9"


@pytest.mark.parametrize(("me", "owner", "key"), ids=range(6), argvalues=[
    (Writer("alice", CONV), "alice", "alice"),
    (Writer("alice", None), "alice", "alice"),
    (Writer("alice", CONV, AID), "alice", f"alice#{AID}"),
    (Writer(None, CONV), f"~{CONV}", f"~{CONV}"),
    (Writer(None, CONV, AID), f"~{CONV}", f"~{CONV}#{AID}"),
    (Writer(None, None), "~", "~"),
])  # fmt: skip
def test_owner_and_key(me: Writer, owner: str, key: str) -> None:
    """A named agent owns by name, whatever its conversation; an unnamed one by its
    conversation; a subagent shares its agent's owner but has a key of its own."""
    assert (me.owner, me.key) == (owner, key)
    assert writers.owner_of(me.agent, me.conversation) == owner


def test_every_conversation_of_a_named_agent_is_one_owner_unnamed_ones_are_not() -> None:
    assert Writer("alice", "c1").owner == Writer("alice", "c2").owner
    assert Writer(None, "c1").owner != Writer(None, "c2").owner
    assert Writer("alice", "c1").key != Writer("alice", "c1", "s1").key


RELATIONS = [  # (me, the other's key, relation)
    (Writer("alice", CONV), "alice", SELF),
    (Writer("alice", CONV), "alice#s1", CHILD),
    (Writer("alice", CONV), "bob", OTHER),
    (Writer("alice", CONV), "bob#s1", OTHER),
    (Writer("alice", CONV), "~c1", OTHER),
    (Writer("alice", CONV, "s1"), "alice#s1", SELF),
    (Writer("alice", CONV, "s1"), "alice", PARENT),
    (Writer("alice", CONV, "s1"), "alice#s2", SIBLING),
    (Writer("alice", CONV, "s1"), "bob#s1", OTHER),
    (Writer("alice", CONV, "s1"), "bob", OTHER),
    (Writer(None, "c1"), "~c1", SELF),
    (Writer(None, "c1"), "~c1#s1", CHILD),
    (Writer(None, "c1"), "~c2", OTHER),
    (Writer(None, "c1"), "~c2#s1", OTHER),
    (Writer(None, "c1"), "alice", OTHER),
    (Writer(None, "c1", "s1"), "~c1", PARENT),
    (Writer(None, "c1", "s1"), "~c1#s2", SIBLING),
    (Writer(None, "c1", "s1"), "~c1#s1", SELF),
    (Writer(None, "c1", "s1"), "~c2", OTHER),
    (Writer(None, None), "~c1", OTHER),
]
REL_IDS = [f"{me.key}-{other}-{relation}" for me, other, relation in RELATIONS]


@pytest.mark.parametrize(("me", "other", "relation"), RELATIONS, ids=REL_IDS)
def test_relation(me: Writer, other: str, relation: str) -> None:
    assert me.relation(other) == relation


@pytest.mark.parametrize(("me", "other", "relation"), RELATIONS, ids=REL_IDS)
def test_relation_is_mirrored(me: Writer, other: str, relation: str) -> None:
    """If I am your parent you are my child; siblings, selves and others are mutual."""
    owner, _, aid = other.partition("#")
    them = Writer(owner, None, aid or None) if not owner.startswith("~") else Writer(
        None, owner[1:] or None, aid or None)  # fmt: skip
    mirror = {SELF: SELF, PARENT: CHILD, CHILD: PARENT, SIBLING: SIBLING, OTHER: OTHER}
    assert them.relation(me.key) == mirror[relation]


@pytest.mark.parametrize("value", [
    "", "../x", "a/b", "/etc", ".", "..", "a.b", "a b", "a\x00", "ü", "x" * 129, "a#b", "~c",
    None, 7, b"abc", ["a"],
])  # fmt: skip
def test_safe_id_refuses_what_cannot_be_a_file_name(value: object) -> None:
    assert writers.safe_id(value) is None


@pytest.mark.parametrize("value", ["a", "abc-DEF_123", CONV, "x" * 128])
def test_safe_id_keeps_ordinary_ids(value: str) -> None:
    assert writers.safe_id(value) == value


def test_from_event_ignores_unsafe_ids() -> None:
    """A bad `agent_id` leaves the main writer (and its type unsaid); a bad session id
    is no conversation; the event's conversation is its payload's, else the client's
    session variable (`clients.envelope`)."""
    env = {"CLAUDE_CODE_SESSION_ID": "envconv"}
    hook = envelope.read({"session_id": "../../x", "agent_id": "../y",
                          "agent_type": "general-purpose"}, env, claude_code.SESSION_VARIABLES)  # fmt: skip
    me = writers.from_event("alice", hook)
    assert (me.conversation, me.agent_id, me.agent_type, me.key) == (None, None, None, "alice")
    hook = envelope.read({"agent_id": AID}, env, claude_code.SESSION_VARIABLES)
    assert writers.from_event("alice", hook).key == f"alice#{AID}"
    assert writers.from_event(None, hook).conversation == "envconv"
    hook = envelope.read({"session_id": "c1", "agent_id": AID,
                          "agent_type": "Explore\n" + "x" * 100}, env, ())  # fmt: skip
    me = writers.from_event(None, hook, "codex")
    assert me.key == f"~c1#{AID}" and me.agent_type == "Explore" + "x" * 57
    assert me.client == "codex"
    assert writers.from_environ("alice", {"CLAUDE_CODE_SESSION_ID": "a/b"}).conversation is None


@pytest.mark.parametrize(("record", "kw", "label"), [
    ({"agent": "a"}, {}, 'agent "a"'),
    ({"agent": "a", "agent_id": AID, "agent_type": "general-purpose"},
     {"description": "fix login"}, f'the general-purpose subagent "fix login" ({AID[:8]}) of agent "a"'),
    ({"agent": "a", "agent_id": AID}, {}, f'the subagent ({AID[:8]}) of agent "a"'),
    ({"agent": "a", "agent_id": AID, "agent_type": "x"}, {"name": "alice"},
     f'teammate "alice" ({AID[:8]}) of agent "a"'),
    ({"agent": None, "conversation": CONV}, {}, "the unnamed agent of conversation 54c88e3a"),
    ({"agent": None, "conversation_id": CONV}, {}, "the unnamed agent of conversation 54c88e3a"),
    ({"agent": None, "conversation": CONV, "agent_id": AID}, {},
     f"the subagent ({AID[:8]}) of the unnamed agent of conversation 54c88e3a"),
    ({}, {}, "an agent without AGENT_NAME"),
    ({"agent": "a", "client": "opencode"}, {}, 'opencode agent "a"'),
    ({"agent": "a", "client": "qwen", "agent_id": AID}, {},
     f'the subagent ({AID[:8]}) of Qwen Code agent "a"'),
    ({"agent": None, "conversation": CONV, "client": "qwen"}, {},
     "the unnamed Qwen Code agent of conversation 54c88e3a"),
])  # fmt: skip
def test_describe(record: dict[str, object], kw: dict[str, str], label: str) -> None:
    assert writers.describe(record, **kw) == label


def test_label_describes_the_writer_itself() -> None:
    me = Writer("a", CONV, AID, "Explore")
    assert me.label(description="scan") == f'the Explore subagent "scan" ({AID[:8]}) of agent "a"'
    assert me.as_dict()["writer"] == me.key


NAMES = st.text(min_size=1, max_size=40).filter(
    lambda n: n.strip() != "" and "/" not in n and ".." not in n
)


@given(name=NAMES, conversation=st.text(max_size=40), agent_id=st.text(max_size=20))
def test_nobody_can_never_equal_another_owner(name: str, conversation: str, agent_id: str) -> None:
    """`nobody()` is checked against everyone and never a holder: no checked name and
    no safe conversation id gives its owner, so it is never SELF or PARENT to anyone."""
    nobody = writers.nobody()
    try:
        checked: str | None = identity.check_agent_name(name)
    except identity.IdentityError:
        checked = None
    others = [Writer(checked, writers.safe_id(conversation), writers.safe_id(agent_id)),
              Writer(None, writers.safe_id(conversation), writers.safe_id(agent_id))]  # fmt: skip
    for other in others:
        assert other.owner != nobody.owner
        assert nobody.relation(other.key) == OTHER and other.relation(nobody.key) == OTHER


@pytest.mark.parametrize(("name", "twin"), [
    ("alice#s1", Writer("alice", "c2", "s1")),
    ("~c1", Writer(None, "c1")),
])  # fmt: skip
def test_two_different_writers_never_share_a_key(name: str, twin: Writer) -> None:
    """`key` tells writers apart: a name that would read as another writer's key
    (`#` marks a subagent, a leading `~` an unnamed conversation) is refused."""
    with pytest.raises(identity.IdentityError, match="'#' or starts with '~'"):
        identity.check_agent_name(name)
    assert twin.key not in {Writer(n, "c9").key for n in ("alice", "alice_s1", "c1")}


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        ({"id": "r-1"}, None),  # a lease: no holder field
        ({"holder": {"pid": 7, "start": 1, "host": "h"}}, None),  # an agent's process
        ({"holder": None}, ""),  # an earlier release's, from a plain shell
        ({"holder": None, "conversation_id": "c1"}, None),  # an agent's, no process known
        ({"holder": {"person": "ann"}}, "ann"),
        ({"holder": {"person": "a\x1b[2Jnn\n" + "x" * 100}}, "a[2Jnn" + "x" * 58),
        ({"holder": {"person": 7}}, None),
    ],
)
def test_a_persons_claim_is_told_by_its_holder(record: dict[str, object], expected: object) -> None:
    assert writers.person(record) == expected


def test_a_person_is_described_as_a_person() -> None:
    assert writers.describe({"agent": None, "holder": {"person": "ann"}}) == 'person "ann"'
    assert writers.describe({"agent": None, "holder": None}) == "a person"
    named = {"agent": "me", "holder": {"person": "ann"}}
    assert writers.describe(named) == 'agent "me"'  # a name of its own choosing wins


@pytest.mark.parametrize(
    "variable",
    [
        "CLAUDE_CODE_SESSION_ID",
        "CODEX_THREAD_ID",
        "GEMINI_SESSION_ID",
        "QWEN_CODE_SESSION_ID",
        "OPENCODE_SESSION_ID",
    ],
)
def test_a_command_finds_its_conversation_in_its_clients_variable(variable: str) -> None:
    """Where each client's shell says which conversation runs the command (Qwen Code sets
    QWEN_CODE_SESSION_ID, measured; agent-hooks' opencode plugin OPENCODE_SESSION_ID)."""
    assert writers.from_environ("alice", {variable: CONV}).conversation == CONV
    assert writers.from_environ("alice", {variable: "../x"}).conversation is None
