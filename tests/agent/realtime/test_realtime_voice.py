"""The realtime brain's audio both ways: the model's voice played as an utterance of the speech
service, barge-in and the emergency stop truncating at exactly what was played, the microphone
resampled to 24 kHz and not sent while the robot speaks without an echo canceller."""

from __future__ import annotations

import base64
import time

import numpy as np
import pytest

from anima import commands as cmd
from anima.events import ConversationChanged, SpeechEnded, SpeechStarted
from anima.listening.sources import PushSource
from anima.runtime import Runtime
from anima.testing.events import EventRecorder
from anima.testing.realtime_server import (
    ScriptedRealtimeServer,
    answer,
)

from .conftest import (
    brain,
    tone,
)

pytestmark = pytest.mark.integration


def test_the_models_audio_plays_as_one_utterance_of_the_speech_service(
    real_time_runtime: Runtime,
) -> None:
    rt = real_time_runtime
    rec = EventRecorder().attach(rt.events)
    reply = answer(audio=tone(0.3), transcript="Hello there.", item_id="item_hi")
    with ScriptedRealtimeServer({"response.create": [reply]}) as server, brain(rt, server):
        rt.execute(cmd.Ask(text="say hi"))
        started = rec.wait_for(SpeechStarted)
        ended = rec.wait_for(SpeechEnded)
        assert not server.of("conversation.item.truncate")  # nobody talked over it
    assert ended.utterance == started.utterance
    assert ended.reason == "done"
    assert 0.25 <= ended.t - started.t <= 1.0  # the 0.3 s it lasts, played on the real clock
    phases = [e.state for e in rec.of(ConversationChanged)]
    assert "speaking" in phases


def test_barge_in_cancels_the_response_and_truncates_at_exactly_what_was_played(
    real_time_runtime: Runtime,
) -> None:
    rt = real_time_runtime
    rec = EventRecorder().attach(rt.events)
    reply = answer(audio=tone(3.0), item_id="item_long")
    open_response = reply[:-1]  # no response.done: the model is still answering
    with (
        ScriptedRealtimeServer({"response.create": [open_response]}) as server,
        brain(rt, server) as agent,
    ):
        rt.execute(cmd.Ask(text="tell me a story"))
        started = rec.wait_for(SpeechStarted)
        time.sleep(0.4)
        server.push(
            {"type": "input_audio_buffer.speech_started", "audio_start_ms": 1000},
            {"type": "conversation.item.input_audio_transcription.delta", "delta": "Stop"},
        )  # a stop word over the robot: at once (test_realtime_duplex.py has the rules)
        (truncate,) = server.wait_for("conversation.item.truncate")
        (cancel,) = server.wait_for("response.cancel")
        ended = rec.wait_for(SpeechEnded)
        # a delta of the cut item already on its way stays silent
        server.push(answer(audio=tone(0.2), item_id="item_long")[1])
        rec.none_for(SpeechStarted, 0.2, since=rec.mark())
        assert rt.state().conversation in ("interrupted", "listening")
    (item, played) = agent.session.truncations[0]
    assert truncate.event == {
        "type": "conversation.item.truncate",
        "item_id": "item_long",
        "content_index": 0,
        "audio_end_ms": played,  # exactly what the stream's stop() returned
    }
    assert item == "item_long"
    assert cancel.t <= truncate.t
    assert ended.reason == "interrupted"
    heard_s = ended.t - started.t
    assert 0.3 <= played / 1000 <= 1.5
    assert abs(played / 1000 - heard_s) <= 0.1  # the sink's count against the clock's


def test_the_emergency_stop_cancels_the_response_and_truncates_where_the_voice_was_cut(
    real_time_runtime: Runtime,
) -> None:
    rt = real_time_runtime
    rec = EventRecorder().attach(rt.events)
    open_response = answer(audio=tone(3.0), item_id="item_e")[:-1]
    with (
        ScriptedRealtimeServer({"response.create": [open_response]}) as server,
        brain(rt, server) as agent,
    ):
        rt.execute(cmd.Ask(text="talk"))
        rec.wait_for(SpeechStarted)
        time.sleep(0.3)
        rt.execute(cmd.EmergencyStop())
        (truncate,) = server.wait_for("conversation.item.truncate")
        server.wait_for("response.cancel")
        ended = rec.wait_for(SpeechEnded)
        rt.execute(cmd.ResetEmergencyStop())
    assert ended.reason == "estop"
    played = truncate.event["audio_end_ms"]
    assert agent.session.truncations == [("item_e", played)]
    assert 0.2 <= played / 1000 <= 1.5


def test_the_microphone_is_resampled_to_24khz_and_appended(runtime: Runtime) -> None:
    source = PushSource()
    with ScriptedRealtimeServer() as server, brain(runtime, server, source) as agent:
        t = np.arange(16_000) / 16_000
        tone = (8000 * np.sin(2 * np.pi * 440 * t)).astype(np.int16)
        source.push(tone)  # 1 s at 16 kHz: 31 whole frames of 512
        appends = server.wait_for("input_audio_buffer.append", 31)
    pcm = b"".join(base64.b64decode(r.event["audio"]) for r in appends)
    got = np.frombuffer(pcm, dtype="<i2")
    sent = 31 * 512
    # 24 kHz: 1.5 × the samples, less the resampler's lag (16 input samples: 24 out, +1 rounding)
    assert 0 <= sent * 3 // 2 - len(got) <= 25
    spectrum = np.abs(np.fft.rfft(got.astype(np.float64)))
    assert abs(np.argmax(spectrum) * 24_000 / len(got) - 440) < 3  # the same tone
    assert agent.microphone.sent == 31


def test_without_an_echo_canceller_the_microphone_is_not_sent_while_the_robot_speaks(
    real_time_runtime: Runtime,
) -> None:
    rt = real_time_runtime
    source = PushSource()
    frame = np.zeros(512, dtype=np.int16)
    with ScriptedRealtimeServer() as server, brain(rt, server, source) as agent:
        rt.execute(cmd.Speak(text="I am saying something rather long for this test."))
        deadline = time.monotonic() + 5.0
        while not rt.speaking:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        for _ in range(10):
            source.push(frame)
        assert agent.microphone.gated == 10
        rt.execute(cmd.StopSpeaking())
        while rt.speaking:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        for _ in range(3):
            source.push(frame)
        server.wait_for("input_audio_buffer.append", 3)
    assert agent.microphone.gated == 10
    assert agent.microphone.sent == 3
