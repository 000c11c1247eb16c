"""Whatever a payload holds, a client's translation never raises and its paths stay text:
hostile and malformed payloads (types swapped, patches of random lines, huge fields) are
turned into a ToolUse or None, which the gate then judges."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_hooks.clients import codex, gemini
from agent_hooks.tool_use import ToolUse

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
LINES = st.sampled_from(
    [
        "*** Begin Patch",
        "*** End Patch",
        "*** Add File: a.txt",
        "*** Delete File: ../b.txt",
        "*** Update File: /abs/c.txt",
        "*** Move to: d.txt",
        "@@",
        "@@ ctx",
        "+x",
        "-y",
        " z",
        "",
        "  *** Add File: e.txt",
        "*** End of File",
        "<<'EOF'",
        "EOF",
    ]
)
PATCH = st.lists(LINES, max_size=12).map("\n".join)


def _check(use: ToolUse | None) -> None:
    if use is None:
        return
    assert isinstance(use.name, str)
    for field, path in use.files:
        assert field in ("files_created", "files_modified", "files_read")
        assert path is None or isinstance(path, (str, int, float, bool, list, dict))
    assert use.command is None or isinstance(use.command, str)
    assert use.workdir is None or isinstance(use.workdir, str)


@settings(max_examples=60, deadline=None)
@given(
    event=st.sampled_from(["PreToolUse", "PostToolUse", "SessionStart"]),
    name=st.sampled_from(["apply_patch", "Bash", "Edit", "x"]) | JSON,
    tool_input=st.fixed_dictionaries({"command": PATCH | JSON}) | JSON,
    response=JSON | st.just("Success. Updated the following files:\nA a.txt\n"),
    cwd=JSON | st.just("/repo"),
)
def test_codex_translation_never_raises(
    event: str, name: Any, tool_input: Any, response: Any, cwd: Any
) -> None:
    payload = {"tool_name": name, "tool_input": tool_input, "tool_response": response, "cwd": cwd}
    _check(codex.tool_use(event, payload))
    if isinstance(tool_input, dict) and isinstance(tool_input.get("command"), str):
        command = tool_input["command"]
        _check(
            codex.tool_use(
                event,
                {
                    **payload,
                    "tool_name": "Bash",
                    "tool_input": {"command": f"cd sub && apply_patch <<'EOF'\n{command}\nEOF\n"},
                },
            )
        )


@settings(max_examples=60, deadline=None)
@given(
    event=st.sampled_from(["BeforeTool", "AfterTool"]),
    name=st.sampled_from(["write_file", "replace", "run_shell_command", "read_file"]) | JSON,
    tool_input=st.fixed_dictionaries({"file_path": JSON, "dir_path": JSON, "command": JSON}) | JSON,
    response=st.fixed_dictionaries({"error": JSON, "returnDisplay": JSON}) | JSON,
    cwd=JSON | st.just("/repo"),
)
def test_gemini_translation_never_raises(
    event: str, name: Any, tool_input: Any, response: Any, cwd: Any
) -> None:
    payload = {"tool_name": name, "tool_input": tool_input, "tool_response": response, "cwd": cwd}
    _check(gemini.tool_use(event, payload))
