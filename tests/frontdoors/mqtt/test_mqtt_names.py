"""Animation names as people guess them, over MQTT (issue 30 item 5): resolved by the library
below the door, the real name in the feedback, a "did you mean" in every refusal."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from anima.runtime import Runtime
from anima.testing.mqtt import MqttProbe
from anima.wire.topics import Topics

from .conftest import wait_until

pytestmark = pytest.mark.integration

Send = Callable[[str, bytes | str], None]


def test_wave_plays_the_waving_gesture_and_its_feedback_names_it(
    probe: MqttProbe, topics: Topics, runtime: Runtime, send: Send
) -> None:
    for given in ("wave", "lookup_waving"):
        mark = probe.mark()
        send("animation", given)
        wait_until(lambda: runtime.engine.state().move == "LOOKUP_Waving", 3, "the wave plays")
        send("stop_animation", "")
        done = probe.wait_for(topics.feedback("animation_done"), since=mark, timeout=3).json()
        assert done["name"] == "LOOKUP_Waving"  # the library's name, never the alias
        assert probe.messages(topics.feedback("error"), since=mark) == []


def test_an_unknown_name_is_refused_with_what_is_close(
    probe: MqttProbe, topics: Topics, runtime: Runtime, send: Send
) -> None:
    mark = probe.mark()
    send("animation", "wav")
    error = probe.wait_for(topics.feedback("error"), since=mark, timeout=3).json()
    assert error["reason"] == "unknown animation 'wav' (did you mean LOOKUP_Waving?)"
