"""Git plumbing for the remote ledger (docs/adr/0016-ledger-beyond-one-machine.md):
fetch `refs/agent-hooks/v2/ledger` from a remote, read its tree, make a new
parentless commit from a set of files, and push it with a lease.

Never on the hook hot path: every call spawns git.

Invariants:

* Git runs in a private bare repository inside the ledger,
  `<git-common-dir>/agent-hooks/remote.git`, whose config includes the user's
  repository config (so remote names, URLs, `insteadOf`, credential helpers,
  proxies and `core.sshCommand` are the user's) and then overrides what must not
  apply to ledger commits (hooks, signing, automatic gc). The user's object store,
  refs, reflogs and `FETCH_HEAD` are never touched: a sync every 15 s would
  otherwise leave thousands of unreachable loose objects in their repository a day.
* Every git process is non-interactive: `GIT_TERMINAL_PROMPT=0`, ssh in
  `BatchMode`, stdin closed, messages in English, and a timeout after which the
  whole process group is killed. Credentials are whatever git uses without asking.
* Repository-locating variables (`GIT_DIR`, `GIT_OBJECT_DIRECTORY`, ...) of the
  caller's environment never reach git: a hook run from inside a git hook must
  not send ledger objects into the user's repository.
* A fetch writes only a ref of its own (`refs/agent-hooks/tmp/<pid>-<random>/`,
  deleted before it returns), so two processes fetching at once never contend.
* A push either moves the ref from exactly the expected id (absent: `None`) to
  the new one, or raises: `LostRace` when the ref had moved (read again and
  retry), `Unreachable` when the remote could not be reached, refused the
  credentials, or refused the ref for another reason. Each message is one line
  naming what failed; a URL's user and password never appear in it.
* Reading a commit never trusts it, and never loses what it could not read: a
  ref that names no commit, a tree that cannot be listed or holds more than
  `MAX_ENTRIES` entries, or objects missing from what was fetched make the
  snapshot `broken` (nothing in it may be written over); a file that is not a
  regular blob, is larger than `MAX_BLOB`, or lies beyond the first `MAX_FILES`
  is `unread` (with why). Every entry of the tree, read or not, is in `entries`,
  so a new commit made from them carries each one over unchanged (`commit`).
* The first layout (format 1, `FORMAT1_REF`) is never read nor written: a
  machine still on it never sees this layout, so it never overwrites it.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
from collections.abc import Mapping

from agent_hooks import storage

REF = "refs/agent-hooks/v2/ledger"
FORMAT1_REF = "refs/agent-hooks/ledger"  # the first layout's ref: left to machines still on it
TMP_REFS = "refs/agent-hooks/tmp"
PRIVATE_REPO = "remote.git"
TIMEOUT = 30.0
MAX_FILES = 1000  # files read from one ledger commit
MAX_ENTRIES = 10 * MAX_FILES  # entries listed; more: the commit is not read at all
MAX_BLOB = 1 << 20  # bytes of one file read; what is written is held to it too
FILE_MODES = ("100644", "100755")
PRUNE_EVERY = 3600.0
PRUNE_STAMP = "agent-hooks-pruned"
_LOCATING = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_QUARANTINE_PATH",
    "GIT_PREFIX",
    "GIT_REFLOG_ACTION",
)
_GENERIC = (
    "fatal: could not read from remote repository.",
    "please make sure you have the correct access rights",
    "and the repository exists.",
    "error: failed to push some refs",
)
_RACE_WORDS = (
    "stale info",
    "cannot lock ref",
    "failed to lock",
    "failed to update ref",
    "incorrect old value",
    "but expected",
    "fetch first",
    "non-fast-forward",
)
_URL_USER = re.compile(r"(?<=://)[^/@\s]+@")


class GitFailure(Exception):
    """A git operation on the remote ledger failed; `str()` is one line."""


class Unreachable(GitFailure):
    """The remote could not be reached, refused our credentials, or refused the ref."""


class Refused(Unreachable):
    """The remote answered and refused to update the ledger's ref (a protected-ref
    rule, a hook): retrying changes nothing."""


class LostRace(GitFailure):
    """The remote ref moved since it was read: read it again and retry."""


class Snapshot:
    """One version of the remote ledger as fetched: `commit` (None: the ref does
    not exist); every entry of its tree (`entries`: path -> (mode, object id)),
    the files read (`files`: content), the entries not read and why (`unread`,
    one line each), what else was odd (`problems`), and `broken`: why the
    commit itself could not be read (then nothing in it is known)."""

    __slots__ = ("broken", "commit", "entries", "files", "problems", "trees", "unread")

    def __init__(self, commit: str | None) -> None:
        self.commit = commit
        self.entries: dict[str, tuple[str, str]] = {}
        self.trees: dict[str, str] = {}  # folder -> tree id: what a commit left alone reuses
        self.files: dict[str, bytes] = {}
        self.unread: dict[str, str] = {}
        self.problems: list[str] = []
        self.broken: str | None = None


def one_line(text: str, limit: int = 300) -> str:
    """A message from git as one printable line, credentials in URLs removed."""
    clean = _URL_USER.sub("", " ".join(text.split()))
    clean = "".join(c if c.isprintable() else "?" for c in clean)
    return clean if len(clean) <= limit else clean[: limit - 1] + "…"


def reason_of(stderr: bytes, fallback: str) -> str:
    """The line of git's stderr that says why it failed (not the generic advice)."""
    lines = [line.strip() for line in stderr.decode("utf-8", "replace").splitlines()]
    useful = [line for line in lines if line and not line.lower().startswith(_GENERIC)]
    fatal = [line for line in useful if line.lower().startswith(("fatal:", "error:"))]
    chosen = (fatal or useful or [fallback])[0]
    return one_line(chosen)


