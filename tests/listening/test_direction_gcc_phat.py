"""GCC-PHAT and the array's geometry on synthetic plane waves: delays known exactly."""

from __future__ import annotations

import math

import numpy as np
import pytest

from anima.errors import ConfigError
from anima.listening.direction.gcc_phat import ArrayGeometry, PairDelays, gcc_phat
from anima.testing.array_room import LINEAR_4, SQUARE_4, delayed, plane_wave

pytestmark = pytest.mark.fast

RATE = 16000
LINEAR = list(LINEAR_4)
SQUARE = list(SQUARE_4)
PYRAMID = [*SQUARE, (0.0, 0.0, 0.05)]


@pytest.mark.parametrize("samples", [0.0, 0.37, -1.5, 2.91, -4.4])
def test_gcc_phat_finds_a_fractional_delay(samples: float) -> None:
    rng = np.random.default_rng(1)
    a = rng.standard_normal(2048)
    b = delayed(a, samples)
    delay, peak = gcc_phat(a[200:1800], b[200:1800], max_delay=5 / RATE)
    assert delay * RATE == pytest.approx(samples, abs=0.03)
    assert peak > 0.9


def test_the_delay_is_bounded_by_the_pair_and_the_peak_falls_with_noise() -> None:
    rng = np.random.default_rng(2)
    a = rng.standard_normal(2048)
    b = delayed(a, 9.0)  # more than two microphones 96 mm apart can hear
    delay, _ = gcc_phat(a, b, max_delay=4.5 / RATE)
    assert abs(delay * RATE) <= 4.5 + 1e-9
    clean = gcc_phat(a, delayed(a, 2.0), max_delay=4.5 / RATE)[1]
    noisy = gcc_phat(a, delayed(a, 2.0) + 2 * rng.standard_normal(2048), max_delay=4.5 / RATE)[1]
    assert noisy < clean - 0.3


def test_array_kinds_and_their_widest_pairs() -> None:
    linear = ArrayGeometry(LINEAR)
    assert linear.kind == "linear"
    assert linear.front_only
    assert set(linear.pairs) == {(0, 2), (0, 3), (1, 3)}  # 64 and 96 mm, not the 32 mm ones
    assert ArrayGeometry(SQUARE).kind == "planar"
    assert ArrayGeometry(PYRAMID).kind == "3d"


@pytest.mark.parametrize(
    "mics",
    [[(0.0, 0.0, 0.0)], [(0.0, 0.0, 0.0), (0.0, 0.0, 0.0)], [(0.0, 0.0, 0.0), (0.0, 0.0, 0.1)],
     [(0.0, 0.0, 0.0), (0.0, 0.05, 0.0), (0.0, 0.0, 0.05)]],
)  # fmt: skip
def test_arrays_that_cannot_tell_azimuth_are_refused(
    mics: list[tuple[float, float, float]],
) -> None:
    with pytest.raises(ConfigError):
        ArrayGeometry(mics)


@pytest.mark.parametrize("degrees", [-80, -45, -10, 0, 25, 60, 80])
def test_each_array_solves_its_own_delays(degrees: int) -> None:
    azimuth = math.radians(degrees)
    for mics in (LINEAR, SQUARE, PYRAMID):
        geometry = ArrayGeometry(mics)
        got, elevation = geometry.direction(geometry.delays_from(azimuth))
        assert math.degrees(got) == pytest.approx(degrees, abs=1e-6)
        assert elevation == pytest.approx(0.0, abs=1e-6)


def test_a_line_cannot_tell_front_from_back_a_square_can() -> None:
    behind = math.radians(150)
    linear, square = ArrayGeometry(LINEAR), ArrayGeometry(SQUARE)
    mirrored, _ = linear.direction(linear.delays_from(behind))
    assert math.degrees(mirrored) == pytest.approx(30.0, abs=1e-6)  # its image in front
    assert math.degrees(square.direction(square.delays_from(behind))[0]) == pytest.approx(150.0)


def test_only_a_3d_array_measures_elevation() -> None:
    az, el = math.radians(40), math.radians(25)
    pyramid = ArrayGeometry(PYRAMID)
    got = pyramid.direction(pyramid.delays_from(az, el))
    assert [math.degrees(v) for v in got] == pytest.approx([40.0, 25.0], abs=1e-6)
    square = ArrayGeometry(SQUARE)
    assert math.degrees(square.direction(square.delays_from(az, el))[0]) == pytest.approx(40.0)


@pytest.mark.parametrize("degrees", [-80, -55, -20, 5, 35, 70])
def test_a_plane_wave_through_gcc_phat_comes_back_within_a_degree(degrees: int) -> None:
    for mics in (LINEAR, SQUARE):
        geometry = ArrayGeometry(mics)
        window = plane_wave(mics, math.radians(degrees), seed=degrees + 100)
        pairs = PairDelays(geometry, len(window))(window)
        azimuth, _ = geometry.direction(np.array([p.delay for p in pairs]))
        assert math.degrees(azimuth) == pytest.approx(degrees, abs=1.0)
        assert min(p.peak for p in pairs) > 0.8


def test_behind_the_square_through_gcc_phat() -> None:
    geometry = ArrayGeometry(SQUARE)
    window = plane_wave(SQUARE, math.radians(-135), seed=7)
    pairs = PairDelays(geometry, len(window))(window)
    azimuth, _ = geometry.direction(np.array([p.delay for p in pairs]))
    assert math.degrees(azimuth) == pytest.approx(-135, abs=1.0)
