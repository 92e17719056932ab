"""The wake spotter's room-level percentiles are NumPy's, float for float (computed without
NumPy's overhead on every frame)."""

from __future__ import annotations

import collections

import numpy as np
import pytest

from anima.listening.wake.asr_spotter import FLOOR_FRAMES, percentiles

pytestmark = pytest.mark.fast


@pytest.mark.parametrize("n", [1, 2, 3, 10, 11, FLOOR_FRAMES - 1, FLOOR_FRAMES])
def test_the_same_floats_as_numpy(n: int) -> None:
    rng = np.random.default_rng(n)
    for trial in range(50):
        levels = rng.normal(-50.0, 8.0, n) if trial % 2 else rng.integers(-60, -40, n) * 1.0
        kept = collections.deque(levels.tolist(), maxlen=FLOOR_FRAMES)  # as the spotter keeps them
        qs = (20.0, 80.0) if trial % 3 else (0.0, 37.5, 50.0, 100.0)
        assert percentiles(kept, qs) == np.percentile(levels, qs).tolist()
