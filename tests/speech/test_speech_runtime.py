"""Speech through the runtime's commands, and Nadine's posture rule when speaking.

Each runtime runs on an autojump :class:`~anima.testing.FakeClock` (the ``clock`` fixture), its
null sink too: an utterance lasts its audio in fake seconds, which pass as soon as the runtime's
threads are idle. A test that must act while the robot still speaks holds the clock and moves it
a tick at a time (:func:`tick_until`)."""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from anima import commands as cmd
from anima.config import AnimaConfig, MqttConfig
from anima.drivers.sim import SimDriver
from anima.errors import CommandRefusedError, SpeechError
from anima.events import Event, MoveStarted, Notice, SpeechEnded, SpeechStarted
from anima.frontdoors.mqtt.frontdoor import MqttFrontDoor
from anima.motion import Goto
from anima.runtime import Runtime
from anima.speech.sinks import NullSink
from anima.testing import FakeClock, eventually
from anima.testing.mosquitto import Mosquitto, find_mosquitto
from anima.testing.mqtt import MqttProbe
from anima.testing.tts import ScriptedEngine
from anima.wire.topics import Topics

pytestmark = pytest.mark.fast

TICK_S = 0.01  # one motion tick at the default 100 Hz


@pytest.fixture
def clock() -> Iterator[FakeClock]:
    """The test's runtime's clock, closed after the runtime stops."""
    with FakeClock(autojump=True) as fake:
        yield fake


def _runtime(clock: FakeClock, **kw: object) -> Runtime:
    cfg = AnimaConfig(mqtt=MqttConfig(enabled=False))
    return Runtime(cfg, driver=SimDriver(), clock=clock, audio_sink=NullSink(clock), **kw)  # type: ignore[arg-type]


def tick_until(clock: FakeClock, check: Callable[[], object], timeout: float = 5.0) -> None:
    """Inside ``clock.hold()``: move the held clock a motion tick at a time until ``check``
    holds (no tick when it holds already); fail after ``timeout`` real seconds."""
    end = time.monotonic() + timeout
    while not eventually(check, TICK_S, every=0.001):
        assert time.monotonic() < end, "the condition never held"
        clock.advance(TICK_S)


def test_speak_and_stop_commands_reach_the_speech_service(clock: FakeClock) -> None:
    rt = _runtime(clock, tts=[ScriptedEngine()])
    seen: list[Event] = []
    ended = threading.Event()
    rt.events.subscribe(seen.append, SpeechStarted.kind, SpeechEnded.kind)
    rt.events.subscribe(lambda e: ended.set(), SpeechEnded.kind)
    rt.start()
    try:
        with clock.hold():  # the utterance cannot end before it is stopped
            rt.execute(cmd.Speak(text="one two three four five six seven", locale="en-US"))
            assert rt.speaking
            rt.execute(cmd.StopSpeaking())
            tick_until(clock, ended.is_set)
    finally:
        rt.stop(ease=False)
    kinds = [e.kind for e in seen]
    assert kinds == ["start_speak", "end_speak"]
    assert isinstance(seen[1], SpeechEnded)
    assert seen[1].reason == "stopped"


def test_speaking_returns_to_the_default_posture_unless_a_gaze_target_is_latched(
    clock: FakeClock,
) -> None:
    rt = _runtime(clock, tts=[ScriptedEngine()])
    starts: list[str] = []
    done = threading.Event()
    rt.events.subscribe(lambda e: starts.append(e.name), MoveStarted.kind)  # type: ignore[attr-defined]
    rt.events.subscribe(lambda e: done.set(), SpeechEnded.kind)
    rt.start()
    try:
        rt.engine.queue_move(Goto(rt.body, {"r_elbow": 180.0}, 0.2))  # away from the default
        assert rt.engine.wait_until_idle(3)
        rt.execute(cmd.Speak(text="hello", locale="en-US"))
        assert done.wait(5)
        assert "reset:LOOKUPPostureDefault" in starts
        starts.clear()
        done.clear()
        rt.behaviour.look_at_target("Posture_LookAtZoom")
        rt.engine.queue_move(Goto(rt.body, {"l_elbow": 180.0}, 0.2))
        assert rt.engine.wait_until_idle(3)
        rt.execute(cmd.Speak(text="hello again", locale="en-US"))
        assert done.wait(5)
        assert "reset:LOOKUPPostureDefault" not in starts  # latched: the posture stays
    finally:
        rt.stop(ease=False)


