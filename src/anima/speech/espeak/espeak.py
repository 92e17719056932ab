"""eSpeak NG: fast offline TTS with phoneme timing, through its C library.

eSpeak NG is GPL-3.0-or-later, so anima only ``dlopen``s ``libespeak-ng.so.1`` (Debian
``libespeak-ng1``), with ctypes, on first use; without it ``load``, ``supports`` and
``synthesize`` raise :class:`~anima.errors.SpeechError` with the install hint. Robotic but fast
(~1 ms per second of audio): the offline fallback and the deterministic test voice. C layouts:
:mod:`anima.speech.espeak.abi`.

``espeak_Synth`` runs synchronously, calling back with ≤20 ms of int16 PCM and its events. The
text is split into sentences, and a sentence longer than :data:`~anima.speech.text.PIECE_WEIGHT`
into pieces (:func:`~anima.speech.text.cut_long`: at a comma, else between words); each piece is
synthesized whole (eSpeak's sentence pause after each sentence but the last) and yielded in
~100 ms chunks. ctypes releases the GIL during ``espeak_Synth``, but one call's audio is
collected before any of it is yielded: a 20,000-character sentence in one call took 2.2 s to its
first audio, 90 MB, and froze other threads ~27 ms joining it; a piece takes a few ms and
~0.5 MB. More than :data:`~anima.speech.text.MAX_TEXT_CHARS` characters are refused before any
work; control characters and lone surrogates become spaces. Once ``cancel`` is set the callback
returns 1, aborting eSpeak, and nothing more is yielded. Empty text (no letter or digit) yields
no chunks.

Marks are eSpeak's IPA phoneme events: length marks and diphthongs inside the name (``ɜː``,
``oʊ``, ``aɪɚ``), some eSpeak extras (``ə-``, ``ʲ``), **no stress marks** (1.51 omits them).
Pauses (empty names) become :data:`PAUSE`; a zero-length mark gives way to the next and repeated
pauses merge, so offsets strictly increase. "Hello world" (en-US) gives ``h ə l oʊ w ɜː l d _``;
"Guten Morgen, wie geht es dir?" (de-DE) ``ɡ uː t ə n m ɔ ɾ ɡ ə n _ v iː ɡ eː t ɛ s d iː ɾ _``;
"Bonjour tout le monde." (fr-FR) ``b ɔ̃ ʒ u ʁ t u l m ɔ̃ d _``.

eSpeak is one process-global, non-thread-safe instance: one lock guards every call (per sentence,
not across yields). eSpeak NG 1.51 keeps pitch-flutter phase and gain in statics that
``espeak_Terminate`` does not reset, so the same text would vary (even in length) with what was
said before: the library is unloaded and reloaded (~1 ms) before each sentence, which makes
output a function of text, voice, rate and pitch. If something else in the process holds the
library too, it stays loaded; the engine then warns and goes on without that guarantee.
"""

from __future__ import annotations

import _ctypes
import ctypes
import ctypes.util
import functools
import logging
import os
import re
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np

from anima.errors import ConfigError, SpeechError
from anima.speech.base import AudioChunk, Cancel, PhonemeMark, Samples
from anima.speech.espeak import abi
from anima.speech.text import PIECE_WEIGHT, check_text, cut_long, speakable
from anima.speech.words import event_word_marks, locate

logger = logging.getLogger(__name__)

PAUSE = "_"  # the mark of a pause or silence (eSpeak gives it an empty name)
CHUNK_SECONDS = 0.1  # audio per yielded chunk
LIBRARY = "libespeak-ng.so.1"
INSTALL_HINT = "install it with: apt-get install libespeak-ng1"
# locales whose eSpeak voice is not simply the locale or its language (en-GB is eSpeak's "en")
LOCALE_VOICES = {"en-us": "en-us", "en-gb": "en", "de-de": "de", "fr-fr": "fr"}
_SHARED = "espeak: %s is also loaded by other code; the same text may not give the same audio"
_SENTENCE_END = re.compile(r"[.!?…]+[\"'”’)\]]*(?=\s|$)")

_LOCK = threading.Lock()  # eSpeak is process-global and not re-entrant: hold it for every call


def split_sentences(text: str) -> list[str]:
    """``text`` cut after each ``. ! ? …`` that ends a word; pieces with no letter or digit go."""
    pieces: list[str] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        pieces.append(text[start : match.end()])
        start = match.end()
    pieces.append(text[start:])
    return [p.strip() for p in pieces if any(c.isalnum() for c in p)]


