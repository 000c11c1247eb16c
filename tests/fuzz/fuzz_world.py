"""What the fuzz tests share: a throwaway world per example, the real hook entry
script run in it, the protocol and filesystem checks every run must pass, and the
oracles the properties are judged by.

A world is a fresh directory holding `home/` (HOME: `home/.claude` is the state
directory), `proj/` (a git work tree with a few files, symlinks into and out of it
and a `.git/HEAD`; its ledger is `proj/.git/agent-hooks/`) and `outside/` (a
directory in no repository). Nothing outside the world is touched: every hook runs
with HOME inside it and an environment built from scratch.

The oracles are written from the documented rules, not from the code under test:
path resolution as `os.path.realpath` does it, glob matching by pathspec (the
reference `reservations/pattern.py` names), liveness from `/proc` (ADR-0014), and
which writer a lease blocks from ADR-0014's table.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from hypothesis import settings
from pathspec import PathSpec
from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

from hook_runner import ENTRY

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
if PROFILE not in ("ci", "deep"):
    PROFILE = "ci"


def fuzz_settings(**overrides: Any) -> settings:
    """The active fuzz profile (tests/fuzz/conftest.py), with per-test overrides."""
    return settings(settings.get_profile(PROFILE), **overrides)


ME = "proj__cc_1"
OTHER = "other__cc"
THIRD = "third__cc"
ENDER = "ender__cc"
SESSION = "df60326c-8124-4026-a376-50ee7bfe6c4e"
OTHER_SESSION = "0badc0de-1111-2222-3333-444455556666"

# Placeholders in generated payloads, replaced by the world's real paths at run time
# (the first two are the captured fixtures' own).
P_PROJECT = "/home/dev/myproject"
P_HOME = "/home/dev"
P_OUTSIDE = "/fuzz/outside"

CONTEXT_LIMIT = 10_000
HSO_EVENTS = {"SessionStart", "PreToolUse", "PostToolUse", "SubagentStart"}
HSO_KEYS = {"hookEventName", "permissionDecision", "permissionDecisionReason", "additionalContext"}
DECISIONS = {"allow", "deny", "ask"}

PROJECT_FILES = [
    "a.py",
    "src/a.py",
    "src/auth/login.py",
    "docs/x.md",
    "held/file.txt",
    "leased.txt",
    "deep/1/2/3/4.txt",
    "b/b",
]
SYMLINKS = {  # name in the project -> target (relative to the project)
    "link_out": "../outside",
    "link_held": "held",
    "link_leased": "leased.txt",
    "link_ledger": ".git/agent-hooks",
    "link_home": "../home/.claude",
    "loop": "loop",
    "dangling": "nowhere/at/all",
}


class Ran(NamedTuple):
    event: str
    code: int
    stdout: bytes
    stderr: bytes
    seconds: float


class World:
    """One example's HOME, project and outside directory."""

    def __init__(self, base: Path) -> None:
        self.root = Path(os.path.realpath(tempfile.mkdtemp(dir=base)))
        self.home = self.root / "home"
        self.project = self.root / "proj"
        self.outside = self.root / "outside"
        self.state_dir = self.home / ".claude"
        self.ledger = self.project / ".git" / "agent-hooks"
        for directory in (self.home, self.project / ".git" / "refs" / "heads", self.outside):
            directory.mkdir(parents=True)
        (self.project / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
        for rel in PROJECT_FILES:
            path = self.project / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"{rel}\n")
        (self.outside / "x.txt").write_text("outside\n")
        for name, target in SYMLINKS.items():
            (self.project / name).symlink_to(target)

    def __enter__(self) -> World:
        return self

    def __exit__(self, *exc: object) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    # -- payloads and environments -------------------------------------------------

    def rewrite(self, value: Any) -> Any:
        """`value` with the placeholders replaced by this world's paths."""
        if isinstance(value, str):
            return (
                value.replace(P_PROJECT, str(self.project))
                .replace(P_HOME, str(self.home))
                .replace(P_OUTSIDE, str(self.outside))
            )
        if isinstance(value, list):
            return [self.rewrite(v) for v in value]
        if isinstance(value, dict):
            return {k: self.rewrite(v) for k, v in value.items()}
        return value

    def rewrite_bytes(self, data: bytes) -> bytes:
        return (
            data.replace(P_PROJECT.encode(), str(self.project).encode())
            .replace(P_HOME.encode(), str(self.home).encode())
            .replace(P_OUTSIDE.encode(), str(self.outside).encode())
        )

    def env(
        self, agent: str | bytes | None = ME, extra: Mapping[str, str | bytes | None] | None = None
    ) -> dict[str, str | bytes]:
        env: dict[str, str | bytes | None] = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "CLAUDE_PROJECT_DIR": str(self.project),
            "CLAUDE_PID": str(os.getpid()),
            "CLAUDE_CODE_SESSION_ID": SESSION,
            "CLAUDECODE": "1",
            "AGENT_NAME": agent,
        }
        env.update(self.rewrite(dict(extra or {})))
        return {k: v for k, v in env.items() if v is not None}

    # -- running hooks ---------------------------------------------------------------

    def run(
        self,
        event: str,
        data: bytes,
        env: Mapping[str, str | bytes],
        cwd: str | Path | None = None,
    ) -> Ran:
        """hooks/entry.py exactly as Claude Code runs it: `python -IS entry.py <event>`."""
        started = time.monotonic()
        proc = subprocess.run(
            [sys.executable, "-IS", ENTRY, event],
            input=data,
            capture_output=True,
            env=dict(env),
            cwd=str(cwd or self.project),
            timeout=120,
        )
        return Ran(event, proc.returncode, proc.stdout, proc.stderr, time.monotonic() - started)

    def log_lines(self) -> list[str]:
        lines: list[str] = []
        for path in sorted(self.home.rglob("agent-hooks.log*")):
            if path.is_file() and not path.is_symlink():
                lines += path.read_text(errors="replace").splitlines()
        return lines

    # -- the ledger -----------------------------------------------------------------

    def ledger_doc(self) -> Any:
        path = self.ledger / "reservations.json"
        return json.loads(path.read_text()) if path.exists() else None

    def state_doc(self, agent: str) -> Any:
        path = self.state_dir / f"state-{agent}.json"
        return json.loads(path.read_text()) if path.exists() else None


