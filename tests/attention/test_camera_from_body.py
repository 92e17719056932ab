"""Vision takes the body's camera where the user set nothing: Reachy Mini's head camera with no
``vision`` keys, the user's key where one is set (file, environment, code), and the built-in
camera on a body that declares none (Nadine)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from anima.attention.service import Attention
from anima.body import load_body
from anima.config import load_config
from anima.config.vision import AttentionConfig, CameraGeometry, VisionConfig
from anima.testing import make_engine

pytestmark = pytest.mark.fast

REACHY = CameraGeometry(
    mount="head", hfov_deg=81.4, position_m=(0.0437, 0.0, 0.0512), rpy_deg=(0.0, 0.0, 0.0)
)


def _attention(config_text: str, tmp_path: Path, env: dict[str, str] | None = None) -> Attention:
    """Attention as the runtime makes it: the config loaded, the body it names, its engine."""
    path = tmp_path / "anima.yaml"
    path.write_text(config_text)
    cfg = load_config(path, env=env or {})
    engine, _, clock = make_engine(body=load_body(cfg.body.checker_ini))
    return Attention(engine, None, clock, cfg.vision, AttentionConfig(idle_glances=False))


def _geometry(att: Attention) -> CameraGeometry:
    return att.vision.geometry()


@pytest.mark.parametrize(
    "config_text",
    ["driver:\n  type: reachy_mini\n", "body:\n  checker_ini: reachy_mini\n"],
)
def test_reachy_mini_with_no_vision_keys_sees_with_its_head_camera(
    config_text: str, tmp_path: Path
) -> None:
    att = _attention(config_text + "vision:\n  source: sim\n", tmp_path)
    assert _geometry(att) == REACHY
    assert att.camera.hfov == pytest.approx(math.radians(81.4))
    assert att.camera.mount == "head"
    np.testing.assert_allclose(att.camera.position, [0.0437, 0.0, 0.0512])


def test_a_users_field_of_view_wins_over_the_bodys(tmp_path: Path) -> None:
    att = _attention("driver: reachy_mini\nvision:\n  hfov_deg: 70\n", tmp_path)
    assert att.camera.hfov == pytest.approx(math.radians(70.0))
    # the keys not set are still the body's
    assert _geometry(att) == CameraGeometry(
        mount="head", hfov_deg=70.0, position_m=REACHY.position_m, rpy_deg=REACHY.rpy_deg
    )


def test_the_environment_and_the_file_set_keys_one_by_one(tmp_path: Path) -> None:
    att = _attention(
        "driver: reachy_mini\nvision:\n  mount: fixed\n",
        tmp_path,
        env={"ANIMA_VISION__POSITION_M": "[0.1, 0, 0.3]", "ANIMA_VISION__HFOV_DEG": "95"},
    )
    assert _geometry(att) == CameraGeometry(
        mount="fixed", hfov_deg=95.0, position_m=(0.1, 0.0, 0.3), rpy_deg=REACHY.rpy_deg
    )


def test_nadine_keeps_the_built_in_camera(tmp_path: Path) -> None:
    att = _attention("vision:\n  source: sim\n", tmp_path)
    assert _geometry(att) == CameraGeometry()
    assert att.camera.hfov == pytest.approx(math.radians(65.0))
    np.testing.assert_allclose(att.camera.position, [0.05, 0.0, 0.0])


def test_a_key_the_user_set_to_the_default_still_wins() -> None:
    """Set is set: 65° written out is 65°, though it is the built-in default."""
    reachy = load_body("reachy_mini").camera
    assert VisionConfig(hfov_deg=65.0).geometry(reachy).hfov_deg == 65.0
    assert VisionConfig().geometry(reachy) == REACHY
    assert VisionConfig().geometry(None) == CameraGeometry()


def test_the_config_says_what_the_user_set_and_nothing_more(tmp_path: Path) -> None:
    """``anima config`` prints the config as loaded: unset camera keys are null there (the
    body's, else the default), never a default that would hide the body's figure."""
    path = tmp_path / "anima.yaml"
    path.write_text("driver: reachy_mini\nvision:\n  hfov_deg: 70\n")
    vision = load_config(path, env={}).vision
    assert (vision.mount, vision.hfov_deg, vision.position_m, vision.rpy_deg) == (
        None,
        70.0,
        None,
        None,
    )
