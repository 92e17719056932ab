"""The face detector in a process of its own (``vision.process: true``, the default).

Why: the detector's Python and NumPy post-processing (the letterbox, the score threshold, the
weighted non-maximum suppression, the mesh's reading) holds the interpreter lock for short
stretches many times a frame, and the 100 Hz loop, woken for its tick, waits for that lock: in
the runtime's process, vision made the loop's tick-lateness p99 1.6–2.7× what it is without
vision (docs/attention.md). In a child process the detector shares no lock with the loop; the
vision thread here only sends the frame and waits on a socket, which releases the lock.

The parent and the child talk over a socket pair (:func:`multiprocessing.Pipe`), one
message each way per frame: the frame (its height and width, then its pixels from the array's
own buffer, not pickled: 230 KB at 320×240) and back the faces (pickled), with the child's CPU
seconds on frames so far. The child is ``python -m anima.vision.child FD``
(:mod:`anima.vision.child`; a fresh interpreter: nothing of the runtime's threads or state is
forked), given ``("detect", config)`` as its first message; it makes
the detector ``vision.faces`` names and says ``ready`` (or why it could not: the error is raised
here as it would have been in-process). It ends when told to, or when its socket closes (the
runtime ended, even by ``kill -9``).

A child that dies (a crash in the model's C++, the OOM killer) or stops answering (no reply
within :data:`DETECT_TIMEOUT_S`) fails that frame with an error saying so, and is started again
at the next frame (at most once every :data:`RESTART_S` seconds): vision goes on.
"""

from __future__ import annotations

import contextlib
import logging
import select
import signal
import struct
import subprocess
import sys
import threading
import time
import weakref
from multiprocessing import Pipe
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

from anima.config.vision import DETECTORS, VisionConfig
from anima.errors import (
    AnimaError,
    ConfigError,
    EngineStateError,
    InvalidCommandError,
    MissingDependencyError,
)
from anima.vision.faces.blazeface import check_image
from anima.vision.types import Face, Image

log = logging.getLogger(__name__)

START_TIMEOUT_S = 60.0  # a child's imports and model loads (~0.5 s here; a cold disk: more)
DETECT_TIMEOUT_S = 5.0  # one frame (~3-15 ms here): past this the child is stuck, killed
RESTART_S = 2.0  # a dead child is started again at most this often

CHILD = "anima.vision.child"  # the child's module (python -m)
SHAPE = "<II"  # a frame's height and width, before its pixels
Problem = tuple[str, str, str | None, str | None, str | None]  # kind, message, key, package, extra


def describe(exc: BaseException) -> Problem:
    """An exception as plain strings, to cross the socket (an exception itself may not unpickle)."""
    kind = (
        "missing"
        if isinstance(exc, MissingDependencyError)
        else "config"
        if isinstance(exc, ConfigError)
        else "invalid"
        if isinstance(exc, InvalidCommandError)
        else type(exc).__name__
    )
    return (
        kind,
        str(exc),
        getattr(exc, "key", None),
        getattr(exc, "package", None),
        getattr(exc, "extra", None),
    )


def rebuild(problem: Problem) -> AnimaError:
    """The child's error as the parent raises it: the same anima error class for a missing
    package, a config error and a bad image; any other as an :class:`AnimaError` naming it."""
    kind, message, key, package, extra = problem
    if kind == "missing" and package and extra:
        return MissingDependencyError(package, extra)
    if kind == "config":
        return ConfigError(message, key=key)
    if kind == "invalid":
        return InvalidCommandError(message)
    return AnimaError(f"vision: the face detector failed in its process: {kind}: {message}")


def ended(code: int | None) -> str:
    """How a child ended, for a message: its exit status or the signal that killed it."""
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


class _Child:
    """One running child: its process and the parent's end of the socket."""

    def __init__(self, config: VisionConfig, timeout: float, *, mode: str = "detect") -> None:
        """``mode``: ``detect`` (frames sent here, faces back) or ``see`` (the camera there
        too: :mod:`anima.vision.seeing`)."""
        ours, theirs = Pipe(duplex=True)
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", CHILD, str(theirs.fileno())],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,  # stdout may be a console's; its log goes to stderr
                start_new_session=True,  # a Ctrl-C at the terminal is the runtime's to handle
            )
        finally:
            theirs.close()
        self.conn = ours
        self.finalizer = weakref.finalize(self, _kill, self.process, ours)
        try:
            ours.send((mode, config))
            reply = self.receive(timeout, "start")
        except BaseException:
            self.stop(0.0)
            raise
        if reply[0] != "ready":
            self.stop(1.0)
            raise rebuild(reply[1])
        self.name: str = reply[1]

    def receive(self, timeout: float, doing: str) -> Any:
        """The child's next message; an AnimaError when it ended or did not answer in time
        (then it is killed)."""
        try:
            # select here, not conn.poll: a FakeClock's autojump counts a thread in a selector
            # as idle, and time must not jump while the child reads a frame (the detection is
            # work, as it is in-process)
            readable, _, _ = select.select([self.conn.fileno()], [], [], timeout)
            if readable:
                return self.conn.recv()
        except (EOFError, OSError):
            try:
                code: int | None = self.process.wait(1.0)
            except subprocess.TimeoutExpired:
                code = None
            raise AnimaError(
                f"vision: the face detector's process ended ({ended(code)}) during its {doing}"
            ) from None
        self.stop(0.0)
        raise AnimaError(
            f"vision: the face detector's process did not answer its {doing} within "
            f"{timeout:g} s; it was stopped"
        )

    def stop(self, timeout: float) -> None:
        """Ask the child to end (its socket's close is its signal), kill it after ``timeout``."""
        self.finalizer.detach()
        self.conn.close()
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            _kill(self.process, self.conn)


