"""The yield's onset measured with the product's ears (``anima bench realtime``'s onset part):
the Piper voice, Silero and the level, on the real models. (The figures against the target are
the bench's to print; here: every placement is measured, and the rules' onset is never later
than either ear alone.)"""

from __future__ import annotations

import pytest

from anima.bench.realtime.onset import run_onset_bench

pytestmark = pytest.mark.model


def test_the_rules_onset_is_the_earlier_of_the_vad_and_the_level() -> None:
    f = run_onset_bench("silero", phrases=("stop", "Hello there."))
    assert f.vad == "silero"
    assert f.missed == 0
    assert len(f.either_ms) == 2 * 8  # two phrases, each at 8 places in a frame
    assert len(f.vad_ms) == len(f.level_ms) == len(f.either_ms)
    for either, vad, level in zip(f.either_ms, f.vad_ms, f.level_ms, strict=True):
        assert 0 < either <= min(vad, level) + 1e-9
    # "stop" starts unvoiced: the level hears its "s" before Silero hears its vowel
    assert max(f.level_ms[:8]) < min(f.vad_ms[:8])
