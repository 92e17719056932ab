"""Barge-in in full duplex: when a voice over the robot stops it, and when it lets it pass.

With ``listen.duplex`` the listener hears the person while the robot talks (the robot's own
voice taken out by the echo canceller) and reports a voice starting as a wake with source
``barge_in``, its round recording from the voice's first word. Whether the robot stops:

- a **stop word** in what is heard so far ("stop", "wait", "no", "hold on"…): at once, however
  unsure the recognizer is of it;
- a voice that goes on for ``listen.barge_in_s`` (0.8 s; voiced in most of it, to its end) —
  a backchannel is shorter — whose words so far are not a backchannel: at once when a partial
  has words, else at its first partial with words (the echo's remains under a short "sure"
  keep the VAD voiced, and Whisper reads nothing in them);
- a **backchannel** ("uh-huh", "yeah", "okay", "right"…) as the first words heard (a partial, at
  the voice's first pause) lets the robot go on, and what the round hears after it (the echo's
  remains read as words: "Okay, hey.") changes nothing unless it holds a stop word;
- else the round's transcript: a backchannel, nothing (a cough, a laugh: no words) or words the
  recognizer is unsure of (under ``listen.barge_in_confidence``: Whisper writes "And that's
  it." for an eSpeak "mm-hmm") lets the robot go on, untouched; so do other words when the
  recognizer, asked again with the backchannels as hints, finds a backchannel at least as
  likely (``second_reading``: Whisper's :meth:`~anima.listening.whisper.asr.WhisperAsr.likelier`);
  anything else stops it and is the next request.

Stopping is the speech's ``end_speak`` with reason ``interrupted`` and the plan canceled, as a
wake does. :func:`classify` is the words' rule; :class:`BargeIn` holds one candidate and makes
every decision (the conversation acts on them, the bench counts them).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Literal

from rapidfuzz import fuzz, process

if TYPE_CHECKING:
    from anima.listening.listener import Listener

Words = Literal["stop", "backchannel", "nothing", "other"]

# said to show one is listening, not to take the turn (normalized: lower case, no punctuation)
BACKCHANNELS = frozenset({
    "uh huh", "uhhuh", "uh-huh", "mm hmm", "mmhmm", "mm-hmm", "mhm", "mm", "mmm", "hmm", "hm",
    "yeah", "yes", "yep", "yup", "ok", "okay", "right", "i see", "sure", "cool", "nice", "wow",
    "oh", "ah", "aha", "uh", "um", "got it", "alright", "all right", "oh yeah", "oh okay",
    "okay okay", "yeah yeah", "uh huh yeah", "true", "exactly", "indeed", "great",
    "ha ha", "haha", "hahaha", "ha ha ha",
})  # fmt: skip
STOP_WORDS = ("stop", "wait", "no", "hold on", "hang on", "enough", "quiet", "shut up", "pause",
              "excuse me", "stop it", "be quiet", "nope", "cancel")  # fmt: skip
_STOP = re.compile(r"\b(" + "|".join(re.escape(w) for w in STOP_WORDS) + r")\b")
_LETTERS = sorted({b.replace(" ", "") for b in BACKCHANNELS})
# a reading this close (rapidfuzz ratio, letters only) to a backchannel of one or two words is
# one misheard ("Hi, see?" for "I see"); 85 keeps "hey" (57 to "yeah") and "wave" apart
NEAR_BACKCHANNEL = 85.0
# what Whisper writes for a sound that is not words: "(coughs)", "[laughs]", "*sigh*"
_SOUND = re.compile(r"[\(\[\*][^\)\]\*]*[\)\]\*]")


def normalized(text: str) -> str:
    text = _SOUND.sub(" ", text.lower())
    return " ".join(re.sub(r"[^a-z' -]", " ", text).replace("-", " ").split())


def classify(text: str) -> Words:
    """What words heard over the robot ask of it (see the module docstring)."""
    words = normalized(text)
    if not words:
        return "nothing"
    if _STOP.search(words):
        return "stop"
    letters = words.replace(" ", "")
    if words in BACKCHANNELS or letters in BACKCHANNELS or _backchannels(words.split()):
        return "backchannel"
    near = len(words.split()) <= 2 and process.extractOne(
        letters, _LETTERS, scorer=fuzz.ratio, score_cutoff=NEAR_BACKCHANNEL
    )
    return "backchannel" if near else "other"


def _backchannels(words: list[str]) -> bool:
    """``words`` are backchannels one after another ("oh oh yeah", "yeah okay yeah")."""
    ends = {0}  # how many of the words are covered so far
    for i in range(len(words)):
        if i in ends:
            ends |= {i + n for n in range(1, 4) if " ".join(words[i : i + n]) in BACKCHANNELS}
    return len(words) in ends


# the hints of the second reading (a backchannel as Whisper writes it)
HINTS = ("Mm-hmm.", "Uh-huh.", "Yeah.", "Okay.", "Right.", "I see.", "Sure.", "Yes.")
# the recognizer's second reading of its last final with hints: the reading when at least as
# likely, else None (WhisperAsr.likelier)
SecondReading = Callable[[str, Sequence[str]], "str | None"]


def recognizer_reading(listener: Callable[[], Listener | None]) -> SecondReading:
    """The second reading of ``listener()``'s recognizer, when it has one
    (:meth:`~anima.listening.whisper.asr.WhisperAsr.likelier`; looked up at each reading, since
    the conversation's listener may be set after it is made), else no reading."""

    def read(text: str, hints: Sequence[str]) -> str | None:
        from anima.listening.asr import Weighs

        heard = listener()
        recognizer = heard.recognizer if heard is not None else None
        return recognizer.likelier(text, hints) if isinstance(recognizer, Weighs) else None

    return read


Decision = Literal["go_on", "stop", "heard"]


class BargeIn:
    """One voice heard over the robot at a time, from its onset to the decision (thread-safe).

    The rules of the module docstring, in one place for the conversation and ``anima bench
    duplex``: :meth:`open` at the barge-in; :meth:`on_partial` and :meth:`on_sustained` answer
    True when the robot must stop now; :meth:`on_final` says what the round's transcript is
    (None: no candidate was open, an ordinary turn); :meth:`on_gave_up` ends a round without
    words. ``sustain_s`` is ``listen.barge_in_s``; a final without a stop word under
    ``min_confidence`` (``listen.barge_in_confidence``) is not words; ``second_reading`` (None:
    none) asks the recognizer again when a final's words would stop the robot.
    """

    def __init__(
        self,
        *,
        sustain_s: float = 0.8,
        min_confidence: float = 0.0,
        second_reading: SecondReading | None = None,
    ) -> None:
        self.sustain_s = sustain_s
        self.min_confidence = min_confidence
        self.second_reading = second_reading
        self.second_readings = 0  # finals read again
        self.read_as_backchannel = 0  # of them, how many were a backchannel after all
        self._words: Words = "nothing"  # what the latest partial reads as
        self._held = False  # the voice went on for sustain_s (before any partial had words)
        self._lock = threading.Lock()
        self._open = False
        self._stopped = False
        self._passed = False  # its first words were a backchannel
        self.heard = 0  # candidates so far
        self.stops = 0  # of them, how many stopped the robot
        self.passed = 0  # let pass (backchannels, sounds)

    def open(self) -> None:
        with self._lock:
            self._open, self._stopped, self._passed = True, False, False
            self._words, self._held = "nothing", False
            self.heard += 1

    @property
    def pending(self) -> bool:
        """A voice was heard over the robot and nothing is decided yet."""
        with self._lock:
            return self._open and not self._stopped

    def _stop_locked(self) -> bool:
        if not self._open or self._stopped:
            return False
        self._stopped = True
        self.stops += 1
        return True

    def on_partial(self, text: str) -> bool:
        """A partial: True (once) when it holds a stop word, or words after a held voice; a
        backchannel as the first words lets the robot go on (the round's final then only stops
        it with a stop word)."""
        with self._lock:
            words = self._words = classify(text)
            if words == "backchannel" and self._open and not self._stopped:
                self._passed = True
            held = self._held and words == "other" and not self._passed
            return (words == "stop" or held) and self._stop_locked()

    def on_sustained(self, voice_now: bool, *, words_needed: bool = True) -> bool:
        """``sustain_s`` after the barge-in: True (once) when the voice still goes on and the
        latest partial has words that are not a backchannel (with no partial yet, the first
        one with words decides: :meth:`on_partial`). ``words_needed=False``: a held voice with
        no words yet stops the robot too (a realtime server transcribes only after the turn,
        so no partial comes while the person talks)."""
        with self._lock:
            if not voice_now or self._passed or self._words == "backchannel":
                return False
            if self._words == "nothing" and words_needed:
                self._held = True
                return False
            return self._stop_locked()

    def on_final(self, text: str, confidence: float | None = None) -> Decision | None:
        """The round's transcript: ``go_on`` (a backchannel, no words, or a final without a stop
        word the recognizer is unsure of — Whisper writes "Thank you for watching." for a
        breath: drop it, the robot talks on), ``stop`` (stop the robot now, then it is the next
        request), ``heard`` (the robot was already stopped: it is the next request), None (no
        candidate was open: an ordinary final)."""
        unsure = confidence is not None and confidence < self.min_confidence
        words = classify(text)
        words = "nothing" if unsure and words != "stop" else words
        if words == "other" and self.pending and self.second_reading is not None:
            words = self._read_again(text)  # a decode (~0.1 s): not under the lock
        with self._lock:
            if not self._open:
                return None
            self._open = False
            if self._stopped:
                return "heard"
            if words in ("backchannel", "nothing") or (self._passed and words != "stop"):
                self.passed += 1
                return "go_on"
            self._stopped = True
            self.stops += 1
            return "stop"

    def _read_again(self, text: str) -> Words:
        assert self.second_reading is not None
        again = self.second_reading(text, HINTS)
        self.second_readings += 1
        if again is not None and classify(again) == "backchannel":
            self.read_as_backchannel += 1
            return "backchannel"
        return "other"

    def on_gave_up(self) -> bool:
        """The round ended without words (a cough): True when it closed a candidate."""
        return self.on_final("") is not None
