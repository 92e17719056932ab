"""Annotated speech: gestures written into the text, NAOqi's convention.

``"Hello! ^start(LOOKUP_Waving) Nice to meet you ^run(nod) and welcome."``

* ``^start(name)`` starts a gesture as the next word is heard;
* ``^stop(name)`` stops it there (if it still plays);
* ``^wait(name)`` holds the speech until a gesture ``^start`` ed earlier has ended;
* ``^run(name)`` holds the speech, plays the gesture to its end, then speaks on;
* ``^mode(contextual)`` / ``^mode(disabled)`` turns the automatic gestures on or off from there
  (contextual: a head tilt on a question, a beat on an exclamation or a word in capitals).

:func:`parse` turns such text into a :class:`Script`: the clean text (what is said and shown in
``start_speak``), cut into :class:`Segment` s at each ``^wait``/``^run``, each with the
:class:`Cue` s to fire at its words. A ``^`` not followed by ``name(`` is plain text. Unknown
markers, unclosed ones, bad modes and a ``^stop``/``^wait`` of a gesture never started are
refused with an :class:`~anima.errors.InvalidCommandError` that names the marker and where it is.

Gesture names are taken as every other door takes them (:mod:`anima.language.names`: any case,
a friendly alias, ``^start(wave)`` for ``LOOKUP_Waving``): :func:`named` resolves each once, in
a script :func:`read` once (a :class:`~anima.commands.Speak` command's), so the script carries
the library's names (what ``move_started`` and a ``^wait`` go by), and refuses an unknown one
with the library's "did you mean"; :func:`checked` does both. The automatic gestures wait for
the speaker's mode (:meth:`Script.under`).
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from anima.errors import InvalidCommandError
from anima.language.names import Names

MARKERS = ("start", "stop", "wait", "run", "mode")
MODES = ("contextual", "disabled")
Mode = Literal["contextual", "disabled"]
CueKind = Literal["start", "stop", "tilt", "beat"]
_MARKER = re.compile(r"\^([A-Za-z_]\w*)\(")
_ARGUMENT = re.compile(r"\s*([\w.\-]+)\s*\)")
_SENTENCE_END = re.compile(r"[.!?…]+[\"'”’)\]]*(?=\s|$)")
_CAPITALS = re.compile(r"\b[A-Z]{2,}\b")
_CLAUSE_END = re.compile(r"[,;:.!?…]+[\"'”’)\]]*(?=\s)")
BEAT_WORDS = 4  # a clause this long (in words) starts with a beat
_SHOWN = 60  # characters of a marker's context quoted in an error
MAX_MARKERS = 32  # in one text: a gesture every few words at most, not a flood of moves
NO_WORDS = "nothing to say: the text holds only speech markers"


@dataclass(frozen=True)
class Cue:
    """Something to do as the word at character ``char`` of its segment's text is heard (or at
    the segment's end when no word follows): start/stop a gesture, or a contextual tilt/beat."""

    kind: CueKind
    char: int
    name: str = ""


@dataclass(frozen=True)
class Segment:
    """Text spoken without a hold, its cues, then what ends it: ``run`` gestures to play and
    ``wait`` for (a ``^run``: both), before the next segment is spoken."""

    text: str
    cues: tuple[Cue, ...] = ()
    run: tuple[str, ...] = ()
    wait: tuple[str, ...] = ()
    # contextual cues of text no ^mode governs: cues when the speaker's own mode is contextual
    # (a script parsed with mode None: a Speak command's, before the speech service says it)
    accents: tuple[Cue, ...] = ()


@dataclass(frozen=True)
class Marker:
    """A gesture marker as written (``^start(wave)`` at character 6): what :func:`named`
    resolves against a library, in text order."""

    kind: str  # start, stop, wait or run
    name: str  # as written
    at: int  # its character in the text


@dataclass(frozen=True)
class Script:
    text: str  # the clean text: every segment's, joined
    segments: tuple[Segment, ...]
    gestures: frozenset[str] = field(default_factory=frozenset)  # every name a marker gives
    markers: tuple[Marker, ...] = field(default=(), compare=False)  # the gesture markers read

    @property
    def annotated(self) -> bool:
        return bool(self.gestures) or any(s.cues or s.accents for s in self.segments)

    def under(self, mode: Mode) -> Script:
        """This script as said by a speaker whose automatic gestures start in ``mode``: the
        pending accents become cues (contextual) or go (disabled). Nothing is parsed again."""
        if not any(s.accents for s in self.segments):
            return self
        segments = tuple(
            dataclasses.replace(
                s,
                cues=_by_char([*s.cues, *s.accents]) if mode == "contextual" else s.cues,
                accents=(),
            )
            for s in self.segments
        )
        return dataclasses.replace(self, segments=segments)


Resolve = Callable[[str], str | None]  # a name as given → the library's, None when unknown


