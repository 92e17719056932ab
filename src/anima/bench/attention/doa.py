"""Where a voice comes from, measured: GCC-PHAT's error in simulated rooms, its cost per frame,
and the robot's own voice never taken for a person's (``anima bench attention``).

Rooms come from :mod:`anima.testing.array_room` (pyroomacoustics shoeboxes, eSpeak NG talkers
1.5 m away): RT60 0, 0.3 and 0.6 s × SNR 20, 10 and 5 dB (white noise at each microphone),
one talker at a time at each azimuth of a set. Two sets of directions: ``dev`` (−80..80° by
20°, the ones the tests check) and ``heldout`` (−70..70° by 20°, other sentences and noise:
measured only, never tuned on). The speech gate is the listener's VAD (Silero when installed,
else the energy gate) on the channels' mean; the error is over every frame handed on.

The own-voice run plays 60 s of the robot's speech from its loudspeaker (12 cm below the
array) through a real :class:`~anima.speech.reference.PlaybackReference` on a fake clock,
nobody else in the room, and counts the estimates handed on as a target (``own_voice``
false): the figure to hold is 0.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from anima.audio import FRAME_S, FRAME_SAMPLES
from anima.listening.direction.estimator import DirectionEstimator
from anima.listening.vad import EnergyVad, SileroVad, Vad
from anima.speech.reference import PlaybackReference
from anima.speech.sinks import NullSink
from anima.testing.array_room import (
    LINEAR_4,
    SENTENCES,
    Mic,
    angle_error,
    record,
    speech,
    talker,
)
from anima.testing.clock import FakeClock

RT60S = (0.0, 0.3, 0.6)
SNRS = (20.0, 10.0, 5.0)
SETS = {
    "dev": (tuple(range(-80, 81, 20)), 0),  # azimuths (degrees), the first sentence's index
    "heldout": (tuple(range(-70, 71, 20)), 3),
}
LOUDSPEAKER: Mic = (0.0, 0.0, -0.12)  # the robot's speaker: in its body, under the head's array
OWN_S = 60.0  # seconds of the robot's own speech


@dataclass(frozen=True)
class Condition:
    """One room condition over one set of directions: errors in degrees."""

    set: str
    rt60_s: float
    snr_db: float
    median_deg: float
    p90_deg: float
    estimates: int  # frames handed on
    talkers: int


@dataclass(frozen=True)
class OwnVoice:
    """The robot alone, speaking: frames, estimates handed on, and of those, targets."""

    seconds: float
    frames: int
    handed_on: int
    targets: int


@dataclass(frozen=True)
class DoaReport:
    array: str
    kind: str
    vad: str
    conditions: tuple[Condition, ...]
    cost_ms: float  # median per frame (an estimate: FFTs and the pairs' correlations)
    cost_p95_ms: float
    own_voice: OwnVoice
    mono: MonoChoice | None = None


def _vad() -> tuple[Vad, str]:
    silero = SileroVad()
    try:
        silero.load()
    except Exception:
        return EnergyVad(), "energy"
    return silero, "silero"


def _speech_flags(vad: Vad, signals: NDArray[np.int16]) -> list[bool]:
    vad.reset()
    flags = []
    for k in range(len(signals) // FRAME_SAMPLES):
        frame = signals[k * FRAME_SAMPLES : (k + 1) * FRAME_SAMPLES].mean(axis=1)
        flags.append(vad.probability(frame.astype(np.int16)) >= 0.5)
    return flags


def run_condition(
    name: str,
    rt60_s: float,
    snr_db: float,
    *,
    mics: Sequence[Mic] = LINEAR_4,
    vad: Vad | None = None,
    costs: list[float] | None = None,
) -> Condition:
    """One condition over one set (:data:`SETS`); ``costs`` collects seconds per estimate."""
    azimuths, first = SETS[name]
    vad = vad if vad is not None else EnergyVad()
    errors: list[float] = []
    for n, degrees in enumerate(azimuths):
        seed = 1000 * (name == "heldout") + 10 * n + int(10 * rt60_s) + int(snr_db)
        heard = record(mics, [talker(degrees, first + n)], rt60_s=rt60_s, snr_db=snr_db, seed=seed)
        flags = _speech_flags(vad, heard.signals)
        estimator = DirectionEstimator(mics)
        for k, is_speech in enumerate(flags):
            frame = heard.signals[k * FRAME_SAMPLES : (k + 1) * FRAME_SAMPLES]
            began = time.perf_counter()
            got = estimator.frame(frame, (k + 1) * FRAME_S, speech=is_speech)
            if got is not None:
                if costs is not None:
                    costs.append(time.perf_counter() - began)
                errors.append(math.degrees(angle_error(got.azimuth, heard.azimuths[0])))
    values = np.array(errors) if errors else np.array([math.nan])
    return Condition(
        set=name, rt60_s=rt60_s, snr_db=snr_db, median_deg=float(np.median(values)),
        p90_deg=float(np.percentile(values, 90)), estimates=len(errors), talkers=len(azimuths),
    )  # fmt: skip


def run_own_voice(
    *, mics: Sequence[Mic] = LINEAR_4, seconds: float = OWN_S, rt60_s: float = 0.3,
    snr_db: float = 20.0, vad: Vad | None = None,
) -> OwnVoice:  # fmt: skip
    """The robot speaks for ``seconds`` from :data:`LOUDSPEAKER`, nobody else there."""
    parts, total = [], 0
    pause = np.zeros(round(0.4 * 16000), np.int16)
    k = 0
    while total < seconds * 16000:
        said = speech(SENTENCES[k % len(SENTENCES)], wpm=140, pitch=35)
        parts += [said, pause]
        total += len(said) + len(pause)
        k += 1
    voice = np.concatenate(parts)[: round(seconds * 16000)]
    heard = record(
        mics, [], rt60_s=rt60_s, snr_db=snr_db, loudspeaker=LOUDSPEAKER, own_voice=voice,
        seconds=seconds + 1.0, seed=7,
    )  # fmt: skip
    clock = FakeClock()
    reference = PlaybackReference(NullSink(clock))
    reference.start(16000)
    estimator = DirectionEstimator(
        mics, vad=vad if vad is not None else EnergyVad(), reference=reference.reader()
    )
    reference.write(voice)
    frames = len(heard.signals) // FRAME_SAMPLES
    for k in range(frames):
        clock.advance(FRAME_S)
        estimator.frame(heard.signals[k * FRAME_SAMPLES : (k + 1) * FRAME_SAMPLES], clock.now())
    return OwnVoice(seconds, frames, estimator.handed_on, estimator.targets)


@dataclass(frozen=True)
class MonoChoice:
    """What the listener's mono stream gains from the channels' mean over channel 0 alone
    (dB, averaged over the talkers): the voice against the noise, and the voice's own
    2-6 kHz band against its 0.1-1 kHz band (the mean is a beam steered straight ahead: a
    talker to the side loses highs)."""

    snr_gain_db: float
    high_band_change_db: float
    worst_high_band_change_db: float


def run_mono_choice(
    *, mics: Sequence[Mic] = LINEAR_4, rt60_s: float = 0.3, snr_db: float = 10.0
) -> MonoChoice:
    """Channel 0 or the mean, for the dev set's talkers in one room: noise and voice simulated
    apart (the same room once without noise, its noise alone), so each is measured exactly."""
    azimuths, first = SETS["dev"]
    gains, tilts = [], []
    for n, degrees in enumerate(azimuths):
        dry = record(mics, [talker(degrees, first + n)], rt60_s=rt60_s, snr_db=None)
        noisy = record(mics, [talker(degrees, first + n)], rt60_s=rt60_s, snr_db=snr_db, seed=n)
        voice = dry.signals.astype(np.float64)
        noise = noisy.signals.astype(np.float64) - voice
        one, mean = voice[:, 0], voice.mean(axis=1)
        gains.append(_db(mean, noise.mean(axis=1)) - _db(one, noise[:, 0]))
        tilts.append(_tilt_db(mean) - _tilt_db(one))
    return MonoChoice(float(np.mean(gains)), float(np.mean(tilts)), float(np.min(tilts)))


def _db(signal: NDArray[np.float64], noise: NDArray[np.float64]) -> float:
    return 10 * math.log10(float(np.mean(signal**2)) / max(float(np.mean(noise**2)), 1e-12))


def _tilt_db(x: NDArray[np.float64]) -> float:
    power = np.abs(np.fft.rfft(x)) ** 2
    freqs = np.fft.rfftfreq(len(x), 1 / 16000)
    high = float(np.sum(power[(freqs >= 2000) & (freqs <= 6000)]))
    low = float(np.sum(power[(freqs >= 100) & (freqs <= 1000)]))
    return 10 * math.log10(max(high, 1e-12) / max(low, 1e-12))


def run_doa_bench(
    *,
    rt60s: Sequence[float] = RT60S,
    snrs: Sequence[float] = SNRS,
    sets: Sequence[str] = tuple(SETS),
    own_s: float = OWN_S,
    mics: Sequence[Mic] = LINEAR_4,
    progress: Callable[[str], None] | None = None,
) -> DoaReport:
    """Every condition, the cost per frame and the own-voice run (see the module docstring)."""
    vad, vad_name = _vad()
    costs: list[float] = []
    conditions = []
    for name in sets:
        for rt60 in rt60s:
            for snr in snrs:
                conditions.append(run_condition(name, rt60, snr, mics=mics, vad=vad, costs=costs))
                if progress is not None:
                    progress(_line(conditions[-1]))
    own = run_own_voice(mics=mics, seconds=own_s, vad=vad)
    mono = run_mono_choice(mics=mics)
    cost = np.array(costs) * 1000 if costs else np.array([math.nan])
    return DoaReport(
        array=_named(mics), kind=DirectionEstimator(mics).geometry.kind, vad=vad_name,
        conditions=tuple(conditions), cost_ms=float(np.median(cost)),
        cost_p95_ms=float(np.percentile(cost, 95)), own_voice=own, mono=mono,
    )  # fmt: skip


def _named(mics: Sequence[Mic]) -> str:
    if tuple(mics) == LINEAR_4:
        return "4-mic line, 32 mm pitch (Reachy Mini's)"
    return f"{len(mics)} mics"


def _line(c: Condition) -> str:
    return (
        f"  {c.set:8} RT60 {c.rt60_s:.1f} s  SNR {c.snr_db:4.0f} dB   median {c.median_deg:5.1f}°"
        f"  p90 {c.p90_deg:5.1f}°  ({c.estimates} estimates, {c.talkers} talkers)"
    )


def report_lines(report: DoaReport) -> list[str]:
    """The report as text lines (the CLI prints them)."""
    own = report.own_voice
    return [
        f"Voice direction (GCC-PHAT), {report.array}, {report.kind}; speech gate: {report.vad}",
        *(_line(c) for c in report.conditions),
        f"  cost per frame: median {report.cost_ms:.2f} ms, p95 {report.cost_p95_ms:.2f} ms",
        f"  own voice: {own.seconds:.0f} s of the robot speaking, {own.frames} frames, "
        f"{own.handed_on} estimates handed on, {own.targets} as a target (must be 0)",
        *_mono_lines(report.mono),
    ]


def _mono_lines(mono: MonoChoice | None) -> list[str]:
    if mono is None:
        return []
    return [
        f"  the listener's mono: the channels' mean over channel 0: SNR {mono.snr_gain_db:+.1f} dB,"
        f" 2-6 kHz against 0.1-1 kHz {mono.high_band_change_db:+.1f} dB"
        f" (worst talker {mono.worst_high_band_change_db:+.1f} dB)"
    ]


def print_report(report: DoaReport, out: Callable[[str], None] = print) -> None:
    for line in report_lines(report):
        out(line)
