"""agent_hooks' import graph, read from the source with `ast` (nothing is imported).

Every `import` counts, at module level or inside a function (a lazy import runs
the first time its function does), except those under `if TYPE_CHECKING:`, which
never run — unless `edges(type_checking=True)` is asked for: the layers
(tests/unit/test_architecture.py) count what a module names for the type checker
too, since a module that needs another's types depends on it. Importing `a.b.c`
also runs `a/__init__` and `a/b/__init__`, so a module's parent packages count as
imported with it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

SRC = Path(__file__).resolve().parents[1] / "src"
ROOT_PACKAGE = "agent_hooks"


class Edge(NamedTuple):
    importer: str
    imported: str  # a module name: agent_hooks' own, or any other
    line: int
    lazy: bool  # inside a function: runs only when that function does
    typing: bool = False  # under `if TYPE_CHECKING:`: never runs


def modules() -> dict[str, Path]:
    """Every module of the package, by dotted name (packages by their own name)."""
    found = {}
    for path in (SRC / ROOT_PACKAGE).rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def parents(name: str) -> list[str]:
    """`a.b.c` -> [`a`, `a.b`]."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


class _Collector(ast.NodeVisitor):
    def __init__(self, importer: str, known: dict[str, Path], type_checking: bool) -> None:
        self.importer = importer
        self.known = known
        self.type_checking = type_checking
        self.depth = 0
        self.typing = False
        self.edges: list[Edge] = []

    def _add(self, name: str, line: int) -> None:
        self.edges.append(Edge(self.importer, name, line, self.depth > 0, self.typing))

    def visit_If(self, node: ast.If) -> None:
        if isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            if self.type_checking:
                self.typing, was = True, self.typing
                for child in node.body:
                    self.visit(child)
                self.typing = was
            for child in node.orelse:
                self.visit(child)
            return
        self.generic_visit(node)

    def _function(self, node: ast.AST) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function
    visit_Lambda = _function

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(alias.name, node.lineno)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = node.module or ""
        if node.level:
            package = (
                self.importer
                if self.known[self.importer].name == "__init__.py"
                else (self.importer.rpartition(".")[0])
            )
            for _ in range(node.level - 1):
                package = package.rpartition(".")[0]
            base = f"{package}.{base}" if base else package
        for alias in node.names:
            full = f"{base}.{alias.name}"
            self._add(full if full in self.known else base, node.lineno)


def edges(
    known: dict[str, Path] | None = None,
    *,
    type_checking: bool = False,
    only: Iterable[str] | None = None,
) -> dict[str, list[Edge]]:
    """Each module's imports (with `type_checking`, those for the type checker too;
    with `only`, just those modules')."""
    known = known or modules()
    out = {}
    for name in known if only is None else only:
        path = known[name]
        collector = _Collector(name, known, type_checking)
        collector.visit(ast.parse(path.read_text(), str(path)))
        out[name] = collector.edges
    return out


def reachable(
    starts: Iterable[str], graph: dict[str, list[Edge]], cut: set[tuple[str, str]] = frozenset()
) -> dict[str, list[Edge]]:
    """Every module (ours or not) reachable from `starts`, with the chain of edges
    that first reached it. An edge in `cut` is not followed."""
    chains: dict[str, list[Edge]] = {}
    todo: list[tuple[str, list[Edge]]] = []
    for start in starts:
        for name in [*parents(start), start]:
            if name not in chains:
                chains[name] = []
                todo.append((name, []))
    while todo:
        name, chain = todo.pop()
        for edge in graph.get(name, []):
            if (edge.importer, edge.imported) in cut:
                continue
            for target in [*parents(edge.imported), edge.imported]:
                if target not in chains:
                    chains[target] = [*chain, edge]
                    todo.append((target, chains[target]))
    return chains


def cycles(graph: dict[str, list[Edge]]) -> list[set[str]]:
    """Strongly connected sets of more than one of our modules (Tarjan)."""
    ours = {name: {e.imported for e in out if e.imported in graph} for name, out in graph.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in ours[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(component)

    for v in sorted(ours):
        if v not in index:
            visit(v)
    return found
