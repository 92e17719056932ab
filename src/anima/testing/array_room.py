"""Simulated rooms for a microphone array: talkers at chosen directions, reverberation, noise,
and the robot's own voice from its loudspeaker (for where a voice comes from).

:func:`record` builds a ``pyroomacoustics`` shoebox (MIT; the ``dev`` extra, imported here
only) with the RT60 asked for (Sabine's absorption; image sources up to :data:`EARLY_ORDER`
reflections, then a diffuse tail of many plane waves that decays at that RT60, as coherent
between close microphones as a real room's: the full image-source order a 0.6 s room asks
took seconds per room), puts the array
(``listen.mics``, robot frame) in it with the robot facing the room's +x, a talker at each
:class:`Talker`'s azimuth and distance from the array's centre, and the robot's loudspeaker
at its place in the robot frame; simulates, adds white noise independent at each microphone
at ``snr_db`` below the active sound (at the first microphone), and returns the
N-channel 16 kHz int16 signal with the true direction of each talker.

Speech is real speech from anima's own eSpeak NG engine (:func:`speech`, cached; the
``libespeak-ng1`` Debian package): white noise would be an easy signal, not a voice.
"""

from __future__ import annotations

import functools
import importlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import ModuleType

import numpy as np
from numpy.typing import NDArray

from anima.audio import SAMPLE_RATE, resample
from anima.errors import MissingDependencyError
from anima.listening.direction.gcc_phat import SPEED_OF_SOUND

Mic = tuple[float, float, float]
# Reachy Mini's head: four microphones in a line across it, 32 mm apart (the XVF3800 board)
LINEAR_4 = ((0.0, 0.048, 0.0), (0.0, 0.016, 0.0), (0.0, -0.016, 0.0), (0.0, -0.048, 0.0))
SQUARE_4 = ((0.03, 0.03, 0.0), (-0.03, 0.03, 0.0), (-0.03, -0.03, 0.0), (0.03, -0.03, 0.0))
SENTENCES = (
    "Hello there, could you look over here for a moment please?",
    "I was wondering what the weather will be like tomorrow morning.",
    "The little robot waved at everyone who walked into the kitchen.",
    "Can you tell me a story about the sea and the mountains?",
    "We should probably leave before the traffic gets any worse.",
    "My favourite colour is green, like the trees in the park.",
)
# image-source reflections computed (a 0.6 s room asks ~90 and seconds to build); past the
# time they are complete, the tail is a diffuse field (_with_tail)
EARLY_ORDER = 8
TAIL_WAVES = 64  # plane waves from random directions that make the diffuse tail


@dataclass(frozen=True)
class Talker:
    """A person at ``azimuth`` (radians, robot frame, from the array's centre) ``distance``
    metres away, their mouth ``height`` above the array, saying ``samples`` (16 kHz int16)
    from ``start_s``."""

    azimuth: float
    samples: NDArray[np.int16] = field(repr=False)
    distance: float = 1.5
    height: float = 0.0
    start_s: float = 0.0


@dataclass(frozen=True)
class Recording:
    """What the array heard: ``signals`` (samples × microphones, int16 at 16 kHz), each
    talker's true ``azimuths`` and ``elevations`` (radians) from the array's centre, in order,
    and the room's RT60 as simulated (``rt60_s``, Sabine's)."""

    signals: NDArray[np.int16] = field(repr=False)
    azimuths: tuple[float, ...]
    elevations: tuple[float, ...]
    rt60_s: float


@functools.cache
def speech(text: str, wpm: int = 165, pitch: int = 50) -> NDArray[np.int16]:
    """``text`` spoken by eSpeak NG (anima's engine) at 16 kHz; an AnimaError when it is not
    installed."""
    from anima.speech.base import Cancel
    from anima.speech.espeak.espeak import EspeakEngine

    engine = EspeakEngine(wpm=wpm, pitch=pitch)
    engine.load()
    chunks = list(engine.synthesize(text, "en-US", Cancel()))
    samples = np.concatenate([c.samples for c in chunks])
    out = resample(samples, chunks[0].sample_rate)
    out.setflags(write=False)
    return out


def _pyroomacoustics() -> ModuleType:
    """pyroomacoustics (no type information: its names are Any through the module object)."""
    try:
        return importlib.import_module("pyroomacoustics")
    except ImportError as exc:
        raise MissingDependencyError("pyroomacoustics", "dev") from exc


