"""Privacy: the microphone reaches the server only after the wake phrase
(``agent.planner.listen_after_wake``).

While the :class:`WakeGate` is closed no session is open and no audio leaves the robot: each
microphone frame goes to anima's own wake spotter (``listen.wake``, the listener's, hearing
``listen.wake_phrase``) on the gate's thread, and nowhere else. The phrase, or a wake from a
door (``Listen``), opens the session; once ``agent.engaged_s`` has passed with neither the
person's voice (the server's VAD events, the words it transcribes) nor the model's (its audio,
the robot speaking), the gate stops the audio and closes the session, and the phase goes back
to idle. Each way is one log line.

Time is the robot's clock (the check is a :meth:`~anima.agent.port.RobotPort.call_later`);
opening and closing the socket (which joins its threads) is done on the gate's own thread,
never on the timers' or the source's.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from anima.audio import Frame

if TYPE_CHECKING:
    from anima.agent.port import RobotPort
    from anima.listening.wake.spotter import Spotter

log = logging.getLogger(__name__)

MAX_FRAMES = 200  # frames waiting for the spotter (~6 s): past it, new ones are dropped


class WakeGate:
    """Opens the session on the wake, closes it after ``engaged_s`` without a voice (see the
    module docstring). ``awake`` may be read from any thread."""

    def __init__(
        self,
        robot: RobotPort,
        spotter: Spotter | None,
        engaged_s: float,
        open_session: Callable[[], None],
        close_session: Callable[[], None],
    ) -> None:
        """``robot``: its clock and timers, and whether it speaks (the model's voice still
        playing keeps the session); ``spotter``: the wake phrase's (None: only a door's wake
        opens it)."""
        self._robot, self.spotter, self.engaged_s = robot, spotter, engaged_s
        self._clock = robot.clock
        self._open, self._close = open_session, close_session
        self._queue: queue.Queue[tuple[str, str, Frame | None]] = queue.Queue()  # kind, why, frame
        self._thread: threading.Thread | None = None
        self._cancel: Callable[[], None] | None = None
        self.last_voice = 0.0  # the clock's time of the last voice heard
        self._position = 0  # samples fed to the spotter
        self.awake = False
        self.withheld = 0  # frames not sent: the gate was closed
        self.opened = 0  # sessions opened by a wake

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="anima-realtime-wake")
        self._thread.daemon = True
        self._thread.start()

    def stop(self, timeout: float) -> None:
        if self._cancel is not None:
            self._cancel()
        self._queue.put(("stop", "", None))
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                log.warning("realtime: the wake gate's thread did not stop in %g s", timeout)
            self._thread = None

    # ------------------------------------------------------------------ from other threads
    def admit(self, samples: Frame) -> bool:
        """A microphone frame (the source's thread): True when it may go to the server; when
        the gate is closed it goes to the spotter only."""
        if self.awake:
            return True
        self.withheld += 1
        if self.spotter is not None and self._queue.qsize() < MAX_FRAMES:
            self._queue.put(("frame", "", samples))
        return False

    def wake(self, source: str) -> None:
        """A wake from a door: the session opens (if it is not open)."""
        self._queue.put(("wake", source, None))

    def voice(self) -> None:
        """The person or the model was heard: the session's quiet time starts again."""
        self.last_voice = self._clock.now()

    # ------------------------------------------------------------------ the gate's thread
    def _loop(self) -> None:
        while True:
            kind, why, samples = self._queue.get()
            try:
                if kind == "stop":
                    return
                if kind == "frame" and samples is not None:
                    self._hear(samples)
                elif kind == "wake":
                    self._wake(why)
                elif kind == "check":
                    self._check()
            except Exception:  # the gate must outlive one bad frame or socket
                log.exception("realtime: the wake gate failed on %s", kind)

    def _hear(self, samples: Frame) -> None:
        assert self.spotter is not None
        if self.awake:
            return  # frames queued before the wake
        hit = self.spotter.feed(samples, self._position)
        self._position += len(samples)
        if hit is not None:
            self._wake(f"the wake phrase {hit.phrase!r} ({self.spotter.name})")

    def _wake(self, source: str) -> None:
        self.voice()
        if self.awake:
            return
        log.info("realtime: woken by %s: the session opens, the microphone goes to it", source)
        self._open()
        self.awake = True
        self.opened += 1
        self._arm(self.engaged_s)

    def _check(self) -> None:
        if not self.awake:
            return
        if self._robot.speaking:
            self.voice()
        quiet = self._clock.now() - self.last_voice
        if quiet < self.engaged_s:
            self._arm(self.engaged_s - quiet)
            return
        self.awake = False
        self._close()
        log.info(
            "realtime: %g s without a voice: the session is closed, nothing is sent until the "
            "wake phrase",
            quiet,
        )
        if self.spotter is not None:
            self.spotter.reset()
            self._position = 0

    def _arm(self, seconds: float) -> None:
        if self._cancel is not None:
            self._cancel()
        self._cancel = self._robot.call_later(seconds, lambda: self._queue.put(("check", "", None)))
