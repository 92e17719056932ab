"""The ``vision`` and ``attention`` sections (issue 32): off by default, each part named from
its registry, every bound refused in one line naming the key, and loading imports no engine."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from anima.config import AnimaConfig, AttentionConfig, VisionConfig, load_config
from anima.errors import ConfigError

pytestmark = pytest.mark.fast


def loaded(tmp_path: Path, text: str) -> AnimaConfig:
    path = tmp_path / "anima.yaml"
    path.write_text(text)
    return load_config(path, env={})


def test_nothing_sees_by_default() -> None:
    config = AnimaConfig()
    assert config.vision.source == "none"
    assert not config.vision.enabled
    assert config.attention.enabled  # it follows voices alone when an array is declared


def test_a_video_source_with_its_pose(tmp_path: Path) -> None:
    config = loaded(
        tmp_path,
        "vision:\n  source: video\n  video_in: people.mp4\n  fps: 10\n  mount: fixed\n"
        "  position_m: [0.1, 0, 0.3]\n  rpy_deg: [0, -10, 0]\n  hfov_deg: 90\n"
        "attention:\n  switch_s: 2\n  latency_compensation: false\n",
    )
    assert config.vision.enabled
    assert (config.vision.video_in, config.vision.fps, config.vision.mount) == (
        "people.mp4",
        10.0,
        "fixed",
    )
    assert config.vision.position_m == (0.1, 0.0, 0.3)
    assert config.vision.rpy_deg == (0.0, -10.0, 0.0)
    assert config.attention.switch_s == 2.0
    assert not config.attention.latency_compensation


@pytest.mark.parametrize(
    ("text", "key", "says"),
    [
        ("vision:\n  source: webcam\n", "vision.source", "one of none, camera, video, sim"),
        ("vision:\n  faces: yunet\n", "vision.faces", "one of auto, blazeface, haar"),
        ("vision:\n  source: video\n", "vision.video_in", "needs vision.video_in"),
        ("vision:\n  mount: shoulder\n", "vision.mount", "one of head, fixed"),
        ("vision:\n  fps: 0\n", "vision.fps", "vision.fps must be"),
        ("vision:\n  fps: 1000\n", "vision.fps", "≤ 120 Hz"),
        ("vision:\n  hfov_deg: 360\n", "vision.hfov_deg", "[10, 180] degrees"),
        ("vision:\n  width: 8\n", "vision.width", "[32, 4096] pixels"),
        ("vision:\n  position_m: [0, 0, 1e9]\n", "vision.position_m", "±5 m"),
        ("vision:\n  rpy_deg: [0, .nan, 0]\n", "vision.rpy_deg", "finite number"),
        ("vision:\n  rpy_deg: [0, 200, 0]\n", "vision.rpy_deg", "±180 degrees"),
        ("vision:\n  min_face_score: 2\n", "vision.min_face_score", "[0, 1]"),
        ("vision:\n  detect_every: 0\n", "vision.detect_every", "[1, 10]"),
        ("vision:\n  detect_every: 2.5\n", "vision.detect_every", "an integer"),
        ("attention:\n  switch_s: -1\n", "attention.switch_s", "> 0"),
        ("attention:\n  resume_s: 1e9\n", "attention.resume_s", "≤ 600 s"),
    ],
)
def test_bad_values_are_refused_by_name(tmp_path: Path, text: str, key: str, says: str) -> None:
    with pytest.raises(ConfigError) as caught:
        loaded(tmp_path, text)
    assert key in str(caught.value)
    assert says in str(caught.value)


def test_the_sections_are_frozen_and_keyword_only() -> None:
    with pytest.raises(TypeError):
        VisionConfig("camera")  # type: ignore[misc]
    config = AttentionConfig(glance_s=0.5)
    with pytest.raises(AttributeError):
        config.glance_s = 1.0  # type: ignore[misc]


def test_loading_a_vision_config_imports_no_vision_engine(tmp_path: Path) -> None:
    path = tmp_path / "anima.yaml"
    path.write_text("vision:\n  source: camera\n  faces: blazeface\n")
    code = (
        "import sys; from anima.config import load_config; "
        f"load_config({str(path)!r}, env={{}}); "
        "print(sorted(m for m in ('cv2', 'ai_edge_litert', 'anima.vision', 'numpy') "
        "if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "[]"