def environment(base: Mapping[str, str], ssh_command: str | None = None) -> dict[str, str]:
    """`base` made safe for a background git: no prompt, ssh in batch mode, English."""
    env = {k: v for k, v in base.items() if k not in _LOCATING}
    env.update(
        GIT_TERMINAL_PROMPT="0",
        GCM_INTERACTIVE="never",
        SSH_ASKPASS_REQUIRE="never",
        LC_ALL="C",
        LANGUAGE="C",
    )
    if "GIT_SSH_COMMAND" in env:
        env["GIT_SSH_COMMAND"] = _batch(env["GIT_SSH_COMMAND"])
    elif "GIT_SSH" not in env:
        env["GIT_SSH_COMMAND"] = _batch(ssh_command or "ssh")
    return env


def _batch(command: str) -> str:
    """An ssh command line that never asks: BatchMode and a connect timeout (only
    for OpenSSH's `ssh`, whose options these are)."""
    words = command.split()
    if not words or os.path.basename(words[0]) != "ssh" or "BatchMode" in command:
        return command
    return f"{command} -o BatchMode=yes -o ConnectTimeout=10"


def _quoted(value: str) -> str:
    if any(c in value for c in "\n\r\x00"):
        raise GitFailure(f"the path {value!r} cannot be written into a git config file")
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


class Completed:
    __slots__ = ("err", "out", "returncode")

    def __init__(self, returncode: int, out: bytes, err: bytes) -> None:
        self.returncode = returncode
        self.out = out
        self.err = err


