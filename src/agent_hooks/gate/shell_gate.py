"""Whether a shell command may run: the gate's decision for Claude Code's Bash
(and its skill shell lines), Codex's shell calls and Gemini's run_shell_command.

Invariants:

* A command is parsed only when, in the agent's project (or, for a submodule,
  one of its superprojects), another owner holds
  something exclusive, another writer holds a lease, or strict mode is on — or
  it names agent-hooks' own files, or may write outside the project (an absolute
  path, `..`, `~`, `git -C`; or the agent runs in no repository: a folder holding
  several, or none at all) — and only
  when the prefilter says the parser could see a write. Each target is judged in
  the ledger of the repository it lies in, wherever the agent was launched.
* A plain command (`shell.plain`: `echo x > f` and its kin) is read without the
  parser, with the parser's answer.
* Each visible write target (a path and everything below it, or a glob) is
  located with symlinks resolved (`places.locate_write`, `places.locate_glob`)
  and refused by another owner's live exclusive reservation overlapping it, by
  another writer's lease on a file under it, by holding agent-hooks' own files,
  or by strict mode without a reservation of one's own. The paths a git pathspec
  leaves alone (`BashTarget.but`) do not count: a lease on a file in one, a
  reservation lying wholly in one; nor does a ledger inside a `.git` directory for
  a path git writes (`BashTarget.by_git`).
* A git command rewriting a whole work tree is refused while another live writer
  leases a file in it, or while a tracked file in another owner's live exclusive
  reservation there holds uncommitted work as git's index tells it (`git_index`, read
  only then; what it cannot tell refuses, naming the reservation and why; `git clean`
  and `git stash -u` whenever such a reservation lies there) — for a submodule, as its
  superprojects' ledgers know it too — naming files, holders and the safe forms; `git worktree remove --force TREE`
  while another live writer leases a file in that tree (or a reservation covers
  it, as for `rm -rf TREE`), `git worktree prune` while one leases a file in a
  tree whose record it would drop (ADR-0020's amendment says why).
* What the parser cannot see (scripts, interpreters) is not refused here; the
  aftermath (`shell_aftermath`) tells the model afterwards.
* A command the parser gave up on (`BashAnalysis.gave_up`: nesting too deep, too
  many wrappers, ...) may write anything anywhere: it counts as writing the whole
  project, refused while another writer holds anything exclusive in it (a live
  reservation or a lease), and the reason is logged (`verdict.problems`).
"""

from __future__ import annotations

from agent_hooks import posix_fs as fs
from agent_hooks import preload
from agent_hooks.gate.tool_call import Place, ToolCall, Verdict, refuse
from agent_hooks.shell import prefilter

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from agent_hooks.gate import git_index
    from agent_hooks.ledger.repo import Repo
    from agent_hooks.reservations.index_records import HotIndex

    Record = tuple[Any, ...]

# What reading a plain command line loads (agent_hooks.preload): when another writer
# holds something, or the command may write outside the project.
PLAIN_MODULES = ("agent_hooks.shell.plain",)
# What judging one write target loads: its places, the reservations and the leases
# that may cover it (each of these is asked of every target).
TARGET_MODULES = (
    "agent_hooks.liveness",
    "agent_hooks.gate.places",
    "agent_hooks.gate.protected",
    "agent_hooks.reservations.pattern",
    "agent_hooks.reservations.blocking",
    "agent_hooks.leases.lease",
    "agent_hooks.leases.lease_store",
    "agent_hooks.leases.writer_cards",
)