def test_no_reset_when_the_body_already_holds_the_default_posture(clock: FakeClock) -> None:
    rt = _runtime(clock, tts=[ScriptedEngine()])
    starts: list[str] = []
    done = threading.Event()
    rt.events.subscribe(lambda e: starts.append(e.name), MoveStarted.kind)  # type: ignore[attr-defined]
    rt.events.subscribe(lambda e: done.set(), SpeechEnded.kind)
    rt.start()
    try:
        rt.execute(cmd.Speak(text="hello", locale="en-US"))  # breathing moves the head: no matter
        assert done.wait(5)
    finally:
        rt.stop(ease=False)
    assert "reset:LOOKUPPostureDefault" not in starts


def test_without_an_engine_speak_is_refused_with_the_reason(clock: FakeClock) -> None:
    rt = _runtime(clock, tts=[])
    rt.start()
    try:
        with pytest.raises(CommandRefusedError, match="speech is not available"):
            rt.execute(cmd.Speak(text="hello", locale="en-US"))
        rt.execute(cmd.StopSpeaking())  # harmless
    finally:
        rt.stop(ease=False)


class EventDoor:
    """A front door as the real ones are: it hears the runtime's events from start() to stop()."""

    def __init__(self, runtime: Runtime) -> None:
        self._events = runtime.events
        self.heard: list[Event] = []
        self._unsubscribe: Callable[[], None] | None = None
        self.stopped = False

    def prepare(self) -> None:
        pass

    def start(self) -> None:
        self._unsubscribe = self._events.subscribe(self.heard.append)

    def stop(self, timeout: float = 5.0) -> None:
        self.stopped = True
        if self._unsubscribe is not None:
            self._unsubscribe()

    def speech(self) -> list[tuple[str, str]]:
        return [
            (e.kind, e.utterance) for e in self.heard if isinstance(e, SpeechStarted | SpeechEnded)
        ]


def estop_notices(door: EventDoor) -> list[str]:
    return [e.message for e in door.heard if isinstance(e, Notice) and e.source == "estop"]


LONG = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen"


def test_an_estop_silences_the_robot_and_refuses_speech_until_reset(
    caplog: pytest.LogCaptureFixture, clock: FakeClock
) -> None:
    # issue 12 item 8: speech went on 5.2 s after an estop, a new speak was accepted, and the
    # lips froze open
    sink = NullSink(clock)
    rt = Runtime(
        AnimaConfig(mqtt=MqttConfig(enabled=False)),
        driver=SimDriver(),
        clock=clock,
        audio_sink=sink,
        tts=[ScriptedEngine()],
    )
    door = EventDoor(rt)
    rt.attach(door)
    rt.start()
    lip = rt.body.index("lip_open")
    rest = rt.body.channels[lip].default
    try:
        with clock.hold():  # the utterance cannot end before the estop
            rt.execute(cmd.Speak(text=LONG, locale="en-US"))
            tick_until(clock, lambda: rt.engine.last_frame[lip] > rest + 20)  # the mouth is open
            caplog.set_level(logging.INFO, logger="anima.estop")
            rt.execute(cmd.EmergencyStop())
            assert [r.message for r in caplog.records if "emergency stop" in r.message]  # now
            played = sink.played()
            tick_until(clock, lambda: ("end_speak", door.speech()[0][1]) in door.speech())
        ended = [e for e in door.heard if isinstance(e, SpeechEnded)]
        assert [e.reason for e in ended] == ["estop"]
        assert sink.played() == played  # silent since the estop
        with pytest.raises(CommandRefusedError, match=r"^speak refused: emergency stop is active"):
            rt.execute(cmd.Speak(text="hello", locale="en-US"))
        with pytest.raises(CommandRefusedError, match=r"^'nod' refused: emergency stop"):
            rt.execute(cmd.PlayAnimation(name="nod"))
        assert eventually(lambda: rt.engine.last_frame[lip] == rest)  # the mouth closed
        assert eventually(lambda: estop_notices(door))
        assert estop_notices(door)[0].startswith("emergency stop: motion held, speech stopped")
        rt.execute(cmd.ResetEmergencyStop())
        assert eventually(lambda: "released" in estop_notices(door)[-1])
        assert any("released" in r.message for r in caplog.records)
        rt.execute(cmd.Speak(text="hello again", locale="en-US"))  # accepted again
        assert eventually(lambda: len(door.speech()) == 4)
        assert door.speech()[-1][0] == "end_speak"
    finally:
        rt.stop(ease=False)


