"""The trail past the state's window, kept beside it (agents/trail_spill.py)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from agent_hooks import identity
from agent_hooks.agents import trail_spill

C, M, R = "files_created", "files_modified", "files_read"


@pytest.fixture
def agent(tmp_path: Path) -> identity.Agent:
    return identity.Agent("a", str(tmp_path))


def test_kept_paths_read_back_by_field_in_order_each_once(agent: identity.Agent) -> None:
    trail_spill.spill(agent, "conv-1", [(M, "/p/b"), (M, "/p/a"), (C, "/p/c")])
    trail_spill.spill(agent, "conv-1", [(M, "/p/b"), (M, "/p/d")])  # /p/b written again
    assert trail_spill.spilled(agent, "conv-1") == {M: ["/p/b", "/p/a", "/p/d"], C: ["/p/c"]}
    assert trail_spill.spilled(agent, "conv-2") == {}  # one file per conversation


@pytest.mark.parametrize("path", ["/p/new\nline.py", "/p/tab\there", "/p/\ud800x", '/p/"q"\\'])
def test_any_path_reads_back_as_it_was_written(agent: identity.Agent, path: str) -> None:
    trail_spill.spill(agent, "c", [(M, path), (M, "/p/after")])
    assert trail_spill.spilled(agent, "c") == {M: [path, "/p/after"]}


def test_a_torn_or_damaged_line_is_skipped_and_the_rest_kept(agent: identity.Agent) -> None:
    trail_spill.spill(agent, "c", [(M, "/p/one")])
    where = trail_spill.spill_path(agent, "c")
    assert where is not None
    with open(where, "ab") as handle:
        handle.write(b'["files_modified", 7]\n{"x": 1}\nnot json\n["files_modified","/p/to')
    trail_spill.spill(agent, "c", [(M, "/p/two")])
    assert trail_spill.spilled(agent, "c") == {M: ["/p/one"]}  # the torn tail ate "/p/two"'s line
    with open(where, "ab") as handle:
        handle.write(b"\n")
    trail_spill.spill(agent, "c", [(M, "/p/three")])
    assert trail_spill.spilled(agent, "c") == {M: ["/p/one", "/p/three"]}


def test_the_file_is_private_and_never_written_through_a_symlink(
    agent: identity.Agent, tmp_path: Path
) -> None:
    trail_spill.spill(agent, "c", [(M, "/p/x")])
    where = trail_spill.spill_path(agent, "c")
    assert where is not None and stat.S_IMODE(os.stat(where).st_mode) == 0o600
    outside = tmp_path / "outside"
    outside.write_text("")
    planted = trail_spill.spill_path(agent, "d")
    assert planted is not None
    os.symlink(outside, planted)
    with pytest.raises(OSError):
        trail_spill.spill(agent, "d", [(M, "/p/y")])
    assert outside.read_text() == ""
    assert trail_spill.spilled(agent, "d") == {}


@pytest.mark.parametrize("conversation", ["../../escape", "a/b", "", "x" * 129, None, 5, "ok\x00"])
def test_without_a_usable_conversation_id_nothing_is_kept(
    agent: identity.Agent, conversation: object
) -> None:
    trail_spill.spill(agent, conversation, [(M, "/p/x")])
    assert trail_spill.spill_path(agent, conversation) is None
    assert not os.path.exists(trail_spill.agent_dir(agent))
    assert trail_spill.spilled(agent, conversation) == {}


def test_counts_add_the_kept_paths_to_the_window(agent: identity.Agent) -> None:
    doc = {"conversation_id": "c", C: ["/p/c1"], M: ["/p/m1", "/p/m2"], R: ["/p/r"]}
    assert trail_spill.counts(agent, doc) == {C: 1, M: 2, R: 1}
    trail_spill.spill(agent, "c", [(M, "/p/m3"), (M, "/p/m4"), (C, "/p/c2"), (M, "/p/m3")])
    assert trail_spill.counts(agent, doc) == {C: 2, M: 4, R: 1}
    assert trail_spill.counts(agent, {**doc, "conversation_id": "other"}) == {C: 1, M: 2, R: 1}
