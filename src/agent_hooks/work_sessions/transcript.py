"""Token figures read from Claude Code's conversation transcripts (JSONL).

Definitions (docs/adr/0009-work-sessions.md):

* The *context size* of an assistant entry is `input_tokens +
  cache_creation_input_tokens + cache_read_input_tokens` of its
  `message.usage`: everything the model had in its context for that call.
* A *main-conversation* entry is `type: "assistant"` with `isSidechain` not
  true, no `agentId`, a model other than `<synthetic>` (the client's own error
  messages) and a context size above 0. `current` is the context size of the
  last such entry, `peak` the largest.
* A subagent's *tokens used* is the largest `context size + output_tokens` over
  its own transcript's assistant entries: the context its work filled, which is
  what would have piled up in the main conversation without isolation. (Summing
  every call's input would count the same context once per call.)
* A subagent transcript is *final* (its figures complete) once the last assistant
  entry read ends its turn: `stop_reason` is one of `FINAL_STOP_REASONS`. The
  client fires SubagentStop before it has written that entry (its writes are
  buffered; the file may not even exist yet), so a figure read without it is
  provisional (docs/adr/0009-work-sessions.md, "Subagent figures").

Invariants:

* `advance` reads only what was appended after the cursor's byte offset, and
  consumes complete lines only (ending in a newline), so a line the client is
  still writing is read whole next time: a long conversation costs a hook no
  more than a short one.
* A cursor whose file is another one (path, device or inode changed) or shorter
  than its offset (truncated) starts again at 0 with fresh figures.
* Lines without `"usage"` are never parsed; lines that are not JSON are skipped
  and counted in `skipped`.

Only built-in modules and `jsonio` are imported: hooks load this module.
"""

from __future__ import annotations

import posix

from agent_hooks import jsonio
from agent_hooks import posix_fs as fs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _collections_abc import Iterator, Mapping
    from typing import Any

CHUNK = 1 << 20
TAIL_WINDOW = 64 << 10
TAIL_LIMIT = 4 << 20
_USAGE = b'"usage"'
_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
USAGE_FIELDS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
# Stop reasons that end an agent's turn (`tool_use`, `pause_turn` and a missing one do not;
# `max_tokens` may be followed by a continuation, so it is not taken as the end either).
FINAL_STOP_REASONS = frozenset(("end_turn", "stop_sequence", "refusal"))


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def context_size(usage: object) -> int:
    """input + cache creation + cache read tokens of one `usage` object."""
    if not isinstance(usage, dict):
        return 0
    return sum(_int(usage.get(field)) for field in USAGE_FIELDS)


def _usage(entry: object, main_only: bool) -> dict[str, Any] | None:
    if not isinstance(entry, dict) or entry.get("type") != "assistant":
        return None
    if main_only and (entry.get("isSidechain") is True or entry.get("agentId")):
        return None
    message = entry.get("message")
    if not isinstance(message, dict) or message.get("model") == "<synthetic>":
        return None
    usage = message.get("usage")
    return usage if isinstance(usage, dict) else None


def main_context(entry: object) -> int | None:
    """The context size of a main-conversation assistant entry, else None."""
    size = context_size(_usage(entry, main_only=True))
    return size if size > 0 else None


def _cursor(
    path: str, st: Any, offset: int, current: int, peak: int, skipped: int
) -> dict[str, Any]:
    return {
        "transcript": path,
        "device": st.st_dev,
        "inode": st.st_ino,
        "offset": offset,
        "current": current,
        "peak": peak,
        "skipped": skipped,
    }


def _complete_lines(fd: int, offset: int, chunk: int) -> Iterator[tuple[list[bytes], int]]:
    """From `offset` on: (the complete lines of one read, the offset after them), read by read.
    A line still being written (no newline yet) is left for the next call."""
    posix.lseek(fd, offset, 0)
    pending = b""
    while data := posix.read(fd, chunk):
        data = pending + data
        end = data.rfind(b"\n")
        if end < 0:
            pending = data
            continue
        offset += end + 1
        pending = data[end + 1 :]
        yield data[:end].split(b"\n"), offset


def _continues(cursor: Mapping[str, Any] | None, path: str, st: Any, offset: int) -> bool:
    """Does `cursor` go on reading `path` as it is now: the same file (path, device,
    inode), not cut below the cursor's offset?"""
    return (
        cursor is not None
        and cursor.get("transcript") == path
        and cursor.get("device") == st.st_dev
        and cursor.get("inode") == st.st_ino
        and offset <= st.st_size
    )


class _Reading:
    """The complete lines appended to a transcript since `cursor`: `same` says
    whether the cursor continues this file (else reading starts at 0); `entries`
    yields the parsed entries of the lines mentioning usage, counting the lines
    that do not parse in `skipped`; `offset` ends after the last complete line read."""

    __slots__ = ("chunk", "fd", "offset", "same", "skipped", "st")

    def __init__(self, cursor: Mapping[str, Any] | None, path: str, chunk: int) -> None:
        self.fd = posix.open(path, posix.O_RDONLY | posix.O_CLOEXEC)
        self.chunk = chunk
        self.st = posix.fstat(self.fd)
        offset = _int(cursor.get("offset")) if cursor is not None else 0
        self.same = _continues(cursor, path, self.st, offset)
        self.offset = offset if self.same else 0
        self.skipped = 0

    def entries(self) -> Iterator[object]:
        for lines, read_to in _complete_lines(self.fd, self.offset, self.chunk):
            self.offset = read_to
            for line in lines:
                if _USAGE not in line:
                    continue
                try:
                    yield jsonio.loads(line)
                except ValueError:
                    self.skipped += 1

    def close(self) -> None:
        posix.close(self.fd)


