"""checker.ini parsing: the shipped body, and errors that name the file and the line."""

from __future__ import annotations

from pathlib import Path

import pytest

from anima.body import Role, default_body_path, load_body, parse_body
from anima.errors import AnimaError, BodyDefinitionError, ConfigError

pytestmark = pytest.mark.fast

# A small valid definition; the error tests below break one line of it at a time.
VALID = """\
; a three-channel head
[board]
port = /dev/ttyS9
baud = 57600
channels = 3

[safety]
max_speed = 300

[channels]
1 = lids   150  40  220  role=eyelids closed=40
2 = yaw    128  40  216  role=neck.yaw zero=128 rad=0.0085 speed=500
3 = brows  128  60  200

[posture rest]
lids = 90
yaw = 128
"""


def _replace(old: str, new: str) -> str:
    assert old in VALID
    return VALID.replace(old, new)


def _line_of(text: str, fragment: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), start=1) if fragment in line)


def test_the_valid_example_parses() -> None:
    body = parse_body(VALID, source="head.ini")
    assert body.names == ("lids", "yaw", "brows")
    assert body.board.port == "/dev/ttyS9"
    assert body.board.baud == 57600
    assert body.channel("yaw").max_speed == 500
    assert body.max_speeds().tolist() == [300.0, 500.0, 300.0]
    assert body.posture("rest").values == {"lids": 90.0, "yaw": 128.0}
    assert body.source == "head.ini"


def test_the_shipped_body_has_28_channels_with_roles_and_calibrations() -> None:
    body = load_body()
    assert len(body) == 28
    assert body.source == str(default_body_path())
    expected = {
        Role.LIPS_OPEN: "lip_open",
        Role.LIPS_WIDE: "lip_wide",
        Role.LIPS_NARROW: "lip_narrow",
        Role.EYELIDS: "eyelids",
        Role.EYES_YAW: "eyes_yaw",
        Role.EYES_PITCH: "eyes_pitch",
        Role.NECK_YAW: "neck_yaw",
        Role.NECK_PITCH: "neck_pitch",
        Role.NECK_ROLL: "neck_roll",
    }
    for role, name in expected.items():
        index = body.role_index(role)
        assert index is not None, role
        assert body.channels[index].name == name
    for name in ("neck_yaw", "neck_pitch", "neck_roll", "eyes_yaw", "eyes_pitch"):
        cal = body.channel(name).calibration
        assert cal is not None, name
        assert cal.rad_per_unit != 0.0
        # the calibrated zero is inside the channel's range: 0 rad is reachable
        assert body.channel(name).min <= cal.zero <= body.channel(name).max
    lids = body.channel("eyelids")
    assert lids.closed is not None
    assert lids.min <= lids.closed < lids.default
    assert body.lip_rule is not None
    assert not body.lip_rule.violated(body.defaults())
    assert {"rest", "default"} <= set(body.postures)
    assert body.board.baud == 115200
    assert (body.lower() <= body.defaults()).all()
    assert (body.defaults() <= body.upper()).all()
    assert (body.max_speeds() > 0).all()


def test_load_body_reads_a_file(tmp_path: Path) -> None:
    path = tmp_path / "head.ini"
    path.write_text(VALID, encoding="utf-8")
    body = load_body(path)
    assert body.names == ("lids", "yaw", "brows")
    assert body.source == str(path)


def test_a_missing_file_is_a_body_definition_error(tmp_path: Path) -> None:
    path = tmp_path / "nope.ini"
    with pytest.raises(BodyDefinitionError, match=r"nope\.ini") as info:
        load_body(path)
    assert info.value.line is None


# (what breaks the file, the text of the broken line, what the message must say)
BROKEN = [
    ("bad number", _replace("3 = brows  128  60", "3 = brows  12x8  60"), "3 = brows", "12x8"),
    ("bad integer", _replace("baud = 57600", "baud = fast"), "baud = fast", "not an integer"),
    ("unknown role", _replace("role=eyelids", "role=eyelash"), "1 = lids", "unknown role"),
    ("unknown option", _replace("rad=0.0085", "rad=0.0085 gain=2"), "2 = yaw", "unknown option"),
    (
        "duplicate channel",
        _replace("3 = brows  128  60  200", "3 = brows  128  60  200\n2 = jaw 10 0 20"),
        "2 = jaw",
        "defined again",
    ),
    (
        "channel beyond count",
        _replace("3 = brows  128  60  200", "3 = brows  128  60  200\n4 = jaw 10 0 20"),
        "4 = jaw",
        "beyond",
    ),
    ("missing channel", _replace("3 = brows  128  60  200\n", ""), "channels = 3", "not defined"),
    ("posture unknown channel", _replace("yaw = 128\n", "pitch = 128\n"), "pitch = 128", "pitch"),
    ("posture out of range", _replace("lids = 90", "lids = 230"), "lids = 230", "outside"),
    ("unknown section", _replace("[safety]", "[safty]"), "[safty]", "unknown section"),
    ("unknown board key", _replace("baud = 57600", "bauds = 57600"), "bauds", "unknown"),
    ("unknown safety key", _replace("max_speed = 300", "speed = 300"), "speed = 300", "unknown"),
    (
        "short channel line",
        _replace("3 = brows  128  60  200", "3 = brows 128"),
        "3 = brows",
        "min",
    ),
    ("default outside range", _replace("3 = brows  128", "3 = brows  250"), "3 = brows", "outside"),
    ("zero without rad", _replace(" rad=0.0085", ""), "2 = yaw", "zero= and rad="),
    ("non-finite number", _replace("3 = brows  128", "3 = brows  inf"), "3 = brows", "finite"),
    ("entry outside a section", "port = x\n" + VALID, "port = x", "before any"),
    ("not key = value", _replace("baud = 57600", "baud 57600"), "baud 57600", "key = value"),
]


@pytest.mark.parametrize(
    ("text", "line_text", "says"), [b[1:] for b in BROKEN], ids=[b[0] for b in BROKEN]
)
def test_parse_errors_name_the_file_and_line(text: str, line_text: str, says: str) -> None:
    line = _line_of(text, line_text)
    with pytest.raises(BodyDefinitionError) as info:
        parse_body(text, source="robots/head.ini")
    err = info.value
    assert err.path == "robots/head.ini"
    assert err.line == line
    assert str(err).startswith(f"robots/head.ini:{line}: ")
    assert says in str(err)


def test_load_body_errors_name_the_real_path(tmp_path: Path) -> None:
    path = tmp_path / "bad.ini"
    text = _replace("role=eyelids", "role=eyelash")
    path.write_text(text, encoding="utf-8")
    with pytest.raises(BodyDefinitionError) as info:
        load_body(path)
    assert str(info.value).startswith(f"{path}:{_line_of(text, '1 = lids')}: ")


def test_a_head_channel_without_calibration_is_refused() -> None:
    text = _replace(" zero=128 rad=0.0085", "")
    with pytest.raises(BodyDefinitionError, match="calibration"):
        parse_body(text, source="head.ini")


def test_an_empty_definition_is_refused() -> None:
    with pytest.raises(BodyDefinitionError, match="no \\[channels\\]"):
        parse_body("[board]\nbaud = 9600\n", source="empty.ini")


def test_body_definition_error_is_a_config_error_is_an_anima_error() -> None:
    assert issubclass(BodyDefinitionError, ConfigError)
    assert issubclass(ConfigError, AnimaError)
    with pytest.raises(ConfigError):
        parse_body(_replace("[safety]", "[safty]"))
    with pytest.raises(AnimaError):
        parse_body(_replace("[safety]", "[safty]"))
