"""Changing the reservations of a ledger shared with other machines: the path
`reservation_store` takes when the repository's `remote` setting names a git
remote (docs/adr/0016-ledger-beyond-one-machine.md).

`change` gets the store's operation (its tidy and its reserve, release or renew)
and runs it first on a copy of the local truth, to see what it touches:

* nothing another machine must know (a `--local` reservation, a release or
  renewal of only such ones, a setting, a tidy): written here, no network;
* otherwise, from the CLI: written through (`remote_ledger.write_through`):
  fetched, planned against the remote document, pushed with a lease, retried on
  a lost race, and only then written here; a remote that does not answer
  refuses the change with one line naming `--local`, and nothing is written;
* otherwise, from a hook (`offline`): a hook never waits for the network. A
  release or renewal of this machine's grants is made here now and reaches the
  remote with this machine's next sync (which writes the remote's copy of this
  machine's grants whenever it differs from the local truth); another
  machine's grant it released leaves a tombstone here that the sync pushes; a
  detached sync is started; a new reservation is kept on this machine only
  (`local`, never pushed), which the outcome's notes say.

Invariants: the caller (`reservation_store._locked`) holds the ledger's lock;
`outcome.host` is this machine for the whole change (whose holders alone this
machine judges, and whose agents own their reservations here); each attempt
runs the operation on a fresh outcome and a fresh copy, so what is returned is
what the remote took.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from agent_hooks import identity
from agent_hooks.ledger import remote_git, remote_grants, remote_ledger
from agent_hooks.reservations import index_build, reservation, reservation_index

if TYPE_CHECKING:
    from agent_hooks.reservations.reservation import Outcome

HINTS = {
    "reserved": "or add --local to reserve on this machine only",
    "released": "or add --local to release it here now and on the remote at its next sync",
    "renewed": "or add --local to renew it here now and on the remote at its next sync",
}
LOCAL_NOTE = (
    "{patterns}: recorded on this machine only (a hook does not wait for the shared "
    "ledger's remote); agents on other machines are not held off by it: reserve it with "
    "`agent-hooks reserve` to hold it everywhere"
)


def this_host(environ: Mapping[str, str]) -> str:
    """This machine's name on the remote, or ReservationError (a bad AGENT_HOOKS_HOST)."""
    try:
        return remote_ledger.host_name(environ)
    except remote_ledger.HostNameError as exc:
        raise reservation.ReservationError(str(exc)) from None


def change(
    directory: str,
    doc: dict[str, Any],
    remote: str,
    now: float,
    apply: Callable[[dict[str, Any], Outcome], bool],
    outcome: Outcome,
    *,
    needs_remote: Callable[[Outcome], bool] | None,
    offline: bool,
    forced: bool,
    what: str,
    environ: Mapping[str, str] | None = None,
) -> tuple[dict[str, Any] | None, Outcome]:
    """Run `apply` (tidy, then the operation) as the module says. Returns the
    local truth written (None: nothing written) and the outcome of the run that
    counted. Raises ReservationError (one line; nothing written) when the remote
    did not take a change it had to. `environ` (default: this process's) names
    this machine (`AGENT_HOOKS_HOST`) and is git's."""
    environ = os.environ if environ is None else environ
    host = this_host(environ)

    def fresh() -> Outcome:
        made = type(outcome)()
        made.notes = list(outcome.notes)
        made.host = host
        return made

    trial = fresh()
    here = remote_ledger.copied(doc)
    changed = apply(here, trial)
    if needs_remote is None or not needs_remote(trial):
        if not (changed or forced or trial.notes):
            return None, trial
        return _write_here(directory, here, now), trial
    if offline:
        return _offline(directory, doc, here, trial, now, environ), trial
    latest: dict[str, Outcome] = {}

    def attempt(planned: dict[str, Any]) -> bool:
        latest["outcome"] = run = fresh()
        return apply(planned, run)

    git = remote_git.Git(os.path.dirname(directory.rstrip("/")), directory, environ)
    try:
        done = remote_ledger.write_through(
            directory,
            git,
            remote,
            host,
            now,
            attempt,
            what=what,
            hint=HINTS.get(what, ""),
            checks_others=what == "reserved",
            state_dir=identity.state_dir(environ),
        )
    except remote_ledger.RemoteUnavailable as exc:
        raise reservation.ReservationError(str(exc)) from None
    except remote_git.GitFailure as exc:  # a local git failure making the commit
        refused = remote_ledger.unavailable(remote, str(exc), what, HINTS.get(what, ""))
        raise reservation.ReservationError(str(refused)) from None
    result = latest.get("outcome", trial)
    result.notes += done.notes
    return reservation_index.load_truth(directory).doc, result


def _write_here(directory: str, doc: dict[str, Any], now: float) -> dict[str, Any]:
    doc["schema"] = doc.get("schema") if isinstance(doc.get("schema"), int) else 2
    doc["updated_at"] = int(now)
    index_build.write(directory, doc)
    return doc


def _offline(
    directory: str,
    before: dict[str, Any],
    after: dict[str, Any],
    outcome: Outcome,
    now: float,
    environ: Mapping[str, str],
) -> dict[str, Any]:
    """A change a hook made: here now, the remote at the next sync."""
    host = outcome.host or this_host(environ)
    old = {
        e.get("id"): e
        for e in before.get("reservations") or []
        if isinstance(e, dict) and not remote_ledger.is_local(e)
    }
    new = {e.get("id"): e for e in after["reservations"] if not remote_ledger.is_local(e)}
    reaches_remote = False
    stones = []
    for rid, entry in old.items():
        kept = new.get(rid)
        if kept is not None and _expiry(kept) <= _expiry(entry):
            continue
        reaches_remote = True
        if kept is None and not remote_ledger.is_own(entry, host) and _expiry(entry) > now:
            why = _why_dropped(after, rid) or "released (release --force)"
            stones.append(remote_grants.tombstone(entry, host, f"{why} on machine {host}", now))
    if stones:
        after["tombstones"] = remote_grants.kept_tombstones(
            [*(after.get("tombstones") or []), *stones], now
        )
    added = [e for rid, e in new.items() if rid not in old]
    for entry in added:
        entry["local"] = True
    if added:
        outcome.notes.append(
            LOCAL_NOTE.format(patterns=", ".join(str(e.get("pattern")) for e in added))
        )
    written = _write_here(directory, after, now)
    if reaches_remote:
        from agent_hooks.ledger import remote_view

        try:
            remote_view.start_sync(directory, now, dict(environ))
        except OSError:
            pass  # the next hook that finds the sync due starts it
    return written


def _why_dropped(doc: dict[str, Any], rid: object) -> str | None:
    """Why the store recorded `rid` as dropped in this change (a forced release)."""
    dropped = doc.get("dropped")
    for item in reversed(dropped if isinstance(dropped, list) else []):
        if isinstance(item, dict) and item.get("id") == rid and isinstance(item.get("why"), str):
            return str(item["why"])
    return None


def _expiry(entry: dict[str, Any]) -> float:
    value = entry.get("expires_at")
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0
