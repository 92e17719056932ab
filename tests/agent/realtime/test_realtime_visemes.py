"""The server's visemes (Hugging Face speech-to-speech's batch, Azure's one-per-event delta)
drive the lips of the model's voice stream, at their times from the item's first sample."""

from __future__ import annotations

import time
from typing import Any

import pytest

from anima import commands as cmd
from anima.runtime import Runtime
from anima.speech.stream import Stream
from anima.speech.visemes import LIPS
from anima.testing.realtime_server import ScriptedRealtimeServer, audio_delta

from .conftest import brain, tone

pytestmark = pytest.mark.integration


def shape(cls: str) -> tuple[float, float, float]:
    return LIPS[cls]


def lips_at(stream: Stream, ms: int) -> tuple[float, float, float]:
    """The stream's lip track (what the player shows) ``ms`` into its audio."""
    return stream.playback.lips.at(ms * stream.rate // 1000)


def response(rid: str, *events: dict[str, Any]) -> list[dict[str, Any]]:
    """A whole response of ``events``: created, the events, done."""
    created = {"type": "response.created", "response": {"id": rid, "status": "in_progress"}}
    return [created, *events, {"type": "response.done", "response": {"id": rid}}]


def played(rt: Runtime, reply: list[dict[str, Any]], item: str, marks: int) -> Stream:
    """The voice stream of ``item`` once the server sent ``reply`` to a request and ``marks``
    marks reached the streams (exactly those)."""
    with (
        ScriptedRealtimeServer({"response.create": [reply]}) as server,
        brain(rt, server) as agent,
    ):
        rt.execute(cmd.Ask(text="say something"))
        deadline = time.monotonic() + 5.0
        session = agent.session
        while not (session.visemes.handed >= marks and session.voice_out.item == item):
            assert time.monotonic() < deadline, f"{session.visemes.handed} marks handed"
            time.sleep(0.01)
        assert session.visemes.handed == marks
        stream = session.voice_out.stream
        assert isinstance(stream, Stream)
        return stream


def test_hf_visemes_sent_before_their_audio_drive_the_lips_at_their_times(
    real_time_runtime: Runtime,
) -> None:
    hf: dict[str, Any] = {
        "type": "speech_to_speech.output_audio.visemes",
        "event_id": "event_1",
        "response_id": "resp_v",
        "item_id": "item_v",
        "output_index": 0,
        "content_index": 0,
        "visemes": [
            {"viseme": 21, "start_s": 0.0, "end_s": 0.1},  # p b m
            {"viseme": 2, "start_s": 0.1, "end_s": 0.3},  # a
            {"viseme": 7, "start_s": 0.3, "end_s": 0.5},  # u w
            {"viseme": "x", "start_s": 0.5},  # not a number: skipped
        ],
    }
    reply = response(
        "resp_v",
        hf,  # before the audio, as the server sends them
        audio_delta(tone(0.6), item_id="item_v", response_id="resp_v"),
    )
    stream = played(real_time_runtime, reply, "item_v", 3)
    assert lips_at(stream, 50) == pytest.approx(shape("PP"), abs=1e-6)
    assert lips_at(stream, 200) == pytest.approx(shape("aa"), abs=1e-6)
    assert lips_at(stream, 400) == pytest.approx(shape("U"), abs=1e-6)


def test_azure_viseme_deltas_are_timed_from_their_own_items_first_sample(
    real_time_runtime: Runtime,
) -> None:
    def viseme(item: str, ms: int, vid: int) -> dict[str, Any]:
        return {
            "type": "response.animation_viseme.delta",
            "event_id": f"ev_{item}_{ms}",
            "response_id": "resp_az",
            "item_id": item,
            "output_index": 0,
            "content_index": 0,
            "audio_offset_ms": ms,  # from the start of the response's audio
            "viseme_id": vid,
        }

    reply = response(
        "resp_az",
        audio_delta(tone(0.5), item_id="item_a", response_id="resp_az"),
        viseme("item_a", 0, 0),  # its stream plays: handed at once
        viseme("item_a", 100, 2),
        viseme("item_b", 600, 6),  # 100 ms into item_b, which starts after item_a's 500 ms
        viseme("item_b", 800, 21),  # 300 ms into item_b
        audio_delta(tone(0.5), item_id="item_b", response_id="resp_az"),
    )
    stream = played(real_time_runtime, reply, "item_b", 4)
    assert lips_at(stream, 40) == pytest.approx((0.0, 0.0, 0.0), abs=1e-6)  # none yet
    assert lips_at(stream, 200) == pytest.approx(shape("I"), abs=1e-6)
    assert lips_at(stream, 400) == pytest.approx(shape("PP"), abs=1e-6)