# -- the checks every hook run must pass ----------------------------------------------


def _no_constant(name: str) -> Any:
    raise ValueError(f"JSON constant {name}")


def parse_strict(data: bytes) -> Any:
    """`data` parsed as the hooks' own reader must parse it (strict UTF-8 and JSON:
    no NaN, no trailing data), or raise ValueError."""
    try:
        return json.loads(data.decode("utf-8"), parse_constant=_no_constant)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def check_protocol(ran: Ran) -> dict[str, Any] | None:
    """Exit 0, nothing on stderr, and stdout empty or one JSON object the client
    accepts for this event. Returns the object, if any."""
    assert ran.code == 0, (ran.event, ran.code, ran.stderr[-2000:])
    assert ran.stderr == b"", (ran.event, ran.stderr[-2000:])
    assert ran.seconds < 30, f"{ran.event} took {ran.seconds:.1f} s"
    if not ran.stdout:
        return None
    try:
        out = parse_strict(ran.stdout)
    except ValueError as exc:
        raise AssertionError(
            f"{ran.event} printed what is not JSON ({exc}): {ran.stdout[:300]!r}"
        ) from None
    assert isinstance(out, dict), out
    assert set(out) <= {"hookSpecificOutput", "systemMessage"}, sorted(out)
    if "systemMessage" in out:
        assert isinstance(out["systemMessage"], str)
    specific = out.get("hookSpecificOutput")
    if specific is not None:
        assert ran.event in HSO_EVENTS, (ran.event, specific)
        assert isinstance(specific, dict) and set(specific) <= HSO_KEYS, specific
        assert specific.get("hookEventName") == ran.event, specific
        if "additionalContext" in specific:
            context = specific["additionalContext"]
            assert isinstance(context, str) and len(context) <= CONTEXT_LIMIT, len(context)
        if ran.event == "PreToolUse":
            decision = specific.get("permissionDecision")
            assert decision in DECISIONS, specific
            if decision == "deny":
                reason = specific.get("permissionDecisionReason")
                assert isinstance(reason, str) and reason.strip(), specific
        else:
            assert "permissionDecision" not in specific, specific
    return out


