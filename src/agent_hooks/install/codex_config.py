"""Install agent-hooks' handlers for Codex CLI (0.169.0): a `hooks.json` entry per event, and
the trust hash Codex requires before it runs any of them.

Codex runs a non-managed hook only when the user's `config.toml` holds, for that handler's
position, `[hooks.state."<abs hooks.json>:<event_snake>:<group idx>:<handler idx>"]
trusted_hash = "sha256:<hex>"` with the hash of exactly what is configured there; an untrusted or
modified handler is skipped without a word (reference/codex-0.169.0/PROTOCOL.md §3). So installing
is two edits that must agree: the handlers in `hooks.json` (the user's `$CODEX_HOME/hooks.json`,
or a project's `<DIR>/.codex/hooks.json`) and their trust tables in the user's
`$CODEX_HOME/config.toml`.

Invariants:

* Only handlers whose command runs agent-hooks' entry script for Codex
  (`"<python>" -IS "<…/hooks/entry.py[c]>" codex <Event>`) are ever added, changed or removed,
  and only the trust tables of their positions; every other hook stays, in its order.
* A foreign handler whose position changes because one of ours was removed before it keeps its
  trust: its table is renamed to the new position (the hash does not include the position).
* `config.toml` is edited as text: tables that are not touched keep every byte (comments,
  spacing, order). Each edit is checked by parsing the result with `tomllib` and comparing it with
  the intended document; if they differ nothing is written. A `config.toml` or `hooks.json` that
  does not parse is refused with one line, never overwritten.
* Install is idempotent: when both files already hold the current handlers and hashes, nothing is
  written. Reinstalling with another interpreter or entry rewrites our handlers and hashes.
* A file is backed up (`<file>.agent-hooks-backup-<UTC stamp>`, the newest kept) before it is
  changed, then replaced atomically keeping its mode; a symlinked file is written through.
* A project is never trusted on the user's behalf unless asked (`trust_project=True`,
  `--trust-project`); otherwise the outcome says what to do.
* Paths in trust keys are the resolved paths Codex uses: `$CODEX_HOME` and the project directory
  are resolved (`realpath`); measured with 0.169.0 `codex app-server` → `hooks/list`.

Run as `python -m agent_hooks.install.codex_config install|uninstall|status --codex-home DIR
--python P --entry E [--project DIR]`. Standard library only.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import os
import re
import sys
import time
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NoReturn

from agent_hooks.install import claude_settings

CLIENT = "codex"
ENTRY_NAMES = ("/hooks/entry.py", "/hooks/entry.pyc")
BACKUP_INFIX = ".agent-hooks-backup-"
TOOL_MATCHER = "Bash|apply_patch"  # `apply_patch` also answers to `Edit` and `Write`
# (event, matcher or None for "every", timeout in seconds). Codex clamps SessionEnd to 3 s.
HOOKS: tuple[tuple[str, str | None, int], ...] = (
    ("SessionStart", None, 30),
    ("PreToolUse", TOOL_MATCHER, 10),
    ("PostToolUse", TOOL_MATCHER, 10),
    ("SubagentStart", None, 10),
    ("SubagentStop", None, 30),
    ("Stop", None, 10),
    ("SessionEnd", None, 3),
)
# Every event Codex 0.169.0 accepts (a handler of ours for any of them is recognised as ours).
CODEX_EVENTS = frozenset(
    {
        "SessionStart",
        "UserPromptSubmit",
        "PreModelRequest",
        "PreToolUse",
        "PermissionRequest",
        "PostToolUse",
        "PreCompact",
        "PostCompact",
        "SubagentStart",
        "SubagentStop",
        "Stop",
        "SessionEnd",
        "Interrupt",
    }
)
DEFAULT_TIMEOUT = 600
SHORT_EVENTS = frozenset({"SessionEnd", "Interrupt"})  # default 1 s, at most 3 s
SHORT_DEFAULT, SHORT_MAX = 1, 3

Status = Literal["trusted", "modified", "missing", "not installed"]


# --------------------------------------------------------------------------- commands


def _double_quoted(text: str) -> str:
    """`text` as one bash word in double quotes (`\\`, `"`, `$` and backquote escaped)."""
    return '"' + re.sub(r'([\\"$`])', r"\\\1", text) + '"'


def hook_command(python: str, entry: str, event: str) -> str:
    """The command Codex runs (through `/bin/bash -c`) for `event`."""
    return f"{_double_quoted(python)} -IS {_double_quoted(entry)} {CLIENT} {event}"


def installed_command(python: str, entry: str) -> Callable[[str], str]:
    """Hook commands for an installed copy: absolute interpreter, -IS, absolute entry."""
    return lambda event: hook_command(python, entry, event)


def is_ours(handler: object) -> bool:
    """A handler whose command runs our entry script (`…/hooks/entry.py` or `entry.pyc`, quoted
    or not) followed by ` codex <Event>`, wherever it was installed."""
    if not isinstance(handler, dict):
        return False
    command = handler.get("command")
    if not isinstance(command, str):
        return False
    head, _, event = command.rstrip().rpartition(" ")
    head, _, client = head.rstrip().rpartition(" ")
    return (
        event in CODEX_EVENTS
        and client == CLIENT
        and head.rstrip().rstrip("'\"").endswith(ENTRY_NAMES)
    )


def hooks_block(command: Callable[[str], str]) -> dict[str, list[dict[str, Any]]]:
    """Our groups by event: one group (one handler) per entry of `HOOKS`."""
    return claude_settings.hooks_block(command, HOOKS)


# --------------------------------------------------------------------------- trust hash


def event_snake(event: str) -> str:
    """`PreToolUse` → `pre_tool_use`, as in trust keys and in the hashed document."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def effective_timeout(event: str, timeout: object) -> int:
    """The timeout Codex uses (and hashes): 600 s when unset (1 s for SessionEnd/Interrupt), at
    least 1 s, at most 3 s for SessionEnd/Interrupt (hooks/list `timeoutSec`, 0.169.0)."""
    if isinstance(timeout, bool) or not isinstance(timeout, int):
        value = SHORT_DEFAULT if event in SHORT_EVENTS else DEFAULT_TIMEOUT
    else:
        value = max(1, timeout)
    return min(value, SHORT_MAX) if event in SHORT_EVENTS else value


