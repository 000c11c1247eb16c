"""Reading and updating one agent's state file (storage + the state document).

Invariants: every update runs under the agent's lock (or, after the 5 s timeout,
without it, logged); a corrupt file is quarantined and the agent learns of it at
its next SessionStart through a notice; the result is always a complete document;
a `mutate` that returns False changed nothing worth a write, and none is made.
The file is written `aside` (`storage`: rewritten on every hook, it never replaces
itself by a rename onto it), so whoever reads it or asks whether it exists goes
through `read`, `exists` or `storage` with `aside=True`.
"""

from __future__ import annotations

from agent_hooks import identity, storage
from agent_hooks.agents import state

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Callable
    from typing import Any


def update(
    agent: identity.Agent,
    mutate: Callable[[dict[str, Any]], bool | None],
    now: float,
    log: Callable[[str], None],
    *,
    timeout: float = storage.LOCK_TIMEOUT,
) -> dict[str, Any]:
    """Apply `mutate` to the agent's document and write it back; return the document.
    After `timeout` seconds without the lock the update is made without it (logged)."""
    storage.ensure_dir(agent.state_dir)
    result: dict[str, Any] = {}

    def apply(loaded: storage.Loaded) -> dict[str, Any] | None:
        doc = state.normalize(loaded.doc, agent.name, now)
        if loaded.problem is not None:
            where = f"moved to {loaded.moved_to}" if loaded.moved_to else "left in place"
            log(f"state file was not valid JSON ({loaded.problem}); {where}; fresh state begun")
            state.add_notice(
                doc,
                f"Your agent-hooks state file was not valid JSON ({loaded.problem}); "
                f"it was {where} and a fresh state begun, so earlier trail entries are not in it.",
            )
        changed = mutate(doc) is not False or loaded.doc is None or loaded.problem is not None
        result.update(doc)
        return doc if changed else None

    if not storage.locked_update(
        agent.state_path, apply, now=now, durable=False, aside=True, timeout=timeout
    ):
        log(
            f"lock on {agent.state_path} not acquired in {timeout:g} s; updated without it (fail open)"
        )
    return result


def read(agent: identity.Agent, now: float) -> tuple[dict[str, Any], str | None]:
    """The agent's document without locking (always a whole one: see the module),
    and the reason it could not be parsed, if it could not."""
    loaded = storage.load_json_object(agent.state_path, aside=True)
    return state.normalize(loaded.doc, agent.name, now), loaded.problem


def exists(agent: identity.Agent) -> bool:
    """Whether the agent has a state file (also while a write moves it)."""
    return storage.exists(agent.state_path, aside=True)


def tell(
    state_dir: str, name: object, text: str, now: float, *, conversation: object = None
) -> bool:
    """Queue `text` for agent `name`'s next hook that can carry context (its alerts;
    only `conversation`'s hooks when given, a string); False, and nothing written,
    when the name is not a valid agent name or the agent has no state file here (it
    is told nothing rather than given a state)."""
    try:
        agent = identity.Agent(
            identity.check_agent_name(name) if isinstance(name, str) else None, state_dir
        )
    except identity.IdentityError:
        return False
    if not exists(agent):
        return False
    only = conversation if isinstance(conversation, str) else None
    update(agent, lambda doc: state.add_alert(doc, text, only), now, lambda m: None)
    return True
