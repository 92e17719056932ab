"""Synthesized clauses kept for replay: what the robot says often plays at once.

A neural voice takes 0.1–0.3 s to synthesize a clause on this machine's two cores, and the
robot says the same things again and again ("Sorry, I didn't catch that.", its name, what it
can do, the fixed part of a refusal). A :class:`ClauseCache` keeps the audio of clauses already
synthesized, with their marks, so a clause said again is replayed sample for sample — same
audio, same lips — with no synthesis at all.

Bounded two ways: prepared clauses (:meth:`ClauseCache.put` with ``pinned``: synthesized
ahead of time, at start-up) up to ``max_pinned_samples``, and clauses met while speaking up to
``max_samples``, the least recently used dropped first. A clause longer than
``max_clause_samples`` is never kept. Entries belong to one voice: a lookup or a store for
another voice (a new model, another rate or pitch) drops them all, so the cache never plays
the old voice.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from anima.speech.base import AudioChunk, PhonemeMark, VisemeMark, WordMark

SAMPLES_PER_S = 22050  # the bundled voices' rate: the bounds below are seconds of their audio
MAX_SAMPLES = 40 * SAMPLES_PER_S  # clauses met while speaking (~1.8 MB of int16)
MAX_PINNED_SAMPLES = 40 * SAMPLES_PER_S  # prepared clauses
MAX_CLAUSE_SAMPLES = 8 * SAMPLES_PER_S  # a longer clause is not worth keeping


@dataclass(frozen=True)
class _Entry:
    chunks: tuple[AudioChunk, ...]  # marks from the clause's first sample
    samples: int
    pinned: bool


def shifted(chunks: Iterable[AudioChunk], by: int) -> list[AudioChunk]:
    """``chunks`` with every mark moved ``by`` samples (a clause placed into an utterance)."""
    if by == 0:
        return list(chunks)
    return [
        AudioChunk(
            c.samples,
            c.sample_rate,
            phonemes=tuple(PhonemeMark(m.phoneme, m.offset + by) for m in c.phonemes),
            visemes=tuple(VisemeMark(m.viseme, m.offset + by) for m in c.visemes),
            words=tuple(WordMark(m.char, m.offset + by) for m in c.words),
        )
        for c in chunks
    ]


class ClauseCache:
    """Clauses of one voice → their chunks (see the module docstring). Thread-safe."""

    def __init__(
        self,
        *,
        max_samples: int = MAX_SAMPLES,
        max_pinned_samples: int = MAX_PINNED_SAMPLES,
        max_clause_samples: int = MAX_CLAUSE_SAMPLES,
    ) -> None:
        for key, value in (
            ("max_samples", max_samples),
            ("max_pinned_samples", max_pinned_samples),
            ("max_clause_samples", max_clause_samples),
        ):
            if value < 0:
                raise ValueError(f"clause cache: {key} must be ≥ 0, got {value!r}")
        self.max_samples = max_samples
        self.max_pinned_samples = max_pinned_samples
        self.max_clause_samples = max_clause_samples
        self._lock = threading.Lock()
        self._entries: collections.OrderedDict[str, _Entry] = collections.OrderedDict()
        self._voice: str | None = None
        self.samples = 0  # kept, unpinned
        self.pinned_samples = 0
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, text: object) -> bool:
        return text in self._entries

    @property
    def voice(self) -> str | None:
        """The voice the entries are of (None: empty)."""
        return self._voice

    def clear(self) -> None:
        with self._lock:
            self._clear()

    def get(self, voice: str, text: str) -> tuple[AudioChunk, ...] | None:
        """The chunks of ``text`` in ``voice`` (marks from 0), or None."""
        with self._lock:
            self._own(voice)
            entry = self._entries.get(text)
            if entry is None:
                self.misses += 1
                return None
            self._entries.move_to_end(text)
            self.hits += 1
            return entry.chunks

    def put(
        self, voice: str, text: str, chunks: Sequence[AudioChunk], *, pinned: bool = False
    ) -> bool:
        """Keep ``chunks`` (marks from 0) as ``text`` in ``voice``; False when they do not fit
        (too long, or the pinned bound is reached)."""
        samples = sum(len(c.samples) for c in chunks)
        if not chunks or samples > self.max_clause_samples:
            return False
        with self._lock:
            self._own(voice)
            old = self._entries.get(text)
            if old is not None:
                if old.pinned or not pinned:
                    return True  # already there (a pinned one stays pinned)
                self._drop(text)
            if pinned:
                if self.pinned_samples + samples > self.max_pinned_samples:
                    return False
                self.pinned_samples += samples
            else:
                if samples > self.max_samples:
                    return False
                while self.samples + samples > self.max_samples:
                    self._drop(next(k for k, e in self._entries.items() if not e.pinned))
                self.samples += samples
            self._entries[text] = _Entry(tuple(chunks), samples, pinned)
            return True

    # ------------------------------------------------------------------ inside (locked)
    def _own(self, voice: str) -> None:
        if voice != self._voice:
            self._clear()  # another voice: nothing kept may play in it
            self._voice = voice

    def _clear(self) -> None:
        self._entries.clear()
        self.samples = self.pinned_samples = 0
        self._voice = None

    def _drop(self, text: str) -> None:
        entry = self._entries.pop(text)
        if entry.pinned:
            self.pinned_samples -= entry.samples
        else:
            self.samples -= entry.samples