def _reading(cursor: Mapping[str, Any] | None, path: str, chunk: int) -> _Reading | None:
    try:
        return _Reading(cursor, path, chunk)
    except (OSError, ValueError):
        return None


def advance(
    cursor: Mapping[str, Any] | None, path: str, chunk: int = CHUNK
) -> dict[str, Any] | None:
    """The cursor moved to the end of `path`'s last complete line, with its
    figures updated; None when the transcript cannot be read."""
    reading = _reading(cursor, path, chunk)
    if reading is None:
        return None
    try:
        current = peak = skipped = 0
        if reading.same and cursor is not None:
            current, peak = _int(cursor.get("current")), _int(cursor.get("peak"))
            skipped = _int(cursor.get("skipped"))
        for entry in reading.entries():
            size = main_context(entry)
            if size is not None:
                current = size
                peak = max(peak, size)
        return _cursor(path, reading.st, reading.offset, current, peak, skipped + reading.skipped)
    except OSError:
        return None
    finally:
        reading.close()


def subagent_progress(
    cursor: Mapping[str, Any] | None, path: str, chunk: int = CHUNK
) -> dict[str, Any] | None:
    """A subagent's figures read on from `cursor` to `path`'s last complete line:
    `{transcript, device, inode, offset, used, final}`, where `used` is its tokens
    used so far (the cursor's `used` and what was appended since) and `final` tells
    whether the last assistant entry read now ends its turn. None when the file
    cannot be read (not written yet). A cursor of another file (path, device,
    inode) or beyond its end starts again at 0."""
    reading = _reading(cursor, path, chunk)
    if reading is None:
        return None
    try:
        used = _int(cursor.get("used")) if reading.same and cursor is not None else 0
        final = False
        for entry in reading.entries():
            if not isinstance(entry, dict) or entry.get("type") != "assistant":
                continue
            message = entry.get("message")
            reason = message.get("stop_reason") if isinstance(message, dict) else None
            final = reason in FINAL_STOP_REASONS
            usage = _usage(entry, main_only=False)
            if usage is not None:
                used = max(used, context_size(usage) + _int(usage.get("output_tokens")))
        return {
            "transcript": path,
            "device": reading.st.st_dev,
            "inode": reading.st.st_ino,
            "offset": reading.offset,
            "used": used,
            "final": final,
        }
    except OSError:
        return None
    finally:
        reading.close()


def _read_all(path: str) -> bytes | None:
    try:
        fd = posix.open(path, posix.O_RDONLY | posix.O_CLOEXEC)
    except (OSError, ValueError):
        return None
    try:
        chunks = []
        while data := posix.read(fd, CHUNK):
            chunks.append(data)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        posix.close(fd)


def is_agent_id(text: object) -> bool:
    """A subagent id safe inside a file name (`[A-Za-z0-9_-]`, 1-128 characters)."""
    return isinstance(text, str) and 0 < len(text) <= 128 and set(text) <= _ID_CHARS


def subagent_transcript(main_transcript: str, agent_id: str) -> str | None:
    """`<main without .jsonl>/subagents/agent-<id>.jsonl` (where the client writes
    it), else `subagents/agent-<id>.jsonl` beside the main transcript; None when
    neither exists or the id is unsafe."""
    if not is_agent_id(agent_id) or not fs.isabs(main_transcript):
        return None
    stem = main_transcript[:-6] if main_transcript.endswith(".jsonl") else main_transcript
    name = f"subagents/agent-{agent_id}.jsonl"
    for candidate in (fs.join(stem, name), fs.join(fs.dirname(main_transcript), name)):
        if fs.isfile(candidate):
            return candidate
    return None


def expected_subagent_transcript(main_transcript: str, agent_id: str) -> str | None:
    """Where the client writes a subagent's transcript, `<main without .jsonl>/subagents/
    agent-<id>.jsonl`, whether it exists yet or not; None for an unsafe id or a
    relative main transcript."""
    if not is_agent_id(agent_id) or not fs.isabs(main_transcript):
        return None
    stem = main_transcript[:-6] if main_transcript.endswith(".jsonl") else main_transcript
    return fs.join(stem, f"subagents/agent-{agent_id}.jsonl")


def subagent_type(agent_transcript: str) -> str | None:
    """`agentType` from the `.meta.json` beside a subagent transcript."""
    stem = agent_transcript[:-6] if agent_transcript.endswith(".jsonl") else agent_transcript
    data = _read_all(stem + ".meta.json")
    if data is None:
        return None
    try:
        meta = jsonio.loads(data)
    except ValueError:
        return None
    kind = meta.get("agentType") if isinstance(meta, dict) else None
    return kind if isinstance(kind, str) and kind else None


def tail_context(path: str, window: int = TAIL_WINDOW, limit: int = TAIL_LIMIT) -> int | None:
    """The current context size found from the end of the transcript (no cursor,
    no write: for the status line). Reads `window` bytes, widening up to `limit`."""
    try:
        fd = posix.open(path, posix.O_RDONLY | posix.O_CLOEXEC)
    except (OSError, ValueError):
        return None
    try:
        size = posix.fstat(fd).st_size
        while True:
            start = max(0, size - window)
            posix.lseek(fd, start, 0)
            data = posix.read(fd, size - start)
            lines = data.split(b"\n")
            if start > 0:
                lines = lines[1:]  # the first one is cut
            for line in reversed(lines):
                if _USAGE not in line:
                    continue
                try:
                    found = main_context(jsonio.loads(line))
                except ValueError:
                    continue
                if found is not None:
                    return found
            if start == 0 or window >= limit:
                return None
            window *= 4
    except OSError:
        return None
    finally:
        posix.close(fd)
