"""A feedback payload carries its event's time (issue 30 item 8: over MQTT every event the SDK
decoded said ``t = 0.0``)."""

from __future__ import annotations

import json

import pytest

from anima.events import SpeechEnded, SpeechStarted
from anima.wire.feedback import decode_event, encode_event
from anima.wire.topics import Topics

pytestmark = pytest.mark.fast


def test_the_time_goes_on_the_wire_and_comes_back() -> None:
    event = SpeechEnded(t=812.41234, utterance="u1", reason="done")
    message = encode_event(event, Topics("lab"))
    assert message is not None
    assert message.payload == '{"v":1,"id":"u1","reason":"done","t":812.412}'
    back = decode_event("feedback/end_speak", json.loads(message.payload))
    assert back == SpeechEnded(t=812.412, utterance="u1", reason="done")
    # no time (an event tied to no clock), or a wrong one from someone else: t stays 0
    untimed = encode_event(SpeechStarted(utterance="u2", text="hi", locale="en-US"), Topics("x"))
    assert untimed is not None
    assert '"t"' not in untimed.payload
    for odd in ("soon", True, None, float("nan")):
        data = {"id": "u1", "reason": "done", "t": odd}
        assert decode_event("feedback/end_speak", data) == SpeechEnded(
            utterance="u1", reason="done"
        )
