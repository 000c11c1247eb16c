"""What `agent-hooks reserve` tells a person about what they typed (issue 36): a
pattern that matches no file (reserved all the same: a file may be about to be
created) and the nearest path that exists, and a conflicting list the shell
expanded from an unquoted glob (`reserve src/*`), with the quoted form.

Invariants: only advice — nothing here changes what is reserved; the files looked
at are the project's tracked and untracked-but-not-ignored ones (`git ls-files`),
else a walk of the work tree, both cut at `MAX_PATHS`; a listing that fails gives
no advice rather than an error.
"""

from __future__ import annotations

import difflib
import os
import subprocess
from collections.abc import Sequence
from typing import Any

from agent_hooks.reservations import pattern

MAX_PATHS = 20_000  # files looked at; a larger tree is judged on its first ones
GIT_TIMEOUT = 10.0  # seconds for `git ls-files`
CLOSE_ENOUGH = 0.6  # difflib's ratio for "did you mean" (its default; `scr` and `src` are 0.67)
WILD = frozenset("*?[")


def project_files(root: str) -> list[str]:
    """The project's files, relative to `root` (at most MAX_PATHS): tracked and
    untracked-but-not-ignored ones as git lists them, else found by a walk."""
    try:
        done = subprocess.run(
            ["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            capture_output=True,
            timeout=GIT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        done = None
    if done is not None and done.returncode == 0:
        names = done.stdout.split(b"\0")
        return [os.fsdecode(n) for n in dict.fromkeys(names) if n][:MAX_PATHS]
    found: list[str] = []
    for top, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != ".git")
        rel = os.path.relpath(top, root)
        found += [name if rel == "." else f"{rel}/{name}" for name in sorted(files)]
        if len(found) >= MAX_PATHS:
            return found[:MAX_PATHS]
    return found


def _directories(files: Sequence[str]) -> list[str]:
    dirs: dict[str, None] = {}
    for path in files:
        parts = path.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            dirs["/".join(parts[:i])] = None
    return list(dirs)


def nearest(text: str, files: Sequence[str]) -> str | None:
    """The pattern the person probably meant, when one close to `text` would match:
    its literal head (the segments before the first wildcard) compared with the
    project's directories (and, for a literal path, its files); None when nothing
    is close."""
    segs = text.rstrip("/").split("/")
    head: list[str] = []
    for seg in segs:
        if WILD & set(seg):
            break
        head.append(seg)
    tail = segs[len(head) :]
    if not head:
        return None
    literal = "/".join(head)
    candidates = _directories(files) + ([] if tail else list(files))
    close = difflib.get_close_matches(literal, candidates, n=1, cutoff=CLOSE_ENOUGH)
    if not close or close[0] == literal:  # the head exists: what is wrong is past it
        return None
    found = "/".join([close[0], *tail])
    return found + "/" if text.endswith("/") and not found.endswith("/") else found


def unmatched(
    normalized: Sequence[tuple[str, list[Any]]], files: Sequence[str]
) -> list[dict[str, str | None]]:
    """(pattern, nearest match or None) for each pattern that matches none of
    `files` (a pattern matching a directory matches the files below it)."""
    found = []
    for text, compiled in normalized:
        if not any(pattern.matches(compiled, path) for path in files):
            found.append({"pattern": text, "nearest": nearest(text, files)})
    return found


def unmatched_lines(found: Sequence[dict[str, str | None]]) -> list[str]:
    """One warning per pattern that matches no file, with the nearest when known."""
    lines = []
    for item in found:
        close = item["nearest"]
        hint = f": did you mean {close}?" if close else " (reserved all the same)"
        lines.append(f"{item['pattern']} matches no file here yet{hint}")
    return lines


def expanded_by_shell(typed: Sequence[str], cwd: str) -> str | None:
    """The quoted glob a person probably typed unquoted, when `typed` looks like the
    shell's expansion of one: several arguments, none with a wildcard, every one an
    existing path, all in one directory. Else None."""
    if len(typed) < 2 or any(WILD & set(text) for text in typed):
        return None
    parents = set()
    for text in typed:
        path = os.path.join(cwd, text)
        if not os.path.lexists(path):
            return None
        parents.add(os.path.dirname(os.path.normpath(text)))
    if len(parents) != 1:
        return None
    (parent,) = parents
    glob = f"{parent}/*" if parent else "*"
    return f"'{glob}'"