def handler_hash(event: str, matcher: str | None, handler: Mapping[str, Any]) -> str:
    """`sha256:<hex>` of the compact, key-sorted JSON Codex hashes for one command handler
    (PROTOCOL §3; checked against `hooks/list` `currentHash`, non-ASCII text included)."""
    entry: dict[str, Any] = {
        "type": handler.get("type", "command"),
        "command": handler.get("command"),
        "timeout": effective_timeout(event, handler.get("timeout")),
        "async": bool(handler.get("async", False)),
    }
    if handler.get("statusMessage") is not None:
        entry["statusMessage"] = handler["statusMessage"]
    doc: dict[str, Any] = {"event_name": event_snake(event), "hooks": [entry]}
    if matcher is not None:
        doc["matcher"] = matcher
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def trust_key(hooks_path: str, event: str, group: int, index: int) -> str:
    return f"{hooks_path}:{event_snake(event)}:{group}:{index}"


# --------------------------------------------------------------------------- hooks.json


@dataclass(frozen=True)
class Position:
    """One handler of a hooks document: where it is, what it is, whether it is ours."""

    event: str
    group: int
    index: int
    matcher: str | None
    handler: Mapping[str, Any]
    ours: bool

    def key(self, hooks_path: str) -> str:
        return trust_key(hooks_path, self.event, self.group, self.index)

    def hash(self) -> str:
        return handler_hash(self.event, self.matcher, self.handler)


def positions(doc: Mapping[str, Any]) -> list[Position]:
    """Every command handler of `doc` (a hooks.json document), in file order."""
    found: list[Position] = []
    hooks = doc.get("hooks")
    for event, groups in hooks.items() if isinstance(hooks, dict) else ():
        for g, group in enumerate(groups if isinstance(groups, list) else ()):
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                continue
            matcher = group.get("matcher")
            matcher = matcher if isinstance(matcher, str) else None
            for h, handler in enumerate(group["hooks"]):
                if isinstance(handler, dict):
                    found.append(Position(event, g, h, matcher, handler, is_ours(handler)))
    return found


def _without_ours(groups: list[Any]) -> list[Any]:
    kept = []
    for group in groups:
        if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
            kept.append(group)
            continue
        handlers = [h for h in group["hooks"] if not is_ours(h)]
        if handlers:
            kept.append({**group, "hooks": handlers})
        elif not any(is_ours(h) for h in group["hooks"]):
            kept.append(group)  # an empty group of the user's stays as it was
    return kept


def _hooks_table(doc: dict[str, Any], create: bool) -> dict[str, Any] | None:
    if "hooks" not in doc and not create:
        return None
    hooks = doc.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ValueError('"hooks" in the hooks file is not an object')
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            raise ValueError(f'"hooks.{event}" in the hooks file is not a list')
    return hooks


