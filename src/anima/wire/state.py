"""The runtime's state snapshot, typed: what MQTT retains on ``…/agent/state``, what REST serves
at ``GET /api/state`` and streams on its WebSocket, what ``anima record`` writes, and what the
SDK reads back. Built in one place (:func:`anima.frontdoors.state.read_state`), turned into JSON
here (:meth:`RuntimeState.to_json`) and read back here (:meth:`RuntimeState.from_json`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from anima.events import ConversationPhase
from anima.wire.attention import AttentionSnapshot
from anima.wire.jsontypes import JsonObject


@dataclass(frozen=True, kw_only=True)
class LoopState:
    rate_hz: float  # ticks per second over the recent window
    period_error_p99_ms: float  # how late the ticks were, 99th percentile
    missed: int  # deadlines missed since start


@dataclass(frozen=True, kw_only=True)
class HumanoidState:
    """The linked humanoid's part (its last GetRobotState, read a few times a second)."""

    fsm: str  # the mode reached (Stop, Start, Zero, Stand, Walk, Run)
    motion: str  # the stand motion playing
    posture: tuple[float, float, float, float]  # pitch, roll, yaw (rad), height (m)
    velocity: tuple[float, float, float]  # x, y (m/s), yaw (rad/s)
    balance: bool  # dynamic balance on
    control_mode: int  # 0 traditional, 1 RL, -1 before the first feedback
    mode_enable_list: tuple[str, ...]  # what the controls may ask for now
    motion_enable_list: tuple[str, ...]
    error: str  # why the last state read failed, "" when it worked


@dataclass(frozen=True, kw_only=True)
class MeasuredState:
    """What the driver reads back from the robot, against what it was sent (a driver that
    measures: ``reachy_mini``); docs/reachy-mini.md."""

    age_ms: float  # how old the newest reading is
    lag_ms: float | None  # commanded → measured, the median of recent moves; None before one
    deviation: float  # |measured − commanded| at the worst channel (the body's units)
    worst: str  # that channel
    values: tuple[float | None, ...]  # per channel of the body, None where not measured


@dataclass(frozen=True, kw_only=True)
class RuntimeState:
    t: float  # the engine clock, seconds
    move: str | None  # the running primary move
    queued: int  # moves waiting behind it
    gaze_target: str | None  # the latched gaze posture
    looking: bool  # a position look-at is active
    speaking: bool  # an utterance plays or waits
    conversation: ConversationPhase | None  # the voice agent's phase; None without the agent
    shutdown: bool  # the robot was shut down (wake it first)
    estop: bool  # the emergency stop is latched
    driver_connected: bool  # the driver reaches the hardware (or the simulation)
    humanoid: HumanoidState | None  # when a humanoid is linked and its state was read
    loop: LoopState
    measured: MeasuredState | None = None  # when the driver reads the robot back
    attention: AttentionSnapshot | None = None  # people, and where it looks (camera or array)

    def to_json(self) -> JsonObject:
        """JSON-ready fields (without ``v``), in the documented order (docs/mqtt.md)."""
        fields = dataclasses.asdict(self)  # nested dataclasses become dicts, tuples stay
        fields["t"] = round(self.t, 3)
        loop = self.loop
        fields["loop"] = {
            "rate_hz": round(loop.rate_hz, 3),
            "period_error_p99_ms": round(loop.period_error_p99_ms, 3),
            "missed": loop.missed,
        }
        if self.measured is not None:
            m = self.measured
            fields["measured"] = {
                "age_ms": round(m.age_ms, 1),
                "lag_ms": None if m.lag_ms is None else round(m.lag_ms, 1),
                "deviation": round(m.deviation, 2),
                "worst": m.worst,
                "values": [None if v is None else round(v, 2) for v in m.values],
            }
        if self.attention is not None:
            fields["attention"] = self.attention.to_json()
        if self.humanoid is not None:
            fields["humanoid"] = {
                k: list(v) if isinstance(v, tuple) else v for k, v in fields["humanoid"].items()
            }
        return fields

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RuntimeState:
        """The snapshot from its JSON form; keys an older runtime left out take their
        neutral value, keys a newer one added are read past. KeyError without ``t``;
        ValueError or TypeError for a value of the wrong type."""
        loop = data.get("loop") or {}
        h = data.get("humanoid")
        humanoid = None
        if isinstance(h, Mapping):
            humanoid = HumanoidState(
                fsm=str(h.get("fsm", "")),
                motion=str(h.get("motion", "")),
                posture=cast(
                    "tuple[float, float, float, float]",
                    tuple(float(v) for v in h.get("posture", (0.0,) * 4)),
                ),
                velocity=cast(
                    "tuple[float, float, float]",
                    tuple(float(v) for v in h.get("velocity", (0.0,) * 3)),
                ),
                balance=bool(h.get("balance", False)),
                control_mode=int(h.get("control_mode", -1)),
                mode_enable_list=tuple(str(m) for m in h.get("mode_enable_list", ())),
                motion_enable_list=tuple(str(m) for m in h.get("motion_enable_list", ())),
                error=str(h.get("error", "")),
            )
        m = data.get("measured")
        measured = None
        if isinstance(m, Mapping):
            lag = m.get("lag_ms")
            measured = MeasuredState(
                age_ms=float(m.get("age_ms", 0.0)),
                lag_ms=None if lag is None else float(lag),
                deviation=float(m.get("deviation", 0.0)),
                worst=str(m.get("worst", "")),
                values=tuple(None if v is None else float(v) for v in m.get("values", ())),
            )
        a = data.get("attention")
        attention = AttentionSnapshot.from_json(a) if isinstance(a, Mapping) else None
        return cls(
            t=float(data["t"]),
            move=data.get("move"),
            queued=int(data.get("queued", 0)),
            gaze_target=data.get("gaze_target"),
            looking=bool(data.get("looking", False)),
            speaking=bool(data.get("speaking", False)),
            conversation=data.get("conversation"),
            shutdown=bool(data.get("shutdown", False)),
            estop=bool(data.get("estop", False)),
            driver_connected=bool(data.get("driver_connected", False)),
            humanoid=humanoid,
            loop=LoopState(
                rate_hz=float(loop.get("rate_hz", 0.0)),
                period_error_p99_ms=float(loop.get("period_error_p99_ms", 0.0)),
                missed=int(loop.get("missed", 0)),
            ),
            measured=measured,
            attention=attention,
        )
