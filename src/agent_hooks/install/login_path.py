"""Does a login shell find the `agent-hooks` command? tmux panes start login shells, and an
agent's shell tool inherits that PATH: where `~/.local/bin` is not on it, agents cannot run
`agent-hooks` by name. install.sh asks here (and offers to add the line), and so does
`agent-hooks doctor`.

Invariants:

* The login shell is `$SHELL`, else the user's shell from the password database. It is
  asked with `SHELL -lc 'command -v agent-hooks'` from `/`, stdin closed, under a time
  limit; a shell that cannot be asked counts as the current PATH.
* The fix is one line in the profile that shell reads at login: fish's `config.fish`,
  zsh's `.zprofile` (`$ZDOTDIR` honoured), bash's first of `.bash_profile`,
  `.bash_login`, `.profile` that exists (else `.profile`), any other shell's `.profile`.
* A profile is only ever appended to (never rewritten), with the one line and a comment
  naming agent-hooks, and only when asked: on a terminal after a yes, or with `--yes`.
  Without a terminal and without `--yes` nothing is edited; the line is printed.

Standard library only: install.sh runs it from the clone.
"""

from __future__ import annotations

import argparse
import os
import pwd
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass

COMMAND = "agent-hooks"
TIME_LIMIT = 20.0
COMMENT = "# added by agent-hooks' install.sh: agents in new panes find `agent-hooks`"


def login_shell(environ: Mapping[str, str]) -> str | None:
    """The user's login shell, when it can be run."""
    candidates = [environ.get("SHELL") or ""]
    try:
        candidates.append(pwd.getpwuid(os.getuid()).pw_shell)
    except KeyError:
        pass
    for shell in candidates:
        if shell and os.path.isabs(shell) and os.access(shell, os.X_OK):
            return shell
    return None


def found_by(shell: str, environ: Mapping[str, str]) -> str | None:
    """What `command -v agent-hooks` says in a login shell (None: nothing, or it failed)."""
    try:
        done = subprocess.run(
            [shell, "-lc", f"command -v {COMMAND}"],
            cwd="/",
            env=dict(environ),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=TIME_LIMIT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = done.stdout.strip().splitlines()
    return lines[-1] if done.returncode == 0 and lines else None


def profile_line(
    shell: str, bin_dir: str, home: str, environ: Mapping[str, str]
) -> tuple[str, str]:
    """(the profile file that shell reads at login, the line that puts `bin_dir` first on its
    PATH)."""
    shown = "$HOME/" + bin_dir[len(home) + 1 :] if bin_dir.startswith(home + "/") else bin_dir
    export = f'export PATH="{shown}:$PATH"'
    name = os.path.basename(shell)
    if name == "fish":
        return os.path.join(home, ".config", "fish", "config.fish"), f'fish_add_path "{bin_dir}"'
    if name == "zsh":
        return os.path.join(environ.get("ZDOTDIR") or home, ".zprofile"), export
    if name == "bash":
        for candidate in (".bash_profile", ".bash_login"):
            if os.path.isfile(os.path.join(home, candidate)):
                return os.path.join(home, candidate), export
    return os.path.join(home, ".profile"), export


@dataclass(frozen=True)
class Finding:
    """What a login shell finds, and the fix when it is not the link."""

    ok: bool
    shell: str | None
    found: str | None
    profile: str | None = None
    line: str | None = None

    def problem(self, link: str, bin_dir: str) -> str | None:
        """One line saying what is wrong and what fixes it (None: nothing is)."""
        if self.ok:
            return None
        if self.shell is None:
            return (
                f"{bin_dir} is not on your PATH, so agents cannot run agent-hooks by name "
                "(fix: add it to your shell's profile)"
            )
        fix = f"add `{self.line}` to {self.profile}, or run ./install.sh --yes"
        if self.found:
            return f"a login shell ({self.shell}) finds {self.found} before {link} (fix: {fix})"
        return (
            f"{bin_dir} is not on the PATH of your login shell ({self.shell}), so agents in new "
            f"tmux panes cannot run agent-hooks by name (fix: {fix})"
        )


def check(link: str, bin_dir: str, environ: Mapping[str, str]) -> Finding:
    """Whether a login shell finds `link` as `agent-hooks`."""
    home = environ.get("HOME") or os.path.expanduser("~")
    shell = login_shell(environ)
    if shell is None:
        on_path = bin_dir in (environ.get("PATH") or "").split(os.pathsep)
        return Finding(on_path, None, None)
    found = found_by(shell, environ)
    if found and os.path.exists(found) and os.path.exists(link) and os.path.samefile(found, link):
        return Finding(True, shell, found)
    profile, line = profile_line(shell, bin_dir, home, environ)
    return Finding(False, shell, found, profile, line)


def add_line(profile: str, line: str) -> bool:
    """Append `line` (after a comment naming agent-hooks) to `profile`, unless it is already
    there; True when it was added."""
    try:
        with open(profile, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except FileNotFoundError:
        text = ""
    if line in text.splitlines():
        return False
    os.makedirs(os.path.dirname(profile) or ".", exist_ok=True)
    with open(profile, "a", encoding="utf-8") as handle:
        handle.write(("" if not text or text.endswith("\n") else "\n") + f"{COMMENT}\n{line}\n")
    return True


def offer(link: str, bin_dir: str, environ: Mapping[str, str], *, yes: bool) -> int:
    """install.sh's step: say what a login shell finds; when it is not the link, add the line
    (`yes`), or ask on a terminal, or print it. 0: found (or added), 3: not found."""
    finding = check(link, bin_dir, environ)
    problem = finding.problem(link, bin_dir)
    if problem is None:
        print(f"a login shell finds {link}")
        return 0
    if finding.profile is None or finding.line is None:
        print(f"warning: {problem}", file=sys.stderr)
        return 3
    answer = "y" if yes else ""
    if not yes and sys.stdin.isatty():
        try:
            answer = input(
                f"{bin_dir} is not on your login shell's PATH. Add `{finding.line}` to "
                f"{finding.profile}? [y/N] "
            )
        except EOFError:
            answer = ""
    if answer.strip().lower().startswith("y"):
        added = add_line(finding.profile, finding.line)
        print(
            f"{finding.profile}: " + ("added" if added else "already holds") + f" `{finding.line}`"
            " (new login shells and tmux panes find agent-hooks)"
        )
        return 0
    print(f"warning: {problem}", file=sys.stderr)
    return 3


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m agent_hooks.install.login_path", description=(__doc__ or "").splitlines()[0]
    )
    parser.add_argument("action", choices=["offer"])
    parser.add_argument("--link", required=True, help="The agent-hooks link install made.")
    parser.add_argument("--bin-dir", required=True, help="The directory the link is in.")
    parser.add_argument("--yes", action="store_true", help="Add the line without asking.")
    args = parser.parse_args(argv)
    return offer(args.link, args.bin_dir, os.environ, yes=args.yes)


if __name__ == "__main__":
    raise SystemExit(main())
