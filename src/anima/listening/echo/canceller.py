"""Echo cancellation: the robot's own voice taken out of its microphone (full duplex).

An :class:`EchoCanceller` gets each 32 ms microphone frame with the **reference**, what the
robot's loudspeaker played over the same 32 ms (from
:class:`~anima.speech.reference.PlaybackReference`, zeros while it is silent), and returns the
frame with the echo removed. The registry (``listen.echo``):

- ``webrtc`` (``auto`` when the ``duplex`` extra is installed): WebRTC's audio processing
  module (AEC3 with its own delay estimator, and a high-pass filter), as shipped in the
  ``livekit`` wheel (Apache-2.0; ``rtc.AudioProcessingModule``, 10 ms blocks, ~0.1 ms each).
- ``none``: the frame as it is (a headset, or a robot that does not hear itself).

A second guard follows the canceller (:class:`ResidualGuard`): where the reference explains
what is left — the robot is playing and the frame holds no more than the echo the canceller
leaves behind — the frame is damped, so residual echo never looks like a person to the VAD.

:class:`~anima.listening.echo.source.EchoCancelledSource` puts both in front of any
:class:`~anima.listening.sources.AudioSource`: everything downstream (VAD, wake word,
recognizer, turn detector) hears the cleaned stream, and nothing else changes.
"""

from __future__ import annotations

import importlib.util
import math
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from anima.audio import FRAME_SAMPLES, SAMPLE_RATE, Frame
from anima.config.listening_parts import ECHOS
from anima.errors import MissingDependencyError

_BLOCK = SAMPLE_RATE // 100  # WebRTC's audio processing works on 10 ms blocks


class EchoCanceller(Protocol):
    """Removes the reference's echo from the microphone, frame by frame (one thread)."""

    name: str

    def load(self) -> None:
        """Load the engine (before the first frame)."""
        ...

    def process(self, mic: Frame, reference: Frame) -> Frame:
        """``mic`` (:data:`FRAME_SAMPLES` at 16 kHz) without the echo of ``reference`` (what was
        played over the same frame)."""
        ...


class NoEcho:
    """No canceller: the microphone as it is."""

    name = "none"

    def load(self) -> None:
        pass

    def process(self, mic: Frame, reference: Frame) -> Frame:
        return mic


class WebRtcEcho:
    """WebRTC AEC3 through the ``livekit`` wheel's audio processing module.

    Frames are cut into 10 ms blocks; the output lags the input by one block (10 ms), which
    keeps every output frame whole. ``delay_ms`` is the hint WebRTC's delay estimator starts
    from (its own estimate follows the real path)."""

    name = "webrtc"

    def __init__(self, *, delay_ms: int = 40, noise_suppression: bool = False) -> None:
        self.delay_ms = delay_ms
        self.noise_suppression = noise_suppression
        self._apm: Any = None
        self._rtc: Any = None
        self._mic = np.zeros(0, np.int16)
        self._ref = np.zeros(0, np.int16)
        self._out = np.zeros(_BLOCK, np.int16)  # the one-block lag

    def load(self) -> None:
        if self._apm is not None:
            return
        try:
            from livekit import rtc
        except ImportError as exc:
            raise MissingDependencyError("livekit", "duplex") from exc
        self._rtc = rtc
        self._apm = rtc.AudioProcessingModule(
            echo_cancellation=True, noise_suppression=self.noise_suppression,
            high_pass_filter=True, auto_gain_control=False,
        )  # fmt: skip
        self._apm.set_stream_delay_ms(self.delay_ms)

    def process(self, mic: Frame, reference: Frame) -> Frame:
        self.load()
        rtc = self._rtc
        self._mic = np.concatenate([self._mic, mic])
        self._ref = np.concatenate([self._ref, reference])
        done: list[NDArray[np.int16]] = [self._out]
        while len(self._mic) >= _BLOCK:
            ref = bytearray(self._ref[:_BLOCK].tobytes())
            near = bytearray(self._mic[:_BLOCK].tobytes())
            self._apm.process_reverse_stream(rtc.AudioFrame(ref, SAMPLE_RATE, 1, _BLOCK))
            frame = rtc.AudioFrame(near, SAMPLE_RATE, 1, _BLOCK)
            self._apm.process_stream(frame)
            done.append(np.frombuffer(bytes(frame.data), dtype=np.int16))
            self._mic, self._ref = self._mic[_BLOCK:], self._ref[_BLOCK:]
        out = np.concatenate(done)
        self._out = out[FRAME_SAMPLES:]
        return out[:FRAME_SAMPLES]


def _rms(x: NDArray[Any]) -> float:
    return float(np.sqrt(np.mean(np.square(x, dtype=np.float64)))) if len(x) else 0.0


class ResidualGuard:
    """Damps frames that the reference explains (see the module docstring).

    It learns how loud the robot comes back: the coupling (the microphone's level against the
    reference's, over frames where the robot plays; the lower quartile of the last ~3 s, so a
    person talking over the robot does not raise it) and how much of that the canceller leaves
    (the same statistic on its output). A frame is the robot's when the reference is playing and
    the cleaned frame is within ``margin_db`` of that expected residual; it is then multiplied by
    ``damp_db``. With the robot silent every frame passes as it is.
    """

    def __init__(self, *, margin_db: float = 6.0, damp_db: float = -40.0) -> None:
        self.margin = 10 ** (margin_db / 20)
        self.damp = 10 ** (damp_db / 20)
        self._residual: list[float] = []  # cleaned level / reference level, frames the robot played
        self.explained = 0  # frames damped so far
        self.last_explained = False

    def check(self, mic: Frame, cleaned: Frame, reference: Frame) -> Frame:
        ref = _rms(reference)
        self.last_explained = False
        if ref < 30.0:  # the robot is silent (or nearly)
            return cleaned
        clean = _rms(cleaned)
        self._residual.append(clean / ref)
        if len(self._residual) > 96:
            del self._residual[0]
        expected = float(np.quantile(self._residual, 0.25)) * ref
        if clean > expected * self.margin:
            return cleaned  # more than the echo leaves: somebody is there
        self.explained += 1
        self.last_explained = True
        return (cleaned.astype(np.float64) * self.damp).astype(np.int16)


def echo_available() -> bool:
    return importlib.util.find_spec("livekit") is not None


def make_echo(name: str) -> EchoCanceller:
    """``listen.echo`` (:data:`~anima.listening.registry.ECHOS`): ``auto`` (WebRTC when
    installed, else none), ``webrtc`` or ``none``."""
    made: EchoCanceller = ECHOS.load(name)()
    return made


def auto_echo() -> EchoCanceller:
    """``listen.echo: auto``: WebRTC's when the ``duplex`` extra is installed, else none."""
    return WebRtcEcho() if echo_available() else NoEcho()


def erle_db(echo: NDArray[Any], residual: NDArray[Any]) -> float:
    """Echo return loss enhancement: how much quieter the echo came out, in dB."""
    e, r = _rms(echo), _rms(residual)
    return math.inf if r == 0 else 20 * math.log10(max(e, 1e-9) / r)
