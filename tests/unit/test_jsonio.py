"""jsonio: the hot path's JSON, compared with the standard library's strict reading."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_hooks import jsonio

VALID = [
    "{}",
    "[]",
    "0",
    "-1.5e3",
    "true",
    "null",
    '"x"',
    ' \n\t{"a": [1, 2, {"b": null}]}\r\n',
    '{"é": "ü", "emoji": "\\ud83d\\ude00"}',
    '{"a": 1, "a": 2}',
    '"\\u0000"',
    "1E400",
    '{"file_path": "/p/a b.txt", "n": 12345678901234567890}',
]

INVALID = [
    ("", "empty input"),
    ("   \n", "empty input"),
    ("{", "not JSON"),
    ("{'a': 1}", "not JSON"),
    ("[1,]", "not JSON"),
    ("{} {}", "extra data"),
    ("1 2", "extra data"),
    ("NaN", "not strict JSON"),
    ("[Infinity]", "not strict JSON"),
    ("-Infinity", "not strict JSON"),
    ('"\x01"', "not JSON"),
    ("[" * 100_000 + "]" * 100_000, "not JSON"),
    ("\ufeff{}", "not JSON"),
    ("nul", "not JSON"),
]


@pytest.mark.parametrize("text", VALID)
def test_loads_agrees_with_json(text: str) -> None:
    assert jsonio.loads(text) == json.loads(text)
    assert jsonio.loads(text.encode()) == json.loads(text)


@pytest.mark.parametrize(("text", "reason"), INVALID)
def test_loads_refuses_with_a_one_line_reason(text: str, reason: str) -> None:
    with pytest.raises(ValueError) as caught:
        jsonio.loads(text)
    message = str(caught.value)
    assert reason in message
    assert "\n" not in message


@pytest.mark.parametrize("data", [b"\xff{}", b'{"a": "\xc3"}', b"\xed\xa0\x80"])
def test_loads_refuses_bad_utf8(data: bytes) -> None:
    with pytest.raises(ValueError, match="not UTF-8"):
        jsonio.loads(data)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: st.lists(children) | st.dictionaries(st.text(), children),
    max_leaves=25,
)


@settings(max_examples=100, deadline=None)
@given(json_values)
def test_dumps_is_compact_strict_json_and_round_trips(value: object) -> None:
    text = jsonio.dumps(value)
    assert text == json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    assert jsonio.loads(text) == value
    assert jsonio.loads(text.encode("utf-8")) == value


@pytest.mark.parametrize("value", [math.nan, math.inf, [-math.inf], {"a": math.nan}])
def test_dumps_refuses_nonfinite(value: object) -> None:
    with pytest.raises(ValueError):
        jsonio.dumps(value)


@pytest.mark.parametrize("value", [{1, 2}, object(), b"bytes", {"a": 1j}])
def test_dumps_refuses_what_json_cannot_hold(value: object) -> None:
    with pytest.raises(TypeError):
        jsonio.dumps(value)


def test_dumps_keeps_non_ascii_and_escapes_controls() -> None:
    assert jsonio.dumps({"é": "a\nb\x00"}) == '{"é":"a\\nb\\u0000"}'


def _modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [
            sys.executable,
            "-I",
            "-S",
            "-c",
            "import sys; before = set(sys.modules); "
            + code
            + "; print(' '.join(sorted(set(sys.modules) - before)))",
        ],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": ""},
        cwd="/",
    ).stdout.split()
    return set(out)


def test_success_path_imports_no_json_package() -> None:
    src = str(__import__("pathlib").Path(jsonio.__file__).parents[1])
    loaded = _modules_after(
        f"sys.path.insert(0, {src!r}); from agent_hooks import jsonio; "
        "jsonio.loads(b'{\"a\": [1, 2.5, null]}'); jsonio.dumps({'a': 1})"
    )
    assert "json" not in loaded and "re" not in loaded, loaded


@pytest.mark.parametrize(
    "value",
    ["\ud800", "a\udfffb", "\udc80\udcff", {"k\ud800": ["x", "\udbff"]}, "é \\ud800 😀 \x00"],
)
def test_encode_writes_lone_surrogates_as_json_escapes_that_read_back(value: object) -> None:
    """Found by tests/fuzz: `"\\ud800"` is valid JSON, so a ledger, a state file or a
    payload can hand us a lone surrogate, which has no UTF-8 form: writing it back
    (or a hook's answer quoting it) raised UnicodeEncodeError."""
    data = jsonio.encode(value)
    data.decode("utf-8")  # strict UTF-8
    assert jsonio.loads(data) == value and json.loads(data) == value


@given(
    st.recursive(
        st.none() | st.text() | st.integers(), lambda c: st.lists(c) | st.dictionaries(st.text(), c)
    )
)
@settings(max_examples=200, deadline=None)
def test_encode_is_dumps_in_utf8_for_text_without_lone_surrogates(value: object) -> None:
    assert jsonio.encode(value) == jsonio.dumps(value).encode("utf-8")
