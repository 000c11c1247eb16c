"""Stale-context detection (design document 002): may a resumed conversation trust what it
read, or has the project moved under it?

The files examined are the conversation's trail (`files_created`,
`files_modified`, `files_read`; workspace files are not project context). Each
was fingerprinted (`fingerprints.of`: mtime, size, checksum) when the agent last touched it —
after its own edits too, so the agent's own changes are never "changes". A file
counts as changed when:

* its mtime and size equal the fingerprint: no (the cheap first test; nothing read);
* else its content checksum equals the fingerprint's: no (touched, same content);
* else its current size and checksum equal a fingerprint this agent recorded for
  it in one of its other conversations (its own later edit): no;
* else, or when it vanished, or appeared where none was: yes.

Decision: no file changed → `resume`; 1 to 5 changed and none critical →
`resume_with_update`; more than 5, or any critical → `start_fresh_with_briefing`.

Critical files are globs relative to the project, in gitignore style — matched
by pathspec's gitignore implementation, so a glob without `/` matches a file
name at any depth, one with `/` is anchored at the project root, and `!glob`
excludes what an earlier glob included. The list is `AGENT_HOOKS_CRITICAL_FILES` (comma-separated) when
that is set, else `DEFAULT_CRITICAL`; globs in the project file
`.agent-hooks/critical-files` (one per line, `#` comments) are added either way.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Iterable, Mapping
from typing import Any

from agent_hooks import fingerprints, tool_use
from agent_hooks.wording import plural

MAX_MINOR = 5
CRITICAL_ENV = "AGENT_HOOKS_CRITICAL_FILES"
CRITICAL_FILE = ".agent-hooks/critical-files"
DEFAULT_CRITICAL = (
    # manifests
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "requirements*.txt",
    "Pipfile",
    "package.json",
    "Cargo.toml",
    "go.mod",
    "go.sum",
    "Gemfile",
    "composer.json",
    "pom.xml",
    "build.gradle",
    "build.gradle.kts",
    "*.csproj",
    "tsconfig.json",
    # lock files
    "*.lock",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "pnpm-lock.yaml",
    # settings
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".mcp.json",
    "CLAUDE.md",
)


class Decision(enum.StrEnum):
    RESUME = "resume"
    RESUME_WITH_UPDATE = "resume_with_update"
    START_FRESH_WITH_BRIEFING = "start_fresh_with_briefing"


def decide(changed: int, critical: int) -> Decision:
    if changed == 0:
        return Decision.RESUME
    if changed > MAX_MINOR or critical > 0:
        return Decision.START_FRESH_WITH_BRIEFING
    return Decision.RESUME_WITH_UPDATE


# --- critical files -----------------------------------------------------------


def critical_globs(environ: Mapping[str, str], project: str | None) -> list[str]:
    configured = environ.get(CRITICAL_ENV)
    if configured is not None and configured.strip():
        globs = [g.strip() for g in configured.split(",") if g.strip()]
    else:
        globs = list(DEFAULT_CRITICAL)
    if project is not None:
        try:
            with open(os.path.join(project, CRITICAL_FILE), encoding="utf-8") as handle:
                text = handle.read(1 << 16)
        except (OSError, UnicodeDecodeError):
            text = ""
        for line in text.splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                globs.append(line)
    return globs


class CriticalMatcher:
    """Critical globs as a gitignore-style list (pathspec); a glob with an
    unclosed `[` (which pathspec would silently read as matching nothing) or one
    pathspec cannot compile is kept out and listed in `invalid`."""

    def __init__(self, globs: Iterable[str]) -> None:
        import pathspec  # only here: SessionStart on resume/compact, and the CLI

        self.invalid: list[str] = []
        valid: list[str] = []
        for glob in globs:
            try:
                if _unclosed_bracket(glob):
                    raise ValueError(glob)
                pathspec.GitIgnoreSpec.from_lines([glob])
            except ValueError:
                self.invalid.append(glob)
                continue
            valid.append(glob)
        self.spec = pathspec.GitIgnoreSpec.from_lines(valid)

    def __call__(self, rel: str | None) -> bool:
        return rel is not None and bool(self.spec.match_file(rel))


def _unclosed_bracket(glob: str) -> bool:
    i = 0
    while i < len(glob):
        if glob[i] == "\\":
            i += 2
            continue
        if glob[i] == "[":
            close = glob.find("]", i + 2)
            if close < 0:
                return True
            i = close
        i += 1
    return False


# --- what changed -------------------------------------------------------------


def examined(doc: Mapping[str, Any]) -> list[str]:
    """The conversation's project files (created, modified, read), each once."""
    seen: dict[str, None] = {}
    for field in (tool_use.CREATED, tool_use.MODIFIED, tool_use.READ):
        for path in doc.get(field) or ():
            if isinstance(path, str):
                seen.setdefault(path)
    return list(seen)


