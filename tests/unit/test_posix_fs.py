"""posix_fs behaves like its os.path namesakes (for str paths on POSIX)."""

from __future__ import annotations

import os
import posixpath
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_hooks import posix_fs as fs

PATHS = [
    "",
    "/",
    "//",
    "///",
    "////a",
    "a",
    "a/",
    "/a",
    "//a",
    "///a",
    "a//b",
    "a/./b",
    "a/../b",
    "../a",
    "../../a/..",
    "/..",
    "/../a",
    "//../a",
    "./",
    ".",
    "..",
    "a/b/../../..",
    "/a/b/c/",
    "/a/b/./../c//d/",
    "a b/ c",
    "é/ü",
    "~",
    "~/x",
    "~bob/x",
    ".hidden/..x/...",
]

segments = st.sampled_from(["", ".", "..", "a", "b", "é", "a b", "...", "~"])
path_text = st.lists(segments, max_size=8).map("/".join) | st.text(alphabet="/.ab", max_size=12)


@pytest.mark.parametrize("path", PATHS)
def test_normpath(path: str) -> None:
    assert fs.normpath(path) == posixpath.normpath(path)


@pytest.mark.parametrize("path", PATHS)
def test_normpath_fallback_before_python_3_12(path: str) -> None:
    assert fs._normpath(path) == posixpath.normpath(path)


@pytest.mark.parametrize("path", PATHS)
def test_split_dirname_basename_isabs(path: str) -> None:
    assert fs.split(path) == posixpath.split(path)
    assert fs.dirname(path) == posixpath.dirname(path)
    assert fs.basename(path) == posixpath.basename(path)
    assert fs.isabs(path) == posixpath.isabs(path)


@settings(max_examples=200, deadline=None)
@given(path_text)
def test_normpath_agrees_on_generated_paths(path: str) -> None:
    assert fs._normpath(path) == posixpath.normpath(path)
    assert fs.normpath(path) == posixpath.normpath(path)


@settings(max_examples=200, deadline=None)
@given(path_text)
def test_split_agrees_on_generated_paths(path: str) -> None:
    assert fs.split(path) == posixpath.split(path)


@settings(max_examples=200, deadline=None)
@given(path_text, st.lists(path_text, max_size=4))
def test_join_agrees(base: str, parts: list[str]) -> None:
    assert fs.join(base, *parts) == posixpath.join(base, *parts)