class Git:
    """Git for one repository's remote ledger.

    `common_dir` is the repository's common git directory (its config names the
    remotes); `ledger_dir` its ledger, which holds the private repository.
    """

    def __init__(
        self,
        common_dir: str,
        ledger_dir: str,
        environ: Mapping[str, str] | None = None,
        *,
        timeout: float = TIMEOUT,
    ) -> None:
        self.common_dir = common_dir
        self.ledger_dir = ledger_dir
        self.git_dir = os.path.join(ledger_dir, PRIVATE_REPO)
        self.timeout = timeout
        self._base = dict(os.environ if environ is None else environ)
        self._env: dict[str, str] | None = None

    # --- running git -----------------------------------------------------------

    def env(self) -> dict[str, str]:
        if self._env is None:
            ssh = None
            if "GIT_SSH_COMMAND" not in self._base and "GIT_SSH" not in self._base:
                found = self._spawn(
                    ["git", f"--git-dir={self.common_dir}", "config", "--get", "core.sshCommand"],
                    environment(self._base, "ssh"),
                )
                ssh = found.out.decode("utf-8", "replace").strip() or None
            self._env = environment(self._base, ssh)
            self._env.update(
                GIT_AUTHOR_NAME="agent-hooks",
                GIT_AUTHOR_EMAIL="agent-hooks@localhost",
                GIT_COMMITTER_NAME="agent-hooks",
                GIT_COMMITTER_EMAIL="agent-hooks@localhost",
            )
        return self._env

    def _spawn(
        self,
        argv: list[str],
        env: Mapping[str, str],
        data: bytes | None = None,
        timeout: float | None = None,
    ) -> Completed:
        limit = self.timeout if timeout is None else timeout
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE if data is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=dict(env),
                cwd=self.ledger_dir if os.path.isdir(self.ledger_dir) else "/",
                start_new_session=True,
            )
        except OSError as exc:
            raise GitFailure(f"cannot run git: {exc.strerror or exc}") from None
        try:
            out, err = proc.communicate(data, timeout=limit)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
            proc.communicate()
            raise Unreachable(
                f"git {argv[2] if len(argv) > 2 else ''} timed out after {limit:g} s"
            ) from None
        return Completed(proc.returncode, out, err)

    def run(
        self,
        *args: str,
        data: bytes | None = None,
        check: bool = True,
        timeout: float | None = None,
    ) -> Completed:
        """`git --git-dir=<private repo> ARGS`; raises GitFailure on a non-zero exit
        when `check`."""
        done = self._spawn(["git", f"--git-dir={self.git_dir}", *args], self.env(), data, timeout)
        if check and done.returncode != 0:
            raise GitFailure(f"git {args[0]}: {reason_of(done.err, f'exit {done.returncode}')}")
        return done

    # --- the private repository ------------------------------------------------

    def remote_url(self, remote: str) -> str | None:
        """The URL the user's repository fetches `remote` from, or None when it has
        no such remote."""
        done = self._spawn(
            ["git", f"--git-dir={self.common_dir}", "remote", "get-url", "--", remote],
            self.env(),
        )
        if done.returncode != 0:
            return None
        return one_line(done.out.decode("utf-8", "replace").strip()) or None

    def config_text(self, object_format: str) -> str:
        version = "1" if object_format != "sha1" else "0"
        extensions = f"[extensions]\n\tobjectformat = {object_format}\n" if version == "1" else ""
        return (
            "# agent-hooks: the remote ledger's private repository (ADR-0016).\n"
            f"[core]\n\trepositoryformatversion = {version}\n\tbare = true\n{extensions}"
            f"[include]\n\tpath = {_quoted(os.path.join(self.common_dir, 'config'))}\n"
            "[core]\n\tbare = true\n\thooksPath = /dev/null\n\tfsmonitor = false\n"
            "\tlogAllRefUpdates = false\n"
            "[gc]\n\tauto = 0\n[maintenance]\n\tauto = false\n"
            "[commit]\n\tgpgSign = false\n[push]\n\tgpgSign = false\n\trecurseSubmodules = no\n"
            "[fetch]\n\trecurseSubmodules = false\n\twriteCommitGraph = false\n"
            "[submodule]\n\trecurse = false\n"
        )

    def ensure(self) -> None:
        """Create the private repository unless it exists; rewrite its config when
        the repository it includes moved. Safe when several processes race: the
        repository is made aside and renamed into place."""
        config = os.path.join(self.git_dir, "config")
        try:
            with open(config, encoding="utf-8", errors="replace") as handle:
                current = handle.read()
        except FileNotFoundError:
            current = None
        if current is not None:
            wanted = f"path = {_quoted(os.path.join(self.common_dir, 'config'))}"
            if wanted not in current:
                fmt = "sha256" if "objectformat = sha256" in current else "sha1"
                storage.write_bytes_atomic(config, self.config_text(fmt).encode(), durable=False)
            return
        storage.ensure_dir(self.ledger_dir)
        found = self._spawn(
            ["git", f"--git-dir={self.common_dir}", "rev-parse", "--show-object-format"],
            self.env(),
        )
        fmt = found.out.decode().strip() if found.returncode == 0 else "sha1"
        fmt = fmt if fmt in ("sha1", "sha256") else "sha1"
        aside = os.path.join(
            self.ledger_dir, f".{PRIVATE_REPO}.{os.getpid()}.{os.urandom(4).hex()}"
        )
        done = self._spawn(
            ["git", "init", "--quiet", "--bare", f"--object-format={fmt}", aside], self.env()
        )
        if done.returncode != 0:
            raise GitFailure(f"git init: {reason_of(done.err, 'failed')}")
        try:
            storage.write_bytes_atomic(
                os.path.join(aside, "config"), self.config_text(fmt).encode(), durable=False
            )
            os.rename(aside, self.git_dir)
        except OSError:
            if not os.path.isdir(self.git_dir):
                raise
        finally:
            _remove_tree(aside)

    # --- reading -----------------------------------------------------------------

    def fetch(self, remote: str) -> Snapshot:
        """The remote's ledger now. Raises Unreachable when it cannot be fetched."""
        self.ensure()
        tmp = f"{TMP_REFS}/{os.getpid()}-{os.urandom(4).hex()}"
        done = self.run(
            "fetch",
            "--quiet",
            "--no-tags",
            "--no-write-fetch-head",
            "--no-auto-maintenance",
            "--no-recurse-submodules",
            "--no-filter",
            "--",
            remote,
            f"+{REF}*:{tmp}/ledger*",
            check=False,
        )
        if done.returncode != 0:
            raise Unreachable(
                f"cannot fetch the ledger from {remote}: {reason_of(done.err, 'git fetch failed')}"
            )
        listed = self.run(
            "for-each-ref", "--format=%(refname) %(objectname) %(objecttype)", f"{tmp}/"
        )
        refs = [line.split(" ") for line in listed.out.decode().splitlines() if line]
        self._delete_refs([ref[0] for ref in refs])
        found = next((ref for ref in refs if ref[0] == f"{tmp}/ledger"), None)
        if found is None:
            return Snapshot(None)
        commit, kind = found[1], found[2]
        if kind != "commit":
            snapshot = Snapshot(commit)
            snapshot.broken = f"{REF} on {remote} names a {kind}, not a commit"
            return snapshot
        return self.read(commit)

    def _delete_refs(self, refs: list[str]) -> None:
        if refs:
            self.run("update-ref", "--stdin", data="".join(f"delete {r}\n" for r in refs).encode())

    def read(self, commit: str) -> Snapshot:
        """The files of ledger commit `commit` (see the module's invariants)."""
        snapshot = Snapshot(commit)
        listed = self.run("ls-tree", "-r", "-t", "-z", "-l", "--full-tree", commit, check=False)
        if listed.returncode != 0:
            snapshot.broken = (
                f"the ledger commit {commit[:12]} cannot be read: "
                f"{reason_of(listed.err, 'ls-tree failed')}"
            )
            return snapshot
        wanted: list[tuple[str, str]] = []
        for record in listed.out.split(b"\0"):
            if not record:
                continue
            meta, _, raw_path = record.partition(b"\t")
            path = raw_path.decode("utf-8", "surrogateescape")
            fields = meta.decode("ascii", "replace").split()
            if len(fields) != 4 or "\0" in path:
                snapshot.broken = f"the ledger commit {commit[:12]} lists an entry git cannot name"
                return snapshot
            mode, kind, oid, size_text = fields
            if kind == "tree":
                snapshot.trees[path] = oid
                continue
            if len(snapshot.entries) >= MAX_ENTRIES:
                snapshot.broken = (
                    f"the ledger commit {commit[:12]} holds more than {MAX_ENTRIES} entries"
                )
                return snapshot
            snapshot.entries[path] = (mode, oid)
            shown = one_line(path, 120)
            if kind != "blob" or mode not in FILE_MODES:
                snapshot.unread[path] = f"{shown} is not a file ({kind} {mode})"
            elif not size_text.isdigit() or int(size_text) > MAX_BLOB:
                snapshot.unread[path] = (
                    f"{shown} is {size_text} bytes, over the {MAX_BLOB}-byte limit"
                )
            elif len(wanted) >= MAX_FILES:
                snapshot.unread[path] = f"{shown} lies beyond the first {MAX_FILES} files"
            else:
                wanted.append((path, oid))
        if not wanted:
            return snapshot
        batch = self.run(
            "cat-file", "--batch", data="".join(f"{oid}\n" for _, oid in wanted).encode()
        )
        out, at = batch.out, 0
        for path, _ in wanted:
            end = out.find(b"\n", at)
            header = out[at:end].split()
            if end < 0 or len(header) != 3 or header[1] != b"blob" or not header[2].isdigit():
                snapshot.broken = (
                    f"the ledger commit {commit[:12]}: {one_line(path, 120)} is missing "
                    "from the fetched objects"
                )
                return snapshot
            size = int(header[2])
            snapshot.files[path] = out[end + 1 : end + 1 + size]
            at = end + 1 + size + 1
        return snapshot

    # --- writing -----------------------------------------------------------------

    def blob(self, data: bytes) -> str:
        """Store `data` as a blob in the private repository; its id."""
        return self.run("hash-object", "-w", "--stdin", data=data).out.decode().strip()

    def commit(
        self,
        tree: Mapping[str, str | tuple[str, str]],
        now: float,
        message: str,
        base: Snapshot | None = None,
    ) -> str:
        """A parentless commit whose tree holds `tree` (path -> blob id, or
        (mode, object id) for an entry carried over as it was). A folder that
        holds exactly what it held in `base` is that folder's tree again (one
        `mktree` fewer for each)."""
        made = self._tree(
            {p: e if isinstance(e, tuple) else ("100644", e) for p, e in tree.items()}, "", base
        )
        date = f"@{int(now)} +0000"
        env = {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
        done = self._spawn(
            ["git", f"--git-dir={self.git_dir}", "commit-tree", made, "-m", message],
            {**self.env(), **env},
        )
        if done.returncode != 0:
            raise GitFailure(f"git commit-tree: {reason_of(done.err, 'failed')}")
        return done.out.decode().strip()

    def _tree(
        self, entries: Mapping[str, tuple[str, str]], prefix: str, base: Snapshot | None
    ) -> str:
        files: dict[str, tuple[str, str]] = {}
        folders: dict[str, dict[str, tuple[str, str]]] = {}
        for path, entry in entries.items():
            head, slash, rest = path.partition("/")
            if not head or "\0" in path or (slash and not rest):
                raise GitFailure(f"cannot store a ledger file named {path!r}")
            if slash:
                folders.setdefault(head, {})[rest] = entry
            else:
                files[head] = entry
        lines = []
        for name, (mode, oid) in sorted(files.items()):
            kind = "commit" if mode == "160000" else "blob"
            lines.append(f"{mode} {kind} {oid}\t{name}\0".encode("utf-8", "surrogateescape"))
        for name, inner in sorted(folders.items()):
            folder = prefix + name
            made = base.trees.get(folder) if base is not None else None
            if made is None or inner != _inside(base, folder):
                made = self._tree(inner, folder + "/", base)
            lines.append(f"040000 tree {made}\t{name}\0".encode("utf-8", "surrogateescape"))
        done = self.run("mktree", "-z", "--missing", data=b"".join(lines))
        return done.out.decode().strip()

    def push(self, remote: str, new: str, expected: str | None) -> None:
        """Move the remote's ref from `expected` (None: absent) to `new`, or raise
        LostRace / Unreachable."""
        done = self.run(
            "push",
            "--porcelain",
            "--no-verify",
            "--no-recurse-submodules",
            f"--force-with-lease={REF}:{expected or ''}",
            "--",
            remote,
            f"{new}:{REF}",
            check=False,
        )
        if done.returncode == 0:
            return
        rejected = [
            line.split("\t")
            for line in done.out.decode("utf-8", "replace").splitlines()
            if line.startswith("!")
        ]
        if not rejected:
            raise Unreachable(
                f"cannot push the ledger to {remote}: {reason_of(done.err, 'git push failed')}"
            )
        summary = rejected[0][2] if len(rejected[0]) > 2 else "rejected"
        if any(word in summary.lower() for word in _RACE_WORDS):
            raise LostRace(f"the ledger on {remote} moved meanwhile ({one_line(summary)})")
        raise Refused(f"{remote} refused the ledger ref {REF}: {one_line(summary)}")

    # --- upkeep ------------------------------------------------------------------

    def prune(self, now: float, *, force: bool = False) -> bool:
        """At most once per `PRUNE_EVERY`: remove ledger objects unreachable for an
        hour (every sync leaves a few) and fetch refs left by killed processes."""
        stamp = os.path.join(self.git_dir, PRUNE_STAMP)
        try:
            if not force and os.stat(stamp).st_mtime + PRUNE_EVERY > now:
                return False
        except FileNotFoundError:
            pass
        listed = self.run("for-each-ref", "--format=%(refname)", f"{TMP_REFS}/", check=False)
        stale = []
        for ref in listed.out.decode().splitlines():
            pid = ref[len(TMP_REFS) + 1 :].partition("-")[0]
            if not pid.isdigit() or not _running(int(pid)):
                stale.append(ref)
        self._delete_refs(stale)
        self.run("prune", "--expire=1.hour.ago", check=False)
        with open(stamp, "w"):
            pass
        os.utime(stamp, (now, now))
        return True


def _inside(snapshot: Snapshot | None, folder: str) -> dict[str, tuple[str, str]]:
    """The entries of `snapshot` under `folder`, by their path inside it."""
    lead = folder + "/"
    found = snapshot.entries if snapshot is not None else {}
    return {p[len(lead) :]: e for p, e in found.items() if p.startswith(lead)}


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _remove_tree(path: str) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)
