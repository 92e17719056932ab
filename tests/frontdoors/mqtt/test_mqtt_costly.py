"""``ask`` over MQTT is rate-limited (issue 30 item 9: 200 in 10 s made 50 LLM requests): a
burst, then a steady rate, and each one beyond is refused on the error topic saying so."""

from __future__ import annotations

import pytest

from anima.frontdoors.mqtt.costly import CostlyLimiter, Limit
from anima.testing import FakeClock
from anima.testing.mqtt import MqttProbe
from anima.wire.topics import Topics

from .conftest import wait_until

pytestmark = pytest.mark.integration

FLOOD = 60


def test_a_burst_then_a_steady_rate_on_a_fake_clock() -> None:
    clock = FakeClock()
    limiter = CostlyLimiter({"ask": Limit(burst=3, rate_per_s=0.5)}, clock=clock.now)
    assert [limiter.refusal("ask") for _ in range(3)] == [None, None, None]
    reason = limiter.refusal("ask")
    assert reason is not None
    assert "too many ask requests (at most 3 at once, then 0.5 a second on MQTT)" in reason
    clock.advance(1.9)
    assert limiter.refusal("ask") is not None  # 0.95 of a token
    clock.advance(0.1)
    assert limiter.refusal("ask") is None
    assert limiter.refusal("speak") is None  # not a costly leaf
    assert limiter.refused == 2


def test_an_ask_flood_is_refused_beyond_the_burst(
    robot: object, probe: MqttProbe, topics: Topics
) -> None:
    error = topics.feedback("error")
    mark = probe.mark()
    for i in range(FLOOD):
        probe.publish(topics.control + "ask", f"wave please {i}", qos=1)

    def answered() -> int:
        return len(probe.messages(error, since=mark))

    # no agent here: what passes the limit is refused by the runtime, so every ask is answered
    wait_until(lambda: answered() >= FLOOD, 5, f"all {FLOOD} asks answered")
    reasons = [m.json()["reason"] for m in probe.messages(error, since=mark)]
    limited = [r for r in reasons if "too many ask requests" in r]
    assert FLOOD - 7 <= len(limited) <= FLOOD - 5  # the burst of 5 (and a refill) got through
