"""The house's rules, as tests: module names that need no alias, a shell analysis
that knows nothing of the rest, one module per client, layers (each room imports
only the rooms below it, `TYPE_CHECKING` imports counted, and no module imports
itself round a loop), and docs — docstrings, ADRs, the README — that name, in
backticks, only modules, packages, files and commands that exist
(docs/adr/0013-package-layout-and-hot-path-rule.md)."""

from __future__ import annotations

import ast
import re
import tokenize
from collections import Counter
from pathlib import Path

import pytest

import import_graph

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
PACKAGE = SRC / "agent_hooks"
MODULES = import_graph.modules()  # dotted name -> path
GRAPH = import_graph.edges()
# Module names the house used before (issue 17) that exist no more: a doc naming one
# has drifted. (Names that are also ordinary words are left out: `request`, `store`.)
GONE = frozenset(
    {
        "enforcement",
        "bash_decision",
        "bash_after",
        "bash_writes",
        "bash_lexer",
        "bash_warning",
        "lease_upkeep",
        "lease_text",
        "reservation_text",
        "pattern_text",
        "registry",
        "git_guard_check",
        "git_guard_refs",
        "git_guard_script",
        "cli_command.py",
        "hook_runtime.py",
        "work_session_yaml",  # the work sessions' YAML reader is yaml_subset
        "mcp_agent_mail_store",  # mcp_agent_mail's grants are recorded by mcp_agent_mail_hook
    }
)
# Packages the house had before (the shell analysis was reservations' `bash`).
GONE_PACKAGES = frozenset({"bash"})
ALLOWED_ALIASES = {("agent_hooks.posix_fs", "fs")}  # the one abbreviation, everywhere


def _basename(dotted: str) -> str:
    return dotted.rpartition(".")[2]


def test_module_names_are_unique_outside_the_cli() -> None:
    """Read without an alias at the import: no two modules share a name (the CLI's
    command modules are named after their commands and never imported together)."""
    names = Counter(
        _basename(name)
        for name, path in MODULES.items()
        if path.name != "__init__.py" and not name.startswith("agent_hooks.cli.")
    )
    assert [name for name, n in names.items() if n > 1] == []


def _aliases(path: Path) -> list[tuple[str, str, int]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.module.startswith("agent_hooks")
        ):
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if alias.asname and alias.asname != alias.name and full in MODULES:
                    found.append((full, alias.asname, node.lineno))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("agent_hooks") and alias.asname:
                    found.append((alias.name, alias.asname, node.lineno))
    return found


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_module_is_imported_under_another_name(name: str) -> None:
    bad = [a for a in _aliases(MODULES[name]) if (a[0], a[1]) not in ALLOWED_ALIASES]
    assert bad == [], f"{name} imports {bad}"


def test_the_shell_analysis_is_a_leaf() -> None:
    """`shell/` reads command lines and patches; it imports nothing else of ours."""
    outside = [
        (name, edge.imported)
        for name, edges in GRAPH.items()
        if name.startswith("agent_hooks.shell")
        for edge in edges
        if edge.imported.startswith("agent_hooks")
        and not edge.imported.startswith("agent_hooks.shell")
    ]
    assert outside == []