def decide(call: ToolCall, command: object) -> Verdict:
    """A shell command line: refused when a write the parser can see is refused.
    The command is read as the client hands it to the shell (`posix_fs.as_written`:
    a lone surrogate is U+FFFD)."""
    verdict = Verdict()
    project = call.project
    if not isinstance(command, str):
        return verdict
    command = fs.as_written(command)
    if not prefilter.might_write(command):
        return verdict  # nothing the parser could see: do not pay for loading it
    home = call.repo(project) if project is not None else None
    contended = home is not None and (_contended(call, home) or _outer_contended(call, home))
    if not (
        contended
        or prefilter.mentions_own_files(command)
        or home is None
        or not fs.lexists(fs.join(home.root, ".git"))  # a folder holding repositories
        or prefilter.reaches_out(command)
    ):
        return verdict
    preload(PLAIN_MODULES)
    from agent_hooks.shell import plain

    cwd = call.cwd or project or "/"
    paths = plain.targets(command, cwd)  # without loading the parser, when it can
    if paths is not None:
        for path in paths:
            reason = _check_target(call, path, False)
            if reason is not None:
                return refuse(call, verdict, reason)
        return verdict
    preload(prefilter.PARSER_MODULES)  # only when someone else holds something
    from agent_hooks.shell import writes

    analysis = writes.analyze(command, cwd, call.environ.get("HOME"))
    for target in analysis.targets:
        reason = _check_target(
            call, target.path, target.glob, target.entry, target.but, target.by_git
        )
        if reason is not None:
            return refuse(call, verdict, reason)
    for directory, what in analysis.trees:
        where = directory or call.cwd or project
        reason = _check_tree(call, where, what) if where is not None else None
        if reason is not None:
            return refuse(call, verdict, reason)
    for kind, directory, what, named, at in analysis.worktrees:
        run_in = directory or call.cwd or project
        reason = _check_worktree(call, run_in, kind, what, named, at) if run_in else None
        if reason is not None:
            return refuse(call, verdict, reason)
    if analysis.gave_up is not None and home is not None:
        verdict.problems.append(
            f"Bash command too complex to check ({analysis.gave_up}): "
            f"it counts as writing anywhere in {project}"
        )
        reason = _too_complex(call, home, analysis.gave_up)
        if reason is not None:
            return refuse(call, verdict, reason)
    return verdict


def _contended(call: ToolCall, repo: Repo) -> bool:
    """Does another owner hold something exclusive in the repository (a live
    reservation, a lease; another machine's under the deny setting), or is strict
    mode on there?"""
    return (
        (repo.index is not None and repo.index.others_hold_exclusive(call.writer.owner, call.now))
        or repo.strict
        or _leases_held(call, repo.ledger, repo.minutes)
        or (repo.deny_elsewhere and _remote_leases(repo, call.now))
    )


def _outer_contended(call: ToolCall, home: Repo) -> bool:
    """For a submodule: is its superproject contended? (One `stat` of the project's
    `.git` when it is none: a directory. The superproject named is the outermost:
    its git dir holds every nested submodule's.)"""
    from agent_hooks import repository

    outer = repository.superproject(home.root)
    return outer is not None and _contended(call, call.repo(outer))


def _leases_held(call: ToolCall, ledger: str, minutes: int) -> bool:
    if minutes <= 0:
        return False
    preload(("agent_hooks.leases.lease", "agent_hooks.leases.writer_cards"))
    from agent_hooks.leases import writer_cards

    return writer_cards.others_heard_from(ledger, call.writer.key, minutes, call.now)


def _too_complex(call: ToolCall, home: Repo, why: str) -> str | None:
    """Why a command the parser gave up on may not run: another writer holds
    something exclusive in the project (a live reservation, or a lease) — for a
    submodule, in its superprojects too."""
    from agent_hooks.gate import places
    from agent_hooks.reservations import index_records, reservation

    held: list[str] = []
    for whole in call.places(places.enclosing(home.root)):
        repo = whole.repo
        compiled = _compile_target(whole.rel, False)
        if repo.index is not None:
            holders = _reserved(call, repo.index, repo.ledger, repo.minutes, compiled)
            unique = reservation.unique([index_records.as_dict(rec) for rec in holders])
            held = [reservation.describe(res, call.now) for res in unique[:3]]
        if not held and repo.minutes > 0:
            found = _lease_blocker(call, whole, compiled, False)
            if found is not None:
                from agent_hooks.leases import lease_messages

                leased, holder, card = found
                label = lease_messages.holder_label(holder, card)
                held = [f"{leased} is being changed by {label}"]
        if held:
            break
    if not held:
        return None
    from agent_hooks.reservations import reservation_messages

    return reservation_messages.too_complex_message(why, held, call.shell_command)


