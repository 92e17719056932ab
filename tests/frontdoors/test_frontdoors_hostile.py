"""Hostile payloads against the parsers every front door shares (MQTT topics, REST bodies, the
console): each is refused with a specific, short reason, never an exception of another kind.

Before issue 12: a 400-digit integer raised OverflowError in look_at (MQTT answered "internal
error: OverflowError", REST 500) and in humanoid posture/speed (paho's thread died); speak took
NUL, control characters, lone surrogates and the locale "en-US\\n", and spoke a BOM-prefixed JSON
body as text; refusals quoted whole values (a 3 kB locale, a 3 kB field name)."""

from __future__ import annotations

import json

import pytest

from anima import commands as cmd
from anima.animation import AnimationLibrary, shipped_folder
from anima.wire.humanoid import parse_humanoid
from anima.wire.payloads import (
    PayloadError,
    control_parsers,
    name_field,
    number,
    number_text,
    parse_ask,
    parse_speak,
    shown,
    speech_text,
)

pytestmark = pytest.mark.fast

BIG = "1" + "2" * 399  # 400 digits: float(int(BIG)) raises OverflowError
BIG_SHOWN = "1222222222…(400 digits)"
SHORT = 200  # no refusal may be longer than this, whatever the value


@pytest.fixture(scope="module")
def library() -> AnimationLibrary:
    lib = AnimationLibrary([shipped_folder()], 28)
    assert not lib.load().errors
    return lib


# ---------------------------------------------------------------------------- numbers
# (JSON of the value, the refusal) for a number field called 'k'
HOSTILE_NUMBERS = [
    (BIG, f"'k' must be finite, got {BIG_SHOWN}"),
    ("-" + BIG, f"'k' must be finite, got -{BIG_SHOWN}"),
    ("1e400", "'k' must be finite, got 1e400"),
    ("-1e400", "'k' must be finite, got -1e400"),
    ("NaN", "'k' must be finite, got NaN"),
    ("Infinity", "'k' must be finite, got Infinity"),
    ("-Infinity", "'k' must be finite, got -Infinity"),
    ("true", "'k' must be a number, got true"),
    ("null", "'k' must be a number, got null"),
    ('"1"', "'k' must be a number, got \"1\""),
    ('{"a": [1, {"b": 2}]}', 'must be a number, got {"a": [1, {"b": 2}]}'),
    ("[" + "1, " * 5000 + "1]", "'k' must be a number, got [1, 1, 1, 1"),
    ('"' + "z" * 5000 + '"', "'k' must be a number, got \"" + "z" * 39 + "…"),
]


@pytest.mark.parametrize(("value", "reason"), HOSTILE_NUMBERS)
def test_the_number_rule(value: str, reason: str) -> None:
    from anima.wire.payloads import json_object

    data = json_object(f'{{"k": {value}}}', {"k"}, {"k"})
    with pytest.raises(PayloadError) as refused:
        number(data["k"], "k")
    assert reason in str(refused.value)
    assert len(str(refused.value)) < SHORT


@pytest.mark.parametrize(
    ("value", "expected"), [("0", 0.0), ("-0.5", -0.5), ("1e3", 1000.0), ("12", 12.0)]
)
def test_ordinary_numbers_pass(value: str, expected: float) -> None:
    assert number(json.loads(value), "k") == expected
    assert number_text(value, "k") == expected


@pytest.mark.parametrize(
    ("word", "reason"),
    [
        (BIG, f"'k' must be finite, got '{BIG[:40]}…'"),
        ("1e400", "'k' must be finite, got '1e400'"),
        ("nan", "'k' must be finite, got 'nan'"),
        ("-inf", "'k' must be finite, got '-inf'"),
        ("true", "'k' must be a number, got 'true'"),
        ("x" * 5000, "'k' must be a number, got '" + "x" * 40 + "…'"),
    ],
)
def test_numbers_typed_as_text_follow_the_same_rule(word: str, reason: str) -> None:
    with pytest.raises(PayloadError) as refused:
        number_text(word, "k")
    assert str(refused.value) == reason


def test_shown_never_quotes_a_whole_value() -> None:
    assert shown(int(BIG)) == BIG_SHOWN
    assert shown(10**19) == "10000000000000000000"  # 20 digits: still short enough
    assert shown(10**20) == "1000000000…(21 digits)"
    assert len(shown({"k": "v" * 10_000})) <= 41
    assert shown(True) == "true"


# ---------------------------------------------------------------------------- each parser
def _look_at(value: str) -> str:
    return f'{{"x": {value}, "y": 0, "z": 1}}'


def _posture(value: str) -> str:
    return f'{{"pitch": {value}, "roll": 0, "yaw": 0, "height": 0}}'


def _speed(value: str) -> str:
    return f'{{"x": 0, "y": {value}, "yaw": 0}}'


@pytest.mark.parametrize(("value", "reason"), HOSTILE_NUMBERS)
@pytest.mark.parametrize("encoded", [True, False], ids=["bytes", "str"])
def test_every_number_field_refuses_hostile_numbers(
    library: AnimationLibrary, value: str, reason: str, encoded: bool
) -> None:
    look_at = control_parsers(library)["look_at"]
    cases = [
        (look_at, _look_at(value), "'x'"),
        (lambda raw: parse_humanoid("posture", raw), _posture(value), "'pitch'"),
        (lambda raw: parse_humanoid("speed", raw), _speed(value), "'y'"),
    ]
    for parse, payload, key in cases:
        raw: bytes | str = payload.encode() if encoded else payload
        with pytest.raises(PayloadError) as refused:
            parse(raw)
        message = str(refused.value)
        assert reason.replace("'k'", key) in message, (payload[:60], message)
        assert len(message) < SHORT


