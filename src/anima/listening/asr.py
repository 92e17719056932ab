"""Speech to text, streaming: the :class:`Recognizer` protocol, and pocketsphinx with a command
grammar or its full language model — the small fallback. The default (``listen.asr: auto``) is
Whisper (:mod:`anima.listening.whisper.asr`), which hears any words; the registry
(:mod:`anima.listening.registry`) makes the one configured.

With a **grammar** (the default) the recognizer can only hear the command phrases it was given
(the action registry's "wave", "look at me", …): a JSGF grammar is generated from them, after
each phrase is reduced to the dictionary's words (lower case, punctuation dropped). Phrases with
words the dictionary does not know are left out of the grammar and reported (a warning, and
:attr:`PocketsphinxAsr.unknown`). On synthetic and clear voices this gives 0–5 % word error in
~10–30 ms per utterance. With the **language model** (``mode="lm"``, for an LLM planner) anything
can be heard, with far more errors (16–79 % on synthetic voices).

pocketsphinx's grammar search reports its best path even when it has not reached the end of a
phrase ("look at" for a clipped "look at me"); since the grammar allows only whole phrases, a final
result that is the beginning of exactly one phrase is completed to it.

The decoder runs in a worker process (:mod:`anima.listening.sphinx_worker`): pocketsphinx holds
the GIL through each call — 115–350 ms to load, up to seconds to decode and end an utterance
with the language model — which would stall the 100 Hz motion loop. :meth:`PocketsphinxAsr.close`
ends the process (it also ends with this one).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from anima.audio import Frame
from anima.choices import AsrMode
from anima.errors import ConfigError, MissingDependencyError
from anima.listening.sphinx_worker import SphinxWorker, still_running

logger = logging.getLogger(__name__)

ASR_MODES = tuple(AsrMode)  # the choices of listen.asr_mode
_NOT_WORD = re.compile(r"[^a-z0-9']+")


@runtime_checkable
class Recognizer(Protocol):
    """A streaming recognizer: one utterance at a time, fed 16 kHz frames."""

    name: str
    # how sure it is of the utterance last finished, 0-1 (None: the engine cannot say)
    confidence: float | None
    # the utterance last finished read other ways, best first (Whisper's beam; () for none)
    alternatives: tuple[str, ...]

    def load(self) -> None:
        """Load models (may take a second); raises when unavailable."""
        ...

    def start(self) -> None:
        """Begin an utterance (ends any unfinished one, discarding it)."""
        ...

    def feed(self, frame: Frame) -> str | None:
        """Decode one frame; the partial text when it changed, else None."""
        ...

    def finish(self) -> str:
        """End the utterance and return its final text ("" when nothing was recognized)."""
        ...

    def cancel(self) -> None:
        """End the utterance, discarding it."""
        ...

    def close(self) -> None:
        """Free what :meth:`load` took (a worker process, a decoding thread); nothing when it
        holds nothing."""
        ...


@dataclass(frozen=True, kw_only=True)
class Reading:
    """An utterance read so far: its text, how sure the engine is, its other readings."""

    text: str
    confidence: float | None = None
    alternatives: tuple[str, ...] = ()


@runtime_checkable
class ReadsAhead(Protocol):
    """A recognizer that can read the utterance so far as :meth:`Recognizer.finish` would,
    without ending it (Whisper): what the early reply of full duplex is planned from
    (``listen.turn_early_s``). A recognizer without it gives no early reply."""

    def tentative(self) -> Reading:
        """The utterance so far, read now; it goes on (the next frames belong to it)."""
        ...


@runtime_checkable
class Rereads(Protocol):
    """A recognizer that can read its last final again with other words in mind (Whisper): what
    the agent asks when it cannot read a request (docs/listening.md, *Reading again*)."""

    def reread(self, text: str, hints: Sequence[str]) -> tuple[str, ...]:
        """``text`` (the last final) read again with ``hints`` in mind: its readings, best
        first; nothing when ``text`` is not the last final any more."""
        ...


@runtime_checkable
class Weighs(Protocol):
    """A recognizer that can say whether another reading of its last final is at least as
    likely (Whisper): full duplex's second opinion on words heard over the robot."""

    def likelier(self, text: str, hints: Sequence[str]) -> str | None:
        """``text`` (the last final) read again with ``hints`` in mind: the new reading when it
        is at least as likely, else None."""
        ...


def normalize(phrase: str) -> str:
    """``phrase`` as dictionary words: lower case, runs of anything but letters, digits and
    apostrophes become one space (``"Look at me!"`` → ``"look at me"``)."""
    return " ".join(_NOT_WORD.sub(" ", phrase.lower()).split())


@dataclass(frozen=True, kw_only=True)
class Grammar:
    """A JSGF grammar of command phrases, and what could not go in."""

    jsgf: str
    phrases: tuple[str, ...]  # normalized phrases in the grammar, in the order given
    unknown: tuple[tuple[str, tuple[str, ...]], ...]  # (phrase as given, its unknown words)


def build_grammar(
    phrases: Iterable[str], known: Callable[[str], bool], *, name: str = "commands"
) -> Grammar:
    """A grammar whose one public rule is any of ``phrases``; ``known(word)`` says whether the
    recognizer's dictionary has a word. Duplicates and empty phrases are dropped."""
    kept: list[str] = []
    unknown: list[tuple[str, tuple[str, ...]]] = []
    for given in phrases:
        phrase = normalize(given)
        if not phrase or phrase in kept:
            continue
        missing = tuple(w for w in phrase.split() if not known(w))
        if missing:
            unknown.append((given, missing))
        else:
            kept.append(phrase)
    body = " | ".join(f"( {p} )" for p in kept)
    jsgf = f"#JSGF V1.0;\ngrammar {name};\npublic <command> = {body};\n" if kept else ""
    return Grammar(jsgf=jsgf, phrases=tuple(kept), unknown=tuple(unknown))