def phoneme_marks(events: Iterable[tuple[int, str]], start: int, length: int) -> list[PhonemeMark]:
    """Marks from eSpeak's ``(sample, name)`` phoneme events of one sentence of ``length``
    samples that starts ``start`` samples into the utterance (rules in the module docstring)."""
    marks: list[PhonemeMark] = []
    for sample, name in events:
        if not 0 <= sample < length:
            continue  # the end-of-sentence mark, at the very end, belongs to no chunk
        phoneme, offset = name or PAUSE, start + sample
        if marks and offset <= marks[-1].offset:
            if offset < marks[-1].offset or phoneme == PAUSE:
                continue
            marks.pop()  # the earlier one lasted no time
        if not (marks and phoneme == PAUSE == marks[-1].phoneme):
            marks.append(PhonemeMark(phoneme, offset))
    return marks


def _is_loaded(path: str) -> bool:
    try:
        probe = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_NOW)
    except OSError:
        return False
    _ctypes.dlclose(probe._handle)
    return True


@dataclass
class _Collector:
    """What the synth callback gathers during one ``espeak_Synth`` call."""

    cancel: Cancel
    pcm: list[bytes] = field(default_factory=list)
    events: list[tuple[int, str]] = field(default_factory=list)  # (sample, phoneme name)
    words: list[tuple[int, int]] = field(default_factory=list)  # (sample, character), per word
    error: BaseException | None = None


class _Library:
    """The process's one eSpeak instance. Every method must be called with ``_LOCK`` held."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.sample_rate = 0
        self._callback = abi.SYNTH_CALLBACK(self._on_synth)  # alive as long as eSpeak may call
        self._collecting: _Collector | None = None
        self._resettable = not _is_loaded(path)  # loaded by someone else: unloading cannot reset
        if not self._resettable:
            logger.warning(_SHARED, path)
        self._lib = self._open()
        self.languages = abi.languages(self._lib)
        self._fresh = True  # nothing synthesized since the library was (re)loaded

    def _open(self) -> ctypes.CDLL:
        try:
            lib = ctypes.CDLL(self.path)
        except OSError as exc:
            raise SpeechError(f"espeak: cannot load {LIBRARY} ({exc}); {INSTALL_HINT}") from exc
        abi.bind(lib)
        options = (
            abi.INITIALIZE_PHONEME_EVENTS | abi.INITIALIZE_PHONEME_IPA | abi.INITIALIZE_DONT_EXIT
        )
        rate = int(lib.espeak_Initialize(abi.AUDIO_OUTPUT_SYNCHRONOUS, 20, None, options))
        if rate <= 0:
            raise SpeechError(f"espeak: cannot initialise (data missing?); {INSTALL_HINT}")
        lib.espeak_SetSynthCallback(self._callback)
        self.sample_rate = rate
        return lib

    def _reset(self) -> None:
        """Unload and reload the library, so its static synthesis state starts over."""
        if not self._resettable:
            return
        self._lib.espeak_Terminate()
        _ctypes.dlclose(self._lib._handle)
        if _is_loaded(self.path):
            # It stayed loaded (someone else holds it) and is now terminated: initialise it once
            # more and never terminate it again (a second Terminate deadlocks eSpeak NG 1.51).
            self._resettable = False
            logger.warning(_SHARED, self.path)
        try:
            self._lib = self._open()
        except SpeechError:
            _library.cache_clear()  # this instance is unusable: the next call starts afresh
            raise

    def _on_synth(self, wav: int | None, count: int, events: ctypes._Pointer[abi.Event]) -> int:
        collector = self._collecting
        if collector is None:
            return 1
        try:
            if wav and count > 0:
                collector.pcm.append(ctypes.string_at(wav, 2 * count))
            i = 0
            while events and (event := events[i]).type != abi.EVENT_LIST_TERMINATED:
                if event.type == abi.EVENT_PHONEME:
                    name = event.id.string.decode("utf-8", "replace")
                    collector.events.append((event.sample, name))
                elif event.type == abi.EVENT_WORD:  # text_position counts characters from 1
                    collector.words.append((event.sample, event.text_position - 1))
                i += 1
        except BaseException as exc:  # nothing may unwind through C: abort, re-raise later
            collector.error = exc
            return 1
        return 1 if collector.cancel.is_set else 0

    def synthesize(
        self, text: str, language: str, *, wpm: int, pitch: int, end_pause: bool, cancel: Cancel
    ) -> tuple[Samples, list[tuple[int, str]], list[tuple[int, int]]]:
        """One sentence's samples, ``(sample, name)`` phoneme events and ``(sample, character)``
        word events (partial if cancelled)."""
        if not self._fresh:
            self._reset()
        self._fresh = False
        tag = ctypes.create_string_buffer(language.encode("ascii"))
        voice = abi.Voice(languages=ctypes.addressof(tag))
        status = int(self._lib.espeak_SetVoiceByProperties(ctypes.byref(voice)))
        if status != abi.EE_OK:
            raise SpeechError(f"espeak: cannot select a voice for {language!r} (status {status})")
        self._lib.espeak_SetParameter(abi.RATE, wpm, 0)
        self._lib.espeak_SetParameter(abi.PITCH, pitch, 0)
        data = text.replace("\0", " ").encode("utf-8") + b"\0"
        flags = abi.CHARS_UTF8 | (abi.ENDPAUSE if end_pause else 0)  # no SSML, no [[phonemes]]
        collector = self._collecting = _Collector(cancel)
        try:
            status = int(
                self._lib.espeak_Synth(data, len(data), 0, abi.POS_CHARACTER, 0, flags, None, None)
            )
        finally:
            self._collecting = None
        if collector.error is not None:
            raise SpeechError(f"espeak: synthesis callback failed: {collector.error!r}")
        if status != abi.EE_OK:
            raise SpeechError(f"espeak: synthesis failed (status {status}) for {text[:40]!r}")
        samples = np.frombuffer(b"".join(collector.pcm), dtype=np.int16)
        return samples, collector.events, collector.words


@functools.cache
def _library() -> _Library:
    """The process's eSpeak, loaded on first use (call with ``_LOCK`` held; failures retry)."""
    return _Library(ctypes.util.find_library("espeak-ng") or LIBRARY)


