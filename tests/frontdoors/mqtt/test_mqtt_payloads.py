"""The payload parsers every front door shares (``anima.wire.payloads``), without a broker."""

from __future__ import annotations

import json

import pytest

from anima import commands as cmd
from anima.animation import AnimationLibrary, shipped_folder
from anima.errors import InvalidCommandError, UnknownAnimationError
from anima.wire.payloads import (
    MAX_COORD,
    MAX_NAME,
    MAX_PAYLOAD,
    MAX_TEXT,
    PayloadError,
    control_parsers,
    decode,
    excerpt,
    parse_animation,
    parse_look_at,
    parse_look_at_target,
    parse_speak,
    parse_stop_speak,
)

pytestmark = pytest.mark.fast


@pytest.fixture(scope="module")
def library() -> AnimationLibrary:
    lib = AnimationLibrary([shipped_folder()], 28)
    assert not lib.load().errors
    return lib


# ---------------------------------------------------------------------------- decode
@pytest.mark.parametrize("raw", [b"  nod \n", "  nod \n", b"nod"])
def test_decode_strips_bytes_and_text_alike(raw: bytes | str) -> None:
    assert decode(raw) == "nod"


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"", "empty payload"),
        (b" \t\r\n", "empty payload"),
        (b"\xc3\x28", "not UTF-8 text (byte 0)"),
        (b"ok\xff", "not UTF-8 text (byte 2)"),
        (b"a\x00b", "NUL character"),
        (b"x" * (MAX_PAYLOAD + 1), f"payload of {MAX_PAYLOAD + 1} bytes exceeds"),
        ("é" * (MAX_PAYLOAD // 2 + 1), "exceeds the 65536-byte limit"),  # counted in bytes
    ],
)
def test_decode_refuses_with_the_reason(raw: bytes | str, reason: str) -> None:
    with pytest.raises(PayloadError, match=reason.replace("(", r"\(").replace(")", r"\)")):
        decode(raw)


def test_a_payload_of_exactly_the_limit_is_accepted() -> None:
    assert decode(b"x" * MAX_PAYLOAD) == "x" * MAX_PAYLOAD


def test_payload_errors_are_invalid_command_errors() -> None:
    with pytest.raises(InvalidCommandError):
        decode(b"")


def test_excerpt_is_short_printable_and_marks_the_cut() -> None:
    assert excerpt(b"a\nb") == "a\\nb"
    assert excerpt(b"\xff") == "\ufffd"
    long = excerpt("x" * 500)
    assert len(long) == 121
    assert long.endswith("…")


# ---------------------------------------------------------------------------- speak
def test_speak_plain_text_is_en_us() -> None:
    assert parse_speak(b"  Hello, world!  ") == cmd.Speak(text="Hello, world!", locale="en-US")


def test_speak_json_with_and_without_a_locale() -> None:
    assert parse_speak('{"text": " Hallo ", "locale": "de-DE"}') == cmd.Speak(
        text="Hallo", locale="de-DE"
    )
    assert parse_speak('{"text": "Hi"}') == cmd.Speak(text="Hi", locale="en-US")


@pytest.mark.parametrize("locale", ["en-US", "fr", "de-DE", "es-419", "zh-Hant-TW", "fil-PH"])
def test_speak_accepts_bcp47_like_locales(locale: str) -> None:
    payload = json.dumps({"text": "hi", "locale": locale})
    assert parse_speak(payload).locale == locale


@pytest.mark.parametrize(
    "locale", ["english", "EN-us", "en_US", "", "e", "en-US-x", "en-U5", "en-"]
)
def test_speak_refuses_malformed_locales(locale: str) -> None:
    with pytest.raises(PayloadError, match="'locale' must look like 'en-US'"):
        parse_speak(json.dumps({"text": "hi", "locale": locale}))


@pytest.mark.parametrize("locale", [5, None, ["en-US"], {"tag": "en-US"}])
def test_speak_refuses_a_locale_that_is_not_a_string(locale: object) -> None:
    with pytest.raises(PayloadError, match="'locale' must look like"):
        parse_speak(json.dumps({"text": "hi", "locale": locale}))


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        ('{"text": 5}', "'text' must be a string"),
        ('{"text": "   "}', "'text' is empty"),
        ('{"locale": "en-US"}', "missing field 'text'"),
        ('{"text": "hi", "voice": "x"}', "unknown field 'voice'"),
        ('{"text": "hi"', "invalid JSON"),
        ("x" * (MAX_TEXT + 1), f"exceeds the {MAX_TEXT} limit"),
        (json.dumps({"text": "x" * (MAX_TEXT + 1)}), f"exceeds the {MAX_TEXT} limit"),
    ],
)
def test_speak_refusals(payload: str, reason: str) -> None:
    with pytest.raises(PayloadError, match=reason):
        parse_speak(payload)