def _check_target(
    call: ToolCall,
    path: str,
    glob: bool,
    entry: bool = False,
    but: tuple[str, ...] = (),
    by_git: bool = False,
) -> str | None:
    """Why a shell target (a path and everything below it, or a glob; `entry`: the
    directory entry itself; `but`: literal paths inside it the command leaves alone;
    `by_git`: git writes it, never inside a `.git` directory) may not be written: our
    own files (a ledger in a `.git` directory not, for git), another owner's
    reservation (not one lying wholly in `but`), another writer's lease (not on a
    file in `but`), or strict mode without a reservation of one's own."""
    preload(TARGET_MODULES)
    from agent_hooks.gate import places, protected
    from agent_hooks.reservations import blocking

    pairs = (
        places.locate_glob(path, call.project)
        if glob
        else places.locate_write(path, call.project, entry)
    )
    where = call.places(pairs)
    owner, now = call.writer.owner, call.now
    strict_rel = None
    owned = False
    for place in where:
        repo, rel = place.repo, place.rel
        compiled = _compile_target(rel, glob)
        spared = _spared(call, place, but) if but else []
        if repo.index is not None:
            holders = _reserved(call, repo.index, repo.ledger, repo.minutes, compiled)
            holders = [rec for rec in holders if not _covered(rec, spared)]
            if holders:
                return _deny_text(rel, holders, now, call.shell_command)
        if repo.minutes > 0:
            reason = _leased_under(call, place, compiled, glob, spared)
            if reason is not None:
                return reason
        if rel and not glob:
            owned = owned or blocking.owns(repo.index, rel, owner, now)
            if (
                strict_rel is None
                and repo.strict
                and not places.in_workspaces(p.rel for p in where)
            ):
                strict_rel = rel
    if not glob:
        resolved = places.resolve_entry(path) if entry else fs.realpath(path)
        ledgers = [call.repo(call.project).ledger] if call.project is not None else []
        ledgers += [p.repo.ledger for p in where]
        if by_git:  # git never writes inside a `.git` directory, where ledgers usually are
            ledgers = [book for book in ledgers if "/.git/" not in book]
        what = protected.guarded(resolved, call.state_dir, ledgers, directory=True)
        if what is not None:
            return protected.message(what, path)
    if strict_rel is not None and not owned:
        from agent_hooks.reservations import reservation_messages

        return reservation_messages.strict_message(strict_rel)
    return None


def _check_tree(call: ToolCall, directory: str, what: str) -> str | None:
    """Why a git command that rewrites the whole work tree `directory` lies in
    (`git stash`, `git checkout <branch>`, `git reset --hard`, …) may not run:
    other writers are changing files in that work tree, whose uncommitted work it
    would change or sweep away (issue 18) — files they lease, or modified files in
    their live exclusive reservations, leases or none (issue 33) — for a submodule,
    as its superprojects' ledgers know them too."""
    from agent_hooks import repository
    from agent_hooks.gate import places
    from agent_hooks.leases import lease_messages

    top = repository.git_top_level(directory)
    if top is None:
        return None
    held: list[str] = []
    whole = call.places(places.enclosing(top))
    for place in whole:
        if place.repo.minutes > 0:
            prefix = place.rel + "/" if place.rel else ""
            for item in _held_files(call, place.repo.ledger, place.repo.worktree, prefix):
                if item not in held:
                    held.append(item)
    unsure = _reserved_work(call, top, whole, what, held)
    return lease_messages.tree_rewrite_message(what, held, unsure) if held or unsure else None


