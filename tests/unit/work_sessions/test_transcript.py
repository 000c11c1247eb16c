"""Tests for agent_hooks.work_sessions.transcript: figures from the sample transcripts, and
incremental reading (offsets, partial lines, truncation, rotation, garbage)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from agent_hooks.work_sessions import transcript
from hook_runner import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "transcripts"
MAIN = FIXTURES / "main-with-subagent.jsonl"
SUB_ID = "a6a499d345698d83d"
SUB = FIXTURES / "subagents" / f"agent-{SUB_ID}.jsonl"


def _template() -> dict:
    for line in MAIN.read_text().splitlines():
        entry = json.loads(line)
        if entry.get("type") == "assistant":
            return entry
    raise AssertionError("no assistant entry in the sample")


TEMPLATE = _template()


def assistant(inp: int, create: int = 0, read: int = 0, out: int = 5, **extra: object) -> str:
    """A real assistant entry from the sample with its usage replaced."""
    entry = json.loads(json.dumps(TEMPLATE))
    entry["message"]["usage"].update(
        input_tokens=inp,
        cache_creation_input_tokens=create,
        cache_read_input_tokens=read,
        output_tokens=out,
    )
    for key, value in extra.items():
        if key == "model":
            entry["message"]["model"] = value
        else:
            entry[key] = value
    return json.dumps(entry, separators=(",", ":")) + "\n"


def used(path: Path) -> int:
    """A subagent's tokens used, read from the start of its transcript."""
    progress = transcript.subagent_progress(None, str(path))
    assert progress is not None
    figure: int = progress["used"]
    return figure


def user_line(text: str = "hello") -> str:
    return json.dumps({"type": "user", "isSidechain": False, "message": {"content": text}}) + "\n"


# ------------------------------------------------------------ the sample files


def test_sample_main_transcript_figures() -> None:
    cursor = transcript.advance(None, str(MAIN))
    assert cursor is not None
    # The sample has 7 main-conversation assistant entries (lines 21, 28, 33, 36, 42, 48, 54),
    # each with usage input 10 + cache_creation 0 + cache_read 0 = 10 (output 10 is not context):
    # current = the last one = 10; peak = max(10, ..., 10) = 10. (A sum over turns would be 70.)
    assert (cursor["current"], cursor["peak"], cursor["skipped"]) == (10, 10, 0)
    assert cursor["offset"] == MAIN.stat().st_size == 173337  # every line ends in "\n"
    assert (cursor["inode"], cursor["device"]) == (MAIN.stat().st_ino, MAIN.stat().st_dev)


def test_sample_subagent_transcript_tokens_and_type() -> None:
    # One assistant entry (sidechain, agentId a6a4…): context 10 + 0 + 0 plus its output 10 = 20.
    assert used(SUB) == 20
    assert transcript.subagent_type(str(SUB)) == "Explore"  # from agent-<id>.meta.json
    # Its entries are sidechain entries: none of them counts for a main conversation.
    cursor = transcript.advance(None, str(SUB))
    assert cursor is not None and (cursor["current"], cursor["peak"]) == (0, 0)


def test_sample_tail_context() -> None:
    assert transcript.tail_context(str(MAIN)) == 10
    # a window smaller than the last lines forces widening until an assistant entry is found
    assert transcript.tail_context(str(MAIN), window=200) == 10
    assert transcript.tail_context(str(SUB)) is None


def test_subagent_transcript_is_found_where_the_client_writes_it(tmp_path: Path) -> None:
    # the fixtures keep it beside the main transcript
    assert transcript.subagent_transcript(str(MAIN), SUB_ID) == str(SUB)
    # the client writes it to <main without .jsonl>/subagents/agent-<id>.jsonl
    main = tmp_path / "8f92.jsonl"
    main.write_text("")
    nested = tmp_path / "8f92" / "subagents"
    nested.mkdir(parents=True)
    shutil.copy(SUB, nested / f"agent-{SUB_ID}.jsonl")
    assert transcript.subagent_transcript(str(main), SUB_ID) == str(
        nested / f"agent-{SUB_ID}.jsonl"
    )
    assert transcript.subagent_transcript(str(main), "missing") is None
    for bad in ("../x", "a/b", "", "x" * 200):
        assert transcript.subagent_transcript(str(main), bad) is None
    assert transcript.subagent_transcript("relative.jsonl", SUB_ID) is None


