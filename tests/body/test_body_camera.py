"""A body's ``[camera]``: parsed into ``Body.camera``, refused line by line, and Reachy Mini's
head camera declared with the figures of Pollen's SDK."""

from __future__ import annotations

import math

import pytest

from anima.body import load_body, parse_body
from anima.config.vision import CameraGeometry
from anima.errors import BodyDefinitionError

pytestmark = pytest.mark.fast

BODY = """\
[channels]
1 = yaw  128  40  216  role=neck.yaw zero=128 rad=0.0085

[camera]
mount = head
hfov_deg = 78.5
position_m = 0.04 -0.01 0.05
rpy_deg = 0, 12, -3
"""
NO_CAMERA = BODY.split("[camera]", maxsplit=1)[0]
CAMERA_LINE = {"mount": 5, "hfov_deg": 6, "position_m": 7, "rpy_deg": 8}


def _with(key: str, value: str) -> str:
    lines = BODY.splitlines()
    lines[CAMERA_LINE[key] - 1] = f"{key} = {value}"
    return "\n".join(lines) + "\n"


def test_a_camera_section_is_the_bodys_camera() -> None:
    body = parse_body(BODY, source="robot.ini")
    assert body.camera == CameraGeometry(
        mount="head", hfov_deg=78.5, position_m=(0.04, -0.01, 0.05), rpy_deg=(0.0, 12.0, -3.0)
    )


def test_keys_left_out_keep_the_defaults() -> None:
    body = parse_body(NO_CAMERA + "[camera]\nhfov_deg = 90\n", source="r.ini")
    assert body.camera == CameraGeometry(hfov_deg=90.0)
    assert body.camera.mount == "head"
    assert body.camera.position_m == (0.05, 0.0, 0.0)


def test_a_body_without_a_camera_section_has_none() -> None:
    assert parse_body(NO_CAMERA).camera is None


@pytest.mark.parametrize(
    ("key", "value", "said"),
    [
        ("mount", "shoulder", "[camera] mount must be head or fixed, got 'shoulder'"),
        ("hfov_deg", "5", "[camera] hfov_deg must be in [10, 180] degrees, got 5.0"),
        ("hfov_deg", "181", "[camera] hfov_deg must be in [10, 180] degrees, got 181.0"),
        ("hfov_deg", "wide", "[camera] hfov_deg: 'wide' is not a number"),
        ("hfov_deg", "nan", "[camera] hfov_deg: 'nan' is not finite"),
        ("position_m", "0.04 0.05", "[camera] position_m must be 3 numbers, got 2"),
        ("position_m", "0.04 0 0.05 1", "[camera] position_m must be 3 numbers, got 4"),
        ("position_m", "0.04 x 0.05", "[camera] position_m: 'x' is not a number"),
        ("position_m", "0 0 9", "[camera] position_m must be 3 numbers within ±5 m"),
        ("rpy_deg", "0 200 0", "[camera] rpy_deg must be 3 numbers within ±180 degrees"),
        ("rpy_deg", "", "[camera] rpy_deg must be 3 numbers, got 0"),
    ],
)
def test_a_bad_camera_entry_is_refused_with_its_file_and_line(
    key: str, value: str, said: str
) -> None:
    with pytest.raises(BodyDefinitionError) as caught:
        parse_body(_with(key, value), source="robot.ini")
    assert str(caught.value).startswith(f"robot.ini:{CAMERA_LINE[key]}: {said}"), caught.value
    assert caught.value.line == CAMERA_LINE[key]


def test_an_unknown_or_repeated_camera_key_is_refused_by_line() -> None:
    with pytest.raises(BodyDefinitionError, match=r"^r\.ini:9: unknown \[camera\] key 'fov'"):
        parse_body(BODY + "fov = 60\n", source="r.ini")
    with pytest.raises(BodyDefinitionError, match=r"^r\.ini:9: \[camera\] hfov_deg set twice"):
        parse_body(BODY + "hfov_deg = 60\n", source="r.ini")


def test_reachy_mini_declares_its_head_camera() -> None:
    camera = load_body("reachy_mini").camera
    assert camera is not None
    # Pollen's SDK (reachy_mini 1.13.0, media/camera_constants.py): the Lite's K is calibrated
    # at 3840x2592 with fx = 2001.8076…; its 1920x1080 mode has crop factor 1.115
    fx = 2001.8076426486707 * (1920 / 3840) * 1.115
    assert camera.hfov_deg == pytest.approx(math.degrees(2 * math.atan(1920 / (2 * fx))), abs=0.05)
    assert camera.mount == "head"
    # vision/look_at.py DEFAULT_HEAD_TO_CAMERA_TRANSFORM: 4.37 cm forward, 5.12 cm up, no turn
    assert camera.position_m == (0.0437, 0.0, 0.0512)
    assert camera.rpy_deg == (0.0, 0.0, 0.0)


def test_nadine_declares_no_camera() -> None:
    assert load_body("nadine").camera is None
