"""gate.git_index: which tracked files under an area hold uncommitted work, read from
git's index without running git — against real repositories made by git 2.39, each
answer checked against what `git status` says of the same tree where it can be."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_hooks.gate import git_index, shell_gate
from agent_hooks.reservations import pattern
from git_repo import git, init


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    top = init(tmp_path / "proj")
    for rel in ("src/app.py", "src/lib/util.py", "docs/guide.md", "src.c", "src-x/y.py"):
        (top / rel).parent.mkdir(parents=True, exist_ok=True)
        (top / rel).write_text("committed\n")
    git(top, "add", ".")
    git(top, "commit", "-q", "-m", "files")
    return Path(os.path.realpath(top))


def area(text: str) -> git_index.Area:
    """A reservation pattern as an area of the work tree (as the gate makes one)."""
    return shell_gate._area("", pattern.compile(text))


def look(repo: Path, *patterns: str) -> list[tuple[list[str], str | None, str | None]]:
    """(changed, staged, unsure) of each pattern's area."""
    found = git_index.changes(str(repo / ".git"), str(repo / ".git"), str(repo),
                              [area(p) for p in patterns])  # fmt: skip
    return [(f.changed, f.staged, f.unsure) for f in found]


CLEAN = ([], None, None)


def status(repo: Path) -> list[str]:
    """What git itself says is modified or staged (the paths)."""
    return git(repo, "diff", "--name-only", "HEAD").splitlines()


def test_a_clean_tree_holds_nothing(repo: Path) -> None:
    assert look(repo, "src/**", "docs/**", "**/*.py", "src/app.py") == [CLEAN] * 4
    assert git_index.changes(str(repo / ".git"), None, str(repo), []) == []


def test_an_edited_file_is_found_in_each_area_holding_it_and_no_other(repo: Path) -> None:
    (repo / "src/lib/util.py").write_text("edited\n")
    assert status(repo) == ["src/lib/util.py"]
    assert look(repo, "src/**", "src/lib/", "**/*.py", "docs/**", "src/app.py") == [
        (["src/lib/util.py"], None, None),
        (["src/lib/util.py"], None, None),
        (["src/lib/util.py"], None, None),
        CLEAN,
        CLEAN,
    ]


def test_names_beside_an_area_are_not_in_it(repo: Path) -> None:
    """`src.c` and `src-x/` sort among `src/`'s neighbours; the area is `src/` only."""
    for rel in ("src.c", "src-x/y.py"):
        (repo / rel).write_text("edited\n")
    assert look(repo, "src/**", "src") == [CLEAN, CLEAN]
    assert look(repo, "src.c", "src-x/**") == [
        (["src.c"], None, None),
        (["src-x/y.py"], None, None),
    ]


def test_a_file_area_holds_that_file_only(repo: Path) -> None:
    (repo / "src/app.py").write_text("edited\n")
    (repo / "src/lib/util.py").write_text("edited\n")
    assert look(repo, "src/app.py", "src/lib/util.py", "src/lib") == [
        (["src/app.py"], None, None),
        (["src/lib/util.py"], None, None),
        (["src/lib/util.py"], None, None),
    ]


def test_a_touched_file_is_not_modified_but_its_mode_or_absence_is(repo: Path) -> None:
    os.utime(repo / "src/app.py", (1, 1))  # stat data moved, content the same
    assert status(repo) == [] and look(repo, "src/**") == [CLEAN]
    os.chmod(repo / "src/app.py", 0o755)
    assert look(repo, "src/**") == [(["src/app.py"], None, None)]
    os.chmod(repo / "src/app.py", 0o644)
    (repo / "src/lib/util.py").unlink()
    assert look(repo, "src/**") == [(["src/lib/util.py"], None, None)]
    (repo / "src/lib/util.py").mkdir()
    assert look(repo, "src/**") == [(["src/lib/util.py"], None, None)]


def test_the_same_size_written_again_is_found_by_its_content(repo: Path) -> None:
    before = os.stat(repo / "src/app.py")
    (repo / "src/app.py").write_text("COMMITTED\n")  # the same size
    os.utime(repo / "src/app.py", ns=(before.st_atime_ns, before.st_mtime_ns))
    assert status(repo) == ["src/app.py"]
    assert look(repo, "src/**") == [(["src/app.py"], None, None)]