def record(
    mics: Sequence[Mic],
    talkers: Sequence[Talker],
    *,
    rt60_s: float = 0.3,
    snr_db: float | None = 10.0,
    dims: tuple[float, float, float] = (5.0, 4.0, 2.8),
    robot_at: tuple[float, float, float] = (2.2, 1.9, 1.2),
    loudspeaker: Mic | None = None,
    own_voice: NDArray[np.int16] | None = None,
    own_gain_db: float = 0.0,
    level_dbfs: float = -26.0,
    seconds: float | None = None,
    seed: int = 0,
) -> Recording:
    """The array ``mics`` hearing ``talkers`` in a shoebox (see the module docstring).

    ``robot_at``: the robot's origin in the room (metres); ``loudspeaker``: where its speaker
    is in the robot frame, playing ``own_voice`` (16 kHz) from the start at ``own_gain_db``
    against the samples as given; ``rt60_s`` 0: an anechoic room. The sound is scaled so its
    active level at the first microphone is ``level_dbfs`` (before the noise). ``seconds``:
    the length (default: until the last sound ends, plus the room's ring)."""
    pra = _pyroomacoustics()
    origin = np.asarray(robot_at, np.float64)
    positions = origin + np.asarray(mics, np.float64)
    centre = positions.mean(axis=0)
    if rt60_s > 0:
        absorption, order = pra.inverse_sabine(rt60_s, list(dims))
        room = pra.ShoeBox(
            list(dims), fs=SAMPLE_RATE, materials=pra.Material(absorption),
            max_order=min(order, EARLY_ORDER), air_absorption=False,
        )  # fmt: skip
    else:
        room = pra.AnechoicRoom(fs=SAMPLE_RATE)
    room.add_microphone_array(positions.T)
    azimuths, elevations = [], []
    sounds: list[tuple[NDArray[np.float64], float]] = []
    for talker in talkers:
        horizontal = talker.distance * np.array(
            [math.cos(talker.azimuth), math.sin(talker.azimuth), 0.0]
        )
        where = centre + horizontal + np.array([0.0, 0.0, talker.height])
        if rt60_s > 0 and not all(0.1 < where[k] < dims[k] - 0.1 for k in range(3)):
            raise ValueError(f"talker at {np.degrees(talker.azimuth):.0f}° is outside the room")
        room.add_source(where)
        sounds.append((talker.samples.astype(np.float64), talker.start_s))
        azimuths.append(talker.azimuth)
        elevations.append(math.atan2(talker.height, talker.distance))
    if own_voice is not None:
        if loudspeaker is None:
            raise ValueError("own_voice needs the loudspeaker's place")
        room.add_source(origin + np.asarray(loudspeaker))
        sounds.append((own_voice.astype(np.float64) * 10 ** (own_gain_db / 20), 0.0))
    room.compute_rir()
    rng = np.random.default_rng(seed + 1)
    parts = []
    for s, (samples, start_s) in enumerate(sounds):
        rirs = [np.asarray(room.rir[m][s], np.float64) for m in range(len(positions))]
        if rt60_s > 0:
            rirs = _with_tail(rirs, positions, rt60_s, min(dims), rng)
        parts.append((_convolve(samples, rirs), round(start_s * SAMPLE_RATE)))
    length = max((len(p) + at for p, at in parts), default=0)
    heard = np.zeros((length, len(positions)))
    for part, at in parts:
        heard[at : at + len(part)] += part
    if seconds is not None:
        n = round(seconds * SAMPLE_RATE)
        heard = np.pad(heard, ((0, max(0, n - len(heard))), (0, 0)))[:n]
    level = _active_rms(heard[:, 0])
    if level > 0:
        heard *= 32768 * 10 ** (level_dbfs / 20) / level  # a microphone's gain set for speech
    if snr_db is not None:
        heard = heard + _noise(heard, snr_db, seed)
    peak = float(np.abs(heard).max()) or 1.0
    if peak > 32000:
        heard *= 32000 / peak
    signals = np.round(heard).astype(np.int16)
    return Recording(signals, tuple(azimuths), tuple(elevations), rt60_s if rt60_s > 0 else 0.0)


def _convolve(samples: NDArray[np.float64], rirs: list[NDArray[np.float64]]) -> NDArray[np.float64]:
    """``samples`` through each microphone's impulse response: samples × microphones."""
    n = len(samples) + max(len(r) for r in rirs) - 1
    size = 1 << (n - 1).bit_length()
    spectrum = np.fft.rfft(samples, size)
    out = [np.fft.irfft(spectrum * np.fft.rfft(r, size), size)[:n] for r in rirs]
    return np.stack(out, axis=1)


