"""Workspaces for context hand-off: ids, categories, names, keywords and the
context-file template, as pure functions over strings (the manifest's rules are
workspace_manifest's).

A workspace is `<project>/.tmp/sessions/<id>/` holding context files at
`<category>/<task>-context.md` and a manifest `.manifest.json`.

Invariants:

* An id is `YYYYMMDD-HHMMSS-xxxx`: UTC time and 4 characters of `[a-z0-9]`.
  Uniqueness is not this module's job: the store creates the directory with
  `mkdir` (which fails if it exists) and draws a new suffix on a collision.
* A relative path accepted here (`check_relative`) has no empty, `.` or `..`
  segment, does not start with `/`, has no NUL or control character, and never
  names the manifest, its lock or a temp file: joined to the workspace it stays
  inside it.
* Keywords are lower case, without spaces, at most 64 characters, at most 32 per
  file (`merge_keywords`).
* Timestamps are written as `YYYY-MM-DDTHH:MM:SSZ` and parsed without
  `time.strptime` or platform `date` flags (the anchor's macOS-only flag made
  every date unparseable on Linux, and every session was deleted).

Only built-in modules are imported: `after_write` runs inside PostToolUse.
"""

from __future__ import annotations

import posix
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Iterable

CATEGORIES = ("features", "documentation", "code", "refactoring", "testing", "tasks", "general")
MANIFEST = ".manifest.json"
ID_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"
MAX_SLUG = 80
MAX_KEYWORD = 64
MAX_KEYWORDS = 32
CONTEXT_SUFFIX = "-context.md"
DELEGATE_SENTENCE = "Read these files for full context on requirements and task breakdown."
# name endings that say what kind of file it is rather than what it is about
_KIND_WORDS = ("context", "tasks", "task", "notes", "plan", "summary", "spec", "breakdown")


class WorkspaceError(ValueError):
    """A name, category or path that cannot be used; the message is one line."""


# --- ids and time -------------------------------------------------------------


def random_suffix() -> str:
    """Four characters of `[a-z0-9]` from the OS random source (unbiased)."""
    out: list[str] = []
    while len(out) < 4:
        for byte in posix.urandom(8):
            if byte < 252 and len(out) < 4:  # 252 = 7 * 36: no modulo bias
                out.append(ID_ALPHABET[byte % 36])
    return "".join(out)


def make_id(now: float, suffix: str) -> str:
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime(now)) + "-" + suffix


def is_workspace_id(name: str) -> bool:
    """`name` has the exact shape `YYYYMMDD-HHMMSS-xxxx`."""
    if len(name) != 20 or name[8] != "-" or name[15] != "-":
        return False
    digits = name[:8] + name[9:15]
    return digits.isascii() and digits.isdigit() and all(c in ID_ALPHABET for c in name[16:])


# --- names --------------------------------------------------------------------


def check_category(category: str) -> str:
    if category not in CATEGORIES:
        raise WorkspaceError(f"unknown category {category!r}; use one of: {', '.join(CATEGORIES)}")
    return category


def slug(task: str) -> str:
    """A task name as a file-name-safe slug: lower case `[a-z0-9_-]`, words joined by
    `-`, at most 80 characters; accents are dropped, anything else becomes `-`."""
    import unicodedata  # not on the hook path: only the CLI names tasks

    text = unicodedata.normalize("NFKD", task).encode("ascii", "ignore").decode().lower()
    out: list[str] = []
    for ch in text:
        if ch.isalnum() or ch == "_":
            out.append(ch)
        elif out and out[-1] != "-":
            out.append("-")
    result = "".join(out).strip("-_")[:MAX_SLUG].rstrip("-_")
    if result.endswith("-context"):  # "x-context" would name x-context-context.md
        result = result[: -len("-context")]
    if not result:
        raise WorkspaceError(f"task name {task!r} has no letter or digit to name a file by")
    return result


def context_path(category: str, task_slug: str) -> str:
    """The context file's path relative to its workspace."""
    return f"{check_category(category)}/{task_slug}{CONTEXT_SUFFIX}"


def check_relative(rel: str) -> str:
    """`rel` if it is a safe path inside a workspace (see the module invariants)."""
    if (
        not rel
        or rel.startswith("/")
        or (not rel.isprintable() and any(ch < " " or ch == "\x7f" for ch in rel))
    ):
        raise WorkspaceError(f"{rel!r} is not a relative path inside a workspace")
    parts = rel.split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise WorkspaceError(f"{rel!r} has an empty, '.' or '..' segment")
    if len(parts) == 1 and parts[0].startswith(MANIFEST):
        raise WorkspaceError(f"{rel!r} is the workspace's manifest, not a context file")
    if parts[-1].startswith(".") and parts[-1].endswith(".tmp"):
        raise WorkspaceError(f"{rel!r} is a temporary file")
    return rel


