"""What every command shares (`cli/_common.py`): a failure is one line on stderr
(`Error: …`) and exit status 1, never a traceback — a name that is not UTF-8, a
symlink planted at a state or lock file, a read-only or full disk, a state
directory that is a file, text that is not valid Unicode inside a state file or
a ledger — and nothing is half-written when a write fails. Real files in a
temporary HOME, through click's CliRunner."""

from __future__ import annotations

import errno
import json
import os
import posix
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_harness import no_traceback, one_line_error
from click.testing import CliRunner, Result

from agent_hooks import storage
from agent_hooks.cli import main
from agent_hooks.cli._common import Env, emit_json
from hook_runner import write_state

NOW = 1_800_000_000.0
ME = "proj__cc_1"

# Every command that touches agent-hooks' files, with arguments that make it act.
COMMANDS: list[list[str]] = [
    ["status"],
    ["status", "--json"],
    ["agents"],
    ["agents", "--json"],
    ["trail"],
    ["trail", "--json"],
    ["freshness"],
    ["freshness", "--json"],
    ["reservations"],
    ["reservations", "--json"],
    ["reservations", "--all-projects"],
    ["check", "a.py"],
    ["reserve", "a.py"],
    ["release", "--all"],
    ["release", "z.py"],
    ["renew"],
    ["strict"],
    ["strict", "on"],
    ["settings"],
    ["settings", "lease-minutes", "5"],
    ["overlaps"],
    ["brief", "set-goal", "g"],
    ["brief", "add", "--decision", "d"],
    ["brief", "focus", "f"],
    ["brief", "show"],
    ["brief", "clear"],
    ["context", "add", "t", "-c", "features"],
    ["context", "find", "t"],
    ["context", "list"],
    ["context", "rm", "features/t-context.md"],
    ["workspace", "show"],
    ["workspace", "close"],
    ["workspace", "sweep"],
    ["cleanup"],
    ["cleanup", "--dry-run"],
    ["session", "start", "--client", "A", "--code", "B", "--yes"],
    ["session", "note", "n"],
    ["session", "status"],
]
WRITING: list[list[str]] = [
    ["reserve", "a.py"],
    ["release", "--all"],
    ["renew"],
    ["strict", "on"],
    ["settings", "lease-minutes", "5"],
    ["brief", "set-goal", "g"],
    ["brief", "add", "--decision", "d"],
    ["brief", "focus", "f"],
    ["context", "add", "u", "-c", "features"],
    ["session", "note", "n"],
    ["session", "milestone", "add", "m"],
]
REMOVING: list[list[str]] = [
    ["brief", "clear"],
    ["context", "rm", "features/t-context.md"],
    ["workspace", "close"],
    ["session", "pause"],
    ["session", "close"],
    ["session", "start", "--client", "C", "--code", "D", "--yes"],
]


def ids(commands: list[list[str]]) -> list[str]:
    return [" ".join(c) for c in commands]


class Run:
    def __init__(self, home: Path, project: Path) -> None:
        self.home = home
        self.project = project
        self.state_dir = home / ".claude"
        self.ledger = project / ".git" / "agent-hooks"

    def __call__(
        self, *args: str, agent: str | None = ME, env: dict[str, str] | None = None
    ) -> Result:
        environ = {"HOME": str(self.home), "CLAUDE_PROJECT_DIR": str(self.project)}
        if agent is not None:
            environ["AGENT_NAME"] = agent
        environ.update(env or {})
        return CliRunner().invoke(main, list(args), obj=Env(environ=environ, now=NOW))

    def ok(self, *args: str, **kw: Any) -> Result:
        result = self(*args, **kw)
        assert result.exit_code == 0, (args, result.output, result.exception)
        return result

    def populate(self) -> None:
        """State, a reservation, a briefing, a workspace and a work session."""
        write_state(
            self.state_dir,
            ME,
            {
                "registered": True,
                "active": True,
                "conversation_id": "conv-1",
                "project_root": str(self.project),
                "last_activity": int(NOW - 60),
                "files_read": [f"{self.project}/README.md"],
            },
        )
        for args in (
            ["reserve", "z.py", "--reason", "r"],
            ["brief", "set-goal", "ship it"],
            ["context", "add", "t", "-c", "features"],
            ["session", "start", "--client", "A", "--code", "B"],
        ):
            self.ok(*args)