def test_ordinary_numbers_still_become_commands(library: AnimationLibrary) -> None:
    look_at = control_parsers(library)["look_at"]
    assert look_at(_look_at("1e-3")) == cmd.LookAt(x=0.001, y=0.0, z=1.0)
    assert parse_humanoid("posture", _posture("0.05")) == cmd.HumanoidPosture(
        pitch=0.05, roll=0.0, yaw=0.0, height=0.0
    )
    assert parse_humanoid("speed", _speed("-0.1")) == cmd.HumanoidSpeed(x=0.0, y=-0.1, yaw=0.0)


# ---------------------------------------------------------------------------- text
@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        ('{"text": "a\\u0000b"}', "text contains a NUL character (U+0000) at character 1"),
        ('{"text": "ab\\u0007"}', "text contains the control character U+0007 at character 2"),
        ('{"text": "\\u001b[2J hi"}', "text contains the control character U+001B at character 0"),
        ('{"text": "a\\u009bb"}', "text contains the control character U+009B at character 1"),
        ('{"text": "a\\u007fb"}', "text contains the control character U+007F at character 1"),
        ('{"text": "a\\ud800b"}', "text contains a lone surrogate (U+D800) at character 1"),
        ('{"text": "\\udfff"}', "text contains a lone surrogate (U+DFFF) at character 0"),
        ("a\x07b", "text contains the control character U+0007 at character 1"),
        ("a\x0bb", "text contains the control character U+000B at character 1"),
        (
            '{"text": "hi", "locale": "en-US\\n"}',
            "'locale' must look like 'en-US', got \"en-US\\n\"",
        ),
        ('{"text": "hi", "locale": "en-US "}', "'locale' must look like 'en-US', got \"en-US \""),
        (
            '{"text": "hi", "locale": "en\\u0000"}',
            "'locale' must look like 'en-US', got \"en\\u0000\"",
        ),
        (
            '{"text": "hi", "locale": "' + "x" * 3000 + '"}',
            "'locale' must look like 'en-US', got \"" + "x" * 39 + "…",
        ),
        ('{"text": {"a": 1}}', "'text' must be a string, got {\"a\": 1}"),
        ('{"text": "hi", "' + "k" * 3000 + '": 1}', "unknown field '" + "k" * 40 + "…' (fields"),
        ('{"text": 1e400}', "'text' must be a string, got 1e400"),
    ],
)
def test_speak_refuses_what_is_not_text(payload: str, reason: str) -> None:
    for raw in (payload, payload.encode("utf-8", "surrogatepass")):
        with pytest.raises(PayloadError) as refused:
            parse_speak(raw)
        assert reason in str(refused.value)
        assert len(str(refused.value)) < SHORT


@pytest.mark.parametrize(
    "raw",
    [
        b'\xef\xbb\xbf{"text": "hello", "locale": "de-DE"}',  # UTF-8 BOM, as bytes
        '\ufeff{"text": "hello", "locale": "de-DE"}',  # the BOM once decoded
        '\ufeff  {"text": "hello", "locale": "de-DE"}\n',
    ],
)
def test_a_leading_bom_is_dropped_not_spoken(raw: bytes | str) -> None:
    assert parse_speak(raw) == cmd.Speak(text="hello", locale="de-DE")


def test_a_bom_before_plain_text_is_dropped_too() -> None:
    assert parse_speak(b"\xef\xbb\xbfhello") == cmd.Speak(text="hello", locale="en-US")


@pytest.mark.parametrize(
    "text",
    ["line one\nline two", "tab\tand\r\nCRLF", "naïve café — ça va ? 😀", "日本語", "a\u200db"],
)
def test_ordinary_text_and_whitespace_are_spoken(text: str) -> None:
    assert parse_speak(json.dumps({"text": text})).text == text
    assert speech_text(text) == text


def test_ask_follows_the_text_rules() -> None:
    with pytest.raises(PayloadError, match=r"request contains the control character U\+0007"):
        parse_ask("what\x07")
    assert parse_ask("what time is it?") == cmd.Ask(text="what time is it?")


# ---------------------------------------------------------------------------- names
@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        ('{"name": 5}', "'name' must be a non-empty string, got 5"),
        ('{"name": ' + BIG + "}", f"'name' must be a non-empty string, got {BIG_SHOWN}"),
        ('{"name": {"a": "' + "b" * 3000 + '"}}', "'name' must be a non-empty string, got {\"a\":"),
        ('{"name": "a\\ud800"}', "name contains control characters"),
        ('{"name": "n\\u0007od"}', "name contains control characters"),
        ('{"' + "n" * 3000 + '": 1}', "unknown field '" + "n" * 40 + "…' (fields: name)"),
    ],
)
def test_name_fields_refuse_briefly(payload: str, reason: str) -> None:
    with pytest.raises(PayloadError) as refused:
        name_field(payload, "name")
    assert reason in str(refused.value)
    assert len(str(refused.value)) < SHORT


@pytest.mark.parametrize("command", ["mode", "motion"])
def test_humanoid_names_refuse_briefly(command: str) -> None:
    with pytest.raises(PayloadError) as refused:
        parse_humanoid(command, json.dumps({command: ["x" * 5000]}))
    assert str(refused.value).startswith(f'{command!r} must be a non-empty string, got ["xxx')
    assert len(str(refused.value)) < SHORT