def decision_of(out: dict[str, Any] | None) -> str | None:
    if out is None or not isinstance(out.get("hookSpecificOutput"), dict):
        return None
    decision = out["hookSpecificOutput"].get("permissionDecision")
    return decision if isinstance(decision, str) else None


def reason_of(out: dict[str, Any] | None) -> str:
    if out is None:
        return ""
    return str(out.get("hookSpecificOutput", {}).get("permissionDecisionReason", ""))


Entry = tuple[str, Any]


def snapshot(root: Path) -> dict[str, Entry]:
    """Every path under `root`: its kind, mode, and content (files: size, mtime and a
    digest; symlinks: their target; directories: their mode)."""
    found: dict[str, Entry] = {}
    for directory, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = os.path.join(directory, name)
            rel = os.path.relpath(path, root)
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                found[rel] = ("link", os.readlink(path))
            elif stat.S_ISDIR(st.st_mode):
                found[rel] = ("dir", stat.S_IMODE(st.st_mode))
            elif stat.S_ISREG(st.st_mode):
                with open(path, "rb") as f:
                    digest = hashlib.blake2b(f.read(), digest_size=16).hexdigest()
                found[rel] = ("file", (stat.S_IMODE(st.st_mode), st.st_size, digest))
            else:
                found[rel] = ("other", stat.S_IFMT(st.st_mode))
    return found


def ours(world: World, rel: str) -> bool:
    """May a hook create or change `rel` (relative to the world's root)? Only in HOME
    and in the project's ledger: hooks never write project files."""
    return rel == "home" or rel.startswith(("home/", "proj/.git/agent-hooks"))


def check_writes(world: World, before: dict[str, Entry], after: dict[str, Entry]) -> None:
    changed = sorted(rel for rel in set(before) | set(after) if before.get(rel) != after.get(rel))
    foreign = [(rel, before.get(rel), after.get(rel)) for rel in changed if not ours(world, rel)]
    assert not foreign, f"a hook changed files that are not its own: {foreign[:5]}"


def check_modes(world: World) -> None:
    """agent-hooks' files are private: files 0600, directories 0700."""
    for top in (world.state_dir, world.ledger):
        if not top.is_dir() or top.is_symlink():
            continue
        for directory, dirnames, filenames in os.walk(top):
            for name in dirnames + filenames:
                path = os.path.join(directory, name)
                st = os.lstat(path)
                mode = stat.S_IMODE(st.st_mode)
                if stat.S_ISREG(st.st_mode):
                    assert mode == 0o600, f"{path} is {mode:o}"
                elif stat.S_ISDIR(st.st_mode):
                    assert mode == 0o700, f"{path} is {mode:o}"


# A line the hook runtime logs when an adapter raised (`<Exception>: … (fail open)`).
_CRASH = re.compile(r"event=\S+ (\w+(?:Error|Exception)|StopIteration|KeyboardInterrupt)\b")
# Exceptions that are the documented reaction to bad input, not crashes.
EXPECTED_FAILURES = {"HookInputError", "IdentityError"}


def check_log(lines: Iterable[str]) -> None:
    """No hook crashed: whatever it failed open on was bad input it recognized."""
    for line in lines:
        found = _CRASH.search(line)
        if found and found.group(1) not in EXPECTED_FAILURES and "fail open" in line:
            raise AssertionError(f"a hook crashed on its input: {line[:1500]}")


