"""trail: which files a PostToolUse payload reports, and how the trail lists keep them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from agent_hooks import fingerprints, tool_use
from agent_hooks.agents import state, trail
from agent_hooks.clients import claude_code
from hook_runner import load_payload

P = "/work/proj"
C, M, R, W = tool_use.CREATED, tool_use.MODIFIED, tool_use.READ, trail.WORKSPACE


def entries(payload: dict[str, Any]) -> list[tuple[str, str]]:
    """What PostToolUse records for a Claude Code payload: the client layer's files,
    made absolute by the trail."""
    use = claude_code.tool_use("PostToolUse", payload)
    return trail.absolute(use.files if use is not None else [], payload.get("cwd"))


def payload(tool: str, tool_input: Any, response: Any = None, cwd: Any = P) -> dict[str, Any]:
    doc: dict[str, Any] = {"tool_name": tool, "tool_input": tool_input, "cwd": cwd}
    if response is not None:
        doc["tool_response"] = response
    return doc


def bash(files: Any = (), changed: Any = (), cwd: str = P) -> dict[str, Any]:
    diff = {"files": list(files), "changedFiles": list(changed), "moreFiles": 0}
    return payload("Bash", {"command": "x"}, {"stdout": "", "bashEditDiff": diff}, cwd)


ENTRIES: list[tuple[str, dict[str, Any], list[tuple[str, str]]]] = [
    (
        "write create",
        payload("Write", {"file_path": f"{P}/a.py"}, {"type": "create"}),
        [(C, f"{P}/a.py")],
    ),
    (
        "write update",
        payload("Write", {"file_path": f"{P}/a.py"}, {"type": "update"}),
        [(M, f"{P}/a.py")],
    ),
    ("write no response", payload("Write", {"file_path": f"{P}/a.py"}), [(M, f"{P}/a.py")]),
    (
        "edit",
        payload("Edit", {"file_path": f"{P}/a.py", "old_string": "a"}, {}),
        [(M, f"{P}/a.py")],
    ),
    (
        "multiedit",
        payload("MultiEdit", {"file_path": f"{P}/m.py", "edits": []}, {}),
        [(M, f"{P}/m.py")],
    ),
    (
        "notebook",
        payload("NotebookEdit", {"notebook_path": f"{P}/n.ipynb", "new_source": ""}, {}),
        [(M, f"{P}/n.ipynb")],
    ),
    ("notebook file_path ignored", payload("NotebookEdit", {"file_path": f"{P}/n.ipynb"}, {}), []),
    ("read", payload("Read", {"file_path": f"{P}/r.md"}, {"type": "text"}), [(R, f"{P}/r.md")]),
    ("relative", payload("Edit", {"file_path": "src/../lib/x.py"}, {}), [(M, f"{P}/lib/x.py")]),
    ("relative dot", payload("Read", {"file_path": "./r.md"}, {}), [(R, f"{P}/r.md")]),
    (
        "absolute unnormalized",
        payload("Write", {"file_path": f"{P}//a/./b/../c"}, {"type": "create"}),
        [(C, f"{P}/a/c")],
    ),
    ("relative without cwd", payload("Read", {"file_path": "r.md"}, {}, cwd=None), [(R, "/r.md")]),
    (
        "relative with relative cwd",
        payload("Read", {"file_path": "r.md"}, {}, cwd="x"),
        [(R, "/r.md")],
    ),
    (
        "bash created and modified",
        bash(
            [
                {"filePath": f"{P}/b.txt", "created": True, "hunks": []},
                {"filePath": f"{P}/c.txt", "created": False, "hunks": []},
            ],
            [f"{P}/b.txt", f"{P}/c.txt", f"{P}/d.txt"],
        ),
        [(C, f"{P}/b.txt"), (M, f"{P}/c.txt"), (M, f"{P}/d.txt")],
    ),
    (
        "bash changedFiles only",
        bash([], [f"{P}/e.txt", "rel.txt"]),
        [(M, f"{P}/e.txt"), (M, f"{P}/rel.txt")],
    ),
    ("bash created missing flag", bash([{"filePath": f"{P}/f.txt"}]), [(M, f"{P}/f.txt")]),
    ("bash no diff", payload("Bash", {"command": "ls"}, {"stdout": "a\n"}), []),
    ("bash diff not an object", payload("Bash", {"command": "ls"}, {"bashEditDiff": [1]}), []),
    ("bash junk items", bash([1, "x", {"filePath": 3}, {"created": True}], [None, 4, ""]), []),
    ("bash without response", payload("Bash", {"command": "touch x"}), []),
    ("glob", payload("Glob", {"pattern": "*.py"}, {"filenames": ["a.py"]}), []),
    ("grep", payload("Grep", {"pattern": "x"}, {}), []),
    ("unknown tool", payload("Frobnicate", {"file_path": f"{P}/a"}, {}), []),
    ("no tool name", {"tool_input": {"file_path": f"{P}/a"}, "cwd": P}, []),
    ("tool_input a string", payload("Write", "oops", {"type": "create"}), []),
    ("file_path not a string", payload("Write", {"file_path": ["a"]}, {"type": "create"}), []),
    ("file_path empty", payload("Read", {"file_path": ""}, {}), []),
    ("file_path with NUL", payload("Read", {"file_path": f"{P}/a\x00b"}, {}), []),
]


@pytest.mark.parametrize(
    ("doc", "expected"), [(d, e) for _, d, e in ENTRIES], ids=[n for n, _, _ in ENTRIES]
)
def test_entries(doc: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert entries(doc) == expected


@pytest.mark.parametrize(
    ("fixture", "expected"),
    [
        ("PostToolUse_Write", [(C, "/p/a.txt")]),
        ("PostToolUse_Edit", [(M, "/p/a.txt")]),
        ("PostToolUse_Read", [(R, "/p/a.txt")]),
        ("PostToolUse_Bash", [(C, "/p/b.txt")]),
        ("PostToolUse_Glob", []),
        ("PostToolUse_Grep", []),
        ("PostToolUse_Agent", []),
    ],
)
def test_entries_of_the_real_clients_payloads(
    fixture: str, expected: list[tuple[str, str]]
) -> None:
    assert entries(load_payload(fixture, "/p", "/h")) == expected


def _doc() -> dict[str, Any]:
    return state.fresh("a", 0)


def test_record_dedupes_in_first_seen_order() -> None:
    doc = _doc()
    trail.record(doc, [(M, "/p/b"), (M, "/p/a"), (C, "/p/c")], 500)
    trail.record(doc, [(M, "/p/a"), (M, "/p/d"), (M, "/p/b"), (C, "/p/c"), (R, "/p/b")], 500)
    assert doc[M] == ["/p/b", "/p/a", "/p/d"]
    assert doc[C] == ["/p/c"]
    assert doc[R] == ["/p/b"]


@pytest.mark.parametrize("limit", [1, 3, 10])
def test_files_read_keeps_the_most_recent(limit: int) -> None:
    doc = _doc()
    for i in range(12):
        trail.record(doc, [(R, f"/p/r{i}")], limit)
    assert doc[R] == [f"/p/r{i}" for i in range(12 - min(limit, 12), 12)]


def test_the_read_cap_never_touches_created_or_modified() -> None:
    doc = _doc()
    trail.record(
        doc, [(M, f"/p/m{i}") for i in range(20)] + [(C, f"/p/c{i}") for i in range(20)], 2
    )
    assert len(doc[M]) == 20 and len(doc[C]) == 20


def test_default_read_limit_is_100() -> None:
    doc = _doc()
    limit = trail.read_limit({})
    assert limit == 100
    trail.record(doc, [(R, f"/p/r{i}") for i in range(220)], limit)
    assert doc[R] == [f"/p/r{i}" for i in range(120, 220)]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("7", 7),
        ("1", 1),
        ("100000", 100000),
        ("0", 100),
        ("-3", 100),
        ("", 100),
        ("abc", 100),
        ("2.5", 100),
        (" 8", 100),
        ("²", 100),
        ("1_000", 100),
    ],
)
def test_read_limit_setting(value: str, expected: int) -> None:
    assert trail.read_limit({trail.READ_LIMIT_ENV: value}) == expected


def test_workspace_files_are_kept_apart(tmp_path: Path) -> None:
    root = str(tmp_path)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "x.py").write_text("x")
    prefix = trail.workspace_prefix(root)
    assert prefix == f"{root}/.tmp/sessions/"
    doc = _doc()
    found = [
        (C, f"{root}/.tmp/sessions/20260101-000000-abcd/notes.md"),
        (M, f"{root}/src/x.py"),
        (R, f"{root}/.tmp/sessions/20260101-000000-abcd/notes.md"),
        (M, f"{root}/.tmp/sessionsX/y"),
        (M, f"{root}/.tmp/other"),
    ]
    trail.record(doc, found, 500, prefix)
    assert doc[W] == [f"{root}/.tmp/sessions/20260101-000000-abcd/notes.md"]
    assert doc[C] == [] and doc[R] == []
    assert doc[M] == [f"{root}/src/x.py", f"{root}/.tmp/sessionsX/y", f"{root}/.tmp/other"]
    assert trail.workspace_prefix(None) is None


def test_fingerprints_follow_the_content(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_bytes(b"alpha\n")
    doc = _doc()
    trail.record(doc, [(M, str(path))], 500)
    first = doc["fingerprints"][str(path)]
    st = os.stat(path)
    assert first == f"{st.st_mtime_ns:x}:6:{fingerprints.checksum(b'alpha' + bytes([10])):x}"
    path.write_bytes(b"alphb\n")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # same size and mtime: content tells
    trail.record(doc, [(R, str(path))], 500)
    assert fingerprints.content(doc["fingerprints"][str(path)]) != fingerprints.content(first)


def test_fingerprint_of_what_is_not_a_readable_regular_file(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "dir").mkdir()
    for path in ("fifo", "dir", "missing"):
        assert fingerprints.of(str(tmp_path / path)) is None
    doc = _doc()
    trail.record(doc, [(M, str(tmp_path / "missing"))], 500)
    assert doc[M] == [str(tmp_path / "missing")] and doc["fingerprints"] == {}


def test_fingerprint_of_a_file_larger_than_2_mib(tmp_path: Path) -> None:
    mib = 1 << 20
    size = 2 * mib + 12345
    data = bytearray(os.urandom(size))
    path = tmp_path / "big.bin"
    path.write_bytes(data)
    mark = fingerprints.of(str(path))
    assert mark is not None
    expected = fingerprints.checksum(bytes(data[:mib]) + bytes(data[-mib:]))
    assert fingerprints.content(mark) == f"{size:x}:{expected:x}"
    for offset, changes in ((0, True), (size - 1, True), (mib + 5000, False)):
        changed = bytearray(data)
        changed[offset] ^= 0xFF
        path.write_bytes(changed)
        again = fingerprints.of(str(path))
        assert again is not None
        assert (fingerprints.content(again) != fingerprints.content(mark)) is changes, offset


def test_fingerprint_of_exactly_2_mib_covers_everything(tmp_path: Path) -> None:
    data = bytearray(2 << 20)
    path = tmp_path / "two.bin"
    path.write_bytes(data)
    mark = fingerprints.of(str(path))
    data[(1 << 20) + 7] = 1
    path.write_bytes(data)
    again = fingerprints.of(str(path))
    assert mark is not None and again is not None
    assert fingerprints.content(mark) != fingerprints.content(again)


def test_fingerprints_of_files_dropped_from_the_read_list_go_too(tmp_path: Path) -> None:
    paths = []
    for name in ("a", "b", "c"):
        (tmp_path / name).write_text(name)
        paths.append(str(tmp_path / name))
    doc = _doc()
    trail.record(doc, [(M, paths[0]), (R, paths[0]), (R, paths[1])], 500)
    trail.record(doc, [(R, paths[2])], 1)
    assert doc[R] == [paths[2]]
    assert set(doc["fingerprints"]) == {paths[0], paths[2]}  # a is still a modified file


@pytest.mark.parametrize("data", [b"", b"\x00", b"\x00\x00", b"a", b"a\x00"])
def test_checksum_tells_lengths_apart(data: bytes) -> None:
    others = {
        fingerprints.checksum(d) for d in [b"", b"\x00", b"\x00\x00", b"a", b"a\x00"] if d != data
    }
    assert fingerprints.checksum(data) not in others


def test_a_trail_list_is_a_window_of_the_files_seen_last(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """200,000 files from one Bash command leave a bounded document: the files seen
    first leave the window for the caller to keep beside it, with their fingerprints
    and writers, unless another list still holds them; nobody is nagged."""
    monkeypatch.setattr(trail, "MAX_TRAIL_FILES", 5)
    files = [tmp_path / f"f{n}" for n in range(9)]
    for file in files:
        file.write_text("x")
    doc = _doc()
    first = [(tool_use.MODIFIED, str(f)) for f in files[:8]] + [(tool_use.READ, str(files[0]))]
    overflow: list[tuple[str, str]] = []
    assert trail.record(doc, first, 500, writer="sub-1", overflow=overflow)
    assert doc[tool_use.MODIFIED] == [str(f) for f in files[3:8]]
    assert overflow == [(tool_use.MODIFIED, str(f)) for f in files[:3]]
    # f0 is still read (its own list): it keeps its fingerprint and writer; f1, f2 do not
    assert sorted(doc["fingerprints"]) == sorted(str(f) for f in [files[0], *files[3:8]])
    assert sorted(doc["trail_writers"]) == sorted(doc["fingerprints"])
    assert doc[tool_use.READ] == [str(files[0])]  # reads have their own limit
    assert doc["notices"] == []
    overflow.clear()
    assert trail.record(doc, [(tool_use.MODIFIED, str(files[8]))], 500, overflow=overflow)
    assert overflow == [(tool_use.MODIFIED, str(files[3]))]
    assert doc[tool_use.MODIFIED] == [str(f) for f in files[4:9]]
    assert str(files[3]) not in doc["fingerprints"] and str(files[8]) in doc["fingerprints"]
    overflow.clear()  # a file in the window written again stays where it was first seen
    assert not trail.record(doc, [(tool_use.MODIFIED, str(files[4]))], 500, overflow=overflow)
    assert overflow == [] and doc[tool_use.MODIFIED][0] == str(files[4])
    assert trail.record(doc, [(tool_use.CREATED, "/p/new")], 500)  # other lists still record


def test_a_list_an_earlier_release_left_long_keeps_its_last_files(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(trail, "MAX_TRAIL_FILES", 3)
    doc = _doc()
    doc[tool_use.CREATED] = [f"/p/c{n}" for n in range(7)]
    doc["fingerprints"] = {f"/p/c{n}": "1:2:3" for n in range(7)}
    overflow: list[tuple[str, str]] = []
    assert trail.record(doc, [], 500, overflow=overflow)
    assert doc[tool_use.CREATED] == ["/p/c4", "/p/c5", "/p/c6"]
    assert overflow == [(tool_use.CREATED, f"/p/c{n}") for n in range(4)]
    assert sorted(doc["fingerprints"]) == ["/p/c4", "/p/c5", "/p/c6"]


def test_a_path_with_a_lone_surrogate_is_the_file_the_client_wrote(tmp_path: Path) -> None:
    """Found by tests/fuzz: fingerprinting such a path raised UnicodeEncodeError and
    the whole PostToolUse was lost; the client writes it with U+FFFD."""
    written = tmp_path / "a\ufffd.py"
    written.write_text("x")
    found = entries(payload("Write", {"file_path": f"{tmp_path}/a\ud800.py"}, cwd="/"))
    assert found == [(M, str(written))]
    doc = _doc()
    assert trail.record(doc, found, 500)
    assert doc[M] == [str(written)] and str(written) in doc["fingerprints"]
