"""The git guard's hook scripts, as installed: `pre-commit` (the staged changes of a
commit) and `reference-transaction` (every other way a local branch moves: merges,
fast-forwards, cherry-picks, reverts, rebases, `git am`, `update-ref`, `branch -f`).
Why these two and no others: docs/adr/0011-git-guard-and-mcp-interop.md.

Invariants:

* Each script runs the hook it chained (`<hook>.agent-hooks-chained`, when present
  and executable) FIRST, with git's arguments — and, for `reference-transaction`,
  the very bytes git wrote on its stdin; its failure is the script's failure.
* `reference-transaction` starts Python only in the `prepared` state, only when an
  existing `refs/heads/*` branch is set to another object (not created, not deleted,
  not rewritten with the commit it has), and not for the commit `pre-commit` has
  just judged: `committed`/`aborted`, tags, remote-tracking refs, `HEAD`, new
  branches, `pack-refs` and an ordinary commit cost a shell loop, one
  `git for-each-ref` and at most two `git rev-parse`.
* Both fail open: a missing interpreter, or a check exiting with anything but 0 or
  `BLOCKED_EXIT`, prints a warning and lets git go on; the warning says how to
  remove every guard file in the directory by hand.
* The check is `python -I` (no cwd, no PYTHON* variables on sys.path: a repository
  cannot plant modules into it) calling `agent_hooks.cli.guard.main`, so scripts
  installed by any version keep working as long as that entry point does.
* No message a script prints names a way around the guard (docs/adr/0017-trust-model.md).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from typing import Any

PRE_COMMIT = "pre-commit"
REFERENCE_TRANSACTION = "reference-transaction"
HOOKS = (PRE_COMMIT, REFERENCE_TRANSACTION)
CHAINED_SUFFIX = ".agent-hooks-chained"
MARKER = "# agent-hooks-guard: "
BLOCKED_EXIT = 9
JUDGED_FILE = "agent-hooks-guard-commit"  # in the worktree's own git dir
JUDGED_FOR = 60  # seconds from pre-commit to its branch update (hooks, a message editor)


def _session_variables() -> tuple[str, ...]:
    from agent_hooks.clients import client_table

    return client_table.session_variables()


def judged_identity(environ: Mapping[str, str]) -> str:
    """Whose commit pre-commit judged: `AGENT_NAME|CONVERSATION`, the conversation being
    the first non-empty of every client's session variable (Claude Code's, Codex's, …),
    as the shell's `JUDGED_IDENTITY` reads it — so two conversations of one agent, of any
    client, never pass for each other."""
    conversation = next((environ[name] for name in _session_variables() if environ.get(name)), "")
    return f"{environ.get('AGENT_NAME', '')}|{conversation}"


def _first_set(names: tuple[str, ...]) -> str:
    """`${A:-${B:-}}`: the first non-empty of the variables `names`, in sh."""
    return "".join(f"${{{name}:-" for name in names) + "}" * len(names) if names else ""


# judged_identity, as the reference-transaction script computes it
JUDGED_IDENTITY = "${AGENT_NAME:-}|" + _first_set(_session_variables())

_CODE = 'from agent_hooks.cli.guard import main; main(prog_name="agent-hooks guard")'

_WHAT = {
    PRE_COMMIT: "refuses a commit that stages files another agent holds exclusively.",
    REFERENCE_TRANSACTION: "refuses to move a local branch (merge, cherry-pick, rebase,\n"
    "# am, update-ref, ...) when that changes files another agent holds exclusively.",
}


# The commit pre-commit has just judged (ref_check.remember_judged wrote what it
# judged): its branch update is not checked, nor reported, a second time. That
# update, and no other, moves the branch pre-commit ran on (`git commit` on it)
# from the judged HEAD to a commit whose tree is the judged tree and whose parents
# are that HEAD (a commit) or that HEAD's parents (`--amend`), in the same
# AGENT_NAME and conversation (`judged_identity`), within JUDGED_FOR seconds; the record is used up
# (removed) by the update it lets pass. Everything else — the same commit merged,
# fast-forwarded, cherry-picked or reset onto a branch, later or elsewhere — is
# checked: reservations may have been made since pre-commit judged it.
_JUDGED = f"""judged="$(git rev-parse --git-path {JUDGED_FILE} 2>/dev/null)"
if [ -f "$judged" ]; then
    set -- $moved
    {{ read -r j_head j_tree j_at j_outcome; read -r j_who; read -r j_ref; read -r j_parents; }} < "$judged" 2>/dev/null
    now="$(date +%s)"
    case "$j_at" in ""|*[!0-9]*) j_at= ;; esac
    case "$now" in ""|*[!0-9]*) j_at= ;; esac
    if [ $# -eq 3 ] && [ -n "$j_head" ] && [ "$3" = "$j_ref" ] && [ -n "$j_at" ] &&
        [ $((now - j_at)) -ge 0 ] && [ $((now - j_at)) -le {JUDGED_FOR} ] &&
        [ "$j_who" = "{JUDGED_IDENTITY}" ]; then
        landed="$(echo $(git rev-parse "$3^{{commit}}" "$2^{{tree}}" "$2^@" 2>/dev/null))"
        amended="$(echo $j_head $j_tree $j_parents)"
        if [ "$landed" = "$j_head $j_tree $j_head" ] || [ "$landed" = "$amended" ]; then
            rm -f "$judged"
            exit 0
        fi
    fi
fi"""


def _missing(subject: str) -> str:
    """What a hook whose interpreter is gone prints: the `rm`/`mv` of every guard file
    in its directory, so that one message undoes the whole guard."""
    names = " ".join(HOOKS)
    return f"""if [ ! -x "$python" ]; then
    echo "agent-hooks guard: $python is missing: {subject} not checked" >&2
    dir="$(cd -- "$(dirname -- "$0")" && pwd -P)"
    echo "  If agent-hooks is uninstalled, remove its git guard by hand:" >&2
    for name in {names}; do
        grep -q '^{MARKER}' "$dir/$name" 2>/dev/null || continue
        if [ -f "$dir/$name{CHAINED_SUFFIX}" ]; then
            echo "    rm -f -- \\"$dir/$name\\" && mv -- \\"$dir/$name{CHAINED_SUFFIX}\\" \\"$dir/$name\\"" >&2
        else
            echo "    rm -f -- \\"$dir/$name\\"" >&2
        fi
    done
    echo "  Otherwise run 'agent-hooks guard install' again (or 'agent-hooks guard uninstall')." >&2
    exit 0
fi"""


def _verdict(subject: str) -> str:
    return f"""status=$?
case $status in
    0) exit 0 ;;
    {BLOCKED_EXIT}) exit 1 ;;
