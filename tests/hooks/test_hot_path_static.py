"""The hot path, read from the source: every import reachable from PreToolUse and
PostToolUse — at module level or inside a function, however rarely it runs —
is a built-in module, one of agent_hooks' own, or an exemption named with its
reason in `hot_path_rules.EXEMPTIONS`. A lazy import added anywhere below the hot
adapters fails here even when no runtime case exercises it.
"""

from __future__ import annotations

import pytest

import import_graph
from hot_path_rules import EXEMPTIONS, HOT_ADAPTERS, HOT_ALLOWLIST

GRAPH = import_graph.edges()


def _chain(chain: list[import_graph.Edge]) -> str:
    return " <- ".join(
        f"{e.imported} ({e.importer}:{e.line}{', lazy' if e.lazy else ''})" for e in reversed(chain)
    )


def _client_modules() -> list[str]:
    """Every client's module: `agent_hooks.hooks.main` loads one on every hook."""
    from agent_hooks.hooks import CLIENTS

    return [f"agent_hooks.clients.{module}" for module in CLIENTS.values()]


def test_every_import_reachable_from_the_hot_adapters_is_allowed() -> None:
    assert len(_client_modules()) == 5 and all(m in GRAPH for m in _client_modules())
    reached = import_graph.reachable(
        [*HOT_ADAPTERS, "agent_hooks.hooks", *_client_modules()], GRAPH, cut=set(EXEMPTIONS)
    )
    bad = [
        _chain(chain)
        for name, chain in sorted(reached.items())
        if name not in HOT_ALLOWLIST and not name.startswith("agent_hooks")
    ]
    assert not bad, "hot path imports outside the allowlist:\n" + "\n".join(bad)
    assert "agent_hooks.cli" not in reached


def test_every_exemption_is_a_real_import_with_a_reason() -> None:
    present = {(e.importer, e.imported) for edges in GRAPH.values() for e in edges}
    for edge, reason in EXEMPTIONS.items():
        assert edge in present, f"stale exemption {edge}: no such import"
        assert len(reason) > 20, f"exemption {edge} needs a reason"


def test_the_walk_sees_imports_inside_functions() -> None:
    """The control: without its exemption, mcp_agent_mail's lazy path is reported."""
    reached = import_graph.reachable(["agent_hooks.hooks.post_tool_use"], GRAPH)
    assert "agent_hooks.interop.mcp_agent_mail_hook" in reached
    assert any(e.lazy for e in reached["agent_hooks.interop.mcp_agent_mail_hook"])
    assert "datetime" in reached


def test_no_import_cycle() -> None:
    """The shell walker re-enters itself for `bash -c`, `eval` and `$( … )` through a
    callable on its state, not an import; the index and its builder share the
    record shape in `index_records`."""
    assert import_graph.cycles(GRAPH) == []


@pytest.mark.parametrize(
    "name", sorted(n for n, p in import_graph.modules().items() if p.name == "__init__.py")
)
def test_feature_package_inits_are_empty(name: str) -> None:
    """A package's __init__ runs whenever one of its modules is imported: it imports
    nothing (the adapters' and the CLI's dispatch packages are the entry points)."""
    if name in ("agent_hooks", "agent_hooks.hooks", "agent_hooks.cli"):
        return
    assert GRAPH[name] == [], f"{name}/__init__.py imports {GRAPH[name]}"
    assert import_graph.modules()[name].read_text().strip() == ""


