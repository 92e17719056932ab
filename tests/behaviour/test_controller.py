"""Nadine's rules, each on the real engine with a fake clock and the shipped animations."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from anima import commands as cmd
from anima.animation import AnimationLibrary, shipped_folder
from anima.behaviour.controller import Behaviour
from anima.commands import LookAtResult
from anima.config import AnimaConfig, BehaviourConfig
from anima.errors import (
    CommandRefusedError,
    EStopActiveError,
    InvalidCommandError,
    NonFiniteValueError,
    UnknownAnimationError,
)
from anima.events import Event, EventHub, MoveFinished, MoveStarted, Notice
from anima.motion import Goto
from anima.motion.moves import Move
from anima.testing import EventRecorder, FakeClock, FakeTimeRobot, make_engine

pytestmark = pytest.mark.fast

NECK_YAW, NECK_PITCH, NECK_ROLL, EYES_YAW = 7, 8, 9, 1  # 0-based indices in the shipped body


class Rig:
    def __init__(self) -> None:
        self.hub = EventHub()
        self.recorder = EventRecorder().attach(self.hub)
        self.engine, self.driver, self.clock = make_engine(events=self.hub)
        self.library = AnimationLibrary([shipped_folder()], len(self.engine.body))
        assert not self.library.load().errors
        self.b = Behaviour(self.engine, self.library, self.hub, self.clock)

    def run(self, seconds: float) -> None:
        self.engine.run(round(seconds / self.engine.period))
        self.hub.drain()

    def started(self) -> list[str]:
        return [e.name for e in self.recorder.events if isinstance(e, MoveStarted)]

    def finished(self) -> list[MoveFinished]:
        return [e for e in self.recorder.events if isinstance(e, MoveFinished)]

    def column(self, index: int) -> np.ndarray:
        return np.array([f.values[index] for f in self.driver.history()])


@pytest.fixture
def rig() -> Rig:
    return Rig()


def test_unknown_animation_is_refused_and_nothing_moves(rig: Rig) -> None:
    rig.run(0.1)
    before = rig.engine.last_frame
    with pytest.raises(UnknownAnimationError, match="did you mean nod"):
        rig.b.play_animation("nodd")
    rig.run(0.5)
    assert rig.started() == []
    np.testing.assert_allclose(rig.engine.last_frame, before)


def test_a_gesture_first_returns_to_the_default_posture(rig: Rig) -> None:
    rig.engine.queue_move(Goto(rig.engine.body, {"r_elbow": 180.0}, 0.3))  # away from it
    rig.run(0.5)
    rig.b.play_animation("smile")
    rig.run(3.5)
    assert rig.started() == ["goto", "reset:LOOKUPPostureDefault", "smile"]
    assert all(not e.cut for e in rig.finished())
    assert rig.engine.last_frame[15] == pytest.approx(50, abs=0.5)  # the elbow is back


def test_no_reset_when_the_body_already_holds_the_default_posture(rig: Rig) -> None:
    rig.b.play_animation("smile")
    rig.run(3.0)
    assert rig.started() == ["smile"]  # nothing to return to: no 0.4 s pause


def test_blink_animations_skip_the_reset(rig: Rig) -> None:
    rig.b.play_animation("LOOKUPPostureDefaultBlink")
    rig.run(1.2)  # the move ends and idle has taken the eyelids back
    assert rig.started() == ["LOOKUPPostureDefaultBlink"]
    rig.b.play_animation("blink")  # an idle layer, not a move
    rig.run(0.02)
    assert "anim:blink" in rig.engine.idle_layer_names
    lids = rig.column(0)[-1]
    start = len(rig.driver.history())
    rig.run(0.3)
    assert rig.column(0)[start:].min() < lids - 100  # the lids closed and reopened
    rig.run(0.5)
    assert "anim:blink" not in rig.engine.idle_layer_names
    assert rig.started() == ["LOOKUPPostureDefaultBlink"]


def test_breathing_slow_loops_as_an_idle_layer_until_stopped(rig: Rig) -> None:
    rig.b.play_animation("breathingSlow")
    rig.run(6.0)
    assert "anim:breathingSlow" in rig.engine.idle_layer_names
    assert rig.started() == []
    torso = rig.column(11)[-300:]
    assert torso.max() - torso.min() > 4  # it breathes
    rig.b.stop_idle_animation("breathingSlow")
    rig.run(1.0)
    assert "anim:breathingSlow" not in rig.engine.idle_layer_names


def test_waving_and_shutdown_clear_pending_moves(rig: Rig) -> None:
    rig.b.play_animation("smile")
    rig.b.play_animation("bow")
    rig.run(0.05)
    rig.b.play_animation("LOOKUP_Waving")
    rig.run(6.0)
    cut = {e.name for e in rig.finished() if e.cut}
    assert "bow" in cut
    assert rig.started()[-2:] == ["reset:LOOKUPPostureDefault", "LOOKUP_Waving"]
    assert "bow" not in rig.started()


def test_nod_suppresses_position_look_at_until_it_ends(rig: Rig) -> None:
    rig.b.play_animation("nod")
    assert rig.b.head_animation_playing
    assert rig.b.look_at_position(1.0, 0.4, 0.0) is LookAtResult.HEAD_ANIMATION
    rig.run(2.5)  # reset (0.4 s) + nod (1.26 s)
    assert not rig.b.head_animation_playing
    assert rig.b.look_at_position(1.0, 0.4, 0.0) is LookAtResult.MOVED


def test_a_dropped_head_animation_releases_look_at(rig: Rig) -> None:
    rig.b.play_animation("shake")
    rig.engine.clear()
    rig.run(0.5)
    assert not rig.b.head_animation_playing


def test_look_at_turns_head_and_eyes_towards_the_point(rig: Rig) -> None:
    assert rig.b.look_at_position(1.0, 0.6, 0.0) is LookAtResult.MOVED  # to the left
    rig.run(2.0)
    frame = rig.engine.last_frame
    assert frame[NECK_YAW] > 150
    assert frame[EYES_YAW] > 135
    yaw = math.atan2(0.6, 1.0)
    body = rig.engine.body
    head = body.channels[NECK_YAW].calibration
    eyes = body.channels[EYES_YAW].calibration
    assert head is not None
    assert eyes is not None
    total = head.to_radians(frame[NECK_YAW]) + eyes.to_radians(frame[EYES_YAW])
    assert total == pytest.approx(yaw, abs=0.02)


def test_look_at_dead_zone_and_bad_points(rig: Rig) -> None:
    assert rig.b.look_at_position(1.0, 0.3, 0.0) is LookAtResult.MOVED
    rig.clock.advance(0.03)
    assert rig.b.look_at_position(1.0, 0.305, 0.001) is LookAtResult.DEAD_ZONE
    with pytest.raises(NonFiniteValueError):
        rig.b.look_at_position(math.nan, 0.0, 0.0)
    with pytest.raises(InvalidCommandError, match="eyes themselves"):
        rig.b.look_at_position(0.0, 0.0, 0.0)


def test_an_unreachable_point_is_clamped_and_reported(rig: Rig) -> None:
    assert rig.b.look_at_position(-1.0, 0.1, 0.0) is LookAtResult.MOVED  # behind the head
    rig.run(2.0)
    notices = [e for e in rig.recorder.events if isinstance(e, Notice) and e.source == "look_at"]
    assert notices
    assert "out of reach" in notices[0].message
    body = rig.engine.body
    frame = rig.engine.last_frame
    assert frame[NECK_YAW] == pytest.approx(body.channels[NECK_YAW].max, abs=1.0)


def test_the_default_posture_clears_a_latched_gaze_target(rig: Rig) -> None:
    rig.b.look_at_target("Posture_LookAtZoom")
    assert rig.b.latched_target == "Posture_LookAtZoom"
    rig.run(1.0)
    assert rig.engine.last_frame[NECK_YAW] == pytest.approx(138, abs=0.5)
    rig.b.look_at_target("LOOKUPPostureDefault")
    assert rig.b.latched_target is None
    rig.run(1.0)
    assert rig.engine.last_frame[NECK_YAW] == pytest.approx(128, abs=0.5)


def test_a_look_at_releases_a_held_gaze_posture_says_so_and_looks(rig: Rig) -> None:
    """It was silently ignored (LATCHED) on MQTT and REST; only the agent released it first."""
    rig.b.look_at_target("Posture_LookAtZoom")
    rig.run(1.0)
    assert rig.engine.last_frame[NECK_YAW] == pytest.approx(138, abs=0.5)
    assert rig.b.look_at_position(1.0, -0.6, 0.0) is LookAtResult.MOVED
    assert rig.b.latched_target is None
    assert rig.b.gaze.active
    rig.run(1.5)
    notices = [e for e in rig.recorder.events if isinstance(e, Notice)]
    assert [n.message for n in notices] == [
        "look_at released the held gaze posture 'Posture_LookAtZoom'"
    ]
    assert notices[0].source == "look_at"
    assert rig.started()[-1] == "reset:LOOKUPPostureDefault"  # head and eyes back under the gaze
    assert rig.engine.last_frame[NECK_YAW] < 128 - 5  # turned right, away from the posture's 138
    assert rig.b.look_at_position(1.0, -0.6, 0.0) is not LookAtResult.LATCHED
    rig.run(0.2)
    assert len([e for e in rig.recorder.events if isinstance(e, Notice)]) == 1  # once


def test_a_look_at_under_an_estop_keeps_the_held_gaze_posture(rig: Rig) -> None:
    rig.b.look_at_target("Posture_LookAtZoom")
    rig.run(1.0)
    rig.engine.estop()
    with pytest.raises(EStopActiveError, match="look_at refused"):
        rig.b.look_at_position(1.0, -0.6, 0.0)
    assert rig.b.latched_target == "Posture_LookAtZoom"
    assert not rig.b.gaze.active


def test_end_look_at_restores_head_and_eyes(rig: Rig) -> None:
    rig.b.look_at_target("Posture_LookAtInterviewer")
    rig.run(1.0)
    assert rig.engine.last_frame[NECK_YAW] == pytest.approx(106, abs=0.5)
    rig.b.end_look_at()
    rig.run(1.0)
    assert rig.b.latched_target is None
    assert rig.engine.last_frame[NECK_YAW] == pytest.approx(128, abs=0.5)
    assert rig.engine.last_frame[EYES_YAW] == pytest.approx(128, abs=0.5)


def test_look_at_target_needs_a_posture(rig: Rig) -> None:
    with pytest.raises(InvalidCommandError, match="not a posture"):
        rig.b.look_at_target("nod")
    with pytest.raises(UnknownAnimationError):
        rig.b.look_at_target("Posture_Nowhere")


def test_a_gesture_keeps_a_latched_gaze(rig: Rig) -> None:
    rig.b.look_at_target("Posture_LookAtZoom")
    rig.run(1.0)
    rig.b.play_animation("smile")  # its reset must not undo the gaze posture
    rig.run(3.0)
    assert rig.engine.last_frame[NECK_YAW] == pytest.approx(138, abs=0.5)


def test_head_and_eye_channels_are_skipped_within_two_seconds_of_a_look_at(rig: Rig) -> None:
    rig.b.look_at_position(1.0, 0.0, -0.05)  # straight ahead: no roll from the gaze
    rig.run(0.5)
    start = len(rig.driver.history())
    rig.b.play_animation("think")  # tilts the head (neck_roll → 144) among other channels
    rig.run(4.0)
    roll = rig.column(NECK_ROLL)[start:]
    assert np.abs(roll - 128).max() < 0.5
    brows = rig.column(3)[start:]
    assert brows.min() < 105  # the rest of the gesture played
    rig.clock.advance(2.5)  # no look-at for more than 2 s
    start = len(rig.driver.history())
    rig.b.play_animation("think")
    rig.run(4.0)
    assert rig.column(NECK_ROLL)[start:].max() > 140


def test_a_head_only_gesture_right_after_a_look_at_is_refused(tmp_path: Path) -> None:
    (tmp_path / "tilt.xml").write_text(
        "<animation><animation_name>tilt</animation_name>"
        "<channel10>128 140 150 140 128</channel10></animation>"
    )
    hub = EventHub()
    engine, _, clock = make_engine(events=hub)
    lib = AnimationLibrary([shipped_folder(), tmp_path], len(engine.body))
    assert not lib.load().errors
    b = Behaviour(engine, lib, hub, clock)
    b.look_at_position(1.0, 0.2, 0.0)
    with pytest.raises(CommandRefusedError, match="head and eye channels"):
        b.play_animation("tilt")
    clock.advance(2.5)
    b.play_animation("tilt")  # fine once the look-at is older than 2 s


def test_shutdown_ignores_look_at_until_wake(rig: Rig) -> None:
    rig.b.play_animation("smile")
    rig.b.shutdown()
    assert rig.b.shutting_down
    assert rig.b.look_at_position(1.0, 0.3, 0.0) is LookAtResult.SHUTDOWN
    with pytest.raises(CommandRefusedError):
        rig.b.look_at_target("Posture_LookAtZoom")
    rig.run(3.5)
    assert "SHUTDOWN_NADINE" in rig.started()
    assert all(e.cut for e in rig.finished() if e.name == "smile")  # cut, never finished
    assert rig.engine.last_frame[0] == pytest.approx(40, abs=1.0)  # eyes closed
    rig.b.wake()
    assert rig.b.look_at_position(1.0, 0.3, 0.0) is LookAtResult.MOVED


def test_servo_moves_one_channel_and_validates(rig: Rig) -> None:
    rig.b.set_channel_default(9, 140)  # 1-based: neck_pitch
    rig.run(1.0)
    assert rig.engine.last_frame[NECK_PITCH] == pytest.approx(140, abs=1.5)  # breathing on top
    with pytest.raises(InvalidCommandError, match=r"out of range 1\.\.28"):
        rig.b.set_channel_default(29, 100)
    with pytest.raises(InvalidCommandError, match="outside"):
        rig.b.set_channel_default(9, 250)


def test_servo_sets_the_default_that_later_resets_return_to(rig: Rig) -> None:
    rig.b.set_channel_default(13, 90)  # 1-based: r_shoulder_pitch, default 40
    rig.run(1.0)
    rig.b.play_animation("LOOKUP_Waving")  # moves the right shoulder, after a reset
    rig.run(6.0)
    rig.b.play_animation("smile")  # its reset brings the shoulder back to the servo value
    rig.run(0.6)
    assert rig.engine.last_frame[12] == pytest.approx(90, abs=0.5)


def _started(e: Event) -> bool:
    return isinstance(e, MoveStarted)


def test_a_full_blink_comes_every_s_after_the_last_move_with_nothing_moving() -> None:
    cfg = AnimaConfig(behaviour=BehaviourConfig(full_blink_every_s=8.0))
    with FakeTimeRobot(cfg) as robot:
        robot.advance(7.99)  # 8 s after the start, not before
        assert robot.recorder.of(_started) == []
        blink = robot.advance_until(_started, within=0.05)
        assert isinstance(blink, MoveStarted)
        assert blink.name == "idle:LOOKUPPostureDefaultBlink"  # not a command: no animation_done
        assert blink.t == pytest.approx(1008.0, abs=0.015)  # the tick after the timer's
        done = robot.advance_until(MoveFinished, within=5)
        # the next one: 8 s after the blink's end, not after its start
        nxt = robot.advance_until(_started, within=9)
        assert isinstance(nxt, MoveStarted)
        assert nxt.t - done.t == pytest.approx(8.0, abs=0.015)
        robot.execute(cmd.LookAtTarget(name="Posture_LookAtZoom"))  # latched: plain blink
        robot.advance_until(lambda e: isinstance(e, MoveFinished), within=5)
        before = robot.runtime.idle_life.full_blinks
        robot.advance(2 * 8.0 + 1.0)
        assert robot.runtime.idle_life.full_blinks >= before + 2
        names = [e.name for e in robot.recorder.of(MoveStarted) if isinstance(e, MoveStarted)]
    after_latch = names[names.index("Posture_LookAtZoom") + 1 :]
    assert "idle:LOOKUPPostureDefaultBlink" not in after_latch


def test_no_full_blink_while_a_move_runs() -> None:
    cfg = AnimaConfig(behaviour=BehaviourConfig(full_blink_every_s=1.0))
    with FakeTimeRobot(cfg) as robot:
        robot.execute(cmd.PlayAnimation(name="LOOKUP_Waving"))  # longer than 1 s
        wave = robot.advance_until(_started, within=0.1)
        end = robot.advance_until(MoveFinished, within=20)
        assert end.t - wave.t > 2.0
        blinks = [e for e in robot.recorder.of(_started) if e.t < end.t]
        assert [e.name for e in blinks if isinstance(e, MoveStarted)] == ["LOOKUP_Waving"]


def test_behaviour_works_on_a_fake_clock_engine_without_a_runtime() -> None:
    hub = EventHub()
    engine, _, clock = make_engine(events=hub, clock=FakeClock())
    lib = AnimationLibrary([shipped_folder()], len(engine.body))
    lib.load()
    b = Behaviour(engine, lib, hub, clock)
    b.play_animation("nod")
    engine.run(300)
    hub.drain()
    assert not b.head_animation_playing


ESTOP_REFUSAL = r"refused: emergency stop is active \(reset to resume\)$"


def test_estop_refusals_name_what_was_asked_not_the_internal_moves(rig: Rig) -> None:
    # issue 12 item 18: a `nod` during an estop was refused as 'reset:LOOKUPPostureDefault'
    rig.engine.queue_move(Goto(rig.engine.body, {"r_elbow": 180.0}, 0.3))  # away: a reset is due
    rig.run(0.5)
    rig.engine.estop()
    rig.run(0.05)
    asked = {
        "'nod'": lambda: rig.b.play_animation("nod"),
        "'LOOKUP_Waving'": lambda: rig.b.play_animation("LOOKUP_Waving"),  # plays a reset first
        "'blink'": lambda: rig.b.play_animation("blink"),  # an idle layer, not a move
        "look_at_target 'Posture_LookAtZoom'": lambda: rig.b.look_at_target("Posture_LookAtZoom"),
        "end_look_at": rig.b.end_look_at,
        "shutdown": rig.b.shutdown,
        "wake": rig.b.wake,
        r"servo 16 \(r_elbow\)": lambda: rig.b.set_channel_default(16, 60.0),
    }
    for what, request in asked.items():
        with pytest.raises(CommandRefusedError, match=f"^{what} {ESTOP_REFUSAL}") as refused:
            request()
        assert "reset:" not in str(refused.value)
    assert "anim:blink" not in rig.engine.idle_layer_names  # refused means nothing was added
    assert not rig.b.shutting_down  # …and no state changed
    rig.engine.reset()
    rig.run(0.05)
    rig.b.wake()  # the default the refused `servo` asked for was not recorded
    rig.run(2.0)
    assert rig.engine.last_frame[15] == pytest.approx(50, abs=0.5)


def test_an_estop_racing_a_request_is_still_named_after_it(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = rig.engine

    class Racing:  # the engine, but an estop lands between the behaviour's check and its call
        def __getattr__(self, name: str) -> object:
            return getattr(engine, name)

        def queue_move(self, move: Move) -> None:
            engine.estop()
            engine.queue_move(move)

    # the behaviour's engine replaced, not the engine's method: a compiled engine's methods are
    # read-only (anima.motion.compiled)
    monkeypatch.setattr(rig.b, "engine", Racing())
    with pytest.raises(CommandRefusedError, match=f"^'nod' {ESTOP_REFUSAL}"):
        rig.b.play_animation("nod")
