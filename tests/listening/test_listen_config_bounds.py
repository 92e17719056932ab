"""listen.* durations the listener counts in 32 ms audio frames have a floor of one frame
(issue 30: near-zero values). Below it nothing breaks a thread — every listen duration is audio
time, counted in frames, never a wait — but a value like 1e-9 s is never what was written: the
round gave up at its first frame (no_speech_timeout_s), cut every utterance at its first frame
(max_utterance_s), or stopped the robot on one frame of voice (barge_in_s). Each is refused in
one line naming the key; valid values stay valid."""

from __future__ import annotations

import pytest

from anima.audio import FRAME_S
from anima.config import load_config
from anima.config.listening import ListenConfig
from anima.errors import ConfigError

pytestmark = pytest.mark.fast

FRAMED = (
    "endpoint_silence_s",
    "no_speech_timeout_s",
    "silence_timeout_s",
    "max_utterance_s",
    "turn_quick_s",
    "turn_hold_s",
    "barge_in_s",
)


@pytest.fixture(autouse=True)
def _listen_extra() -> None:
    """Overrides the folder's: these tests need no model."""


def _with(key: str, value: float) -> dict[str, float]:
    """The config keys that set ``key`` to ``value`` while keeping the other rules
    (quick ≤ hold, endpoint ≤ silence timeout)."""
    together = {"turn_hold_s": "turn_quick_s", "silence_timeout_s": "endpoint_silence_s"}
    out = {key: value}
    if key in together:
        out[together[key]] = value
    return out


@pytest.mark.parametrize("key", FRAMED)
@pytest.mark.parametrize("value", [1e-300, 1e-9, 0.01])
def test_a_duration_under_one_audio_frame_is_refused_in_one_line(key: str, value: float) -> None:
    with pytest.raises(ConfigError) as info:
        ListenConfig(**{key: value})  # type: ignore[arg-type]
    message = str(info.value)
    assert message.startswith(f"listen.{key} must be at least 0.032 s (one audio frame")
    assert message.endswith(f"got {value!r}")
    assert "\n" not in message


@pytest.mark.parametrize("key", FRAMED)
def test_one_frame_and_the_values_in_use_stay_valid(key: str) -> None:
    ListenConfig(**_with(key, FRAME_S))  # type: ignore[arg-type]
    ListenConfig(no_speech_timeout_s=0.5, endpoint_silence_s=0.3, turn_quick_s=0.3)
    ListenConfig(pre_buffer_s=0.0, ungate_hold_s=0.0)  # no pre-buffer, no hold: still valid


def test_the_environment_names_the_variable() -> None:
    with pytest.raises(ConfigError) as info:
        load_config(None, env={"ANIMA_LISTEN__MAX_UTTERANCE_S": "1e-9"})
    assert str(info.value) == (
        "environment ANIMA_LISTEN__MAX_UTTERANCE_S: listen.max_utterance_s must be at least "
        "0.032 s (one audio frame: the listener decides once a frame), got 1e-09"
    )