# Inside the kept-versions store (docs/adr/0024-kept-versions.md) only the settings
# are a JSON document: objects are raw content, ignores marshal data, and a version
# file holds one JSON line per version (`check_version_lines`).
_KEPT = "proj/.git/agent-hooks/kept/"
# How leases name the project's work tree: the main work tree of its repository
# (`repository.worktree_id`; ADR-0014) — never its path, which differs by mount.
MAIN_WORKTREE = "."
# A writer's command log (docs/adr/0027-changes-put-down-to-commands.md) is lines too:
# its first `# {json}`, then `s`, `e` and `x` lines of words (`check_command_lines`).
_COMMANDS = "proj/.git/agent-hooks/commands/"
_COMMAND_LINE = re.compile(rb"(# \{.*\}|s [\d.]+ \S+ \S+|e (-|[\d.]+) [\d.]+ \S+ \S+|x [\d.]+)")


def _is_document(rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1]
    if rel.startswith(_KEPT):
        return rel == _KEPT + "settings.json"
    if rel.startswith(_COMMANDS):
        return False
    if name.startswith(".") or name.endswith((".lock", ".cache")) or ".corrupt-" in name:
        return False
    if ".migrated-" in name or name.startswith("agent-hooks.log"):
        return False
    in_ledger = rel.startswith("proj/.git/agent-hooks/")
    return in_ledger or name.endswith(".json")


def check_documents(world: World, before: dict[str, Entry], after: dict[str, Entry]) -> None:
    """Every document a hook wrote is one JSON object (never a half-written file)."""
    for rel, entry in after.items():
        if entry[0] != "file" or before.get(rel) == entry or not _is_document(rel):
            continue
        data = (world.root / rel).read_bytes()
        try:
            doc = parse_strict(data)
        except ValueError as exc:
            raise AssertionError(f"{rel} was left unreadable ({exc}): {data[:200]!r}") from None
        assert isinstance(doc, dict), (rel, data[:200])


def check_version_lines(before: dict[str, Entry], after: dict[str, Entry], root: Path) -> None:
    """Every line of a kept version file a hook wrote is one JSON object: a version
    is appended whole (docs/adr/0024-kept-versions.md)."""
    for rel, entry in after.items():
        if entry[0] != "file" or before.get(rel) == entry:
            continue
        if not rel.startswith(_KEPT + "versions/"):
            continue
        for line in (root / rel).read_bytes().splitlines():
            if not line:
                continue
            try:
                doc = parse_strict(line)
            except ValueError as exc:
                raise AssertionError(
                    f"{rel} holds a line cut short ({exc}): {line[:200]!r}"
                ) from None
            assert isinstance(doc, dict), (rel, line[:200])


def check_command_lines(before: dict[str, Entry], after: dict[str, Entry], root: Path) -> None:
    """A command log a hook wrote holds whole lines only, each of its grammar (one
    `O_APPEND` write a line), its first naming the writer as one JSON object."""
    for rel, entry in after.items():
        if entry[0] != "file" or before.get(rel) == entry or not rel.startswith(_COMMANDS):
            continue
        data = (root / rel).read_bytes()
        assert data.endswith(b"\n"), f"{rel} ends in a line cut short: {data[-200:]!r}"
        lines = data.splitlines()
        for line in lines:
            assert _COMMAND_LINE.fullmatch(line), f"{rel} holds a line of no kind: {line[:200]!r}"
        if lines[0].startswith(b"# "):
            assert isinstance(parse_strict(lines[0][2:]), dict), (rel, lines[0][:200])


def check_all(world: World, ran: Ran, before: dict[str, Entry]) -> dict[str, Any] | None:
    out = check_protocol(ran)
    after = snapshot(world.root)
    check_writes(world, before, after)
    check_documents(world, before, after)
    check_version_lines(before, after, world.root)
    check_command_lines(before, after, world.root)
    check_modes(world)
    check_log(world.log_lines())
    return out


# -- oracles ------------------------------------------------------------------------


def _fs(path: str) -> bytes | None:
    try:
        return os.fsencode(path)
    except UnicodeEncodeError:
        return None  # a lone surrogate: no such file can exist


def _lstat_mode(path: str) -> int | None:
    raw = _fs(path)
    if raw is None or b"\0" in raw:
        return None
    try:
        return os.lstat(raw).st_mode
    except OSError:
        return None


def realpath(path: str) -> str:
    """`os.path.realpath` (non-strict), for any str: a component that cannot name a
    file (a lone surrogate) is simply not a symlink."""
    resolved, _ = _join_real("", path, {})
    return os.path.normpath(resolved if resolved.startswith("/") else "/" + resolved)


