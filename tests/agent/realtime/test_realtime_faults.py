"""The realtime brain against servers that misbehave (unreadable, unknown and huge messages, a
dropped socket, session.closed, a stall, audio far faster than it plays): each is skipped or
survived, the runtime still runs (the loop ticks, execute answers) and the client reconnects."""

from __future__ import annotations

import logging
import time

import pytest

from anima import commands as cmd
from anima.agent.realtime.agent import LOST_LINE
from anima.events import SpeechStarted
from anima.runtime import Runtime
from anima.testing.events import EventRecorder
from anima.testing.realtime_server import (
    Drop,
    Raw,
    ScriptedRealtimeServer,
    audio_delta,
    function_call,
    huge_delta,
)

from .conftest import (
    brain,
    outputs,
    still_running,
)

pytestmark = pytest.mark.integration


def test_hostile_messages_are_skipped_and_the_session_goes_on(
    runtime: Runtime, caplog: pytest.LogCaptureFixture
) -> None:
    hostile: list[object] = [
        {"type": "session.updated"},
        Raw('{"type": "response.cre'),  # truncated
        Raw(b"\xff\xfe\x00binary"),
        Raw("[1, 2, 3]"),
        {"type": "response.future_thing", "x": 1},
        {"type": "response.future_thing", "x": 2},
        {"no": "type"},
        function_call("look_at", {"x": 1.0, "y": 0.0, "z": 0.0}, call_id="after"),
    ]
    caplog.set_level(logging.INFO, logger="anima.agent.realtime")
    with (
        ScriptedRealtimeServer({"session.update": [hostile]}) as server,  # type: ignore[list-item]
        brain(runtime, server) as agent,
    ):
        server.wait_for("response.create")  # the call after them all was answered
        (out,) = outputs(server)
        assert out.event["item"]["call_id"] == "after"
        assert agent.connection.opened == 1  # no reconnect was needed
        assert agent.connection.skipped == 4  # truncated, binary, a list, no type
        still_running(runtime)
    unknown = [r for r in caplog.records if "response.future_thing" in r.getMessage()]
    assert len(unknown) == 1  # logged once per type


def test_a_dropped_socket_is_reconnected_and_the_robot_says_it_lost_it(
    runtime: Runtime, recorder: EventRecorder
) -> None:
    with (
        ScriptedRealtimeServer({"session.update": [[Drop()]]}) as server,
        brain(runtime, server) as agent,
    ):
        server.wait_for("session.update", 2)  # a new session on a new socket
        assert len(server.headers) == 2
        said = recorder.wait_for(SpeechStarted)
        assert said.text == LOST_LINE
        runtime.execute(cmd.Ask(text="are you back?"))
        asked = server.wait_for("conversation.item.create")[0]
        assert asked.connection == 2
        assert agent.connected
        still_running(runtime)
    assert len(recorder.of(lambda e: isinstance(e, SpeechStarted) and e.text == LOST_LINE)) == 1


def test_a_10_mb_delta_is_never_read_the_socket_is_closed_and_opened_again(
    runtime: Runtime, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="anima.agent.realtime")
    with (
        ScriptedRealtimeServer({"session.update": [[huge_delta(10.0)]]}) as server,
        brain(runtime, server) as agent,
    ):
        server.wait_for("session.update", 2)
        assert agent.connection.skipped == 0  # refused at its header, never parsed
        still_running(runtime)
    assert any("1009" in r.getMessage() for r in caplog.records)  # message too big


def test_session_closed_reconnects(runtime: Runtime) -> None:
    with ScriptedRealtimeServer() as server, brain(runtime, server):
        server.push({"type": "session.closed", "reason": "idle"})
        server.wait_for("session.update", 2)


def test_a_stalled_response_is_ended_and_the_next_one_can_start(runtime: Runtime) -> None:
    stalled: list[object] = [{"type": "response.created", "response": {"id": "r1"}}]
    with (
        ScriptedRealtimeServer({"response.create": [stalled]}) as server,  # type: ignore[list-item]
        brain(runtime, server, stall_s=0.3) as agent,
    ):
        runtime.execute(cmd.Ask(text="hello"))
        server.wait_for("response.create")
        deadline = time.monotonic() + 3.0
        while agent.session.response_active:
            assert time.monotonic() < deadline, "the stalled response was never ended"
            time.sleep(0.02)
        runtime.execute(cmd.Ask(text="hello again"))
        server.wait_for("response.create", 2)
        still_running(runtime)


def test_audio_far_ahead_of_playback_is_refused_once_and_the_session_goes_on(
    real_time_runtime: Runtime, caplog: pytest.LogCaptureFixture
) -> None:
    rt = real_time_runtime
    caplog.set_level(logging.WARNING, logger="anima.agent.realtime")
    block = bytes(2 * 24_000 * 25)  # 25 s of silence a delta: six are past the 120 s that wait
    flood = [audio_delta(block, item_id="item_flood") for _ in range(6)]
    after = function_call("look_at", {"x": 1.0, "y": 0.0, "z": 0.0}, call_id="after")
    with ScriptedRealtimeServer({"session.update": [[*flood, after]]}) as server, brain(rt, server):
        server.wait_for("response.create")  # the call after the flood was answered
        assert outputs(server)[0].event["item"]["call_id"] == "after"
        still_running(rt)
    refused = [r for r in caplog.records if "audio refused" in r.getMessage()]
    assert len(refused) == 1
    assert "at most 120 s may wait" in refused[0].getMessage()
