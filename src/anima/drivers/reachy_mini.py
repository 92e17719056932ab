"""Reachy Mini through Pollen's own SDK and daemon (``driver.type: reachy_mini``).

Each tick's frame (the Reachy body's units: 128 the centre, degrees and millimetres) becomes
one target of the seed's single control point: a head pose (a 4×4 matrix from x, y, z and
roll, pitch, yaw), two antenna angles and the body's yaw, in metres and radians. ``send`` is
called by the motion loop at 100 Hz and never waits on the network: it keeps the newest frame
(clamped to the SDK's limits, which it returns as what is sent), and the driver's own thread
hands the newest one to the daemon at ``driver.rate_hz`` (50 by default: the daemon's own
rate; faster floods it). The thread also reads back what the daemon reports (the measured head
pose and antennas) for the state.

States, as the serial driver's: **closed** before ``connect()`` (``send`` raises
:class:`~anima.errors.DriverNotConnectedError`); **linked**; **lost** (the daemon went away,
or restarted): ``is_connected`` is False, frames are dropped, and the thread makes a new link
with backoff until the daemon answers again; the motion engine then ramps from the last frame
the daemon took. **stale**: the link is up but the daemon's newest reading is older than
``stale_s`` (1 s; it reports at 50 Hz) — a hung daemon (SIGSTOP, a stuck process) keeps its
socket open and answers nothing: ``is_connected`` is False (the engine stops sending, the health
says ``not connected: no reading from … for 1.2 s``), a WARNING says so once, and the thread
keeps reading, so the first fresh reading links it again (an INFO line). The SDK is imported
only by :class:`~anima.drivers.reachy_link.SdkLink`,
when the driver connects.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from anima.body import Body, FloatArray
from anima.drivers.base import Frame, LinkCounters
from anima.drivers.feedback import Feedback, SentHistory
from anima.errors import DriverNotConnectedError

log = logging.getLogger(__name__)

CHANNELS = (
    "head_x",
    "head_y",
    "head_z",
    "head_roll",
    "head_pitch",
    "head_yaw",
    "antenna_right",
    "antenna_left",
    "body_yaw",
)  # fmt: skip  (the Reachy body's channels: each must be there)
CENTRE = 128.0
DEG = math.pi / 180.0
# head yaw − body yaw, degrees: the daemon turns the body to keep within it (measured, 1.13)
TWIST = 65.0


@dataclass(frozen=True)
class Target:
    """One target in the SDK's terms."""

    head: FloatArray  # 4×4 pose, metres
    antennas: tuple[float, float]  # right, left, radians
    body_yaw: float  # radians


@dataclass(frozen=True)
class Measured:
    """What the daemon reports, read back by the driver's thread."""

    t: float  # time.monotonic() of the read
    head: FloatArray  # 4×4 pose, metres
    antennas: tuple[float, float]  # right, left, radians
    body_yaw: float | None = None  # radians (the first head joint), when the link reports it


class ReachyLink(Protocol):
    """What the driver needs of a Reachy Mini (the SDK's client, or a test's fake)."""

    def set_target(self, target: Target) -> None: ...

    def read(self) -> Measured | None: ...

    def close(self) -> None: ...


def pose(xyz: tuple[float, float, float], rpy: tuple[float, float, float]) -> FloatArray:
    """The 4×4 pose of a translation (m) and extrinsic roll, pitch, yaw (rad) about x, y, z
    (R = Rz(yaw)·Ry(pitch)·Rx(roll), as the SDK's ``create_head_pose``)."""
    roll, pitch, yaw = rpy
    cr, sr, cp, sp, cy, sy = (
        math.cos(roll), math.sin(roll), math.cos(pitch), math.sin(pitch),
        math.cos(yaw), math.sin(yaw),
    )  # fmt: skip
    m = np.eye(4)
    m[:3, :3] = [
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ]
    m[:3, 3] = xyz
    return m


def euler(m: FloatArray) -> tuple[float, float, float]:
    """(roll, pitch, yaw) of a pose made by :func:`pose` (pitch within ±90°)."""
    pitch = math.asin(max(-1.0, min(1.0, -float(m[2, 0]))))
    roll = math.atan2(float(m[2, 1]), float(m[2, 2]))
    yaw = math.atan2(float(m[1, 0]), float(m[0, 0]))
    return roll, pitch, yaw


