"""What the hook hot path (PreToolUse, PostToolUse) may import: the one list both
import tests use (docs/adr/0005-hot-path-budget.md, docs/adr/0013-package-layout-and-hot-path-rule.md).

PreToolUse and PostToolUse start a new interpreter on every tool call of every
agent, so they may load only built-in modules and agent_hooks' own. An import
outside that is allowed only as an explicit exemption: the edge (importer,
imported) and why that path is rare enough to pay for it.
"""

from __future__ import annotations

import sys

# What `python -I -S` itself loads before any code runs (tests check this interpreter).
STARTUP = frozenset(
    {
        "_io",
        "io",
        "abc",
        "_abc",
        "marshal",
        "posix",
        "time",
        "_signal",
        "zipimport",
        "_codecs",
        "codecs",
        "encodings",
        "encodings.aliases",
        "encodings.utf_8",
        "_frozen_importlib_external",
    }
)
# Built-in modules the hot path may import (no file to load; `gc`: the entry script
# turns the cyclic collector off), `_json` (the C accelerator behind jsonio), and
# `__future__`, which every module's `from __future__ import annotations` loads.
# `_blake2` (hashlib's own BLAKE2 module, without hashlib, which loads OpenSSL: 2.4 ms)
# names a kept version's content (docs/adr/0024-kept-versions.md), loaded only when a
# writer's write of a held file is kept: 0.34 M instructions to load through the
# package's finder (1.3 % of a bare interpreter), and 1.0 M to hash 64 KiB, where
# `_sha256` loads for the same and hashes 64 KiB in 3.3 M (measured with callgrind).
HOT_BUILTINS = frozenset(
    {
        "posix",
        "sys",
        "time",
        "marshal",
        "errno",
        "_signal",
        "_json",
        "_blake2",
        "__future__",
        "pwd",
        "gc",
    }
)
HOT_ALLOWLIST = STARTUP | HOT_BUILTINS
HOT_ADAPTERS = ("agent_hooks.hooks.pre_tool_use", "agent_hooks.hooks.post_tool_use")

# Never on the hot path: each costs milliseconds (or tens of them) to import.
FORBIDDEN_ON_HOT_PATH = frozenset(
    {
        "os",
        "posixpath",
        "typing",
        "re",
        "json",
        "click",
        "orjson",
        "pathspec",
        "filelock",
        "zlib",
        "collections",
        "functools",
        "subprocess",
        "pathlib",
        "dataclasses",
        "enum",
        "hashlib",
        "_collections_abc",
        "fcntl",
    }
)
# textual (and rich, which it draws with) serve `agent-hooks watch` only (ADR-0018).
NEVER_IN_A_HOOK = frozenset(
    {"click", "orjson", "pathspec", "filelock", "textual", "rich", "tomlkit"}
)

# (importer, imported) -> why this edge may leave the allowlist. Everything reached
# only through such an edge is exempt with it.
EXEMPTIONS: dict[tuple[str, str], str] = {
    ("agent_hooks.jsonio", "json"): (
        "error path only: builds the one-line reason when stdin is not JSON"
    ),
    ("agent_hooks.hooks.post_tool_use", "agent_hooks.interop.mcp_agent_mail_hook"): (
        "only for mcp_agent_mail's own reservation tools (`mcp__…`), which the "
        "installed matcher limits to five tool names"
    ),
    ("agent_hooks.gate.tool_call", "agent_hooks.ledger.reservation_store"): (
        "once per repository after an upgrade: adopting the ledger an earlier release "
        "left in ~/.claude (one locked write); never again once adopted"
    ),
    ("agent_hooks.ledger.known_ledgers", "agent_hooks.git_guard.guard_record"): (
        "ledgers() only, which purge, the CLI and the git guard read; a hook only "
        "remembers a new ledger (remember), once per repository"
    ),
    ("agent_hooks.gate.git_index", "_sha1"): (
        "a whole-tree git rewrite (`git stash`, `git reset --hard`) while another "
        "writer's live reservation lies in the work tree, and only to hash a tracked "
        "file in it whose stat data no longer matches git's index (hashlib's own C "
        "module, without hashlib, which loads OpenSSL)"
    ),
    ("agent_hooks.workspaces.workspace", "unicodedata"): (
        "slug() only, for the names the CLI gives new context files; PostToolUse's "
        "after_write never calls it"
    ),
}

# The lifecycle hooks (SessionStart, Stop, SessionEnd, SubagentStart/Stop) may import
# the standard library, never the CLI, and no third-party package (click, orjson,
# pathspec, filelock cost 40-55 ms each). The one exception by design (ADR-0012):
# pathspec at a resume/compact whose files changed, to classify critical files.
LIFECYCLE_ALLOWLIST = HOT_ALLOWLIST | frozenset(sys.stdlib_module_names)
