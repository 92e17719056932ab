"""The Reachy Mini daemon's own direction of arrival, read by anima: Pollen's daemon
(``reachy-mini-daemon`` 1.13, mockup simulation) with its ReSpeaker array replaced by a scripted
one (``MockupDaemon(doa_file=...)``: the daemon reads the file 10 times a second, as it would
the array over USB), and anima reading its state stream (``/api/state/ws/full`` with ``doa``)
— alone, and in a whole runtime built with ``driver.type: reachy_mini``, whose attention turns
toward the voice."""

from __future__ import annotations

import json
import logging
import math
import os
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from anima.build import build
from anima.clock import MonotonicClock
from anima.config import (
    AnimaConfig,
    AttentionConfig,
    ListenConfig,
    MqttConfig,
    ReachyMiniDriverConfig,
    SpeechConfig,
    WebConfig,
)
from anima.listening.direction.daemon import DaemonDirection
from anima.listening.direction.types import VoiceDirection
from anima.runtime import Runtime
from anima.testing import eventually
from anima.testing.reachy_daemon import MockupDaemon

pytestmark = pytest.mark.integration

LOG = "anima.listening.direction.daemon"
TALKER = 0.5  # rad, anima's azimuth: to the robot's left (28.6°)


def say_from(path: Path, azimuth: float, speech: bool = True) -> None:
    """The scripted array hears a voice from ``azimuth`` (anima's), in the daemon's angle."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"angle": math.pi / 2 - azimuth, "speech_detected": speech}))
    os.replace(tmp, path)  # whole: the daemon never reads half a file


def daemon_says(daemon: MockupDaemon) -> object:
    """What the daemon itself serves (``GET /api/state/doa``)."""
    with urllib.request.urlopen(daemon.url + "/api/state/doa", timeout=2) as reply:
        return json.loads(reply.read())


def speech_said(daemon: MockupDaemon) -> object:
    said = daemon_says(daemon)
    return said.get("speech_detected") if isinstance(said, dict) else None


@pytest.fixture(scope="module")
def module_daemon(
    executable: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[MockupDaemon]:
    """One daemon for the module's tests (~5 s of CPU to start each): each test finds it
    running and hearing nothing (:func:`doa_file`)."""
    path = tmp_path_factory.mktemp("doa") / "doa.json"
    path.write_text("null")
    with MockupDaemon(executable, doa_file=path) as d:
        yield d


@pytest.fixture
def doa_file(module_daemon: MockupDaemon) -> Path:
    """The scripted array's file, reset to "nothing heard", the daemon running (a test that
    stopped it and failed before its restart leaves it stopped) and saying so."""
    path = module_daemon.doa_file
    assert path is not None
    path.write_text("null")
    if module_daemon.process is None or module_daemon.process.poll() is not None:
        module_daemon.start()
    assert eventually(lambda: daemon_says(module_daemon) is None, timeout=3.0)
    return path


@pytest.fixture
def array_daemon(module_daemon: MockupDaemon, doa_file: Path) -> MockupDaemon:
    return module_daemon


def runtime_on(daemon: MockupDaemon) -> Runtime:
    return build(
        AnimaConfig(
            driver=ReachyMiniDriverConfig(
                host="127.0.0.1", port=daemon.port, reconnect_s=(0.2, 1.0)
            ),
            attention=AttentionConfig(idle_glances=False),
            mqtt=MqttConfig(enabled=False),
            web=WebConfig(enabled=False),
            speech=SpeechConfig(enabled=False),
        ),
        report=lambda _line: None,
    )


def voice_deg(runtime: Runtime) -> float | None:
    seen = runtime.state().attention
    return None if seen is None else seen.voice_azimuth_deg


class ArrayInTheHead:
    """The scripted array turns with the head, as the robot's does: while a talker speaks
    (:meth:`say`), the file says their azimuth less the head's turn (the pose the runtime sent),
    20 times a second; a context manager (its thread stops at the exit)."""

    def __init__(self, runtime: Runtime, path: Path) -> None:
        assert runtime.attention is not None
        self._poses = runtime.attention.attention.poses
        self._path = path
        self._azimuth: float | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def say(self, azimuth: float) -> None:
        self._azimuth = azimuth
        self._write()

    def head_yaw_deg(self) -> float:
        pose = self._poses.latest()
        return 0.0 if pose is None else math.degrees(pose.yaw)

    def _write(self) -> None:
        if self._azimuth is not None:
            say_from(self._path, self._azimuth - math.radians(self.head_yaw_deg()))

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            self._write()

    def __enter__(self) -> ArrayInTheHead:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join(2.0)


def near(runtime: Runtime, azimuth: float, tolerance_deg: float = 1.0) -> bool:
    """Whether the voice attention holds is within ``tolerance_deg`` of ``azimuth`` (rad)."""
    voice = voice_deg(runtime)
    return voice is not None and abs(voice - math.degrees(azimuth)) < tolerance_deg


def test_the_daemon_serves_the_scripted_array(array_daemon: MockupDaemon, doa_file: Path) -> None:
    say_from(doa_file, TALKER)
    assert eventually(lambda: daemon_says(array_daemon) is not None, timeout=3.0)
    said = daemon_says(array_daemon)
    assert said == {"angle": pytest.approx(math.pi / 2 - TALKER), "speech_detected": True}


def test_the_daemons_voice_is_handed_on_toward_its_azimuth(
    array_daemon: MockupDaemon, doa_file: Path
) -> None:
    heard: list[VoiceDirection] = []
    doa = DaemonDirection("127.0.0.1", array_daemon.port, heard.append, MonotonicClock(0.0))
    say_from(doa_file, TALKER)
    doa.start()
    try:
        assert eventually(lambda: len(heard) >= 5, timeout=5.0)
        assert all(abs(v.azimuth - TALKER) < 1e-6 for v in heard)
        assert not any(v.own_voice for v in heard)
        say_from(doa_file, TALKER, speech=False)  # the array hears no speech
        assert eventually(lambda: speech_said(array_daemon) is False, timeout=3.0)
        seen = doa.messages  # a message in flight may still carry the last speech: two more
        assert eventually(lambda: doa.messages >= seen + 2, timeout=3.0)
        before, seen = len(heard), doa.messages
        assert eventually(lambda: doa.messages >= seen + 6, timeout=3.0)  # six messages more
        assert len(heard) == before
        assert doa.connections == 1  # one stream for all of it
    finally:
        doa.stop(timeout=2.0)


def test_a_runtime_on_the_daemon_turns_toward_the_voice(
    array_daemon: MockupDaemon, doa_file: Path
) -> None:
    runtime = runtime_on(array_daemon)
    assert runtime.attention is not None
    assert runtime.attention.daemon_voice is not None
    assert "the Reachy Mini daemon's microphone array" in runtime.attention.summary
    with runtime, ArrayInTheHead(runtime, doa_file) as array:
        assert runtime.wait_first_tick()
        array.say(TALKER)
        assert eventually(lambda: voice_deg(runtime) is not None, timeout=5.0)
        seen = runtime.state().attention
        assert seen is not None
        assert seen.target == "voice", seen

        def settled() -> bool:
            now = runtime.state().attention
            return (
                array.head_yaw_deg() > 5.0  # the head turned …
                and near(runtime, TALKER)  # … the voice stayed where the talker is …
                and now is not None  # … and is aimed at
                and now.azimuth_deg is not None
                and abs(now.azimuth_deg - math.degrees(TALKER)) < 1.5
            )

        assert eventually(settled, timeout=5.0)


def test_the_robots_own_voice_is_not_a_target(array_daemon: MockupDaemon, doa_file: Path) -> None:
    runtime = runtime_on(array_daemon)
    assert runtime.attention is not None
    doa = runtime.attention.daemon_voice
    assert doa is not None
    assert doa.own_voice in runtime.attention.own_voice_gates()  # a barge-in lifts it
    playback = runtime.playback
    assert playback is not None  # the robot's loudspeaker, as the echo canceller hears it
    with runtime, ArrayInTheHead(runtime, doa_file) as array:
        assert runtime.wait_first_tick()
        playback.start(16000)  # the robot speaks: 2 s of a loud tone
        tone = 8000 * np.sin(2 * np.pi * 220 * np.arange(32000) / 16000)
        playback.write(tone.astype(np.int16))
        array.say(-TALKER)  # and the array hears it (or someone) at its right
        handed = doa.handed
        end = time.monotonic() + 1.2
        while time.monotonic() < end:
            assert voice_deg(runtime) is None, runtime.state().attention
            time.sleep(0.05)
        assert doa.handed >= handed + 5  # heard, and marked its own: not a target
        assert eventually(lambda: voice_deg(runtime) is not None, timeout=3.0)  # once silent
        assert eventually(lambda: near(runtime, -TALKER), timeout=3.0)
        playback.stop()


def test_a_daemon_lost_mid_run_is_logged_once_and_read_again_after_its_restart(
    array_daemon: MockupDaemon, doa_file: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=LOG)
    runtime = runtime_on(array_daemon)
    with runtime, ArrayInTheHead(runtime, doa_file) as array:
        assert runtime.wait_first_tick()
        array.say(TALKER)
        assert eventually(lambda: voice_deg(runtime) is not None, timeout=5.0)
        array_daemon.stop()
        time.sleep(2.0)  # four retries
        assert runtime.state().attention is not None  # the runtime runs on
        lines = [r for r in caplog.records if r.name == LOG]
        assert len(lines) == 1, lines
        assert "does not answer" in lines[0].getMessage()
        array.say(-TALKER)
        array_daemon.start()
        assert eventually(lambda: near(runtime, -TALKER), timeout=8.0)
        lines = [r for r in caplog.records if r.name == LOG]
        assert len(lines) == 2, lines
        assert "answers again" in lines[1].getMessage()


def test_attention_daemon_voice_false_turns_it_off_and_listen_mics_takes_its_place() -> None:
    """Built only (nothing connects before start): no daemon needed."""

    def built(attention: AttentionConfig, listen: ListenConfig) -> Runtime:
        return build(
            AnimaConfig(
                driver=ReachyMiniDriverConfig(host="127.0.0.1", port=9),
                attention=attention,
                listen=listen,
                mqtt=MqttConfig(enabled=False),
                web=WebConfig(enabled=False),
            ),
            report=lambda _line: None,
        )

    on = built(AttentionConfig(), ListenConfig())
    assert on.attention is not None
    assert on.attention.daemon_voice is not None
    assert on.playback is not None  # for its own-voice gate
    off = built(AttentionConfig(daemon_voice=False), ListenConfig())
    assert off.attention is None  # nothing else to attend with
    assert off.playback is None
    array = built(AttentionConfig(), ListenConfig(mics=((0.0, 0.048, 0.0), (0.0, -0.048, 0.0))))
    assert array.attention is not None
    assert array.attention.daemon_voice is None
    assert array.attention.voice_sink is not None
