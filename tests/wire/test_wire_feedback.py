"""The feedback table (anima.wire.feedback): what the door sends is what the SDK reads back."""

from __future__ import annotations

import json

import pytest

from anima.events import (
    ActionStatus,
    AttentionChanged,
    CommandRejected,
    Event,
    ListenTimeout,
    MoveFinished,
    MoveStarted,
    Notice,
    PlanFinished,
    PlanStarted,
    SpeechEnded,
    SpeechStarted,
    Transcript,
    WakeDetected,
)
from anima.wire.feedback import ROUTES, decode_event, encode_event
from anima.wire.topics import Topics

pytestmark = pytest.mark.fast

TOPICS = Topics("lab")

# each event with its exact payload on the wire (docs/mqtt.md; Nadine's three keep the seed's keys)
CASES: list[tuple[Event, str, str]] = [
    (
        SpeechStarted(utterance="u7", text="Hello!", locale="en-GB"),
        "lab/agent/feedback/start_speak",
        '{"v":1,"id":"u7","text":"Hello!","locale":"en-GB"}',
    ),
    (
        SpeechEnded(utterance="u7", reason="interrupted"),
        "lab/agent/feedback/end_speak",
        '{"v":1,"id":"u7","reason":"interrupted"}',
    ),
    (
        CommandRejected(command="lab/agent/control/animation", argument="dance", reason="unknown"),
        "lab/agent/feedback/error",
        '{"v":1,"topic":"lab/agent/control/animation","payload":"dance","reason":"unknown"}',
    ),
    (
        Notice(source="animations", message="reloaded"),
        "lab/agent/feedback/notice",
        '{"v":1,"source":"animations","message":"reloaded"}',
    ),
    (
        MoveFinished(name="nod", cut=True, reason="cleared"),
        "lab/agent/feedback/animation_done",
        '{"v":1,"name":"nod","cut":true,"reason":"cleared"}',
    ),
    (
        Transcript(
            text="wave", final=True, confidence=0.83333, alternatives=("weave",), voiced_s=0.618
        ),
        "lab/agent/asr",
        '{"v":1,"text":"wave","final":true,"confidence":0.833,"alternatives":["weave"],"voiced_s":0.62}',
    ),
    (Transcript(text="wa", final=False), "lab/agent/asr", '{"v":1,"text":"wa","final":false}'),
    (
        WakeDetected(source="keyphrase", phrase="hey robot"),
        "lab/agent/asr",
        '{"v":1,"wake":"keyphrase","phrase":"hey robot"}',
    ),
    (
        ListenTimeout(reason="no_speech", waited_s=5.004),
        "lab/agent/asr",
        '{"v":1,"timeout":"no_speech","waited_s":5.0}',
    ),
    (
        PlanStarted(plan="p1", steps=("nod()", "wait(1)"), source="rules"),
        "lab/agent/plan",
        '{"v":1,"id":"p1","steps":["nod()","wait(1)"],"source":"rules"}',
    ),
    (
        PlanFinished(plan="p1", outcome="failed", feedback="Robot feedback: x"),
        "lab/agent/plan",
        '{"v":1,"id":"p1","outcome":"failed","feedback":"Robot feedback: x"}',
    ),
    (
        ActionStatus(plan="p1", index=1, action="wait", step="wait(1)", status="canceled"),
        "lab/agent/action_status",
        '{"v":1,"plan":"p1","index":1,"action":"wait","step":"wait(1)","status":"canceled",'
        '"message":""}',
    ),
    (
        AttentionChanged(
            t=812.35,
            target="person",
            person=3,
            azimuth_deg=21.4,
            elevation_deg=-2.0,
            reason="speaking",
        ),
        "lab/agent/attention",
        '{"v":1,"target":"person","person":3,"azimuth_deg":21.4,"elevation_deg":-2.0,'
        '"reason":"speaking","t":812.35}',
    ),
    (
        AttentionChanged(target="none", reason="nobody there"),
        "lab/agent/attention",
        '{"v":1,"target":"none","person":null,"azimuth_deg":null,"elevation_deg":null,'
        '"reason":"nobody there"}',
    ),
]


@pytest.mark.parametrize(("event", "topic", "payload"), CASES, ids=lambda c: getattr(c, "kind", ""))
def test_each_event_goes_to_its_topic_with_its_payload(
    event: Event, topic: str, payload: str
) -> None:
    message = encode_event(event, TOPICS)
    assert message is not None
    assert (message.topic, message.payload) == (topic, payload)


@pytest.mark.parametrize(("event", "topic", "payload"), CASES, ids=lambda c: getattr(c, "kind", ""))
def test_what_is_sent_reads_back_as_the_same_event(event: Event, topic: str, payload: str) -> None:
    leaf = topic.removeprefix("lab/agent/")
    back = decode_event(leaf, json.loads(payload))
    rounded = {"confidence": 0.833, "voiced_s": 0.62, "waited_s": 5.0}
    expected = type(event)(
        **{
            k: rounded.get(k, v) if isinstance(v, float) and k in rounded else v
            for k, v in vars(event).items()
        }
    )
    assert back == expected


def test_every_route_has_a_case_and_other_events_send_nothing() -> None:
    assert {type(e) for e, _, _ in CASES} == {r.event for r in ROUTES}
    assert encode_event(MoveStarted(name="nod", duration=1.0), TOPICS) is None
    assert decode_event("feedback/nonsense", {"id": "x"}) is None
    assert decode_event("asr", {"neither": 1}) is None  # no kind of the topic matches
    # a newer runtime's extra key is read past; a payload without a required key is no event
    newer = decode_event("feedback/end_speak", {"id": "u1", "reason": "done", "extra": 1})
    assert newer == SpeechEnded(utterance="u1", reason="done")
    assert decode_event("feedback/start_speak", {"id": "u1", "text": "hi"}) is None
