"""Codex's installer module (0.169.0, 0.171.0): a `hooks.json` entry per event, and the
trust hash Codex requires before it runs any of them.

Codex runs a non-managed hook only when the user's `config.toml` holds, for that handler's
position, `[hooks.state."<abs hooks.json>:<event_snake>:<group idx>:<handler idx>"]
trusted_hash = "sha256:<hex>"` with the hash of exactly what is configured there; an untrusted or
modified handler is skipped without a word (reference/codex-0.169.0/PROTOCOL.md §3). So installing
is two edits that must agree: the handlers in `hooks.json` (the user's `$CODEX_HOME/hooks.json`,
or a project's `<DIR>/.codex/hooks.json`) and their trust tables in the user's
`$CODEX_HOME/config.toml` — this client's trust step. Which handlers are ours, the merge of
`hooks.json`, backups and writes are `hooks_file`'s; invariants here:

* Only the trust tables of our handlers' positions are added, changed or removed. A foreign
  handler whose position changes because one of ours was removed before it keeps its trust:
  its table moves to the new position's key (the hash does not include the position).
* `config.toml` is edited with tomlkit, which keeps every byte it is not asked to change
  (comments, spacing, order, CRLF line ends); new trust tables are appended at the end, their
  keys quoted by tomlkit; the blank line before a removed table goes with it. Each edit is
  checked by parsing the result with `tomllib` and
  comparing it with the intended document; if they differ nothing is written. An uninstall
  whose result is what the newest backup holds writes that backup's bytes. A `config.toml`
  or `hooks.json` that does not parse is refused with one line, never overwritten.
  Without tomlkit (an uninstall run by an interpreter that lacks it, the venv gone) the
  handlers still come out of `hooks.json` and their trust tables stay, said in one line:
  a hash names one command at one position, so a stale one trusts nothing else.
* Install is idempotent: when both files already hold the current handlers and hashes, nothing is
  written. Reinstalling with another interpreter or entry rewrites our handlers and hashes.
* A project is never trusted on the user's behalf unless asked (`trust_project=True`,
  `--trust-project`); otherwise the outcome says what to do.
* Paths in trust keys are the resolved paths Codex uses: `$CODEX_HOME` and the project directory
  are resolved (`realpath`); measured with 0.169.0 `codex app-server` → `hooks/list`.

Run as `python -m agent_hooks.install.codex_config install|uninstall|status --codex-home DIR
--python P --entry E [--project DIR]`.
"""

from __future__ import annotations

import argparse
import copy
import difflib
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

from agent_hooks.install import client_installer, hooks_file
from agent_hooks.install.client_installer import ClientStatus, Setup

NAME = CLIENT = "codex"
LABEL = "Codex"
PROJECT_DIR = ".codex"
ENTRY_NAMES = hooks_file.ENTRY_NAMES
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
DEFAULT_TIMEOUT = 600
SHORT_EVENTS = frozenset({"SessionEnd", "Interrupt"})  # default 1 s, at most 3 s
SHORT_DEFAULT, SHORT_MAX = 1, 3

Status = Literal["trusted", "modified", "missing", "not installed"]
is_ours = hooks_file.is_ours
backups = hooks_file.backups
install_hooks = hooks_file.install
uninstall_hooks = hooks_file.uninstall


# --------------------------------------------------------------------------- commands


def hook_command(python: str, entry: str, event: str) -> str:
    """The command Codex runs (through `/bin/bash -c`) for `event` (`hooks_file.hook_command`)."""
    return hooks_file.hook_command(python, entry, CLIENT, event)


def installed_command(python: str, entry: str) -> Callable[[str], str]:
    return lambda event: hook_command(python, entry, event)


def hooks_block(command: Callable[[str], str]) -> dict[str, list[dict[str, Any]]]:
    """Our groups by event: one group (one handler) per entry of `HOOKS`."""
    return hooks_file.hooks_block(HOOKS, command)


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


