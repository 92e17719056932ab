"""Privacy (``listen_after_wake``): no session and no microphone audio before the wake phrase;
the phrase (anima's spotter on the microphone's frames) opens the session and the audio flows;
``agent.engaged_s`` without a voice (on the robot's fake clock) stops it and closes the socket."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

import numpy as np
import pytest

from anima.agent.realtime import RealtimeAgent
from anima.agent.realtime.assembly import build_realtime_agent
from anima.agent.vocabulary import robot_registry
from anima.config.planner import RealtimePlannerConfig
from anima.listening.sources import PushSource
from anima.listening.wake.spotter import Spotter
from anima.testing.listening import FakeSpotter
from anima.testing.realtime_server import ScriptedRealtimeServer

from ..conftest import autojump_runtime, fake_clock
from .conftest import quiet_config, settings

pytestmark = pytest.mark.integration

APPEND = "input_audio_buffer.append"
ENGAGED_S = 5.0


def until(what: Callable[[], bool], why: str) -> None:
    deadline = time.monotonic() + 5.0
    while not what():
        assert time.monotonic() < deadline, why
        time.sleep(0.005)


def voice(seconds: float) -> np.ndarray:
    """16 kHz microphone audio (a tone)."""
    t = np.arange(round(16_000 * seconds)) / 16_000
    return (4000 * np.sin(2 * np.pi * 300 * t)).astype(np.int16)


def test_the_session_opens_on_the_wake_phrase_and_closes_after_engaged_s_of_silence() -> None:
    base = quiet_config()
    config = dataclasses.replace(base, agent=dataclasses.replace(base.agent, engaged_s=ENGAGED_S))
    with autojump_runtime(config) as rt, ScriptedRealtimeServer() as server:
        clock = fake_clock(rt)
        source, spotter = PushSource(), FakeSpotter(at=[16_000])  # the phrase ends at 1 s
        agent = RealtimeAgent(
            rt,
            robot_registry(rt),
            settings(server, listen_after_wake=True),
            rt.config.agent,
            key="sk-t",
            source=source,
            spotter=spotter,
        )
        assert agent.gate is not None
        with clock.hold():  # the robot's time moves only when the test says
            rt.attach_agent(agent)
            try:
                source.push(voice(0.8))  # talk before the wake: heard by the spotter alone
                until(lambda: spotter.fed == 25, "the spotter was not fed the frames")
                time.sleep(0.1)  # a connection or an append would have come by now
                assert server.headers == []  # no connection
                assert server.of(APPEND) == []
                assert agent.microphone.sent == 0
                assert agent.gate.withheld == 25

                source.push(voice(0.4))  # the phrase: the session opens, the audio goes
                server.wait_for("session.update")
                source.push(voice(0.3))
                server.wait_for(APPEND, 9)
                assert agent.gate.opened == 1
                assert len(server.headers) == 1
                assert rt.state().conversation == "listening"

                # the person speaks (server VAD) 4 s in: the session stays 5 s from then
                clock.advance(4.0)
                server.push({"type": "input_audio_buffer.speech_started", "audio_start_ms": 0})
                until(lambda: agent.gate.last_voice == clock.now(), "the voice was not noted")
                clock.advance(4.0)
                time.sleep(0.1)
                assert agent.gate.awake
                assert agent.connected

                clock.advance(1.0)  # engaged_s without a voice: closed
                until(lambda: not agent.gate.awake and server.connected == 0, "not closed")
                sent = len(server.of(APPEND))
                source.push(voice(0.5))
                until(lambda: spotter.fed > 25, "the spotter does not listen again")
                time.sleep(0.1)
                assert len(server.of(APPEND)) == sent  # nothing leaves the robot any more
                assert len(server.headers) == 1  # and no new session
                assert rt.state().conversation == "idle"
            finally:
                rt.detach_agent()


def test_anima_serve_builds_the_gate_with_the_listeners_spotter() -> None:
    base = quiet_config()
    planner = RealtimePlannerConfig(url="ws://127.0.0.1:9/v1/realtime", listen_after_wake=True)
    listen = dataclasses.replace(base.listen, wake="keyphrase", wake_phrase="hey anima")
    config = dataclasses.replace(
        base, listen=listen, agent=dataclasses.replace(base.agent, planner=planner)
    )
    with autojump_runtime(config) as rt:
        agent = build_realtime_agent(
            rt, config, audio_in=PushSource(), environ={"OPENAI_API_KEY": "k"}
        )
        assert agent.gate is not None
        assert isinstance(agent.gate.spotter, Spotter)
        assert agent.gate.spotter.name == "keyphrase"
        assert agent.gate.spotter.phrase == "hey anima"
        assert agent.gate.engaged_s == config.agent.engaged_s
        plain = dataclasses.replace(
            config, agent=dataclasses.replace(config.agent, planner=RealtimePlannerConfig())
        )
        agent = build_realtime_agent(
            rt, plain, audio_in=PushSource(), environ={"OPENAI_API_KEY": "k"}
        )
        assert agent.gate is None  # full duplex by default: the session opens at the start