def _kill(process: subprocess.Popen[bytes], conn: Connection) -> None:
    conn.close()
    if process.poll() is None:
        process.kill()
        process.wait()


class ProcessDetector:
    """A :class:`~anima.vision.types.FaceDetector` whose model runs in a child process (the
    module's docstring). Made with the config's ``vision.faces``; the child's start (its
    imports and model loads) is waited for here, and its refusal (a missing package, a model
    file that is not the pinned one) raised here as in-process. One thread at a time."""

    def __init__(self, config: VisionConfig, *, start_timeout: float = START_TIMEOUT_S) -> None:
        self._config = config
        self._start_timeout = start_timeout
        self._lock = threading.Lock()
        self._child: _Child | None = _Child(config, start_timeout)
        self._started = time.monotonic()
        self._closed = False
        self._child_cpu_s = 0.0  # CPU of children that ended
        self._cpu_s = 0.0  # the running child's, at its last reply
        self.restarts = 0
        self.name = self._child.name

    @property
    def pid(self) -> int | None:
        """The running child's process id (None between a death and its restart)."""
        child = self._child
        return None if child is None else child.process.pid

    @property
    def cpu_s(self) -> float:
        """The CPU seconds its children have spent on frames since each was ready (as of
        their last replies; their starts not counted)."""
        return self._child_cpu_s + self._cpu_s

    def detect(self, image: Image) -> list[Face]:
        image = check_image(image)  # refused here, not pickled across
        with self._lock:
            child = self._running()
            with contextlib.suppress(OSError):  # the child died: receive says how
                child.conn.send_bytes(struct.pack(SHAPE, *image.shape[:2]))
                child.conn.send_bytes(image.data.cast("B"))  # its own buffer: no copy
            try:
                reply = child.receive(DETECT_TIMEOUT_S, "detection")
            except AnimaError:
                self._lost(child)
                raise
            kind, payload, cpu_s = reply
            self._cpu_s = cpu_s
            if kind == "error":
                raise rebuild(payload)
            faces: list[Face] = payload
            return faces

    def close(self) -> None:
        with self._lock:
            self._closed = True
            child, self._child = self._child, None
        if child is not None:
            child.stop(1.0)

    def _running(self) -> _Child:
        if self._closed:
            raise EngineStateError("the face detector was closed")
        if self._child is None:
            wait = RESTART_S - (time.monotonic() - self._started)
            if wait > 0:
                raise AnimaError(
                    f"vision: the face detector's process is started again in {wait:.1f} s"
                )
            self._started = time.monotonic()
            self._child = _Child(self._config, self._start_timeout)
            self.restarts += 1
            log.warning("vision: the face detector's process was started again")
        return self._child

    def _lost(self, child: _Child) -> None:
        child.stop(0.0)
        self._child = None
        self._child_cpu_s += self._cpu_s
        self._cpu_s = 0.0


def serve_detecting(conn: Connection, config: VisionConfig) -> int:
    """The child's side in ``detect`` mode: make the detector, then answer each frame until the
    socket closes."""
    try:
        detector = DETECTORS.load(config.faces)(config)
    except Exception as exc:
        conn.send(("failed", describe(exc)))
        return 1
    conn.send(("ready", detector.name))
    began = time.process_time()  # the CPU a frame costs, not the imports' and loads'
    try:
        while True:
            try:
                height, width = struct.unpack(SHAPE, conn.recv_bytes())
                data = conn.recv_bytes()
            except EOFError:
                return 0
            try:
                image = np.frombuffer(data, dtype=np.uint8).reshape(height, width, 3)
                conn.send(("faces", detector.detect(image), time.process_time() - began))
            except Exception as exc:
                conn.send(("error", describe(exc), time.process_time() - began))
    except OSError:  # the parent went away mid-reply
        return 0
    finally:
        detector.close()
