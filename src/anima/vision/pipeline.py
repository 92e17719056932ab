"""The vision thread: a camera's frames to a face detector, and its faces to whoever tracks
them.

The camera's thread hands each frame to a one-frame slot and returns at once: a detector slower
than the camera drops frames (the newest replaces the one waiting), it never queues them, so
what is detected is never older than one frame plus one detection. One worker thread, owned
here, runs the :class:`~anima.vision.types.FaceDetector` on the newest frame and hands
``(frame, faces)`` to ``on_faces`` (the tracker). Its counters read as :class:`VisionStats`.

The worker waits on the runtime clock's ``wait`` (an event set by each frame), so on a
:class:`~anima.testing.FakeClock` with ``autojump`` time does not move while a frame waits to
be detected or is being detected: a video then plays frame by frame at the speed of the CPU,
none dropped. The detector's milliseconds and the worker's CPU seconds are real time
(``time.perf_counter``, ``time.thread_time``): they are costs, not behaviour.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from anima.clock import Clock
from anima.errors import EngineStateError
from anima.vision.types import Camera, Face, FaceDetector, VideoFrame

log = logging.getLogger(__name__)

FacesCallback = Callable[[VideoFrame, list[Face]], None]
WINDOW = 150  # detections the p50 and p95 are over (10 s at 15 fps)


@dataclass(frozen=True, kw_only=True)
class VisionStats:
    """The vision thread's counters since it started."""

    frames_in: int  # frames the camera delivered
    processed: int  # frames the detector ran on
    dropped: int  # frames replaced by a newer one (or still waiting at the stop) undetected
    errors: int  # frames whose detector or callback raised (logged)
    detect_ms_p50: float | None  # the detector's time a frame over the last WINDOW (real ms)
    detect_ms_p95: float | None
    cpu_s: float  # the worker thread's own CPU time (time.thread_time), detector included
    # the detector's own process's CPU on frames, when it runs in one (vision.process), else 0
    detector_cpu_s: float
    ended: str | None  # why the camera ended (None: it is delivering)


def percentile(ordered: list[float], q: float) -> float | None:
    """The ``q``-th percentile of ``ordered`` (sorted), interpolated as numpy's default does;
    None when empty. In pure Python: numpy's costs 0.3 ms for 150 values, and the vision
    process reads it with every frame."""
    if not ordered:
        return None
    position = (len(ordered) - 1) * q / 100.0
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


