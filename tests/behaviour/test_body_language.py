"""Body language on a fake clock: each conversational phase shown through the offset layer,
never fighting a commanded move."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from anima.animation.library import AnimationLibrary, shipped_folder
from anima.behaviour.body_language import NOD, POSE, BodyLanguage
from anima.behaviour.controller import Behaviour
from anima.body import Role
from anima.config import BodyLanguageConfig
from anima.events import (
    ConversationChanged,
    ConversationPhase,
    EventHub,
    MoveFinished,
    Transcript,
)
from anima.testing import EventRecorder
from anima.testing.harness import make_engine

pytestmark = pytest.mark.integration

PERIOD = 0.01


class Rig:
    def __init__(self, config: BodyLanguageConfig | None = None) -> None:
        self.hub = EventHub()
        self.recorder = EventRecorder().attach(self.hub)
        self.engine, self.driver, self.clock = make_engine(events=self.hub)
        self.body = self.engine.body
        library = AnimationLibrary([shipped_folder()], len(self.body))
        library.load()
        self.behaviour = Behaviour(self.engine, library, self.hub, self.clock)
        self.language = BodyLanguage(self.behaviour, self.hub, config)
        self.t = self.clock.now()
        self.phase: ConversationPhase = "idle"

    def index(self, role: Role) -> int:
        i = self.body.role_index(role)
        assert i is not None
        return i

    def run(self, seconds: float) -> np.ndarray:
        for _ in range(round(seconds / PERIOD)):
            self.t = round(self.t + PERIOD, 6)
            self.clock.advance(self.t - self.clock.now())
            self.engine.tick(self.t)
            self.hub.drain()
        return self.engine.last_frame

    def to(self, phase: ConversationPhase) -> None:
        self.hub.publish(ConversationChanged(t=self.t, state=phase, previous=self.phase))
        self.phase = phase
        self.hub.drain()

    def partial(self, text: str = "so I was") -> None:
        self.hub.publish(Transcript(t=self.t, text=text, final=False))
        self.hub.drain()


@pytest.fixture
def rig() -> Iterator[Rig]:
    r = Rig()
    yield r
    r.language.close()


def test_thinking_turns_the_eyes_up_and_aside_while_the_head_stays(rig: Rig) -> None:
    rest = rig.run(0.5).copy()
    rig.to("thinking")
    frame = rig.run(4.0)
    eyes_yaw, eyes_pitch = rig.index(Role.EYES_YAW), rig.index(Role.EYES_PITCH)
    cal = rig.body.channels[eyes_yaw].calibration
    assert cal is not None
    assert frame[eyes_yaw] - rest[eyes_yaw] == pytest.approx(0.25 / cal.rad_per_unit, rel=0.05)
    assert frame[eyes_pitch] < rest[eyes_pitch] - 10  # up: a negative pitch
    for role in (Role.NECK_YAW, Role.NECK_PITCH):
        assert frame[rig.index(role)] == pytest.approx(rest[rig.index(role)], abs=0.5)


def test_listening_leans_in_and_nods_when_the_person_pauses(rig: Rig) -> None:
    rest = rig.run(0.5).copy()
    rig.to("listening")
    leaned = rig.run(4.0).copy()
    pitch = rig.index(Role.NECK_PITCH)
    assert leaned[pitch] > rest[pitch] + 4  # forward and down (positive pitch)
    rig.partial()
    rig.partial("so I was saying")  # within nod_every_s of the last nod: no second one
    assert rig.language.nods == 1
    rig.run(PERIOD)
    assert NOD in rig.engine.state().offsets
    deepest = max(rig.run(0.01)[pitch] for _ in range(30))
    assert deepest > leaned[pitch] + 2
    after = rig.run(1.5)
    assert after[pitch] == pytest.approx(leaned[pitch], abs=0.5)  # let go after nod_s
    rig.partial("so I was saying that")
    assert rig.language.nods == 2


def test_no_nod_for_a_final_or_outside_listening(rig: Rig) -> None:
    rig.to("thinking")
    rig.partial()
    rig.to("listening")
    rig.hub.publish(Transcript(t=rig.t, text="hello", final=True))
    rig.hub.drain()
    assert rig.language.nods == 0


def test_sleeping_rests_the_head_and_breathes_slowly_until_a_wake(rig: Rig) -> None:
    rest = rig.run(0.5).copy()
    rig.to("sleeping")
    frame = rig.run(4.0)
    assert frame[rig.index(Role.NECK_PITCH)] > rest[rig.index(Role.NECK_PITCH)] + 20
    assert "anim:breathingSlow" in rig.engine.idle_layer_names
    rig.to("listening")
    rig.run(3.0)
    assert "anim:breathingSlow" not in rig.engine.idle_layer_names


def test_idle_lets_every_pose_go(rig: Rig) -> None:
    rest = rig.run(0.5).copy()
    rig.to("thinking")
    rig.run(3.0)
    rig.to("idle")
    frame = rig.run(6.0)
    assert np.abs(frame - rest).max() < 0.5


def test_a_commanded_gesture_plays_whole_over_a_pose(rig: Rig) -> None:
    rig.to("thinking")
    rig.run(1.0)
    rig.behaviour.play_animation("nod")
    rig.run(8.0)
    finished = [e for e in rig.recorder.events if isinstance(e, MoveFinished) and e.name == "nod"]
    assert [e.cut for e in finished] == [False]
    assert POSE in rig.engine.state().offsets


def test_under_estop_a_phase_change_moves_nothing_and_breaks_nothing(rig: Rig) -> None:
    rig.run(0.5)
    rig.engine.estop()
    held = rig.run(0.5).copy()
    rig.to("sleeping")
    rig.partial()
    frame = rig.run(1.0)
    mask = np.ones(len(frame), bool)
    for role in (Role.LIPS_OPEN, Role.LIPS_WIDE, Role.LIPS_NARROW):
        i = rig.body.role_index(role)
        if i is not None:
            mask[i] = False
    assert np.array_equal(frame[mask], held[mask])
    assert rig.language.nods == 0


def test_disabled_body_language_follows_nothing() -> None:
    rig = Rig(BodyLanguageConfig(enabled=False))
    rig.to("thinking")
    rig.run(1.0)
    assert POSE not in rig.engine.state().offsets


def test_the_runtime_shows_its_conversations_phase_on_the_body() -> None:
    from anima.config import AnimaConfig, MqttConfig
    from anima.drivers.sim import SimDriver
    from anima.runtime import Runtime
    from anima.testing import eventually

    rt = Runtime(AnimaConfig(mqtt=MqttConfig(enabled=False)), driver=SimDriver(), tts=[])
    rt.start()
    try:
        pitch = rt.body.role_index(Role.NECK_PITCH)
        assert pitch is not None
        before = rt.engine.last_frame[pitch]
        rt.events.publish(ConversationChanged(t=0.0, state="sleeping", previous="idle"))
        assert eventually(lambda: rt.engine.last_frame[pitch] > before + 10, timeout=5)
    finally:
        rt.stop(ease=False)
