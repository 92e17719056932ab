"""The realtime brain's pure parts: the wire's limits, the reconnect backoff, the session URL,
the tools, and its config's checks."""

from __future__ import annotations

import base64
import random

import pytest

from anima.agent.realtime import protocol as wire
from anima.agent.realtime.agent import session_url
from anima.agent.realtime.connection import backoff_s
from anima.config.planner import RealtimePlannerConfig
from anima.errors import ConfigError

pytestmark = pytest.mark.fast


def test_backoff_doubles_is_bounded_and_jittered() -> None:
    rng = random.Random(7)
    waits = [[backoff_s(n, 0.5, 8.0, rng) for n in range(1, 12)] for _ in range(50)]
    for run in waits:
        for n, wait in enumerate(run, start=1):
            ceiling = min(8.0, 0.5 * 2 ** (n - 1))
            assert ceiling / 2 <= wait <= ceiling
    assert len({run[3] for run in waits}) > 40  # jittered: clients do not come back together
    assert backoff_s(10_000, 0.5, 30.0, rng) <= 30.0  # no overflow however long it failed


def test_decode_refuses_what_is_not_an_event() -> None:
    assert wire.decode('{"type": "response.done"}') == {"type": "response.done"}
    for bad, why in (
        ('{"type": "resp', "not JSON"),
        (b"\xff\xfe", "not JSON"),
        ("[1, 2]", "not a JSON object but list"),
        ('{"no": "type"}', "no event type"),
        ('{"type": 3}', "no event type"),
        ("[" * 100_000 + "]" * 100_000, "nested too deep"),
    ):
        with pytest.raises(wire.WireError, match=why):
            wire.decode(bad)


def test_a_message_past_the_socket_limit_is_refused_unread() -> None:
    big = '{"type": "x", "pad": "' + "a" * wire.MAX_MESSAGE_BYTES + '"}'
    with pytest.raises(wire.WireError, match="at most 4194304"):
        wire.decode(big)


def test_audio_deltas_are_checked_and_bounded() -> None:
    pcm = bytes(range(10))
    delta = {"type": "response.output_audio.delta", "delta": base64.b64encode(pcm).decode()}
    assert wire.audio(delta) == pcm
    odd = {"delta": base64.b64encode(b"abc").decode()}
    assert wire.audio(odd) == b"ab"  # whole samples only
    with pytest.raises(wire.WireError, match="not base64"):
        wire.audio({"delta": "!!!!"})
    with pytest.raises(wire.WireError, match="without a base64 delta"):
        wire.audio({"delta": 5})
    huge = {"delta": "A" * (wire.MAX_AUDIO_DELTA_CHARS + 4)}
    with pytest.raises(wire.WireError, match="refused"):
        wire.audio(huge)


def test_the_session_url_carries_the_model_once() -> None:
    base = "wss://api.openai.com/v1/realtime"
    assert session_url(base, "gpt-realtime") == f"{base}?model=gpt-realtime"
    azure = "wss://r.openai.azure.com/openai/v1/realtime?model=my-deploy"
    assert session_url(azure, "gpt-realtime") == azure
    assert session_url("ws://h/x?a=1", "m b") == "ws://h/x?a=1&model=m%20b"


def test_the_config_refuses_bad_settings() -> None:
    assert RealtimePlannerConfig().key_env == "OPENAI_API_KEY"
    for kw, key in (
        ({"url": "https://api.openai.com/v1/realtime"}, "url"),
        ({"api_key_env": "ANIMA_KEY"}, "api_key_env"),
        ({"voice": ""}, "voice"),
        ({"stall_s": 0.0}, "stall_s"),
        ({"reconnect_s": 5.0, "reconnect_max_s": 1.0}, "reconnect_max_s"),
        ({"auth": "cookie"}, "auth"),
    ):
        with pytest.raises(ConfigError, match=key):
            RealtimePlannerConfig(**kw)  # type: ignore[arg-type]


def test_the_realtime_brain_is_no_text_planner() -> None:
    from anima.agent.planners import create_planner
    from anima.agent.vocabulary import builtin_registry
    from anima.config import AgentConfig

    with pytest.raises(ConfigError, match="realtime brain, not a text planner"):
        create_planner(AgentConfig(planner="openai_realtime"), builtin_registry())  # type: ignore[arg-type]
