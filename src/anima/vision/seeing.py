"""The camera and the face detector together in the vision process (``vision.process: true``
with ``vision.source: camera`` or ``video`` on the real clock, the default for those).

Why the camera too: OpenCV, which captures and decodes the frames, holds the interpreter lock
for 25-55 ms while it is imported (its C++ module registering its functions in one call), and
a 100 Hz loop woken meanwhile misses its ticks: starting vision in the runtime's process missed
0-3. With the camera in the child, the runtime never imports OpenCV and never touches a pixel:
capture, scaling, the detector and the dashboard's view all run there, and only what attention
needs crosses back, a frame's capture time, index, size and faces (a few hundred bytes).

The child is the face detector's (:mod:`anima.vision.child`), told ``("see", config)`` instead
of ``("detect", config)``; its side is :func:`anima.vision.child.serve_seeing`: it makes the
camera ``vision.source`` names and the detector, says ``ready`` (or why not: raised here as
in-process), and runs a :class:`~anima.vision.pipeline.VisionPipeline` of its own when told
``start``. Frames are
stamped with ``time.monotonic`` there, the runtime's clock here
(:class:`~anima.clock.MonotonicClock`): the same system-wide clock.

Messages from the child, read by one thread here (:class:`SeeingProcess`):
``("faces", t, index, width, height, faces, counters)``, ``("started",)`` or ``("failed",
problem)`` for a start, ``("view", number, jpeg or None)`` for a view, ``("ended", reason,
counters)`` when the camera's frames end. To the child: ``("start",)``, ``("view", number,
quality, marks)``, ``("stop",)`` (or the socket's close).

A child that dies is started again (its camera too) at most every
:data:`~anima.vision.faces.process.RESTART_S` seconds, while the runtime has not stopped it.
"""

from __future__ import annotations

import logging
import select
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from anima.config.vision import VisionConfig
from anima.errors import AnimaError, EngineStateError
from anima.vision.faces.process import (
    RESTART_S,
    START_TIMEOUT_S,
    _Child,
    ended,
    rebuild,
)
from anima.vision.pipeline import FacesCallback, VisionStats
from anima.vision.types import VideoFrame
from anima.vision.view import Mark

log = logging.getLogger(__name__)

SOURCES_SEEN_THERE = ("camera", "video")  # the sources that need nothing of the runtime
REPLY_TIMEOUT_S = 5.0  # a start (a camera opening) or a view
STALL_S = 10.0  # a running child silent this long is stuck (a frame takes ~5-20 ms here)
# frames_in, processed, dropped, errors, detect ms p50, p95, the child's CPU on frames
Counters = tuple[int, int, int, int, float | None, float | None, float]
NO_COUNTERS: Counters = (0, 0, 0, 0, None, None, 0.0)


def frame_of(t: float, index: int, width: int, height: int) -> VideoFrame:
    """A frame seen in the vision process, as the runtime has it: its capture time, index and
    size; its pixels stay in the child (``image`` is one black pixel broadcast to the frame's
    size: no memory, read-only)."""
    image = np.broadcast_to(np.zeros(3, dtype=np.uint8), (height, width, 3))
    return VideoFrame(image=image, t=t, index=index)