def read_hooks(path: str) -> dict[str, Any]:
    """The hooks document at `path` (`{}` when missing or blank); ValueError when it is not a
    JSON object with a `hooks` object of lists (Codex's positions count every event's)."""
    doc = hooks_file.read_document(path)
    hooks = doc.get("hooks", {})
    if not isinstance(hooks, dict):
        bad: str | None = '"hooks" in the hooks file is not an object'
    else:
        bad = next((f'"hooks.{e}" in the hooks file is not a list' for e, g in hooks.items()
                    if not isinstance(g, list)), None)  # fmt: skip
    if bad is not None:
        raise ValueError(f"{path}: {bad}; fix it first, nothing was changed")
    return doc


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


# --------------------------------------------------------------------------- config.toml


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


def _intended(doc: dict[str, Any], plan: TrustPlan, delete: set[str]) -> dict[str, Any]:
    """The document `plan` (and deleting `delete`) makes of `doc`."""
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
    return expected


def edit_config(path: str, text: str, plan: TrustPlan, *, trust_project: str | None = None) -> str:
    """`text` with `plan` applied to its `[hooks.state]` entries (and, given `trust_project`,
    `[projects."<root>"] trust_level = "trusted"` added); every other byte kept (see the
    module's invariants). ValueError when an entry to change is not a table, or when the
    result does not parse to exactly the intended document."""
    import tomlkit  # install-time only: the hooks never load it

    doc = parse_config(path, text)
    state = trust_state(doc)
    targets = set(plan.rename.values())
    delete = set(plan.delete) | {k for k in state if k in targets and k not in plan.rename}
    expected = _intended(doc, plan, delete)
    for key in sorted(plan.delete | set(plan.rename) | set(plan.set_hash)):
        if key in state and not isinstance(state[key], dict):
            raise ValueError(
                f"{path}: the trust entry {key!r} is not a table; edit it by hand "
                "(nothing was changed)"
            )
    edited = tomlkit.parse(text)
    hooks = edited.get("hooks")
    table = hooks.get("state") if hooks is not None else None
    additions: list[tuple[str, str]] = []
    if table is not None:
        moved = {new: table[old] for old, new in plan.rename.items() if old in table}
        for old in plan.rename:
            if old in table:
                del table[old]
        for key in delete:
            if key in table:
                del table[key]
        for key, item in moved.items():
            table[key] = item
    for key, digest in plan.set_hash.items():
        if table is not None and key in table:
            table[key]["trusted_hash"] = digest
        elif isinstance(table, tomlkit.items.InlineTable):
            table[key] = tomlkit.inline_table()
            table[key]["trusted_hash"] = digest
        else:
            additions.append((tomlkit.key(["hooks", "state", key]).as_string(), digest))
    result = _without_blank_lines_of_removed(text, edited.as_string())
    newline = "\r\n" if "\r\n" in text else "\n"
    blocks = [
        f"[{header}]{newline}trusted_hash = {tomlkit.string(digest).as_string()}{newline}"
        for header, digest in additions
    ]
    if trust_project is not None:
        project = doc.get("projects", {}).get(trust_project)
        if project is None:
            header = tomlkit.key(["projects", trust_project]).as_string()
            blocks.append(f'[{header}]{newline}trust_level = "trusted"{newline}')
            expected.setdefault("projects", {})[trust_project] = {"trust_level": "trusted"}
        elif not isinstance(project, dict) or project.get("trust_level") != "trusted":
            raise ValueError(
                f'{path}: [projects."{trust_project}"] is there but not trust_level = "trusted"; '
                "change it by hand (nothing was changed)"
            )
    for block in blocks:
        if result and not result.endswith("\n"):
            result += newline
        result += (newline if result.strip() else "") + block
    if newline == "\r\n" and "\n" not in text.replace("\r\n", ""):
        result = re.sub(r"(?<!\r)\n", "\r\n", result)  # tomlkit's own line ends, as the file's
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


