"""The runtime wires body, driver, engine and events, and eases to rest when it stops."""

from __future__ import annotations

import dataclasses
import gc
from pathlib import Path

import numpy as np
import pytest

from anima import commands as cmd
from anima.commands import LookAtResult
from anima.config import AnimaConfig, ServeConfig, SimDriverConfig, SpeechConfig, load_config
from anima.drivers.sim import SimDriver
from anima.errors import ConfigError, EngineStateError
from anima.events import Event, MoveFinished
from anima.motion import Goto
from anima.runtime import Runtime
from anima.testing import eventually

pytestmark = pytest.mark.model


def test_start_runs_the_loop_and_stop_eases_to_the_rest_posture() -> None:
    driver = SimDriver()
    rt = Runtime(driver=driver)
    seen: list[Event] = []
    rt.events.subscribe(seen.append, "move_finished")
    rt.start()
    try:
        assert rt.wait_first_tick(2.0)
        assert driver.is_connected
        rt.engine.queue_move(Goto(rt.body, {"r_elbow": 180.0}, duration=0.2))
        assert rt.engine.wait_until_idle(3.0)
    finally:
        rt.stop()
    assert not driver.is_connected
    assert not rt.engine.running
    rest = rt.body.posture("rest").values
    last = driver.last
    assert last is not None
    for name, value in rest.items():
        # idle layers begin their hand-back in the goto's last tick: allow their first sliver
        assert last.values[rt.body.index(name)] == pytest.approx(value, abs=0.01), name
    names = [e.name for e in seen if isinstance(e, MoveFinished)]
    assert names[:1] == ["goto"]
    assert names[-1] == "goto:rest"


def test_stopping_mid_wave_eases_every_channel_to_rest() -> None:
    # issue 12 item 10: SIGTERM during LOOKUP_Waving left r_shoulder_roll at 110 (rest 60),
    # brows at 150, r_wrist_yaw at 164 and r_hand at 22: the rest posture names 13 channels
    driver = SimDriver()
    rt = Runtime(driver=driver)  # the shipped config: breathing and blinking on
    rt.start()
    try:
        assert rt.wait_first_tick(2.0)
        rt.execute(cmd.PlayAnimation(name="LOOKUP_Waving"))
        roll = rt.body.index("r_shoulder_roll")
        assert eventually(lambda: rt.engine.last_frame[roll] > 100.0)  # the arm is up, waving
        assert rt.execute(cmd.LookAt(x=1.0, y=0.4, z=0.2)) is LookAtResult.MOVED  # and a gaze
        assert eventually(lambda: "gaze.head" in rt.engine.state().offsets)
    finally:
        rt.stop()
    last = driver.last
    assert last is not None
    expected = rt.body.defaults()
    for name, value in rt.body.posture("rest").values.items():
        expected[rt.body.index(name)] = value
    for i, ch in enumerate(rt.body.channels):
        # the gaze decays (critically damped) for the ease's 1 s: a few hundredths remain
        assert last.values[i] == pytest.approx(expected[i], abs=0.05), ch.name


def test_context_manager_starts_and_stops() -> None:
    driver = SimDriver()
    with Runtime(driver=driver) as rt:
        assert rt.wait_first_tick(2.0)
        assert rt.engine.running
    assert not driver.is_connected
    assert driver.sent > 0


def test_starting_twice_is_an_error() -> None:
    rt = Runtime(driver=SimDriver())
    rt.start()
    try:
        with pytest.raises(EngineStateError):
            rt.start()
    finally:
        rt.stop(ease=False)


def test_unknown_driver_type_names_the_choices() -> None:
    with pytest.raises(
        ConfigError, match=r"driver\.type must be one of sim, serial, reachy_mini, got 'nope'"
    ):
        load_config(None, env={"ANIMA_DRIVER__TYPE": "nope"})
    odd = dataclasses.replace(SimDriverConfig(), type="nope")  # type: ignore[arg-type]
    with pytest.raises(
        ConfigError, match=r"driver\.type must be one of sim, serial, reachy_mini, got 'nope'"
    ):
        Runtime(AnimaConfig(driver=odd))  # built in code, past the loader: the registry


