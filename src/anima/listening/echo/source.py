"""The echo canceller in front of a source: :class:`EchoCancelledSource`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from anima.audio import FRAME_SAMPLES, Frame
from anima.errors import ConfigError
from anima.listening.echo.canceller import EchoCanceller, ResidualGuard, make_echo
from anima.listening.sources import AudioSource, FrameSink
from anima.speech.reference import ReferenceReader

if TYPE_CHECKING:
    from anima.config.listening import ListenConfig
    from anima.speech.reference import PlaybackReference


class EchoCancelledSource:
    """An :class:`AudioSource` whose frames have the robot's echo removed (module docstring).

    ``reader`` reads the robot's playback, a frame's worth per microphone frame
    (:meth:`~anima.speech.reference.ReferenceReader.frame`). ``guard`` is the residual-echo
    guard (None: the canceller alone).
    """

    def __init__(
        self,
        source: AudioSource,
        reader: ReferenceReader,
        canceller: EchoCanceller,
        *,
        guard: ResidualGuard | None = None,
    ) -> None:
        self.source = source
        self.name = f"{source.name}+{canceller.name}"
        self.reader = reader
        self.canceller = canceller
        self.guard = guard if guard is not None else ResidualGuard()
        self.frames = 0

    def start(self, sink: FrameSink) -> None:
        self.canceller.load()
        self.source.start(_Cleaning(self, sink))

    def stop(self, timeout: float = 1.0) -> None:
        self.source.stop(timeout)

    def clean(self, mic: Frame) -> Frame:
        """One frame through the canceller and the guard (the source's thread calls this)."""
        frame_ref = self.reader.frame(FRAME_SAMPLES)
        cleaned = self.canceller.process(mic, frame_ref)
        self.frames += 1
        return self.guard.check(mic, cleaned, frame_ref)


class _Cleaning:
    def __init__(self, owner: EchoCancelledSource, sink: FrameSink) -> None:
        self._owner = owner
        self._sink = sink

    def frame(self, samples: Frame) -> None:
        self._sink.frame(self._owner.clean(samples))

    def end(self, reason: str) -> None:
        self._sink.end(reason)


def echo_cancelled(
    source: AudioSource, config: ListenConfig, playback: PlaybackReference | None
) -> EchoCancelledSource:
    """Full duplex: ``source`` with the robot's own voice taken out (the canceller
    ``config.echo`` names, fed what the speech sink played: ``playback``)."""
    if playback is None:
        raise ConfigError("listen.duplex needs the runtime's speech (a TTS engine and its sink)")
    return EchoCancelledSource(source, playback.reader(), make_echo(config.echo))
