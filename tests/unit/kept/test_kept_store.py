"""The store of kept versions (`kept.kept_store`): what is kept and what never is,
content stored once by its digest, directories 0700 and files 0600, a version a
line that a damaged neighbour does not take with it, the settings' bounds, and
what git ignores remembered until one of its files changes."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from agent_hooks.kept import ignore_rules, kept_store, kept_versions
from git_repo import init

NOW = 1_800_000_000.0
WRITER = {"writer": "proj__cc_1", "agent": "proj__cc_1", "conversation": "c1", "client": "claude"}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return Path(os.path.realpath(init(tmp_path / "repo")))


def ledger_of(repo: Path) -> str:
    path = repo / ".git" / "agent-hooks"
    path.mkdir(mode=0o700, exist_ok=True)
    return str(path)


def keep(repo: Path, rel: str, env: dict[str, str] | None = None, now: float = NOW) -> list[str]:
    """PostToolUse's call for one file the writer holds (worktree ".")."""
    held = [(str(repo / rel), ledger_of(repo), rel, ".", now + 600)]
    return kept_store.keep_held(held, WRITER, now, env or {"HOME": str(repo.parent / "home")})


def versions(repo: Path, rel: str) -> list[dict[str, Any]]:
    return kept_versions.read_versions(ledger_of(repo), ".", rel)


def write(repo: Path, rel: str, data: bytes | str, mode: int = 0o644) -> Path:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    path.chmod(mode)
    return path


def test_a_write_is_kept_with_its_content_and_mode(repo: Path) -> None:
    write(repo, "src/app.py", "print(1)\n", 0o755)
    assert keep(repo, "src/app.py") == []
    [entry] = versions(repo, "src/app.py")
    assert entry["kind"] == "write" and entry["mode"] == 0o755 and entry["size"] == 9
    assert entry["writer"] == entry["holder"] == "proj__cc_1" and entry["until"] == NOW + 600
    assert kept_versions.read_object(ledger_of(repo), entry["hash"]) == b"print(1)\n"
    import hashlib

    assert entry["hash"] == hashlib.blake2b(b"print(1)\n", digest_size=32).hexdigest()


def test_the_same_content_is_stored_once(repo: Path) -> None:
    write(repo, "a.py", "same\n")
    write(repo, "b.py", "same\n")
    keep(repo, "a.py")
    keep(repo, "b.py")
    write(repo, "a.py", "other\n")
    keep(repo, "a.py")
    objects = [p for p in (repo / ".git/agent-hooks/kept/objects").rglob("*") if p.is_file()]
    assert len(objects) == 2  # "same" once for both files, and "other"
    assert [e["size"] for e in versions(repo, "a.py")] == [5, 6]


def test_directories_are_0700_and_files_0600(repo: Path) -> None:
    write(repo, "d/x.py", "x\n", 0o777)
    old = os.umask(0)
    try:
        keep(repo, "d/x.py")
    finally:
        os.umask(old)
    store = repo / ".git/agent-hooks/kept"
    for path in [store, *store.rglob("*")]:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode == (0o700 if path.is_dir() else 0o600), path


@pytest.mark.parametrize(
    ("ignore_file", "text"),
    [(".gitignore", "*.log\n"), (".git/info/exclude", "*.log\n"), ("d/.gitignore", "*.log\n")],
)
def test_files_git_ignores_are_not_kept(repo: Path, ignore_file: str, text: str) -> None:
    write(repo, ignore_file, text)
    write(repo, "d/debug.log", "secret token\n")
    write(repo, "d/app.py", "kept\n")
    assert keep(repo, "d/debug.log") == [] and keep(repo, "d/app.py") == []
    assert versions(repo, "d/debug.log") == []
    assert len(versions(repo, "d/app.py")) == 1
    stored = b"".join(
        p.read_bytes() for p in (repo / ".git/agent-hooks/kept/objects").rglob("*") if p.is_file()
    )
    assert b"secret token" not in stored


def test_the_global_excludes_file_counts(repo: Path) -> None:
    home = repo.parent / "home"
    (home / ".config/git").mkdir(parents=True)
    (home / ".config/git/ignore").write_text("*.local\n")
    write(repo, "conf.local", "x\n")
    keep(repo, "conf.local", {"HOME": str(home)})
    assert versions(repo, "conf.local") == []