def install_hooks(
    doc: Mapping[str, Any], block: Mapping[str, list[dict[str, Any]]]
) -> dict[str, Any]:
    """`doc` with exactly our `block` in it: an event whose groups of ours already equal the
    block's is left alone (no index moves); otherwise ours are taken out and the block's groups
    appended after the user's. Handlers of ours for events the block lacks are removed."""
    result: dict[str, Any] = copy.deepcopy(dict(doc))
    hooks = _hooks_table(result, create=True)
    assert hooks is not None
    for event in list(hooks):
        if event not in block and any(p.ours for p in positions({"hooks": {event: hooks[event]}})):
            kept = _without_ours(hooks[event])
            if kept:
                hooks[event] = kept
            else:
                del hooks[event]
    for event, wanted in block.items():
        current = hooks.get(event, [])
        ours = [
            g
            for g in current
            if isinstance(g, dict)
            and isinstance(g.get("hooks"), list)
            and any(is_ours(h) for h in g["hooks"])
        ]
        if ours == wanted:
            continue
        hooks[event] = _without_ours(current) + copy.deepcopy(wanted)
    return result


def uninstall_hooks(doc: Mapping[str, Any]) -> dict[str, Any]:
    """`doc` without any handler of ours (groups and events left empty by that are dropped)."""
    result: dict[str, Any] = copy.deepcopy(dict(doc))
    hooks = _hooks_table(result, create=False)
    if hooks is None:
        return result
    for event in list(hooks):
        kept = _without_ours(hooks[event])
        if kept != hooks[event]:
            if kept:
                hooks[event] = kept
            else:
                del hooks[event]
    if not hooks:
        del result["hooks"]
    return result


def read_hooks(path: str) -> dict[str, Any]:
    """The hooks document at `path` (`{}` when missing or blank); ValueError when it is not a
    JSON object with a `hooks` object of lists."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        return {}
    except UnicodeDecodeError:
        raise ValueError(f"{path} is not UTF-8 text; fix it first, nothing was changed") from None
    if not text.strip():
        return {}
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise ValueError(
            f"{path} is not valid JSON ({exc}); fix it first, nothing was changed"
        ) from None
    if not isinstance(doc, dict):
        raise ValueError(f"{path} does not hold a JSON object; fix it first, nothing was changed")
    try:
        _hooks_table(copy.deepcopy(doc), create=False)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}; fix it first, nothing was changed") from None
    result: dict[str, Any] = doc
    return result


# --------------------------------------------------------------------------- trust plan


@dataclass
class TrustPlan:
    """What the trust tables of one hooks file must become: keys to drop, tables to move to a new
    key (a foreign handler whose index shifted), and our keys with their hashes."""

    delete: set[str] = field(default_factory=set)
    rename: dict[str, str] = field(default_factory=dict)
    set_hash: dict[str, str] = field(default_factory=dict)


def trust_plan(hooks_path: str, before: Mapping[str, Any], after: Mapping[str, Any]) -> TrustPlan:
    """The trust edits that keep `config.toml` in step when `before` becomes `after`.

    Foreign handlers keep their order per event (install and uninstall only take ours out and
    append ours), so the n-th foreign handler of an event before is the n-th after.
    """
    old, new = positions(before), positions(after)
    plan = TrustPlan()
    for p in new:
        if p.ours:
            plan.set_hash[p.key(hooks_path)] = p.hash()
    events = {p.event for p in old} | {p.event for p in new}
    for event in events:
        was = [p.key(hooks_path) for p in old if p.event == event and not p.ours]
        now = [p.key(hooks_path) for p in new if p.event == event and not p.ours]
        for a, b in zip(was, now, strict=False):
            if a != b:
                plan.rename[a] = b
    for p in old:
        key = p.key(hooks_path)
        if p.ours and key not in plan.set_hash and key not in plan.rename:
            plan.delete.add(key)
    return plan


# --------------------------------------------------------------------------- config.toml text


def _skip_string(text: str, i: int) -> int:
    """Index just past the TOML string starting at `text[i]` (a quote)."""
    quote, n = text[i], len(text)
    basic = quote == '"'
    if text.startswith(quote * 3, i):
        j = i + 3
        while j < n:
            if basic and text[j] == "\\":
                j += 2
                continue
            if text.startswith(quote * 3, j):
                j += 3
                extra = 0  # up to two more quotes belong to the string's content
                while extra < 2 and j < n and text[j] == quote:
                    j, extra = j + 1, extra + 1
                return j
            j += 1
        return n
    j = i + 1
    while j < n and text[j] != "\n":
        if basic and text[j] == "\\":
            j += 2
            continue
        if text[j] == quote:
            return j + 1
        j += 1
    return j


def logical_lines(text: str) -> list[str]:
    """`text` cut into top-level lines (newline kept): a value spanning several physical lines
    (multi-line string or array) stays one line. Joining the result gives `text` back."""
    lines: list[str] = []
    start = i = depth = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            i += 1
            if depth == 0:
                lines.append(text[start:i])
                start = i
        elif c == "#":
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif c in "\"'":
            i = _skip_string(text, i)
        elif c in "[{":
            depth, i = depth + 1, i + 1
        elif c in "]}":
            depth, i = max(0, depth - 1), i + 1
        else:
            i += 1
    if start < n:
        lines.append(text[start:])
    return lines


_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "\\": "\\"}
_BARE = re.compile(r"[A-Za-z0-9_-]+")


def _basic_string(s: str, i: int) -> tuple[str, int]:
    """(value, index past the closing quote) of the basic string opening at `s[i]`."""
    out, j = [], i + 1
    while s[j] != '"':
        if s[j] == "\\":
            code = s[j + 1]
            if code in "uU":
                width = 4 if code == "u" else 8
                out.append(chr(int(s[j + 2 : j + 2 + width], 16)))
                j += 2 + width
            else:
                out.append(_ESCAPES[code])
                j += 2
        else:
            out.append(s[j])
            j += 1
    return "".join(out), j + 1


def table_header(line: str) -> tuple[bool, tuple[str, ...]] | None:
    """(is an array of tables, key parts) when `line` (a top-level line of a valid document) is
    a table header, else None."""
    s = line.lstrip(" \t")
    if not s.startswith("["):
        return None
    array = s.startswith("[[")
    i = 2 if array else 1
    parts: list[str] = []
    while True:
        while s[i] in " \t":
            i += 1
        if s[i] == '"':
            part, i = _basic_string(s, i)
        elif s[i] == "'":
            end = s.index("'", i + 1)
            part, i = s[i + 1 : end], end + 1
        else:
            match = _BARE.match(s, i)
            if match is None:
                return None
            part, i = match.group(), match.end()
        parts.append(part)
        while s[i] in " \t":
            i += 1
        if s[i] != ".":
            break
        i += 1
    return array, tuple(parts)


def toml_string(text: str) -> str:
    """`text` as a TOML basic string."""
    out = ['"']
    for ch in text:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch in "\b\t\n\f\r":
            out.append("\\" + "btnfr"["\b\t\n\f\r".index(ch)])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _trust_header(key: str) -> str:
    return f"[hooks.state.{toml_string(key)}]"


def _is_blank_or_comment(line: str) -> bool:
    stripped = line.strip()
    return not stripped or stripped.startswith("#")


_TRUSTED_HASH_LINE = re.compile(r"[ \t]*trusted_hash[ \t]*=")


def parse_config(path: str, text: str) -> dict[str, Any]:
    """`text` (the content of `path`) parsed; ValueError (one line) when it is not valid TOML or
    its `[hooks.state]` / `[projects]` are not tables."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(
            f"{path} is not valid TOML ({exc}); fix it first, nothing was changed"
        ) from None
    hooks = doc.get("hooks", {})
    if not isinstance(hooks, dict) or not isinstance(hooks.get("state", {}), dict):
        raise ValueError(f"{path}: hooks.state is not a table; fix it first, nothing was changed")
    if not isinstance(doc.get("projects", {}), dict):
        raise ValueError(f"{path}: projects is not a table; fix it first, nothing was changed")
    return doc


