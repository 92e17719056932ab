"""Where a voice comes from, as the Reachy Mini daemon's own microphone array hears it
(docs/attention.md, "The Reachy Mini daemon's array").

Pollen's daemon reads its XVF3800 (ReSpeaker) array's direction of arrival over USB at 10 Hz.
It serves the newest one in its state stream, ``ws://…/api/state/ws/full?with_doa=true``: at
``frequency`` messages a second, a JSON object whose ``doa`` is ``null`` (no array, or no
reading yet) or ``{"angle": <rad>, "speech_detected": <bool>}``, the angle 0 = the robot's
left, π/2 = front, π = right. :class:`DaemonDirection` asks for that stream at 10 Hz with the
daemon's other fields off, and hands each reading the array calls speech on as a
:class:`VoiceDirection` (``azimuth = π/2 − angle``), gated by the robot's own voice
(:class:`OwnVoiceGate`) as the microphone array's estimates are. The array is in the robot's
head, so each reading is in the head's frame (``on_head``): attention turns it by the head's
pose when it was heard, as Pollen's own example does. (Until 2026-12 it polled ``GET
/api/state/doa`` ten times a second: the daemon spent 2.3–2.7 % of a core answering, the
stream 0.5–1.0 %.)
"""

from __future__ import annotations

import json
import logging
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from anima.clock import Clock
from anima.errors import EngineStateError, MissingDependencyError
from anima.listening.direction.own_voice import OwnVoiceGate
from anima.listening.direction.types import VoiceDirection
from anima.speech.reference import ReferenceReader

logger = logging.getLogger(__name__)

PATH = "/api/state/ws/full"  # the daemon's state stream (reachy_mini ≥ 1.13 serves doa in it)
# only the direction of arrival (the control mode and a timestamp come with every message)
QUERY = (
    "frequency=10&with_doa=true&with_head_pose=false&with_body_yaw=false"
    "&with_antenna_positions=false"
)
RETRY_S = 0.5  # between attempts while the daemon does not answer
TIMEOUT_S = 1.0  # connecting, and waiting for each message (10 a second), at most
# the array is in the head (Pollen's own example turns its reading by the head's pose): a
# reading is taken to be of the audio over the last two messages' time (10 a second), and is
# turned by the head's pose at its middle, 100 ms before it arrived
READING_SPAN_S = 0.2
MAX_MESSAGE = 4096  # bytes: a message is ~240; a longer one ends the connection (made anew)


@dataclass(frozen=True)
class DoaReading:
    """One reading of the daemon's array, in its own convention."""

    angle: float  # radians: 0 = the robot's left, π/2 = front, π = right
    speech: bool  # the array's own voice activity detector heard speech


