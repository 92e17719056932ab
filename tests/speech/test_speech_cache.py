"""The clause cache: what the robot says again plays the same audio with no synthesis, bounded,
and never in a voice it was not made with; Piper's first clause ends at its first comma; the
speech service prepares texts when idle."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from anima.speech.base import AudioChunk, Cancel, PhonemeMark
from anima.speech.cache import ClauseCache, shifted
from anima.speech.piper.piper import PiperEngine, split_clauses
from anima.speech.utterance import AUDIBLE, LEAD_KEEP_S, moved

pytestmark = pytest.mark.model


def _chunk(n: int, marks: tuple[int, ...] = (0,)) -> AudioChunk:
    return AudioChunk(
        np.full(n, 7, np.int16), 22050, phonemes=tuple(PhonemeMark("a", m) for m in marks)
    )


def test_a_kept_clause_comes_back_as_it_was_stored() -> None:
    cache = ClauseCache()
    chunks = [_chunk(100, (0, 40)), _chunk(50, (100,))]
    assert cache.put("v", "Sorry,", chunks)
    assert cache.get("v", "Sorry,") == tuple(chunks)
    assert cache.get("v", "Okay.") is None
    assert (cache.hits, cache.misses) == (1, 1)


def test_shifted_moves_every_mark_and_keeps_the_samples() -> None:
    moved = shifted([_chunk(10, (0, 4))], 1000)
    assert [m.offset for m in moved[0].phonemes] == [1000, 1004]
    assert len(moved[0].samples) == 10


def test_the_least_recently_used_clause_goes_first_within_the_bound() -> None:
    cache = ClauseCache(max_samples=300)
    for text in ("a", "b", "c"):
        assert cache.put("v", text, [_chunk(100)])
    assert cache.get("v", "a") is not None  # "a" is now the most recent
    assert cache.put("v", "d", [_chunk(100)])
    assert "b" not in cache
    assert {"a", "c", "d"} <= {t for t in ("a", "c", "d") if t in cache}
    assert cache.samples <= 300


def test_prepared_clauses_are_not_pushed_out_and_have_their_own_bound() -> None:
    cache = ClauseCache(max_samples=100, max_pinned_samples=150)
    assert cache.put("v", "Sorry,", [_chunk(100)], pinned=True)
    assert not cache.put("v", "I didn't catch that.", [_chunk(100)], pinned=True)  # over 150
    for text in ("x", "y", "z"):
        cache.put("v", text, [_chunk(100)])
    assert "Sorry," in cache  # a clause met while speaking never evicts a prepared one
    assert cache.pinned_samples == 100
    assert cache.samples == 100


def test_a_clause_too_long_to_keep_is_refused() -> None:
    cache = ClauseCache(max_clause_samples=99)
    assert not cache.put("v", "long", [_chunk(100)])
    assert len(cache) == 0


def test_another_voice_drops_everything_kept() -> None:
    cache = ClauseCache()
    cache.put("joe", "Sorry,", [_chunk(100)], pinned=True)
    assert cache.get("amy", "Sorry,") is None  # never the old voice's audio
    assert len(cache) == 0
    assert cache.pinned_samples == 0
    assert cache.voice == "amy"


def test_the_first_clause_ends_at_its_first_comma() -> None:
    text = "Sorry, I can't make you a coffee. I can wave, nod, shake my head, look around."
    assert split_clauses(text, first_comma_chars=5) == [
        "Sorry,", "I can't make you a coffee.", "I can wave, nod, shake my head,", "look around.",
    ]  # fmt: skip
    assert split_clauses("Hi, you.", first_comma_chars=5) == ["Hi, you."]  # too short to cut
    assert split_clauses(text)[0] == "Sorry, I can't make you a coffee."  # the old rule


# ---------------------------------------------------------------------- the real voice
def _audio(chunks: Iterator[AudioChunk]) -> tuple[np.ndarray, list[tuple[str, int]]]:
    out = list(chunks)
    marks = [(m.phoneme, m.offset) for c in out for m in c.phonemes]
    return np.concatenate([c.samples for c in out]), marks


class _Counting:
    """Counts the voice's synthesis calls (what the cache saves)."""

    def __init__(self, engine: PiperEngine, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[str] = []
        voice = engine._loaded()
        real = voice.synthesize

        def counted(text: str, *args: object, **kwargs: object) -> object:
            self.calls.append(text)
            return real(text, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(voice, "synthesize", counted)


def test_said_again_the_same_audio_and_lips_with_no_synthesis(
    piper: PiperEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    piper.cache.clear()
    counting = _Counting(piper, monkeypatch)
    text = "Hello there, my friend. Nice weather today."
    first, first_marks = _audio(piper.synthesize(text, "en-US", Cancel()))
    made = len(counting.calls)
    assert made >= 2  # one synthesis per clause
    again, again_marks = _audio(piper.synthesize(text, "en-US", Cancel()))
    assert len(counting.calls) == made  # nothing synthesized the second time
    assert np.array_equal(first, again)
    assert first_marks == again_marks  # the lips follow the replay exactly
    # a text sharing a clause replays that clause and synthesizes only the new one
    _audio(piper.synthesize("Hello there, stranger.", "en-US", Cancel()))
    assert counting.calls[made:] == ["stranger."]


def test_prepared_text_plays_without_synthesis(
    piper: PiperEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    piper.cache.clear()
    text = "Sorry, I didn't catch that."
    assert piper.prepare(text) == 2  # "Sorry," and "I didn't catch that."
    counting = _Counting(piper, monkeypatch)
    audio, marks = _audio(piper.synthesize(text, "en-US", Cancel()))
    assert counting.calls == []
    assert len(audio) > 22050 // 2
    assert marks[0][1] == 0
    assert all(b[1] >= a[1] for a, b in itertools.pairwise(marks))  # continuous
    assert piper.prepare(text) == 0  # already kept


def test_a_synthesis_cut_short_is_not_kept(piper: PiperEngine) -> None:
    piper.cache.clear()
    cancel = Cancel()
    for _ in piper.synthesize("Sorry, I did not catch that at all.", "en-US", cancel):
        cancel.set()  # after the first chunk: the rest of that piece is never made
    assert "Sorry," not in piper.cache


def test_another_voice_file_is_another_cache_key(tmp_path: Path) -> None:
    assert PiperEngine(model=tmp_path / "a.onnx").voice_id != PiperEngine().voice_id


def test_the_service_prepares_when_idle_and_plays_the_same_audio(piper: PiperEngine) -> None:
    from anima.body import load_body
    from anima.clock import MonotonicClock
    from anima.drivers.sim import SimDriver
    from anima.events import EventHub, SpeechEnded
    from anima.motion.engine import MotionEngine
    from anima.speech.service import SpeechService
    from anima.speech.sinks import NullSink

    piper.cache.clear()
    clock = MonotonicClock(spin_s=0.0)
    driver = SimDriver()
    driver.connect()
    hub = EventHub()
    ended = threading.Event()
    hub.subscribe(lambda e: ended.set() if isinstance(e, SpeechEnded) else None)
    motion = MotionEngine(load_body(), driver, clock=clock, events=hub)
    sink = NullSink(clock, keep=True)
    speech = SpeechService([piper], sink, motion, hub, clock)
    hub.start()
    motion.start()
    speech.start()
    try:
        speech.prepare(["Okay."])
        from anima.testing import eventually

        assert eventually(lambda: "Okay." in piper.cache, timeout=20.0)
        assert sink.written() == 0  # prepared, not played
        speech.speak("Okay.")
        assert ended.wait(20.0)
        played = np.concatenate(sink.kept)
        kept = piper.cache.get(piper.voice_id, "Okay.")
        assert kept is not None
        audio = np.concatenate([c.samples for c in kept])
        loud = int(np.flatnonzero(np.abs(audio.astype(np.int32)) > AUDIBLE)[0])
        assert loud > 0.02 * 22050  # Piper starts a clause with its own silence …
        lead = loud - round(LEAD_KEEP_S * 22050)
        assert np.array_equal(played, audio[lead:])  # … which is not played: the rest is
    finally:
        speech.stop()
        motion.stop()
        hub.stop()


def test_a_dropped_leading_silence_moves_every_mark_with_it() -> None:
    chunk = AudioChunk(
        np.arange(100, dtype=np.int16), 22050, phonemes=(PhonemeMark("^", 0), PhonemeMark("a", 60))
    )
    first = moved(chunk, 40, cut=True)
    assert np.array_equal(first.samples, chunk.samples[40:])
    assert [(m.phoneme, m.offset) for m in first.phonemes] == [("^", 0), ("a", 20)]
    later = moved(
        AudioChunk(chunk.samples, 22050, phonemes=(PhonemeMark("b", 300),)), 40, cut=False
    )
    assert np.array_equal(later.samples, chunk.samples)  # only the first chunk loses samples
    assert later.phonemes[0].offset == 260