@pytest.mark.parametrize("path", PATHS)
def test_abspath(path: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert fs.abspath(path) == os.path.abspath(path)


@pytest.mark.parametrize("home", ["/home/me", "/home/me/", "/", "/h//x"])
@pytest.mark.parametrize("path", ["~", "~/", "~/x", "~/x/../y", "~x", "~bob/a", "a/~", "/~", ""])
def test_expanduser(home: str, path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", home)
    expected = (
        os.path.expanduser(path) if not path.startswith("~") or path[:2] in ("~", "~/") else path
    )
    assert fs.expanduser(path, home) == expected


def test_expanduser_without_home_leaves_path() -> None:
    assert fs.expanduser("~/x", None) == "~/x"
    assert fs.expanduser("~/x", "") == "~/x"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A directory with files, directories, relative and absolute links, broken
    links, links through `..`, and loops."""
    root = Path(os.path.realpath(tmp_path)) / "t"
    (root / "d" / "sub").mkdir(parents=True)
    (root / "d" / "f.txt").write_text("x")
    (root / "fifo").parent.mkdir(exist_ok=True)
    os.mkfifo(root / "fifo")
    os.symlink("d", root / "rel_dir")
    os.symlink(str(root / "d" / "f.txt"), root / "abs_file")
    os.symlink("missing", root / "broken")
    os.symlink("../t/d/sub/..", root / "dotdot")
    os.symlink("d/sub", root / "chain1")
    os.symlink("chain1/../f.txt", root / "chain2")  # `..` after a link: physical parent
    os.symlink("loop_b", root / "loop_a")
    os.symlink("loop_a", root / "loop_b")
    os.symlink("self", root / "self")
    os.symlink("rel_dir/../loop_a/x", root / "into_loop")
    os.symlink("/", root / "to_root")
    os.symlink(".", root / "here")
    return root


REL = [
    "",
    "d",
    "d/f.txt",
    "d/sub",
    "fifo",
    "rel_dir",
    "rel_dir/f.txt",
    "rel_dir/sub/../f.txt",
    "chain1/../f.txt",
    "chain1/..",
    "rel_dir/sub/../../d",
    "abs_file",
    "abs_file/x",
    "broken",
    "broken/x/..",
    "dotdot",
    "dotdot/f.txt",
    "chain1",
    "chain2",
    "loop_a",
    "loop_a/x",
    "loop_b/../d",
    "self",
    "self/x",
    "into_loop",
    "to_root",
    "to_root/tmp",
    "here/here/d",
    "d/../rel_dir/./sub//",
    "nothing/../d",
    "d/f.txt/..",
]


@pytest.mark.parametrize("rel", REL)
def test_stat_predicates_and_realpath_agree_with_os_path(tree: Path, rel: str) -> None:
    path = str(tree / rel) if rel else str(tree)
    assert fs.lexists(path) == os.path.lexists(path)
    assert fs.isdir(path) == os.path.isdir(path)
    assert fs.isfile(path) == os.path.isfile(path)
    assert fs.islink(path) == os.path.islink(path)
    assert fs.realpath(path) == os.path.realpath(path)


@pytest.mark.parametrize("rel", ["d/f.txt", "rel_dir/sub", "chain2", "loop_a", "here/d"])
def test_realpath_of_relative_paths(tree: Path, rel: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tree)
    assert fs.realpath(rel) == os.path.realpath(rel)
    assert fs.realpath("./" + rel + "/..") == os.path.realpath("./" + rel + "/..")


def test_predicates_on_nul_paths_are_false() -> None:
    for check in (fs.lexists, fs.isdir, fs.isfile, fs.islink):
        assert check("/tmp/a\x00b") is False


def test_makedirs_creates_parents_with_mode(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "c"
    old = os.umask(0)
    try:
        fs.makedirs(str(target), 0o700)
        fs.makedirs(str(target), 0o700)  # an existing directory is fine
    finally:
        os.umask(old)
    for path in (target, target.parent, target.parent.parent):
        assert path.is_dir()
        assert path.stat().st_mode & 0o777 == 0o700


def test_makedirs_refuses_a_file_in_the_way(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("")
    with pytest.raises(OSError):
        fs.makedirs(str(tmp_path / "f"))
    with pytest.raises(OSError):
        fs.makedirs(str(tmp_path / "f" / "below"))


def test_makedirs_follows_a_symlinked_directory(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    os.symlink("real", tmp_path / "link")
    fs.makedirs(str(tmp_path / "link" / "x"))
    assert (tmp_path / "real" / "x").is_dir()


@pytest.mark.parametrize(
    ("path", "root", "inside"),
    [
        ("/a/b", "/a", True),
        ("/a", "/a", True),
        ("/ab", "/a", False),
        ("/a/b", "/", True),
        ("/", "/", True),
        ("/a", "/a/b", False),
        ("/a/b/c", "/a/b/", True),
        ("/a/bc", "/a/b/", False),
    ],
)
def test_is_within(path: str, root: str, inside: bool) -> None:
    assert fs.is_within(path, root) is inside


def test_environ_matches_os_environ() -> None:
    assert fs.environ() == dict(os.environ)


@pytest.mark.parametrize("size", [0, 1, 4095, 4096, 3 << 20])
def test_read_file_returns_every_byte_whatever_the_size(tmp_path: Path, size: int) -> None:
    path = tmp_path / "f"
    data = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
    path.write_bytes(data)
    assert fs.read_file(str(path)) == data


def test_read_file_sees_what_was_appended_after_it_looked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The read asks for the size fstat gave and one byte more; a file that grew in
    between is read to its end."""
    import posix

    path = tmp_path / "f"
    path.write_bytes(b"a" * 10)
    real_fstat = posix.fstat

    def fstat_then_grow(fd: int) -> object:
        st = real_fstat(fd)
        with path.open("ab") as handle:
            handle.write(b"b" * 100_000)
        return st

    monkeypatch.setattr(posix, "fstat", fstat_then_grow)
    assert fs.read_file(str(path)) == b"a" * 10 + b"b" * 100_000


@pytest.mark.parametrize(
    ("path", "written"),
    [
        ("/p/a.py", "/p/a.py"),
        ("/p/é 😀.py", "/p/é 😀.py"),
        ("/p/\ud800.py", "/p/\ufffd.py"),
        ("/p/\udcff/\udfff", "/p/\ufffd/\ufffd"),
        ("\ud83d\ude00", "😀"),  # a pair written as two code points is the one character
    ],
)
def test_as_written_is_the_path_the_client_writes(path: str, written: str) -> None:
    """Node.js writes a JS string's lone surrogates as U+FFFD (found by tests/fuzz:
    such a path made trail fingerprints and lease files raise UnicodeEncodeError)."""
    assert fs.as_written(path) == written
    fs.as_written(path).encode("utf-8")


def test_name_hash_is_fnv1a_64_of_the_bytes() -> None:
    """Names on disk (cut lease file names, earlier releases' ledger directories) and
    double claims' ids are made with it, so it must never change: the published
    FNV-1a 64 test vectors, and a name that is not UTF-8 hashed as its bytes."""
    assert fs.name_hash("") == "cbf29ce484222325"
    assert fs.name_hash("a") == "af63dc4c8601ec8c"
    assert fs.name_hash("foobar") == "85944171f73967e8"
    assert fs.name_hash("\udcff") == "af64724c8602eb6e"  # the one byte 0xff
    assert fs.name_hash("é") == fs.name_hash("\udcc3\udca9")  # UTF-8's two bytes