def test_an_unknown_speech_engine_is_refused_when_the_config_loads() -> None:
    known = r"speech\.engines must be one of piper, espeak, azure, got 'nope'"
    with pytest.raises(ConfigError, match=known):
        SpeechConfig(engines=("espeak", "nope"))
    with pytest.raises(ConfigError, match=known):
        load_config(None, env={"ANIMA_SPEECH__ENGINES": "[espeak, nope]"})


def test_estopped_runtime_stops_without_moving() -> None:
    driver = SimDriver()
    rt = Runtime(AnimaConfig(serve=ServeConfig(shutdown_s=0.5)), driver=driver)
    rt.start()
    try:
        assert rt.wait_first_tick(2.0)
        rt.engine.estop()
        assert rt.engine.wait_until_idle(1.0)
        held = rt.engine.last_frame
    finally:
        rt.stop()
    last = driver.last
    assert last is not None
    np.testing.assert_allclose(last.values, held)


def test_a_reload_summary_names_a_few_skipped_files_and_counts_the_rest(tmp_path: Path) -> None:
    from anima.config import AnimationConfig

    for i in range(40):
        (tmp_path / f"bad{i:02}.xml").write_text("<animation", encoding="utf-8")
    config = AnimaConfig(
        speech=SpeechConfig(enabled=False),
        animation=AnimationConfig(folders=(str(tmp_path),)),
    )
    summary = Runtime(config, driver=SimDriver()).reload_animations()
    assert "40 skipped: " in summary
    assert "bad00.xml" in summary
    assert "bad39.xml" not in summary
    assert "and 35 more (anima animations validate lists them all)" in summary
    assert len(summary) < 2000


def test_execute_gives_a_speeches_id_and_stops_it_with_the_reason_given() -> None:
    """Issue 15, one command path: ``execute(Speak)`` gives the utterance's id, the one its
    start_speak and end_speak carry, so no caller needs the speech service; StopSpeaking ends
    it with the reason it names."""
    from anima.commands import Spoken
    from anima.events import SpeechEnded, SpeechStarted
    from anima.speech.sinks import NullSink
    from anima.testing.tts import ScriptedEngine

    rt = Runtime(driver=SimDriver(), tts=[ScriptedEngine()], audio_sink=NullSink())
    heard: list[Event] = []
    rt.events.subscribe(heard.append)
    rt.start()
    try:
        spoken = rt.execute(cmd.Speak(text="Hello there, how are you today?"))
        assert isinstance(spoken, Spoken)
        assert eventually(lambda: any(isinstance(e, SpeechStarted) for e in heard))
        assert rt.execute(cmd.StopSpeaking(reason="interrupted")) is None
        assert eventually(lambda: any(isinstance(e, SpeechEnded) for e in heard))
    finally:
        rt.stop(ease=False)
    started = [e for e in heard if isinstance(e, SpeechStarted)]
    ended = [e for e in heard if isinstance(e, SpeechEnded)]
    assert [e.utterance for e in started] == [spoken.utterance]
    assert [(e.utterance, e.reason) for e in ended] == [(spoken.utterance, "interrupted")]


class _Unreachable(SimDriver):
    """A robot whose port is missing: connect fails."""

    def connect(self) -> None:
        from anima.errors import DriverError

        raise DriverError("serial: /dev/ttyNONE: no such port")


def test_a_driver_that_cannot_connect_leaves_no_thread_running() -> None:
    """Issue 15: the runtime stops exactly the parts that started. A failing connect used to
    leave the event hub's thread running."""
    import threading

    from anima.errors import DriverError

    def hubs() -> int:
        return sum(t.name == "anima-events" for t in threading.enumerate())

    before = hubs()
    rt = Runtime(driver=_Unreachable())
    with pytest.raises(DriverError, match="no such port"):
        rt.start()
    assert hubs() == before  # the hub it started is stopped again
    rt.stop()  # nothing started: a no-op, not an error
    with pytest.raises(DriverError):
        rt.start()  # the same failure again: nothing was left half started