@pytest.fixture
def run(home: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> Run:
    monkeypatch.chdir(project)
    return Run(home, project)


def ok_or_one_line_error(result: Result) -> None:
    no_traceback(result)
    if result.exit_code != 0:
        errors = [line for line in result.stderr.splitlines() if line.startswith("Error: ")]
        assert result.exit_code == 1 and len(errors) == 1, (result.exit_code, result.stderr)


def snapshot(*roots: Path) -> dict[str, bytes | str]:
    """Every file (its bytes) and directory below `roots`."""
    found: dict[str, bytes | str] = {}
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            for name in dirnames:
                found[os.path.join(dirpath, name)] = "dir"
            for name in filenames:
                path = os.path.join(dirpath, name)
                found[path] = "link" if os.path.islink(path) else Path(path).read_bytes()
    return found


def changes(before: dict[str, bytes | str], after: dict[str, bytes | str]) -> list[str]:
    """What a failed write changed, new empty lock files and new empty directories
    (made on the way to the file that could not be written) aside."""

    def harmless(path: str) -> bool:
        if path in before:
            return False
        if after.get(path) == "dir":
            return not any(p.startswith(path + "/") for p in after)
        return path.endswith(".lock") and after.get(path) == b""

    return sorted(
        path
        for path in set(before) | set(after)
        if before.get(path) != after.get(path) and not harmless(path)
    )


# --- a name that is not UTF-8 ------------------------------------------------------

NOT_UTF8 = b"\xff".decode("utf-8", "surrogateescape")  # what os.environ makes of b"\xff"


AGENT_COMMANDS = [c for c in COMMANDS if c[0] != "session"]  # work sessions have no agent
# Commands about every agent or about the project: they never ask who is running them.
ABOUT_EVERYONE = {"agents", "reservations", "strict", "settings", "overlaps", "cleanup"}


@pytest.mark.parametrize("args", AGENT_COMMANDS, ids=ids(AGENT_COMMANDS))
def test_an_agent_name_that_is_not_utf8_is_refused_on_every_path(run: Run, args: list[str]) -> None:
    """Commands about this agent refuse the name in one line and change nothing;
    the others (about every agent, or the project) work."""
    run.populate()
    before = snapshot(run.home, run.project)
    result = run(*args, agent=f"me{NOT_UTF8}")
    if args[0] in ABOUT_EVERYONE:
        no_traceback(result)
        assert result.exit_code == 0 and result.stderr == "", (result.exit_code, result.stderr)
        return
    line = one_line_error(result, "AGENT_NAME", "invisible or format character")
    assert "me\\udcff" in line  # the name as escapes, never the raw byte
    assert changes(before, snapshot(run.home, run.project)) == []


@pytest.mark.parametrize(
    "args",
    [
        ["status", "--agent", NOT_UTF8],
        ["status", NOT_UTF8],
        ["trail", NOT_UTF8],
        ["trail", "--agent", NOT_UTF8],
        ["freshness", "--agent", NOT_UTF8],
        ["brief", "show", "--agent", NOT_UTF8],
    ],
    ids=lambda a: " ".join(a).encode("ascii", "backslashreplace").decode(),
)
def test_an_agent_argument_that_is_not_utf8_is_one_line(run: Run, args: list[str]) -> None:
    one_line_error(run(*args), "invisible or format character")


@pytest.mark.parametrize(
    ("args", "stored"),
    [
        (["reserve", f"caf{NOT_UTF8}.py"], "caf\\udcff.py"),
        (["brief", "set-goal", f"goal {NOT_UTF8}"], "goal \\udcff"),
        (["brief", "add", "--decision", f"d {NOT_UTF8}"], "d \\udcff"),
        (["context", "add", "u", "-c", "features", "--summary", f"s {NOT_UTF8}"], "s \\udcff"),
        (["session", "note", f"n {NOT_UTF8}"], "n \\udcff"),
    ],
    ids=["reserve", "set-goal", "brief add", "context add --summary", "session note"],
)
def test_arguments_that_are_not_utf8_are_stored_as_escapes(
    run: Run, args: list[str], stored: str
) -> None:
    """Bytes that are not UTF-8 in an argument (a file name) used to end in a
    UnicodeEncodeError traceback; they are kept, as `\\udcff` escapes, and every
    file stays valid UTF-8."""
    run.populate()
    before = snapshot(run.home, run.project)
    result = run(*args)
    assert result.exit_code == 0, (result.output, result.exception)
    after = snapshot(run.home, run.project)
    written = [after.get(path) for path in changes(before, after)]
    assert any(isinstance(c, bytes) and stored.encode() in c for c in written), stored
    for path, content in after.items():
        if isinstance(content, bytes) and not path.endswith((".cache", ".lock")):
            content.decode("utf-8")  # raises if a file is not UTF-8


# --- symlinks planted at state and lock files ---------------------------------------


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    path = tmp_path / "victim"
    path.write_text("root:x:0:0:root:/root:/bin/bash\n")
    return path


@pytest.mark.parametrize(
    "planted",
    [
        ".claude/state-proj__cc_1.json",
        ".claude/state-proj__cc_1.json.lock",
    ],
)
@pytest.mark.parametrize("args", COMMANDS, ids=ids(COMMANDS))
def test_a_symlink_at_a_state_or_lock_file_is_one_line_and_never_followed(
    run: Run, victim: Path, planted: str, args: list[str]
) -> None:
    link = run.home / planted
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(victim)
    result = run(*args)
    ok_or_one_line_error(result)
    if result.exit_code and args[0] in ("status", "trail", "freshness"):
        assert "symlink" in result.stderr
    assert victim.read_text() == "root:x:0:0:root:/root:/bin/bash\n"
    assert link.is_symlink()


@pytest.mark.parametrize(
    "planted", ["reservations.json", "reservations.json.lock"], ids=["ledger", "ledger lock"]
)
@pytest.mark.parametrize(
    "args", [["reserve", "a.py"], ["release", "--all"], ["renew"], ["strict", "on"]]
)
def test_a_symlink_at_the_ledger_or_its_lock_is_one_line(
    run: Run, victim: Path, planted: str, args: list[str]
) -> None:
    run.ledger.mkdir(parents=True)
    (run.ledger / planted).symlink_to(victim)
    one_line_error(run(*args), "symlink")
    assert victim.read_text() == "root:x:0:0:root:/root:/bin/bash\n"


# --- read-only and full disks -------------------------------------------------------


def _under(path: object, roots: tuple[str, ...]) -> bool:
    return isinstance(path, str) and path.startswith(roots)


@pytest.fixture
def read_only(run: Run, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[], None]]:
    """Make HOME and the project read-only (EROFS from every call that would
    create, change or remove a file there). Works as root too, which `chmod`
    does not."""
    roots = (str(run.home), str(run.project))
    writing = posix.O_WRONLY | posix.O_RDWR | posix.O_CREAT | posix.O_TRUNC | posix.O_APPEND

    def refuse(path: object) -> None:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), path)

    def patch() -> None:
        real_open, real_mkdir = posix.open, posix.mkdir
        real_replace, real_rename, real_unlink = posix.replace, posix.rename, posix.unlink

        def open_(path: Any, flags: int, *a: Any, **k: Any) -> int:
            if flags & writing and _under(path, roots):
                refuse(path)
            return real_open(path, flags, *a, **k)

        def mkdir(path: Any, *a: Any, **k: Any) -> None:
            if _under(path, roots):
                refuse(path)
            real_mkdir(path, *a, **k)

        def two(real: Callable[..., None]) -> Callable[..., None]:
            def call(src: Any, dst: Any, *a: Any, **k: Any) -> None:
                if _under(src, roots) or _under(dst, roots):
                    refuse(src)
                real(src, dst, *a, **k)

            return call

        def unlink(path: Any, *a: Any, **k: Any) -> None:
            if _under(path, roots):
                refuse(path)
            real_unlink(path, *a, **k)

        for module in (posix, os):
            monkeypatch.setattr(module, "open", open_)
            monkeypatch.setattr(module, "mkdir", mkdir)
            monkeypatch.setattr(module, "replace", two(real_replace))
            monkeypatch.setattr(module, "rename", two(real_rename))
            monkeypatch.setattr(module, "unlink", unlink)

    yield patch
    monkeypatch.undo()


