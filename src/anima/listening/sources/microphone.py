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
from anima.errors import SpeechError
from anima.listening.sources.base import FrameSink

logger = logging.getLogger(__name__)


class MicrophoneSource:
    """The microphone through PortAudio (``sounddevice``): 16 kHz if the device allows it,
    otherwise its default rate resampled here. Frames come from PortAudio's callback thread,
    which the stream owns; ``stop`` closes the stream."""

    name = "microphone"

    def __init__(self, *, device: int | str | None = None, block_s: float = FRAME_S) -> None:
        self.device = device  # sounddevice's device index or name substring; None: the default
        self.block_s = block_s  # seconds per PortAudio callback
        self._stream: Any = None  # sounddevice.InputStream (untyped)

    def start(self, sink: FrameSink) -> None:
        from anima.speech.sinks import import_sounddevice  # here: anima.speech imports config

        sd = import_sounddevice("listen", "microphone")
        rate = SAMPLE_RATE
        try:
            sd.check_input_settings(device=self.device, channels=1, dtype="int16", samplerate=rate)
        except Exception:
            try:
                rate = int(sd.query_devices(self.device, "input")["default_samplerate"])
            except Exception as exc:
                raise SpeechError(f"microphone: no input device {self.device!r} ({exc})") from exc
            logger.info("microphone: no 16 kHz input; recording at %d Hz and resampling", rate)
        resampler = StreamResampler(rate)
        framer = Framer()

        def callback(indata: NDArray[np.int16], frames: int, when: object, status: object) -> None:
            if status:
                logger.debug("microphone: %s", status)
            for frame in framer.feed(resampler.feed(indata[:, 0])):
                sink.frame(frame)

        try:
            stream = sd.InputStream(
                samplerate=rate, channels=1, dtype="int16", device=self.device,
                blocksize=round(rate * self.block_s), callback=callback,
                finished_callback=lambda: sink.end("eof"),
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