def parse(
    text: str,
    mode: Mode | None = "disabled",
    resolve: Resolve | None = None,
    refusal: Callable[[str], str] | None = None,
) -> Script:
    """``text``'s script (see the module docstring); ``mode`` is the automatic gestures' mode
    at its start (None: the speaker's, applied later by :meth:`Script.under`). With ``resolve``
    each gesture name is the library's (``refusal`` says why an unknown one is refused);
    without, the names are kept as written."""
    if "^" not in text and mode == "disabled":
        return Script(text, (Segment(text),))
    script = _named(read(text), resolve, refusal)
    return script if mode is None else script.under(mode)


def read(text: str) -> Script:
    """``text``'s markers read once, their names as written and not yet checked against each
    other (:func:`named` does, resolving them), the automatic cues left to the speaker's mode
    (:meth:`Script.under`): what a :class:`~anima.commands.Speak` command carries."""
    builder = _Builder(text)
    at = 0
    markers = 0
    for match in _MARKER.finditer(text):
        if match.start() < at:
            continue  # inside a marker already read
        markers += 1
        if markers > MAX_MARKERS:
            raise InvalidCommandError(
                f"more than {MAX_MARKERS} speech markers in one text (the next is at character "
                f"{match.start()})"
            )
        builder.add_text(text[at : match.start()])
        at = builder.marker(match)
    builder.add_text(text[at:])
    return builder.script()


def _named(script: Script, resolve: Resolve | None, refusal: Callable[[str], str] | None) -> Script:
    """``script`` with each marker's name the library's (resolved once per name, in text
    order), a ``^stop``/``^wait`` of a gesture not started before it refused."""
    names: dict[str, str] = {}
    started: set[str] = set()
    for m in script.markers:
        name = names.get(m.name)
        if name is None:
            found = m.name if resolve is None else resolve(m.name)
            if found is None:
                why = refusal(m.name) if refusal else f"unknown animation {m.name!r}"
                raise InvalidCommandError(
                    f"speech marker ^{m.kind}({m.name}) at character {m.at}: {why}"
                )
            name = names[m.name] = found
        if m.kind in ("stop", "wait") and name not in started:
            raise InvalidCommandError(
                f"^{m.kind}({name}) at character {m.at}: no ^start({name}) before it in the text"
            )
        if m.kind == "start":
            started.add(name)
    if all(given == name for given, name in names.items()):
        return script

    def cue(c: Cue) -> Cue:
        return dataclasses.replace(c, name=names[c.name]) if c.name else c

    segments = tuple(
        dataclasses.replace(
            s,
            cues=tuple(cue(c) for c in s.cues),
            run=tuple(names[n] for n in s.run),
            wait=tuple(names[n] for n in s.wait),
        )
        for s in script.segments
    )
    gestures = frozenset(names[n] for n in script.gestures)
    return dataclasses.replace(script, segments=segments, gestures=gestures)


_ANY_MARKER = re.compile(r"\s*\^[A-Za-z_]\w*\(\s*[\w.\-]*\s*\)?")


def plain(text: str) -> str:
    """``text`` with everything that looks like a marker taken out (well formed or not): what
    is said of a model's reply whose markers were refused."""
    return re.sub(r"\s{2,}", " ", _ANY_MARKER.sub(" ", text)).strip()


def checked(
    text: str,
    known: Callable[[str], bool] | None,
    choices: Sequence[str] = (),
    mode: Mode = "disabled",
    *,
    words: bool = True,
) -> Script:
    """``text``'s script with its gestures resolved among the library's names ``choices``
    (``known``: one of them exactly; None: no animation library, so a text naming one is
    refused) and, with ``words``, something to say: what every door refuses before anything
    is said (:class:`~anima.errors.InvalidCommandError`, an unknown name with the closest)."""
    return named(read(text), known, choices, words=words).under(mode)


def named(
    script: Script,
    known: Callable[[str], bool] | None,
    choices: Sequence[str] = (),
    *,
    words: bool = True,
) -> Script:
    """A script :func:`read` (a :class:`~anima.commands.Speak` command's), its gestures
    resolved among the library's names as :func:`checked` resolves them, and a ``^stop`` or
    ``^wait`` of a gesture not started before it refused; nothing is parsed again."""
    if known is None:
        script = _named(script, None, None)  # a ^stop or ^wait with no ^start before it
        if script.gestures:
            raise InvalidCommandError(
                "speech markers name gestures, but this runtime has no animation library"
            )
    elif script.markers:
        names = _names(tuple(choices))
        exact = known

        def resolve(name: str) -> str | None:
            return name if exact(name) else names.resolve(name)

        script = _named(script, resolve, names.refusal)
    if words and not script.text:
        raise InvalidCommandError(NO_WORDS)
    return script


def check_gestures(
    script: Script, known: Callable[[str], bool], choices: Sequence[str] = ()
) -> None:
    """Refuse a script naming a gesture the library does not have exactly (with the closest
    names; :func:`checked` resolves aliases and spellings instead)."""
    names = _names(tuple(choices))
    for name in sorted(script.gestures):
        if not known(name):
            raise InvalidCommandError(f"speech marker names {names.refusal(name)}")