def test_shutdown_during_speech_sends_end_speak_before_the_doors_close(clock: FakeClock) -> None:
    # issue 12 item 9: the front doors stopped before speech, so no end_speak ever left
    rt = _runtime(clock, tts=[ScriptedEngine()])
    door = EventDoor(rt)
    rt.attach(door)
    rt.start()
    with clock.hold():  # the first utterance cannot end before the stop
        try:
            rt.execute(cmd.Speak(text=LONG, locale="en-US"))
            rt.execute(cmd.Speak(text="and this one waits", locale="en-US"))
            tick_until(clock, lambda: rt.speaking and len(door.speech()) == 1)
        finally:
            rt.stop(ease=False)  # the loop's sleep ends on the stop, time still held
    (_, first), _, (_, second) = door.speech()[:3]
    assert door.speech() == [  # the second never sounded: its start and end come together
        ("start_speak", first),
        ("end_speak", first),
        ("start_speak", second),
        ("end_speak", second),
    ]
    assert {e.reason for e in door.heard if isinstance(e, SpeechEnded)} == {"shutdown"}


@pytest.mark.skipif(find_mosquitto() is None, reason="mosquitto is not installed")
@pytest.mark.integration  # a real broker
def test_over_mqtt_every_start_speak_gets_its_end_speak_at_estop_and_at_shutdown(
    clock: FakeClock,
) -> None:
    # the same through a real front door on a real broker: what an operator's client sees
    prefix = f"speech{os.getpid()}"
    cfg = AnimaConfig(mqtt=MqttConfig(prefix=prefix))
    topics = Topics(prefix)
    with Mosquitto() as broker, MqttProbe(broker.address, subscribe=f"{prefix}/agent/#") as probe:
        rt = Runtime(
            cfg, driver=SimDriver(), clock=clock, audio_sink=NullSink(clock), tts=[ScriptedEngine()]
        )
        door = MqttFrontDoor(rt, cfg.mqtt, broker.address)
        rt.attach(door)
        rt.start()
        try:
            assert door.wait_connected(5)
            speak = json.dumps({"text": LONG})
            with clock.hold():  # the utterance cannot end before the estop
                probe.publish(topics.control + "speak", speak, qos=1)
                started = probe.wait_for(topics.feedback("start_speak")).json()
                probe.publish(topics.control + "estop", "", qos=1)
                ended = probe.wait_for(topics.feedback("end_speak")).json()
            assert (ended["id"], ended["reason"]) == (started["id"], "estop")
            mark = probe.mark()
            probe.publish(topics.control + "speak", speak, qos=1)
            error = probe.wait_for(topics.feedback("error"), since=mark).json()
            assert "emergency stop is active" in error["reason"]
            probe.publish(topics.control + "reset", "", qos=1)
            probe.wait_for(topics.feedback("notice"), where=lambda m: "released" in m.text())
            with clock.hold():  # it cannot end before the shutdown
                probe.publish(topics.control + "speak", speak, qos=1)
                again = probe.wait_for(topics.feedback("start_speak"), since=mark).json()
                rt.stop(ease=False)
        finally:
            rt.stop()
        ended = probe.wait_for(topics.feedback("end_speak"), since=mark).json()
        assert (ended["id"], ended["reason"]) == (again["id"], "shutdown")


class BrokenCloseSink(NullSink):
    """A sink whose device fails as it closes (a sound card unplugged at exit)."""

    def close(self) -> None:
        super().close()
        raise SpeechError("the audio device went away")


def test_a_sink_failing_at_shutdown_still_lets_the_doors_hear_the_end_and_close(
    clock: FakeClock,
) -> None:
    cfg = AnimaConfig(mqtt=MqttConfig(enabled=False))
    rt = Runtime(
        cfg,
        driver=SimDriver(),
        clock=clock,
        audio_sink=BrokenCloseSink(clock),
        tts=[ScriptedEngine()],
    )
    door = EventDoor(rt)
    rt.attach(door)
    rt.start()
    try:
        rt.execute(cmd.Speak(text=LONG, locale="en-US"))
        assert eventually(lambda: len(door.speech()) == 1)
    finally:
        rt.stop()
    assert [kind for kind, _ in door.speech()] == ["start_speak", "end_speak"]
    assert door.stopped
    assert not rt.engine.running