def _join_real(path: str, rest: str, seen: dict[str, str | None]) -> tuple[str, bool]:
    if rest.startswith("/"):
        rest, path = rest[1:], "/"
    while rest:
        name, _, rest = rest.partition("/")
        if not name or name == ".":
            continue
        if name == "..":
            path = "/" if path in ("", "/") else os.path.dirname(path)
            continue
        candidate = os.path.join(path, name)
        mode = _lstat_mode(candidate)
        if mode is None or not stat.S_ISLNK(mode):
            path = candidate
            continue
        if candidate in seen:
            known = seen[candidate]
            if known is not None:
                path = known
                continue
            return os.path.join(candidate, rest), False
        seen[candidate] = None
        raw = os.readlink(os.fsencode(candidate))
        path, ok = _join_real(path, os.fsdecode(raw), seen)
        if not ok:
            return os.path.join(path, rest), False
        seen[candidate] = path
    return path, True


def git_top(start: str) -> str | None:
    here = start
    while True:
        if _lstat_mode(os.path.join(here, ".git")) is not None:
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def hook_project(env: Mapping[str, str | bytes], cwd: str | None) -> str | None:
    """The project a hook works in (README, `repository.project_root`'s rule)."""
    configured = env.get("CLAUDE_PROJECT_DIR", "")
    if isinstance(configured, bytes):
        configured = os.fsdecode(configured)
    if configured and configured.startswith("/"):
        resolved = realpath(configured)
        return git_top(resolved) or resolved
    if not cwd:
        return None
    return git_top(realpath(cwd))


def as_written(path: str) -> str:
    """The path Node.js writes for a JS string: UTF-8, each lone surrogate U+FFFD."""
    return path.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def resolve_target(path: str, payload: Mapping[str, Any], env: Mapping[str, str | bytes]) -> str:
    """An edit target: the file the client will write (relative to the payload's
    absolute `cwd`, else the project, else `/`), symlinks resolved."""
    cwd = payload.get("cwd")
    cwd = cwd if isinstance(cwd, str) and cwd.startswith("/") else None
    base = cwd or hook_project(env, cwd) or "/"
    return realpath(as_written(path if path.startswith("/") else os.path.join(base, path)))


def glob_matches(pattern: str, rel: str) -> bool:
    """Does reservation pattern `pattern` cover the path `rel`? gitignore semantics
    anchored at the project root (pattern.py's reference)."""
    spec = PathSpec.from_lines(GitIgnoreSpecPattern, ["/" + pattern])
    return bool(spec.match_file(rel))


def _host() -> str:
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            boot = f.read().strip()[:36]
    except OSError:
        boot = ""
    try:
        namespace = os.readlink("/proc/self/ns/pid")
    except OSError:
        namespace = ""
    return f"{os.uname().nodename}/{boot}/{namespace}"


HOST = _host()