@pytest.mark.parametrize("rel", [".env", "app/.env.production", "certs/server.pem", "id_ed25519"])
def test_secrets_names_are_never_kept_even_when_git_would_track_them(repo: Path, rel: str) -> None:
    write(repo, rel, "API_KEY=123\n")
    keep(repo, rel)
    assert versions(repo, rel) == []


def test_the_secrets_names_are_the_same_as_their_gitignore_patterns() -> None:
    """`secret` (string tests, on the hot path) says what `SECRETS` compiled says."""
    names = [".env", ".envx", ".env.local", "x.env", "a.pem", "pem", "id_rsa", "my_id_rsa",
             "id_rsa.pub", "k.key", "keys", ".netrc", "netrc", "d.kdbx", "id_ed25519_sk"]  # fmt: skip
    for name in names:
        for rel in (name, f"dir/{name}", f"{name}/inner.txt"):
            assert kept_store.secret(rel) == ignore_rules.matched(list(kept_store.SECRETS), rel), (
                rel
            )


def test_the_exclusion_setting_excludes_and_can_bring_a_secret_back(repo: Path) -> None:
    store = Path(ledger_of(repo)) / "kept"
    store.mkdir(mode=0o700)
    (store / "settings.json").write_text(json.dumps({"kept_exclude": "data/ !.env.example"}))
    write(repo, "data/big.csv", "1,2\n")
    write(repo, ".env.example", "API_KEY=\n")
    write(repo, ".env", "API_KEY=1\n")
    for rel in ("data/big.csv", ".env.example", ".env"):
        keep(repo, rel)
    assert versions(repo, "data/big.csv") == [] and versions(repo, ".env") == []
    assert len(versions(repo, ".env.example")) == 1


def test_a_file_over_the_size_limit_is_not_kept_and_zero_turns_keeping_off(repo: Path) -> None:
    store = Path(ledger_of(repo)) / "kept"
    store.mkdir(mode=0o700)
    (store / "settings.json").write_text(json.dumps({"kept_file_mib": 1}))
    write(repo, "big.bin", b"x" * ((1 << 20) + 1))
    write(repo, "fits.bin", b"x" * (1 << 20))
    assert keep(repo, "big.bin") == [] and keep(repo, "fits.bin") == []
    assert versions(repo, "big.bin") == [] and len(versions(repo, "fits.bin")) == 1
    (store / "settings.json").write_text(json.dumps({"kept_file_mib": 0}))
    write(repo, "fits.bin", b"y")
    keep(repo, "fits.bin")
    assert len(versions(repo, "fits.bin")) == 1


def test_settings_that_are_not_valid_count_as_defaults() -> None:
    stored = {"kept_file_mib": "9", "kept_total_mib": -1, "kept_exclude": 3}
    assert kept_store.settings_of(stored) == {
        "kept_file_mib": kept_store.FILE_MIB,
        "kept_total_mib": kept_store.TOTAL_MIB,
        "kept_exclude": "",
    }
    assert kept_store.settings_of({"kept_file_mib": True})["kept_file_mib"] == kept_store.FILE_MIB


def test_a_held_file_its_writer_deleted_is_kept_as_a_deletion(repo: Path) -> None:
    write(repo, "gone.py", "x\n")
    keep(repo, "gone.py")
    (repo / "gone.py").unlink()
    keep(repo, "gone.py")
    assert [(e["kind"], e["hash"]) for e in versions(repo, "gone.py")][1] == ("delete", None)


