"""One client-neutral adapter per hook event; `main(argv)` runs the one asked for.

`argv` is `[EVENT]` (Claude Code, as every install of earlier releases runs it) or
`[CLIENT, EVENT]`: the table of clients (`clients.client_table.CLIENTS`) names each
client's module in `agent_hooks.clients`, whose `EVENTS` table maps the client's own
event names to the adapters here. Adding a client adds a module and a row there. Each
adapter imports only what its event needs (tests/hooks/test_imports.py); this package's
`main` imports just the table, the client and the one adapter asked for.
"""

from agent_hooks import preload

# The table of clients, from cached bytecode (as every module a hook always loads).
preload(("agent_hooks.clients.client_table",))
from agent_hooks.clients.client_table import CLIENTS, DEFAULT_CLIENT  # noqa: E402

__all__ = ["CLIENTS", "CORE", "DEFAULT_CLIENT", "PRELOAD", "main"]  # the table, here too

# The agent_hooks modules each hot event always loads, each after those it imports:
# preloaded from cached bytecode without the import system's per-module work
# (agent_hooks.preload; tests/hooks/test_hot_path_static.py keeps these in step).
CORE = (
    "agent_hooks.posix_fs",
    "agent_hooks.identity",
    "agent_hooks.jsonio",
    "agent_hooks.repository",
    "agent_hooks.hooks.hook_runtime",
    "agent_hooks.writers",
)
PRELOAD = {
    "pre_tool_use": (
        *CORE,
        "agent_hooks.switches",
        "agent_hooks.ledger.ledger_location",
        "agent_hooks.ledger.repo",
        "agent_hooks.gate.tool_call",
        "agent_hooks.hooks.pre_tool_use",
    ),
    "post_tool_use": (
        *CORE,
        "agent_hooks.agents.state",
        "agent_hooks.storage",
        "agent_hooks.agents.state_file",
        "agent_hooks.fingerprints",
        "agent_hooks.agents.trail",
        "agent_hooks.work_sessions",
        "agent_hooks.work_sessions.location",
        "agent_hooks.work_sessions.work_session_events",
        "agent_hooks.hooks.post_tool_use",
    ),
}


def main(argv: list[str]) -> int:
    """Run the adapter for `argv` (`[EVENT]` or `[CLIENT, EVENT]`); exit status 0
    whatever happens."""
    import sys

    client_name, event = (
        (argv[0], argv[1:2]) if argv[:1] and argv[0] in CLIENTS else (DEFAULT_CLIENT, argv[:1])
    )
    event_name = event[0] if event else ""
    try:
        from agent_hooks import preload

        module = CLIENTS[client_name]
        preload(
            (
                "agent_hooks.tool_use",
                "agent_hooks.clients.envelope",
                f"agent_hooks.clients.{module}",
            )
        )
        client = __import__(f"agent_hooks.clients.{module}", fromlist=["EVENTS"])
        adapter_name = client.EVENTS.get(event_name)
        if adapter_name is None:
            label = client.LABEL
            sys.stderr.write(f"agent-hooks: unknown {label} hook event {event_name!r}; allowed\n")
            return 0
        preload(PRELOAD.get(adapter_name, ()))
        adapter = __import__(f"agent_hooks.hooks.{adapter_name}", fromlist=["main"])
        code: int = adapter.main(client, event_name)
    except Exception as exc:  # an adapter that cannot even be imported: allow, say why
        sys.stderr.write(
            f"agent-hooks: {event_name} hook could not run ({type(exc).__name__}: {exc}); allowed\n"
        )
        return 0
    return code