def _top_level_closure(start: str) -> set[str]:
    """The agent_hooks modules `start` loads at import time (lazy imports left out)."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        name = todo.pop()
        for edge in GRAPH.get(name, []):
            for target in [*import_graph.parents(edge.imported), edge.imported]:
                if not edge.lazy and target in GRAPH and target not in seen:
                    seen.add(target)
                    todo.append(target)
    return seen


def _preload_lists() -> dict[str, tuple[str, ...]]:
    from agent_hooks.gate.shell_gate import PLAIN_MODULES, TARGET_MODULES
    from agent_hooks.hooks import PRELOAD
    from agent_hooks.hooks.post_tool_use import (
        BASH_MODULES,
        HELD_MODULES,
        KEPT_MODULES,
        WRITE_MODULES,
    )
    from agent_hooks.hooks.pre_tool_use import EDIT_MODULES, SHELL_MODULES
    from agent_hooks.leases.lease_store import CLAIM_MODULES
    from agent_hooks.ledger.repo import RULES_MODULES
    from agent_hooks.reservations.blocking import MATCHING, OVERLAPPING
    from agent_hooks.shell.prefilter import PARSER_MODULES

    return {
        **PRELOAD,
        "PreToolUse edit": EDIT_MODULES,
        "PreToolUse shell": SHELL_MODULES,
        "PostToolUse Bash": BASH_MODULES,
        "PostToolUse writes": WRITE_MODULES,
        "PreToolUse Bash parser": PARSER_MODULES,
        "PostToolUse held files": HELD_MODULES,
        "PostToolUse kept versions": KEPT_MODULES,
        "lease claim": CLAIM_MODULES,
        "repository rules": RULES_MODULES,
        "reservation matching": MATCHING,
        "reservation overlapping": OVERLAPPING,
        "shell plain command": PLAIN_MODULES,
        "shell write target": TARGET_MODULES,
    }


# Each preload list's roots: the modules (and what they import at load time) the path
# that calls `preload` with that list goes on to import.
PRELOAD_ROOTS: dict[str, tuple[str, ...]] = {
    "PreToolUse edit": ("agent_hooks.gate.edit_gate", "agent_hooks.leases.lease_store"),
    "repository rules": (  # what `ledger.repo.Repo` asks lazily
        "agent_hooks.leases.lease_minutes",
        "agent_hooks.reservations.reservation_index",
    ),
    "PreToolUse Bash parser": ("agent_hooks.shell.writes",),
    "PreToolUse shell": ("agent_hooks.gate.shell_gate",),
    "PostToolUse writes": ("agent_hooks.ledger.repo", "agent_hooks.leases.lease_store"),
    "PostToolUse held files": ("agent_hooks.leases.held_files",),
    "PostToolUse kept versions": ("agent_hooks.kept.kept_store",),
    "PostToolUse Bash": (  # the aftermath, and what it asks of the repository (`ledger.repo`)
        "agent_hooks.gate.shell_aftermath",
        "agent_hooks.ledger.repo",
        "agent_hooks.reservations.reservation_index",
        "agent_hooks.leases.lease_minutes",
    ),
    "lease claim": ("agent_hooks.storage", "agent_hooks.leases.writer_cards"),  # claim_many
    "reservation matching": ("agent_hooks.reservations.pattern",),  # once a record may block
    "reservation overlapping": ("agent_hooks.reservations.pattern_overlap",),
    "shell plain command": ("agent_hooks.shell.plain",),
    "shell write target": (  # what _check_target and the checks it makes import
        "agent_hooks.gate.places",
        "agent_hooks.gate.protected",
        "agent_hooks.reservations.pattern",
        "agent_hooks.reservations.blocking",
        "agent_hooks.liveness",
        "agent_hooks.leases.lease_store",
        "agent_hooks.leases.writer_cards",
    ),
}


@pytest.mark.parametrize("name", sorted(_preload_lists()))
def test_each_preload_list_is_in_dependency_order_and_always_needed(name: str) -> None:
    """agent_hooks.preload loads each listed module after those it imports (else the
    import system loads them first, and the preload saves less); every listed module
    is one the path loads anyway (so preloading never loads anything extra)."""
    listed = _preload_lists()[name]
    roots = PRELOAD_ROOTS.get(name, (f"agent_hooks.hooks.{name}",))  # else an event's adapter
    needed = set(roots).union(*(_top_level_closure(root) for root in roots))
    assert set(listed) <= needed, sorted(set(listed) - needed)
    for i, module in enumerate(listed):
        later = set(listed[i + 1 :])
        early = {t for t in _top_level_closure(module) if t in later}
        assert not early, f"{module} imports {sorted(early)}, listed after it"
