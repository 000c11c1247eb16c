"""The table of clients: every client agent-hooks serves, by the name its hook command
gives as the entry's first argument, with its module in `agent_hooks.clients`.

Adding a client adds its module and a row here (docs/adding-a-client.md); what a client
knows lives in its module, behind the interface `clients.client.Client` declares.

Invariants:

* `CLIENTS` maps each name to its module's basename; `DEFAULT_CLIENT` is the client a
  hook command naming none runs for (Claude Code, as installs of earlier releases run it),
  and the one whose agents are named without their client's label.
* A hook loads this table and its own client's module only; `modules` (every client's)
  is for the CLI and the installers.

Built-ins only: every hook loads it.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from agent_hooks.clients import claude_code, codex, gemini, opencode, qwen_code
    from agent_hooks.clients.client import Client

    # The type checker holds each module to the interface.
    _CLAUDE_CODE: Client = claude_code
    _CODEX: Client = codex
    _GEMINI: Client = gemini
    _OPENCODE: Client = opencode
    _QWEN_CODE: Client = qwen_code

CLIENTS = {
    "claude": "claude_code",
    "codex": "codex",
    "gemini": "gemini",
    "opencode": "opencode",
    "qwen": "qwen_code",
}
DEFAULT_CLIENT = "claude"


def module(name: str | None) -> Client:
    """The module of the client named `name` (None: `DEFAULT_CLIENT`'s; KeyError for no
    such client)."""
    table_name = CLIENTS[DEFAULT_CLIENT if name is None else name]
    found: Client = __import__(f"agent_hooks.clients.{table_name}", fromlist=["NAME"])
    return found


def modules() -> list[Client]:
    """Every client's module, in the table's order."""
    return [module(name) for name in CLIENTS]


def label(name: object) -> str | None:
    """How people read the client named `name` (`Codex`), None for no known client."""
    return module(name).LABEL if isinstance(name, str) and name in CLIENTS else None


def project_variables() -> tuple[str, ...]:
    """Every variable a client names the project in, in the table's order."""
    return tuple(variable for client in modules() for variable in client.PROJECT_VARIABLES)


def session_variables() -> tuple[str, ...]:
    """Every variable a client's shell names its conversation in, in the table's order."""
    return tuple(variable for client in modules() for variable in client.SESSION_VARIABLES)