def parse_doa(message: str | bytes) -> DoaReading | None:
    """The reading in one message of the state stream; None when its ``doa`` is ``null`` (no
    array, or no reading yet). ValueError for anything else that is not one, and for a state
    without ``doa`` (a daemon older than 1.13 does not send it)."""
    try:
        state = json.loads(message)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"not JSON: {e}") from None
    if not isinstance(state, dict):
        raise ValueError(f"not an object: {type(state).__name__}")
    if "doa" not in state:
        raise ValueError("no doa in the daemon's state (reachy_mini 1.13 and later send it)")
    data = state["doa"]
    if data is None:
        return None
    if not isinstance(data, dict):
        raise ValueError(f"doa is not an object: {type(data).__name__}")
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
    """See the module docstring. ``start()`` starts the reading thread, ``stop(timeout)``
    ends it. ``own_voice`` is its gate (a barge-in lifts it); ``handed`` counts the
    estimates handed on, ``skipped`` the messages that were not a reading, ``messages`` every
    one received."""

    def __init__(
        self,
        host: str,
        port: int,
        on_voice: Callable[[VoiceDirection], None],
        clock: Clock,
        *,
        reference: ReferenceReader | None = None,
        retry_s: float = RETRY_S,
        timeout_s: float = TIMEOUT_S,
    ) -> None:
        self.host, self.port = host, port
        self.on_voice = on_voice
        self.clock = clock
        self.own_voice = OwnVoiceGate(reference)
        self.retry_s, self.timeout_s = retry_s, timeout_s
        self._ws: Any = None  # websockets' sync client connection
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._down = False  # the daemon did not answer the last time (logged once)
        self.handed = 0
        self.skipped = 0
        self.messages = 0
        self.connections = 0  # made so far

    @property
    def where(self) -> str:
        return f"ws://{self.host}:{self.port}{PATH}"

    def start(self) -> None:
        if self._thread is not None:
            raise EngineStateError("daemon direction: already started")
        _connect_function()  # the reachy extra's websockets: said before the thread starts
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="anima-daemon-doa", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 1.0) -> None:
        thread, self._thread = self._thread, None
        if thread is None:
            return
        self._stop.set()
        ws = self._ws
        if ws is not None:
            ws.close()  # ends a wait for a message at once (the thread closes it again)
        thread.join(timeout)
        if thread.is_alive():
            logger.warning("daemon direction: its thread did not stop within %.1f s", timeout)

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                if not self.read() and self.clock.wait(self._stop, self.retry_s):
                    return
        finally:
            self.close()

    def read(self) -> bool:
        """One message of the stream (connecting first when there is no connection), and what
        its reading gives: the thread's step; a test may call it. False when the daemon did not
        answer (no connection, or no message within ``timeout_s``)."""
        try:
            message = self._receive()
        except Exception as e:  # OSError, websockets' errors, a timeout: the daemon is not there
            self.close()
            if _too_big(e):  # the daemon answered, with something no reading is this long
                self._skip(f"a message over {MAX_MESSAGE} bytes (the connection is made anew)")
                return True
            if not self._down and not self._stop.is_set():
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
        self.own_voice.note(t, self.own_voice.playing())  # every message: a barge-in ends in time
        try:
            reading = parse_doa(message)
        except ValueError as e:
            self._skip(str(e))
            return True
        if reading is not None and reading.speech:
            self.handed += 1
            azimuth, own = azimuth_of(reading.angle), self.own_voice.own(t)
            voice = VoiceDirection(
                t=t, azimuth=azimuth, confidence=1.0, speech=True, own_voice=own,
                on_head=True, span_s=READING_SPAN_S,
            )  # fmt: skip
            self.on_voice(voice)
        return True

    def _receive(self) -> str | bytes:
        if self._ws is None:
            connect = _connect_function()
            self._ws = connect(
                f"{self.where}?{QUERY}",
                open_timeout=self.timeout_s,
                close_timeout=0.2,
                max_size=MAX_MESSAGE,
                compression=None,
            )
            self.connections += 1
        message: str | bytes = self._ws.recv(timeout=self.timeout_s)
        self.messages += 1
        return message

    def _skip(self, why: str) -> None:
        self.skipped += 1
        logger.debug("daemon direction: a message from %s skipped: %s", self.where, why)

    def close(self) -> None:
        """Close the connection (the thread's own, at its end; a caller's of :meth:`read`)."""
        ws, self._ws = self._ws, None
        if ws is not None:
            ws.close()


def _too_big(e: BaseException) -> bool:
    """``e`` is websockets' end of a connection over a message longer than ``max_size``."""
    from websockets.exceptions import ConnectionClosed
    from websockets.frames import CloseCode

    # the close frame this side sent: it refused the message
    return (
        isinstance(e, ConnectionClosed)
        and e.sent is not None
        and (e.sent.code == CloseCode.MESSAGE_TOO_BIG)
    )


def _connect_function() -> Callable[..., Any]:
    try:
        from websockets.sync.client import connect
    except ImportError as exc:  # the reachy extra's, as the driver's own link
        raise MissingDependencyError("websockets", "reachy") from exc
    return connect