def test_every_client_in_the_table_has_its_module_and_protocol() -> None:
    """The table in `clients/` names every client module (the interface itself is the type
    checker's: `clients.client.Client`); each names its adapters and says how it is known."""
    from agent_hooks.clients.client_table import CLIENTS, DEFAULT_CLIENT

    assert DEFAULT_CLIENT in CLIENTS
    labels, variables = set(), []
    for name, module_name in CLIENTS.items():
        module = __import__(f"agent_hooks.clients.{module_name}", fromlist=["NAME"])
        assert name == module.NAME and module.LABEL and module.LABEL not in labels
        labels.add(module.LABEL)
        for attribute in (
            "EVENTS",
            "CONTEXT_LIMIT",
            "CONTEXT_EVENTS",
            "UNFOLLOWED",
            "TRANSCRIPTS",
            "SHORT",
            "SHELL_COMMAND",
        ):
            assert hasattr(module, attribute), (name, attribute)
        for function in ("hook_event", "tool_use", "agent_pid", "holder_pid", "render"):
            assert callable(getattr(module, function)), (name, function)
        for adapter in set(module.EVENTS.values()):
            assert f"agent_hooks.hooks.{adapter}" in MODULES, (name, adapter)
        assert module.SESSION_VARIABLES and all(v.isupper() for v in module.SESSION_VARIABLES)
        assert module.PROCESS_NAMES or module.SCRIPT_WORDS, name  # found as a process
        variables += module.SESSION_VARIABLES
    assert len(variables) == len(set(variables))
    on_disk = {_basename(n) for n in MODULES if n.startswith("agent_hooks.clients.")}
    assert on_disk == set(CLIENTS.values()) | {"client", "client_table", "envelope"}


CLIENT_VARIABLE = re.compile(r"\b(CLAUDE|CODEX|GEMINI|QWEN|OPENCODE)_[A-Z0-9_]+\b")
# Client-specific names outside `clients/` and `install/` that stay, each with its reason.
CLIENT_NAMES_ALLOWED = {
    # agent-hooks' own state directory is `~/.claude` for every client (ADR-0002), moved
    # where Claude Code's own is moved
    ("agent_hooks.identity", "CLAUDE_CONFIG_DIR"),
}


def _code_strings(path: Path) -> list[tuple[int, str]]:
    """Every string constant of a module's code (docstrings left out), with its line."""
    tree = ast.parse(path.read_text())
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
    ]


def client_specific(text: str, names: set[str], labels: set[str]) -> str | None:
    """The client-specific name code holds in `text`, if any: a client's name or label as
    the whole string, a client's variable as the whole string or expanded in shell text."""
    if text in names or text in labels:
        return text
    found = CLIENT_VARIABLE.search(text)
    if found and (
        text == found.group(0) or f"${found.group(0)}" in text or "${" + found.group(0) in text
    ):
        return found.group(0)
    return None


def test_no_client_specific_name_outside_clients_and_install() -> None:
    """What only a client knows — its name, its label, its variables — is in its module
    (`clients/`) and its installer (`install/`): code anywhere else asks the client."""
    from agent_hooks.clients import client_table

    names = set(client_table.CLIENTS)
    labels = {client.LABEL for client in client_table.modules()}
    bad = []
    for name, path in sorted(MODULES.items()):
        if name.startswith(("agent_hooks.clients.", "agent_hooks.install.")):
            continue
        for line, text in _code_strings(path):
            found = client_specific(text, names, labels)
            if found is not None and (name, found) not in CLIENT_NAMES_ALLOWED:
                bad.append(f"{path.relative_to(ROOT)}:{line}: {found}")
    assert bad == []


# Where a hook's payload may be read: the client layer (and the hook runtime, which
# hands it to the client), and the demo, which plays Claude Code and writes payloads.
PAYLOAD_READERS = ("agent_hooks.clients.", "agent_hooks.install.")
PAYLOAD_READERS_ALSO = {"agent_hooks.hooks.hook_runtime", "agent_hooks.cli.demo"}


def test_adapters_and_domain_code_never_read_a_payload() -> None:
    """Adapters and domain code read the client's `HookEvent` and `ToolUse`, never a
    payload's keys: no `.payload` outside the client layer."""
    bad = []
    for name, path in sorted(MODULES.items()):
        if name.startswith(PAYLOAD_READERS) or name in PAYLOAD_READERS_ALSO:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr == "payload":
                bad.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert bad == []


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("CLAUDE_CODE_SESSION_ID", "CLAUDE_CODE_SESSION_ID"),
        ('[ "$j_who" = "${AGENT_NAME:-}|${CLAUDE_CODE_SESSION_ID:-}" ]', "CLAUDE_CODE_SESSION_ID"),
        ("codex", "codex"),
        ("Gemini CLI", "Gemini CLI"),
        ("The project (default: the project variable its client sets)", None),
        ("a .claude directory", None),
    ],
)
def test_the_client_name_check_itself(text: str, found: str | None) -> None:
    """The control: a variable, a shell expansion of one, a name and a label are caught."""
    from agent_hooks.clients import client_table

    labels = {client.LABEL for client in client_table.modules()}
    assert client_specific(text, set(client_table.CLIENTS), labels) == found


