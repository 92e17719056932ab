"""A voice stream's transcript (:meth:`anima.speech.stream.Stream.words`): the words shown in
its ``start_speak`` and ``^start``/``^run``/``^stop`` markers that become gesture cues at the
sample where the audio fed so far ends when they come.

A marker cut by a delta's end waits for its rest (at most :data:`HOLD_CHARS`); at most
:data:`~anima.language.markup.MAX_MARKERS` are played, as in one text; the words are bounded
as any text to say (:data:`~anima.language.text.MAX_SPEECH_TEXT`). Not thread-safe: the stream
calls it under the speech service's lock.
"""

from __future__ import annotations

import logging
import re

from anima.clock import Clock
from anima.errors import InvalidCommandError
from anima.events import EventHub, Notice
from anima.language.markup import MAX_MARKERS, Cue
from anima.language.text import MAX_SPEECH_TEXT
from anima.speech.cues import CuePlayer
from anima.speech.utterance import Playback

log = logging.getLogger(__name__)

_MARKER = re.compile(r"\^([A-Za-z_]\w*)\(\s*([\w.\-]*)\s*\)")
_SPACES = re.compile(r"\s{2,}")
HOLD_CHARS = 80  # an unclosed marker ending a delta waits for its rest this long at most
_KINDS = {"start": "start", "run": "start", "stop": "stop"}  # marker → the cue it becomes


class StreamWords:
    """The transcript of one stream's utterance (see the module docstring)."""

    def __init__(self, playback: Playback, cues: CuePlayer, events: EventHub, clock: Clock) -> None:
        self.playback = playback  # its utterance's text and its cues are written here
        self._cues, self._events, self._clock = cues, events, clock
        self._tail = ""  # an unclosed marker at the end of the last words
        self._said = ""  # the words so far, markers taken out (start_speak shows them)
        self._markers = 0  # markers met so far (at most MAX_MARKERS are played)

    def add(self, text: str, at: int) -> None:
        """The next words; their markers placed at sample ``at`` of the stream."""
        text = self._tail + text
        cut = text.rfind("^")
        if cut >= 0 and ")" not in text[cut:] and len(text) - cut < HOLD_CHARS:
            text, self._tail = text[:cut], text[cut:]  # a marker cut by the delta's end
        else:
            self._tail = ""
        self._say(text, at)

    def flush(self, at: int) -> None:
        """No more words: an unclosed tail is said as it is."""
        if self._tail:
            self._say(self._tail, at)
        self._tail = ""

    def drop(self) -> None:
        """The stream ended: an unclosed tail is forgotten."""
        self._tail = ""

    def _say(self, text: str, at: int) -> None:
        u = self.playback.utterance
        clean, pos = [], 0
        for m in _MARKER.finditer(text):
            clean.append(text[pos : m.start()])
            pos = m.end()
            self._markers += 1
            if self._markers <= MAX_MARKERS:  # as in one text: gestures, not a flood of moves
                self._marker(m.group(1), m.group(2), at)
            elif self._markers == MAX_MARKERS + 1:
                log.warning("voice stream %s: over %d markers; the rest ignored", u.id,
                            MAX_MARKERS)  # fmt: skip
        clean.append(text[pos:])
        if len(self._said) < MAX_SPEECH_TEXT:  # a marker taken out leaves one space, not two
            words = "".join(clean)[:MAX_SPEECH_TEXT]
            self._said = _SPACES.sub(" ", self._said + words)[:MAX_SPEECH_TEXT]
            u.text = self._said.strip()

    def _marker(self, kind: str, name: str, at: int) -> None:
        u = self.playback.utterance
        cue_kind = _KINDS.get(kind)
        if cue_kind is None:
            log.info("voice stream %s: ^%s(%s) ignored: a stream cannot hold", u.id, kind, name)
            return
        try:  # resolved as every door resolves a gesture's name
            script = self._cues.script(f"^start({name}) .")
        except InvalidCommandError as exc:
            message = f"voice stream {u.id}: ^{kind}({name}) ignored: {exc}"
            log.warning("%s", message)
            self._events.publish(Notice(t=self._clock.now(), source="speech", message=message))
            return
        resolved = next(iter(script.gestures), name)
        self.playback.cues.append(
            (at, Cue("start" if cue_kind == "start" else "stop", 0, resolved))
        )