def _without_blank_lines_of_removed(before: str, after: str) -> str:
    """`after` (tomlkit's edit of `before`) without the blank line that stood before a
    removed table and that tomlkit leaves (it belongs to what precedes the table): where
    a run of lines that did not end blank was removed right after a blank line, that blank
    line goes too — our tables are appended after one (`edit_config`)."""
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    out: list[str] = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, _, i2, j1, j2 in matcher.get_opcodes():
        if tag == "delete" and old[i2 - 1].strip() and out and not out[-1].strip():
            out.pop()
        out.extend(new[j1:j2])
    return "".join(out)


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


def _text_like_backup(path: str, text: str) -> str:
    """`text`, or the newest backup's bytes when they parse to the same document (an
    uninstall right after an install gives the user's file back as it was)."""
    backup = hooks_file.latest_backup(path)
    if backup is None:
        return text
    try:
        with open(backup, encoding="utf-8", newline="") as handle:
            saved = handle.read()
        if tomllib.loads(saved) == tomllib.loads(text):
            return saved
    except (OSError, ValueError):
        pass
    return text


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


# --------------------------------------------------------------------------- operations


@dataclass
class Result:
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


def _project_advice(outcome: Result, config: str) -> None:
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
) -> Result:
    """Add our handlers to the user's (or `project`'s) hooks.json and trust exactly them in the
    user's config.toml; see the module's invariants."""
    _check_paths(python, entry)
    _check_project(project)
    config, path = config_path(codex_home), hooks_path(codex_home, project)
    text = _read_text(config)
    doc = parse_config(config, text)
    read_hooks(path)
    block = hooks_block(installed_command(python, entry))
    change = hooks_file.plan_install(path, lambda d: install_hooks(d, block))
    plan = trust_plan(path, change.before, change.after)
    outcome = Result(path, config, keys=list(plan.set_hash), renamed=dict(plan.rename))
    root = None
    if project is not None:
        root = outcome.project_root = project_root(project)
        outcome.project_trusted = _is_trusted_project(doc, root) or trust_project
    want_trust = root if trust_project and root and not _is_trusted_project(doc, root) else None
    new_text = edit_config(config, text, plan, trust_project=want_trust)
    _commit(outcome, text, new_text, change, now)
    _project_advice(outcome, config)
    return outcome


def uninstall(codex_home: str, *, project: str | None = None, now: float | None = None) -> Result:
    """Remove our handlers from the user's (or `project`'s) hooks.json and their trust tables
    from the user's config.toml; nothing else (a project's trust entry stays)."""
    _check_project(project)
    config, path = config_path(codex_home), hooks_path(codex_home, project)
    text = _read_text(config)
    parse_config(config, text)
    read_hooks(path)
    change = hooks_file.plan_uninstall(path, created=True)  # a hooks.json left empty goes
    plan = trust_plan(path, change.before, change.after)
    outcome = Result(path, config, renamed=dict(plan.rename))
    try:
        new_text = _text_like_backup(config, edit_config(config, text, plan))
    except ImportError:
        new_text = text
        if plan.delete or plan.rename:
            outcome.advice.append(
                f"{config}: the trust entries of the removed handlers stay (tomlkit is not "
                "installed for this Python; they trust nothing else)"
            )
    _commit(outcome, text, new_text, change, now)
    return outcome


def _commit(
    outcome: Result, text: str, new_text: str, change: hooks_file.Change, now: float | None
) -> None:
    """Write config.toml first (a trust entry for a handler not yet there is harmless; a handler
    without its entry would be skipped silently), then hooks.json."""
    stamp = time.time() if now is None else now
    if new_text != text:
        backup = hooks_file.write_text(outcome.config_path, new_text, stamp)
        if backup is not None:
            hooks_file.prune_backups(outcome.config_path, keep=backup)
            outcome.backups.append(backup)
        outcome.config_changed = True
    if not change.changed:
        return
    hooks_file.commit(change, stamp)
    outcome.hooks_changed = True
    outcome.hooks_removed = change.removed or (
        change.restore_from is not None
        and not os.path.lexists(os.path.realpath(outcome.hooks_path))
    )
    outcome.backups.extend([change.backup] if change.backup else [])


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