# ---------------------------------------------------------------- docs that cannot drift

BACKTICKED = re.compile(r"`([^`\n]{2,120})`")
PACKAGES = {_basename(n) for n, p in MODULES.items() if p.name == "__init__.py"} - {"agent_hooks"}
BASENAMES = {_basename(n) for n in MODULES}


def _top_level_names(dotted: str) -> set[str]:
    tree = ast.parse(MODULES[dotted].read_text())
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
            for t in node.targets:
                if isinstance(t, ast.Tuple):
                    names.update(e.id for e in t.elts if isinstance(e, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.ImportFrom):
            names.update(a.asname or a.name for a in node.names)
    return names


def _resolves(dotted: str) -> bool:
    """A dotted name under agent_hooks: a module, or a module and one of its names."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        module = ".".join(parts[:cut])
        if module in MODULES:
            rest = parts[cut:]
            if not rest:
                return True
            if rest[0] in _top_level_names(module):
                return True
            # a class's method or attribute: `tool_call.ToolCall.places`
            return f"{module}.{rest[0]}" in MODULES
    return False


FILE_SUFFIXES = (
    "json",
    "sh",
    "cache",
    "lock",
    "md",
    "toml",
    "yaml",
    "log",
    "jsonl",
    "txt",
    "tmp",
    "pyc",
    "cfg",
)


def problem(token: str) -> str | None:
    """Why the backticked `token` names something that does not exist, or None."""
    word = token.strip()
    if word.rpartition(".")[2] in FILE_SUFFIXES and "/" not in word:
        return None  # a file name (`install.sh`, `reservations.json`), not a module
    if word.startswith("agent-hooks ") and not word.startswith("agent-hooks --"):
        command = word.split()[1]
        if re.fullmatch(r"[a-z][a-z-]*", command) and command not in _commands():
            return f"no command `agent-hooks {command}`"
        return None
    if re.fullmatch(r"agent_hooks(\.\w+)+", word):
        return None if _resolves(word) else f"no module or name {word}"
    if re.fullmatch(r"…\.?\w+(\.\w+)+", word):  # `…shell.writes`: the end of a module's name
        tail = word.lstrip("….")
        ends = any(name == tail or name.endswith("." + tail) for name in MODULES)
        return None if ends else f"no module ends in {tail}"
    if (
        re.fullmatch(r"[a-z_]+(\.[a-zA-Z_]+)+", word)
        and f"agent_hooks.{word.split('.')[0]}" in MODULES
        and not word.endswith(".py")  # a file's name: tool_call.py
    ):
        # a package's module (`gate.places`) or a top-level module's name (`writers.Writer`)
        return None if _resolves("agent_hooks." + word) else f"no module or name agent_hooks.{word}"
    if (
        re.fullmatch(r"(src/agent_hooks|tests|docs|bench|hooks)/[\w./-]*\.\w+", word)
        and "*" not in word
    ):
        source = word[:-1] if word.endswith(".pyc") else word  # compiled by install.sh
        exists = (ROOT / source).exists() or (PACKAGE / source).exists()
        return None if exists else f"no file {word}"
    if re.fullmatch(r"[a-z_]+(/[a-z_]+)+\.py", word) and word.partition("/")[0] in PACKAGES | {
        "hooks"
    }:
        return None if (PACKAGE / word).exists() or (ROOT / word).exists() else f"no file {word}"
    if re.fullmatch(r"(src/agent_hooks|tests|docs|bench)(/\w+)+/", word):
        return None if (ROOT / word).is_dir() else f"no directory {word}"
    if re.fullmatch(r"[a-z_]+/", word) and word[:-1] in {"reservations", "leases", "gate", "shell"}:
        return None
    if word in GONE:
        return f"`{word}` was renamed (issue 17)"
    return None


_COMMANDS: list[set[str]] = []


def _commands() -> set[str]:
    if not _COMMANDS:
        from agent_hooks.cli import main

        found = set(main.commands)
        for command in main.commands.values():
            found.update(getattr(command, "commands", {}))
        _COMMANDS.append(found)
    return _COMMANDS[0]


def _docstrings(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                line = node.body[0].lineno if node.body else 1
                found.append((line, doc))
    return found


def _comments(path: Path) -> list[tuple[int, str]]:
    with path.open("rb") as source:
        return [
            (token.start[0], token.string[1:])
            for token in tokenize.tokenize(source.readline)
            if token.type == tokenize.COMMENT
        ]


# Names written without backticks too: a dotted module path (`agent_hooks.gate.places`,
# `gate.places`), a file of ours (under tests/, src/agent_hooks/, docs/adr/, or a
# package's `gate/places.py`), a bare file name with an underscore or a `test_`
# prefix (`tool_call.py`; one-word examples such as `app.py`, and `src/app.py`,
# are a user's files, not ours), a retired module's or package's name, and a
# measured client reference (kept verbatim in docs/reference/).
REFERENCE = ROOT / "docs" / "reference"
_DOTTED = re.compile(r"(?<![\w./-])(agent_hooks(?:\.\w+)+)")
_RELATIVE = re.compile(r"(?<![\w./\[-])([a-z_]+)\.([a-z_]\w*)(?![\w/-])")
_PATH = re.compile(
    r"(?<![\w./-])((?:src/agent_hooks|tests|docs|bench|hooks|[a-z_]+)(?:/[\w.-]*\w)+/?)(?![\w*/-])"
)
_BARE_PY = re.compile(r"(?<![\w./-])(\w+)\.py(?![\w/-])")
_CITED = re.compile(r"(?<![\w.-])((?:[\w.~-]*/)*reference/[\w.*/-]*[\w*])")
_GONE_PACKAGE = re.compile(r"(?<![\w./\[-])(" + "|".join(GONE_PACKAGES) + r")\.([a-z_]\w*)")
_MUTANT = re.compile(r"x\w*__mutmut_\d+")  # mutmut's name for one mutant of a function
_PY_FILES = {
    path.name for top in ("src", "tests", "bench", "hooks") for path in (ROOT / top).rglob("*.py")
} | {path.name for path in ROOT.glob("*.py")}


def _resolves_bare(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        if ".".join(parts[:cut]) in MODULES and parts[cut:] and _MUTANT.fullmatch(parts[cut]):
            return True
    return _resolves(dotted)


def bare_problems(text: str) -> list[str]:
    """Why each name `text` gives without backticks names nothing that exists."""
    found = []
    for dotted in _DOTTED.findall(text):
        if not _resolves_bare(dotted):
            found.append(f"no module or name {dotted}")
    for package, name in _RELATIVE.findall(text):
        known = package in PACKAGES and (name in BASENAMES or name in GONE)
        if known and not _resolves(f"agent_hooks.{package}.{name}"):
            found.append(f"no module or name agent_hooks.{package}.{name}")
    for path in _PATH.findall(text):
        top = path.partition("/")[0]
        ours = path.startswith(("src/agent_hooks/", "docs/adr/")) or top in {
            "tests",
            "bench",
            "hooks",
        }
        if not (ours or (top in PACKAGES and path.endswith(".py"))) or "/reference/" in f"/{path}":
            continue  # `kept/objects/` in a ledger is no path of the package
        if not (path.endswith("/") or re.search(r"\.(py|md|json|sh|js|mjs|toml)$", path)):
            continue
        if not ((ROOT / path).exists() or (PACKAGE / path).exists()):
            found.append(f"no file {path}")
    for stem in _BARE_PY.findall(text):
        if stem in GONE:
            found.append(f"{stem}.py was renamed (issue 17)")
        elif (stem.startswith("test_") or "_" in stem.strip("_")) and f"{stem}.py" not in _PY_FILES:
            found.append(f"no file {stem}.py")
    for package, name in _GONE_PACKAGE.findall(text):
        found.append(f"{package}.{name}: the {package} package is gone")
    for word in re.findall(r"\b\w+\b", text):
        if "_" in word and word in GONE:
            found.append(f"{word} was renamed")
    for cited in _CITED.findall(text):
        where = cited if cited.startswith("docs/") else "docs/" + cited.partition("reference/")[2]
        where = where if where.startswith("docs/reference/") else "docs/reference/" + where[5:]
        if not cited.startswith(("docs/reference/", "reference/")):
            found.append(f"{cited} is not in the repository (docs/reference/ is)")
        elif not list(ROOT.glob(where)):
            found.append(f"no reference {cited}")
    return found


DOCS = sorted(
    [ROOT / "README.md", *(p for p in (ROOT / "docs").rglob("*.md") if REFERENCE not in p.parents)]
)
PYTHON = sorted(
    [
        *MODULES.values(),
        *(ROOT / "tests").rglob("*.py"),
        *(ROOT / "bench").rglob("*.py"),
        *(ROOT / "hooks").rglob("*.py"),
    ]
)


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_readme_and_the_adrs_name_only_what_exists(path: Path) -> None:
    bad = [
        f"{path.name}:{n}: {why}"
        for n, line in enumerate(path.read_text().splitlines(), 1)
        for why in [*map(problem, BACKTICKED.findall(line)), *bare_problems(line)]
        if why is not None
    ]
    assert bad == []


def test_docstrings_and_comments_name_only_what_exists() -> None:
    """In agent_hooks, the tests, the benchmarks and the entry scripts."""
    bad = []
    for path in PYTHON:
        for line, text in _docstrings(path) + _comments(path):
            for why in [*map(problem, BACKTICKED.findall(text)), *bare_problems(text)]:
                if why is not None:
                    bad.append(f"{path.relative_to(ROOT)}:{line}: {why}")
    assert bad == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("agent_hooks.gate.places.resolve_entry and gate.shell_gate", []),
        (
            "agent_hooks.reservations.bash_after",
            ["no module or name agent_hooks.reservations.bash_after", "bash_after was renamed"],
        ),
        (
            "the old reservations.enforcement",
            ["no module or name agent_hooks.reservations.enforcement"],
        ),
        ("[hooks.state] of Codex's config, hooks.json", []),
        ("tests/unit/gate/test_places.py and shell/prefilter.py", []),
        ("tests/unit/gate/test_nowhere.py", ["no file tests/unit/gate/test_nowhere.py"]),
        ("docs/adr/0099-nothing.md", ["no file docs/adr/0099-nothing.md"]),
        ("src/app.py, app.py, x.py, docs/notes.md", []),  # a user's files
        ("kept/objects/ and kept/settings.json in a ledger", []),  # not the package's
        ("kept/kept_nowhere.py", ["no file kept/kept_nowhere.py"]),
        ("see test_git_guard_script.py", ["no file test_git_guard_script.py"]),
        (
            "reservation_text.py",
            ["reservation_text.py was renamed (issue 17)", "reservation_text was renamed"],
        ),
        ("read by work_session_yaml", ["work_session_yaml was renamed"]),
        (
            "…bash.writes, bash.lexer",
            ["bash.writes: the bash package is gone", "bash.lexer: the bash package is gone"],
        ),
        ("agent_hooks.agents.sweep.x__remove_state__mutmut_7", []),
        ("docs/reference/codex-0.169.0/PROTOCOL.md and reference/OTHER-CLIENTS.md", []),
        ("reference/*/PROTOCOL.md", []),
        ("reference/codex-9.9.9/PROTOCOL.md", ["no reference reference/codex-9.9.9/PROTOCOL.md"]),
        (
            "shared/reference/codex-0.169.0/PROTOCOL.md",
            [
                "shared/reference/codex-0.169.0/PROTOCOL.md is not in the repository (docs/reference/ is)"
            ],
        ),
    ],
)
def test_the_bare_name_check_itself(text: str, expected: list[str]) -> None:
    """The control for names without backticks: what is ours and gone is caught, a
    user's example files are not."""
    assert bare_problems(text) == expected


def test_the_client_references_are_kept_whole() -> None:
    """docs/reference/ holds the measured protocols the code cites, as measured: each
    client version's PROTOCOL.md (or NOTES.md), text only."""
    kept = sorted(str(p.relative_to(REFERENCE)) for p in REFERENCE.rglob("*") if p.is_file())
    assert kept and all(name.endswith(".md") for name in kept), kept


@pytest.mark.parametrize(
    ("token", "expected"),
    [
        ("agent_hooks.gate.edit_gate.decide", None),
        ("gate.tool_call.ToolCall", None),
        (
            "agent_hooks.reservations.enforcement",
            "no module or name agent_hooks.reservations.enforcement",
        ),
        ("reservations.decision", "no module or name agent_hooks.reservations.decision"),
        ("bash_writes", "`bash_writes` was renamed (issue 17)"),
        ("agent-hooks reserve", None),
        ("agent-hooks reserv", "no command `agent-hooks reserv`"),
        ("src/agent_hooks/gate/places.py", None),
        ("src/agent_hooks/gate/nowhere.py", "no file src/agent_hooks/gate/nowhere.py"),
        ("shell/prefilter.py", None),
        ("reservations/bash/prefilter.py", "no file reservations/bash/prefilter.py"),
        ("tests/unit/shell/", None),
        ("tests/unit/reservations/bash/", "no directory tests/unit/reservations/bash/"),
        ("…shell.writes", None),
        ("…bash.writes", "no module ends in bash.writes"),
        ("writers.Writer", None),
        ("writers.CLIENT_NAMES", "no module or name agent_hooks.writers.CLIENT_NAMES"),
    ],
)
def test_the_drift_check_itself(token: str, expected: str | None) -> None:
    """The control: a renamed module, a misspelt command and a missing file are caught."""
    assert problem(token) == expected


# ---------------------------------------------------------------- layers

# Every import, TYPE_CHECKING ones included: a module that needs another's types
# depends on it as much as one that calls it (a cycle hid there once).
COUNT_TYPE_CHECKING = True
TYPED_GRAPH = import_graph.edges(type_checking=COUNT_TYPE_CHECKING)


# Top-level modules that are a room of their own (the rest of the top level is `core`).
TOP_LEVEL_ROOMS = {"agent_hooks.tool_use": "tool_use", "agent_hooks.storage": "storage"}


def room(module: str) -> str:
    """The room a module lives in: its package under agent_hooks, `tool_use`,
    `storage`, or `core` (the package itself and the other top-level modules)."""
    parts = module.split(".")
    if len(parts) > 2 or (len(parts) == 2 and MODULES[module].name == "__init__.py"):
        return parts[1]
    return TOP_LEVEL_ROOMS.get(module, "core")


# The layers, lowest first (docs/architecture.md draws them). A module imports
# modules of its own room and of rooms in lower layers, never a room of its own
# layer or of a higher one: so no two rooms import each other, the domain never
# imports the adapters (`gate/`, `clients/`, `hooks/`) or the command line, and a
# new room is given its place here before it can land.
LAYERS: list[tuple[str, frozenset[str]]] = [
    ("the shell analysis: a leaf", frozenset({"shell"})),
    ("what one tool call does, whichever client made it", frozenset({"tool_use"})),
    (
        "the clients: each one's payloads read into a HookEvent and a ToolUse, its answer, "
        "what only it knows (its label, variables, processes), and the table of them",
        frozenset({"clients"}),
    ),
    ("the core: files, JSON, who and where, times, settings", frozenset({"core"})),
    ("locks and atomic writes", frozenset({"storage"})),
    ("an agent's own state", frozenset({"agents"})),
    ("leases", frozenset({"leases"})),
    ("reservations", frozenset({"reservations"})),
    (
        "the ledger: where it lives, its repository, every ledger known, other machines",
        frozenset({"ledger"}),
    ),
    ("the git guard", frozenset({"git_guard"})),
    (
        "rooms of one concern",
        frozenset({"briefings", "workspaces", "work_sessions", "interop", "kept"}),
    ),
    ("the decision on one tool call", frozenset({"gate"})),
    ("the hook adapters", frozenset({"hooks"})),
    ("installation", frozenset({"install"})),
    ("the command line", frozenset({"cli"})),
]
LAYER = {name: n for n, (_, rooms) in enumerate(LAYERS) for name in rooms}

# Imports that still point up or sideways, each with why and what ends it. The list
# only shrinks: a new one fails `test_each_layer_imports_only_the_layers_below`, and
# one that is gone must leave the list (`test_every_exception_still_exists`).
_ANSWER = (
    "a client renders a hook_runtime.Answer; the Answer moves below the clients, beside "
    "the HookEvent and the ToolUse in tool_use"
)
_INSTALL = (
    "a fact of the installation a hook tells (where the CLI is, whether the plugin's "
    "install is whole); it moves below the hooks (install/ is being changed now)"
)
EXCEPTIONS: dict[tuple[str, str], str] = {
    ("agent_hooks.reservations.blocking", "agent_hooks.ledger.remote_view"): (
        "another machine's reservation counts while that machine is heard from; blocking "
        "moves into ledger/ beside reservation_store once gate/shell_gate.py, being changed "
        "now, can import it from there"
    ),
    ("agent_hooks.ledger.known_ledgers", "agent_hooks.git_guard.guard_record"): (
        "the repositories a git guard was installed in name ledgers too; guard_record moves "
        "below the ledger (install/purge.py imports it by its path and is being changed now)"
    ),
    ("agent_hooks.clients.claude_code", "agent_hooks.hooks.hook_runtime"): _ANSWER,
    ("agent_hooks.clients.codex", "agent_hooks.hooks.hook_runtime"): _ANSWER,
    ("agent_hooks.clients.gemini", "agent_hooks.hooks.hook_runtime"): _ANSWER,
    ("agent_hooks.clients.opencode", "agent_hooks.hooks.hook_runtime"): _ANSWER,
    ("agent_hooks.clients.qwen_code", "agent_hooks.hooks.hook_runtime"): _ANSWER,
    ("agent_hooks.clients.client", "agent_hooks.hooks.hook_runtime"): _ANSWER,
    ("agent_hooks.hooks.session_start", "agent_hooks.install.cli_command"): _INSTALL,
    ("agent_hooks.hooks.plugin_session_start", "agent_hooks.install.install_check"): _INSTALL,
}
# Domain modules that still take a hook's whole `HookContext` (its payload, client
# and log) instead of plain values, and why: the list only shrinks.
TAKES_HOOK_CONTEXT = {
    "agent_hooks.interop.mcp_agent_mail_hook": (
        "records the grants of the MCP call the client read (ToolUse.mcp) with what it takes "
        "from the hook's context (state directory, project, agent, conversation, holder, "
        "log); it takes a Repo, a Writer and the log next, as the gate does"
    ),
}
for _module in TAKES_HOOK_CONTEXT:
    EXCEPTIONS[(_module, "agent_hooks.hooks.hook_runtime")] = TAKES_HOOK_CONTEXT[_module]


def upward(graph: dict[str, list[import_graph.Edge]]) -> dict[tuple[str, str], int]:
    """Every import of our modules that reaches a room of the importer's own layer or
    of a higher one: (importer, imported) -> line."""
    found: dict[tuple[str, str], int] = {}
    for importer, edges in graph.items():
        for edge in edges:
            if edge.imported not in MODULES:
                continue
            here, there = room(importer), room(edge.imported)
            if here != there and LAYER[there] >= LAYER[here]:
                found.setdefault((importer, edge.imported), edge.line)
    return found


def test_every_room_has_its_layer() -> None:
    assert {room(name) for name in MODULES} - set(LAYER) == set()
    assert len(LAYER) == sum(len(rooms) for _, rooms in LAYERS)  # a room in one layer only


def test_each_layer_imports_only_the_layers_below() -> None:
    bad = [
        f"{importer}:{line} imports {imported} ({room(importer)} may not import {room(imported)})"
        for (importer, imported), line in sorted(upward(TYPED_GRAPH).items())
        if (importer, imported) not in EXCEPTIONS
    ]
    assert bad == []


def test_every_exception_still_exists() -> None:
    """The exceptions only shrink: one whose import is gone leaves the list."""
    assert set(EXCEPTIONS) - set(upward(TYPED_GRAPH)) == set()


def test_no_module_imports_itself_round_a_loop() -> None:
    """No cycle of imports between modules, TYPE_CHECKING ones included (a cycle
    through an excepted import is that exception's)."""
    cut = {
        importer: [e for e in edges if (importer, e.imported) not in EXCEPTIONS]
        for importer, edges in TYPED_GRAPH.items()
    }
    assert import_graph.cycles(cut) == []


@pytest.mark.parametrize(
    ("importer", "line", "allowed"),
    [
        ("agent_hooks.leases.lease", "from agent_hooks.reservations import reservation", False),
        ("agent_hooks.reservations.pattern", "from agent_hooks.leases import lease", True),
        (
            "agent_hooks.workspaces.workspace_store",
            "from agent_hooks.briefings import briefing",
            False,
        ),
        ("agent_hooks.gate.edit_gate", "from agent_hooks.hooks import hook_runtime", False),
        ("agent_hooks.work_sessions.location", "from agent_hooks.cli import _common", False),
        ("agent_hooks.storage", "from agent_hooks import identity", True),
        ("agent_hooks.identity", "from agent_hooks import storage", False),
        ("agent_hooks.shell.lexer", "from agent_hooks import posix_fs", False),
        ("agent_hooks.shell.git_paths", "from agent_hooks import repository", False),
        ("agent_hooks.shell.commands", "from agent_hooks.shell import git_paths", True),
        ("agent_hooks.gate.git_index", "from agent_hooks.reservations import pattern", True),
        ("agent_hooks.gate.git_index", "from agent_hooks.hooks import hook_runtime", False),
        ("agent_hooks.writers", "from agent_hooks.clients import client_table", True),
        ("agent_hooks.clients.codex", "from agent_hooks import writers", False),
        ("agent_hooks.tool_use", "from agent_hooks.clients import envelope", False),
    ],
)
def test_the_layer_check_itself(tmp_path: Path, importer: str, line: str, allowed: bool) -> None:
    """The control: a module given one more import (under TYPE_CHECKING, which counts
    too) is told apart by the check exactly as the layers say."""
    known = dict(MODULES)
    source = MODULES[importer].read_text()
    known[importer] = tmp_path / MODULES[importer].name
    known[importer].write_text(source + f"\nTYPE_CHECKING = False\nif TYPE_CHECKING:\n    {line}\n")
    added = import_graph.edges(known, type_checking=COUNT_TYPE_CHECKING, only=[importer])
    graph = {**TYPED_GRAPH, **added}
    new = set(upward(graph)) - set(upward(TYPED_GRAPH))
    assert (new == set()) is allowed