@functools.lru_cache(maxsize=8)
def _names(choices: tuple[str, ...]) -> Names:
    """The names of a library (one per library state: a reload gives new choices)."""
    return Names(choices)


class _Builder:
    """Reads the text and its markers once; the names stay as written (:func:`_named`)."""

    def __init__(self, text: str) -> None:
        self._source = text
        self._mode: Mode | None = None  # None: the speaker's mode, until a ^mode
        self._segments: list[Segment] = []
        self._text = ""  # the current segment's text
        self._cues: list[Cue] = []
        self._names: set[str] = set()
        self._markers: list[Marker] = []
        # (segment chars from, to, mode) of text
        self._spans: list[tuple[int, int, Mode | None]] = []

    def add_text(self, piece: str) -> None:
        if not piece:
            return
        if self._text and self._text[-1].isspace() and piece[0].isspace():
            piece = piece.lstrip()  # a marker between two spaces leaves one
        elif not self._text:
            piece = piece.lstrip()
        begin = len(self._text)
        self._text += piece
        self._spans.append((begin, len(self._text), self._mode))

    def marker(self, match: re.Match[str]) -> int:
        kind = match.group(1)
        where = match.start()
        arg = _ARGUMENT.match(self._source, match.end())
        shown = self._source[where : where + _SHOWN]
        if kind not in MARKERS:
            raise InvalidCommandError(
                f"unknown speech marker ^{kind}( at character {where} ({shown!r}): "
                f"use ^start, ^stop, ^wait, ^run or ^mode"
            )
        if arg is None:
            raise InvalidCommandError(
                f"speech marker ^{kind}( at character {where} needs one name and a closing "
                f"')' ({shown!r})"
            )
        name = arg.group(1)
        if kind == "mode":
            if name not in MODES:
                raise InvalidCommandError(
                    f"^mode({name}) at character {where}: the mode is contextual or disabled"
                )
            self._mode = name  # type: ignore[assignment]  # checked just above
            return arg.end()
        self._markers.append(Marker(kind, name, where))
        if kind == "start":
            self._names.add(name)
            self._cues.append(Cue("start", len(self._text), name))
        elif kind == "stop":
            self._cues.append(Cue("stop", len(self._text), name))
        else:  # wait, run: the segment ends here
            self._names.add(name)
            self._close(run=(name,) if kind == "run" else (), wait=(name,))
        return arg.end()

    def _close(self, run: tuple[str, ...] = (), wait: tuple[str, ...] = ()) -> None:
        text = self._text.rstrip()
        cues = [c if c.char <= len(text) else Cue(c.kind, len(text), c.name) for c in self._cues]
        contextual, accents = _contextual(text, self._spans)
        self._segments.append(
            Segment(text, _by_char([*cues, *contextual]), run, wait, _by_char(accents))
        )
        self._text, self._cues, self._spans = "", [], []

    def script(self) -> Script:
        self._close()
        segments = [s for s in self._segments if s.text or s.cues or s.run or s.wait or s.accents]
        text = " ".join(s.text for s in segments if s.text)
        return Script(text, tuple(segments), frozenset(self._names), tuple(self._markers))


def _by_char(cues: Sequence[Cue]) -> tuple[Cue, ...]:
    return tuple(sorted(cues, key=lambda c: c.char))  # stable: a marker's cue before an accent


def _contextual(
    text: str, spans: Sequence[tuple[int, int, Mode | None]]
) -> tuple[list[Cue], list[Cue]]:
    """The automatic cues of a segment's text: those where a ``^mode(contextual)`` rules, and
    those where no ^mode does (the speaker's mode decides: :meth:`Script.under`). A tilt at
    the last word of a question, a beat at the last word of an exclamation, at a word in
    capitals (two letters or more: "NOW", not "I"), and at the first word of each clause after
    the first that runs :data:`BEAT_WORDS` words or more (the beat of a speaker starting a
    phrase)."""
    contextual: list[Cue] = []
    accents: list[Cue] = []

    def add(cue: Cue) -> None:
        for a, b, mode in spans:
            if a <= cue.char < b:
                if mode == "contextual":
                    contextual.append(cue)
                elif mode is None:
                    accents.append(cue)
                return

    for match in _SENTENCE_END.finditer(text):
        mark = match.group()
        if "?" not in mark and "!" not in mark:
            continue
        last = text.rfind(" ", 0, match.start()) + 1
        add(Cue("tilt" if "?" in mark else "beat", last))
    for m in _CAPITALS.finditer(text):
        add(Cue("beat", m.start()))
    for match in _CLAUSE_END.finditer(text):
        start = match.end()
        while start < len(text) and text[start].isspace():
            start += 1
        end = _CLAUSE_END.search(text, start)
        words = text[start : end.start() if end else len(text)].split()
        if len(words) >= BEAT_WORDS:
            add(Cue("beat", start))
    return contextual, accents
