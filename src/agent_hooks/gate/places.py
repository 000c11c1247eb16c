"""Where a target lies: the projects (git work trees) whose ledgers judge it, and
its path relative to each.

Invariants:

* A target is resolved (symlinks included) before it is located: editing a
  symlink to a held file is editing the held file. A directory entry a command
  acts on itself (removing, renaming or replacing a symlink: `resolve_entry`) is
  located by its parent directory, resolved, and its own name.
* The projects that judge a target are every project it lies in: the git top
  level above it (so an agent started elsewhere cannot walk around a project's
  reservations) and the agent's own project when the target lies inside it (so a
  nested repository does not hide its parent's reservations), and for a
  submodule its superprojects (an agent launched inside the submodule is held by
  the superproject's reservation of `lib/sub/**`); a target in no project is
  judged by none.
* A shell target may be a directory: a project root, or a directory above the
  agent's project (`rm -rf ..`), is that whole project (relative path ""), and
  also its own path in the projects around it (`rm -rf lib/sub`, or `rm -rf .` in
  the submodule, is held by the superproject's reservation of `lib/sub/**`); a
  shell glob keeps its wildcards below its literal directories.
* A target lies in a workspace (`in_workspaces`) when in one of its projects it
  is below `repository.WORKSPACES_DIR` (the directory itself is not): strict
  mode asks no reservation of one's own for it (docs/adr/0006-reservations.md).

* A repository's linked work trees (`worktrees`) are what its common git dir
  records (`worktrees/<id>/gitdir`), each with whether `git worktree prune` would
  drop it: its `.git` is not where the record says and it is not locked.

Pure location: this module reads the file system (`realpath`, `.git` markers,
git's records of linked work trees) and nothing else; `tool_call.ToolCall.places` turns the pairs into `Place`s with
their repository's ledger. Built-ins only.
"""

from __future__ import annotations

import posix

from agent_hooks import posix_fs as fs
from agent_hooks import repository

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Iterable

Pair = tuple[str, str]  # (project root, path relative to it; "" = the whole project)

_GLOB_CHARS = "*?["
MAX_NESTING = 4  # submodules in submodules: the repositories that judge a target


def resolve(path: str, cwd: str | None, agent_root: str | None) -> str:
    """An edit target as an absolute path, as the client will write it
    (`posix_fs.as_written`), symlinks resolved."""
    base = cwd or agent_root or "/"
    return fs.realpath(fs.as_written(path if fs.isabs(path) else fs.join(base, path)))


def resolve_entry(path: str) -> str:
    """An absolute path naming a directory entry, its parent's symlinks resolved
    and its own name kept: `rm src/out` removes the link `src/out`, wherever it
    points."""
    parent, _, name = path.rpartition("/")
    if name in ("", ".", ".."):
        return fs.realpath(path)
    return fs.join(fs.realpath(parent or "/"), name)


def places(resolved: str, agent_root: str | None) -> list[Pair]:
    """Every (project root, relative path) that judges the resolved target;
    empty when it lies in no project."""
    roots: list[str] = []
    outer = repository.git_top_level(fs.dirname(resolved), resolved=True)
    while outer is not None and len(roots) < MAX_NESTING:
        roots.append(outer)
        outer = repository.superproject(outer)  # a submodule's superproject judges too
    if agent_root is not None and agent_root not in roots and fs.is_within(resolved, agent_root):
        roots.append(agent_root)
    return [(root, resolved[len(root.rstrip("/")) + 1 :]) for root in roots if resolved != root]


def locate(path: str, cwd: str | None, agent_root: str | None) -> list[Pair]:
    """`places` of an edit target given as the client gave it."""
    return places(resolve(path, cwd, agent_root), agent_root)


def locate_write(path: str, agent_root: str | None, entry: bool = False) -> list[Pair]:
    """`places` of an absolute shell target, which may be a directory: a project
    root, or a directory above the agent's project, is the whole project. An
    `entry` is located by its parent directory, resolved, and its own name (a
    symlink there is what the command acts on)."""
    resolved = resolve_entry(path) if entry else fs.realpath(path)
    if agent_root is not None and fs.is_within(agent_root, resolved):
        whole = [(agent_root, "")]
    elif repository.git_top_level(resolved, resolved=True) == resolved:
        whole = [(resolved, "")]
    else:
        return places(resolved, agent_root)
    return whole + [pair for pair in places(resolved, agent_root) if pair[0] != whole[0][0]]


def locate_glob(path: str, agent_root: str | None) -> list[Pair]:
    """`places` of an absolute shell glob: the literal directories before the
    first wildcard segment resolved, the rest kept as written."""
    parts = path.split("/")
    first_glob = next(i for i, part in enumerate(parts) if any(c in part for c in _GLOB_CHARS))
    base = fs.realpath("/".join(parts[:first_glob]) or "/")
    rest = "/".join(parts[first_glob:])
    return [
        (root, fs.join(fs.dirname(rel_base), rest).lstrip("/"))
        for root, rel_base in places(fs.join(base, "_"), agent_root)
    ]


def in_workspaces(rels: Iterable[str]) -> bool:
    """Does a target whose relative paths in its projects are `rels` lie inside a
    workspace (a context file `agent-hooks context add` has the agent edit)?"""
    prefix = repository.WORKSPACES_DIR + "/"
    return any(rel.startswith(prefix) for rel in rels)


def enclosing(root: str) -> list[Pair]:
    """The work tree `root` as a whole in every project that judges it: itself
    (""), and for a submodule each superproject (the submodule's path there)."""
    pairs = [(root, "")]
    outer = repository.superproject(root)
    while outer is not None and len(pairs) < MAX_NESTING:
        if fs.is_within(root, outer) and root != outer:
            pairs.append((outer, root[len(outer.rstrip("/")) + 1 :]))
        outer = repository.superproject(outer)
    return pairs


MAX_WORKTREES = 256  # linked work trees of one repository read at most


def worktrees(common: str | None) -> list[tuple[str, str, bool]]:
    """The linked work trees of the repository whose common git dir is `common`
    (`ledger.repo.Repo.common_dir`; None: none), as it records them: (the tree's
    path, as recorded; its worktree id, `worktrees/<name>`; whether `git worktree
    prune` would drop the record: the `.git` it names is gone, or the record names
    none, and it is not locked). At most MAX_WORKTREES, by name."""
    if common is None:
        return []
    records = fs.join(common, "worktrees")
    try:
        names = sorted(posix.listdir(records))[:MAX_WORKTREES]
    except (OSError, ValueError):
        return []
    found = []
    for name in names:
        own = fs.join(records, name)
        try:
            data = fs.read_file(fs.join(own, "gitdir"))
        except OSError:
            data = None
        marker = data.decode("utf-8", "surrogateescape").strip() if data else ""
        if marker and not fs.isabs(marker):  # git 2.48's relative paths: from the record
            marker = fs.normpath(fs.join(own, marker))
        tree = fs.dirname(marker) if marker.endswith("/.git") else marker
        gone = not marker or not fs.lexists(marker)
        if gone and fs.lexists(fs.join(own, "locked")):
            gone = False
        found.append((tree, "worktrees/" + name, gone))
    return found