def _reserved_work(
    call: ToolCall, top: str, whole: list[Place], what: str, held: list[str]
) -> list[str]:
    """Add to `held` the uncommitted work the rewrite of the work tree `top` (`whole`:
    it as a whole in each project that judges it) would sweep from other owners' live
    exclusive reservations: each modified tracked file (`rel (holder, who reserved
    pattern)`), or the directory holding staged work, as git's index tells it
    (`git_index`); return the reservations whose work cannot be told (`pattern
    (holder): why`). A shared reservation is not asked: others may write in it,
    so its modified files are not known to be its holder's (they may be the
    rewriter's own), and the lease of each file its holder writes protects them."""
    from agent_hooks.reservations import blocking, index_records, pattern

    found: list[tuple[Place, Record]] = []
    for place in whole:
        index = place.repo.index
        if index is not None:
            compiled = _compile_target(place.rel, False)
            first = pattern.first_literal(compiled)
            for rec in blocking.blocking(index, compiled, first, call.writer.owner, call.now,
                                         None, None):  # fmt: skip
                found.append((place, rec))
    if not found:
        return []
    from agent_hooks.gate import git_index

    tree = call.repo(top)
    why = _untold(what, tree.git_dir)
    if why is None and tree.git_dir is not None:
        areas = [_area(place.rel, rec[index_records.COMPILED]) for place, rec in found]
        findings = git_index.changes(tree.git_dir, tree.common_dir, top, areas)
    else:
        findings = [git_index.Finding() for _ in found]
        for finding in findings:
            finding.unsure = why
    unsure: list[str] = []
    listed = {item.partition(" (")[0] for item in held}
    counted: dict[str, Any] = {}
    for (place, rec), finding in zip(found, findings, strict=True):
        if finding.clean:
            continue
        repo = place.repo
        if repo.ledger not in counted:
            counted[repo.ledger] = blocking.holder_counts(repo.ledger, repo.minutes, call.now)
        if not counted[repo.ledger](rec):  # a syscall: asked only of a holder with work here
            continue
        from agent_hooks.reservations import reservation  # only to name one with work

        holder = reservation.holder_label(index_records.as_dict(rec))
        shown = reservation.one_line(rec[index_records.PATTERN], 300)
        label = f"{holder}, who reserved {shown}"
        for rel in finding.changed:
            if rel not in listed:
                listed.add(rel)
                held.append(f"{rel} ({label})")
        if finding.staged is not None:
            where = finding.staged + "/" if finding.staged else "the work tree"
            held.append(f"{where} (work staged in git's index; {label})")
        if finding.unsure is not None:
            unsure.append(f"{shown} ({holder}: {finding.unsure})")
    return unsure


def _untold(what: str, git_dir: str | None) -> str | None:
    """Why git's index cannot tell what the rewrite `what` would sweep away, or None."""
    if git_dir is None:
        return "the work tree's git directory cannot be found"
    if what == "git clean" or what.endswith(" -u"):  # `git stash -u`, `git stash push -u`
        return "it sweeps away untracked files, which git's index does not list"
    if what.startswith("git submodule"):
        return "the submodules' files are not in this work tree's index"
    return None


def _area(rel: str, compiled: list[Any]) -> git_index.Area:
    """A reservation (`compiled`, in the project where the work tree lies at `rel`)
    as an area of that work tree: its leading literal path there, whether a path of
    the work tree lies in it, and whether every path below that literal one does (a
    pattern of literal segments only, or `**`: no pattern asked of each file)."""
    from agent_hooks.reservations import pattern

    literal: list[str] = []
    for seg in compiled[1:]:
        if type(seg) is not str:
            break
        literal.append(seg)
    whole = len(literal) == len(compiled) - 1 or compiled == ["", pattern.GLOBSTAR]
    inside = rel.split("/") if rel else []
    lead = rel + "/" if rel else ""
    if literal[: len(inside)] == inside:
        prefix, below = "/".join(literal[len(inside) :]), whole
    else:  # it lies above the work tree (every path of it, when whole), or beside it
        prefix, below = "", whole and inside[: len(literal)] == literal
    return prefix, lambda path: pattern.matches(compiled, lead + path), below