def proc_start(pid: int) -> int | None:
    """Field 22 of /proc/<pid>/stat: when the process started."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rpartition(")")[2].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def _proc_state(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def alive(holder: Mapping[str, Any]) -> bool | None:
    """ADR-0014: on this host a holder counts while its pid exists, is no zombie and
    started when recorded; elsewhere (or without a pid) it cannot be told (None)."""
    pid = _int(holder.get("pid"))
    if pid is None or not 0 < pid < 1 << 31 or holder.get("host") != HOST:
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        pass
    state = _proc_state(pid)
    if state is None:
        return True
    if state in ("Z", "X"):
        return False
    recorded = _int(holder.get("start"))
    return True if recorded is None else proc_start(pid) == recorded


def key_parts(key: str) -> tuple[str, str | None]:
    owner, hash_, agent_id = key.partition("#")
    return owner, (agent_id if hash_ else None)


def lease_blocks(holder_key: object, me_key: str) -> bool:
    """ADR-0014's table, in the writer's own worktree: its own lease and its parent's
    never block; a subagent's blocks its parent and siblings; another agent's blocks."""
    if not isinstance(holder_key, str):
        holder_key = str(holder_key)
    if holder_key == me_key:
        return False
    owner, holder_id = key_parts(holder_key)
    my_owner, my_id = key_parts(me_key)
    if owner != my_owner:
        return True
    return not (holder_id is None and my_id is not None)


def escape_name(key: str) -> str:
    """A ledger file name for a simple key (lease.escape's documented scheme)."""
    out = key.replace("%", "%25").replace("/", "%2F").replace("~", "%7E")
    return "%2E" + out[1:] if out.startswith(".") else out


def card_fresh(ledger: Path, owner: str, now: float, minutes: int) -> bool:
    """ADR-0015: a holder on another host counts while its owner's card was touched
    within a lease's time."""
    try:
        mtime = os.lstat(ledger / "writers" / escape_name(owner)).st_mtime
    except OSError:
        return False
    return mtime + (minutes or 10) * 60 + 60 > now


def reaped_child() -> tuple[int, int]:
    """(pid, start) of a process that ran and was reaped: a dead holder."""
    child = subprocess.Popen(["sleep", "30"])
    start = None
    for _ in range(100):
        start = proc_start(child.pid)
        if start is not None:
            break
        time.sleep(0.01)
    child.kill()
    child.wait()
    assert start is not None
    return child.pid, start


def write_json(
    path: Path,
    doc: Any,
    *,
    raw: str | None = None,
    mtime: float | None = None,
    atime: float | None = None,
) -> None:
    """Write a ledger or state document as another process left it (0600)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(path.parent, 0o700)
    text = raw if raw is not None else json.dumps(doc)
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    path.chmod(0o600)
    if mtime is not None:
        os.utime(path, (mtime if atime is None else atime, mtime))


def within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


def safe_id(value: object) -> str | None:
    """An id from a payload usable in a file name (writer.py's documented rule)."""
    if isinstance(value, str) and 0 < len(value) <= 128 and _ID_CHARS.issuperset(value):
        return value
    return None


def valid_agent_name(name: str) -> bool:
    """identity.py's documented rule: no `/`, `..`, control, invisible or format
    character, no blank at either end, no `#`, no leading `~`, ≤ 128 characters
    and ≤ 200 bytes of UTF-8."""
    return (
        0 < len(name) <= 128
        and "/" not in name
        and ".." not in name
        and all(c.isprintable() for c in name)
        and name == name.strip()
        and "#" not in name
        and not name.startswith("~")
        and len(name.encode("utf-8", "surrogatepass")) <= 200
    )


def lease_counts(lease: Mapping[str, Any], now: float) -> bool:
    """ADR-0014: a lease counts until it expires, unless its holder is known dead."""
    expires = lease.get("expires")
    if isinstance(expires, bool) or not isinstance(expires, int | float) or expires <= now:
        return False
    return alive(lease) is not False


def _lease_doc(path: Path) -> tuple[str, list[dict[str, Any]]] | None:
    try:
        doc = json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("path"), str):
        return None
    found = doc.get("leases")
    leases = [item for item in found if isinstance(item, dict)] if isinstance(found, list) else []
    return doc["path"], leases


def all_leases(ledger: Path) -> list[tuple[str, dict[str, Any]]]:
    directory = ledger / "leases"
    if not directory.is_dir():
        return []
    out = []
    for path in sorted(directory.iterdir()):
        if path.name.startswith(".") or not path.is_file() or path.is_symlink():
            continue
        found = _lease_doc(path)
        if found is not None:
            out += [(found[0], lease) for lease in found[1]]
    return out


def leases_on(ledger: Path, rel: str) -> list[dict[str, Any]]:
    """The leases on `rel`: in the file named after it (ADR-0015's `leases/<escaped
    path>`), whose document names that path."""
    name = escape_name(rel)
    if len(name.encode("utf-8", "surrogatepass")) <= 180:
        path = ledger / "leases" / name
        found = _lease_doc(path) if not path.is_symlink() else None
        return found[1] if found is not None and found[0] == rel else []
    return [lease for path, lease in all_leases(ledger) if path == rel]
