"""Patches and the files they name, for tests/unit/shell/test_patch_targets.py and
tests/e2e/test_patch_grammar_codex.py (which runs each through the real codex's
apply_patch): (patch, [(op, path)] as `Patch.paths()` gives them, whether Codex 0.169.0
accepts the patch). Absolute paths start with `/tmp/x/` (the e2e test moves them).
"""

from __future__ import annotations

from agent_hooks.shell.patch_targets import ADD, DELETE, UPDATE

B, E = "*** Begin Patch\n", "*** End Patch\n"
UPD = B + "*** Update File: keep.txt\n@@\n k1\n-k2\n+K2\n"

CASES: dict[str, tuple[str, list[tuple[str, str]], bool]] = {
    # --- the measured payloads (tests/fixtures/payloads/codex/, docs/reference/codex-0.169.0/PROTOCOL.md)
    "add": (
        B + "*** Add File: add.txt\n+added line 1\n+added line 2\n" + E,
        [(ADD, "add.txt")],
        True,
    ),
    "update": (
        B + "*** Update File: old.txt\n@@\n-old\n+new\n" + E,
        [(UPDATE, "old.txt")],
        True,
    ),
    "delete": (B + "*** Delete File: old.txt\n" + E, [(DELETE, "old.txt")], True),
    "move": (
        B + "*** Update File: keep.txt\n*** Move to: moved/dst.txt\n@@\n k1\n-k2\n+K2\n" + E,
        [(UPDATE, "keep.txt"), (ADD, "moved/dst.txt")],
        True,
    ),
    "several files": (
        B + "*** Add File: sub/multi_add.txt\n+new\n*** Update File: keep.txt\n@@\n k1\n-k2\n"
        "+k2 changed\n*** Delete File: old.txt\n" + E,
        [(ADD, "sub/multi_add.txt"), (UPDATE, "keep.txt"), (DELETE, "old.txt")],
        True,
    ),
    # --- paths
    "absolute path": (
        B + "*** Add File: /tmp/x/abs.txt\n+x\n" + E,
        [(ADD, "/tmp/x/abs.txt")],
        True,
    ),
    "dot dot": (B + "*** Add File: sub/../a.txt\n+x\n" + E, [(ADD, "sub/../a.txt")], True),
    "climbing": (B + "*** Add File: ../../up.txt\n+x\n" + E, [(ADD, "../../up.txt")], True),
    "a path with spaces": (B + "*** Add File: my file.txt\n+x\n" + E, [(ADD, "my file.txt")], True),
    "trailing blanks of a header": (B + "*** Add File: a.txt\t \n+x\n" + E, [(ADD, "a.txt")], True),
    "line separator in a name": (
        B + "*** Add File: a\u2028b.txt\n+x\n" + E,
        [(ADD, "a\u2028b.txt")],
        True,
    ),
    "move keeps leading blanks": (
        B + "*** Update File: keep.txt\n*** Move to:   m.txt  \n@@\n k1\n-k2\n+K2\n" + E,
        [(UPDATE, "keep.txt"), (ADD, "  m.txt")],
        True,
    ),
    # --- hostile: headers inside content name nothing
    "an add header as added content": (
        B + "*** Add File: a.txt\n+*** Add File: evil.txt\n+*** Delete File: keep.txt\n" + E,
        [(ADD, "a.txt")],
        True,
    ),
    "an add header as context of an update": (
        B + "*** Update File: keep.txt\n@@\n k1\n *** Add File: evil.txt\n-k2\n+K2\n" + E,
        [(UPDATE, "keep.txt")],
        True,  # parses (applying fails: the context is not in the file)
    ),
    "a removed header line": (
        B + "*** Update File: keep.txt\n@@\n k1\n-*** Delete File: old.txt\n+K2\n" + E,
        [(UPDATE, "keep.txt")],
        True,
    ),
    "End Patch as context": (
        B + "*** Update File: keep.txt\n@@\n k1\n *** End Patch\n-k2\n+K2\n"
        "*** Add File: c.txt\n+c\n" + E,
        [(UPDATE, "keep.txt"), (ADD, "c.txt")],
        True,
    ),
    # --- hostile: what Codex does read as a header
    "an indented header after added lines": (
        B + "*** Add File: a.txt\n+x\n   *** Add File: b.txt\n+y\n" + E,
        [(ADD, "a.txt"), (ADD, "b.txt")],
        True,
    ),
    "a header right after a chunk": (
        UPD + "*** Add File: z.txt\n+z\n" + E,
        [(UPDATE, "keep.txt"), (ADD, "z.txt")],
        True,
    ),
    "an empty line before a header": (
        UPD + "\n*** Delete File: old.txt\n" + E,
        [(UPDATE, "keep.txt"), (DELETE, "old.txt")],
        True,
    ),
    "an indented first header": (B + "\t*** Add File: a.txt\n+x\n" + E, [(ADD, "a.txt")], True),
    # an update's first chunk needs no `@@` (Codex reads it without one): the hunks after
    # it count (a parser that refused it would lose them: z.txt written unseen)
    "a first chunk without @@, then another file": (
        B + "*** Update File: keep.txt\n k1\n-k2\n+K2\n*** Add File: z.txt\n+z\n" + E,
        [(UPDATE, "keep.txt"), (ADD, "z.txt")],
        True,
    ),
    "a first chunk without @@ after a move": (
        B + "*** Update File: keep.txt\n*** Move to: m.txt\n k1\n-k2\n+K2\n"
        "*** Delete File: old.txt\n" + E,
        [(UPDATE, "keep.txt"), (ADD, "m.txt"), (DELETE, "old.txt")],
        True,
    ),
    # an empty or blank line is a context line, a chunk of its own first (Codex applies
    # such an update): the hunks after it count (found by the payload fuzz)
    "a blank context line is an update's chunk": (
        B + "*** Update File: keep.txt\n \n*** Add File: z.txt\n" + E,
        [(UPDATE, "keep.txt"), (ADD, "z.txt")],
        True,
    ),
    "an empty line is an update's chunk": (
        B + "*** Update File: keep.txt\n\n*** Delete File: old.txt\n" + E,
        [(UPDATE, "keep.txt"), (DELETE, "old.txt")],
        True,
    ),
    # `*** Move to:` moves only unindented: indented by a blank it is a context line
    # (applying then fails: the file has no such line), by a tab no valid line at all
    "an indented Move to is context": (
        B + "*** Update File: keep.txt\n  *** Move to: m.txt\n@@\n k1\n-k2\n+K2\n" + E,
        [(UPDATE, "keep.txt")],
        True,
    ),
    "an indented Move to before a header": (
        B + "*** Update File: keep.txt\n *** Move to: m.txt\n*** Add File: z.txt\n+z\n" + E,
        [(UPDATE, "keep.txt"), (ADD, "z.txt")],
        True,
    ),
    "an empty add": (B + "*** Add File: a.txt\n" + E, [(ADD, "a.txt")], True),
    # --- envelopes and line ends Codex accepts
    "heredoc envelope": (
        "<<'EOF'\n" + B + "*** Add File: a.txt\n+x\n" + E + "EOF\n",
        [(ADD, "a.txt")],
        True,
    ),
    "CRLF": ((B + "*** Add File: a.txt\n+x\n" + E).replace("\n", "\r\n"), [(ADD, "a.txt")], True),
    "blanks around the markers": (
        "\n\n  *** Begin Patch  \n*** Add File: a.txt\n+x\n   *** End Patch  \n\n",
        [(ADD, "a.txt")],
        True,
    ),
    "environment id": (
        B + "*** Environment ID: dev\n*** Add File: a.txt\n+x\n" + E,
        [(ADD, "a.txt")],
        True,
    ),
    # --- what Codex refuses: nothing is written; the headers before the fault still count
    "a Move to outside an update": (
        B + "*** Add File: a.txt\n+x\n*** Move to: m.txt\n" + E,
        [(ADD, "a.txt")],
        False,
    ),
    "a second Move to": (
        B + "*** Update File: keep.txt\n*** Move to: m.txt\n*** Move to: n.txt\n@@\n-k2\n+K\n" + E,
        [(UPDATE, "keep.txt"), (ADD, "m.txt")],
        False,
    ),
    "no End Patch": (B + "*** Add File: a.txt\n+x\n", [(ADD, "a.txt")], False),
    "text after End Patch": (
        B + "*** Add File: a.txt\n+x\n" + E + "*** Add File: b.txt\n+y\n",
        [(ADD, "a.txt")],
        False,
    ),
    "a second End Patch": (
        B + "*** Add File: a.txt\n+x\n" + E + "*** Add File: b.txt\n+y\n" + E,
        [(ADD, "a.txt")],
        False,
    ),
    "no Begin Patch": ("*** Add File: a.txt\n+x\n" + E, [], False),
    "Begin Patch with more": ("*** Begin Patch now\n*** Add File: a.txt\n+x\n" + E, [], False),
    "a lower-case header": (B + "*** add file: a.txt\n+x\n" + E, [], False),
    "an update without content": (
        B + "*** Update File: keep.txt\n*** Add File: z.txt\n+z\n" + E,
        [(UPDATE, "keep.txt")],
        False,
    ),
    "a Move to indented by a tab": (
        B + "*** Update File: keep.txt\n\t*** Move to: m.txt\n k1\n-k2\n+K2\n" + E,
        [(UPDATE, "keep.txt")],
        False,
    ),
    "a chunk without @@": (
        B + "*** Update File: keep.txt\n k1\n-k2\n+K2\nfoo\n" + E,
        [(UPDATE, "keep.txt")],
        False,
    ),
    "an empty line between hunks": (
        B + "*** Add File: a.txt\n+x\n\n*** Add File: b.txt\n+y\n" + E,
        [(ADD, "a.txt")],
        False,
    ),
    "End of File first": (
        B + "*** Update File: keep.txt\n@@\n*** End of File\n" + E,
        [(UPDATE, "keep.txt")],
        False,
    ),
    "an empty patch": (B + E, [], False),
    "not a patch": ("echo hi > x\n", [], False),
}
