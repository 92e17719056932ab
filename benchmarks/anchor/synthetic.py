"""What stands in for the conversation app's microphone-free inputs during the anchor's run.

- **Speech**: a synthetic voice (a gliding 110-150 Hz buzz with eight harmonics, four syllables a
  second, a pause at the end of each 3 s utterance) fed to the app's real ``HeadWobbler`` as
  base64 PCM16 at 24 kHz in 100 ms chunks, each utterance in one burst as the realtime API's
  ``response.output_audio.delta`` events bring it (faster than it plays).
- **Face**: a face drifting slowly left-right and up-down, written into the app's real
  ``CameraWorker`` every 40 ms (its loop's sleep) the way its own thread writes a tracked face:
  the look-at pose's translation and xyz Euler angles scaled by 0.6, as numpy floats, under its
  ``face_tracking_lock``. Its thread (camera frames, the head tracker) is not started: no camera.

Both run on threads of their own, as the app's producers do; neither runs on the loop's thread.
"""

from __future__ import annotations

import base64
import math
import threading
from collections.abc import Callable
from typing import Protocol

import numpy as np
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation

SAMPLE_RATE = 24_000  # head_wobbler.SAMPLE_RATE: the realtime API's PCM16 rate
CHUNK_S = 0.1  # one audio delta
UTTERANCE_S = 3.0  # fed in one burst, then the next when this one has played
PAUSE_S = 0.4  # silence closing each utterance
CAMERA_PERIOD_S = 0.04  # camera_worker.py's sleep between frames
FACE_SCALE = 0.6  # camera_worker.py scales the look-at pose by this ("smaller FOV")


def utterance(seconds: float = UTTERANCE_S, rate: int = SAMPLE_RATE) -> NDArray[np.int16]:
    """One synthetic utterance: voiced syllables at ~-12 dBFS peaks, then a pause."""
    t = np.arange(int(seconds * rate)) / rate
    f0 = 130.0 + 20.0 * np.sin(2 * np.pi * 0.5 * t)
    phase = 2 * np.pi * np.cumsum(f0) / rate
    voiced: NDArray[np.float64] = np.sum([np.sin(k * phase) / k for k in range(1, 9)], axis=0)
    syllables = 0.5 - 0.5 * np.cos(2 * np.pi * 4.0 * t)
    signal = voiced / np.max(np.abs(voiced)) * syllables * 0.25
    signal[t >= seconds - PAUSE_S] = 0.0
    pcm: NDArray[np.int16] = (signal * 32767).astype(np.int16)
    return pcm


def deltas(audio: NDArray[np.int16], rate: int = SAMPLE_RATE) -> list[str]:
    """``audio`` cut into base64 PCM16 chunks of ``CHUNK_S``, as the app receives them."""
    step = int(CHUNK_S * rate)
    return [
        base64.b64encode(audio[i : i + step].tobytes()).decode() for i in range(0, audio.size, step)
    ]


class FaceOffsets(Protocol):
    """The part of the app's ``CameraWorker`` its own thread writes a tracked face through."""

    face_tracking_offsets: list[float]
    face_tracking_lock: threading.Lock


def face_offsets(t: float) -> list[float]:
    """The offsets camera_worker.py derives from a look-at pose, for a face moving with ``t``."""
    yaw = 0.35 * math.sin(2 * math.pi * 0.2 * t)
    pitch = 0.15 * math.sin(2 * math.pi * 0.13 * t)
    pose = np.eye(4)
    pose[:3, :3] = Rotation.from_euler("xyz", [0.0, pitch, yaw]).as_matrix()
    pose[:3, 3] = [0.0, 0.02 * math.sin(yaw), 0.01 * math.sin(pitch)]
    translation = pose[:3, 3] * FACE_SCALE
    rotation = Rotation.from_matrix(pose[:3, :3]).as_euler("xyz", degrees=False) * FACE_SCALE
    return [translation[0], translation[1], translation[2], rotation[0], rotation[1], rotation[2]]


class Feeders:
    """The speech and face producers' threads; ``start``, then ``stop`` (bounded join)."""

    def __init__(self, feed_audio: Callable[[str], None], camera: FaceOffsets) -> None:
        self._feed_audio = feed_audio
        self._camera = camera
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._speak, name="anchor-speech", daemon=True),
            threading.Thread(target=self._see, name="anchor-face", daemon=True),
        ]
        self._utterance = deltas(utterance())
        self.utterances = 0
        self.face_updates = 0

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout)

    def _speak(self) -> None:
        while True:
            for delta in self._utterance:
                self._feed_audio(delta)
            self.utterances += 1
            if self._stop.wait(UTTERANCE_S):
                return

    def _see(self) -> None:
        t = 0.0
        while not self._stop.wait(CAMERA_PERIOD_S):
            t += CAMERA_PERIOD_S
            offsets = face_offsets(t)
            with self._camera.face_tracking_lock:
                self._camera.face_tracking_offsets = offsets
            self.face_updates += 1