def trust_state(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The `[hooks.state]` table of a parsed config (empty when absent)."""
    hooks = doc.get("hooks")
    state = hooks.get("state") if isinstance(hooks, dict) else None
    return state if isinstance(state, dict) else {}


def edit_config(path: str, text: str, plan: TrustPlan, *, trust_project: str | None = None) -> str:
    """`text` with `plan` applied to its `[hooks.state."…"]` tables (and, given `trust_project`,
    `[projects."<root>"] trust_level = "trusted"` added); every other byte kept.

    Tables are dropped with their key/value lines (and one blank line before them); renamed by
    rewriting the header line only; a hash is changed on its `trusted_hash` line only. New tables
    are appended at the end. ValueError when an entry to change is not written as such a table,
    or when the result does not parse to exactly the intended document.
    """
    doc = parse_config(path, text)
    state = trust_state(doc)
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = logical_lines(text)
    headers = [table_header(line) for line in lines]
    keys = [_trust_table_key(h) for h in headers]
    tables = {k for k in keys if k is not None}
    touched = plan.delete | set(plan.rename) | set(plan.set_hash)
    for key in sorted(touched):
        if key in state and key not in tables:
            raise ValueError(
                f"{path}: the trust entry {key!r} is not written as a "
                f'[hooks.state."…"] table; edit it by hand (nothing was changed)'
            )
    targets = set(plan.rename.values())
    delete = set(plan.delete) | {k for k in tables if k in targets and k not in plan.rename}

    expected = copy.deepcopy(doc)
    new_state = trust_state(expected)
    moved = {new: new_state.pop(old) for old, new in plan.rename.items() if old in new_state}
    for key in delete:
        new_state.pop(key, None)
    new_state.update(moved)
    for key, digest in plan.set_hash.items():
        entry = new_state.get(key)
        if isinstance(entry, dict):
            entry["trusted_hash"] = digest
        else:
            new_state[key] = {"trusted_hash": digest}
    if new_state and "state" not in expected.get("hooks", {}):
        expected.setdefault("hooks", {})["state"] = new_state

    out: list[str] = []
    seen: set[str] = set()
    i = 0
    while i < len(lines):
        table_key = keys[i]
        if table_key is None or (table_key not in touched and table_key not in delete):
            out.append(lines[i])
            i += 1
            continue
        end = i + 1  # the table's own lines: up to the next header, minus trailing blanks/comments
        while end < len(lines) and headers[end] is None:
            end += 1
        own_end = end
        while own_end > i + 1 and _is_blank_or_comment(lines[own_end - 1]):
            own_end -= 1
        own, rest = lines[i:own_end], lines[own_end:end]
        if table_key in plan.rename:
            final = plan.rename[table_key]
            own[0] = _trust_header(final) + _line_end(own[0], newline)
        elif table_key in delete:
            if out and not out[-1].strip():
                out.pop()
            out.extend(rest)
            i = end
            continue
        else:
            final = table_key
        if final in plan.set_hash:
            own = _with_hash(own, plan.set_hash[final], newline)
        seen.add(final)
        out.extend(own)
        out.extend(rest)
        i = end

    additions = [
        _trust_header(key) + newline + f"trusted_hash = {toml_string(digest)}" + newline
        for key, digest in plan.set_hash.items()
        if key not in seen
    ]
    if trust_project is not None:
        project = doc.get("projects", {}).get(trust_project)
        if project is None:
            additions.append(
                f'[projects.{toml_string(trust_project)}]{newline}trust_level = "trusted"{newline}'
            )
            expected.setdefault("projects", {})[trust_project] = {"trust_level": "trusted"}
        elif not isinstance(project, dict) or project.get("trust_level") != "trusted":
            raise ValueError(
                f'{path}: [projects."{trust_project}"] is there but not trust_level = "trusted"; '
                "change it by hand (nothing was changed)"
            )
    result = "".join(out)
    for addition in additions:
        if result and not result.endswith("\n"):
            result += newline
        result += (newline if result.strip() else "") + addition
    try:
        parsed = tomllib.loads(result)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(
            f"{path}: agent-hooks could not edit it safely ({exc}); nothing was changed"
        ) from None
    if _pruned(parsed) != _pruned(expected):
        raise ValueError(
            f"{path}: agent-hooks could not edit its trust entries safely (they are written in a "
            "form it does not edit); nothing was changed"
        )
    return result


def _trust_table_key(header: tuple[bool, tuple[str, ...]] | None) -> str | None:
    """The key of a `[hooks.state."<key>"]` header, else None."""
    if header is None or header[0] or len(header[1]) != 3 or header[1][:2] != ("hooks", "state"):
        return None
    return header[1][2]


def _pruned(doc: dict[str, Any]) -> dict[str, Any]:
    """`doc` without an empty `[hooks.state]`, `[hooks]` or `[projects]` (whether a table left empty
    is still written with its header is not a difference that matters)."""
    result = copy.deepcopy(doc)
    hooks = result.get("hooks")
    if isinstance(hooks, dict):
        if hooks.get("state") == {}:
            del hooks["state"]
        if not hooks:
            del result["hooks"]
    if result.get("projects") == {}:
        del result["projects"]
    return result


def _line_end(line: str, newline: str) -> str:
    if line.endswith("\r\n"):
        return "\r\n"
    return "\n" if line.endswith("\n") else ""


def _with_hash(own: list[str], digest: str, newline: str) -> list[str]:
    """The table's lines with its `trusted_hash` set to `digest` (added after the header)."""
    value = f"trusted_hash = {toml_string(digest)}"
    for n, line in enumerate(own[1:], start=1):
        if _TRUSTED_HASH_LINE.match(line):
            return [*own[:n], value + (_line_end(line, newline) or newline), *own[n + 1 :]]
    header = own[0] if own[0].endswith("\n") else own[0] + newline
    return [header, value + newline, *own[1:]]


# --------------------------------------------------------------------------- files


def default_codex_home() -> str:
    """`$CODEX_HOME`, else `~/.codex` (Codex's own rule)."""
    return os.environ.get("CODEX_HOME") or os.path.join(os.path.expanduser("~"), ".codex")


def config_path(codex_home: str) -> str:
    return os.path.join(os.path.realpath(codex_home), "config.toml")


def hooks_path(codex_home: str, project: str | None = None) -> str:
    """The absolute hooks.json path as Codex names it in trust keys (directories resolved)."""
    if project is not None:
        return os.path.join(os.path.realpath(project), ".codex", "hooks.json")
    return os.path.join(os.path.realpath(codex_home), "hooks.json")


def project_root(project: str) -> str:
    """The directory Codex keys project trust by: the git work tree's top level (for a linked
    worktree, the main one's), else the directory itself (`codex exec --trust`, 0.169.0)."""
    start = os.path.realpath(project)
    current = start
    while True:
        dot_git = os.path.join(current, ".git")
        if os.path.isdir(dot_git):
            return current
        if os.path.isfile(dot_git):
            return _main_worktree(current, dot_git)
        parent = os.path.dirname(current)
        if parent == current:
            return start
        current = parent


def _main_worktree(top: str, dot_git: str) -> str:
    """For a linked worktree (`.git` file: `gitdir: <main>/.git/worktrees/<name>`), `<main>`."""
    try:
        with open(dot_git, encoding="utf-8") as handle:
            first = handle.readline().strip()
    except (OSError, UnicodeDecodeError):
        return top
    if not first.startswith("gitdir:"):
        return top
    gitdir = os.path.realpath(os.path.join(top, first[len("gitdir:") :].strip()))
    parent, _ = os.path.split(gitdir)
    common, name = os.path.split(parent)
    if name == "worktrees" and os.path.basename(common) == ".git":
        return os.path.dirname(common)
    return top


def _read_text(path: str) -> str:
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            return handle.read()
    except FileNotFoundError:
        return ""
    except UnicodeDecodeError:
        raise ValueError(f"{path} is not UTF-8 text; fix it first, nothing was changed") from None


def _write_atomic(path: str, data: bytes, mode: int) -> None:
    directory, name = os.path.split(path)
    tmp = os.path.join(directory, f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
        os.fchmod(fd, mode)
        os.close(fd)
        fd = -1
        os.replace(tmp, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def backups(path: str) -> list[str]:
    """Every `<path>.agent-hooks-backup-*` beside the (resolved) file, oldest first."""
    directory, name = os.path.split(os.path.realpath(path))
    try:
        found = sorted(f for f in os.listdir(directory) if f.startswith(name + BACKUP_INFIX))
    except OSError:
        return []
    return [os.path.join(directory, f) for f in found]


def write_file(path: str, text: str, now: float) -> str | None:
    """Replace the (resolved) file with `text`, backing up an existing one first (older backups
    are removed); return the backup's path. A new file is created 0644, an old one keeps its
    mode."""
    real = os.path.realpath(path)
    os.makedirs(os.path.dirname(real), exist_ok=True)
    backup = None
    mode = 0o644
    if os.path.exists(real):
        mode = os.stat(real).st_mode & 0o7777
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now))
        backup = f"{real}{BACKUP_INFIX}{stamp}"
        n = 1
        while os.path.lexists(backup):
            n += 1
            backup = f"{real}{BACKUP_INFIX}{stamp}-{n}"
        with open(real, "rb") as src:
            _write_atomic(backup, src.read(), mode)
    _write_atomic(real, text.encode("utf-8"), mode)
    for old in backups(real):
        if old != backup and backup is not None:
            try:
                os.unlink(old)
            except FileNotFoundError:
                pass
    return backup


def _hooks_text(doc: Mapping[str, Any]) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


# --------------------------------------------------------------------------- operations


@dataclass
class Outcome:
    """What install or uninstall did; `advice` holds lines the user must act on."""

    hooks_path: str
    config_path: str
    hooks_changed: bool = False
    config_changed: bool = False
    hooks_removed: bool = False
    keys: list[str] = field(default_factory=list)  # our trust keys after the operation
    renamed: dict[str, str] = field(default_factory=dict)
    backups: list[str] = field(default_factory=list)
    project_root: str | None = None
    project_trusted: bool | None = None
    advice: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.hooks_changed or self.config_changed


def _check_paths(python: str, entry: str) -> None:
    if not os.path.isabs(python):
        raise ValueError(f"--python must be an absolute path, not {python!r}")
    if not (os.path.isfile(python) and os.access(python, os.X_OK)):
        raise ValueError(f"--python {python} is not an executable file")
    if not os.path.isabs(entry):
        raise ValueError(f"--entry must be an absolute path, not {entry!r}")
    if not entry.endswith(ENTRY_NAMES):
        raise ValueError(f"--entry {entry} must end in {' or '.join(ENTRY_NAMES)}")
    if not os.path.isfile(entry):
        raise ValueError(f"--entry {entry} does not exist")


def _check_project(project: str | None) -> None:
    if project is not None and not os.path.isdir(project):
        raise ValueError(f"--project {project} is not a directory")


def _is_trusted_project(doc: Mapping[str, Any], root: str) -> bool:
    projects = doc.get("projects")
    entry = projects.get(root) if isinstance(projects, dict) else None
    return isinstance(entry, dict) and entry.get("trust_level") == "trusted"


def _project_advice(outcome: Outcome, config: str) -> None:
    root = outcome.project_root
    if root is None or outcome.project_trusted:
        return
    outcome.advice.append(
        f"Codex runs project hooks only in a trusted project: add "
        f'[projects."{root}"] trust_level = "trusted" to {config}, run `codex exec --trust` '
        f"once in {root}, or install again with --trust-project"
    )


def install(
    codex_home: str,
    python: str,
    entry: str,
    *,
    project: str | None = None,
    trust_project: bool = False,
    now: float | None = None,
) -> Outcome:
    """Add our handlers to the user's (or `project`'s) hooks.json and trust exactly them in the
    user's config.toml; see the module's invariants."""
    _check_paths(python, entry)
    _check_project(project)
    config, path = config_path(codex_home), hooks_path(codex_home, project)
    text = _read_text(config)
    doc = parse_config(config, text)
    before = read_hooks(path)
    after = install_hooks(before, hooks_block(installed_command(python, entry)))
    plan = trust_plan(path, before, after)
    outcome = Outcome(path, config, keys=list(plan.set_hash), renamed=dict(plan.rename))
    root = None
    if project is not None:
        root = outcome.project_root = project_root(project)
        outcome.project_trusted = _is_trusted_project(doc, root) or trust_project
    want_trust = root if trust_project and root and not _is_trusted_project(doc, root) else None
    new_text = edit_config(config, text, plan, trust_project=want_trust)
    _commit(outcome, text, new_text, before, after, now)
    _project_advice(outcome, config)
    return outcome


def uninstall(codex_home: str, *, project: str | None = None, now: float | None = None) -> Outcome:
    """Remove our handlers from the user's (or `project`'s) hooks.json and their trust tables
    from the user's config.toml; nothing else (a project's trust entry stays)."""
    _check_project(project)
    config, path = config_path(codex_home), hooks_path(codex_home, project)
    text = _read_text(config)
    parse_config(config, text)
    before = read_hooks(path)
    after = uninstall_hooks(before)
    plan = trust_plan(path, before, after)
    outcome = Outcome(path, config, renamed=dict(plan.rename))
    new_text = edit_config(config, text, plan)
    _commit(outcome, text, new_text, before, after, now)
    return outcome


def _commit(
    outcome: Outcome,
    text: str,
    new_text: str,
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    now: float | None,
) -> None:
    """Write config.toml first (a trust entry for a handler not yet there is harmless; a handler
    without its entry would be skipped silently), then hooks.json."""
    stamp = time.time() if now is None else now
    if new_text != text:
        backup = write_file(outcome.config_path, new_text, stamp)
        outcome.config_changed = True
        outcome.backups.extend([backup] if backup else [])
    if after == before:
        return
    outcome.hooks_changed = True
    real = os.path.realpath(outcome.hooks_path)
    if not after and os.path.exists(real):  # nothing of anyone's is left in it
        os.unlink(real)
        outcome.hooks_removed = True
        return
    backup = write_file(outcome.hooks_path, _hooks_text_like_before(real, after), stamp)
    outcome.backups.extend([backup] if backup else [])


def _hooks_text_like_before(path: str, doc: Mapping[str, Any]) -> str:
    """`doc` as JSON text; the newest backup's own text when that holds exactly `doc` (an
    uninstall right after an install gives the user's file back with its formatting)."""
    for backup in reversed(backups(path)):
        try:
            with open(backup, encoding="utf-8") as handle:
                text = handle.read()
            if json.loads(text) == doc:
                return text
        except (OSError, ValueError):
            pass
        break
    return _hooks_text(doc)


@dataclass(frozen=True)
class HandlerStatus:
    """One of our handlers: its trust key and whether Codex will run it."""

    event: str
    key: str
    status: Status
    command: str | None = None
    current_hash: str | None = None
    stored_hash: str | None = None


@dataclass
class StatusReport:
    hooks_path: str
    config_path: str
    handlers: list[HandlerStatus]
    project_root: str | None = None
    project_trusted: bool | None = None

    @property
    def ok(self) -> bool:
        """Every handler of ours is installed and trusted (and the project, if any, too)."""
        return all(h.status == "trusted" for h in self.handlers) and self.project_trusted in (
            None,
            True,
        )


def trust_status(codex_home: str, *, project: str | None = None) -> StatusReport:
    """For each of our handlers in the hooks file: `trusted` (the stored hash is the current
    one), `modified` (a stored hash differs: Codex silently skips the handler), `missing` (no
    trust entry); for each of our events without a handler: `not installed`."""
    _check_project(project)
    config, path = config_path(codex_home), hooks_path(codex_home, project)
    doc = parse_config(config, _read_text(config))
    state = trust_state(doc)
    handlers: list[HandlerStatus] = []
    ours = [p for p in positions(read_hooks(path)) if p.ours]
    for p in ours:
        key, current = p.key(path), p.hash()
        entry = state.get(key)
        stored = entry.get("trusted_hash") if isinstance(entry, dict) else None
        stored = stored if isinstance(stored, str) else None
        status: Status = (
            "missing" if stored is None else "trusted" if stored == current else "modified"
        )
        handlers.append(
            HandlerStatus(p.event, key, status, p.handler.get("command"), current, stored)
        )
    present = {p.event for p in ours}
    for event, _, _ in HOOKS:
        if event not in present:
            handlers.append(HandlerStatus(event, "", "not installed"))
            present.add(event)
    report = StatusReport(path, config, handlers)
    if project is not None:
        report.project_root = project_root(project)
        report.project_trusted = _is_trusted_project(doc, report.project_root)
    return report


# --------------------------------------------------------------------------- command line


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """One line on stderr, exit 2 (argparse's default prints the usage too)."""
        self.exit(2, f"agent-hooks: {message} (see --help)\n")


def main(argv: Sequence[str] | None = None) -> int:
    """The command line. Exit codes: 0 done (status: every handler of ours trusted, and the
    project too), 1 a file or path was refused (one line on stderr, nothing changed), 2 a bad
    command line (one line), 3 status found a handler Codex will skip or an untrusted project."""
    parser = _Parser(
        prog="python -m agent_hooks.install.codex_config",
        description="Install, remove or check agent-hooks' Codex hooks and their trust entries.",
    )
    parser.add_argument("action", choices=["install", "uninstall", "status"])
    parser.add_argument(
        "--codex-home",
        default=None,
        help="Codex's home directory (default: $CODEX_HOME, else ~/.codex); its config.toml "
        "holds the trust entries.",
    )
    parser.add_argument("--python", help="Absolute path of the hooks' interpreter (install).")
    parser.add_argument(
        "--entry", help="Absolute path of hooks/entry.py, or of it compiled (entry.pyc) (install)."
    )
    parser.add_argument(
        "--project",
        help="Put the hooks into DIR/.codex/hooks.json instead of the user's hooks.json.",
    )
    parser.add_argument(
        "--trust-project",
        action="store_true",
        help='With --project: also mark the project trusted ([projects."<root>"] trust_level).',
    )
    args = parser.parse_args(argv)
    if args.trust_project and not args.project:
        parser.error("--trust-project needs --project")
    if args.action == "install" and not (args.python and args.entry):
        parser.error("install needs --python and --entry")
    home = args.codex_home or default_codex_home()
    try:
        if args.action == "install":
            outcome = install(
                home,
                args.python,
                args.entry,
                project=args.project,
                trust_project=args.trust_project,
            )
            _print_outcome(outcome, "installed")
            return 0
        if args.action == "uninstall":
            _print_outcome(uninstall(home, project=args.project), "removed")
            return 0
        report = trust_status(home, project=args.project)
    except (ValueError, OSError) as exc:
        print(f"agent-hooks: {_one_line(exc)}", file=sys.stderr)
        return 1
    for line in status_lines(report):
        print(line)
    return 0 if report.ok else 3


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def _print_outcome(outcome: Outcome, verb: str) -> None:
    if not outcome.changed:
        print(
            f"{outcome.hooks_path}: already {'up to date' if verb == 'installed' else 'without agent-hooks'}; unchanged"
        )
    else:
        detail = (
            f"{len(outcome.keys)} handlers trusted in {outcome.config_path}"
            if verb == "installed"
            else f"trust entries removed from {outcome.config_path}"
        )
        print(f"{outcome.hooks_path}: agent-hooks {verb} for Codex ({detail})")
        for old, new in outcome.renamed.items():
            print(f"  trust of another tool's handler moved with it: {old} -> {new}")
    for line in outcome.advice:
        print(line)


def status_lines(report: StatusReport) -> Iterable[str]:
    """What `agent-hooks doctor` prints: one line per handler, then the project's trust."""
    yield f"Codex hooks in {report.hooks_path} (trust in {report.config_path}):"
    notes = {
        "trusted": "",
        "modified": " (stored hash differs: Codex silently skips it; install again)",
        "missing": " (no trust entry: Codex silently skips it; install again)",
        "not installed": " (install agent-hooks for Codex)",
    }
    for h in report.handlers:
        where = f" {h.key}" if h.key else ""
        yield f"  {h.status:<13} {h.event:<13}{where}{notes[h.status]}"
    if report.project_root is not None:
        state = "trusted" if report.project_trusted else "NOT trusted (no project hook runs)"
        yield f"  project {report.project_root}: {state}"


if __name__ == "__main__":
    raise SystemExit(main())
