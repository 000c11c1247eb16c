"""hook_runtime.read_payload: stdin read in pieces, bounded, one-line reasons."""

from __future__ import annotations

import io

import pytest

from agent_hooks.hooks import hook_runtime


class Trickle(io.RawIOBase):
    """A pipe that hands out a few bytes per read, as a slow writer's would."""

    def __init__(self, data: bytes, step: int) -> None:
        self.data, self.step = data, step

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray) -> int:  # type: ignore[override]
        n = min(self.step, len(buffer))
        piece, self.data = self.data[:n], self.data[n:]
        buffer[: len(piece)] = piece
        return len(piece)


@pytest.mark.parametrize("step", [1, 7, 1 << 16, 1 << 20])
def test_a_payload_arriving_in_pieces_is_read_whole(step: int) -> None:
    body = b'{"tool_name": "Write", "tool_input": {"content": "' + b"x" * 200_000 + b'"}}'
    stream = io.BufferedReader(Trickle(body, step))
    assert hook_runtime.read_payload(stream)["tool_input"]["content"] == "x" * 200_000


def test_a_payload_over_the_limit_is_refused_without_reading_it_all(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(hook_runtime, "MAX_STDIN", 1000)
    raw = Trickle(b"[" + b"1," * 100_000 + b"1]", 1 << 12)
    with pytest.raises(hook_runtime.HookInputError, match="larger than"):
        hook_runtime.read_payload(io.BufferedReader(raw))
    assert len(raw.data) > 100_000  # stopped early


@pytest.mark.parametrize(
    ("body", "reason"),
    [(b"", "stdin: "), (b"[1]", "not an object"), (b"{", "stdin: ")],
)
def test_bad_payloads_give_one_line_reasons(body: bytes, reason: str) -> None:
    with pytest.raises(hook_runtime.HookInputError, match=reason):
        hook_runtime.read_payload(io.BufferedReader(Trickle(body, 5)))