class EspeakEngine:
    """A :class:`~anima.speech.base.TTSEngine` on eSpeak NG, with IPA phoneme marks.

    ``wpm`` is the speaking rate in words per minute (80–450), ``pitch`` the base pitch (0–100,
    50 normal), ``piece_weight`` the most text one ``espeak_Synth`` call gets (see the module
    docstring). The constructor touches nothing; :meth:`load` (or the first other call) loads
    the library.
    """

    name = "espeak"

    def __init__(
        self, *, wpm: int = 165, pitch: int = 50, piece_weight: int = PIECE_WEIGHT
    ) -> None:
        if not 80 <= wpm <= 450:
            raise ConfigError(f"espeak: wpm must be in [80, 450], got {wpm!r}")
        if not 0 <= pitch <= 100:
            raise ConfigError(f"espeak: pitch must be in [0, 100], got {pitch!r}")
        try:
            cut_long("", piece_weight)
        except ValueError as exc:
            raise ConfigError(f"espeak: piece_weight: {exc}") from exc
        self.wpm = wpm
        self.pitch = pitch
        self.piece_weight = piece_weight  # the most text one espeak_Synth call gets

    def load(self) -> None:
        """Load and initialise the library now; raises :class:`SpeechError` when it is missing."""
        with _LOCK:
            _library()

    @property
    def sample_rate(self) -> int:
        """eSpeak's output rate in Hz (22050; loads the library)."""
        with _LOCK:
            return _library().sample_rate

    def voice_for(self, locale: str) -> str | None:
        """The eSpeak language tag used for ``locale`` (``de-DE`` → ``de``), or None."""
        with _LOCK:
            known = _library().languages
        tag = locale.replace("_", "-").lower()
        for candidate in (LOCALE_VOICES.get(tag), tag, tag.split("-")[0]):
            if candidate and candidate in known:
                return candidate
        return None

    def supports(self, locale: str) -> bool:
        return self.voice_for(locale) is not None

    def pieces(self, text: str) -> Iterator[tuple[str, bool]]:
        """The pieces ``text`` is synthesized in, each with whether a sentence pause follows it
        (after the last piece of each sentence but the last sentence)."""
        sentences = split_sentences(speakable(text))
        for number, sentence in enumerate(sentences, start=1):
            cut = cut_long(sentence, self.piece_weight)
            for i, piece in enumerate(cut, start=1):
                yield piece, i == len(cut) and number < len(sentences)

    def synthesize(self, text: str, locale: str, cancel: Cancel) -> Iterator[AudioChunk]:
        check_text(self.name, text)
        language = self.voice_for(locale)
        if language is None:
            raise SpeechError(f"espeak: no voice for locale {locale!r}")
        offset = 0  # samples of this utterance so far
        pieces = list(self.pieces(text))
        starts = locate(text, (piece for piece, _ in pieces))
        for (piece, end_pause), chars in zip(pieces, starts, strict=True):
            if cancel.is_set:
                return
            with _LOCK:
                library = _library()
                samples, events, spoken = library.synthesize(
                    piece, language, wpm=self.wpm, pitch=self.pitch,
                    end_pause=end_pause, cancel=cancel,
                )  # fmt: skip
                rate = library.sample_rate
            marks = phoneme_marks(events, offset, len(samples))
            words = event_word_marks(piece, spoken, len(samples), chars, offset)
            step, first, word = max(1, round(rate * CHUNK_SECONDS)), 0, 0
            for begin in range(0, len(samples), step):
                if cancel.is_set:
                    return
                end = offset + min(begin + step, len(samples))
                last, after = first, word
                while last < len(marks) and marks[last].offset < end:
                    last += 1
                while after < len(words) and (
                    words[after].offset < end or end == offset + len(samples)
                ):
                    after += 1
                yield AudioChunk(
                    samples[begin : begin + step],
                    rate,
                    tuple(marks[first:last]),
                    words=tuple(words[word:after]),
                )
                first, word = last, after
            offset += len(samples)
