"""``anima bench hostile``: the loop's deadlines while everything is on and under attack.

``anima serve`` runs as a subprocess, as a user runs it, with every part on: the MQTT door on a
real Mosquitto (started here on a free loopback port), the dashboard and REST API, the simulated
Adam humanoid over gRPC, the voice agent whose planner is an OpenAI-compatible server played
here (:class:`anima.testing.llm.ScriptedOpenAIServer`) that answers every request with a
``reply_bytes`` reply, speech (the configured engines, audio to the null sink), and
``--record`` writing every frame the loop sends.

Then, from this process, for ``flood_seconds`` or ``flood_messages`` (whichever ends first), a
paho client publishes as fast as it can, round robin:

- ``…/control/animation`` with a unique unknown name: each is refused on the error topic, and
  the time from its publish to its refusal is a **refusal latency**;
- ``…/control/look_at`` with a valid point (a stream the door coalesces);
- ``…/control/look_at`` and ``…/control/humanoid/posture`` with a 400-digit number (refusals);
- ``asks`` times, evenly spread, ``…/control/ask`` ("wave"): the planner then sends its huge
  reply (by default just under the planner's 1 MB cap, so it is read, parsed and bounded).

After the flood (and a settling pause; then the turns it started are waited for, and its
refusals, a late one at most ``settle_s`` more), an ``estop`` must still reach the runtime and a
``reset`` release it. The recording gives the loop's figures over the whole attack: the
**largest gap** between frames as the driver got them (their ``sent_at``) and the **missed
ticks** (deadlines skipped, from the frames' nominal times). RSS is the server's, from /proc,
before the attack and after it settled.
"""

from __future__ import annotations

import itertools
import json
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from anima.bench.measure import percentile, rss_mb
from anima.testing.llm import Scripted, ScriptedOpenAIServer
from anima.testing.mosquitto import Mosquitto
from anima.testing.mqtt import Message, MqttProbe
from anima.testing.serve import ServeProcess
from anima.wire.mqtt import BrokerAddress

PREFIX = "hostile"
PERIOD_S = 0.01
ENVELOPE = 256  # bytes of a huge reply that are not its response
HUGE = "1" * 400  # a number no float can hold: item 1 of issue 12 made paho's thread die on it


@dataclass(frozen=True, kw_only=True)
class HostileBenchResult:
    flood_seconds: float  # how long the flood was published
    published: int  # messages published
    publish_rate_hz: float
    refusals_sent: int  # unknown-animation messages (each should be refused)
    refusals_received: int  # of which a refusal arrived on the error topic
    refusal_p50_ms: float  # publish → refusal on the error topic
    refusal_p99_ms: float
    refusal_max_ms: float
    errors_received: int  # every message on the error topic during the flood
    asks: int  # requests sent to the agent
    planner_requests: int  # requests the planner server answered with its huge reply
    reply_bytes: int  # the size of each reply
    turns_spoken: int  # agent turns that ended with the robot speaking (its reply, bounded, or
    # why it could not), a start_speak on …/agent/feedback after each ask
    estop_after_flood: bool  # an estop published after the flood was applied (state estop)
    estop_behind_burst: int  # messages of a second burst published right before that estop
    estop_latency_ms: float  # estop publish → its notice on …/feedback/notice (nan: none in 60 s)
    reset_after_flood: bool  # and the reset released it
    frames: int  # frames sent during the attack window
    frame_gap_max_ms: float  # largest gap between frames as the driver got them
    frame_gaps_over_2_periods: int  # gaps longer than 20 ms
    worst_gaps: list[tuple[float, float]]  # the 5 largest: (s after the flood started, ms)
    missed_ticks: int  # deadlines skipped during the attack (from the frames' nominal times)
    rss_before_mb: float  # the server's VmRSS before the attack
    rss_after_mb: float  # and after it settled
    exit_code: int  # anima serve's, after SIGTERM (0: clean)


def _config(folder: Path, broker: BrokerAddress, planner_url: str) -> Path:
    path = folder / "anima.yaml"
    config = {
        "mqtt": {"broker": str(broker), "prefix": PREFIX},
        "web": {"port": 0},  # the kernel's choice, taken at bind: the bench never calls it
        "humanoid": {"type": "sim", "sim_port": 0},
        "agent": {
            "planner": {
                "type": "openai",
                "base_url": planner_url,
                "mode": "json",
                "timeout_s": 10.0,
            },
            "audio_in": "none",
        },
        "speech": {"audio_out": "null"},
    }
    path.write_text(json.dumps(config))  # JSON is YAML
    return path


