"""A repository as the rules see it: one of its work trees, the ledger its
reservations and leases live in, and the settings that decide how they hold.

A `Repo` is worked out once per tool call (`Repos`: a hook is one process per
tool call, so once per process too) and passed down: the gate, the shell
aftermath, PostToolUse, the git guard's commit check and the CLI's
`reservations` and `check` ask it, never the files behind it.

* `root`: the work tree, as this process reaches it; `worktree`: which work tree
  of the repository it is (`repository.worktree_id`, as leases record it);
  `ledger`: the repository's ledger directory (`ledger_location`); `branch`;
  `git_dir` and `common_dir`. The git layout behind them is read once
  (`repository.layout`).
* `index`: the repository's reservations (`reservation_index.load_hot`; None when
  it has no reservations file), read on first use; `minutes` (the lease minutes:
  `lease_minutes.effective`; 0 = leases off), `strict` (`switches.strict`),
  `deny_elsewhere` (the `worktree_leases deny` setting: a lease in another
  worktree refuses like one here) and `shared` (the ledger is shared with other
  machines through a git remote: docs/adr/0016) follow from it and the
  environment. A PostToolUse that only notes its own writes never reads it.

Invariants: a `Repo` reads the disk, never writes it. `ledger`, `worktree` and
`branch` may be given instead of read (a test, a tool that knows them).
Built-ins only: every hook that touches the ledger makes one.
"""

from __future__ import annotations

from agent_hooks import posix_fs as fs
from agent_hooks import repository
from agent_hooks.ledger import ledger_location

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Callable, Mapping

    from agent_hooks.reservations.index_records import HotIndex


# What asking a repository's rules loads (`index`, `minutes`), each after what it
# imports: preloaded (agent_hooks.preload) by the paths about to ask.
RULES_MODULES = (
    "agent_hooks.leases.lease_minutes",
    "agent_hooks.reservations.index_records",
    "agent_hooks.reservations.reservation_index",
)


class Repo:
    """One repository (one of its work trees) as the rules see it; see the module."""

    __slots__ = (
        "_branch",
        "_index",
        "_indexed",
        "_minutes",
        "common_dir",
        "environ",
        "git_dir",
        "ledger",
        "root",
        "state_dir",
        "worktree",
    )

    def __init__(
        self,
        root: str,
        state_dir: str,
        environ: Mapping[str, str] | None = None,
        *,
        ledger: str | None = None,
        worktree: str | None = None,
        branch: str | None = None,
    ) -> None:
        self.root = root  # the work tree, as this process reaches it
        self.state_dir = state_dir
        self.environ = environ  # None: this process's
        # its git layout, read once: its own and the common git dir (None outside git,
        # and when the ledger and the worktree are given)
        self.git_dir: str | None = None
        self.common_dir: str | None = None
        if ledger is None or worktree is None:
            self.git_dir, self.common_dir, read = repository.layout(root)
            if ledger is None:
                ledger = ledger_location.in_common(state_dir, root, self.common_dir)
            worktree = read if worktree is None else worktree
        self.ledger = ledger
        self.worktree = worktree
        self._branch = branch
        self._index: HotIndex | None = None
        self._indexed = False
        self._minutes: int | None = None

    @property
    def branch(self) -> str | None:
        """The work tree's checked-out branch (`repository.branch`), or None; read
        when first asked (only a claim records it)."""
        if self._branch is None and self.git_dir is not None:
            self._branch = repository.branch_in(self.git_dir)
        return self._branch

    @property
    def index(self) -> HotIndex | None:
        """The repository's reservations, read once (None: no reservations file)."""
        if not self._indexed:
            from agent_hooks.reservations import reservation_index

            self._index = reservation_index.load_hot(self.ledger)
            self._indexed = True
        return self._index

    def changed(self) -> None:
        """Its reservations file was written (by this process): read it again when next
        asked, and what follows from it."""
        self._indexed = False
        self._minutes = None

    @property
    def settings(self) -> Mapping[str, object] | None:
        index = self.index
        return index.settings if index is not None else None

    @property
    def minutes(self) -> int:
        """How long a lease lasts without a write, in minutes; 0: leases are off."""
        if self._minutes is None:
            from agent_hooks.leases import lease_minutes

            self._minutes = lease_minutes.effective(self._environ(), self.settings)
        return self._minutes

    @property
    def strict(self) -> bool:
        """Strict mode: an edit needs a reservation of one's own."""
        from agent_hooks import switches

        index = self.index
        return switches.strict(self._environ(), index is not None and index.strict)

    @property
    def deny_elsewhere(self) -> bool:
        """`worktree_leases deny`: a lease in another worktree refuses like one here."""
        index = self.index
        return index is not None and index.deny_elsewhere

    @property
    def shared(self) -> bool:
        """Is the ledger shared with other machines (its `remote` setting)?"""
        index = self.index
        return index is not None and index.shared

    def _environ(self) -> Mapping[str, str]:
        return fs.environ() if self.environ is None else self.environ


class Repos:
    """The repositories one tool call meets, each worked out once: a `Repo` per
    work tree, and the work tree each directory lies in (a walk up the path).
    `met`, when given, is called with each repository when first met, before
    anything reads its index (the gate adopts an earlier release's ledger there)."""

    __slots__ = ("_repos", "_tops", "environ", "met", "state_dir")

    def __init__(
        self,
        state_dir: str,
        environ: Mapping[str, str] | None,
        met: Callable[[Repo], object] | None = None,
    ) -> None:
        self.state_dir = state_dir
        self.environ = environ
        self.met = met
        self._repos: dict[str, Repo] = {}
        self._tops: dict[str, str | None] = {}

    def repo(self, root: str) -> Repo:
        """The repository of the work tree `root`."""
        found = self._repos.get(root)
        if found is None:
            found = self._repos[root] = Repo(root, self.state_dir, self.environ)
            if self.met is not None:
                self.met(found)
        return found

    def top(self, directory: str) -> str | None:
        """The work tree `directory` (resolved) lies in (`repository.git_top_level`)."""
        if directory not in self._tops:
            self._tops[directory] = repository.git_top_level(directory, resolved=True)
        return self._tops[directory]

    def of_file(self, path: str) -> Repo | None:
        """The repository of the work tree the file `path` (absolute) lies in."""
        top = self.top(fs.dirname(path))
        return None if top is None else self.repo(top)