def test_a_symlink_is_not_followed(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("not the project's\n")
    (repo / "link.py").symlink_to(outside)
    assert keep(repo, "link.py") == ["link.py: not kept: not a regular file"]
    assert versions(repo, "link.py") == []


def test_a_damaged_line_loses_only_its_own_version(repo: Path) -> None:
    write(repo, "a.py", "one\n")
    keep(repo, "a.py")
    path = Path(kept_store.versions_path(ledger_of(repo), ".", "a.py"))
    with path.open("ab") as f:
        f.write(b'\n{"path": "a.py", "kind": "wri')  # a crash cut this append short
    write(repo, "a.py", "two\n")
    keep(repo, "a.py", now=NOW + 1)
    with path.open("ab") as f:
        f.write(b"\n\x00\xff garbage\n{}\n[1, 2]\n")
    write(repo, "a.py", "three\n")
    keep(repo, "a.py", now=NOW + 2)
    assert [e["size"] for e in versions(repo, "a.py")] == [4, 4, 6]


def test_a_damaged_object_is_never_returned(repo: Path) -> None:
    write(repo, "a.py", "content\n")
    keep(repo, "a.py")
    [entry] = versions(repo, "a.py")
    Path(kept_store.object_path(ledger_of(repo), entry["hash"])).write_bytes(b"contenX\n")
    assert kept_versions.read_object(ledger_of(repo), entry["hash"]) is None


def test_an_object_of_another_size_is_written_again(repo: Path) -> None:
    """A crash that cut an object short: the next keep of that content repairs it."""
    write(repo, "a.py", "content\n")
    keep(repo, "a.py")
    [entry] = versions(repo, "a.py")
    Path(kept_store.object_path(ledger_of(repo), entry["hash"])).write_bytes(b"cont")
    keep(repo, "a.py", now=NOW + 1)
    assert kept_versions.read_object(ledger_of(repo), entry["hash"]) == b"content\n"


def test_what_git_ignores_is_remembered_until_an_ignore_file_changes(repo: Path) -> None:
    write(repo, "notes.txt", "1\n")
    keep(repo, "notes.txt")
    assert len(versions(repo, "notes.txt")) == 1
    cache = Path(kept_store.ignores_path(ledger_of(repo), ".", "notes.txt"))
    assert cache.is_file() and stat.S_IMODE(cache.stat().st_mode) == 0o600
    write(repo, ".gitignore", "notes.txt\n")  # created since: the answer is read again
    write(repo, "notes.txt", "2\n")
    keep(repo, "notes.txt", now=NOW + 1)
    assert len(versions(repo, "notes.txt")) == 1
    write(repo, ".gitignore", "other.txt\n")  # changed again
    keep(repo, "notes.txt", now=NOW + 2)
    assert len(versions(repo, "notes.txt")) == 2


def test_a_remembered_answer_is_used_without_reading_the_rules(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(repo, "a.py", "1\n")
    keep(repo, "a.py")

    def never(*args: object) -> object:
        raise AssertionError("decided again although nothing changed")

    monkeypatch.setattr(ignore_rules, "decide", never)
    write(repo, "a.py", "2\n")
    assert keep(repo, "a.py", now=NOW + 1) == []
    assert len(versions(repo, "a.py")) == 2


def test_a_damaged_ignore_answer_is_decided_again(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(repo, "a.py", "1\n")
    keep(repo, "a.py")
    cache = Path(kept_store.ignores_path(ledger_of(repo), ".", "a.py"))
    cache.write_bytes(b"\x00not marshal")
    decided: list[str] = []
    real = ignore_rules.decide
    monkeypatch.setattr(ignore_rules, "decide", lambda *a: decided.append(a[-1]) or real(*a))
    write(repo, "a.py", "2\n")
    assert keep(repo, "a.py", now=NOW + 1) == []
    assert decided == ["a.py"] and len(versions(repo, "a.py")) == 2
    assert keep(repo, "a.py", now=NOW + 2) == [] and decided == ["a.py"]  # written back whole


def test_another_environment_decides_again(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another HOME (another ~/.gitconfig, another excludes file): not the same answer."""
    write(repo, "a.py", "1\n")
    keep(repo, "a.py")
    home = repo.parent / "other-home"
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".config" / "git" / "ignore").write_text("*.py\n")
    write(repo, "a.py", "2\n")
    keep(repo, "a.py", {"HOME": str(home)}, now=NOW + 1)
    assert len(versions(repo, "a.py")) == 1


def test_an_unreadable_config_file_keeps_nothing(repo: Path) -> None:
    """What git ignores cannot be known: the file is taken as ignored."""
    config = repo / ".git" / "config"
    config.unlink()
    config.symlink_to("config")  # a loop: stat fails with ELOOP
    write(repo, "a.py", "1\n")
    keep(repo, "a.py")
    assert versions(repo, "a.py") == []


def test_a_store_that_cannot_be_written_is_reported_not_raised(repo: Path) -> None:
    write(repo, "a.py", "1\n")
    ledger = Path(ledger_of(repo))
    (ledger / "kept").write_text("a file where the store belongs")
    problems = keep(repo, "a.py")
    assert len(problems) == 1 and problems[0].startswith("a.py: not kept: ")