@pytest.mark.parametrize("args", WRITING + REMOVING, ids=ids(WRITING + REMOVING))
def test_a_read_only_disk_is_one_line_and_changes_nothing(
    run: Run, read_only: Callable[[], None], args: list[str]
) -> None:
    run.populate()
    before = snapshot(run.home, run.project)
    read_only()
    one_line_error(run(*args), "Read-only file system")
    assert changes(before, snapshot(run.home, run.project)) == []


MUST_WRITE = WRITING + [
    c for c in REMOVING if c[:2] not in (["brief", "clear"], ["workspace", "close"])
]


@pytest.mark.parametrize("args", MUST_WRITE, ids=ids(MUST_WRITE))
def test_a_full_disk_is_one_line_and_changes_nothing(
    run: Run, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    """ENOSPC from `write` (a full disk accepts the new file, not its bytes):
    the message names the file being written, and no document is left half
    written or replaced by an empty one."""
    run.populate()
    before = snapshot(run.home, run.project)

    def full(fd: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(posix, "write", full)
    error = one_line_error(run(*args), "No space left on device")
    monkeypatch.undo()
    assert "cannot write " in error
    assert storage.temp_target(error.rsplit("/", 1)[-1].split(":")[0]) is None
    assert changes(before, snapshot(run.home, run.project)) == []


def test_closing_a_workspace_on_a_full_disk_warns_about_the_state_only(
    run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Deleting needs no space; only the state's binding cannot be cleared, and a
    binding to a workspace that is gone is inert."""
    run.populate()

    def full(fd: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(posix, "write", full)
    result = run("workspace", "close")
    monkeypatch.undo()
    assert result.exit_code == 0, result.output
    assert "is closed, but your state still names it" in result.stderr
    assert "No space left on device" in result.stderr
    assert "No workspace is bound" in run.ok("workspace", "show").stdout


@pytest.mark.parametrize("nth", [2, 3, 4])
@pytest.mark.parametrize("args", WRITING, ids=ids(WRITING))
def test_whichever_write_fails_no_document_is_left_half_written(
    run: Run, monkeypatch: pytest.MonkeyPatch, args: list[str], nth: int
) -> None:
    """A disk that fills up part way through a command: the writes before went
    through, this one fails, and still every JSON file is whole and no temporary
    file is left behind."""
    run.populate()
    real_write = posix.write
    calls = [0]

    def fills_up(fd: int, data: bytes) -> int:
        calls[0] += 1
        if calls[0] >= nth:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(posix, "write", fills_up)
    result = run(*args)
    monkeypatch.undo()
    ok_or_one_line_error(result)
    for path, content in snapshot(run.home, run.project).items():
        assert storage.temp_target(os.path.basename(path)) is None, path
        if isinstance(content, bytes) and path.endswith(".json"):
            json.loads(content)


def _permissions_bind() -> bool:
    """Whether a 0500 directory refuses new files here (root, with its
    CAP_DAC_OVERRIDE, writes into it anyway)."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        locked = Path(tmp) / "locked"
        locked.mkdir(mode=0o500)
        try:
            (locked / "probe").write_text("")
        except PermissionError:
            return True
        finally:
            locked.chmod(0o700)
        return False


@pytest.mark.skipif(not _permissions_bind(), reason="a 0500 directory is writable here (root)")
@pytest.mark.parametrize(
    "args", [["reserve", "a.py"], ["release", "--all"], ["brief", "set-goal", "g"]]
)
def test_a_directory_without_write_permission_is_one_line(run: Run, args: list[str]) -> None:
    run.populate()
    dirs = [run.ledger, run.state_dir, *(run.state_dir / "agent-hooks").rglob("*")]
    for path in dirs:
        if path.is_dir():
            path.chmod(0o500)
    try:
        one_line_error(run(*args), "Permission denied")
    finally:
        for path in dirs:
            if path.is_dir():
                path.chmod(0o700)


# --- a state directory that is a file ---------------------------------------------


@pytest.mark.parametrize("args", COMMANDS, ids=ids(COMMANDS))
def test_a_state_directory_that_is_a_file_is_one_line(run: Run, args: list[str]) -> None:
    run.state_dir.write_text("not a directory\n")
    result = run(*args)
    ok_or_one_line_error(result)
    if result.exit_code and args[0] not in ("session", "release"):
        assert f"{run.state_dir} is not a directory" in result.stderr, result.stderr
    assert run.state_dir.read_text() == "not a directory\n"


@pytest.mark.parametrize(
    "args", [["status"], ["trail"], ["agents"], ["cleanup"], ["brief", "set-goal", "g"]]
)
def test_commands_that_need_the_state_directory_say_it_is_a_file(run: Run, args: list[str]) -> None:
    run.state_dir.write_text("")
    one_line_error(run(*args), f"{run.state_dir} is not a directory")


# --- lone surrogates in state files and ledgers -----------------------------------


@pytest.fixture
def surrogates(run: Run) -> Run:
    """A state file and a ledger holding lone surrogates, as `\\ud800` escapes
    (valid JSON; another tool, or a non-UTF-8 file name, put them there)."""
    run.populate()
    state = run.state_dir / f"state-{ME}.json"
    doc = json.loads(state.read_text())
    doc.update(
        conversation_id="conv-\ud800",
        files_read=[f"{run.project}/x\ud800.py"],
        files_modified=[f"{run.project}/caf\udcff.py"],
    )
    state.write_text(json.dumps(doc))
    ledger = run.ledger / "reservations.json"
    data = json.loads(ledger.read_text())
    data["reservations"][0].update(reason="why \ud800", pattern="z\udcff.py")
    ledger.write_text(json.dumps(data))
    (run.ledger / "reservations.cache").unlink()
    write_state(run.state_dir, "other", {"registered": True, "project_root": "/p/caf\udcff"})
    return run


SURROGATE_COMMANDS = [
    ["agents"],
    ["status", "other", "--json"],
    ["status"],
    ["status", "--json"],
    ["trail"],
    ["trail", "--json"],
    ["agents", "--json"],
    ["freshness"],
    ["freshness", "--json"],
    ["reservations"],
    ["reservations", "--json"],
    ["reserve", "a.py"],
    ["release", "--all"],
    ["renew"],
]


# What each command shows of the surrogates the fixture planted: `\\ud800` escapes in text
# (the reservations table, whose columns are cut to width, shows `?`), JSON's own escapes.
SHOWN: dict[str, list[str]] = {
    "agents": ["/p/caf\\udcff"],
    "status other --json": ["/p/caf\\udcff"],
    "status": ["conv-\\ud800"],
    "status --json": ["conv-\\ud800"],
    "trail": ["conv-\\ud800", "caf\\udcff.py", "x\\ud800.py"],
    "trail --json": ["conv-\\ud800", "caf\\udcff.py", "x\\ud800.py"],
    "agents --json": ["/p/caf\\udcff"],
    "freshness": [],  # it names no file when none changed
    "freshness --json": ["conv-\\ud800"],
    "reservations": ["z?.py", "why ?"],
    "reservations --json": ["z\\udcff.py", "why \\ud800"],
    "reserve a.py": [],  # it names only what it reserved
    "release --all": ["z\\udcff.py"],
    "renew": ["z\\udcff.py", "why \\ud800"],
}


@pytest.mark.parametrize("args", SURROGATE_COMMANDS, ids=ids(SURROGATE_COMMANDS))
def test_lone_surrogates_in_a_state_file_or_ledger_are_shown_escaped(
    surrogates: Run, args: list[str]
) -> None:
    result = surrogates(*args)
    assert result.exit_code == 0, (result.output, repr(result.exception))
    result.stdout_bytes.decode("utf-8")  # strict: no surrogate reached the output raw
    for shown in SHOWN[" ".join(args)]:
        assert shown in result.stdout, (shown, result.stdout)
    if "--json" in args:  # the escapes read back as the surrogates
        values = "\n".join(strings(json.loads(result.stdout)))
        for shown in SHOWN[" ".join(args)]:
            assert shown.encode().decode("unicode_escape") in values, shown


def strings(doc: Any) -> list[str]:
    """Every string in a JSON document, keys and values."""
    if isinstance(doc, str):
        return [doc]
    if isinstance(doc, list):
        return [s for item in doc for s in strings(item)]
    if isinstance(doc, dict):
        return [s for k, v in doc.items() for s in [k, *strings(v)]]
    return []
    for path, content in snapshot(surrogates.ledger, surrogates.state_dir).items():
        if isinstance(content, bytes) and path.endswith(".json"):
            content.decode("utf-8")


def test_status_and_trail_show_the_surrogates_as_escapes(surrogates: Run) -> None:
    assert "conv-\\ud800" in surrogates.ok("status").stdout
    text = surrogates.ok("trail").stdout
    assert "x\\ud800.py" in text and "caf\\udcff.py" in text
    data = json.loads(surrogates.ok("trail", "--json").stdout)
    assert data["trails"][0]["files_read"] == [f"{surrogates.project}/x\ud800.py"]


def test_release_all_releases_a_reservation_whose_ledger_holds_surrogates(
    surrogates: Run,
) -> None:
    released = json.loads(surrogates.ok("release", "--all", "--json").stdout)["released"]
    assert [r["pattern"] for r in released] == ["z\udcff.py"]
    assert json.loads(surrogates.ok("reservations", "--json").stdout) == []


@pytest.mark.parametrize(
    "data",
    [
        {"path": "x\ud800"},
        ["\udcff", {"k\udfff": "v"}],
        "\ud800\udc00",
        {"fine": "é 😀", "n": 1.5, "none": None},
    ],
)
def test_emit_json_escapes_lone_surrogates(
    data: object, capsys: pytest.CaptureFixture[str]
) -> None:
    emit_json(data)
    out = capsys.readouterr().out
    out.encode("utf-8")
    assert json.loads(out) == data or data == "\ud800\udc00"


# --- --ttl --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ttl", "why"),
    [
        ("1" * 5000, "maximum is 7d"),
        ("1" * 5000 + "m", "maximum is 7d"),
        ("²", "expected a number"),
        ("\u0661h", "expected a number"),
        ("1\x00h", "expected a number"),
    ],
    ids=["5000 digits", "5000 digits and a unit", "superscript two", "arabic digit", "nul"],
)
@pytest.mark.parametrize("command", ["reserve", "renew"])
def test_a_ttl_python_cannot_read_is_one_line(run: Run, ttl: str, why: str, command: str) -> None:
    args = ["reserve", "a.py"] if command == "reserve" else ["renew"]
    error = one_line_error(run(*args, "--ttl", ttl), "--ttl", why)
    assert len(error) < 200


def test_a_ttl_with_leading_zeros_is_read(run: Run) -> None:
    assert "60 min" in run.ok("reserve", "a.py", "--ttl", "0" * 40 + "1h").stdout


@pytest.mark.parametrize("locale", ["C", "C.UTF-8"])
@pytest.mark.parametrize("args", [["status"], ["trail"], ["trail", "--json"]])
def test_a_real_process_prints_surrogates_escaped_whatever_the_locale(
    surrogates: Run, locale: str, args: list[str]
) -> None:
    """Python's own stdout is strict (or, under the C locale, takes `\\udcff` back to
    its byte but fails on `\\ud800`): the CLI makes it write escapes."""
    import subprocess
    import sys

    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(surrogates.home),
        "CLAUDE_PROJECT_DIR": str(surrogates.project),
        "AGENT_NAME": ME,
        "LC_ALL": locale,
        "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src"),
    }
    proc = subprocess.run(
        [sys.executable, "-m", "agent_hooks.cli", *args],
        capture_output=True,
        env=env,
        cwd=surrogates.project,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert b"\\ud800" in proc.stdout and proc.stderr == b""
    proc.stdout.decode("utf-8")


# --- read-only commands create nothing ------------------------------------------

READ_ONLY: list[list[str]] = [
    ["status"],
    ["status", "--json"],
    ["status", "--agent", "someone"],
    ["trail"],
    ["trail", "someone", "--json"],
    ["trail", "nobody"],
    ["freshness"],
    ["freshness", "--json"],
    ["agents"],
    ["agents", "--json"],
    ["reservations"],
    ["reservations", "--json"],
    ["reservations", "--all-projects"],
    ["reservations", "--dropped"],
    ["check", "a.py"],
    ["check", "a.py", "--json"],
    ["context", "list"],
    ["context", "list", "--all"],
    ["context", "find", "t"],
    ["context", "find", "t", "--all"],
    ["workspace", "show"],
    ["brief", "show"],
    ["strict"],
    ["settings"],
    ["overlaps"],
    ["overlaps", "--all"],
    ["cleanup", "--dry-run"],
    ["workspace", "sweep", "--dry-run"],
    ["session", "status"],
    ["session", "list"],
]


@pytest.mark.parametrize("args", READ_ONLY, ids=ids(READ_ONLY))
@pytest.mark.parametrize("agent", ["newbie", None], ids=["a new name", "no AGENT_NAME"])
def test_read_only_commands_create_nothing_in_a_fresh_home(
    run: Run, args: list[str], agent: str | None
) -> None:
    """A person looking around never leaves a state file, a directory or a log."""
    before = snapshot(run.home, run.project)
    result = run(*args, agent=agent)
    ok_or_one_line_error(result)
    assert snapshot(run.home, run.project) == before
    assert not run.state_dir.exists()


@pytest.mark.parametrize("args", READ_ONLY, ids=ids(READ_ONLY))
def test_read_only_commands_change_nothing_in_a_home_in_use(run: Run, args: list[str]) -> None:
    run.populate()
    write_state(run.state_dir, "someone", {"registered": True, "project_root": str(run.project)})
    before = snapshot(run.home, run.project)
    ok_or_one_line_error(run(*args, agent="newbie"))
    assert snapshot(run.home, run.project) == before


def test_table_aligns_columns_under_the_header() -> None:
    from agent_hooks.cli._common import table

    assert table(("NAME", "N", "WHERE"), [("a", 5, "/x"), ("long name", 12, "-")], {1}) == [
        "NAME        N  WHERE",
        "a           5  /x",
        "long name  12  -",
    ]


def test_an_error_naming_a_file_with_a_newline_stays_on_one_line(tmp_path: Path) -> None:
    home = tmp_path / "odd\nhome\x1b[31m"
    home.mkdir()
    (home / ".claude").write_text("")
    result = Run(home, tmp_path)("status")
    error = one_line_error(result, "is not a directory", "odd\\nhome\\x1b[31m")
    assert "\x1b" not in error
