"""Prepared clauses kept on disk: read back as they were saved, never another voice's or another
clause's, a damaged file made again, the store bounded, a store that cannot be written ignored;
Piper's prepared replies are synthesized once and read back at the next start."""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from anima.speech.base import AudioChunk, Cancel, PhonemeMark, VisemeMark, WordMark
from anima.speech.store import ClauseStore

pytestmark = pytest.mark.fast


def _chunks() -> list[AudioChunk]:
    return [
        AudioChunk(
            np.arange(-50, 50, dtype=np.int16),
            22050,
            phonemes=(PhonemeMark("s", 0), PhonemeMark("ɔː", 40)),
            words=(WordMark(0, 0),),
        ),
        AudioChunk(
            np.full(30, 7, np.int16),
            22050,
            phonemes=(PhonemeMark("i", 100),),
            visemes=(VisemeMark(3, 110),),
            words=(WordMark(7, 100),),
        ),
    ]


def _same(a: list[AudioChunk], b: list[AudioChunk]) -> bool:
    return len(a) == len(b) and all(
        np.array_equal(x.samples, y.samples)
        and (x.sample_rate, x.phonemes, x.visemes, x.words)
        == (y.sample_rate, y.phonemes, y.visemes, y.words)
        for x, y in zip(a, b, strict=True)
    )


def test_a_saved_clause_reads_back_as_it_was(tmp_path: Path) -> None:
    store = ClauseStore(tmp_path, "voice-a")
    assert store.load("Sorry,") is None
    store.save("Sorry,", _chunks())
    again = ClauseStore(tmp_path, "voice-a").load("Sorry,")  # another run, the same voice
    assert again is not None
    assert _same(again, _chunks())
    assert again[0].samples.dtype == np.int16
    assert ClauseStore(tmp_path, "voice-b").load("Sorry,") is None  # never another voice's
    assert store.load("Sorry") is None  # nor another text's


def test_a_damaged_or_misplaced_file_is_removed_and_reads_as_missing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = ClauseStore(tmp_path, "voice")
    store.save("Hello.", _chunks())
    (path,) = store.directory.glob("*.npz")
    path.write_bytes(path.read_bytes()[:200])  # cut short
    with caplog.at_level(logging.WARNING, "anima.speech.store"):
        assert store.load("Hello.") is None
    assert "unreadable" in caplog.text
    assert not path.exists()
    store.save("Hello.", _chunks())
    store.save("Goodbye.", _chunks()[:1])
    hello = next(p for p in store.directory.glob("*.npz") if p != path)
    shutil.copy(hello, path)  # a file named for one clause holding another
    assert store.load("Hello.") is None
    assert not path.exists()


def test_the_store_keeps_the_most_recently_used_files(tmp_path: Path) -> None:
    store = ClauseStore(tmp_path, "voice", max_files=3)
    for n, text in enumerate(("a", "b", "c")):
        store.save(text, _chunks())
        for p in store.directory.glob("*.npz"):  # distinct times, whatever the file system's
            os.utime(p, (p.stat().st_mtime - 10 + n, p.stat().st_mtime - 10 + n))
    assert store.load("a") is not None  # used now: the newest
    store.save("d", _chunks())
    assert len(list(store.directory.glob("*.npz"))) == 3
    assert store.load("b") is None
    assert all(store.load(t) is not None for t in ("a", "c", "d"))


def test_a_store_that_cannot_be_written_is_logged_and_ignored(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    store = ClauseStore(blocked, "voice")
    with caplog.at_level(logging.WARNING, "anima.speech.store"):
        store.save("Hello.", _chunks())  # no exception
        assert store.load("Hello.") is None
    assert "cannot keep a prepared clause" in caplog.text


@pytest.mark.model
def test_piper_prepares_once_and_reads_its_replies_back_at_the_next_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from anima.errors import AnimaError
    from anima.speech.piper import piper as piper_module
    from anima.speech.piper.piper import PiperEngine
    from anima.speech.piper.voice import voice_files

    try:
        model, config = voice_files(None, None)
    except AnimaError as exc:
        pytest.skip(f"Piper is not available: {exc}")
    text = "Sorry, I didn't catch that."
    first = PiperEngine(store=tmp_path / "store")
    assert first.prepare(text) == 2  # "Sorry," and the rest: two pieces
    made = list(first.synthesize(text, "en-US", Cancel()))
    assert (first.cache.hits, first.cache.misses) == (2, 0)

    def never(*_: object) -> object:
        raise AssertionError("synthesized again")

    monkeypatch.setattr(piper_module, "_piece", never)
    second = PiperEngine(store=tmp_path / "store")  # the next start: nothing synthesized
    assert second.prepare(text) == 2
    assert second._voice is None  # not even the voice was loaded
    again = list(second.synthesize(text, "en-US", Cancel()))
    assert _same(again, made)  # the same audio and marks, the words placed the same
    monkeypatch.undo()

    # another voice file (here the same voice, its config file newer) starts a store of its own
    moved = tmp_path / "voice"
    moved.mkdir()
    assert config is not None
    (moved / model.name).symlink_to(model)
    shutil.copy(config, moved / config.name)
    other = PiperEngine(
        model=moved / model.name, config=moved / config.name, store=tmp_path / "store"
    )
    mine, theirs = second._stored(), other._stored()
    assert mine is not None
    assert theirs is not None
    assert theirs.directory != mine.directory