esac
echo "agent-hooks guard: the reservation check failed (exit $status): {subject} allowed" >&2
exit 0"""


def render(hook: str, python: str, mode: str) -> str:
    """The script installed as `hook` (one of HOOKS)."""
    meta = json.dumps({"version": 1, "python": python, "mode": mode}, sort_keys=True)
    head = f"""#!/bin/sh
# agent-hooks git guard: {_WHAT[hook]}
# Installed by `agent-hooks guard install`; `agent-hooks guard uninstall` removes it
# and puts back the hook it chained (see `agent-hooks guard --help`).
{MARKER}{meta}
python={shlex.quote(python)}
mode={shlex.quote(mode)}
chained="$(dirname -- "$0")/{hook}{CHAINED_SUFFIX}"
"""
    check = f'"$python" -I -c {shlex.quote(_CODE)} check --hook --mode "$mode"'
    if hook == PRE_COMMIT:
        return f"""{head}if [ -f "$chained" ] && [ -x "$chained" ]; then
    "$chained" "$@" || exit $?
fi
case "${{AGENT_HOOKS_GUARD:-}}" in warn) mode=warn ;; esac
{_missing("the commit is")}
{check}
{_verdict("commit")}
"""
    return f"""{head}input="$(cat; echo .)"
input="${{input%.}}"
if [ -f "$chained" ] && [ -x "$chained" ]; then
    printf '%s' "$input" | "$chained" "$@" || exit $?
fi
[ "$1" = prepared ] || exit 0
branches="$(git for-each-ref --format='%(objectname) %(refname)' refs/heads/ 2>/dev/null)
"
moved="$(printf '%s' "$input" | while read -r old new ref; do
    case "$ref" in refs/heads/*) ;; *) continue ;; esac
    case "$new" in *[!0]*) ;; *) continue ;; esac
    case "$branches" in
        *"$new $ref
"*) ;;
        *" $ref
"*) printf '%s %s %s\\n' "$old" "$new" "$ref" ;;
    esac
done)"
[ -n "$moved" ] || exit 0
{_JUDGED}
case "${{AGENT_HOOKS_GUARD:-}}" in warn) mode=warn ;; esac
{_missing("the branch update is")}
printf '%s\\n' "$moved" | {check} --ref-updates
{_verdict("branch update")}
"""


def read_meta(path: str) -> dict[str, Any] | None:
    """The guard's settings if `path` is a guard script, else None."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(8192).decode("utf-8", "replace")
    except OSError:
        return None
    for line in head.splitlines():
        if line.startswith(MARKER):
            try:
                meta = json.loads(line[len(MARKER) :])
            except ValueError:
                return {}
            return meta if isinstance(meta, dict) else {}
    return None
