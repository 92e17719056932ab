"""Tier: integration (a real runtime on the real clock, the scripted server on 127.0.0.1).

The realtime brain's barge-in by anima's duplex rules, not the server's VAD alone: a
backchannel over the robot lets it go on, a stop word stops it at once, a voice held for
``listen.barge_in_s`` stops it then; a voice while the robot is silent is answered when it
ends (the server's VAD only reports: it neither cancels nor starts a response); with anima's
own VAD on the microphone, a short voice is not taken for a held one."""

from __future__ import annotations

import time

import numpy as np
import pytest

from anima import commands as cmd
from anima.agent.realtime import RealtimeAgent
from anima.agent.vocabulary import robot_registry
from anima.events import SpeechStarted
from anima.listening.sources import PushSource
from anima.listening.vad import EnergyVad
from anima.runtime import Runtime
from anima.testing.events import EventRecorder
from anima.testing.realtime_server import ScriptedRealtimeServer, answer

from .conftest import brain, settings, tone

pytestmark = pytest.mark.integration

SUSTAIN_S = 0.3  # listen.barge_in_s, short for the test


def _heard(what: str, **fields: str) -> dict[str, str]:
    return {"type": f"conversation.item.input_audio_transcription.{what}", **fields}


STARTED = {"type": "input_audio_buffer.speech_started", "audio_start_ms": 0}
STOPPED = {"type": "input_audio_buffer.speech_stopped", "audio_end_ms": 400}


def test_a_backchannel_lets_the_robot_go_on_and_a_stop_word_stops_it_at_once(
    real_time_runtime: Runtime,
) -> None:
    rt = real_time_runtime
    rec = EventRecorder().attach(rt.events)
    talking = answer(audio=tone(4.0), item_id="item_talk")[:-1]  # no response.done yet
    canceled = [{"type": "response.done", "response": {"status": "cancelled"}}]
    script = {"response.create": [talking], "response.cancel": [canceled]}
    with ScriptedRealtimeServer(script) as server, brain(rt, server) as agent:
        agent.session.duplex.barge.sustain_s = SUSTAIN_S
        rt.execute(cmd.Ask(text="tell me about your day"))
        rec.wait_for(SpeechStarted)
        time.sleep(0.2)
        server.push(STARTED, _heard("delta", delta="Mm-hmm."), STOPPED)
        server.push(_heard("completed", transcript="Mm-hmm."))
        time.sleep(SUSTAIN_S + 0.2)
        assert not server.of("conversation.item.truncate")  # it goes on
        assert rt.speaking
        assert len(server.of("response.create")) == 1  # a backchannel is not answered
        pushed = time.monotonic()
        server.push(STARTED, _heard("delta", delta="Stop "))
        (truncate,) = server.wait_for("conversation.item.truncate")
        server.wait_for("response.cancel")
        server.push(STOPPED, _heard("completed", transcript="Stop, please."))
        server.wait_for("response.create", 2)  # the person's turn, answered
    assert truncate.t - pushed < SUSTAIN_S  # the word, not the held voice
    assert truncate.event["item_id"] == "item_talk"
    assert agent.session.duplex.stops == ["heard 'Stop' over the robot"]


def test_a_voice_held_over_the_robot_stops_it_after_barge_in_s(
    real_time_runtime: Runtime,
) -> None:
    rt = real_time_runtime
    rec = EventRecorder().attach(rt.events)
    talking = answer(audio=tone(4.0), item_id="item_talk")[:-1]
    with (
        ScriptedRealtimeServer({"response.create": [talking]}) as server,
        brain(rt, server) as agent,
    ):
        agent.session.duplex.barge.sustain_s = SUSTAIN_S
        rt.execute(cmd.Ask(text="tell me about your day"))
        rec.wait_for(SpeechStarted)
        pushed = time.monotonic()
        server.push(STARTED)  # no words: the server transcribes after the turn
        (truncate,) = server.wait_for("conversation.item.truncate")
        played = truncate.event["audio_end_ms"]
    assert SUSTAIN_S - 0.02 <= truncate.t - pushed <= SUSTAIN_S + 0.5
    assert agent.session.truncations == [("item_talk", played)]


def test_a_voice_while_the_robot_is_silent_is_answered_when_it_ends(runtime: Runtime) -> None:
    with ScriptedRealtimeServer() as server, brain(runtime, server):
        server.push(STARTED)
        time.sleep(0.1)
        assert not server.of("response.create")  # not while the person talks
        server.push(STOPPED)
        server.wait_for("response.create")


def test_with_anima_s_own_vad_a_short_voice_is_not_held_though_the_server_hears_it_on(
    real_time_runtime: Runtime,
) -> None:
    """The server's speech_stopped comes its silence_duration_ms after the voice: by it alone a
    0.3 s "mm-hm" would still be going at barge_in_s. anima's VAD on the microphone says it
    ended; a voice that goes on stops the robot."""
    rt = real_time_runtime
    rec = EventRecorder().attach(rt.events)
    rng = np.random.default_rng(0)
    quiet = [(30 * rng.standard_normal(512)).astype(np.int16) for _ in range(12)]
    loud = (8000 * np.sin(2 * np.pi * 220 * np.arange(512) / 16_000)).astype(np.int16)
    talking = answer(audio=tone(4.0), item_id="item_talk")[:-1]
    mic = PushSource()
    with ScriptedRealtimeServer({"response.create": [talking]}) as server:
        agent = RealtimeAgent(
            rt,
            robot_registry(rt),
            settings(server),
            rt.config.agent,
            key="sk-t",
            source=mic,
            echo_cancelled=True,
            barge_in_s=SUSTAIN_S,
            vad=EnergyVad(),
        )
        rt.attach_agent(agent)
        try:
            server.wait_for("session.update")
            for frame in quiet:
                mic.push(frame)  # the room: the VAD's noise floor
            rt.execute(cmd.Ask(text="tell me about your day"))
            rec.wait_for(SpeechStarted)
            server.push(STARTED)
            for frame in [loud] * 9 + quiet:  # 0.3 s of voice, then quiet
                mic.push(frame)
            time.sleep(SUSTAIN_S + 0.3)  # the server still hears it (no speech_stopped)
            assert not server.of("conversation.item.truncate")
            server.push(STOPPED, _heard("completed", transcript="Mm-hm."))
            time.sleep(0.1)
            server.push(STARTED)
            pushed = time.monotonic()
            for _ in range(40):  # a voice that goes on
                mic.push(loud)
                time.sleep(0.032)
                if server.of("conversation.item.truncate"):
                    break
            (truncate,) = server.wait_for("conversation.item.truncate")
        finally:
            rt.detach_agent()
    assert SUSTAIN_S - 0.02 <= truncate.t - pushed <= SUSTAIN_S + 0.5
    assert agent.session.duplex.stops == ["a voice over the robot for 0.3 s"]
