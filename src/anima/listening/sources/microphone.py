"""The microphone through PortAudio (``sounddevice``)."""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
from numpy.typing import NDArray

from anima.audio import (
    FRAME_S,
    SAMPLE_RATE,
    Framer,
    StreamResampler,
)
from anima.errors import ConfigError, SpeechError
from anima.listening.sources.base import FrameSink, MultiFrameSink
from anima.listening.sources.wav import ChannelFramer

logger = logging.getLogger(__name__)

MAX_CHANNELS = 32  # a USB array has 4-16 microphones; past this a typo


class MicrophoneSource:
    """The microphone through PortAudio (``sounddevice``): 16 kHz if the device allows it,
    otherwise its default rate resampled here. Frames come from PortAudio's callback thread,
    which the stream owns; ``stop`` closes the stream.

    ``channels`` > 1 opens a microphone array: the listener hears their mean, and ``multi`` (a
    :class:`~anima.listening.sources.base.MultiFrameSink`) gets every channel of each frame,
    just before its mean goes to the sink."""

    name = "microphone"

    def __init__(
        self,
        *,
        device: int | str | None = None,
        block_s: float = FRAME_S,
        channels: int = 1,
        multi: MultiFrameSink | None = None,
    ) -> None:
        if not 1 <= channels <= MAX_CHANNELS:
            raise ConfigError(f"microphone: channels must be 1-{MAX_CHANNELS}, got {channels}")
        self.device = device  # sounddevice's device index or name substring; None: the default
        self.block_s = block_s  # seconds per PortAudio callback
        self.channels = channels  # the array's microphones (listen.mics), or 1
        self.multi = multi  # every channel of each frame (the direction of arrival)
        self._stream: Any = None  # sounddevice.InputStream (untyped)

    def start(self, sink: FrameSink) -> None:
        from anima.speech.sinks import import_sounddevice  # here: anima.speech imports config

        sd = import_sounddevice("listen", "microphone")
        rate = SAMPLE_RATE
        try:
            sd.check_input_settings(
                device=self.device, channels=self.channels, dtype="int16", samplerate=rate
            )
        except Exception:
            try:
                rate = int(sd.query_devices(self.device, "input")["default_samplerate"])
            except Exception as exc:
                raise SpeechError(f"microphone: no input device {self.device!r} ({exc})") from exc
            logger.info("microphone: no 16 kHz input; recording at %d Hz and resampling", rate)
        resampler = StreamResampler(rate)
        framer = Framer()
        multi, array = self.multi, ChannelFramer(rate, self.channels)

        def callback(indata: NDArray[np.int16], frames: int, when: object, status: object) -> None:
            if status:
                logger.debug("microphone: %s", status)
            mono = indata[:, 0] if indata.shape[1] == 1 else indata.mean(axis=1).astype(np.int16)
            every = array.feed(indata) if multi is not None else []
            for k, frame in enumerate(framer.feed(resampler.feed(mono))):
                if multi is not None and k < len(every):
                    multi.frame(every[k])
                sink.frame(frame)

        try:
            stream = sd.InputStream(
                samplerate=rate, channels=self.channels, dtype="int16", device=self.device,
                blocksize=round(rate * self.block_s), callback=callback,
                finished_callback=lambda: _ended(sink, multi),
            )  # fmt: skip
            stream.start()
        except Exception as exc:
            raise SpeechError(f"microphone: cannot open the input ({exc})") from exc
        self._stream = stream

    def stop(self, timeout: float = 1.0) -> None:
        stream, self._stream = self._stream, None
        if stream is None:
            return
        try:
            stream.close()
        except Exception:
            logger.exception("microphone: closing the stream failed")


def _ended(sink: FrameSink, multi: MultiFrameSink | None) -> None:
    if multi is not None:
        multi.end("eof")
    sink.end("eof")