def own_contents(trails: Iterable[Mapping[str, Any]]) -> dict[str, set[str]]:
    """The contents (`fingerprints.content`) this agent left each file in, by its own
    edits in other conversations (fingerprints of files those trails created or
    modified)."""
    contents: dict[str, set[str]] = {}
    for item in trails:
        recorded = item.get("fingerprints")
        if not isinstance(recorded, dict):
            continue
        for field in (tool_use.CREATED, tool_use.MODIFIED):
            for path in item.get(field) or ():
                fingerprint = fingerprints.read(recorded.get(path))
                if fingerprint is not None:
                    contents.setdefault(path, set()).add(fingerprints.content(fingerprint))
    return contents


def _is_file(path: str) -> bool:
    try:
        return os.path.isfile(path)
    except ValueError:
        return False


def has_changed(path: str, recorded: object, own: set[str] | None = None) -> bool:
    """Whether `path` differs from its fingerprint `recorded` (see the module docstring)."""
    fingerprint = fingerprints.read(recorded)
    if fingerprint is None:
        return _is_file(path)  # none was recorded: it did not exist (or was unreadable)
    now = fingerprints.changed(path, fingerprint)
    if now is None:
        return False
    return not (own and now != fingerprints.GONE and fingerprints.content(now) in own)


class Report:
    """The freshness of one conversation's context."""

    def __init__(
        self,
        decision: Decision,
        examined: int,
        changed: list[str],
        critical: list[str],
        invalid_globs: list[str],
    ) -> None:
        self.decision = decision
        self.examined = examined
        self.changed = changed
        self.critical = critical
        self.invalid_globs = invalid_globs

    def as_dict(self) -> dict[str, Any]:
        return {
            "decision": self.decision.value,
            "examined": self.examined,
            "changed": self.changed,
            "critical": self.critical,
            "invalid_globs": self.invalid_globs,
        }


def _relative(path: str, project: str | None) -> str | None:
    if project and path.startswith(project.rstrip("/") + "/"):
        return path[len(project.rstrip("/")) + 1 :]
    return None


def check(
    doc: Mapping[str, Any],
    project: str | None,
    globs: Iterable[str],
    own: Mapping[str, set[str]] | None = None,
) -> Report:
    """Compare the conversation's examined files with the disk now."""
    files = examined(doc)
    recorded = doc.get("fingerprints") or {}
    changed = [p for p in files if has_changed(p, recorded.get(p), (own or {}).get(p))]
    if not changed:  # nothing to classify: pathspec is not even loaded
        return Report(decide(0, 0), len(files), [], [], [])
    matcher = CriticalMatcher(globs)
    critical = [p for p in changed if matcher(_relative(p, project))]
    return Report(
        decide(len(changed), len(critical)), len(files), changed, critical, matcher.invalid
    )


def display(path: str, project: str | None) -> str:
    return _relative(path, project) or path


def context_lines(report: Report, project: str | None, limit: int = 30) -> list[str]:
    """What the model is told about its context's freshness."""
    shown = [
        display(p, project) + (" (critical)" if p in report.critical else "")
        for p in report.changed[:limit]
    ]
    more = len(report.changed) - len(shown)
    listing = ", ".join(shown) + (f", and {more} more" if more > 0 else "")
    if report.decision is Decision.RESUME and not report.examined:
        return ["Context freshness: resume — this conversation has read or modified no file yet."]
    if report.decision is Decision.RESUME:
        return [
            f"Context freshness: resume — none of the {plural(report.examined, 'file')} "
            "this conversation read or modified has changed since you last touched it."
        ]
    if report.decision is Decision.RESUME_WITH_UPDATE:
        them = "it" if len(report.changed) == 1 else "them"
        return [
            f"Context freshness: resume_with_update — {plural(len(report.changed), 'file')} "
            f"you read or modified changed since you last touched {them}: {listing}. "
            f"Re-read {them} before relying on what you remember of {them}."
        ]
    why = (
        f"{plural(len(report.critical), 'critical file')} changed "
        f"({', '.join(display(p, project) for p in report.critical)})"
        if report.critical
        else f"{len(report.changed)} files changed (more than {MAX_MINOR})"
    )
    return [
        f"Context freshness: start_fresh_with_briefing — {why}. Changed since you last "
        f"touched them: {listing}. Treat what you remember of this project as stale: "
        "start from the briefing below and re-read files before editing them."
    ]
