"""Social attention in a whole runtime (issue 32): ``vision.source: sim`` films the simulated
head camera with the pose the engine sent, BlazeFace finds the person, attention looks at them,
and the typed state carries it all — on autojump fake time, through the JSON every door sends."""

from __future__ import annotations

import json
import logging
import math
import wave
from pathlib import Path

import pytest

from anima.build import build
from anima.config import AnimaConfig, AttentionConfig, BodyConfig, ListenConfig, VisionConfig
from anima.drivers.sim import SimDriver
from anima.events import AttentionChanged, WakeDetected
from anima.testing import EventRecorder, FakeClock
from anima.wire.feedback import decode_event, encode_event
from anima.wire.state import RuntimeState
from anima.wire.topics import Topics

pytestmark = pytest.mark.model


def test_a_runtime_with_the_sim_camera_looks_at_the_person_it_sees() -> None:
    clock = FakeClock(autojump=True)
    lines: list[str] = []
    config = AnimaConfig(
        vision=VisionConfig(source="sim", hfov_deg=80.0, fps=10.0),
        attention=AttentionConfig(idle_glances=False),
    )
    runtime = build(
        config, doors=False, audio_in="none", driver=SimDriver(history=10), clock=clock,
        report=lines.append,
    )  # fmt: skip
    assert runtime.attention is not None
    assert any("attention: looking at people with sim camera" in line for line in lines), lines
    recorder = EventRecorder().attach(runtime.events)
    runtime.start()
    try:
        clock.sleep_until(clock.now() + 3.0)  # 3 s of the robot's time: 30 frames
        state = runtime.state()
        stats = runtime.attention.vision_stats()
    finally:
        runtime.stop(ease=False)
        clock.close()
    assert stats is not None
    assert stats.processed >= 10, stats
    seen = state.attention
    assert seen is not None
    assert len(seen.people) == 1  # the default scene: one person straight ahead
    person = seen.people[0]
    assert abs(person.azimuth_deg) < 5.0
    assert person.visible
    assert seen.target == "person"
    assert seen.person == person.id
    assert seen.azimuth_deg is not None
    assert abs(seen.azimuth_deg) < 5.0
    # every door sends the state as JSON: the attention part reads back the same
    again = RuntimeState.from_json(state.to_json())
    assert again.attention is not None
    assert again.attention.target == "person"
    assert again.attention.people[0].id == person.id
    assert math.isclose(again.attention.people[0].azimuth_deg, person.azimuth_deg, abs_tol=0.06)
    # each change of target was told, as an event every door carries (MQTT: agent/attention):
    # first the person, last the one the state shows
    changes = recorder.of(AttentionChanged)
    assert changes, "no attention event"
    assert changes[0].target == "person"
    assert (changes[-1].target, changes[-1].person) == ("person", person.id), changes
    message = encode_event(changes[-1], Topics("robot"))
    assert message is not None
    assert message.topic == "robot/agent/attention"
    decoded = decode_event("attention", json.loads(message.payload))
    assert isinstance(decoded, AttentionChanged)
    assert (decoded.target, decoded.person, decoded.reason) == (
        "person",
        person.id,
        changes[-1].reason,
    )


def test_no_camera_and_no_array_means_no_attention_part() -> None:
    runtime = build(AnimaConfig(), doors=False, audio_in="none", report=lambda _l: None)
    assert runtime.attention is None
    assert runtime.state().attention is None
    assert runtime.state().to_json()["attention"] is None


def test_an_array_alone_attends_with_voices() -> None:
    mics = ((0.0, 0.048, 0.0), (0.0, 0.016, 0.0), (0.0, -0.016, 0.0), (0.0, -0.048, 0.0))
    lines: list[str] = []
    runtime = build(
        AnimaConfig(listen=ListenConfig(mics=mics)), doors=False, audio_in="none",
        report=lines.append,
    )  # fmt: skip
    assert runtime.attention is not None
    assert runtime.attention.voice_sink is not None
    assert runtime.playback is not None  # the array's own-voice gate reads what is played
    assert any("4-microphone array" in line for line in lines), lines
    assert not runtime.attention.voice_sink.estimator.on_head
    on_head = build(
        AnimaConfig(listen=ListenConfig(mics=mics, mics_mount="head")), doors=False,
        audio_in="none", report=lambda _l: None,
    )  # fmt: skip
    assert on_head.attention is not None
    assert on_head.attention.voice_sink is not None
    assert on_head.attention.voice_sink.estimator.on_head
    assert "a 4-microphone array on the head" in on_head.attention.summary


