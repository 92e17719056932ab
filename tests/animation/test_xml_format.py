"""Nadine's XML animation format: what a valid file means, and a specific error for each flaw."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anima.animation import DEFAULT_FRAME_MS, parse_animation, parse_animation_file
from anima.errors import AnimaError, AnimationFileError

pytestmark = pytest.mark.fast

CHANNELS = 28  # the shipped body's channel count
SOURCE = "test.xml"


def xml(inner: str, attrs: str = "", name: str | None = "wave") -> str:
    head = f"<animation_name>{name}</animation_name>" if name is not None else ""
    return f"<?xml version='1.0' encoding='utf-8'?>\n<animation{attrs}>{head}{inner}</animation>\n"


def parse_error(text: str, channel_count: int = CHANNELS) -> AnimationFileError:
    with pytest.raises(AnimationFileError) as info:
        parse_animation(text, channel_count, source=SOURCE)
    return info.value


# --------------------------------------------------------------------------- valid files


def test_a_valid_file_gives_name_channels_and_frames() -> None:
    # channels given out of order come back ascending, 1-based as written
    anim = parse_animation(
        xml("<channel9>128 140 152</channel9><channel4>10 20 30</channel4>"),
        CHANNELS,
        source=SOURCE,
    )
    assert anim.name == "wave"
    assert anim.channels == (4, 9)
    assert anim.lengths == (3, 3)
    assert anim.frame_count == 3
    assert anim.frames.shape == (3, 2)
    np.testing.assert_array_equal(anim.frames, [[10, 128], [20, 140], [30, 152]])
    assert anim.source == SOURCE
    assert not anim.is_posture
    assert anim.values() == {4: 10.0, 9: 128.0}


def test_the_default_frame_period_is_30_ms() -> None:
    anim = parse_animation(xml("<channel1>1 2 3 4 5</channel1>"), CHANNELS)
    assert DEFAULT_FRAME_MS == 30.0
    assert anim.frame_period == pytest.approx(0.030)
    assert anim.duration == pytest.approx(4 * 0.030)
    assert anim.source == "<string>"


def test_frame_ms_sets_the_frame_period() -> None:
    anim = parse_animation(xml("<channel1>1 2 3</channel1>", attrs=' frame_ms="40"'), CHANNELS)
    assert anim.frame_period == pytest.approx(0.040)
    assert anim.duration == pytest.approx(0.080)
    fractional = parse_animation(xml("<channel1>1 2</channel1>", attrs=' frame_ms="12.5"'), 28)
    assert fractional.frame_period == pytest.approx(0.0125)


def test_a_file_whose_channels_all_have_one_frame_is_a_posture() -> None:
    posture = parse_animation(xml("<channel1>176</channel1><channel9>120</channel9>"), CHANNELS)
    assert posture.is_posture
    assert posture.frame_count == 1
    assert posture.duration == 0.0
    assert posture.values() == {1: 176.0, 9: 120.0}
    # one channel with two frames makes it a gesture
    gesture = parse_animation(xml("<channel1>176</channel1><channel9>120 121</channel9>"), 28)
    assert not gesture.is_posture


def test_a_shorter_channel_holds_its_last_value() -> None:
    anim = parse_animation(
        xml("<channel1>10 20 30 40</channel1><channel2>5 7</channel2><channel3>9</channel3>"),
        CHANNELS,
    )
    assert anim.lengths == (4, 2, 1)
    assert anim.frame_count == 4
    np.testing.assert_array_equal(anim.frames[:, 0], [10, 20, 30, 40])
    np.testing.assert_array_equal(anim.frames[:, 1], [5, 7, 7, 7])
    np.testing.assert_array_equal(anim.frames[:, 2], [9, 9, 9, 9])
    assert not anim.is_posture


def test_edges_of_the_value_and_channel_ranges_are_accepted() -> None:
    text = xml("<channel1>0 255</channel1><channel28>\n  255\n  0\n</channel28>", name=" spaced ")
    anim = parse_animation(text, CHANNELS)
    assert anim.name == "spaced"  # surrounding whitespace is not part of the name
    assert anim.channels == (1, 28)
    np.testing.assert_array_equal(anim.frames, [[0, 255], [255, 0]])


def test_comments_are_ignored() -> None:
    anim = parse_animation(xml("<!-- a note --><channel2>1 2</channel2>"), CHANNELS)
    assert anim.channels == (2,)


def test_parse_animation_file_reads_the_file_and_names_it(tmp_path: Path) -> None:
    path = tmp_path / "nod.xml"
    path.write_text(xml("<channel9>128 140</channel9>", name="nod"), encoding="utf-8")
    anim = parse_animation_file(path, CHANNELS)
    assert anim.name == "nod"
    assert anim.source == str(path)
    assert parse_animation_file(str(path), CHANNELS).name == "nod"


@settings(max_examples=50, deadline=None)
@given(
    tracks=st.dictionaries(
        st.integers(1, CHANNELS),
        st.lists(st.integers(0, 255), min_size=1, max_size=20),
        min_size=1,
        max_size=6,
    )
)
def test_every_authored_value_is_played_as_written(tracks: dict[int, list[int]]) -> None:
    inner = "".join(f"<channel{c}>{' '.join(map(str, v))}</channel{c}>" for c, v in tracks.items())
    anim = parse_animation(xml(inner), CHANNELS)
    assert anim.channels == tuple(sorted(tracks))
    assert anim.frame_count == max(len(v) for v in tracks.values())
    assert anim.is_posture == all(len(v) == 1 for v in tracks.values())
    for j, c in enumerate(anim.channels):
        values = tracks[c]
        held = values + [values[-1]] * (anim.frame_count - len(values))
        np.testing.assert_array_equal(anim.frames[:, j], held)


# --------------------------------------------------------------------------- malformed files


@pytest.mark.parametrize(
    ("text", "element", "reason"),
    [
        pytest.param(
            xml("<channel3>1 2 x 4</channel3>"),
            "channel3",
            "frame 3: 'x' is not an integer",
            id="bad-integer",
        ),
        pytest.param(
            xml("<channel5>10 12.5</channel5>"),
            "channel5",
            "frame 2: '12.5' is not an integer",
            id="fractional-value",
        ),
        pytest.param(
            xml("<channel1>10 256 3</channel1>"),
            "channel1",
            "frame 2: 256 is outside 0–255",
            id="value-above-255",
        ),
        pytest.param(
            xml("<channel1>-1</channel1>"),
            "channel1",
            "frame 1: -1 is outside 0–255",
            id="negative-value",
        ),
        pytest.param(
            xml("<channel2></channel2>"),
            "channel2",
            "no values",
            id="channel-without-values",
        ),
        pytest.param(
            xml("<channel29>1</channel29>"),
            "channel29",
            "channel 29 is beyond the body's 28 channels",
            id="channel-beyond-body",
        ),
        pytest.param(
            xml("<channel0>1</channel0>"),
            "channel0",
            "channel 0 is beyond the body's 28 channels",
            id="channel-zero",
        ),
        pytest.param(
            xml("<channel4>1</channel4><channel4>2</channel4>"),
            "channel4",
            "channel given twice",
            id="channel-twice",
        ),
        pytest.param(
            "<anim><animation_name>wave</animation_name><channel1>1</channel1></anim>",
            "anim",
            "the root element must be <animation>",
            id="wrong-root",
        ),
        pytest.param(
            xml("<channel1>1</channel1>", name=None),
            "animation",
            "missing <animation_name>",
            id="missing-name",
        ),
        pytest.param(
            xml("<channel1>1</channel1>", name="   "),
            "animation_name",
            "empty animation name",
            id="empty-name",
        ),
        pytest.param(
            xml("<animation_name>other</animation_name><channel1>1</channel1>"),
            "animation_name",
            "more than one <animation_name>",
            id="two-names",
        ),
        pytest.param(
            xml(""),
            "animation",
            "no <channelN> elements: nothing to play",
            id="no-channels",
        ),
        pytest.param(
            xml("<channel1>1</channel1><speed>3</speed>"),
            "speed",
            "unknown element (expected <animation_name> or <channelN>)",
            id="unknown-element",
        ),
        pytest.param(
            xml("<channelX>1</channelX>"),
            "channelX",
            "unknown element",
            id="channel-without-number",
        ),
        pytest.param(
            xml("<channel1>1</channel1>", attrs=' loop="yes"'),
            "animation",
            "unknown attribute 'loop'",
            id="unknown-attribute",
        ),
        pytest.param(
            xml("<channel1>1</channel1>", attrs=' frame_ms="fast"'),
            "animation",
            "frame_ms 'fast' is not a number",
            id="frame-ms-not-a-number",
        ),
        pytest.param(
            xml("<channel1>1</channel1>", attrs=' frame_ms="0"'),
            "animation",
            "frame_ms must be in [1, 10000], got 0",
            id="frame-ms-zero",
        ),
        pytest.param(
            xml("<channel1>1</channel1>", attrs=' frame_ms="-30"'),
            "animation",
            "frame_ms must be in [1, 10000]",
            id="frame-ms-negative",
        ),
        pytest.param(
            xml("<channel1>1</channel1>", attrs=' frame_ms="20000"'),
            "animation",
            "frame_ms must be in [1, 10000]",
            id="frame-ms-too-long",
        ),
        pytest.param(
            xml("<channel1>1</channel1>", attrs=' frame_ms="nan"'),
            "animation",
            "frame_ms must be in [1, 10000], got nan",
            id="frame-ms-nan",
        ),
    ],
)
def test_each_flaw_names_the_file_and_the_element(text: str, element: str, reason: str) -> None:
    err = parse_error(text)
    assert err.path == SOURCE
    assert err.element == element
    assert reason in err.reason
    assert str(err).startswith(f"{SOURCE}: <{element}>: ")
    assert reason in str(err)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        pytest.param("", "empty file", id="empty"),
        pytest.param("  \n\t\n ", "empty file", id="whitespace-only"),
        pytest.param(
            "<animation><animation_name>x</animation_name>", "not well-formed XML", id="unclosed"
        ),
        pytest.param("just some words", "not well-formed XML", id="not-xml"),
        pytest.param(
            "<animation><channel1>1</channel2></animation>",
            "not well-formed XML",
            id="mismatched-tag",
        ),
    ],
)
def test_file_level_flaws_name_the_file(text: str, reason: str) -> None:
    err = parse_error(text)
    assert err.path == SOURCE
    assert err.element is None
    assert str(err).startswith(f"{SOURCE}: {reason}")


def test_the_channel_limit_is_the_body_not_a_constant() -> None:
    err = parse_error(xml("<channel10>1</channel10>"), channel_count=9)
    assert err.element == "channel10"
    assert "beyond the body's 9 channels" in err.reason
    assert parse_animation(xml("<channel9>1</channel9>"), 9).channels == (9,)


def test_an_unreadable_file_names_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "gone.xml"
    with pytest.raises(AnimationFileError) as info:
        parse_animation_file(missing, CHANNELS)
    assert info.value.path == str(missing)
    assert "cannot read" in str(info.value)
    binary = tmp_path / "binary.xml"
    binary.write_bytes(b"\xff\xfe\x00<animation")  # a UTF-16 byte-order mark
    with pytest.raises(AnimationFileError, match="is UTF-16 text: save it as UTF-8"):
        parse_animation_file(binary, CHANNELS)


def test_a_file_error_names_the_file_path(tmp_path: Path) -> None:
    path = tmp_path / "broken.xml"
    path.write_text(xml("<channel7>1 2 oops</channel7>"), encoding="utf-8")
    with pytest.raises(AnimationFileError) as info:
        parse_animation_file(path, CHANNELS)
    assert str(info.value) == f"{path}: <channel7>: frame 3: 'oops' is not an integer"


def test_animation_file_error_is_an_anima_error() -> None:
    assert issubclass(AnimationFileError, AnimaError)
    with pytest.raises(AnimaError):
        parse_animation("", CHANNELS)
