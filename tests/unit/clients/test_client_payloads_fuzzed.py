"""What a payload means, whatever else it holds: for each client, a tool call described
first (which tool, which files it writes or reads, created or not, where a command runs,
whether it failed) is written as that client's payload — with hostile content, unknown
keys and swapped types around it — and the client's translation must say exactly that
call. Patches are built hunk by hunk (adds, deletes, updates with and without a move,
first chunks without `@@`, header lines as content), so the files each must name are
known without the parser. And whatever a payload holds, no translation raises.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_hooks.clients import claude_code, codex, gemini, opencode, qwen_code
from agent_hooks.tool_use import CREATED, EDIT, LAUNCH, MODIFIED, READ, READING, SHELL, ToolUse

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
# Keys a client may add one day: whatever they hold, the meaning stays.
NOISE = st.dictionaries(
    st.sampled_from(["extra", "timestamp", "permission_mode", "prompt_id", "model", "effort"]),
    JSON,
    max_size=3,
)
NAME_CHARS = st.characters(codec="utf-8", categories=("L", "N"), include_characters="._-/ \u2028")
# A file name as a model writes it into a patch: no blanks around it, no line break.
PATH = (
    st.text(NAME_CHARS, min_size=1, max_size=16)
    .map(lambda name: name.strip(" \u2028/") or "f")
    .filter(lambda name: "\n" not in name and "\r" not in name)
)
ABS = PATH.map(lambda name: "/repo/" + name)
CWD = st.sampled_from(["/repo", "/repo/sub", "/"])
# Lines that look like headers, placed where they are content.
HOSTILE = st.sampled_from(
    [
        "*** Add File: evil.txt",
        "*** Delete File: keep.txt",
        "*** Update File: other.txt",
        "*** Move to: elsewhere.txt",
        "*** End Patch",
        "*** Begin Patch",
        "EOF",
        "plain",
        "",
    ]
)
COMMAND = st.text(max_size=40) | st.sampled_from(["echo hi > a.txt", "git checkout -- .", ""])


# --------------------------------------------------------------------------- patches


@dataclass(frozen=True)
class Hunk:
    op: str  # add, delete, update
    path: str
    move_to: str | None
    text: str


@st.composite
def hunks(draw: st.DrawFn) -> Hunk:
    op = draw(st.sampled_from(["add", "delete", "update"]))
    path = draw(PATH)
    if op == "add":
        lines = draw(st.lists(HOSTILE, max_size=3))
        return Hunk(op, path, None, f"*** Add File: {path}\n" + "".join(f"+{x}\n" for x in lines))
    if op == "delete":
        return Hunk(op, path, None, f"*** Delete File: {path}\n")
    move_to = draw(st.none() | PATH)
    text = f"*** Update File: {path}\n"
    if move_to is not None:
        text += f"*** Move to: {move_to}\n"
    for n in range(draw(st.integers(1, 3))):
        if n > 0 or draw(st.booleans()):  # a first chunk may go without its @@
            text += draw(st.sampled_from(["@@\n", "@@ def f():\n"]))
        for _ in range(draw(st.integers(1, 3))):
            text += draw(st.sampled_from([" ", "-", "+"])) + draw(HOSTILE) + "\n"
    return Hunk(op, path, move_to, text)


def patch_of(parts: list[Hunk]) -> str:
    return "*** Begin Patch\n" + "".join(h.text for h in parts) + "*** End Patch\n"


def files_of(parts: list[Hunk]) -> list[tuple[str, object]]:
    """What the patch writes, from its hunks alone: each path once, in order; a moved
    file is its old name (modified) and its new one (created)."""
    found: list[tuple[str, object]] = []
    seen: set[str] = set()
    for hunk in parts:
        for field, path in (
            (CREATED if hunk.op == "add" else MODIFIED, hunk.path),
            (CREATED, hunk.move_to),
        ):
            if path is not None and path not in seen:
                seen.add(path)
                found.append((field, path))
    return found


PATCHES = st.lists(hunks(), min_size=1, max_size=4)


@settings(max_examples=150, deadline=None)
@given(parts=PATCHES, noise=NOISE, cwd=CWD)
def test_a_codex_patch_writes_exactly_the_files_its_hunks_name(
    parts: list[Hunk], noise: dict[str, Any], cwd: str
) -> None:
    text = patch_of(parts)
    call = {**noise, "tool_name": "apply_patch", "tool_input": {"command": text}, "cwd": cwd}
    use = codex.tool_use("PreToolUse", call)
    assert use is not None and (use.kind, use.files) == (EDIT, files_of(parts))
    done = {**call, "tool_response": f"Success. Updated the following files:\nM {parts[0].path}\n"}
    after = codex.tool_use("PostToolUse", done)
    assert after is not None and after.files == files_of(parts)
    failed = codex.tool_use("PostToolUse", {**call, "tool_response": "verification failed"})
    assert failed is not None and (failed.kind, failed.files) == (EDIT, [])


@settings(max_examples=100, deadline=None)
@given(parts=PATCHES, noise=NOISE, directory=st.sampled_from(["sub", "/abs/dir", None]))
def test_a_patch_codex_applies_from_its_shell_is_the_same_edit(
    parts: list[Hunk], noise: dict[str, Any], directory: str | None
) -> None:
    text = patch_of(parts)
    command = ("" if directory is None else f"cd {directory} && ") + (
        f"apply_patch <<'EOF'\n{text}EOF\n"
    )
    call = {**noise, "tool_name": "Bash", "tool_input": {"command": command}, "cwd": "/repo"}
    use = codex.tool_use("PreToolUse", call)
    assert use is not None and (use.kind, use.files) == (EDIT, files_of(parts))
    expected_dir = {None: None, "sub": "/repo/sub", "/abs/dir": "/abs/dir"}[directory]
    assert use.workdir == expected_dir


@settings(max_examples=100, deadline=None)
@given(parts=PATCHES, noise=NOISE, cwd=CWD, event=st.sampled_from(["before", "after"]))
def test_an_opencode_patch_writes_exactly_the_files_its_hunks_name(
    parts: list[Hunk], noise: dict[str, Any], cwd: str, event: str
) -> None:
    call = {
        **noise,
        "tool_name": "apply_patch",
        "tool_input": {"patchText": patch_of(parts).rstrip("\n")},  # as opencode's model sends
        "cwd": cwd,
        "session_id": "ses_1",
    }
    use = opencode.tool_use(f"tool.execute.{event}", call)
    assert use is not None and (use.kind, use.files) == (EDIT, files_of(parts))


# --------------------------------------------------------------------------- file tools


@settings(max_examples=100, deadline=None)
@given(
    tool=st.sampled_from(["Write", "Edit", "MultiEdit", "NotebookEdit"]),
    path=ABS,
    created=st.booleans(),
    noise=NOISE,
)
def test_a_claude_edit_names_its_file(tool: str, path: str, created: bool, noise: Any) -> None:
    key = "notebook_path" if tool == "NotebookEdit" else "file_path"
    response = {"type": "create" if created else "update", "filePath": path}
    call = {**noise, "tool_name": tool, "tool_input": {key: path}, "tool_response": response}
    use = claude_code.tool_use("PostToolUse", call)
    field = CREATED if created and tool == "Write" else MODIFIED
    assert use is not None and (use.kind, use.files) == (EDIT, [(field, path)])
    before = claude_code.tool_use("PreToolUse", {**call, "tool_response": None})
    assert before is not None and before.files == [(MODIFIED, path)]


@settings(max_examples=100, deadline=None)
@given(
    command=COMMAND,
    changed=st.lists(st.tuples(ABS, st.booleans()), max_size=4),
    noise=NOISE,
)
def test_a_claude_shell_command_reports_what_bash_edit_diff_lists(
    command: str, changed: list[tuple[str, bool]], noise: Any
) -> None:
    diff = {"files": [{"filePath": p, "created": c} for p, c in changed], "changedFiles": []}
    call = {
        **noise,
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_response": {"bashEditDiff": diff},
    }
    use = claude_code.tool_use("PostToolUse", call)
    expected: list[tuple[str, object]] = []
    for path, created in changed:
        if all(path != p for _, p in expected):
            expected.append((CREATED if created else MODIFIED, path))
    assert use is not None
    assert (use.kind, use.command, use.files, use.reported) == (SHELL, command, expected, True)


@settings(max_examples=100, deadline=None)
@given(
    tool=st.sampled_from(["write_file", "replace"]),
    path=ABS | PATH,
    new=st.booleans(),
    failed=st.booleans(),
    noise=NOISE,
)
def test_a_gemini_edit_names_its_file_unless_it_failed(
    tool: str, path: str, new: bool, failed: bool, noise: Any
) -> None:
    response: dict[str, Any] = {"returnDisplay": {"isNewFile": new}}
    if failed:
        response["error"] = {"message": "no"}
    call = {
        **noise,
        "tool_name": tool,
        "tool_input": {"file_path": path},
        "tool_response": response,
    }
    use = gemini.tool_use("AfterTool", call)
    field = CREATED if new and tool == "write_file" else MODIFIED
    assert use is not None and use.kind == EDIT
    assert use.files == ([] if failed else [(field, path)])


def run_in(cwd: str, directory: str | None) -> str | None:
    """Where a shell command given `directory` (relative to the hook's `cwd`, or absolute)
    runs: None when the call names none (the hook's cwd)."""
    if directory is None:
        return None
    return directory if directory.startswith("/") else cwd.rstrip("/") + "/" + directory


@settings(max_examples=100, deadline=None)
@given(
    command=COMMAND,
    dir_path=st.none() | PATH | ABS,
    cwd=CWD,
    noise=NOISE,
)
def test_a_gemini_shell_command_runs_in_its_dir_path(
    command: str, dir_path: str | None, cwd: str, noise: Any
) -> None:
    call = {
        **noise,
        "tool_name": "run_shell_command",
        "tool_input": {"command": command, "dir_path": dir_path},
        "cwd": cwd,
    }
    use = gemini.tool_use("BeforeTool", call)
    where = run_in(cwd, dir_path)
    assert use is not None and (use.kind, use.command, use.workdir) == (SHELL, command, where)


@settings(max_examples=100, deadline=None)
@given(
    tool=st.sampled_from(["write", "edit", "read"]),
    path=ABS | PATH,
    existed=st.booleans(),
    noise=NOISE,
)
def test_an_opencode_file_tool_names_its_file(
    tool: str, path: str, existed: bool, noise: Any
) -> None:
    call = {
        **noise,
        "tool_name": tool,
        "tool_input": {"filePath": path, "content": "x"},
        "tool_response": {"output": "ok", "metadata": {"exists": existed}},
        "cwd": "/repo",
    }
    use = opencode.tool_use("tool.execute.after", call)
    assert use is not None
    if tool == "read":
        assert (use.kind, use.files) == (READING, [(READ, path)])
    else:
        field = CREATED if tool == "write" and not existed else MODIFIED
        assert (use.kind, use.files) == (EDIT, [(field, path)])


@settings(max_examples=100, deadline=None)
@given(command=COMMAND, workdir=st.none() | PATH | ABS, cwd=CWD, noise=NOISE)
def test_an_opencode_shell_command_runs_in_its_workdir(
    command: str, workdir: str | None, cwd: str, noise: Any
) -> None:
    call = {
        **noise,
        "tool_name": "bash",
        "tool_input": {"command": command, "workdir": workdir},
        "cwd": cwd,
    }
    use = opencode.tool_use("tool.execute.before", call)
    where = run_in(cwd, workdir)
    assert use is not None and (use.kind, use.command, use.workdir) == (SHELL, command, where)


@settings(max_examples=100, deadline=None)
@given(
    tool=st.sampled_from(["write_file", "edit", "notebook_edit"]),
    path=ABS,
    created=st.booleans(),
    noise=NOISE,
)
def test_a_qwen_edit_names_its_file(tool: str, path: str, created: bool, noise: Any) -> None:
    key = "notebook_path" if tool == "notebook_edit" else "file_path"
    said = (
        f"Successfully created and wrote to new file: {path}."
        if created
        else f"Successfully overwrote file: {path}."
    )
    call = {
        **noise,
        "tool_name": tool,
        "tool_input": {key: path},
        "tool_response": {"llmContent": said, "returnDisplay": ""},
    }
    use = qwen_code.tool_use("PostToolUse", call)
    field = CREATED if created and tool == "write_file" else MODIFIED
    assert use is not None and (use.kind, use.files) == (EDIT, [(field, path)])


@settings(max_examples=100, deadline=None)
@given(command=COMMAND, directory=st.none() | PATH | ABS, noise=NOISE)
def test_a_qwen_shell_command_runs_in_its_absolute_directory(
    command: str, directory: str | None, noise: Any
) -> None:
    call = {
        **noise,
        "tool_name": "run_shell_command",
        "tool_input": {"command": command, "directory": directory},
        "cwd": "/repo",
    }
    use = qwen_code.tool_use("PreToolUse", call)
    where = directory if directory is not None and directory.startswith("/") else None
    assert use is not None and (use.kind, use.command, use.workdir) == (SHELL, command, where)


@settings(max_examples=60, deadline=None)
@given(
    agent_id=st.from_regex(r"[A-Za-z0-9_-]{1,24}", fullmatch=True),
    kind=JSON,
    description=JSON,
    noise=NOISE,
)
def test_a_launch_names_whom_it_launched(
    agent_id: str, kind: Any, description: Any, noise: Any
) -> None:
    """Claude Code's Agent, opencode's task and Qwen Code's agent say whom they started."""
    args = {"subagent_type": kind, "description": description}
    uses = {
        "claude": claude_code.tool_use(
            "PostToolUse",
            {
                **noise,
                "tool_name": "Agent",
                "tool_input": args,
                "tool_response": {"agentId": agent_id},
            },
        ),
        "opencode": opencode.tool_use(
            "tool.execute.after",
            {
                **noise,
                "tool_name": "task",
                "tool_input": args,
                "tool_response": {"metadata": {"sessionId": agent_id}},
            },
        ),
    }
    uses["qwen"] = qwen_code.tool_use(
        "PostToolUse",
        {
            **noise,
            "tool_name": "agent",
            "tool_input": args,
            "tool_response": {"llmContent": f"launched.\ntask_id: {agent_id} (internal)"},
        },
    )
    for client, use in uses.items():
        assert use is not None and use.kind == LAUNCH, client
        assert use.launched is not None
        assert use.launched["agent_id"] == agent_id, client
        assert (use.launched["agent_type"], use.launched["description"]) == (kind, description)


# --------------------------------------------------------------------------- garbage


def _check(use: ToolUse | None) -> None:
    if use is None:
        return
    assert isinstance(use.name, str)
    for field, path in use.files:
        assert field in ("files_created", "files_modified", "files_read")
        assert path is None or isinstance(path, (str, int, float, bool, list, dict))
    assert use.command is None or isinstance(use.command, str)
    assert use.workdir is None or (isinstance(use.workdir, str) and use.workdir.startswith("/"))


CLIENT_EVENTS = [
    (claude_code, "PreToolUse"),
    (claude_code, "PostToolUse"),
    (codex, "PreToolUse"),
    (codex, "PostToolUse"),
    (gemini, "BeforeTool"),
    (gemini, "AfterTool"),
    (opencode, "tool.execute.before"),
    (opencode, "tool.execute.after"),
    (qwen_code, "PreToolUse"),
    (qwen_code, "PostToolUse"),
]
TOOL_NAMES = st.sampled_from(
    [
        "apply_patch",
        "Bash",
        "Write",
        "Agent",
        "write_file",
        "replace",
        "run_shell_command",
        "read_file",
        "write",
        "edit",
        "bash",
        "task",
        "agent",
        "notebook_edit",
        "x",
    ]
)
INPUT = (
    st.fixed_dictionaries(
        {
            "command": COMMAND | JSON,
            "file_path": JSON,
            "filePath": JSON,
            "patchText": JSON,
            "workdir": JSON,
            "dir_path": JSON,
            "directory": JSON,
        }
    )
    | JSON
)


@settings(max_examples=150, deadline=None)
@given(
    which=st.sampled_from(CLIENT_EVENTS),
    name=TOOL_NAMES | JSON,
    tool_input=INPUT,
    response=JSON | st.just("Success. Updated the following files:\nA a.txt\n"),
    cwd=JSON | st.just("/repo"),
)
def test_no_translation_raises(
    which: tuple[Any, str], name: Any, tool_input: Any, response: Any, cwd: Any
) -> None:
    client, event = which
    payload = {"tool_name": name, "tool_input": tool_input, "tool_response": response, "cwd": cwd}
    _check(client.tool_use(event, payload))