def test_a_symlink_is_compared_by_its_target(repo: Path) -> None:
    os.symlink("app.py", repo / "src/link")
    git(repo, "add", "src/link")
    git(repo, "commit", "-q", "-m", "link")
    assert look(repo, "src/**") == [CLEAN]
    (repo / "src/link").unlink()
    os.symlink("app.py", repo / "src/link")  # the same target: a new inode and ctime
    assert look(repo, "src/**") == [CLEAN]
    (repo / "src/link").unlink()
    os.symlink("lib/util.py", repo / "src/link")
    assert look(repo, "src/**") == [(["src/link"], None, None)]
    (repo / "src/link").unlink()
    (repo / "src/link").write_text("app.py")  # a file holding what the link held
    assert look(repo, "src/**") == [(["src/link"], None, None)]


def test_staged_work_is_the_directory_git_invalidated_until_committed(repo: Path) -> None:
    (repo / "src/lib/util.py").write_text("edited\n")
    git(repo, "add", "src/lib/util.py")  # the work tree is the index: only the index differs
    assert look(repo, "src/lib/**", "src/**", "src/app.py", "docs/**", "**/*.md") == [
        ([], "src/lib", None),
        ([], "src", None),
        ([], "src", None),  # its directory's tree, as a whole
        CLEAN,
        ([], "", None),  # no leading directory: the top's tree, invalidated with it
    ]
    git(repo, "commit", "-q", "-m", "util")
    assert look(repo, "src/lib/**", "**/*.md") == [CLEAN, CLEAN]


def test_a_new_directory_staged_is_staged_work_of_the_trees_above_it(repo: Path) -> None:
    (repo / "new").mkdir()
    (repo / "new/x.py").write_text("new\n")
    git(repo, "add", "new/x.py")
    assert look(repo, "new/**", "new/deep/**", "src/**") == [([], "", None), ([], "", None), CLEAN]


def test_a_directory_git_has_no_tree_of_holds_nothing_while_the_tree_above_is_valid(
    repo: Path,
) -> None:
    (repo / "empty").mkdir()
    assert look(repo, "empty/**", "src/lib/deeper/**") == [CLEAN, CLEAN]


def test_racily_clean_entries_are_compared_by_content(repo: Path) -> None:
    """An entry whose stat data matches, written in the instant the index was or
    after it: git compares the content; so does this."""
    (repo / "src/app.py").write_text("EDITED!!!\n")  # the same size as "committed\n"
    index = repo / ".git/index"
    data = bytearray(index.read_bytes())
    at = entry_offset(bytes(data), b"src/app.py")
    st = os.lstat(repo / "src/app.py")
    data[at : at + 16] = stamp(st.st_ctime_ns) + stamp(st.st_mtime_ns)
    data[at + 20 : at + 24] = (st.st_ino & 0xFFFFFFFF).to_bytes(4, "big")
    index.write_bytes(bytes(data))  # the old content's id beside the new stat data
    os.utime(index, ns=(st.st_mtime_ns, st.st_mtime_ns))  # racy: not older than the file
    assert look(repo, "src/**") == [(["src/app.py"], None, None)]
    later = st.st_mtime_ns + 10**9
    os.utime(index, ns=(later, later))  # older than the index: trusted, as git trusts it
    assert look(repo, "src/**") == [CLEAN]