def _held_files(call: ToolCall, ledger: str, worktree: str, prefix: str = "") -> list[str]:
    """`rel (holder)` for each file under `prefix` (cut off) another live writer
    leases in the work tree `worktree`."""
    from agent_hooks import liveness
    from agent_hooks.leases import lease, lease_messages, lease_store, writer_cards

    held: list[str] = []
    for rel in lease_store.all_paths(ledger, prefix):
        seen = lease.judge(
            lease_store.read(ledger, rel), call.writer, worktree, call.now, liveness.alive
        )
        if seen.blockers:
            holder = seen.blockers[0]
            card = writer_cards.card(ledger, holder.get("writer"))
            held.append(f"{rel[len(prefix) :]} ({lease_messages.holder_label(holder, card)})")
    return held


def _check_worktree(
    call: ToolCall, directory: str, kind: str, what: str, named: str | None, path: str | None
) -> str | None:
    """Why `git worktree remove --force TREE` or `git worktree prune` may not run:
    the tree it deletes holds another live writer's uncommitted work (leased files,
    or a reservation, as for `rm -rf TREE`), or the record prune drops is of a tree
    where another live writer holds leased files (its directory moved, unmounted
    or deleted: the files may live on, their index and branch would not)."""
    from agent_hooks import repository
    from agent_hooks.gate import places

    top = repository.git_top_level(directory)
    if top is None:
        return None
    repo = call.repo(top)
    linked = places.worktrees(repo.common_dir)
    if kind == "prune":
        chosen = [(tree, wid) for tree, wid, gone in linked if gone]
    else:
        common = repo.common_dir
        main = fs.dirname(common) if common and fs.basename(common) == ".git" else None
        chosen = _removed(linked, main, named, path)
    ledger = repo.ledger
    for tree, wid in chosen:
        held = _held_files(call, ledger, wid)
        if held:
            from agent_hooks.leases import lease_messages

            return lease_messages.worktree_message(what, tree, held, kind == "prune")
        if kind != "prune" and fs.isdir(tree):
            reason = _check_target(call, tree, False)
            if reason is not None:
                return reason.replace("the whole project", f"the work tree {tree}")
    return None


def _removed(
    linked: list[tuple[str, str, bool]], main: str | None, named: str | None, path: str | None
) -> list[tuple[str, str]]:
    """The linked work tree `git worktree remove` takes `named` (its path `path`
    from where git runs) for, as git 2.39 finds it: the one work tree (the main one
    `main` counted too) whose path is `named` or ends in `/named`, else the one at
    `path` (symlinks resolved); every linked tree when the name cannot be known."""
    if named is None and path is None:
        return [(tree, wid) for tree, wid, _ in linked]
    if named:
        trees = [(tree, wid) for tree, wid, _ in linked] + ([(main, "")] if main else [])
        ends = [(t, w) for t, w in trees if t == named or t.endswith("/" + named)]
        if len(ends) == 1:
            return ends if ends[0][1] else []  # git refuses to remove the main work tree
    real = fs.realpath(path) if path is not None else None
    return [
        (tree, wid) for tree, wid, _ in linked if real is not None and fs.realpath(tree) == real
    ]


def _leased_under(
    call: ToolCall, place: Place, compiled: list[Any], glob: bool, spared: list[str]
) -> str | None:
    found = _lease_blocker(call, place, compiled, glob, spared)
    if found is None:
        return None
    from agent_hooks.leases import lease_messages

    leased, holder, card = found
    shown = place.rel or "the whole project"
    return lease_messages.deny_message(leased, holder, call.now, card, call.writer).replace(
        "Do not edit it now.",
        f"This {call.shell_command} would write {shown}, which includes it; do not run it now.",
        1,
    )