class _Part:
    """A part that notes what the runtime did to it, and when (the loop's ticks so far)."""

    def __init__(self, runtime: Runtime, name: str, log: list[str], *, fail: bool = False) -> None:
        self.runtime, self.name, self.log, self.fail = runtime, name, log, fail
        self.prepared_at_tick: int | None = None

    def prepare(self) -> None:
        self.prepared_at_tick = self.runtime.engine.stats().ticks
        self.log.append(f"prepare {self.name}")

    def start(self) -> None:
        self.log.append(f"start {self.name}")
        if self.fail:
            raise ConfigError(f"{self.name}: the port is taken")

    def stop(self, timeout: float = 5.0) -> None:
        assert timeout > 0
        self.log.append(f"stop {self.name}")


def test_parts_are_prepared_once_the_loop_runs_and_stopped_last_first() -> None:
    log: list[str] = []
    rt = Runtime(driver=SimDriver())
    first, second = _Part(rt, "mqtt", log), _Part(rt, "web", log)
    rt.attach(first)
    rt.attach(second)
    moving_at: list[int] = []
    rt.start(on_moving=lambda: moving_at.append(rt.engine.ticks))
    try:
        # the first tick comes first, then what loads: the body is held while the rest loads
        assert moving_at
        assert moving_at[0] >= 1
        assert first.prepared_at_tick is not None
        assert first.prepared_at_tick >= moving_at[0]
        assert second.prepared_at_tick is not None
        assert second.prepared_at_tick >= moving_at[0]
        assert log[:2] == ["prepare mqtt", "prepare web"]  # nothing before on_moving
        late = _Part(rt, "late", log)
        rt.attach(late)  # attached while running: prepared and started at once
    finally:
        rt.stop()
    assert log == [
        "prepare mqtt",
        "prepare web",
        "start mqtt",
        "start web",
        "prepare late",
        "start late",
        "stop late",
        "stop web",
        "stop mqtt",
    ]


def test_a_part_that_cannot_start_stops_every_part_prepared_and_the_core() -> None:
    import threading

    def threads() -> set[str]:
        return {t.name for t in threading.enumerate() if t.name.startswith("anima")}

    before = threads()
    log: list[str] = []
    rt = Runtime(driver=SimDriver())
    for name, fail in (("broker", False), ("web", True), ("agent", False)):
        rt.attach(_Part(rt, name, log, fail=fail))
    with pytest.raises(ConfigError, match="port is taken"):
        rt.start()
    assert log == [
        "prepare broker",
        "prepare web",
        "prepare agent",
        "start broker",
        "start web",  # fails: the agent never starts, but gives back what it prepared
        "stop agent",
        "stop web",
        "stop broker",
    ]
    assert threads() == before  # the loop, the event hub: all stopped
    assert not rt.driver.is_connected


def test_the_collector_is_paused_while_a_runtime_starts_and_what_it_loaded_is_frozen() -> None:
    # full collections while the doors import and the models load held the interpreter
    # 30-50 ms each beside the running loop: paused, then the loaded objects frozen
    seen: list[bool] = []
    rt = Runtime(driver=SimDriver())
    part = _Part(rt, "web", [])
    part.prepare = lambda: seen.append(gc.isenabled())  # type: ignore[method-assign]
    rt.attach(part)
    assert gc.isenabled()
    gc.unfreeze()
    with rt:
        assert seen == [False]  # off while it prepared
        assert gc.isenabled()  # on again once started
        assert gc.get_freeze_count() > 0
    gc.unfreeze()
    gc.disable()  # a process that runs without the collector keeps it off
    try:
        with Runtime(driver=SimDriver()):
            assert not gc.isenabled()
    finally:
        gc.enable()
    failing = Runtime(driver=SimDriver())
    failing.attach(_Part(failing, "mqtt", [], fail=True))
    with pytest.raises(ConfigError, match="port is taken"):
        failing.start()
    assert gc.isenabled()  # a start that failed gives it back too