# --------------------------------------------------------------------------- the interface


def home(environ: Mapping[str, str]) -> str:
    """`$CODEX_HOME`, else `~/.codex` (Codex's own rule)."""
    base = environ.get("HOME") or os.path.expanduser("~")
    return environ.get("CODEX_HOME") or os.path.join(base, PROJECT_DIR)


def detect(environ: Mapping[str, str], which: Callable[..., str | None]) -> str | None:
    return client_installer.found_on_machine(CLIENT, home(environ), environ, which)


def target(home: str, project: str | None) -> str:
    return hooks_path(home, project)


def add(setup: Setup) -> client_installer.Outcome:
    outcome = install(
        setup.home,
        setup.python,
        setup.entry,
        project=setup.project,
        trust_project=setup.trust_project,
        now=setup.now,
    )
    return client_installer.Outcome(outcome.hooks_path, list(outcome_lines(outcome, "installed")))


def remove(setup: Setup) -> client_installer.Outcome:
    outcome = uninstall(setup.home, project=setup.project, now=setup.now)
    return client_installer.Outcome(outcome.hooks_path, list(outcome_lines(outcome, "removed")))


def commands(home: str, project: str | None) -> list[list[str]]:
    return hooks_file.our_argvs(read_hooks(hooks_path(home, project)))


def check(home: str, project: str | None, python: str | None, entry: str | None) -> ClientStatus:
    if project is not None and not os.path.isdir(project):
        line = f"{project}: the project is gone (fix: ./install.sh --uninstall --project {project})"
        return ClientStatus(NAME, project, project, False, [line], [line])
    report = trust_status(home, project=project)
    again = "./install.sh --clients codex" + (f" --project {project}" if project else "")
    problems = [
        f"Codex's {h.event} hook is {h.status}: Codex silently skips it (fix: {again})"
        for h in report.handlers
        if h.status != "trusted"
    ]
    if report.project_root is not None and not report.project_trusted:
        problems.append(
            f"Codex runs no project hook in {report.project_root}: it is not trusted (fix: "
            f"{again} --trust-project, or `codex exec --trust` there once)"
        )
    return ClientStatus(
        NAME, project, report.hooks_path, report.ok, list(status_lines(report)), problems
    )


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
    codex_home = args.codex_home or default_codex_home()
    try:
        if args.action == "install":
            outcome = install(
                codex_home,
                args.python,
                args.entry,
                project=args.project,
                trust_project=args.trust_project,
            )
            _print_lines(outcome_lines(outcome, "installed"))
            return 0
        if args.action == "uninstall":
            _print_lines(outcome_lines(uninstall(codex_home, project=args.project), "removed"))
            return 0
        report = trust_status(codex_home, project=args.project)
    except (ValueError, OSError) as exc:
        print(f"agent-hooks: {_one_line(exc)}", file=sys.stderr)
        return 1
    _print_lines(status_lines(report))
    return 0 if report.ok else 3


def _print_lines(lines: Iterable[str]) -> None:
    for line in lines:
        print(line)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def outcome_lines(outcome: Result, verb: str) -> Iterable[str]:
    """What install (`verb` "installed") or uninstall ("removed") did, for a person."""
    if not outcome.changed:
        state = "up to date" if verb == "installed" else "without agent-hooks"
        yield f"{outcome.hooks_path}: already {state}; unchanged"
    else:
        detail = (
            f"{len(outcome.keys)} handlers trusted in {outcome.config_path}"
            if verb == "installed"
            else f"trust entries removed from {outcome.config_path}"
        )
        yield f"{outcome.hooks_path}: agent-hooks {verb} for Codex ({detail})"
        for old, new in outcome.renamed.items():
            yield f"  trust of another tool's handler moved with it: {old} -> {new}"
    yield from outcome.advice


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