def test_a_conflict_is_modified_once(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    git(repo, "checkout", "-q", "-b", "theirs")
    (repo / "src/app.py").write_text("theirs\n")
    git(repo, "commit", "-q", "-am", "theirs")
    git(repo, "checkout", "-q", "main")
    (repo / "src/app.py").write_text("ours\n")
    git(repo, "commit", "-q", "-am", "ours")
    try:
        git(repo, "merge", "-q", "theirs")
    except Exception:  # the conflict
        pass
    assert look(repo, "src/**", "docs/**") == [(["src/app.py"], "src", None), CLEAN]
    monkeypatch.setattr(git_index, "MAX_READ", 0)  # a conflict is work without reading it
    assert look(repo, "src/**") == [(["src/app.py"], "src", None)]


def test_an_intent_to_add_entry_is_modified(repo: Path) -> None:
    (repo / "src/new.py").write_text("new\n")
    git(repo, "add", "-N", "src/new.py")  # an extended entry: a version 3 index
    assert repo.joinpath(".git/index").read_bytes()[4:8] == (3).to_bytes(4, "big")
    assert look(repo, "src/**")[0][0] == ["src/new.py"]


def test_a_file_not_checked_out_is_not_looked_at(repo: Path) -> None:
    git(repo, "update-index", "--skip-worktree", "src/app.py")
    git(repo, "write-tree")  # the trees cached again (marking the entry invalidated them)
    (repo / "src/app.py").unlink()
    assert look(repo, "src/**") == [CLEAN]


def test_a_submodule_entry_is_not_looked_at(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{head},src/sub")
    git(repo, "commit", "-q", "-m", "a submodule")
    assert look(repo, "src/**") == [CLEAN]  # no directory there: judged in its own index


def test_a_version_4_index_is_read_as_well(repo: Path) -> None:
    git(repo, "update-index", "--index-version", "4")
    assert repo.joinpath(".git/index").read_bytes()[4:8] == (4).to_bytes(4, "big")
    assert look(repo, "src/**", "src-x/**") == [CLEAN, CLEAN]
    (repo / "src/lib/util.py").write_text("edited\n")
    (repo / "src-x/y.py").write_text("edited\n")
    assert look(repo, "src/**", "src-x/**", "docs/**") == [
        (["src/lib/util.py"], None, None),
        (["src-x/y.py"], None, None),
        CLEAN,
    ]


def test_a_version_4_index_keeps_long_shared_beginnings(repo: Path) -> None:
    """A name that drops 128 bytes or more of the one before: a prefix count of two
    bytes (git's offset varint, each further byte adding one before the shift)."""
    deep = "d" * 150 + "/" + "e" * 150
    for rel in (f"{deep}/a.py", f"{deep}/b.py", "f.py"):
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text("committed\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "deep")
    git(repo, "update-index", "--index-version", "4")
    (repo / "f.py").write_text("edited\n")  # after a name it drops 307 bytes of
    (repo / f"{deep}/b.py").write_text("edited\n")
    assert look(repo, "f.py", "d*/**", "src/**") == [
        (["f.py"], None, None),
        ([f"{deep}/b.py"], None, None),
        CLEAN,
    ]


def test_a_name_that_is_no_utf_8_is_found(repo: Path) -> None:
    name = b"src/caf\xe9.py"
    with open(bytes(repo) + b"/" + name, "wb") as handle:
        handle.write(b"x\n")
    git(repo, "add", "src")
    git(repo, "commit", "-q", "-m", "latin-1")
    with open(bytes(repo) + b"/" + name, "wb") as handle:
        handle.write(b"edited\n")
    assert look(repo, "src/**") == [(["src/caf\udce9.py"], None, None)]


def test_no_index_is_nothing_tracked(tmp_path: Path) -> None:
    bare = tmp_path / "fresh"
    git(tmp_path, "init", "-q", str(bare))
    (bare / "src").mkdir()
    (bare / "src/app.py").write_text("x\n")
    assert look(bare, "src/**") == [CLEAN]


def test_a_sha256_repository_counts_every_moved_stat_as_modified(tmp_path: Path) -> None:
    top = tmp_path / "sha256"
    git(tmp_path, "init", "-q", "--object-format=sha256", str(top))
    (top / "src").mkdir()
    (top / "src/app.py").write_text("x\n")
    git(top, "add", ".")
    git(top, "commit", "-q", "-m", "x")
    assert look(top, "src/**") == [CLEAN]  # its entries read with 32-byte ids
    os.utime(top / "src/app.py", (1, 1))
    assert look(top, "src/**") == [(["src/app.py"], None, None)]  # no hash to tell


# ====== the bounds, and what cannot be read: unsure, never clean


def test_more_entries_than_the_bound_is_unsure(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(git_index, "MAX_ENTRIES", 5)
    assert look(repo, "docs/**") == [
        ([], None, "git's index lists 6 files, more than the 5 read here")
    ]
    monkeypatch.setattr(git_index, "MAX_ENTRIES", 6)
    assert look(repo, "docs/**") == [CLEAN]


def test_an_index_larger_than_the_bound_is_unsure(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    size = (repo / ".git/index").stat().st_size
    monkeypatch.setattr(git_index, "MAX_INDEX_BYTES", size - 1)
    assert look(repo, "docs/**")[0][2] == "git's index is larger than the 0 MiB read here"
    monkeypatch.setattr(git_index, "MAX_INDEX_BYTES", size)
    assert look(repo, "docs/**") == [CLEAN]


def test_an_area_with_more_files_than_the_bound_is_unsure_and_only_it(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(git_index, "MAX_FILES", 1)
    (repo / "docs/guide.md").write_text("edited\n")
    assert look(repo, "src/**", "docs/**", "src/app.py") == [
        ([], None, "more than 1 tracked files lie where it reaches"),
        (["docs/guide.md"], None, None),
        CLEAN,
    ]


def test_content_beyond_the_read_bound_is_unsure(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    os.utime(repo / "src/app.py", (1, 1))
    os.utime(repo / "docs/guide.md", (1, 1))
    monkeypatch.setattr(git_index, "MAX_READ", len("committed\n"))  # one file's worth
    assert look(repo, "docs/**", "src/**") == [
        CLEAN,
        ([], None, "src/app.py is too large to compare with git's index here"),
    ]


def test_more_cached_trees_than_the_bound_is_unsure(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(git_index, "MAX_TREES", 4)  # the top, src, src/lib, docs, src-x
    assert look(repo, "docs/**")[0][2] == "git's index caches more than 4 trees"
    monkeypatch.setattr(git_index, "MAX_TREES", 5)
    assert look(repo, "docs/**") == [CLEAN]


def test_an_index_without_cached_trees_is_unsure(repo: Path) -> None:
    index = repo / ".git/index"
    data = index.read_bytes()
    end = entries_end(data)
    index.write_bytes(data[:end] + bytes(20))  # the entries alone
    assert look(repo, "docs/**")[0][2] == (
        "git's index keeps no trees to compare with the last commit"
    )


def test_a_split_index_is_unsure(repo: Path) -> None:
    git(repo, "update-index", "--split-index")
    assert look(repo, "docs/**")[0][2] == ("git's index is split (core.splitIndex), not read here")


@pytest.mark.parametrize(
    ("damage", "why"),
    [
        (lambda d: b"DIRX" + d[4:], "git's index is not in a form git writes"),
        (lambda d: d[:10], "git's index is not in a form git writes"),
        (lambda d: d[:4] + (5).to_bytes(4, "big") + d[8:], "git's index is of version 5, not read here"),
        (lambda d: d[:200], "git's index ends early"),
        (lambda d: d[:8] + (99).to_bytes(4, "big") + d[12:], "git's index is damaged"),
        (lambda d: d[: entries_end(d)] + b"TREE" + (10**6).to_bytes(4, "big") + bytes(20),
         "git's index is damaged"),
        (lambda d: d[: entries_end(d)] + b"TREE" + (4).to_bytes(4, "big") + b"x\0 1" + bytes(20),
         "git's index is damaged"),
    ],
)  # fmt: skip
def test_a_damaged_index_is_unsure(repo: Path, damage: object, why: str) -> None:
    index = repo / ".git/index"
    index.write_bytes(damage(index.read_bytes()))  # type: ignore[operator]
    assert look(repo, "docs/**", "src/**") == [([], None, why)] * 2


def test_a_name_as_long_as_the_length_field_holds_is_read_to_its_end(repo: Path) -> None:
    """git writes 0xFFF for a name of 4095 bytes or more, and the name is read to its
    NUL: a name longer than the field says is not misread."""
    index = repo / ".git/index"
    data = bytearray(index.read_bytes())
    at = entry_offset(bytes(data), b"docs/guide.md")
    data[at + 60 : at + 62] = (0x0FFF).to_bytes(2, "big")  # said: 4095 or more
    index.write_bytes(bytes(data))
    assert look(repo, "docs/**")[0][2] == "git's index is damaged"  # no NUL 4095 bytes on


def test_an_index_that_is_a_symlink_or_unreadable_is_unsure(repo: Path) -> None:
    index = repo / ".git/index"
    index.rename(repo / ".git/index.real")
    index.symlink_to(repo / ".git/index.real")
    assert look(repo, "docs/**")[0][2].startswith("git's index cannot be read (")
    index.unlink()
    index.mkdir()
    assert look(repo, "docs/**")[0][2] == "git's index is not a regular file"


def test_a_file_that_cannot_be_looked_at_is_modified(repo: Path) -> None:
    """Never fewer: a file whose directory cannot be searched counts."""
    if os.geteuid() == 0:
        (repo / "src/lib").rename(repo / "src/lib.moved")  # root searches anything
        (repo / "src/lib").write_text("a file where the directory was\n")
    else:
        os.chmod(repo / "src/lib", 0)
    try:
        assert look(repo, "src/lib/**")[0][0] == ["src/lib/util.py"]
    finally:
        if (repo / "src/lib").is_dir():
            os.chmod(repo / "src/lib", 0o755)


# ====== helpers reading the index as git 2.39 writes it (version 2, SHA-1)


def stamp(ns: int) -> bytes:
    return (ns // 10**9 & 0xFFFFFFFF).to_bytes(4, "big") + (ns % 10**9).to_bytes(4, "big")


def entries(data: bytes) -> list[tuple[int, bytes]]:
    p, found = 12, []
    for _ in range(int.from_bytes(data[8:12], "big")):
        length = int.from_bytes(data[p + 60 : p + 62], "big") & 0xFFF
        found.append((p, data[p + 62 : p + 62 + length]))
        p += (62 + length + 8) & ~7
    found.append((p, b""))
    return found


def entry_offset(data: bytes, name: bytes) -> int:
    return next(p for p, found in entries(data) if found == name)


def entries_end(data: bytes) -> int:
    return entries(data)[-1][0]


# ====== sparse checkouts, index versions and damage as git and chance make them


@pytest.mark.parametrize("sparse_index", [False, True])
def test_a_sparse_checkout_is_read_for_what_it_checked_out(repo: Path, sparse_index: bool) -> None:
    """What lies outside the sparse cone is not in the work tree (a skip-worktree
    entry; with a sparse index, one entry for the whole directory): nothing there for
    a rewrite to sweep away; inside it, files are judged as in a full checkout."""
    git(repo, "sparse-checkout", "set", "--cone", *(["--sparse-index"] if sparse_index else []),
        "src")  # fmt: skip
    assert not (repo / "docs/guide.md").exists()
    modes = git(repo, "ls-files", "--sparse", "-s", "docs").split()
    assert modes[:1] == (["040000"] if sparse_index else ["100644"])
    assert look(repo, "src/**", "docs/**", "**") == [CLEAN] * 3
    (repo / "src/lib/util.py").write_text("edited\n")
    (repo / "docs").mkdir()
    (repo / "docs/guide.md").write_text("not checked out: git leaves it alone\n")
    assert look(repo, "src/**", "docs/**") == [(["src/lib/util.py"], None, None), CLEAN]


@pytest.mark.parametrize("version", [2, 3, 4])
def test_each_index_version_git_writes_finds_the_same_work(repo: Path, version: int) -> None:
    git(repo, "update-index", "--index-version", str(version))
    if version == 3:  # git writes version 3 only for an entry with extended flags
        (repo / "src-x/new.py").write_text("new\n")
        git(repo, "add", "-N", "src-x/new.py")
        git(repo, "write-tree")  # git caches no tree holding an intent: src-x stays invalid
    assert repo.joinpath(".git/index").read_bytes()[4:8] == version.to_bytes(4, "big")
    (repo / "src/lib/util.py").write_text("edited\n")
    (repo / "src-x/y.py").unlink()
    (repo / "docs/guide.md").write_text("edited\n")
    git(repo, "add", "docs/guide.md")
    new = ["src-x/new.py"] if version == 3 else []
    assert git(repo, "status", "--porcelain").splitlines() == [
        "M  docs/guide.md",
        *[" A " + rel for rel in new],
        " D src-x/y.py",
        " M src/lib/util.py",
    ]
    assert look(repo, "src/**", "src-x/**", "docs/**", "src.c") == [
        (["src/lib/util.py"], None, None),
        ([*new, "src-x/y.py"], "src-x" if new else None, None),
        ([], "docs", None),  # staged: the work tree is the index
        ([], "", None),  # a file at the top: the top's tree, which the staged file invalidated
    ]


def test_an_index_file_larger_than_the_bound_is_not_read(repo: Path) -> None:
    index = repo / ".git/index"
    with open(index, "r+b") as handle:
        handle.truncate(git_index.MAX_INDEX_BYTES + 1)  # sparse: no 8 MiB written
    assert look(repo, "docs/**")[0][2] == "git's index is larger than the 8 MiB read here"


@pytest.mark.parametrize("version", [2, 3, 4])
def test_a_damaged_index_never_raises(repo: Path, version: int) -> None:
    """Truncations and flipped bytes anywhere, of each version: an answer, never an
    exception (which would let the hook fail open)."""
    import random

    git(repo, "update-index", "--index-version", str(version))
    (repo / "src/app.py").write_text("edited\n")
    index = repo / ".git/index"
    whole = index.read_bytes()
    chance = random.Random(version)
    for _ in range(300):
        data = bytearray(whole)
        if chance.random() < 0.25:
            del data[chance.randrange(len(data)) :]
        else:
            for _ in range(chance.randrange(1, 8)):
                data[chance.randrange(len(data))] = chance.randrange(256)
        index.write_bytes(bytes(data))
        for changed, staged, unsure in look(repo, "src/**", "**/*.md", "src/app.py"):
            assert all(isinstance(rel, str) for rel in changed)
            assert staged is None or isinstance(staged, str)
            assert unsure is None or unsure.startswith("git's index")


def test_a_name_holding_a_nul_is_damage(repo: Path) -> None:
    index = repo / ".git/index"
    data = bytearray(index.read_bytes())
    at = entry_offset(bytes(data), b"docs/guide.md")
    data[at + 62 + 4] = 0  # docs\0guide.md: a name git never writes
    index.write_bytes(bytes(data))
    assert look(repo, "docs/**")[0][2] == "git's index is damaged"


def test_a_version_4_prefix_past_the_end_is_damage(repo: Path) -> None:
    git(repo, "update-index", "--index-version", "4")
    index = repo / ".git/index"
    data = index.read_bytes()
    first = 12 + 62  # the first entry's varint: what it strips of no name before
    index.write_bytes(data[:first] + b"\x80" * (len(data) - first))
    assert look(repo, "docs/**")[0][2] == "git's index is damaged"


def test_without_sha1_at_hand_a_moved_stat_is_modified(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Python built without `_sha1`: the content cannot be compared; never fewer."""
    import sys

    os.utime(repo / "src/app.py", (1, 1))
    assert look(repo, "src/**") == [CLEAN]
    monkeypatch.setitem(sys.modules, "_sha1", None)  # `import _sha1` raises ImportError
    assert look(repo, "src/**") == [(["src/app.py"], None, None)]


def test_a_file_at_a_directory_reservations_literal_path_is_not_in_it(repo: Path) -> None:
    """`docs/guide.md/**` holds what lies below docs/guide.md, not the file itself."""
    (repo / "docs/guide.md").write_text("edited\n")
    assert look(repo, "docs/guide.md/**", "docs/guide.md", "docs/**") == [
        CLEAN,
        (["docs/guide.md"], None, None),
        (["docs/guide.md"], None, None),
    ]


@pytest.mark.parametrize(
    ("rel", "text", "prefix", "below", "inside", "outside"),
    [
        ("", "src/**", "src", True, "src/a/b.py", "src.c"),
        ("", "**", "", True, "a/b.py", None),
        ("", "src/**/*.py", "src", False, "src/a/b.py", "src/a/b.md"),
        ("", "*.md", "", False, "a.md", "a/b.md"),  # anchored at the top
        ("lib/sub", "lib/sub/x/**", "x", True, "x/y.py", "y.py"),
        ("lib/sub", "lib/**", "", True, "y.py", None),  # above the work tree: all of it
        ("lib/sub", "lib/other/**", "", False, None, "y.py"),  # beside it: none of it
        ("lib/sub", "lib/*/y.py", "", False, "y.py", "z.py"),
    ],
)
def test_a_reservation_as_an_area_of_a_work_tree(
    rel: str, text: str, prefix: str, below: bool, inside: str | None, outside: str | None
) -> None:
    found = shell_gate._area(rel, pattern.compile(text))
    assert found[0] == prefix and found[2] is below
    assert inside is None or found[1](inside)
    assert outside is None or not found[1](outside)
