"""``anima bench mqtt --refusals N``: N unknown animation names flooded at QoS 0 as fast as the
publisher can, each refusal timed on the error topic; the loop's rate and its fewest frames in
any one second while the door works through them (see docs/mqtt.md, "Under a flood")."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from anima.bench.measure import percentile
from anima.testing.mqtt import MqttProbe

if TYPE_CHECKING:
    from anima.bench.timed_driver import TimedDriver
    from anima.frontdoors.mqtt.frontdoor import MqttFrontDoor
    from anima.runtime import Runtime


@dataclass(frozen=True, kw_only=True)
class RefusalFigures:
    sent: int  # unknown-animation messages published (QoS 0)
    seconds: float  # how long publishing took
    received: int  # refusals that arrived on the error topic
    p50_ms: float  # publish → refusal on the error topic
    p99_ms: float
    max_ms: float
    drained_s: float  # first publish → last refusal received
    loop_rate_hz: float  # engine ticks per second, first publish → last refusal
    loop_missed: int
    min_frames_per_s: int  # fewest frames the driver got in any whole second of that span


def refusal_flood(
    runtime: Runtime, door: MqttFrontDoor, driver: TimedDriver, pub: MqttProbe, count: int
) -> RefusalFigures:
    """``count`` unknown animation names published at once: each refusal timed."""
    topic = door.topics.control + "animation"
    errors = door.topics.feedback("error")
    with MqttProbe(pub.address, subscribe=errors, history=count + 1000) as watcher:
        sent: dict[str, float] = {}
        before = runtime.engine.stats()
        start = time.monotonic()
        for n in range(count):
            name = f"nosuch_{n}"
            sent[name] = time.monotonic()
            pub.publish(topic, name)
        published = time.monotonic()
        end = published + 60.0  # the last refusals may trail the flood
        while len(watcher.messages(errors)) < count and time.monotonic() < end:
            time.sleep(0.05)
        got = watcher.messages(errors)
        after = runtime.engine.stats()
    latencies = [
        (m.t - sent[name]) * 1e3 for m in got if (name := str(m.json()["payload"])) in sent
    ]
    last = max((m.t for m in got), default=published)
    arrivals, _ = driver.since(start, 0)
    arrivals = arrivals[arrivals <= last]
    seconds = int(last - start)
    per_second = [
        int(np.count_nonzero((arrivals >= start + k) & (arrivals < start + k + 1)))
        for k in range(seconds)
    ]
    span = after.elapsed_s - before.elapsed_s
    return RefusalFigures(
        sent=count,
        seconds=published - start,
        received=len(latencies),
        p50_ms=percentile(latencies, 50),
        p99_ms=percentile(latencies, 99),
        max_ms=max(latencies) if latencies else math.nan,
        drained_s=last - start,
        loop_rate_hz=(after.ticks - before.ticks) / span if span > 0 else 0.0,
        loop_missed=after.missed - before.missed,
        min_frames_per_s=min(per_second) if per_second else len(arrivals),
    )
