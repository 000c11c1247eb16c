"""Real git repositories for tests: `git init`, a first commit, `git worktree add`.

Git runs with a HOME of its own and no system or global configuration, so the
user's settings never reach a test.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def git(cwd: Path, *args: str, when: float | None = None) -> str:
    """Run git in `cwd`; its stdout, stripped. Raises on failure. `when` (seconds since
    the epoch) dates the commits it makes."""
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(cwd),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    if when is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"@{int(when)} +0000"
    proc = subprocess.run(
        ["git", "-C", str(cwd), *args], check=True, env=env, capture_output=True, text=True
    )
    return proc.stdout.strip()


def init(path: Path, branch: str = "main") -> Path:
    """A repository at `path` on `branch` with one commit."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", branch)
    (path / "README.md").write_text("hello\n")
    git(path, "add", "README.md")
    git(path, "commit", "-q", "-m", "first")
    return path


def worktree(repo: Path, path: Path, branch: str) -> Path:
    """A linked worktree of `repo` at `path` on a new `branch`."""
    git(repo, "worktree", "add", "-q", "-b", branch, str(path))
    return path


def with_worktree(base: Path) -> tuple[Path, Path]:
    """(a repository at `base`/repo on `main`, its linked worktree at `base`/wt on
    `feature`), `base` resolved first."""
    base = Path(os.path.realpath(base))
    main = init(base / "repo")
    return main, worktree(main, base / "wt", "feature")