@dataclass(frozen=True)
class _Frames:
    count: int
    gap_max_ms: float
    over_2_periods: int
    missed: int
    worst: list[tuple[float, float]]


def _frames(record: Path, start: float, end: float) -> _Frames:
    """The frames whose ``sent_at`` is in [start, end], and their gaps."""
    sent: list[float] = []
    nominal: list[float] = []
    with record.open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if row.get("type") != "state":
                continue
            if start <= row["sent_at"] <= end:
                sent.append(row["sent_at"])
                nominal.append(row["t"])
    gaps = [(a - start, 1000.0 * (b - a)) for a, b in itertools.pairwise(sent)]
    missed = sum(round((b - a) / PERIOD_S) - 1 for a, b in itertools.pairwise(nominal))
    return _Frames(
        count=len(sent),
        gap_max_ms=max((g for _, g in gaps), default=0.0),
        over_2_periods=sum(1 for _, g in gaps if g > 2000 * PERIOD_S),
        missed=missed,
        worst=[(round(at, 3), round(g, 1)) for at, g in sorted(gaps, key=lambda x: -x[1])[:5]],
    )


TOPICS = (
    "feedback/error",
    "feedback/start_speak",
    "feedback/notice",
    "state",
    "status",
)  # what the bench hears


@dataclass
class _Flood:
    published: dict[str, float]  # unknown animation name → its publish time (monotonic)
    messages: int = 0
    asks: int = 0
    refusable: int = 0  # messages each answered on the error topic (all but look_at and asks)
    seconds: float = 0.0


