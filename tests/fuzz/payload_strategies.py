"""Hypothesis strategies for hook payloads: the documents Claude Code 2.1.328 sends
(the captured fixtures in tests/fixtures/payloads, measured with the client as
docs/reference/claude-code-2.1.328/PROTOCOL.md tells), then mutated — wrong types
in any field, fields missing, huge strings, control characters, lone surrogates,
NUL bytes, paths with `..`, through symlinks or outside the project, Bash commands
from a grammar of shell fragments, deeply nested JSON — and encoded as JSON text,
as non-UTF-8 bytes, or as broken JSON.

Paths are written with the placeholders of `fuzz_world` (`P_PROJECT`, `P_HOME`,
`P_OUTSIDE`) and become the world's real paths when the run is encoded.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

import fuzz_world as fw
from hypothesis import strategies as st

from hook_runner import PAYLOADS

EVENT_FIXTURES = {
    "SessionStart": ["SessionStart_startup", "SessionStart_resume", "SessionStart_compact"],
    "PreToolUse": [
        "PreToolUse_Write",
        "PreToolUse_Edit",
        "PreToolUse_Read",
        "PreToolUse_Bash",
        "PreToolUse_Agent",
        "PreToolUse_Glob",
        "PreToolUse_Grep",
        "PreToolUse_Write_in_subagent",
    ],
    "PostToolUse": [
        "PostToolUse_Write",
        "PostToolUse_Edit",
        "PostToolUse_Read",
        "PostToolUse_Bash",
        "PostToolUse_Agent",
        "PostToolUse_Glob",
        "PostToolUse_Grep",
        "PostToolUse_Bash_in_subagent",
        "PostToolUse_Write_in_subagent",
    ],
    "Stop": ["Stop"],
    "SessionEnd": ["SessionEnd"],
    "SubagentStart": ["SubagentStart", "SubagentStart_background"],
    "SubagentStop": ["SubagentStop", "SubagentStop_background"],
}
EVENTS = list(EVENT_FIXTURES)
EDIT_TOOLS = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path"}
EDIT_TOOLS["NotebookEdit"] = "notebook_path"


def _load(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((PAYLOADS / f"{name}.json").read_text())["stdin"]
    return doc


def _synthesized() -> dict[str, dict[str, Any]]:
    """NotebookEdit and MultiEdit (of older clients): not in the captures, built from
    PROTOCOL.md's description of their inputs on the captured Edit's envelope."""
    pre, post = _load("PreToolUse_Edit"), _load("PostToolUse_Edit")
    notebook_input = {
        "notebook_path": f"{fw.P_PROJECT}/nb.ipynb",
        "new_source": "print(1)\n",
        "cell_id": "cell-1",
        "cell_type": "code",
        "edit_mode": "replace",
    }
    multi_input = {
        "file_path": f"{fw.P_PROJECT}/a.py",
        "edits": [{"old_string": "a", "new_string": "b"}, {"old_string": "c", "new_string": "d"}],
    }
    out = {}
    for tool, tool_input in (("NotebookEdit", notebook_input), ("MultiEdit", multi_input)):
        out[f"PreToolUse_{tool}"] = {**pre, "tool_name": tool, "tool_input": tool_input}
        out[f"PostToolUse_{tool}"] = {
            **post,
            "tool_name": tool,
            "tool_input": tool_input,
            "tool_response": {"filePath": tool_input.get("file_path"), "edits": []},
        }
    return out


TEMPLATES: dict[str, dict[str, Any]] = {
    name: _load(name) for names in EVENT_FIXTURES.values() for name in names
}
TEMPLATES.update(_synthesized())
EVENT_FIXTURES["PreToolUse"] += ["PreToolUse_NotebookEdit", "PreToolUse_MultiEdit"]
EVENT_FIXTURES["PostToolUse"] += ["PostToolUse_NotebookEdit", "PostToolUse_MultiEdit"]

# -- values of the wrong kind ----------------------------------------------------------

SPECIAL_CHARS = [
    "\x00",
    "\n",
    "\r",
    "\t",
    "\x1b",
    "\x7f",
    "\x85",
    "\u2028",
    "\u202e",
    "\u200b",
    "\ufeff",
    "\uffff",
    "\ud800",
    "\udfff",
    "\udc80",
    "\udcff",
    "é",
    "💥",
    "/",
    "..",
    "\\",
    "%",
    "~",
    "#",
    "'",
    '"',
    "$",
    "`",
    " ",
    "*",
]
texts = st.one_of(
    st.text(max_size=30),
    st.text(
        alphabet=st.sampled_from([c for c in SPECIAL_CHARS if len(c) == 1] + ["a", "b"]),
        max_size=30,
    ),
    st.sampled_from(["", " ", "null", "true", "{}", "[]", "NaN", "startup", "resume", "Write"]),
)
numbers = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, -1, 1, 2**31, 2**63, -(2**63), 10**30, 10**400]),
    st.floats(allow_nan=False, allow_infinity=False),
)
scalars = st.one_of(st.none(), st.booleans(), numbers, texts)
junk: st.SearchStrategy[Any] = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=8,
)

# -- paths ------------------------------------------------------------------------------

RELS = [
    "a.py",
    "src/a.py",
    "src/auth/login.py",
    "docs/x.md",
    "held/file.txt",
    "held/new.py",
    "held/sub/deeper.txt",
    "leased.txt",
    "new.txt",
    "deep/1/2/3/4.txt",
    "b/b",
    ".hidden",
    "x y.py",
    "ünï.py",
    "link_held/file.txt",
    "link_held/z.py",
    "link_leased",
    "link_out/x.txt",
    "link_out/new.txt",
    "link_ledger/reservations.json",
    "link_ledger/leases/x",
    "link_home/state-other__cc.json",
    "link_home/agent-hooks/ledgers.json",
    "loop/x",
    "dangling",
    ".git/config",
    ".git/agent-hooks/reservations.json",
    ".git/agent-hooks/leases/leased.txt",
    ".git/agent-hooks/writers/other__cc",
    "src/../held/file.txt",
    "held/../a.py",
    "held/./file.txt",
    "held",
    "held/",
    "src/",
    ".",
    "",
]
ELSEWHERE = [
    f"{fw.P_OUTSIDE}/x.txt",
    f"{fw.P_OUTSIDE}/new.txt",
    f"{fw.P_OUTSIDE}/../proj/held/file.txt",
    f"{fw.P_OUTSIDE}/../proj/.git/agent-hooks/x",
    "/etc/passwd",
    "/",
    "/dev/null",
    "/proc/self/status",
    "/nonexistent/dir/file",
    f"{fw.P_HOME}/.claude/state-other__cc.json",
    f"{fw.P_HOME}/.claude/state-{fw.ME}.json",
    f"{fw.P_HOME}/.claude/state-{fw.ME}.json.lock",
    f"{fw.P_HOME}/.claude/state-{fw.ME}.json.corrupt-20260101T000000Z",
    f"{fw.P_HOME}/.claude/agent-state.json",
    f"{fw.P_HOME}/.claude/agent-hooks.log",
    f"{fw.P_HOME}/.claude/agent-hooks.log.1",
    f"{fw.P_HOME}/.claude/agent-hooks/ledgers.json",
    f"{fw.P_HOME}/.claude/agent-hooks/trails/x.json",
    f"{fw.P_HOME}/.claude/settings.json",
    f"{fw.P_HOME}/.claude",
    f"{fw.P_HOME}/notes.txt",
]
JUNK_SEGMENTS = [
    "..",
    ".",
    "",
    "a\x00b",
    "\ud800",
    "\udc80x",
    "x" * 300,
    "%2F",
    "%7E",
    "~",
    "#",
    " ",
    "\n",
    "é",
    "💥",
    "*",
    "?",
    "[",
    "-rf",
    "~root",
    "$HOME",
    "\u202e",
]


@st.composite
def paths(draw: st.DrawFn) -> str:
    """A file path as a model might pass one: in the project (absolute or relative),
    escaping it with `..`, through its symlinks, elsewhere, or junk."""
    kind = draw(st.sampled_from(["abs", "abs", "rel", "elsewhere", "dots", "junk", "claimed"]))
    if kind == "claimed":  # what the worlds hold: held/**, leased.txt, the ledger, state
        path = draw(st.sampled_from([f"{fw.P_PROJECT}/", "", f"{fw.P_OUTSIDE}/../proj/"]))
        path += draw(
            st.sampled_from([r for r in RELS if "held" in r or "lease" in r or "git" in r])
        )
    elif kind == "abs":
        path = f"{fw.P_PROJECT}/{draw(st.sampled_from(RELS))}"
    elif kind == "rel":
        path = draw(st.sampled_from(RELS))
    elif kind == "elsewhere":
        path = draw(st.sampled_from(ELSEWHERE))
    elif kind == "dots":
        up = "../" * draw(st.integers(0, 6))
        path = draw(st.sampled_from([f"{up}proj/", f"{fw.P_PROJECT}/src/{up}", up]))
        path += draw(st.sampled_from(RELS))
    else:
        segments = draw(
            st.lists(st.sampled_from(JUNK_SEGMENTS + [r.split("/")[0] for r in RELS]), max_size=6)
        )
        path = draw(st.sampled_from(["", f"{fw.P_PROJECT}/", "/"])) + "/".join(segments)
    edit = draw(st.sampled_from(["none"] * 6 + ["slash", "double", "dot", "nul", "long", "text"]))
    if edit == "slash":
        path += "/"
    elif edit == "double":
        path = path.replace("/", "//", 1)
    elif edit == "dot":
        path = path.replace("/", "/./", 1)
    elif edit == "nul":
        at = draw(st.integers(0, len(path)))
        path = path[:at] + "\x00" + path[at:]
    elif edit == "long":
        path = f"{fw.P_PROJECT}/held/" + "n" * draw(st.integers(200, 5000))
    elif edit == "text":
        path += draw(texts)
    return path


# -- Bash commands from shell fragments ---------------------------------------------

_QUOTES = [
    lambda t: t,
    lambda t: f'"{t}"',
    lambda t: f"'{t}'",
    lambda t: f"$'{t}'",
    lambda t: t.replace(" ", "\\ "),
]
_WRITES = [
    "echo x > {t}",
    "echo x >> {t}",
    "printf %s y >| {t}",
    "cat <<'EOF' > {t}\nbody $(rm -rf /)\nEOF",
    "cat <<EOF >{t}\n$(touch {t})\nEOF",
    "tee {t} < /dev/null",
    "tee -a {t}",
    "cp a.py {t}",
    "mv a.py {t}",
    "mv {t} elsewhere.txt",
    "rm {t}",
    "rm -rf {t}",
    "rm -rf -- {t}",
    "sed -i 's/a/b/' {t}",
    "sed -i.bak -e s/x/y/ {t}",
    "find {t} -name '*.py' -delete",
    "find . -path {t} -exec rm {{}} +",
    "touch {t}",
    "truncate -s 0 {t}",
    "dd if=/dev/zero of={t} count=1",
    "ln -sf a.py {t}",
    "install -m 644 a.py {t}",
    "git checkout -- {t}",
    'python3 -c \'open("{t}", "w")\'',
    "cat {t}",
    "ls -la {t}",
    ": > {t}",
    "exec 3>{t}",
    "echo x 2>{t} 1>&2",
    "chmod 600 {t}",
    "patch {t} < fix.diff",
    "perl -pi -e s/a/b/ {t}",
]
_COMBINE = [
    "{a} | {b}",
    "{a} && {b}",
    "{a} || {b}",
    "{a}; {b}",
    "{a}\n{b}",
    "({a})",
    "{{ {a}; }}",
    "echo $({a})",
    "echo `{a}`",
    'bash -c "{a}"',
    "sh -c '{a}'",
    "env FOO=1 {a}",
    "env -i PATH=/bin {a}",
    'eval "{a}"',
    "{a} &",
    "nohup {a}",
    "time {a}",
    "sudo -n {a}",
    "xargs -0 {a}",
    "if true; then {a}; fi",
    "for f in *; do {a}; done",
    "{a} # {b}",
    "{a} \\\n {b}",
    "{a} '",
    '"{a}',
    "$({a}",
    "cd src && {a}",
    "cd /tmp; {a}",
]


@st.composite
def bash_commands(draw: st.DrawFn, depth: int = 3) -> str:
    if depth <= 0 or draw(st.integers(0, 2)) == 0:
        kind = draw(st.integers(0, 9))
        if kind == 0:
            return draw(texts)
        quote = draw(st.sampled_from(_QUOTES))
        return draw(st.sampled_from(_WRITES)).format(t=quote(draw(paths())))
    shape = draw(st.sampled_from(_COMBINE))
    return shape.format(
        a=draw(bash_commands(depth - 1)),
        b=draw(bash_commands(depth - 1)) if "{b}" in shape else "",
    )


pathological_commands = st.sampled_from(
    [
        "echo $(" * 300 + "x" + ")" * 300,
        "(" * 500 + "echo x > held/file.txt" + ")" * 500,
        "echo x | " * 2000 + "cat > held/file.txt",
        "'" * 10001,
        "a=" + "b" * 100_000 + "; echo $a > held/file.txt",
        'bash -c "' * 60 + "rm held/file.txt" + '"' * 60,
        "cat <<EOF\n" + "line\n" * 20000 + "EOF\n",
        "eval " * 500 + "rm -rf held",
        "{ " * 400 + "rm held/file.txt" + "; }" * 400,
    ]
)

# -- mutating a payload ----------------------------------------------------------------

PATH_KEYS = ["file_path", "notebook_path", "filePath", "path"]
TOP_KEYS = [
    "session_id",
    "transcript_path",
    "cwd",
    "hook_event_name",
    "tool_name",
    "tool_input",
    "tool_response",
    "tool_use_id",
    "agent_id",
    "agent_type",
    "source",
    "reason",
    "permission_mode",
    "duration_ms",
    "prompt_id",
    "stop_hook_active",
    "background_tasks",
    "agent_transcript_path",
    "unknown_field",
]
TOOL_NAMES = ["Write", "Edit", "MultiEdit", "NotebookEdit", "Read", "Bash", "Agent", "Glob"]
TOOL_NAMES += ["mcp__agent_mail__file_reservation_paths", "write", "WRITE", "Write ", ""]


def _container(doc: dict[str, Any], where: str) -> dict[str, Any] | None:
    if where == "top":
        return doc
    if where == "diff":
        response = doc.get("tool_response")
        diff = response.get("bashEditDiff") if isinstance(response, dict) else None
        return diff if isinstance(diff, dict) else None
    inner = doc.get(where)
    return inner if isinstance(inner, dict) else None


@st.composite
def mutation(draw: st.DrawFn) -> tuple[Any, ...]:
    op = draw(
        st.sampled_from(
            [
                *["set", "delete", "path", "path", "command", "tool", "agent", "session"],
                *["cwd", "huge", "nest", "diff", "pathological", "response"],
            ]
        )
    )
    where = draw(st.sampled_from(["top", "top", "tool_input", "tool_response", "diff"]))
    if op == "set":
        return (op, where, draw(st.sampled_from([*TOP_KEYS, *PATH_KEYS, "command"])), draw(junk))
    if op == "delete":
        return (op, where, draw(st.sampled_from([*TOP_KEYS, *PATH_KEYS, "command"])))
    if op == "path":
        return (op, draw(st.sampled_from(PATH_KEYS)), draw(paths()))
    if op == "command":
        return (op, draw(bash_commands()))
    if op == "pathological":
        return ("command", draw(pathological_commands))
    if op == "tool":
        return (op, draw(st.sampled_from(TOOL_NAMES) | texts))
    if op == "agent":
        agent_id = draw(
            st.sampled_from(["a4d71bd7a7301dabc", "ae43627177e918ff7", "x" * 200, "a/b", ""]) | junk
        )
        return (op, agent_id, draw(st.sampled_from(["general-purpose", "Explore"]) | junk))
    if op == "session":
        return (op, draw(st.sampled_from([fw.SESSION, fw.OTHER_SESSION, "../x", "a b"]) | junk))
    if op == "cwd":
        cwd = draw(
            st.sampled_from(
                [fw.P_PROJECT, f"{fw.P_PROJECT}/src", fw.P_OUTSIDE, "relative/dir", "/", ""]
            )
            | paths()
        )
        return (op, cwd)
    if op == "huge":
        size = draw(st.sampled_from([10_000, 100_000, 1_000_000]))
        char = draw(st.sampled_from(["a", "\n", "é", "\ud800", "\x00", "💥"]))
        return (
            op,
            where,
            draw(st.sampled_from(["content", "command", "file_path", "reason"])),
            char * size,
        )
    if op == "nest":
        depth = draw(st.sampled_from([50, 300, 600]))  # deeper: Encoding "deep"
        return (op, where, draw(st.sampled_from(["tool_input", "edits", "x"])), depth)
    if op == "response":
        return (op, draw(junk))
    files = draw(
        st.lists(
            st.fixed_dictionaries(
                {"filePath": paths() | junk},
                optional={"created": st.booleans() | junk, "hunks": junk},
            )
            | junk,
            max_size=4,
        )
    )
    changed = draw(st.lists(paths() | junk, max_size=3))
    return ("diff", files, changed)


def _nested(depth: int) -> Any:
    value: Any = "x"
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    return value


def apply(doc: dict[str, Any], mutations: list[tuple[Any, ...]]) -> Any:
    """`doc` (a copy) with each mutation applied; may return something that is not a dict."""
    result: Any = copy.deepcopy(doc)
    for m in mutations:
        if not isinstance(result, dict):
            break
        op = m[0]
        if op in ("set", "delete", "huge", "nest"):
            target = _container(result, m[1])
            if target is None:
                continue
            if op == "set":
                target[m[2]] = m[3]
            elif op == "delete":
                target.pop(m[2], None)
            elif op == "huge":
                target[m[2]] = m[3]
            else:
                target[m[2]] = _nested(m[3])
        elif op == "path":
            for where in ("tool_input", "tool_response"):
                inner = result.get(where)
                if isinstance(inner, dict) and (m[1] in inner or where == "tool_input"):
                    inner[m[1]] = m[2]
        elif op == "command":
            inner = result.get("tool_input")
            if isinstance(inner, dict):
                inner["command"] = m[1]
        elif op == "tool":
            result["tool_name"] = m[1]
        elif op == "agent":
            result["agent_id"], result["agent_type"] = m[1], m[2]
        elif op == "session":
            result["session_id"] = m[1]
        elif op == "cwd":
            result["cwd"] = m[1]
        elif op == "response":
            result["tool_response"] = m[1]
        elif op == "diff":
            response = result.setdefault("tool_response", {})
            if isinstance(response, dict):
                response["bashEditDiff"] = {"files": m[1], "changedFiles": m[2], "moreFiles": 0}
    return result


# -- encoding stdin -------------------------------------------------------------------


@dataclass
class Encoding:
    mode: str  # ascii | utf8 | replace
    byte_edits: list[tuple[Any, ...]] = field(default_factory=list)
    replacement: Any = None


@st.composite
def encodings(draw: st.DrawFn) -> Encoding:
    mode = draw(st.sampled_from(["ascii"] * 10 + ["utf8"] * 3 + ["replace"]))
    edits: list[tuple[Any, ...]] = []
    if draw(st.integers(0, 5)) == 0:
        edits = draw(
            st.lists(
                st.one_of(
                    st.tuples(st.just("truncate"), st.floats(0, 1)),
                    st.tuples(
                        st.just("insert"),
                        st.floats(0, 1),
                        st.sampled_from([b"\x00", b"\xff\xfe", b"\xc0\x80", b"\xed\xa0\x80"])
                        | st.binary(max_size=8),
                    ),
                    st.tuples(st.just("bom")),
                    st.tuples(st.just("append"), st.sampled_from([b"}", b"{}", b"\n\n", b"x"])),
                    st.tuples(st.just("twice")),
                    st.tuples(st.just("array")),
                    st.tuples(st.just("deep"), st.sampled_from([200, 200_000])),  # parsed; never
                ),
                min_size=1,
                max_size=2,
            )
        )
    replacement = draw(junk) if mode == "replace" else None
    return Encoding(mode, edits, replacement)


def encode(world: fw.World, payload: Any, enc: Encoding) -> bytes:
    value = world.rewrite(enc.replacement if enc.mode == "replace" else payload)
    if enc.mode == "utf8":
        data = json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")
    else:
        data = json.dumps(value).encode("ascii")
    for edit in enc.byte_edits:
        if edit[0] == "truncate":
            data = data[: int(len(data) * edit[1])]
        elif edit[0] == "insert":
            at = int(len(data) * edit[1])
            data = data[:at] + edit[2] + data[at:]
        elif edit[0] == "bom":
            data = b"\xef\xbb\xbf" + data
        elif edit[0] == "append":
            data += edit[1]
        elif edit[0] == "twice":
            data += data
        elif edit[0] == "array":
            data = b"[" + data + b"]"
        elif edit[0] == "deep" and data.endswith(b"}"):
            data = data[:-1] + b', "deep": ' + b"[" * edit[1] + b"]" * edit[1] + b"}"
    return data


# -- the environment a hook runs in ---------------------------------------------------

AGENT_NAMES: list[str | bytes | None] = [
    fw.ME,
    fw.ME,
    fw.ME,
    None,
    None,
    fw.OTHER,
    "",
    "../evil",
    "a#b",
    "~tilde",
    "a\x01b",
    "x" * 129,
    "é" * 101,
    " lead",
    "%17",
    "✳ Claude Code",
    "a\u202eb",
    b"\xff\xfe",
]


@st.composite
def environments(draw: st.DrawFn) -> tuple[str | bytes | None, dict[str, str | bytes | None]]:
    agent = draw(st.sampled_from(AGENT_NAMES))
    extra: dict[str, str | bytes | None] = {}
    if draw(st.integers(0, 3)) == 0:
        extra["CLAUDE_PID"] = draw(
            st.sampled_from([None, "", "abc", "-1", "0", "99999999999", "4194305", "1"])
        )
    if draw(st.integers(0, 4)) == 0:
        extra["CLAUDE_PROJECT_DIR"] = draw(
            st.sampled_from(
                [
                    None,
                    "",
                    f"{fw.P_PROJECT}/src",
                    f"{fw.P_PROJECT}/",
                    f"{fw.P_PROJECT}/link_held",
                    fw.P_OUTSIDE,
                    "proj",
                    "/nonexistent",
                ]
            )
        )
    if draw(st.integers(0, 4)) == 0:
        extra["CLAUDE_CODE_SESSION_ID"] = draw(st.sampled_from([None, "", fw.OTHER_SESSION, "x/y"]))
    if draw(st.integers(0, 5)) == 0:
        extra["AGENT_HOOKS_LEASE_MINUTES"] = draw(st.sampled_from(["0", "1", "abc", "99999", ""]))
    if draw(st.integers(0, 8)) == 0:
        extra["AGENT_HOOKS_READ_LIMIT"] = draw(st.sampled_from(["1", "0", "abc"]))
    if draw(st.integers(0, 10)) == 0:
        extra["AGENT_HOOKS_STRICT"] = "1"
    if draw(st.integers(0, 10)) == 0:
        extra["AGENT_HOOKS_ENFORCE"] = "off"
    if draw(st.integers(0, 10)) == 0:
        extra["CLAUDE_CONFIG_DIR"] = draw(st.sampled_from([f"{fw.P_HOME}/.cfg", "~/.cfg2"]))
    return agent, extra


@dataclass
class HookRun:
    event: str
    payload: Any
    encoding: Encoding
    agent: str | bytes | None
    env: dict[str, str | bytes | None]
    cwd: str  # "project" | "src" | "outside"
    mutations: list[tuple[Any, ...]]


@st.composite
def hook_runs(draw: st.DrawFn, events: list[str] | None = None) -> HookRun:
    event = draw(st.sampled_from(events or EVENTS))
    template = draw(st.sampled_from(EVENT_FIXTURES[event]))
    if draw(st.integers(0, 9)) == 0:  # a payload of another event
        template = draw(st.sampled_from(sorted(TEMPLATES)))
    mutations = draw(st.lists(mutation(), max_size=4))
    tool = TEMPLATES[template].get("tool_name")
    if draw(st.integers(0, 9)) < 7:  # most tool calls aim at a path or run a command
        if tool == "Bash":
            mutations.insert(0, ("command", draw(bash_commands())))
        elif tool is not None:
            key = "notebook_path" if tool == "NotebookEdit" else "file_path"
            mutations.insert(0, ("path", key, draw(paths())))
    payload = apply(TEMPLATES[template], mutations)
    agent, extra = draw(environments())
    cwd = draw(st.sampled_from(["project"] * 6 + ["src", "outside"]))
    return HookRun(event, payload, draw(encodings()), agent, extra, cwd, mutations)