def _with_tail(
    rirs: list[NDArray[np.float64]],
    positions: NDArray[np.float64],
    rt60_s: float,
    smallest: float,
    rng: np.random.Generator,
) -> list[NDArray[np.float64]]:
    """The image sources' responses up to the time they are complete (``EARLY_ORDER``
    reflections across the room's smallest side), then a diffuse tail decaying 60 dB in
    ``rt60_s``: :data:`TAIL_WAVES` noise plane waves from random directions, each reaching
    each microphone at its own delay, so the tail is as coherent between close microphones
    as a real room's (independent noise per microphone would be an easy room). Its level
    continues the image sources' over the half before the crossover."""
    cross = round(EARLY_ORDER * smallest / SPEED_OF_SOUND * SAMPLE_RATE)
    length = cross + round(rt60_s * SAMPLE_RATE)
    early = np.zeros((len(rirs), length))
    for m, r in enumerate(rirs):
        early[m, : min(length, len(r))] = r[:length]
    t = np.arange(length) / SAMPLE_RATE
    decay = 10 ** (-3 * t / rt60_s)  # amplitude: −60 dB at rt60
    half = slice(cross // 2, cross)
    measured = float(np.mean(early[:, half] ** 2))
    envelope = float(np.mean(decay[half] ** 2))
    gain = math.sqrt(measured / envelope) if envelope > 0 else 0.0
    directions = rng.standard_normal((TAIL_WAVES, 3))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    size = 1 << (length - 1).bit_length()
    waves = np.fft.rfft(rng.standard_normal((TAIL_WAVES, length)) / math.sqrt(TAIL_WAVES), size)
    omega = 2 * np.pi * np.fft.rfftfreq(size, 1 / SAMPLE_RATE)
    out = []
    for m, p in enumerate(positions):
        lags = -(directions @ p) / SPEED_OF_SOUND  # s: each wave at this microphone
        field_ = np.fft.irfft((waves * np.exp(-1j * np.outer(lags, omega))).sum(axis=0), size)
        tail = field_[:length] * decay * gain
        tail[:cross] *= 0.0
        ramp = min(cross, 160)  # 10 ms cross-fade from the image sources to the tail
        fade = np.linspace(0.0, 1.0, ramp)
        rir = early[m].copy()
        rir[cross - ramp : cross] *= 1 - fade
        rir[cross:] = 0.0
        tail[cross - ramp : cross] = (field_[cross - ramp : cross] * decay[cross - ramp : cross]
                                      * gain * fade)  # fmt: skip
        out.append(rir + tail)
    return out


def _active_rms(x: NDArray[np.float64]) -> float:
    """The RMS of ``x``'s frames within 20 dB of its loudest: the voice, not the pauses."""
    n = len(x) // 512 * 512
    if n == 0:
        return 0.0
    power = np.mean(x[:n].reshape(-1, 512) ** 2, axis=1)
    if float(np.max(power)) <= 0:
        return 0.0
    return math.sqrt(float(np.mean(power[power >= 0.01 * float(np.max(power))])))


def _noise(heard: NDArray[np.float64], snr_db: float, seed: int) -> NDArray[np.float64]:
    """White noise, independent at each microphone, ``snr_db`` below the active sound at the
    first microphone."""
    level = _active_rms(heard[:, 0]) or 1000.0
    rng = np.random.default_rng(seed)
    noise: NDArray[np.float64] = rng.standard_normal(heard.shape) * level * 10 ** (-snr_db / 20)
    return noise


def delayed(x: NDArray[np.float64], samples: float) -> NDArray[np.float64]:
    """``x`` delayed by a fractional number of samples (exact for a band-limited signal)."""
    n = 1 << (len(x) + 64).bit_length()
    f = np.fft.rfftfreq(n)
    spectrum = np.fft.rfft(x, n) * np.exp(-2j * np.pi * f * samples)
    out: NDArray[np.float64] = np.fft.irfft(spectrum, n)[: len(x)]
    return out


def plane_wave(
    mics: Sequence[Mic],
    azimuth: float,
    elevation: float = 0.0,
    *,
    n: int = 1536,
    rate: int = SAMPLE_RATE,
    seed: int = 0,
) -> NDArray[np.float64]:
    """What ``mics`` hear of white noise (unit RMS) from a far source at (azimuth, elevation),
    radians: samples × microphones, no room, no noise: the ideal case, exact to the sample's
    fraction."""
    rng = np.random.default_rng(seed)
    source = rng.standard_normal(n + 256)
    u = np.array(
        [
            math.cos(elevation) * math.cos(azimuth),
            math.cos(elevation) * math.sin(azimuth),
            math.sin(elevation),
        ]
    )
    lags = [-float(np.dot(p, u)) / SPEED_OF_SOUND * rate for p in mics]
    return np.stack([delayed(source, 8 + lag)[128 : 128 + n] for lag in lags], axis=1)


def talker(azimuth_deg: float, index: int = 0, **kwargs: float) -> Talker:
    """A talker at ``azimuth_deg`` saying :data:`SENTENCES`'s ``index``-th sentence."""
    text = SENTENCES[index % len(SENTENCES)]
    return Talker(math.radians(azimuth_deg), speech(text), **kwargs)


def turned(mics: Sequence[Mic], yaw: float) -> tuple[Mic, ...]:
    """The array ``mics`` turned by ``yaw`` (radians, positive: left) about the robot's z axis
    through its origin: an array on the head, with the head turned (roll and pitch at 0)."""
    c, s = math.cos(yaw), math.sin(yaw)
    return tuple((c * x - s * y, s * x + c * y, z) for x, y, z in mics)


def angle_error(a: float, b: float) -> float:
    """The absolute difference of two angles (radians), wrapped to [0, π]."""
    return abs((a - b + math.pi) % (2 * math.pi) - math.pi)