def split_workspace_path(sessions_root: str, path: str) -> tuple[str, str] | None:
    """(workspace id, relative path) of an absolute, normalized `path` inside
    `sessions_root`, or None when it is not a usable context-file path."""
    prefix = sessions_root.rstrip("/") + "/"
    if not path.startswith(prefix):
        return None
    ws_id, _, rel = path[len(prefix) :].partition("/")
    if not is_workspace_id(ws_id):
        return None
    try:
        return ws_id, check_relative(rel)
    except WorkspaceError:
        return None


def validate_recipient(value: str) -> str:
    """A `for` value: one printable line of at most 200 characters."""
    text = value.strip()
    if not text or len(text) > 200 or not text.isprintable():
        raise WorkspaceError(f"--for {value!r}: one printable line of at most 200 characters")
    return text


# --- keywords -----------------------------------------------------------------


def normalize_keyword(word: str) -> str:
    return "-".join(word.strip().lower().split())[:MAX_KEYWORD]


def keywords_from_path(rel: str) -> list[str]:
    """Keywords a path implies: the file's topic (its name without trailing kind
    words such as `-context` or `-tasks`), its name without `-context`, and its
    directories. `tasks/user-auth-tasks-context.md` gives user-auth,
    user-auth-tasks, tasks."""
    parts = rel.split("/")
    stem = parts[-1].lower()
    dot = stem.rfind(".")
    if dot > 0:
        stem = stem[:dot]
    words = stem.split("-")
    if len(words) > 1 and words[-1] == "context":
        words = words[:-1]
    topic = words
    while len(topic) > 1 and topic[-1] in _KIND_WORDS:
        topic = topic[:-1]
    return merge_keywords(["-".join(topic), "-".join(words)], (part.lower() for part in parts[:-1]))


def merge_keywords(*groups: Iterable[str]) -> list[str]:
    """Normalized, de-duplicated keywords in first-seen order (at most 32)."""
    out: dict[str, None] = {}
    for group in groups:
        for word in group:
            key = normalize_keyword(word)
            if key:
                out[key] = None
    return list(out)[:MAX_KEYWORDS]


def keyword_matches(query: str, key: str) -> bool:
    """A query matches an index key equal to it or one of the key's `-` parts
    (`auth` finds `user-auth`)."""
    return query == key or query in key.split("-")


# --- the context file ---------------------------------------------------------


def title(task: str) -> str:
    """The task name as the file's heading shows it (one line)."""
    return " ".join(task.split()) or task


def render_context(
    task: str,
    workspace_id: str,
    *,
    summary: str | None = None,
    background: str | None = None,
    expected: str | None = None,
    constraints: str | None = None,
) -> str:
    """A context file in the design document's template; an empty section keeps its placeholder."""

    def section(name: str, value: str | None, placeholder: str) -> str:
        body = value.strip() if value and value.strip() else placeholder
        return f"## {name}\n{body}\n"

    return (
        f"# Context: {title(task)}\nSession: {workspace_id}\n\n"
        + section("Request Summary", summary, "[Brief description of what needs to be done]")
        + "\n"
        + section("Background", background, "[Relevant context and information]")
        + "\n"
        + section("Expected Output", expected, "[What the subagent should produce]")
        + "\n"
        + section("Constraints", constraints, "[Any limitations or requirements]")
    )


def wrap_body(task: str, workspace_id: str, body: str) -> str:
    """Content supplied whole (a file or stdin): kept as is when it already starts
    with the template's heading, else given the heading and `Session:` line."""
    if body.lstrip().startswith("# Context:"):
        return body if body.endswith("\n") else body + "\n"
    text = body if body.endswith("\n") else body + "\n"
    return f"# Context: {title(task)}\nSession: {workspace_id}\n\n{text}"


def delegate_block(paths: list[str], sentence: str | None = None) -> str:
    """The design document's hand-off block for a subagent's prompt."""
    lines = ["Related context available at:", *(f"- {p}" for p in paths), ""]
    lines.append(sentence or DELEGATE_SENTENCE)
    return "\n".join(lines)