def test_a_recording_for_an_array_on_the_head_is_warned_of(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A recording does not turn with the head: played to an array said to be on the head, its
    directions would be turned by the head's pose, and the robot would chase the voice."""
    mics = ((0.0, 0.048, 0.0), (0.0, 0.016, 0.0), (0.0, -0.016, 0.0), (0.0, -0.048, 0.0))
    path = tmp_path / "array.wav"
    with wave.open(str(path), "wb") as w:
        w.setnchannels(4)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes(bytes(4 * 2 * 1600))
    for mount, warned in (("head", True), ("fixed", False)):
        caplog.clear()
        runtime = build(
            AnimaConfig(listen=ListenConfig(mics=mics, mics_mount=mount)), doors=False,
            audio_in="none", report=lambda _l: None,
        )  # fmt: skip
        assert runtime.attention is not None
        with caplog.at_level(logging.WARNING, logger="anima.attention.part"):
            assert runtime.attention.ears(str(path)) is not None
        said = [r.getMessage() for r in caplog.records if r.name == "anima.attention.part"]
        assert any("does not turn with the head" in m for m in said) is warned, said


def test_a_barge_in_lifts_the_arrays_own_voice_gate() -> None:
    """The listener's barge-in (a wake with source ``barge_in``, on the runtime's events) tells
    the voice direction that what it hears over the robot is the person: a target."""
    mics = ((0.0, 0.048, 0.0), (0.0, 0.016, 0.0), (0.0, -0.016, 0.0), (0.0, -0.048, 0.0))
    runtime = build(
        AnimaConfig(listen=ListenConfig(mics=mics)), doors=False, audio_in="none",
        report=lambda _l: None,
    )  # fmt: skip
    assert runtime.attention is not None
    (gate,) = runtime.attention.own_voice_gates()
    runtime.start()
    try:
        gate.note(10.0, playing=True)  # the robot speaks
        assert gate.own(10.1)
        runtime.events.publish(WakeDetected(t=10.1, source="manual"))  # not a barge-in
        assert runtime.events.flush()
        assert gate.own(10.1)
        runtime.events.publish(WakeDetected(t=10.1, source="barge_in"))
        assert runtime.events.flush()
        assert not gate.own(10.1)  # the person over the robot
        gate.note(10.2, playing=True)
        assert not gate.own(10.2)  # until the robot falls silent
        gate.note(11.0, playing=False)
        gate.note(12.0, playing=True)
        assert gate.own(12.0)  # the next time it speaks, its voice is its own again
    finally:
        runtime.stop(ease=False)


@pytest.mark.parametrize(("body", "wide"), [(None, "65°"), ("reachy_mini", "81.4°")])
def test_the_start_up_line_names_the_lens_the_body_declares(body: str | None, wide: str) -> None:
    """With no ``vision.hfov_deg`` set, the camera's figures are the body's (Reachy Mini's head
    camera), else the built-in ones — in what serve says and in what the camera films with."""
    lines: list[str] = []
    config = AnimaConfig(vision=VisionConfig(source="sim"), body=BodyConfig(checker_ini=body))
    runtime = build(
        config, doors=False, audio_in="none", driver=SimDriver(history=10), report=lines.append
    )
    assert runtime.attention is not None
    assert any(f"sim camera (auto faces, {wide} wide)" in line for line in lines), lines
    assert f"{runtime.attention.attention.vision.hfov_deg:g}°" == wide


def test_a_name_given_while_speaking_stays_with_the_persons_track(tmp_path: Path) -> None:
    # the person the sim camera sees talks (a voice from their direction) and says their
    # name: their track carries it in the state every door sends (docs/memory.md)
    from anima import commands as cmd
    from anima.config import AgentConfig, MqttConfig
    from anima.config.memory import MemoryConfig
    from anima.events import PlanFinished
    from anima.listening.direction import VoiceDirection

    clock = FakeClock(autojump=True)
    config = AnimaConfig(
        mqtt=MqttConfig(enabled=False),
        vision=VisionConfig(source="sim", hfov_deg=80.0, fps=10.0),
        attention=AttentionConfig(idle_glances=False),
        agent=AgentConfig(
            enabled=True, audio_in="none",
            memory=MemoryConfig(path=str(tmp_path / "memory.sqlite3")),
        ),
    )  # fmt: skip
    runtime = build(
        config, doors=False, driver=SimDriver(history=10), clock=clock, report=lambda _: None
    )
    recorder = EventRecorder().attach(runtime.events)
    runtime.start()
    try:
        clock.sleep_until(clock.now() + 2.0)
        part = runtime.attention
        assert part is not None
        for _ in range(10):  # a voice from straight ahead, where the person is
            part.attention.on_voice(
                VoiceDirection(t=clock.now(), azimuth=0.0, confidence=0.9, speech=True)
            )
            clock.sleep_until(clock.now() + 0.032)
        runtime.execute(cmd.Ask(text="my name is Ana"))
        assert recorder.wait_for(PlanFinished, timeout=10.0) is not None
        state = runtime.state()
        # the conversation ends, and Ana is still the one looked at: her track names her
        memory = runtime.agent.memory  # type: ignore[union-attr]
        memory.reset()
        assert memory.person == "Ana"
        # "forget everything about me": the track forgets her name too
        forgotten = memory.forget(everything=True)
        assert forgotten.rows == 1
        assert memory.person is None
        after = runtime.state().attention
    finally:
        runtime.stop(ease=False)
        clock.close()
    seen = state.attention
    assert seen is not None
    assert [p.name for p in seen.people] == ["Ana"]
    again = RuntimeState.from_json(state.to_json())
    assert again.attention is not None
    assert again.attention.people[0].name == "Ana"
    assert after is not None
    assert [p.name for p in after.people] == [None]