class SeeingProcess:
    """The vision pipeline with its camera and detector in the vision process (the module's
    docstring); the same owner's interface as :class:`~anima.vision.pipeline.VisionPipeline`
    (``start``, ``stop``, ``stats``, ``wait_ended``) and :meth:`view`. Made with the config:
    the child's start (imports, model loads, the camera made but not opened) is waited for
    here and its refusal raised here."""

    def __init__(
        self,
        config: VisionConfig,
        on_faces: FacesCallback,
        *,
        on_end: Callable[[str], None] | None = None,
        start_timeout: float = START_TIMEOUT_S,
        stall_s: float = STALL_S,
    ) -> None:
        """``stall_s``: a running child silent this long (or three frame periods, if longer) is
        taken as stuck, killed and started again."""
        self._config = config
        pace = config.video_fps if config.source == "video" and config.video_fps else config.fps
        self._stall_s = max(stall_s, 3.0 / pace)
        self._on_faces = on_faces
        self._on_end = on_end
        self._start_timeout = start_timeout
        self._lock = threading.Lock()
        self._replies: dict[str, Any] = {}  # a start's or a view's reply, by its kind
        self._replied = threading.Condition(self._lock)
        self._view_lock = threading.Lock()  # one view at a time
        self._views = 0  # views asked for
        self._child: _Child | None = _Child(config, start_timeout, mode="see")
        self.name = self._child.name
        self._counters = NO_COUNTERS
        self._cpu_before = 0.0  # the CPU of children that ended
        self._ended: str | None = None
        self._started = False
        self._stopping = False
        self._reader: threading.Thread | None = None
        self._reader_cpu_s = 0.0
        self._done = threading.Event()
        self.restarts = 0
        self._restarting = False  # a restarted child's start reply is the reader's to read

    @property
    def pid(self) -> int | None:
        """The running child's process id (None between a death and its restart)."""
        child = self._child
        return None if child is None else child.process.pid

    # ------------------------------------------------------------------ owner
    def start(self) -> None:
        """Open the camera in the child and start its frames (its error, a
        :class:`~anima.errors.ConfigError` naming the device, is raised here with the child
        ended); idempotent while running."""
        if self._started:
            if self._stopping:
                raise EngineStateError("vision: a stopped pipeline does not start again")
            return
        child = self._child
        if child is None:
            raise EngineStateError("vision: the vision process was stopped")
        self._started = True
        self._reader = threading.Thread(target=self._read, name="anima-vision", daemon=True)
        self._reader.start()
        try:
            self._start_child(child)
        except BaseException:
            self.stop(1.0)
            raise

    def stop(self, timeout: float = 1.0) -> None:
        """Stop the camera and the child (waited for at most ``timeout`` seconds, then
        killed); idempotent."""
        with self._lock:
            if self._stopping:
                return
            self._stopping = True
            child = self._child
            self._replied.notify_all()
        reader = self._reader
        if child is not None:
            try:
                child.conn.send(("stop",))
            except OSError:
                pass
            else:  # the child ends: the reader reads its "ended", then the socket's end
                if reader is not None and reader is not threading.current_thread():
                    reader.join(timeout)
            child.stop(timeout)  # the socket closed (the child is told so), then killed
        if reader is not None and reader is not threading.current_thread():
            reader.join(timeout)
        if not self._started:
            self._finish("stopped")

    def wait_ended(self, timeout: float) -> bool:
        """Block until the frames have ended (the camera's, or stop): True; False after
        ``timeout`` real seconds."""
        return self._done.wait(timeout)

    def stats(self) -> VisionStats:
        with self._lock:
            frames_in, processed, dropped, errors, p50, p95, cpu = self._counters
            return VisionStats(
                frames_in=frames_in,
                processed=processed,
                dropped=dropped,
                errors=errors,
                detect_ms_p50=p50,
                detect_ms_p95=p95,
                cpu_s=self._reader_cpu_s,  # this process's part: reading the child's messages
                detector_cpu_s=self._cpu_before + cpu,
                ended=self._ended,
            )

    def view(self, marks: Sequence[Mark], quality: int = 70) -> bytes | None:
        """The newest frame the detector saw, as JPEG, with ``marks`` drawn (rendered in the
        child: the pixels are there); None before the first frame or when the child cannot
        answer."""
        with self._view_lock:
            child = self._child
            if child is None or not self._started or self._stopping:
                return None
            self._views += 1  # a reply to an earlier view that timed out is not this one's
            try:
                child.conn.send(("view", self._views, quality, list(marks)))
            except OSError:
                return None
            jpeg: bytes | None = self._await(f"view {self._views}", REPLY_TIMEOUT_S)
            return jpeg

    # ------------------------------------------------------------------ the reader
    def _start_child(self, child: _Child) -> None:
        child.conn.send(("start",))
        reply = self._await("start", REPLY_TIMEOUT_S)
        if reply is None:
            raise AnimaError(
                f"vision: the vision process did not start its camera within {REPLY_TIMEOUT_S:g} s"
            )
        if reply[0] == "failed":
            raise rebuild(reply[1])

    def _await(self, kind: str, timeout: float) -> Any:
        deadline = time.monotonic() + timeout
        with self._lock:
            while kind not in self._replies:
                left = deadline - time.monotonic()
                if left <= 0 or (self._stopping and kind != "start"):
                    return None
                self._replied.wait(left)
            return self._replies.pop(kind)

    def _reply(self, kind: str, value: Any) -> None:
        with self._lock:
            self._replies[kind] = value
            self._replied.notify_all()

    def _read(self) -> None:
        """Read the child's messages until it ends: after its frames end it still answers views
        (a child lost then is not started again: there is nothing more to see)."""
        reason = "stopped"
        try:
            child = self._child
            while child is not None:
                try:
                    message = self._receive(child)
                # TypeError: the socket closed under the read (a stop that gave up waiting)
                except (EOFError, OSError, TypeError):
                    if self._stopping or self._done.is_set():
                        break
                    child = self._restart(child)
                    if child is None and not self._stopping:
                        reason = "the vision process could not be started again"
                    continue
                self._handle(message)
        finally:
            self._finish(reason)

    def _receive(self, child: _Child) -> Any:
        """The child's next message; EOFError when it ended, or when it sent nothing for
        ``stall_s`` while its camera runs (stuck: it is killed, and started again)."""
        while True:
            # select, not conn.poll: as _Child.receive (a FakeClock's autojump and selectors)
            readable, _, _ = select.select([child.conn.fileno()], [], [], self._stall_s)
            if readable:
                return child.conn.recv()
            if self._stopping or self._done.is_set():
                continue  # the frames ended: only views are answered, and stop ends it
            log.warning(
                "vision: the vision process sent nothing for %.1f s; it is stopped", self._stall_s
            )
            child.process.kill()
            raise EOFError

    def _handle(self, message: tuple[Any, ...]) -> None:
        """One message from the child."""
        kind = message[0]
        if kind == "faces":
            _, t, index, width, height, faces, counters = message
            with self._lock:
                self._counters = counters
            try:
                self._on_faces(frame_of(t, index, width, height), faces)
            except Exception:
                log.exception("vision: on_faces failed")
        elif kind == "ended":
            with self._lock:
                self._counters = message[2]
            self._finish(message[1])
        elif kind in ("started", "failed") and self._restarting:
            self._restarting = False  # a restarted child's start: nobody waits for it
            if kind == "failed":
                log.warning("vision: the camera did not start again: %s", rebuild(message[1]))
        elif kind in ("started", "failed"):
            self._reply("start", message)
        elif kind == "view":
            _, number, jpeg = message
            if number == self._views:
                self._reply(f"view {number}", jpeg)
        else:
            log.warning("vision: an unknown message from the vision process: %r", kind)
        self._reader_cpu_s = time.thread_time()

    def _restart(self, lost: _Child) -> _Child | None:
        try:  # its socket ended as it died: its status follows at once
            code: int | None = lost.process.wait(1.0)
        except subprocess.TimeoutExpired:
            code = None
        with self._lock:
            self._cpu_before += self._counters[-1]
            self._counters = (*NO_COUNTERS[:-1], 0.0)
        log.warning("vision: the vision process ended (%s); starting it again", ended(code))
        lost.stop(0.0)
        while not self._stopping:
            time.sleep(RESTART_S)  # real time: a process's start, not the runtime's clock
            if self._stopping:
                return None
            try:
                child = _Child(self._config, self._start_timeout, mode="see")
            except AnimaError as exc:
                log.warning("vision: the vision process could not be started again: %s", exc)
                continue
            with self._lock:
                if self._stopping:
                    child.stop(0.0)
                    return None
                self._child = child
            self.restarts += 1
            self._restarting = True
            try:
                child.conn.send(("start",))
            except OSError:
                continue
            return child
        return None

    def _finish(self, reason: str) -> None:
        with self._lock:
            if self._done.is_set():
                return
            self._ended = self._ended or reason
            self._replied.notify_all()
        self._done.set()
        if self._on_end is not None:
            try:
                self._on_end(reason)
            except Exception:
                log.exception("vision: on_end failed")


__all__ = ["SOURCES_SEEN_THERE", "SeeingProcess", "frame_of"]
