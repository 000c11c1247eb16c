"""One adapter per Claude Code hook event; each module's `main()` is an entry point.

Adapters turn a payload into calls on the core and a decision into protocol
output. They import only what their event needs (see tests/hooks/test_imports.py).
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
}