def complete_prefix(text: str, phrases: Sequence[str]) -> str:
    """``text`` completed to the one phrase it begins (by whole words), else unchanged."""
    words = text.split()
    if not words or text in phrases:
        return text
    matches = [p for p in phrases if p.split()[: len(words)] == words]
    return matches[0] if len(matches) == 1 else text


class PocketsphinxAsr:
    """A :class:`Recognizer` on pocketsphinx 5 and its bundled en-US model.

    ``mode="grammar"`` needs ``phrases``; ``mode="lm"`` uses the bundled language model.
    Use it from one thread (the listener's).
    """

    name = "pocketsphinx"
    # pocketsphinx 5's posterior is not computed with bestpath off (the grammar's setting) and
    # means little with the language model: no confidence
    confidence: float | None = None
    alternatives: tuple[str, ...] = ()  # one reading only

    def __init__(self, *, phrases: Sequence[str] = (), mode: str = "grammar") -> None:
        if mode not in ASR_MODES:
            raise ConfigError(f"listen.asr_mode must be one of {', '.join(ASR_MODES)}: {mode!r}")
        if mode == "grammar" and not phrases:
            raise ConfigError("listen.phrases: a grammar needs at least one command phrase")
        self.mode = mode
        self._given = tuple(phrases)
        self.grammar: Grammar | None = None
        self._decoder: SphinxWorker | None = None
        self._in_utterance = False
        self._partial = ""

    @property
    def phrases(self) -> tuple[str, ...]:
        """The phrases the grammar accepts (after :meth:`load`; empty in ``lm`` mode)."""
        return self.grammar.phrases if self.grammar else ()

    @property
    def unknown(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """Phrases left out of the grammar, each with its words the dictionary lacks."""
        return self.grammar.unknown if self.grammar else ()

    def load(self) -> None:
        if still_running(self._decoder, self.name):
            return
        import_pocketsphinx()  # here, so a missing package is named before a process starts
        # loglevel: pocketsphinx logs every model file to stderr otherwise
        config: dict[str, str | float | bool | None] = {"loglevel": "FATAL"}
        if self.mode == "grammar":
            # the lattice rescoring at end_utt drops words the search had found: "say hello"
            # (eSpeak) ends as "" and "look at me" as "look at"; the search's own path is right
            config |= {"lm": None, "bestpath": False}
        decoder = SphinxWorker.start(config)
        try:
            if self.mode == "grammar":
                self._use_grammar(decoder)
        except BaseException:
            decoder.close()
            raise
        self._decoder = decoder
        self._in_utterance = False

    def _use_grammar(self, decoder: SphinxWorker) -> None:
        words = sorted({w for p in self._given for w in normalize(p).split()})
        known = dict(zip(words, decoder.known(words), strict=True))
        grammar = build_grammar(self._given, lambda w: known.get(w, False))
        for phrase, missing in grammar.unknown:
            logger.warning(
                "asr: %r left out of the grammar: not in the dictionary: %s",
                phrase, ", ".join(missing),
            )  # fmt: skip
        if not grammar.phrases:
            raise ConfigError(
                "listen.phrases: no phrase is made of dictionary words: "
                + "; ".join(f"{p!r} ({', '.join(w)})" for p, w in grammar.unknown)
            )
        try:
            decoder.add_jsgf("commands", grammar.jsgf)
        except ValueError as exc:
            raise ConfigError(f"listen.phrases: the grammar does not parse: {exc}") from exc
        decoder.activate("commands")
        self.grammar = grammar

    def _worker(self) -> SphinxWorker:
        self.load()
        assert self._decoder is not None
        return self._decoder

    def start(self) -> None:
        decoder = self._worker()
        if self._in_utterance:
            decoder.end_utt()
        decoder.start_utt()
        self._in_utterance = True
        self._partial = ""

    def feed(self, frame: Frame) -> str | None:
        decoder = self._worker()  # a new worker, if the last one died, begins a new utterance
        if not self._in_utterance:
            self.start()
        text = decoder.feed(frame.tobytes()).text or ""
        if text == self._partial:
            return None
        self._partial = text
        return text

    def finish(self) -> str:
        decoder = self._worker()
        if not self._in_utterance:
            return ""
        self._in_utterance = False
        text = " ".join((decoder.end_utt() or "").split())
        return complete_prefix(text, self.phrases) if self.mode == "grammar" else text

    def cancel(self) -> None:
        if self._in_utterance and self._decoder is not None and self._decoder.alive:
            self._in_utterance = False
            self._decoder.end_utt()
        self._in_utterance = False

    def close(self) -> None:
        """End the worker process (a later call starts a new one)."""
        if self._decoder is not None:
            self._decoder.close()
            self._decoder = None
        self._in_utterance = False


def import_pocketsphinx() -> Any:
    """The ``pocketsphinx`` module, or :class:`MissingDependencyError` naming the extra."""
    try:
        import pocketsphinx
    except ImportError as exc:
        raise MissingDependencyError("pocketsphinx", "listen") from exc
    return pocketsphinx
