"""Whisper's input: the 80-band log-mel spectrogram of 16 kHz audio, in numpy.

The same computation as OpenAI Whisper's ``log_mel_spectrogram`` (a 400-sample Hann window,
hop 160 = 100 frames per second, Slaney mel filters, log10 floored at 8 below the maximum, then
scaled to about [-1, 1]); the filter bank is computed as librosa does, after faster-whisper's
``FeatureExtractor`` (MIT). It is here rather than imported so the ``listen`` extra needs only
CTranslate2 and a tokenizer: faster-whisper also installs PyAV (~100 MB of FFmpeg) and a model
downloader, neither of which anima wants.

Unlike Whisper's 30 s window, the spectrogram covers only the utterance and ``pad_s`` of digital
silence after it: the encoder's cost grows with the frames it is given, so a 3 s command costs a
tenth of a 30 s window, and the silence tells the decoder that the speech has ended (cut without
it, the decoder invents a continuation).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

SAMPLE_RATE = 16000
N_FFT = 400
HOP = 160  # samples per spectrogram frame: 100 frames per second
N_MELS = 80  # Whisper tiny … medium; large-v3 has 128
MAX_FRAMES = 3000  # the encoder's window: 30 s


@cache
def mel_filters(n_mels: int = N_MELS) -> NDArray[np.float32]:
    """The Slaney-style mel filter bank, ``(n_mels, N_FFT // 2 + 1)`` (librosa's ``mel``)."""
    fft_freqs = np.fft.rfftfreq(n=N_FFT, d=1.0 / SAMPLE_RATE)
    mels = np.linspace(0.0, 45.245640471924965, n_mels + 2)  # 0 Hz … 8 kHz on the Slaney scale
    f_sp = 200.0 / 3  # linear below 1 kHz: 66.7 Hz per mel
    freqs = f_sp * mels
    min_log_mel = 1000.0 / f_sp  # logarithmic above 1 kHz
    logstep = np.log(6.4) / 27.0
    log_t = mels >= min_log_mel
    freqs[log_t] = 1000.0 * np.exp(logstep * (mels[log_t] - min_log_mel))
    fdiff = np.diff(freqs)
    ramps = freqs.reshape(-1, 1) - fft_freqs.reshape(1, -1)
    lower = -ramps[:-2] / fdiff[:-1, None]
    upper = ramps[2:] / fdiff[1:, None]
    weights = np.maximum(0.0, np.minimum(lower, upper))
    weights *= (2.0 / (freqs[2 : n_mels + 2] - freqs[:n_mels]))[:, None]  # equal energy per band
    return weights.astype(np.float32)


@cache
def _window() -> NDArray[np.float32]:
    return np.hanning(N_FFT + 1)[:-1].astype(np.float32)  # periodic Hann, as torch.hann_window


def log_mel(audio: NDArray[np.float32], *, pad_s: float = 1.0) -> NDArray[np.float32]:
    """The log-mel spectrogram ``(N_MELS, frames)`` of ``audio`` (16 kHz, float in [-1, 1])
    followed by ``pad_s`` seconds of silence: an even number of frames (the encoder halves
    them), at most :data:`MAX_FRAMES` (the audio's end is dropped past 30 s)."""
    padded = np.concatenate(
        [audio.astype(np.float32), np.zeros(round(pad_s * SAMPLE_RATE), np.float32)]
    )
    frames = min(MAX_FRAMES, len(padded) // HOP)
    frames -= frames % 2
    padded = padded[: frames * HOP]
    # centred frames (reflect padding), the last one dropped: Whisper's torch.stft(...)[..., :-1]
    centred = np.pad(padded, (N_FFT // 2, N_FFT // 2), mode="reflect")
    strided = np.lib.stride_tricks.sliding_window_view(centred, N_FFT)[::HOP][:frames]
    spectrum = np.fft.rfft(strided * _window(), axis=-1)
    power = (spectrum.real**2 + spectrum.imag**2).astype(np.float32).T
    log_spec = np.log10(np.maximum(mel_filters() @ power, 1e-10))
    log_spec = np.maximum(log_spec, log_spec.max() - 8.0)
    return np.ascontiguousarray((log_spec + 4.0) / 4.0, dtype=np.float32)


_SILENCE: dict[str, NDArray[np.float32]] = {}  # model directory → encoder output of 30 s silence
_SILENCE_LOCK = threading.Lock()


def encoded_silence(model_dir: str, encode: Callable[[NDArray[np.float32]], Any]) -> Any:
    """The encoder's output for 30 s of digital silence, computed once per model and process
    (the recognizer and the wake spotter share tiny.en's): the rest of a short window."""
    with _SILENCE_LOCK:
        if model_dir not in _SILENCE:
            features = log_mel(np.zeros(0, np.float32), pad_s=30.0)
            _SILENCE[model_dir] = np.asarray(encode(features))
        return _SILENCE[model_dir]


def full_window(encoded: Any, silence: NDArray[np.float32]) -> NDArray[np.float32]:
    """A short window's encoding followed by silence's up to 30 s: what the decoder was trained
    to read (given only the short window it invents words; see whisper.py)."""
    head = np.asarray(encoded)
    return np.ascontiguousarray(np.concatenate([head, silence[:, head.shape[1] :]], axis=1))
