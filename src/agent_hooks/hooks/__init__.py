"""One adapter per Claude Code hook event; `main(argv)` runs the one `argv[0]` names.

Adapters turn a payload into calls on the core and a decision into protocol
output. Each imports only what its event needs (tests/hooks/test_imports.py); this
package's `main` imports just the one adapter asked for.
"""

EVENTS = {
    "SessionStart": "session_start",
    "PreToolUse": "pre_tool_use",
    "PostToolUse": "post_tool_use",
    "Stop": "stop",
    "SessionEnd": "session_end",
    "SubagentStart": "subagent_start",
    "SubagentStop": "subagent_stop",
    "StatusLine": "status_line",  # not a hook: Claude Code's statusLine command
    # the plugin form's SessionStart (hooks/run): stands aside when agent-hooks is also
    # installed into settings (install_check)
    "PluginSessionStart": "plugin_session_start",
}


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
    "PreToolUse": (
        *CORE,
        "agent_hooks.switches",
        "agent_hooks.reservations",
        "agent_hooks.reservations.reservation_index",
        "agent_hooks.ledger.ledger_location",
        "agent_hooks.gate.tool_call",
        "agent_hooks.hooks.pre_tool_use",
    ),
    "PostToolUse": (
        *CORE,
        "agent_hooks.agents.state",
        "agent_hooks.storage",
        "agent_hooks.agents.state_file",
        "agent_hooks.agents.trail",
        "agent_hooks.work_sessions",
        "agent_hooks.work_sessions.location",
        "agent_hooks.work_sessions.work_session_events",
        "agent_hooks.hooks.post_tool_use",
    ),
}


def main(argv: list[str]) -> int:
    """Run the adapter for the event `argv[0]`; exit status 0 whatever happens."""
    import sys

    event = argv[0] if argv else ""
    if event not in EVENTS:
        sys.stderr.write(f"agent-hooks: unknown hook event {event!r}; allowed\n")
        return 0
    try:
        from agent_hooks import preload

        preload(PRELOAD.get(event, ()))
        adapter = __import__(f"agent_hooks.hooks.{EVENTS[event]}", fromlist=["main"])
        code: int = adapter.main()
    except Exception as exc:  # an adapter that cannot even be imported: allow, say why
        sys.stderr.write(
            f"agent-hooks: {event} hook could not run ({type(exc).__name__}: {exc}); allowed\n"
        )
        return 0
    return code
