"""GCC-PHAT: the time difference of arrival between two microphones, and the direction it gives.

For a pair (i, j), the cross-power spectrum of their signals, whitened (each bin divided by its
magnitude: the *phase transform*, so reverberation's strong low bins do not dominate), is
summed back into a correlation over lags. Its peak is the delay ``τ = t_j − t_i`` of the
sound at j after i. The correlation is evaluated straight from the spectrum at any fractional
lag (``Σ_k W_k e^{iω_k τ}``: band-limited interpolation, no upsampled FFT): first on a coarse
grid over the lags the pair can have (``± spacing / c``), then finely around the best one, so
the peak's position is sub-sample (a 96 mm pair spans only ±4.5 samples at 16 kHz).

A plane wave from the unit direction ``u`` reaches microphone m at ``−p_m·u / c`` (earlier at
the microphone nearer the talker), so ``τ_ij = −(p_j − p_i)·u / c``. :class:`ArrayGeometry`
solves that for ``u`` over the array's widest pairs, by least squares:

- a **linear** array (every microphone on one line) knows only the angle to its axis, a cone:
  the direction is put in the horizontal plane on the robot's **front** side of the axis (it
  cannot tell front from back: a talker behind reads as the mirror image in front);
- a **planar** array whose plane is not vertical gives the full azimuth (−180°..180°), with
  the talker assumed level with it (elevation 0: it cannot tell up from down);
- a **3-D** array (not all in one plane) gives azimuth and elevation.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from anima.audio import SAMPLE_RATE
from anima.errors import ConfigError

SPEED_OF_SOUND = 343.0  # m/s in air at 20 °C
Mic = tuple[float, float, float]
Kind = Literal["linear", "planar", "3d"]
WIDE = 0.5  # pairs at least this fraction of the widest pair's spacing are used
COARSE = 0.25  # samples: the first grid of lags
FINE = 0.01  # samples: the grid around the coarse peak
_FLAT = 1e-3  # m: a spread below this is no spread (collinear, coplanar)
# a direction across the array narrower than this fraction of its widest is not one it can
# measure in (a 96 mm line with one microphone 5 mm off it is still a line)
FLAT_RATIO = 0.1


@dataclass(frozen=True)
class PairDelay:
    """One pair's estimate: ``delay`` (s, ``t_j − t_i``) and the whitened correlation's peak
    height there (``peak``, 0–1: 1 for one clean plane wave, near 0 for diffuse noise)."""

    i: int
    j: int
    delay: float
    peak: float


def cross_spectrum(
    spectra: NDArray[np.complex128], i: int, j: int, band: NDArray[np.bool_]
) -> NDArray[np.complex128]:
    """The PHAT-whitened cross spectrum of channels ``i`` and ``j`` (``spectra``: one rfft
    row per channel), zero outside ``band``: it sums to a correlation that peaks at
    ``t_j − t_i``."""
    cross = spectra[j] * np.conj(spectra[i])
    mag = np.abs(cross)
    keep = band & (mag > 1e-12)
    weighted: NDArray[np.complex128] = np.where(keep, cross / np.where(keep, mag, 1.0), 0)
    return weighted


class Correlator:
    """The whitened correlation of one FFT size and band at fractional lags within
    ``±max_lag`` samples, ``Re Σ_k W_k e^{iω_k τ} / Σ_k |W_k|`` (1 at the delay of one clean
    plane wave): a coarse grid, then a fine one around its best, both precomputed (the fine
    grid is the coarse best's phase times fixed offsets), so a pair costs two small products."""

    def __init__(self, n_fft: int, band: NDArray[np.bool_], max_lag: float) -> None:
        self.n_fft = n_fft
        self.band = band
        self.max_lag = max_lag
        omega = 2 * np.pi * np.flatnonzero(band) / n_fft
        self.coarse = np.linspace(-max_lag, max_lag, max(3, 1 + 2 * math.ceil(max_lag / COARSE)))
        step = float(self.coarse[1] - self.coarse[0])
        self.offsets = np.arange(-step, step + FINE / 2, FINE)
        self._coarse = np.exp(1j * np.outer(self.coarse, omega))  # lags × bins
        self._fine = np.exp(1j * np.outer(self.offsets, omega))

    def peak(self, weighted: NDArray[np.complex128]) -> tuple[float, float]:
        """The lag (samples) where ``weighted``'s correlation peaks, and its height (0–1)."""
        w = weighted[self.band]
        used = float(np.sum(np.abs(w)))
        if used == 0:
            return 0.0, 0.0
        k = int(np.argmax((self._coarse @ w).real))
        lags = self.coarse[k] + self.offsets
        values = (self._fine @ (w * self._coarse[k])).real
        values[np.abs(lags) > self.max_lag] = -np.inf
        best = int(np.argmax(values))
        return float(lags[best]), float(np.clip(values[best] / used, 0.0, 1.0))


def gcc_phat(
    a: NDArray[np.float64] | NDArray[np.int16],
    b: NDArray[np.float64] | NDArray[np.int16],
    *,
    max_delay: float,
    rate: int = SAMPLE_RATE,
    band_hz: tuple[float, float] | None = None,
) -> tuple[float, float]:
    """The delay (s) of ``b`` after ``a`` within ``±max_delay`` s, and the peak's height (0–1).
    Both signals the same length; ``band_hz``: the frequencies used (None: all)."""
    x = np.stack([np.asarray(a, np.float64), np.asarray(b, np.float64)])
    n_fft = _fft_size(x.shape[1], max_delay * rate)
    spectra = np.fft.rfft(x, n_fft, axis=1)
    band = _band(n_fft, rate, band_hz)
    lag, peak = Correlator(n_fft, band, max_delay * rate).peak(cross_spectrum(spectra, 0, 1, band))
    return lag / rate, peak


def _fft_size(n: int, max_lag: float) -> int:
    return 1 << (n + math.ceil(max_lag) - 1).bit_length()


def _band(n_fft: int, rate: int, band_hz: tuple[float, float] | None) -> NDArray[np.bool_]:
    """The bins in use: ``band_hz``, never DC or Nyquist (they carry no phase)."""
    freqs = np.fft.rfftfreq(n_fft, 1 / rate)
    low, high = band_hz if band_hz is not None else (0.0, rate / 2)
    inside: NDArray[np.bool_] = (freqs >= low) & (freqs <= high)
    inside[0] = inside[-1] = False
    return inside


def _rank(vectors: NDArray[np.float64]) -> int:
    singular = np.linalg.svd(vectors, compute_uv=False)
    return int(np.sum(singular > max(_FLAT, FLAT_RATIO * float(singular[0]))))


class ArrayGeometry:
    """A microphone array (``listen.mics``: positions in metres, robot frame): its kind, the
    widest pairs, and the direction their delays give (see the module docstring)."""

    def __init__(self, mics: tuple[Mic, ...] | list[Mic], *, wide: float = WIDE) -> None:
        positions = np.asarray(mics, dtype=np.float64)
        if positions.ndim != 2 or positions.shape[1] != 3 or len(positions) < 2:
            raise ConfigError(f"a microphone array needs ≥ 2 positions [x, y, z], got {mics!r}")
        self.positions = positions
        spans = {
            (i, j): float(np.linalg.norm(positions[j] - positions[i]))
            for i, j in itertools.combinations(range(len(positions)), 2)
        }
        widest = max(spans.values())
        if widest < _FLAT:
            raise ConfigError("listen.mics: the microphones are all at one place")
        rank = _rank(positions - positions.mean(axis=0))
        self.kind: Kind = "linear" if rank <= 1 else "planar" if rank == 2 else "3d"
        self.pairs = tuple(p for p, s in spans.items() if s >= wide * widest - 1e-12)
        if _rank(np.array([positions[j] - positions[i] for i, j in self.pairs])) < rank:
            self.pairs = tuple(spans)  # the widest all lie one way: every pair, then
        self.max_delays = tuple(spans[p] / SPEED_OF_SOUND for p in self.pairs)  # s
        self._diffs = np.array([positions[j] - positions[i] for i, j in self.pairs])
        if self.kind == "linear":
            i, j = max(spans, key=lambda p: spans[p])
            a = positions[j] - positions[i]
            self.axis = a / np.linalg.norm(a)
            flat = np.array([self.axis[0], self.axis[1], 0.0])
            if np.linalg.norm(flat) < 1e-3:
                raise ConfigError("listen.mics: a vertical line of microphones cannot tell azimuth")
            flat /= np.linalg.norm(flat)
            normal = np.array([-flat[1], flat[0], 0.0])  # the horizontal perpendicular …
            if normal[0] < -1e-9 or (abs(normal[0]) <= 1e-9 and normal[1] < 0):
                normal = -normal  # … on the robot's front (or its left, for a forward line)
            self.front = normal
        elif self.kind == "planar" and _rank(self._diffs[:, :2]) < 2:
            raise ConfigError("listen.mics: a vertical plane of microphones cannot tell azimuth")

    @property
    def front_only(self) -> bool:
        """A linear array: it cannot tell front from back."""
        return self.kind == "linear"

    def direction(
        self, delays: NDArray[np.float64], weights: NDArray[np.float64] | None = None
    ) -> tuple[float, float]:
        """(azimuth, elevation) in radians from the pairs' delays (s, in :attr:`pairs` order),
        by weighted least squares over ``τ_ij c = −(p_j − p_i)·u``."""
        target = -np.asarray(delays, np.float64) * SPEED_OF_SOUND
        w = np.sqrt(np.ones(len(target)) if weights is None else np.maximum(weights, 1e-6))
        if self.kind == "linear":
            d = self._diffs @ self.axis
            cos_angle = float(np.clip(np.sum(w * w * d * target) / np.sum(w * w * d * d), -1, 1))
            sin_angle = math.sqrt(max(0.0, 1 - cos_angle * cos_angle))
            u = cos_angle * self.axis + sin_angle * self.front
            return math.atan2(u[1], u[0]), 0.0
        if self.kind == "planar":
            solution, *_ = np.linalg.lstsq(self._diffs[:, :2] * w[:, None], target * w, rcond=None)
            return math.atan2(float(solution[1]), float(solution[0])), 0.0
        solution, *_ = np.linalg.lstsq(self._diffs * w[:, None], target * w, rcond=None)
        x, y, z = (float(v) for v in solution)
        return math.atan2(y, x), math.atan2(z, math.hypot(x, y))

    def delays_from(self, azimuth: float, elevation: float = 0.0) -> NDArray[np.float64]:
        """The delays (s) a far talker at (azimuth, elevation) gives each pair (the forward
        model: tests and the simulated room)."""
        u = np.array(
            [
                math.cos(elevation) * math.cos(azimuth),
                math.cos(elevation) * math.sin(azimuth),
                math.sin(elevation),
            ]
        )
        result: NDArray[np.float64] = -(self._diffs @ u) / SPEED_OF_SOUND
        return result


class PairDelays:
    """GCC-PHAT over an array's pairs for windows of one length (``samples`` × microphones),
    the FFT size, band and lag grids fixed once."""

    def __init__(
        self,
        geometry: ArrayGeometry,
        samples: int,
        *,
        rate: int = SAMPLE_RATE,
        band_hz: tuple[float, float] | None = None,
    ) -> None:
        self.geometry = geometry
        self.samples = samples
        self.rate = rate
        longest = max(geometry.max_delays) * rate
        self.n_fft = _fft_size(samples, longest + 1)
        self.band = _band(self.n_fft, rate, band_hz)
        self._window = np.hanning(samples)
        # a little past each pair's physical limit, so a talker at endfire is not clipped
        self._correlators = [
            Correlator(self.n_fft, self.band, d * rate + 0.5) for d in geometry.max_delays
        ]

    def __call__(self, channels: NDArray[np.float64]) -> list[PairDelay]:
        return self.delays(self.whitened(channels))

    def whitened(self, channels: NDArray[np.float64]) -> NDArray[np.complex128]:
        """Each pair's whitened cross spectrum of one window (pairs × bins): what
        :meth:`delays` reads, and what may be summed over windows first (the sum of several
        windows' spectra correlates like their audio together)."""
        x = np.asarray(channels, np.float64).T * self._window
        spectra = np.fft.rfft(x, self.n_fft, axis=1)
        return np.stack([cross_spectrum(spectra, i, j, self.band) for i, j in self.geometry.pairs])

    def delays(self, whitened: NDArray[np.complex128]) -> list[PairDelay]:
        """Each pair's delay and peak height from its whitened cross spectrum (a row of
        :meth:`whitened`'s, or a sum of them)."""
        out = []
        for (i, j), correlator, row in zip(
            self.geometry.pairs, self._correlators, whitened, strict=True
        ):
            lag, peak = correlator.peak(row)
            out.append(PairDelay(i, j, lag / self.rate, peak))
        return out