# ---------------------------------------------------------- varied figures


def test_current_is_the_last_main_entry_and_peak_the_largest(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(
        user_line()
        + assistant(3, 1000, 0)  # 3 + 1000 + 0 = 1003
        + assistant(5, 200, 1003)  # 5 + 200 + 1003 = 1208
        + assistant(9, 0, 0, isSidechain=True)  # a sidechain entry: ignored
        + assistant(90000, agentId="abc")  # a subagent's entry: ignored
        + assistant(0, 0, 0, model="<synthetic>")  # the client's own error message: ignored
        + assistant(0, 0, 0)  # context 0: ignored
        + assistant(7, 30, 400, out=900)  # 7 + 30 + 400 = 437 (after a compaction)
    )
    cursor = transcript.advance(None, str(path))
    assert cursor is not None
    assert (cursor["current"], cursor["peak"]) == (437, 1208)
    assert transcript.tail_context(str(path)) == 437
    # as a subagent transcript: max(context + output) = max(1003+5, 1208+5, 9+5, 90000+5,
    # 0+5 (synthetic: skipped), 0+5, 437+900) = 90005
    assert used(path) == 90005


# ------------------------------------------------------------ incremental reads


def test_the_second_read_starts_at_the_stored_offset(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    first = assistant(100)
    path.write_text(user_line() + first)
    cursor = transcript.advance(None, str(path))
    assert cursor is not None and cursor["current"] == 100
    assert cursor["offset"] == path.stat().st_size
    # Rewrite the already-read bytes in place (same inode, same length) to claim 900 tokens:
    # a reader that started again at 0 would see it; one that starts at the offset cannot.
    altered = first.replace('"input_tokens":100', '"input_tokens":900')
    assert len(altered) == len(first) and altered != first
    with open(path, "r+") as fh:
        fh.seek(len(user_line()))
        fh.write(altered)
    with open(path, "a") as fh:
        fh.write(assistant(200))
    again = transcript.advance(cursor, str(path))
    assert again is not None
    assert (again["current"], again["peak"]) == (200, 200)  # never 900
    assert again["offset"] == path.stat().st_size


def test_a_partial_last_line_is_read_once_complete(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    line = assistant(300)
    path.write_text(assistant(100) + line[:40])
    cursor = transcript.advance(None, str(path))
    assert cursor is not None and cursor["current"] == 100
    assert cursor["offset"] == len(assistant(100))  # the partial line is not consumed
    with open(path, "a") as fh:
        fh.write(line[40:])
    cursor = transcript.advance(cursor, str(path))
    assert cursor is not None and (cursor["current"], cursor["skipped"]) == (300, 0)


def test_small_chunks_give_the_same_figures(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("".join(assistant(n) for n in (50, 400, 120)) + user_line())
    whole = transcript.advance(None, str(path))
    chunked = transcript.advance(None, str(path), chunk=7)
    assert (
        whole == chunked and whole is not None and (whole["current"], whole["peak"]) == (120, 400)
    )


def test_a_truncated_transcript_starts_again(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(assistant(500) + assistant(600))
    cursor = transcript.advance(None, str(path))
    assert cursor is not None and cursor["peak"] == 600
    path.write_text(assistant(40))  # same inode, now shorter than the offset
    again = transcript.advance(cursor, str(path))
    assert again is not None and (again["current"], again["peak"]) == (40, 40)
    assert again["offset"] == path.stat().st_size


def test_a_rotated_transcript_starts_again(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(assistant(500))
    cursor = transcript.advance(None, str(path))
    replacement = tmp_path / "new.jsonl"
    replacement.write_text(assistant(70) + assistant(80) + assistant(90))  # longer than before
    os.replace(replacement, path)  # another inode under the same name
    again = transcript.advance(cursor, str(path))
    assert again is not None and (again["current"], again["peak"]) == (90, 90)
    other = tmp_path / "other.jsonl"
    other.write_text(assistant(5))
    moved = transcript.advance(again, str(other))  # a cursor for another path
    assert moved is not None and (moved["current"], moved["peak"]) == (5, 5)


def test_garbage_lines_are_skipped_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(
        assistant(100).encode()
        + b'{"type":"assistant","usage": oops}\n'  # mentions usage, is not JSON: counted
        + b"\xff\xfe not utf-8 \n"  # no "usage": never parsed
        + b'["usage"]\n'  # JSON, but not an entry
        + b"\n"
        + assistant(250).encode()
    )
    cursor = transcript.advance(None, str(path))
    assert cursor is not None and (cursor["current"], cursor["skipped"]) == (250, 1)


def test_missing_or_unreadable_transcripts(tmp_path: Path) -> None:
    assert transcript.advance(None, str(tmp_path / "none.jsonl")) is None
    assert transcript.subagent_progress(None, str(tmp_path / "none.jsonl")) is None
    assert transcript.tail_context(str(tmp_path / "none.jsonl")) is None
    assert transcript.subagent_type(str(tmp_path / "none.jsonl")) is None
    assert transcript.advance(None, str(tmp_path)) is None  # a directory


@pytest.mark.parametrize(
    ("usage", "size"),
    [
        ({"input_tokens": 1, "cache_creation_input_tokens": 2, "cache_read_input_tokens": 3}, 6),
        ({"input_tokens": 1, "output_tokens": 50}, 1),
        ({"input_tokens": True, "cache_read_input_tokens": "9"}, 0),
        (None, 0),
    ],
)
def test_context_size(usage: object, size: int) -> None:
    assert transcript.context_size(usage) == size


# ------------------------------------------------------ subagent progress


def sub_turn(inp: int, out: int, stop_reason: str | None, **extra: object) -> str:
    """A subagent assistant entry: context `inp` (input only) and `out` output tokens."""
    entry = json.loads(assistant(inp, out=out, isSidechain=True, agentId=SUB_ID, **extra))
    entry["message"]["stop_reason"] = stop_reason
    return json.dumps(entry, separators=(",", ":")) + "\n"


def test_subagent_progress_of_the_sample_is_final() -> None:
    progress = transcript.subagent_progress(None, str(SUB))
    assert progress == {
        "transcript": str(SUB),
        "device": SUB.stat().st_dev,
        "inode": SUB.stat().st_ino,
        "offset": SUB.stat().st_size,
        "used": 20,  # context 10 + output 10
        "final": True,  # its one assistant entry ends the turn (end_turn)
    }


def test_subagent_progress_is_final_only_after_an_entry_that_ends_the_turn(
    tmp_path: Path,
) -> None:
    path = tmp_path / "agent.jsonl"
    assert transcript.subagent_progress(None, str(path)) is None  # not written yet
    path.write_text(user_line())
    first = transcript.subagent_progress(None, str(path))
    assert first is not None and (first["used"], first["final"]) == (0, False)
    with path.open("a") as fh:
        fh.write(sub_turn(300, 20, "tool_use") + user_line())
    second = transcript.subagent_progress(first, str(path))
    assert second is not None and (second["used"], second["final"]) == (320, False)
    line = sub_turn(4000, 50, "end_turn")
    with path.open("a") as fh:
        fh.write(line[:30])  # being written: not read yet
    third = transcript.subagent_progress(second, str(path))
    assert third is not None and (third["used"], third["final"]) == (320, False)
    assert third["offset"] == second["offset"]
    with path.open("a") as fh:
        fh.write(line[30:] + user_line())  # non-assistant lines after it change nothing
    fourth = transcript.subagent_progress(third, str(path))
    assert fourth is not None and (fourth["used"], fourth["final"]) == (4050, True)
    assert fourth["offset"] == path.stat().st_size
    # nothing new: `final` tells about what this read found
    again = transcript.subagent_progress(fourth, str(path))
    assert again is not None and (again["used"], again["final"]) == (4050, False)
    # a turn that goes on (a resumed agent) is not final until its own last entry is
    with path.open("a") as fh:
        fh.write(sub_turn(5000, 5, "end_turn") + sub_turn(6000, 7, "tool_use"))
    resumed = transcript.subagent_progress(again, str(path))
    assert resumed is not None and (resumed["used"], resumed["final"]) == (6007, False)


@pytest.mark.parametrize(
    ("reason", "final"),
    [
        ("end_turn", True),
        ("stop_sequence", True),
        ("refusal", True),
        ("tool_use", False),
        ("pause_turn", False),
        ("max_tokens", False),
        (None, False),
    ],
)
def test_which_stop_reasons_end_a_subagent(tmp_path: Path, reason: str | None, final: bool) -> None:
    path = tmp_path / "agent.jsonl"
    path.write_text(sub_turn(10, 1, reason))
    progress = transcript.subagent_progress(None, str(path))
    assert progress is not None and progress["final"] is final


def test_a_synthetic_final_entry_ends_the_turn_without_counting(tmp_path: Path) -> None:
    """The client's own error message (model <synthetic>) ends an agent that failed."""
    path = tmp_path / "agent.jsonl"
    synthetic = sub_turn(9000, 9, "stop_sequence", model="<synthetic>")
    path.write_text(sub_turn(300, 20, "tool_use") + synthetic)
    progress = transcript.subagent_progress(None, str(path))
    assert progress is not None and (progress["used"], progress["final"]) == (320, True)


def test_subagent_progress_of_another_file_starts_again(tmp_path: Path) -> None:
    path = tmp_path / "agent.jsonl"
    path.write_text(sub_turn(9000, 1, "end_turn"))
    cursor = transcript.subagent_progress(None, str(path))
    assert cursor is not None and cursor["used"] == 9001
    replacement = tmp_path / "new.jsonl"
    replacement.write_text(sub_turn(40, 2, "end_turn"))
    os.replace(replacement, path)  # another inode: its figures alone
    again = transcript.subagent_progress(cursor, str(path))
    assert again is not None and (again["used"], again["final"]) == (42, True)
    path.write_text("")  # truncated below the offset: from 0 again
    empty = transcript.subagent_progress({**again, "used": 777}, str(path))
    assert empty is not None and (empty["used"], empty["offset"]) == (0, 0)
    assert transcript.subagent_progress(None, str(tmp_path)) is None  # a directory


def test_small_chunks_give_the_same_subagent_progress(tmp_path: Path) -> None:
    path = tmp_path / "agent.jsonl"
    path.write_text(
        user_line() + sub_turn(50, 1, "tool_use") + sub_turn(70, 3, "end_turn") + user_line()
    )
    whole = transcript.subagent_progress(None, str(path))
    assert whole == transcript.subagent_progress(None, str(path), chunk=7)
    assert whole is not None and (whole["used"], whole["final"]) == (73, True)


def test_expected_subagent_transcript_is_where_the_client_writes_it(tmp_path: Path) -> None:
    main = str(tmp_path / "8f92.jsonl")
    expected = str(tmp_path / "8f92" / "subagents" / f"agent-{SUB_ID}.jsonl")
    assert transcript.expected_subagent_transcript(main, SUB_ID) == expected  # not there yet
    assert transcript.expected_subagent_transcript(main, "../x") is None
    assert transcript.expected_subagent_transcript("relative.jsonl", SUB_ID) is None
