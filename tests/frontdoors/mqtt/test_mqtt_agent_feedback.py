"""What the voice agent publishes on ``…/agent/asr``: the transcript, with its confidence when the
recognizer gives one (Whisper), without the field when it does not (pocketsphinx)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from anima.events import EventHub, Transcript
from anima.frontdoors.mqtt.feedback import Feedback
from anima.wire.topics import Topics

pytestmark = pytest.mark.fast


def _asr_payloads(*events: Transcript) -> list[dict[str, Any]]:
    sent: list[tuple[str, str]] = []
    feedback = Feedback(
        Topics("robot"), lambda topic, body, **_: sent.append((topic, body)), (), lambda: None
    )
    hub = EventHub()
    feedback.subscribe(hub)
    for event in events:
        hub.publish(event)
    assert hub.flush()  # no dispatcher thread: delivered here
    return [json.loads(body) for topic, body in sent if topic == "robot/agent/asr"]


def test_a_transcript_carries_its_confidence_when_the_recognizer_gives_one() -> None:
    heard = _asr_payloads(
        Transcript(t=0.0, text="wave", final=True, confidence=0.8123456),
        Transcript(t=0.1, text="nod", final=True),
    )
    assert heard == [
        {"v": 1, "text": "wave", "final": True, "confidence": 0.812},
        {"v": 1, "text": "nod", "final": True, "t": 0.1},  # when, on the runtime's clock
    ]


def test_a_transcript_carries_its_other_readings_when_there_are_some() -> None:
    heard = _asr_payloads(
        Transcript(
            t=0.0,
            text="Look over to your light.",
            final=True,
            confidence=0.7,
            alternatives=("Look over to your right.",),
        ),
        Transcript(t=0.1, text="Nod.", final=True, confidence=0.9),
    )
    assert heard == [
        {
            "v": 1,
            "text": "Look over to your light.",
            "final": True,
            "confidence": 0.7,
            "alternatives": ["Look over to your right."],
        },
        {"v": 1, "text": "Nod.", "final": True, "confidence": 0.9, "t": 0.1},
    ]