def test_speak_text_that_only_looks_like_json_elsewhere_is_plain_text() -> None:
    assert parse_speak('Say "{hi}"').text == 'Say "{hi}"'


# ---------------------------------------------------------------------------- stop_speak
@pytest.mark.parametrize("raw", [b"", b"now", b"\xff\xfe", "{}"])
def test_stop_speak_takes_any_payload(raw: bytes | str) -> None:
    assert parse_stop_speak(raw) == cmd.StopSpeaking()


def test_stop_speak_still_has_a_size_limit() -> None:
    with pytest.raises(PayloadError, match="exceeds"):
        parse_stop_speak(b"x" * (MAX_PAYLOAD + 1))


# ---------------------------------------------------------------------------- look_at
def test_look_at_parses_metres() -> None:
    assert parse_look_at(b'{"x": 1.5, "y": -0.25, "z": 0}') == cmd.LookAt(x=1.5, y=-0.25, z=0.0)


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        ("1, 2, 3", "invalid JSON"),
        ("[1, 2, 3]", "expected a JSON object, got list"),
        ('"x"', "expected a JSON object, got str"),
        ('{"x": 1, "y": 2}', "missing field 'z'"),
        ('{"x": "left"}', "'x' must be a number, got \"left\""),  # the value before the missing y
        ('{"x": 1, "y": 2, "z": 3, "t": 0}', "unknown field 't'"),
        ('{"x": null, "y": 2, "z": 3}', "'x' must be a number, got null"),
        ('{"x": 1, "y": false, "z": 3}', "'y' must be a number, got false"),
        ('{"x": 1, "y": 2, "z": "3"}', "'z' must be a number"),
        ('{"x": NaN, "y": 2, "z": 3}', "'x' must be finite"),
        ('{"x": 1, "y": Infinity, "z": 3}', "'y' must be finite"),
        ('{"x": 1, "y": 2, "z": -1e400}', "'z' must be finite"),
        (f'{{"x": {MAX_COORD + 0.5}, "y": 0, "z": 0}}', "farther than 100 m"),
        ('{"x": 0, "y": 0.0, "z": -0.0}', "no direction to look"),
        ("[" * 50_000, "nested too deeply"),
        ('{"x": ' + "9" * 5000 + ', "y": 0, "z": 0}', "Exceeds the limit"),
    ],
)
def test_look_at_refusals(payload: str, reason: str) -> None:
    with pytest.raises(PayloadError, match=reason):
        parse_look_at(payload)


def test_look_at_accepts_the_limit_distance() -> None:
    assert parse_look_at(json.dumps({"x": MAX_COORD, "y": 0, "z": 0})).x == MAX_COORD


# ---------------------------------------------------------------------------- names
def test_animation_and_posture_names(library: AnimationLibrary) -> None:
    assert parse_animation(b" nod\n", library) == cmd.PlayAnimation(name="nod")
    assert parse_look_at_target(b"Posture_LookAtZoom", library) == cmd.LookAtTarget(
        name="Posture_LookAtZoom"
    )
    assert parse_look_at_target(b"LOOKUPPostureDefault", library).name == "LOOKUPPostureDefault"


def test_unknown_animation_suggests_the_nearest_name(library: AnimationLibrary) -> None:
    with pytest.raises(UnknownAnimationError, match="did you mean nod"):
        parse_animation("nodd", library)


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        ("nod", "'nod' is a gesture, not a posture"),
        ("x" * (MAX_NAME + 1), f"exceeds the {MAX_NAME} limit"),
        ("Posture\tLookAtZoom", "control characters"),
    ],
)
def test_look_at_target_refusals(library: AnimationLibrary, payload: str, reason: str) -> None:
    with pytest.raises(InvalidCommandError, match=reason):
        parse_look_at_target(payload, library)


def test_control_parsers_cover_the_contract_and_the_agent(library: AnimationLibrary) -> None:
    parsers = control_parsers(library)
    assert sorted(parsers) == [
        "animation",
        "ask",  # the voice agent: a request in words
        "cancel_animation",  # the SDK: a handle's cancel() ends its own animation only
        "estop",  # the SDK: hold still until reset
        "listen",  # the voice agent: a wake
        "look_at",
        "look_at_target",
        "reset",  # the SDK: release the estop
        "speak",
        "stop_animation",  # the SDK: cancel an animation
        "stop_speak",
    ]
    assert parsers["estop"](b"") == cmd.EmergencyStop()
    assert parsers["reset"]("now") == cmd.ResetEmergencyStop()
    assert parsers["stop_animation"](b"") == cmd.StopAnimation()
    assert parsers["listen"](b"") == cmd.Listen()
    assert parsers["ask"](b" wave ") == cmd.Ask(text="wave")
    assert parsers["animation"]("shake") == cmd.PlayAnimation(name="shake")
    assert parsers["look_at_target"]("Posture_LookAtZoom") == cmd.LookAtTarget(
        name="Posture_LookAtZoom"
    )
