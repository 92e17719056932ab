"""Where a voice comes from, as the Reachy Mini daemon's own microphone array hears it
(docs/attention.md, "The Reachy Mini daemon's array").

Pollen's daemon reads its XVF3800 (ReSpeaker) array's direction of arrival over USB at 10 Hz
and serves the newest one at ``GET /api/state/doa``: JSON ``null`` (no array, or no reading
yet) or ``{"angle": <rad>, "speech_detected": <bool>}``, the angle 0 = the robot's left,
π/2 = front, π = right. :class:`DaemonDirection` polls that at the same rate on one
keep-alive connection and hands each reading the array calls speech on as a
:class:`VoiceDirection` (``azimuth = π/2 − angle``), gated by the robot's own voice
(:class:`OwnVoiceGate`) as the microphone array's estimates are.
"""

from __future__ import annotations

import http.client
import json
import logging
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass

from anima.clock import Clock
from anima.errors import EngineStateError
from anima.listening.direction.own_voice import OwnVoiceGate
from anima.listening.direction.types import VoiceDirection
from anima.speech.reference import ReferenceReader

logger = logging.getLogger(__name__)

PATH = "/api/state/doa"  # the daemon's newest direction of arrival (reachy_mini ≥ 1.13)
PERIOD_S = 0.1  # the daemon reads its array at 10 Hz (DOA_POLL_INTERVAL_S): no use asking faster
RETRY_S = 0.5  # between attempts while the daemon does not answer
TIMEOUT_S = 1.0  # connecting, and each read of a reply, at most
MAX_BODY = 4096  # bytes: a reading is ~45; anything longer is not one


@dataclass(frozen=True)
class DoaReading:
    """One reading of the daemon's array, in its own convention."""

    angle: float  # radians: 0 = the robot's left, π/2 = front, π = right
    speech: bool  # the array's own voice activity detector heard speech


def parse_doa(body: bytes) -> DoaReading | None:
    """The reading in a reply's body; None for ``null`` (no array, or no reading yet).
    ValueError for anything else that is not a reading."""
    try:
        data = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"not JSON: {e}") from None
    if data is None:
        return None
    if not isinstance(data, dict):
        raise ValueError(f"not an object: {type(data).__name__}")
    angle, speech = data.get("angle"), data.get("speech_detected")
    if isinstance(angle, bool) or not isinstance(angle, int | float):
        raise ValueError(f"angle is not a number: {angle!r}")
    if not math.isfinite(angle):
        raise ValueError(f"angle is not finite: {angle!r}")
    if not isinstance(speech, bool):
        raise ValueError(f"speech_detected is not a boolean: {speech!r}")
    return DoaReading(float(angle), speech)


def azimuth_of(angle: float) -> float:
    """anima's azimuth (radians from x forward toward y left, in (−π, π]) of the daemon's
    angle (0 = left, π/2 = front, π = right)."""
    azimuth = math.remainder(math.pi / 2 - angle, math.tau)
    return math.pi if azimuth <= -math.pi else azimuth


class DaemonDirection:
    """See the module docstring. ``start()`` starts the polling thread, ``stop(timeout)``
    ends it. ``own_voice`` is its gate (a barge-in lifts it); ``handed`` counts the
    estimates handed on, ``skipped`` the replies that were not a reading."""

    def __init__(
        self,
        host: str,
        port: int,
        on_voice: Callable[[VoiceDirection], None],
        clock: Clock,
        *,
        reference: ReferenceReader | None = None,
        period_s: float = PERIOD_S,
        retry_s: float = RETRY_S,
        timeout_s: float = TIMEOUT_S,
    ) -> None:
        self.host, self.port = host, port
        self.on_voice = on_voice
        self.clock = clock
        self.own_voice = OwnVoiceGate(reference)
        self.period_s, self.retry_s, self.timeout_s = period_s, retry_s, timeout_s
        self._conn: http.client.HTTPConnection | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._down = False  # the daemon did not answer the last time (logged once)
        self.handed = 0
        self.skipped = 0

    @property
    def where(self) -> str:
        return f"http://{self.host}:{self.port}{PATH}"

    def start(self) -> None:
        if self._thread is not None:
            raise EngineStateError("daemon direction: already started")
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="anima-daemon-doa", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 1.0) -> None:
        thread, self._thread = self._thread, None
        if thread is None:
            return
        self._stop.set()
        thread.join(timeout)  # a request under way ends within timeout_s
        if thread.is_alive():
            logger.warning("daemon direction: its thread did not stop within %.1f s", timeout)

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                answered = self.poll()
                if self.clock.wait(self._stop, self.period_s if answered else self.retry_s):
                    return
        finally:
            self.close()

    def poll(self) -> bool:
        """One request, and what its reading gives (the thread's step; a test may call it).
        False when the daemon did not answer."""
        try:
            status, body = self._get()
        except (OSError, http.client.HTTPException) as e:
            self.close()
            if not self._down:
                self._down = True
                logger.warning(
                    "daemon direction: the Reachy Mini daemon at %s does not answer (%s); "
                    "retrying every %.1f s", self.where, e or type(e).__name__, self.retry_s,
                )  # fmt: skip
            return False
        if self._down:
            self._down = False
            logger.info("daemon direction: the Reachy Mini daemon answers again (%s)", self.where)
        t = self.clock.now()
        self.own_voice.note(t, self.own_voice.playing())  # every poll: a barge-in ends in time
        if status != 200 or body is None:
            self._skip(f"HTTP {status}" if body is not None else f"over {MAX_BODY} bytes")
            return True
        try:
            reading = parse_doa(body)
        except ValueError as e:
            self._skip(str(e))
            return True
        if reading is not None and reading.speech:
            self.handed += 1
            azimuth, own = azimuth_of(reading.angle), self.own_voice.own(t)
            voice = VoiceDirection(t=t, azimuth=azimuth, confidence=1.0, speech=True, own_voice=own)
            self.on_voice(voice)
        return True

    def _get(self) -> tuple[int, bytes | None]:
        if self._conn is None:
            self._conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout_s)
        self._conn.request("GET", PATH, headers={"Accept": "application/json"})
        reply = self._conn.getresponse()
        body = reply.read(MAX_BODY + 1)
        if len(body) > MAX_BODY:
            self.close()  # the rest is unread: the connection cannot carry another request
            return reply.status, None
        if reply.will_close:
            self.close()
        return reply.status, body

    def _skip(self, why: str) -> None:
        self.skipped += 1
        logger.debug("daemon direction: a reply from %s skipped: %s", self.where, why)

    def close(self) -> None:
        """Close the connection (the thread's own, at its end; a caller's of :meth:`poll`)."""
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()
