"""``anima bench mqtt``: command latency through a real broker, and a 1 kHz look-at flood.

**Latency** is publish → the first frame the driver receives that reflects the command. The
command is a ``look_at`` alternating left and right. A look-at changes the *target* of the
gaze offsets, which the engine follows with a critically damped filter: the first tick that
sees the new target steps the eyes' acceleration by ω²·dt²·Δ at once, while otherwise the
acceleration only drifts. So the frame that reflects a command is, among the frames the driver
got after its publish, the one whose change of acceleration (third difference of ``eyes_yaw``)
towards the new side stands out. The next command is published once this one was carried out
and 25–45 ms more have passed (random, so publishes fall anywhere in the 10 ms tick): each
command has its frames to itself. ``applied`` is publish → carried out by the door's command
thread, the part the broker and the door add before the tick.

**Flood**: ``look_at`` at 1 kHz for ``flood_seconds`` (a sweeping point, then a fixed last
one for 0.6 s): the loop's tick rate over the flood and the gaps between frames at the driver,
how many commands were coalesced rather than run, the process's RSS before and after, and how
long after the last publish head and eyes settled on the last point (within the gaze dead
zone).

**Refusals**: ``refusals`` messages (20,000 by default) on ``…/control/animation``, each with
a unique unknown name, published at QoS 0 as fast as the client can: how many refusals came
back on the error topic, publish → refusal latency (p50, p99, max), and the loop over the
flood — its tick rate, missed ticks, and the fewest frames the driver got in any one second
(issue 12 saw 37 through amqtt, with refusals 21–38 s late).

The broker is Debian's Mosquitto (started here on a free loopback port, with the config
``anima serve`` gives the Mosquitto it starts by default) or the embedded amqtt broker (in this
process, as ``anima serve`` runs it where no Mosquitto is installed); the publisher is a paho
client in this process too, so the figures include its cost.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass

import numpy as np

from anima.bench.doors.mqtt_refusals import RefusalFigures, refusal_flood
from anima.bench.measure import percentile, rss_mb
from anima.bench.timed_driver import TimedDriver
from anima.body import FloatArray, Role
from anima.config import AnimaConfig, BehaviourConfig, MqttConfig, SpeechConfig
from anima.errors import ConfigError
from anima.frontdoors.mqtt.broker import EmbeddedBroker, free_port
from anima.frontdoors.mqtt.frontdoor import MqttFrontDoor
from anima.runtime import Runtime
from anima.testing.mosquitto import Mosquitto, find_mosquitto
from anima.testing.mqtt import MqttProbe
from anima.wire.mqtt import BrokerAddress

BROKERS = ("mosquitto", "embedded")
LEFT, RIGHT = (1.0, 0.1, 0.0), (1.0, -0.1, 0.0)  # ±0.1 rad of yaw: mostly the eyes' share
LAST = (1.0, -0.35, 0.15)  # where the flood ends


@dataclass(frozen=True, kw_only=True)
class LatencyFigures:
    commands: int  # look_at commands published (after 10 to warm up)
    measured: int  # of which a reflecting frame was found (the others were lost or unclear)
    p50_ms: float  # publish → first driver frame that reflects it
    p99_ms: float
    max_ms: float
    mean_ms: float
    applied_p50_ms: float  # publish → carried out by the command thread (polled: +0.2 ms)
    applied_p99_ms: float


@dataclass(frozen=True, kw_only=True)
class FloodFigures:
    seconds: float  # how long look_at was published
    published: int
    publish_rate_hz: float  # what the publisher achieved
    received: int  # look_at messages the door got
    executed: int  # look_at commands carried out
    coalesced: int  # superseded by a newer point before they ran
    loop_rate_hz: float  # engine ticks per second during the flood
    loop_missed: int  # deadlines the engine skipped during the flood
    frame_gap_p99_ms: float  # between frames arriving at the driver during the flood
    frame_gap_max_ms: float
    rss_before_mb: float | None  # VmRSS of this process (None off Linux)
    rss_after_mb: float | None
    settle_ms: float | None  # last publish → head and eyes on the last point (None: not in 3 s)


@dataclass(frozen=True, kw_only=True)
class BrokerBench:
    broker: str  # "mosquitto" | "embedded"
    address: str
    latency: LatencyFigures
    flood: FloodFigures | None  # None when flood_seconds is 0
    refusals: RefusalFigures | None = None  # None when refusals is 0


@dataclass(frozen=True, kw_only=True)
class MqttBenchResult:
    brokers: list[BrokerBench]
    skipped: dict[str, str]  # broker → why it was not measured (e.g. mosquitto not installed)
    target_p99_ms: float = 12.0  # the target for the command latency


def _payload(point: tuple[float, float, float]) -> str:
    x, y, z = point
    return f'{{"x": {x:.4f}, "y": {y:.4f}, "z": {z:.4f}}}'


def _wait_executed(door: MqttFrontDoor, count: int, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while door.dispatcher.executed < count:
        if time.monotonic() > end:
            return False
        time.sleep(0.0002)
    return True


def reflecting_frame(times: FloatArray, eyes: FloatArray, side: int, after: float) -> float | None:
    """Arrival time of the first frame after ``after`` that reflects a new target on ``side``.

    That frame's change of acceleration towards ``side`` stands out: a new target steps it by
    ω²·dt²·Δ at once, while between targets it drifts by well under half of that.
    """
    if len(eyes) < 5:
        return None
    jerk = np.diff(eyes, n=3)  # jerk[j] belongs to frame j + 3
    candidates = np.flatnonzero(times[3:] > after)
    if len(candidates) == 0:
        return None
    toward = side * jerk[candidates]
    best = int(np.argmax(toward))
    rest = np.delete(toward, best)
    if toward[best] <= 0 or (len(rest) and toward[best] < 1.5 * float(np.max(rest))):
        return None
    return float(times[candidates[best] + 3])


def _latency(
    runtime: Runtime, door: MqttFrontDoor, driver: TimedDriver, pub: MqttProbe, commands: int
) -> LatencyFigures:
    topic = door.topics.control + "look_at"
    eyes = runtime.body.index("eyes_yaw")
    rng = random.Random(1)
    reflected: list[float] = []
    applied: list[float] = []
    published = 0
    side = 1
    while len(reflected) < commands and published < commands * 1.2 + 20:
        side = -side
        expected = door.dispatcher.executed + 1
        t_pub = time.monotonic()
        pub.publish(topic, _payload(LEFT if side > 0 else RIGHT))
        published += 1
        if not _wait_executed(door, expected, 1.0):
            continue
        t_applied = time.monotonic()
        # at least two ticks before the next command, so each has its frames to itself;
        # random, so publishes fall anywhere in the tick
        time.sleep(rng.uniform(0.025, 0.045))
        if published <= 10:
            continue  # warming up
        times, values = driver.since(t_pub - 0.035, eyes)  # with three frames before
        t_frame = reflecting_frame(times, values, side, t_pub)
        if t_frame is None:
            continue
        reflected.append((t_frame - t_pub) * 1e3)
        applied.append((t_applied - t_pub) * 1e3)
    return LatencyFigures(
        commands=published - 10,
        measured=len(reflected),
        p50_ms=percentile(reflected, 50),
        p99_ms=percentile(reflected, 99),
        max_ms=max(reflected) if reflected else math.nan,
        mean_ms=float(np.mean(reflected)) if reflected else math.nan,
        applied_p50_ms=percentile(applied, 50),
        applied_p99_ms=percentile(applied, 99),
    )


def _gaze_error(runtime: Runtime, point: tuple[float, float, float]) -> tuple[float, float]:
    """|yaw|, |pitch| (radians) between where head + eyes point now and ``point``.

    The follower stops within its dead zone of a still point; breathing adds to the pitch.
    """
    frame = runtime.engine.last_frame
    body = runtime.body
    angles = {"yaw": 0.0, "pitch": 0.0}
    for role, axis in (
        (Role.NECK_YAW, "yaw"),
        (Role.EYES_YAW, "yaw"),
        (Role.NECK_PITCH, "pitch"),
        (Role.EYES_PITCH, "pitch"),
    ):
        index = body.role_index(role)
        cal = None if index is None else body.channels[index].calibration
        if index is not None and cal is not None:
            angles[axis] += cal.to_radians(float(frame[index]))
    yaw, pitch = runtime.behaviour.gaze.kinematics.direction(*point)
    return abs(angles["yaw"] - yaw), abs(angles["pitch"] - pitch)


def _sweep(t: float) -> tuple[float, float, float]:
    return (1.0, 0.5 * math.sin(2 * math.pi * t / 1.3), 0.2 * math.sin(2 * math.pi * t / 0.7))


def _flood(
    runtime: Runtime, door: MqttFrontDoor, driver: TimedDriver, pub: MqttProbe, seconds: float
) -> FloodFigures:
    topic = door.topics.control + "look_at"
    hz = 1000.0
    n = max(1, int(seconds * hz))
    hold = min(n, int(0.6 * hz))  # the point stops for the last 0.6 s
    received, executed, coalesced = (
        door.received,
        door.dispatcher.executed,
        door.dispatcher.coalesced,
    )
    rss_before = rss_mb()
    before = runtime.engine.stats()
    start = time.monotonic()
    for k in range(n):
        pause = start + k / hz - time.monotonic()
        if pause > 0:
            time.sleep(pause)
        pub.publish(topic, _payload(LAST if k >= n - hold else _sweep(k / hz)))
    last = time.monotonic()
    after = runtime.engine.stats()
    arrivals, _ = driver.since(start, runtime.body.index("eyes_yaw"))
    gaps = np.diff(arrivals[arrivals <= last]) * 1e3
    settle: float | None = None
    dead_zone = runtime.config.behaviour.gaze_dead_zone_rad
    while time.monotonic() - last < 3.0:
        if _gaze_error(runtime, LAST)[0] < dead_zone + 0.005:
            settle = (time.monotonic() - last) * 1e3
            break
        time.sleep(0.002)
    end = time.monotonic() + 1.0  # the last point may still wait in the command slot
    while (
        door.dispatcher.executed - executed + door.dispatcher.coalesced - coalesced < n
        and time.monotonic() < end
    ):
        time.sleep(0.001)
    ticks = after.ticks - before.ticks
    span = after.elapsed_s - before.elapsed_s
    return FloodFigures(
        seconds=seconds,
        published=n,
        publish_rate_hz=(n - 1) / (last - start) if n > 1 and last > start else 0.0,
        received=door.received - received,
        executed=door.dispatcher.executed - executed,
        coalesced=door.dispatcher.coalesced - coalesced,
        loop_rate_hz=ticks / span if span > 0 else 0.0,
        loop_missed=after.missed - before.missed,
        frame_gap_p99_ms=percentile(list(gaps), 99),
        frame_gap_max_ms=float(gaps.max()) if len(gaps) else math.nan,
        rss_before_mb=rss_before,
        rss_after_mb=rss_mb(),
        settle_ms=settle,
    )


def _bench_one(
    kind: str, address: BrokerAddress, commands: int, flood_seconds: float, refusals: int = 0
) -> BrokerBench:
    prefix = f"anima-bench-{kind}"
    config = AnimaConfig(
        mqtt=MqttConfig(prefix=prefix),
        behaviour=BehaviourConfig(full_blink_every_s=3600.0),  # no full blink moving the eyes
        speech=SpeechConfig(enabled=False),  # no voice loading while the loop is timed
    )
    # the floods' frames: the look-at one, and up to a minute of refusals
    driver = TimedDriver(capacity=int(flood_seconds * 120) + (7200 if refusals else 0) + 1000)
    runtime = Runtime(config, driver=driver)
    door = MqttFrontDoor(runtime, config.mqtt, address)
    runtime.attach(door)
    with MqttProbe(address) as pub:
        runtime.start()
        try:
            if not door.wait_connected(5.0):
                raise ConfigError(f"bench: the MQTT door did not connect to {address}")
            runtime.wait_first_tick()
            latency = _latency(runtime, door, driver, pub, commands)
            flood = _flood(runtime, door, driver, pub, flood_seconds) if flood_seconds > 0 else None
            refused = refusal_flood(runtime, door, driver, pub, refusals) if refusals > 0 else None
        finally:
            runtime.stop(ease=False)
    return BrokerBench(
        broker=kind, address=str(address), latency=latency, flood=flood, refusals=refused
    )


def run_mqtt_bench(
    broker: str = "both", commands: int = 1000, flood_seconds: float = 10.0, refusals: int = 20_000
) -> MqttBenchResult:
    """Latency, the look-at flood and the refusal flood on ``broker``: mosquitto, embedded, both.

    With ``both``, a missing Mosquitto is reported in ``skipped``; asked for by name, it raises
    :class:`~anima.testing.mosquitto.MosquittoNotFoundError`.
    """
    if broker not in (*BROKERS, "both"):
        raise ConfigError(f"bench mqtt: broker must be mosquitto, embedded or both, not {broker!r}")
    if commands < 1:
        raise ConfigError(f"bench mqtt: commands must be ≥ 1, got {commands}")
    if not (math.isfinite(flood_seconds) and flood_seconds >= 0):
        raise ConfigError(f"bench mqtt: flood_seconds must be ≥ 0, got {flood_seconds}")
    if refusals < 0:
        raise ConfigError(f"bench mqtt: refusals must be ≥ 0, got {refusals}")
    kinds = BROKERS if broker == "both" else (broker,)
    results: list[BrokerBench] = []
    skipped: dict[str, str] = {}
    for kind in kinds:
        if kind == "mosquitto":
            if broker == "both" and find_mosquitto() is None:
                skipped[kind] = "mosquitto is not installed (Debian: apt-get install mosquitto)"
                continue
            with Mosquitto() as mosquitto:
                results.append(
                    _bench_one(kind, mosquitto.address, commands, flood_seconds, refusals)
                )
        else:
            embedded = EmbeddedBroker(free_port())
            embedded.start()
            try:
                results.append(
                    _bench_one(kind, embedded.address, commands, flood_seconds, refusals)
                )
            finally:
                embedded.stop()
    return MqttBenchResult(brokers=results, skipped=skipped)