def _flood(probe: MqttProbe, seconds: float, count: int, ask_every: int) -> _Flood:
    """Publish ``count`` messages (or for ``seconds``) as fast as the client can."""
    control = f"{PREFIX}/agent/control/"
    flood = _Flood(published={})
    start = time.monotonic()
    n = 0
    while n < count and time.monotonic() - start < seconds:
        kind = n % 4
        if n % ask_every == ask_every // 2:
            probe.publish(control + "ask", "wave")
            flood.asks += 1
            kind = -1  # neither refused nor coalesced
        elif kind == 0:
            name = f"nosuch_{n}"
            flood.published[name] = time.monotonic()
            probe.publish(control + "animation", name)
        elif kind == 1:
            y = 0.3 * ((n // 4) % 20 - 10) / 10
            probe.publish(control + "look_at", json.dumps({"x": 1.0, "y": y, "z": 0.0}))
        elif kind == 2:
            probe.publish(control + "look_at", f'{{"x":{HUGE},"y":0,"z":0}}')
        else:
            posture = f'{{"pitch":{HUGE},"roll":0,"yaw":0,"height":0}}'
            probe.publish(control + "humanoid/posture", posture)
        flood.refusable += kind in (0, 2, 3)
        n += 1
    flood.messages = n
    flood.seconds = time.monotonic() - start
    return flood


def _refusal_latencies(errors: list[Message], published: dict[str, float]) -> list[float]:
    """Publish → refusal (ms) of each unknown name whose refusal arrived."""
    latencies = []
    for message in errors:
        try:
            excerpt = message.json().get("payload", "")
        except ValueError:
            continue
        sent_at = published.get(excerpt)
        if sent_at is not None:
            latencies.append(1000.0 * (message.t - sent_at))
    return latencies


def run_hostile_bench(
    *,
    flood_seconds: float = 10.0,
    flood_messages: int = 20_000,
    reply_bytes: int = 1_000_000,
    asks: int = 10,
    settle_s: float = 3.0,
) -> HostileBenchResult:
    ask_every = max(2, flood_messages // asks)  # the asks spread evenly over the flood
    with (
        tempfile.TemporaryDirectory(prefix="anima-bench-hostile-") as tmp,
        Mosquitto() as broker,
        ScriptedOpenAIServer() as planner,
    ):
        folder = Path(tmp)
        record = folder / "frames.jsonl"
        # the reply's JSON envelope is ~215 bytes: the whole body is then just under reply_bytes
        # (by default the planner's 1 MB cap, so it is read, parsed and its response bounded)
        reply = Scripted.huge(reply_bytes - ENVELOPE)
        planner.push(*[reply for _ in range(asks + 2)])
        config = _config(folder, broker.address, planner.base_url)
        server = ServeProcess(
            ["--config", str(config), "--agent", "--record", str(record)],
            env={"XDG_RUNTIME_DIR": str(folder)},
        )
        control = f"{PREFIX}/agent/control/"
        try:
            server.wait_for("anima ready", 60.0)
            probe = MqttProbe(broker.address, subscribe=[f"{PREFIX}/agent/{t}" for t in TOPICS])
            probe.connect()
            probe.wait_for(f"{PREFIX}/agent/status", where=lambda m: m.text() == "online")
            time.sleep(2.0)  # past the start's own work (voices loading)
            rss_before = rss_mb(server.pid)
            attack_start = time.monotonic()
            mark = probe.mark()
            flood = _flood(probe, flood_seconds, flood_messages, ask_every)
            time.sleep(settle_s)
            # every turn the flood started ends with the robot speaking
            spoken = _wait_count(probe, f"{PREFIX}/agent/feedback/start_speak", mark, flood.asks)
            # and its refusals: a late one gets settle_s more (those that never come are lost)
            error_topic = f"{PREFIX}/agent/feedback/error"
            _wait_count(probe, error_topic, mark, flood.refusable, timeout=settle_s)
            errors = probe.messages(error_topic, since=mark)
            # a second burst, with an estop right behind it: how long the stop waits
            burst = _flood(probe, flood_seconds, flood_messages // 4, flood_messages)
            before = probe.mark()
            sent = time.monotonic()
            probe.publish(control + "estop", "", qos=1)
            estop_ms = _wait_notice(probe, before, "emergency stop:", sent)
            estop = _wait_state(probe, before, estop=True)
            time.sleep(settle_s)
            before = probe.mark()
            probe.publish(control + "reset", "", qos=1)
            reset = _wait_state(probe, before, estop=False)
            attack_end = time.monotonic()
            rss_after = rss_mb(server.pid)
            probe.close()
        finally:
            code = server.stop()
        latencies = _refusal_latencies(errors, flood.published)
        frames = _frames(record, attack_start, attack_end)
        return HostileBenchResult(
            flood_seconds=flood.seconds,
            published=flood.messages,
            publish_rate_hz=flood.messages / flood.seconds if flood.seconds > 0 else 0.0,
            refusals_sent=len(flood.published),
            refusals_received=len(latencies),
            refusal_p50_ms=percentile(latencies, 50),
            refusal_p99_ms=percentile(latencies, 99),
            refusal_max_ms=max(latencies, default=float("nan")),
            errors_received=len(errors),
            asks=flood.asks,
            planner_requests=len(planner.requests),
            reply_bytes=reply_bytes,
            turns_spoken=spoken,
            estop_after_flood=estop,
            estop_behind_burst=burst.messages,
            estop_latency_ms=estop_ms,
            reset_after_flood=reset,
            frames=frames.count,
            frame_gap_max_ms=frames.gap_max_ms,
            frame_gaps_over_2_periods=frames.over_2_periods,
            worst_gaps=frames.worst,
            missed_ticks=frames.missed,
            rss_before_mb=rss_before,
            rss_after_mb=rss_after,
            exit_code=code,
        )


def _wait_state(probe: MqttProbe, since: int, *, estop: bool, timeout: float = 10.0) -> bool:
    """True once a retained state after ``since`` reports ``estop``."""
    try:
        probe.wait_for(
            f"{PREFIX}/agent/state",
            since=since,
            timeout=timeout,
            where=lambda m: m.json().get("estop") is estop,
        )
    except TimeoutError:
        return False
    return True


def _wait_notice(probe: MqttProbe, since: int, text: str, sent: float) -> float:
    """Milliseconds from ``sent`` to the first notice after ``since`` containing ``text``."""
    try:
        notice = probe.wait_for(
            f"{PREFIX}/agent/feedback/notice",
            since=since,
            timeout=60.0,
            where=lambda m: text in m.json().get("message", ""),
        )
    except TimeoutError:
        return float("nan")
    return 1000.0 * (notice.t - sent)


def _wait_count(probe: MqttProbe, topic: str, since: int, count: int, timeout: float = 30.0) -> int:
    """How many messages on ``topic`` arrived after ``since``, waiting for ``count`` of them at
    most ``timeout`` seconds."""
    end = time.monotonic() + timeout
    while len(probe.messages(topic, since=since)) < count and time.monotonic() < end:
        time.sleep(0.1)
    return len(probe.messages(topic, since=since))