class ReachyMiniDriver:
    """The Reachy Mini daemon as a driver (see the module docstring)."""

    def __init__(
        self,
        body: Body,
        link: Callable[[], ReachyLink],
        *,
        rate_hz: float = 50.0,
        reconnect_s: tuple[float, float] = (0.5, 5.0),
        where: str = "the Reachy Mini daemon",
        stale_s: float = 1.0,
    ) -> None:
        missing = [c for c in CHANNELS if c not in {ch.name for ch in body.channels}]
        if missing:
            raise ValueError(
                f"driver reachy_mini needs the Reachy Mini body (body.checker_ini: reachy_mini); "
                f"{body.source} has no {', '.join(missing)}"
            )
        self._index = np.array([body.index(c) for c in CHANNELS])
        self._lo = np.array([body.channels[i].min for i in self._index])
        self._hi = np.array([body.channels[i].max for i in self._index])
        self._make_link = link
        self.rate_hz = rate_hz
        self.reconnect_s = reconnect_s
        self.where = where
        self.stale_s = stale_s  # a reading older than this: the daemon is hung (it sends 50/s)
        self._heard: float | None = None  # time.monotonic() of the link's newest reading
        self._stalled = False  # the thread said the daemon is hung (and not yet that it is back)
        self._lock = threading.Lock()
        self._newest: Frame | None = None
        self._fresh = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._link: ReachyLink | None = None
        self._open = False
        self._linked = False
        self.measured: Measured | None = None
        self.history = SentHistory(tuple(c.name for c in body.channels))
        self._width = len(body.channels)
        self._feedback: Feedback | None = None
        self.sent = self.dropped = self.reconnects = self.stalls = 0
        self.readings = self.moves = 0  # the daemon's reports; those that had moved
        self.error = ""

    # ------------------------------------------------------------------ the protocol
    @property
    def is_connected(self) -> bool:
        """Linked, and the daemon's newest reading is fresh (computed on each call: a thread
        blocked on a hung daemon cannot keep it True)."""
        return self._linked and self.reading_age() <= self.stale_s

    def reading_age(self) -> float:
        """Seconds since the link's newest reading; 0 before its first (a link that never
        reported is judged by its handshake, not by silence)."""
        heard = self._heard
        return 0.0 if heard is None else time.monotonic() - heard

    def connect(self) -> None:
        """Link to the daemon (raises what the link raises, naming the daemon) and start the
        sender thread."""
        if self._open:
            return
        self._link = self._make_link()
        self._heard = None
        self._linked = True
        self._open = True
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="anima-reachy", daemon=True)
        self._thread.start()
        log.info("reachy_mini: linked to %s, targets at %g Hz", self.where, self.rate_hz)

    def disconnect(self, timeout: float = 2.0) -> None:
        self._open = False
        self._stop.set()
        self._fresh.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        self._drop_link()

    def send(self, frame: Frame) -> Frame:
        if not self._open:
            raise DriverNotConnectedError(f"reachy_mini: send() before connect() ({self.where})")
        values = frame.values.copy()
        picked = np.clip(values[self._index], self._lo, self._hi)
        head_yaw = picked[5]  # the daemon keeps the head within TWIST of the body: so does send
        picked[8] = min(max(picked[8], head_yaw - TWIST), head_yaw + TWIST)
        values[self._index] = picked
        sent = Frame(frame.t, values)
        if self._linked:
            with self._lock:
                self._newest = sent
            self._fresh.set()
        else:
            self.dropped += 1
        return sent

    def link_counters(self) -> LinkCounters:
        """The counters the health model reads (:mod:`anima.health`)."""
        error = self.error
        if self._linked and not self.is_connected:  # hung now: say for how long (the thread
            error = self._hung()  # may be blocked on the daemon, or not have looked yet)
        return LinkCounters(
            sent=self.sent,
            dropped=self.dropped,
            losses=self.stalls,
            reconnects=self.reconnects,
            error=error,
        )

    def _hung(self) -> str:
        return f"no reading from {self.where} for {self.reading_age():.1f} s (hung?)"

    def feedback(self) -> Feedback | None:
        """The newest reading of the daemon, in the body's units, against what was sent."""
        return self._feedback

    # ------------------------------------------------------------------ the sender thread
    def values(self, measured: Measured) -> FloatArray:
        """A reading as the body's values (NaN on the channels it does not report)."""
        out = np.full(self._width, np.nan)
        roll, pitch, yaw = euler(measured.head)
        got = [
            *(float(a) * 1000.0 for a in measured.head[:3, 3]),
            roll / DEG, pitch / DEG, yaw / DEG,
            measured.antennas[0] / DEG, measured.antennas[1] / DEG,
            math.nan if measured.body_yaw is None else measured.body_yaw / DEG,
        ]  # fmt: skip
        out[self._index] = np.array(got) + CENTRE
        return out

    def _take(self, measured: Measured) -> None:
        old = self.measured
        self.measured = measured
        if old is not None and old.t == measured.t:
            return  # the same reading again
        self._heard = time.monotonic()
        values = self.values(measured)
        self.readings += 1
        last = self._feedback
        if last is not None and np.nanmax(np.abs(values - last.values), initial=0.0) > 0.01:
            self.moves += 1  # the robot reported a new position: a target it applied
        self._feedback = self.history.feedback(
            measured.t, values, self.history.match(measured.t, values)
        )

    def target(self, values: FloatArray) -> Target:
        """A frame's values (the body's units) as the SDK's target."""
        v = values[self._index] - CENTRE
        x, y, z = (float(a) / 1000.0 for a in v[0:3])
        roll, pitch, yaw = (float(a) * DEG for a in v[3:6])
        return Target(
            head=pose((x, y, z), (roll, pitch, yaw)),
            antennas=(float(v[6]) * DEG, float(v[7]) * DEG),
            body_yaw=float(v[8]) * DEG,
        )

    def _run(self) -> None:
        period = 1.0 / self.rate_hz
        backoff = self.reconnect_s[0]
        next_at = time.monotonic()
        while not self._stop.is_set():
            if not self._linked:
                if self._stop.wait(backoff):
                    return
                if self._relink():
                    backoff = self.reconnect_s[0]
                else:
                    backoff = min(self.reconnect_s[1], backoff * 2)
                continue
            self._fresh.wait(period)
            self._fresh.clear()
            now = time.monotonic()
            if now < next_at and self._stop.wait(next_at - now):
                return
            next_at = max(next_at + period, time.monotonic())
            with self._lock:
                frame, self._newest = self._newest, None
            link = self._link
            if link is None:
                continue
            try:
                if frame is not None:
                    link.set_target(self.target(frame.values))
                    self.history.add(time.monotonic(), frame.values)
                    self.sent += 1
                # read even with no frame to send: a stale link gets none (the engine sends
                # only to a connected driver), and its first fresh reading links it again
                measured = link.read()
                if measured is not None:
                    self._take(measured)
            except Exception as exc:  # the daemon went away: relink with backoff
                self._lost(exc)
                continue
            self._check_stale()

    def _check_stale(self) -> None:
        """Say once that the daemon went quiet (hung), and once that it answers again."""
        age = self.reading_age()
        if age > self.stale_s and not self._stalled:
            self._stalled = True
            self.stalls += 1
            self.error = self._hung()
            log.warning("reachy_mini: %s; frames are not sent until it answers", self.error)
        elif age <= self.stale_s and self._stalled:
            self._stalled = False
            log.info("reachy_mini: %s answers again", self.where)

    def _lost(self, exc: BaseException) -> None:
        self.error = f"{type(exc).__name__}: {exc}"[:200]
        log.warning("reachy_mini: lost %s (%s); reconnecting", self.where, self.error)
        self._linked = False
        self._drop_link()

    def _relink(self) -> bool:
        try:
            self._link = self._make_link()
        except Exception as exc:
            self.error = f"{type(exc).__name__}: {exc}"[:200]
            return False
        self.reconnects += 1
        self.history.clear()  # what the daemon before the restart was sent
        self._heard = None
        self._stalled = False
        self._linked = True
        log.info("reachy_mini: linked to %s again", self.where)
        return True

    def _drop_link(self) -> None:
        link, self._link = self._link, None
        if link is not None:
            try:
                link.close()
            except Exception as exc:  # closing a dead link may fail: it is gone either way
                log.debug("reachy_mini: closing the link: %s", exc)
