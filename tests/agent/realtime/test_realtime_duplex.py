"""Tier: integration (a real runtime on the real clock, the scripted server on 127.0.0.1).

The realtime brain's barge-in by anima's duplex rules, not the server's VAD alone: a
backchannel over the robot lets it go on, a stop word stops it at once, a voice held for
``listen.barge_in_s`` stops it then; a voice while the robot is silent is answered when it
ends (the server's VAD only reports: it neither cancels nor starts a response)."""

from __future__ import annotations

import time

import pytest

from anima import commands as cmd
from anima.events import SpeechStarted
from anima.runtime import Runtime
from anima.testing.events import EventRecorder
from anima.testing.realtime_server import ScriptedRealtimeServer, answer

from .conftest import brain, tone

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
