"""The vision process: ``python -m anima.vision.child FD``, started by the runtime with one end
of a socket pair as file descriptor ``FD``.

Its first message says what it is for: ``("detect", config)``, the face detector alone (frames
sent to it, faces back: :mod:`anima.vision.faces.process`), or ``("see", config)``, the camera
and the detector (:func:`serve_seeing` here; the runtime's side is
:mod:`anima.vision.seeing`). It ends when told to or when its socket closes (the runtime ended,
even by ``kill -9``), and ignores Ctrl-C (the runtime's to handle: the child is in a session of
its own anyway).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Sequence
from multiprocessing.connection import Connection
from typing import Any

from anima.config.vision import DETECTORS, SOURCES, VisionConfig
from anima.errors import AnimaError
from anima.vision.faces.process import describe
from anima.vision.seeing import Counters
from anima.vision.types import Camera, Face, FaceDetector, VideoFrame
from anima.vision.view import Mark


class _Seer:
    """The child's pipeline and its messages to the parent (sent under one lock: frames go from
    the pipeline's worker, replies from the main thread)."""

    def __init__(self, conn: Connection, camera: Camera, detector: FaceDetector) -> None:
        from anima.clock import MonotonicClock
        from anima.vision.pipeline import VisionPipeline

        self._conn = conn
        self._sending = threading.Lock()
        self._latest: VideoFrame | None = None
        self._began = time.process_time()  # the CPU frames cost, not the imports' and loads'
        clock = MonotonicClock(spin_s=0.0)  # a camera's pace needs no spin
        self.pipeline = VisionPipeline(
            camera, detector, self._on_faces, clock=clock, on_end=self._on_end
        )

    def send(self, message: tuple[Any, ...]) -> None:
        with self._sending:
            self._conn.send(message)

    def counters(self) -> Counters:
        s = self.pipeline.stats()
        cpu = time.process_time() - self._began
        return (
            s.frames_in,
            s.processed,
            s.dropped,
            s.errors,
            s.detect_ms_p50,
            s.detect_ms_p95,
            cpu,
        )

    def _on_faces(self, frame: VideoFrame, faces: list[Face]) -> None:
        self._latest = frame
        self.send(
            ("faces", frame.t, frame.index, frame.width, frame.height, faces, self.counters())
        )

    def _on_end(self, reason: str) -> None:
        with contextlib.suppress(OSError):  # the parent went away
            self.send(("ended", reason, self.counters()))

    def view(self, quality: int, marks: Sequence[Mark]) -> bytes | None:
        from anima.vision.view import render

        frame = self._latest
        return None if frame is None else render(frame.image, marks, quality)


def serve_seeing(conn: Connection, config: VisionConfig) -> int:
    """The child's side in ``see`` mode: make the camera and the detector, then answer the
    parent until it says stop or its socket closes."""
    from anima.clock import MonotonicClock

    try:
        camera = SOURCES.load(config.source)(config, MonotonicClock())
        if camera is None:
            raise AnimaError(f"vision.source: {config.source} films nothing")
        detector = DETECTORS.load(config.faces)(config)
    except Exception as exc:
        conn.send(("failed", describe(exc)))
        return 1
    conn.send(("ready", detector.name))
    seer = _Seer(conn, camera, detector)
    started = False
    try:
        while True:
            try:
                message = conn.recv()
            except EOFError:
                return 0
            if message[0] == "start":
                started = True
                try:
                    seer.pipeline.start()
                except Exception as exc:
                    seer.send(("failed", describe(exc)))
                else:
                    seer.send(("started",))
            elif message[0] == "view":
                _, number, quality, marks = message
                seer.send(("view", number, seer.view(quality, marks)))
            elif message[0] == "stop":
                return 0
    except OSError:  # the parent went away mid-reply
        return 0
    finally:
        if started:  # the pipeline's worker closes the detector as it ends
            seer.pipeline.stop(1.0)
        else:
            detector.close()


def serve(conn: Connection) -> int:
    """Read what the child is for, then serve it until the socket closes."""
    try:
        mode, config = conn.recv()
    except EOFError:
        return 0
    if mode == "see":
        return serve_seeing(conn, config)
    from anima.vision.faces.process import serve_detecting

    return serve_detecting(conn, config)


def main(argv: list[str]) -> int:
    logging.basicConfig(level=logging.WARNING, format="anima vision process: %(message)s")
    if len(argv) != 1 or not argv[0].isdigit():
        print("usage: python -m anima.vision.child FD (the runtime starts it)", file=sys.stderr)
        return 2
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is the runtime's to handle
    return serve(Connection(int(argv[0])))


if __name__ == "__main__":
    os._exit(main(sys.argv[1:]))  # no atexit work: the model's threads need no join
