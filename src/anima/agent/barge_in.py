"""Barge-in in full duplex: when a voice over the robot stops it, and when it lets it pass.

With ``listen.duplex`` the listener hears the person while the robot talks (the robot's own
voice taken out by the echo canceller) and reports a voice starting as a wake with source
``barge_in``, its round recording from the voice's first word. Whether the robot stops:

- a **stop word** in what is heard so far ("stop", "wait", "no", "hold on"…): at once;
- a voice that goes on for ``listen.barge_in_s`` (0.8 s): at once — a backchannel is shorter;
- the round's transcript: a **backchannel** ("uh-huh", "yeah", "okay", "right"…) or nothing (a
  cough, a laugh: no words) lets the robot go on, untouched; anything else stops it and is the
  next request.

Stopping is the speech's ``end_speak`` with reason ``interrupted`` and the plan canceled, as a
wake does. :func:`classify` is the words' rule; :class:`BargeIn` the state of one candidate.
"""

from __future__ import annotations

import re
import threading
from typing import Literal

Words = Literal["stop", "backchannel", "nothing", "other"]

# said to show one is listening, not to take the turn (normalized: lower case, no punctuation)
BACKCHANNELS = frozenset({
    "uh huh", "uhhuh", "uh-huh", "mm hmm", "mmhmm", "mm-hmm", "mhm", "mm", "mmm", "hmm", "hm",
    "yeah", "yes", "yep", "yup", "ok", "okay", "right", "i see", "sure", "cool", "nice", "wow",
    "oh", "ah", "aha", "uh", "um", "got it", "alright", "all right", "oh yeah", "oh okay",
    "okay okay", "yeah yeah", "uh huh yeah", "true", "exactly", "indeed", "great",
})  # fmt: skip
STOP_WORDS = ("stop", "wait", "no", "hold on", "hang on", "enough", "quiet", "shut up", "pause",
              "excuse me", "stop it", "be quiet", "nope", "cancel")  # fmt: skip
_STOP = re.compile(r"\b(" + "|".join(re.escape(w) for w in STOP_WORDS) + r")\b")
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
    if words in BACKCHANNELS or words.replace(" ", "") in BACKCHANNELS:
        return "backchannel"
    return "other"


class BargeIn:
    """One voice heard over the robot, from its onset to the decision (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open = False
        self._stopped = False
        self.heard = 0  # candidates so far
        self.stops = 0  # of them, how many stopped the robot
        self.passed = 0  # let pass (backchannels, sounds)

    def open(self) -> None:
        with self._lock:
            self._open, self._stopped = True, False
            self.heard += 1

    @property
    def pending(self) -> bool:
        """A voice was heard over the robot and nothing is decided yet."""
        with self._lock:
            return self._open and not self._stopped

    def stop(self) -> bool:
        """Decide to stop the robot; True the first time for this candidate."""
        with self._lock:
            if not self._open or self._stopped:
                return False
            self._stopped = True
            self.stops += 1
            return True

    def close(self, text: str) -> Words | None:
        """The round's transcript: None when no candidate was open; else its words (the
        caller stops the robot on "stop"/"other" unless :meth:`stop` already did)."""
        with self._lock:
            if not self._open:
                return None
            self._open = False
            words = classify(text)
            if words in ("backchannel", "nothing") and not self._stopped:
                self.passed += 1
            return words

    @property
    def stopped(self) -> bool:
        with self._lock:
            return self._stopped
