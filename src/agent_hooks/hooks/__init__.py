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


def main(argv: list[str]) -> int:
    """Run the adapter for the event `argv[0]`; exit status 0 whatever happens."""
    import sys

    event = argv[0] if argv else ""
    if event not in EVENTS:
        sys.stderr.write(f"agent-hooks: unknown hook event {event!r}; allowed\n")
        return 0
    try:
        adapter = __import__(f"agent_hooks.hooks.{EVENTS[event]}", fromlist=["main"])
        code: int = adapter.main()
    except Exception as exc:  # an adapter that cannot even be imported: allow, say why
        sys.stderr.write(
            f"agent-hooks: {event} hook could not run ({type(exc).__name__}: {exc}); allowed\n"
        )
        return 0
    return code