def _lease_blocker(
    call: ToolCall,
    place: Place,
    compiled: list[Any],
    glob: bool,
    spared: list[str] | None = None,
) -> tuple[str, dict[str, Any], dict[str, Any] | None] | None:
    """(leased path, the blocking lease, its writer's card) for the first file
    under the target another writer leases, or None; files in `spared` (relative
    paths, each with everything below it) do not count. A target that is no
    directory costs one lookup of its own lease file; only a glob or a directory
    lists the ledger's leases (their names, compared escaped)."""
    from agent_hooks import liveness
    from agent_hooks.leases import lease, lease_store, writer_cards

    repo, rel = place.repo, place.rel
    candidates = [rel] if rel and not glob else []
    if glob or not rel or fs.isdir(fs.join(repo.root, rel)):
        from agent_hooks.reservations import pattern

        prefix = "" if glob or not rel else rel + "/"
        candidates += lease_store.paths_under(
            repo.ledger, lambda p: pattern.matches(compiled, p), prefix
        )
    if spared:
        candidates = [p for p in candidates if not any(_below(p, ex) for ex in spared)]
    for leased in candidates:
        seen = lease.judge(
            lease_store.read(repo.ledger, leased),
            call.writer,
            repo.worktree,
            call.now,
            liveness.alive,
        )
        blockers = seen.blockers + (seen.elsewhere if repo.deny_elsewhere else [])
        if blockers:
            holder = blockers[0]
            return leased, holder, writer_cards.card(repo.ledger, holder.get("writer"))
    if repo.deny_elsewhere:  # other machines' leases count like other worktrees'
        from agent_hooks.ledger import remote_view

        found = remote_view.lease_under(repo.ledger, repo.index, compiled, call.now)
        if found is not None:
            return found[0], found[1], None
    return None


def _spared(call: ToolCall, place: Place, but: tuple[str, ...]) -> list[str]:
    """The paths `but` (absolute, literal) as relative paths in the place's project."""
    from agent_hooks.gate import places

    root = place.repo.root
    return [rel for ex in but for top, rel in places.locate_write(ex, call.project) if top == root]


def _below(rel: str, spared: str) -> bool:
    """Is `rel` the path `spared` or below it ("" holds everything)?"""
    return not spared or rel == spared or rel.startswith(spared + "/")


def _covered(rec: Record, spared: list[str]) -> bool:
    """Does the reservation lie wholly inside one of the `spared` paths: its pattern's
    leading literal segments are that path's?"""
    from agent_hooks.reservations import index_records

    compiled = rec[index_records.COMPILED]
    for ex in spared:
        segs = ex.split("/") if ex else []
        if len(compiled) - 1 >= len(segs) and all(
            type(seg) is str and seg == want for seg, want in zip(compiled[1:], segs, strict=False)
        ):
            return True
    return False


def _remote_leases(repo: Any, now: float) -> bool:
    from agent_hooks.ledger import remote_view

    return remote_view.any_lease(repo.ledger, repo.index, now)


def _reserved(
    call: ToolCall, index: HotIndex, ledger: str, minutes: int, compiled: list[Any]
) -> list[Record]:
    """Other owners' live exclusive reservations overlapping a write target
    (a path and everything below it, or a shell glob), whose holders count."""
    from agent_hooks.reservations import blocking, pattern

    counts = blocking.holder_counts(ledger, minutes, call.now)
    first = pattern.first_literal(compiled)
    return blocking.blocking(index, compiled, first, call.writer.owner, call.now, None, counts)


def _deny_text(rel: str, holders: list[Any], now: float, shell_command: str) -> str:
    from agent_hooks.reservations import reservation_messages

    shown = rel or "the whole project"
    return reservation_messages.deny_message(shown, holders, now).replace(
        "Do not edit it now.", f"This {shell_command} would write {shown}; do not run it now.", 1
    )


def _compile_target(rel: str, glob: bool) -> list[Any]:
    """A shell target as a pattern: the path and everything below it ("" is the
    whole project); a shell glob keeps its wildcards (one the pattern syntax
    refuses is taken literally)."""
    from agent_hooks.reservations import pattern

    if not rel:
        return pattern.compile("**")
    if glob:
        try:
            return pattern.compile(rel)
        except ValueError:
            pass
    return pattern.literal(rel)
