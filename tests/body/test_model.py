"""The body model: channels, calibrations, roles, postures, the lip-width rule."""

from __future__ import annotations

import math

import numpy as np
import pytest

from anima.body import Body, Calibration, Channel, Posture, Role, load_body
from anima.errors import ConfigError, InvalidCommandError, UnknownChannelError, UnknownPostureError

pytestmark = pytest.mark.fast


def _head() -> tuple[Channel, ...]:
    return (
        Channel(name="yaw", default=128, min=40, max=216, role=Role.NECK_YAW,
                calibration=Calibration(zero=128, rad_per_unit=0.01)),
        Channel(name="wide", default=20, min=20, max=200, role=Role.LIPS_WIDE),
        Channel(name="narrow", default=20, min=20, max=200, role=Role.LIPS_NARROW),
        Channel(name="open", default=30, min=20, max=200, role=Role.LIPS_OPEN),
    )  # fmt: skip


def test_calibration_round_trips_and_handles_reversed_servos() -> None:
    cal = Calibration(zero=128, rad_per_unit=-0.005)
    assert cal.to_radians(128) == 0.0
    assert cal.to_radians(138) == pytest.approx(-0.05)
    assert cal.to_units(cal.to_radians(77.5)) == pytest.approx(77.5)


@pytest.mark.parametrize(
    ("zero", "rad"), [(128.0, 0.0), (math.nan, 0.01), (128.0, math.inf)], ids=["zero", "nan", "inf"]
)
def test_bad_calibrations_are_refused(zero: float, rad: float) -> None:
    with pytest.raises(ConfigError):
        Calibration(zero=zero, rad_per_unit=rad)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"default": 5.0, "min": 10.0, "max": 0.0},
        {"default": 300.0, "min": 0.0, "max": 255.0},
        {"default": math.nan, "min": 0.0, "max": 255.0},
        {"default": 5.0, "min": 0.0, "max": 255.0, "max_speed": 0.0},
        {"default": 5.0, "min": 0.0, "max": 255.0, "max_speed": math.inf},
        {"default": 5.0, "min": 0.0, "max": 255.0, "closed": 256.0},
    ],
    ids=["min>max", "default-out", "nan", "speed-0", "speed-inf", "closed-out"],
)
def test_bad_channels_are_refused_naming_the_channel(kwargs: dict[str, float]) -> None:
    with pytest.raises(ConfigError, match="'ch'"):
        Channel(name="ch", **kwargs)


def test_lookup_by_name_and_index() -> None:
    body = Body(channels=_head())
    assert len(body) == 4
    assert body.index("wide") == 1
    assert body.index(3) == 3
    assert body.indices(["open", 0]).tolist() == [3, 0]
    assert body.channel("yaw").role is Role.NECK_YAW
    assert body.role_index(Role.LIPS_NARROW) == 2
    assert body.role_index(Role.EYELIDS) is None
    with pytest.raises(UnknownChannelError, match="'jaw'"):
        body.index("jaw")
    with pytest.raises(UnknownChannelError, match="out of range"):
        body.index(4)
    with pytest.raises(UnknownChannelError):
        body.index(-1)
    # a bad channel is a bad command: generic callers can catch ValueError
    assert issubclass(UnknownChannelError, InvalidCommandError)
    assert issubclass(UnknownChannelError, ValueError)


def test_derived_arrays_follow_channel_order() -> None:
    body = Body(channels=_head(), default_max_speed=250.0)
    assert body.defaults().tolist() == [128, 20, 20, 30]
    assert body.lower().tolist() == [40, 20, 20, 20]
    assert body.upper().tolist() == [216, 200, 200, 200]
    assert body.max_speeds().tolist() == [250.0] * 4


def test_postures_are_checked_and_looked_up() -> None:
    body = Body(channels=_head(), postures={"smile": Posture(name="smile", values={"wide": 90})})
    assert body.posture("smile").values == {"wide": 90}
    with pytest.raises(UnknownPostureError, match=r"'frown'.*smile"):
        body.posture("frown")
    with pytest.raises(ConfigError, match="outside"):
        Body(channels=_head(), postures={"x": Posture(name="x", values={"wide": 500})})
    with pytest.raises(UnknownChannelError):
        Body(channels=_head(), postures={"x": Posture(name="x", values={"jaw": 5})})


def test_duplicate_names_and_roles_are_refused() -> None:
    head = _head()
    with pytest.raises(ConfigError, match="duplicate channel name 'yaw'"):
        Body(channels=(*head, Channel(name="yaw", default=0, min=0, max=1)))
    with pytest.raises(ConfigError, match=r"lips\.wide"):
        Body(channels=(*head, Channel(name="w2", default=20, min=0, max=99, role=Role.LIPS_WIDE)))
    with pytest.raises(ConfigError, match="at least one channel"):
        Body(channels=())


def test_head_channels_need_a_calibration() -> None:
    pitch = Channel(name="pitch", default=128, min=0, max=255, role=Role.NECK_PITCH)
    with pytest.raises(ConfigError, match="'pitch' needs a calibration"):
        Body(channels=(*_head(), pitch))


def test_lip_width_rule_thresholds_and_violation() -> None:
    body = Body(channels=_head(), lip_active_fraction=0.25)
    rule = body.lip_rule
    assert rule is not None
    assert (rule.open, rule.wide, rule.narrow) == (3, 1, 2)
    # active = rest + fraction · (max − rest)
    assert rule.wide_active == pytest.approx(20 + 0.25 * 180)
    frame = body.defaults()
    assert not rule.violated(frame)
    frame[1] = 150
    assert not rule.violated(frame)  # wide alone is fine
    frame[2] = rule.narrow_active  # at the threshold is not active
    assert not rule.violated(frame)
    frame[2] = rule.narrow_active + 1
    assert rule.violated(frame)


def test_no_lip_rule_without_all_three_lip_roles() -> None:
    body = Body(channels=_head()[:3])
    assert body.lip_rule is None


def test_the_shipped_rest_posture_is_in_range() -> None:
    body = load_body()
    rest = body.posture("rest")
    for name, value in rest.values.items():
        ch = body.channel(name)
        assert ch.min <= value <= ch.max
    default = body.posture("default")
    assert np.array([default.values[n] for n in body.names]).tolist() == body.defaults().tolist()