class VisionPipeline:
    """``camera`` → ``detector`` → ``on_faces``, on one worker thread; the pipeline is the
    camera's :class:`~anima.vision.types.FrameSink`. It owns both parts it is given: ``stop``
    stops the camera, and the worker closes the detector as it ends (the camera ended, or
    stop). ``on_end`` is told once, from the worker, why the frames ended."""

    def __init__(
        self,
        camera: Camera,
        detector: FaceDetector,
        on_faces: FacesCallback,
        *,
        clock: Clock,
        on_end: Callable[[str], None] | None = None,
    ) -> None:
        self.camera = camera
        self.detector = detector
        self._on_faces = on_faces
        self._on_end = on_end
        self._clock = clock
        self._lock = threading.Lock()
        self._ready = threading.Event()  # a frame is in the slot, the camera ended, or stop
        self._slot: VideoFrame | None = None
        self._ended: str | None = None
        self._stopping = False
        self._done = threading.Event()  # the worker has ended
        self._thread: threading.Thread | None = None
        self._stopped = False
        self._frames_in = 0
        self._processed = 0
        self._dropped = 0
        self._errors = 0
        self._failures: dict[str, int] = {}  # by what failed, for the log
        self._detect_ms: collections.deque[float] = collections.deque(maxlen=WINDOW)
        self._cpu_s = 0.0

    # ------------------------------------------------------------------ owner
    def start(self) -> None:
        """Start the worker, then the camera (its error, a :class:`ConfigError` naming the
        device, reaches the caller with the worker ended and the detector closed); idempotent
        while running."""
        if self._thread is not None:
            if self._stopped:
                raise EngineStateError("vision: a stopped pipeline does not start again")
            return
        self._thread = threading.Thread(target=self._run, name="anima-vision", daemon=True)
        self._thread.start()
        try:
            self.camera.start(self)
        except BaseException:
            self._stopped = True
            self._stop_worker(1.0)
            raise

    def stop(self, timeout: float = 1.0) -> None:
        """Stop the camera and the worker (each waited for at most ``timeout`` seconds; the
        worker closes the detector as it ends); idempotent."""
        if self._thread is None or self._stopped:
            return
        self._stopped = True
        self.camera.stop(timeout)
        self._stop_worker(timeout)

    def _stop_worker(self, timeout: float) -> None:
        with self._lock:
            self._stopping = True
        self._ready.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
            if thread.is_alive():
                log.warning("vision: the detector did not finish within %.1f s", timeout)

    def wait_ended(self, timeout: float) -> bool:
        """Block until the worker has ended (the camera ended and its last frame was detected,
        or stop): True; False after ``timeout`` real seconds."""
        return self._done.wait(timeout)

    def stats(self) -> VisionStats:
        with self._lock:
            ms = sorted(self._detect_ms)
            return VisionStats(
                frames_in=self._frames_in,
                processed=self._processed,
                dropped=self._dropped,
                errors=self._errors,
                detect_ms_p50=percentile(ms, 50),
                detect_ms_p95=percentile(ms, 95),
                cpu_s=self._cpu_s,
                detector_cpu_s=float(getattr(self.detector, "cpu_s", 0.0)),  # ProcessDetector's
                ended=self._ended,
            )

    # ------------------------------------------------------------------ the camera's sink
    def frame(self, frame: VideoFrame) -> None:
        """From the camera's thread: the newest frame, replacing one not yet detected."""
        with self._lock:
            self._frames_in += 1
            if self._slot is not None:
                self._dropped += 1
            self._slot = frame
        self._ready.set()

    def end(self, reason: str) -> None:
        """From the camera's thread (or its stop): no more frames."""
        with self._lock:
            if self._ended is None:
                self._ended = reason
        self._ready.set()

    # ------------------------------------------------------------------ the worker
    def _run(self) -> None:
        try:
            while True:
                self._clock.wait(self._ready)  # on the clock: see the module's docstring
                with self._lock:
                    self._ready.clear()
                    frame, self._slot = self._slot, None
                    if self._stopping:
                        self._dropped += frame is not None
                        break
                if frame is not None:
                    self._detect(frame)
                with self._lock:  # the camera ended and its last frame is detected
                    if self._ended is not None and self._slot is None:
                        break
        finally:
            with self._lock:
                reason = self._ended or "stopped"
                self._cpu_s = time.thread_time()
            try:  # here, not in stop: a detector still running when stop gave up is not freed
                self.detector.close()
            except Exception:
                log.exception("vision: closing the detector failed")
            self._done.set()
            if self._on_end is not None:
                try:
                    self._on_end(reason)
                except Exception:
                    log.exception("vision: on_end failed")

    def _detect(self, frame: VideoFrame) -> None:
        began = time.perf_counter()
        try:
            faces = self.detector.detect(frame.image)
        except Exception:
            self._failed("the detector")
            return
        ms = (time.perf_counter() - began) * 1000.0
        try:
            self._on_faces(frame, faces)
        except Exception:
            self._failed("on_faces")
        with self._lock:
            self._processed += 1
            self._detect_ms.append(ms)
            self._cpu_s = time.thread_time()

    def _failed(self, what: str) -> None:
        with self._lock:
            self._errors += 1
            count = self._failures[what] = self._failures.get(what, 0) + 1
        if count == 1 or count % 100 == 0:  # the first of each, then every 100th: not 15 a second
            log.exception("vision: %s failed (%d times so far)", what, count)
