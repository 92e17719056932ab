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

Gesture names are taken as every other door takes them (:mod:`anima.animation.names`: any case,
a friendly alias, ``^start(wave)`` for ``LOOKUP_Waving``): :func:`checked` resolves each once,
as the marker is read, so the script carries the library's names (what ``move_started`` and a
``^wait`` go by), and refuses an unknown one with the library's "did you mean".
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from anima.animation.names import Names
from anima.errors import InvalidCommandError

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


@dataclass(frozen=True)
class Script:
    text: str  # the clean text: every segment's, joined
    segments: tuple[Segment, ...]
    gestures: frozenset[str] = field(default_factory=frozenset)  # every name a marker gives

    @property
    def annotated(self) -> bool:
        return bool(self.gestures) or any(s.cues for s in self.segments)


Resolve = Callable[[str], str | None]  # a name as given → the library's, None when unknown


def parse(
    text: str,
    mode: Mode = "disabled",
    resolve: Resolve | None = None,
    refusal: Callable[[str], str] | None = None,
) -> Script:
    """``text``'s script (see the module docstring); ``mode`` is the automatic gestures' mode
    at its start. With ``resolve`` each gesture name is the library's (``refusal`` says why
    an unknown one is refused); without, the names are kept as written."""
    if "^" not in text and mode == "disabled":
        return Script(text, (Segment(text),))
    builder = _Builder(text, mode, resolve, refusal)
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
    if known is None:
        script = parse(text, mode)
        if script.gestures:
            raise InvalidCommandError(
                "speech markers name gestures, but this runtime has no animation library"
            )
    else:
        names = _names(tuple(choices))
        exact = known

        def resolve(name: str) -> str | None:
            return name if exact(name) else names.resolve(name)

        script = parse(text, mode, resolve, names.refusal)
    if words and not script.text:
        raise InvalidCommandError("nothing to say: the text holds only speech markers")
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
    def __init__(
        self,
        text: str,
        mode: Mode,
        resolve: Resolve | None = None,
        refusal: Callable[[str], str] | None = None,
    ) -> None:
        self._source = text
        self._mode: Mode = mode
        self._resolve = resolve
        self._refusal = refusal
        self._segments: list[Segment] = []
        self._text = ""  # the current segment's text
        self._cues: list[Cue] = []
        self._started: set[str] = set()
        self._names: set[str] = set()
        self._spans: list[tuple[int, int, Mode]] = []  # (segment chars from, to, mode) of text

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
        name = self._library_name(kind, name, where)
        if kind in ("stop", "wait") and name not in self._started:
            raise InvalidCommandError(
                f"^{kind}({name}) at character {where}: no ^start({name}) before it in the text"
            )
        if kind == "start":
            self._started.add(name)
            self._names.add(name)
            self._cues.append(Cue("start", len(self._text), name))
        elif kind == "stop":
            self._cues.append(Cue("stop", len(self._text), name))
        else:  # wait, run: the segment ends here
            self._names.add(name)
            self._close(run=(name,) if kind == "run" else (), wait=(name,))
        return arg.end()

    def _library_name(self, kind: str, name: str, where: int) -> str:
        """The library's name for a marker's ``name`` (resolved once, here), or the refusal."""
        if self._resolve is None:
            return name
        found = self._resolve(name)
        if found is None:
            why = self._refusal(name) if self._refusal else f"unknown animation {name!r}"
            raise InvalidCommandError(f"speech marker ^{kind}({name}) at character {where}: {why}")
        return found

    def _close(self, run: tuple[str, ...] = (), wait: tuple[str, ...] = ()) -> None:
        text = self._text.rstrip()
        cues = [c if c.char <= len(text) else Cue(c.kind, len(text), c.name) for c in self._cues]
        cues += _contextual(text, self._spans)
        cues.sort(key=lambda c: c.char)
        self._segments.append(Segment(text, tuple(cues), run, wait))
        self._text, self._cues, self._spans = "", [], []

    def script(self) -> Script:
        self._close()
        segments = [s for s in self._segments if s.text or s.cues or s.run or s.wait]
        text = " ".join(s.text for s in segments if s.text)
        return Script(text, tuple(segments), frozenset(self._names))


def _contextual(text: str, spans: Sequence[tuple[int, int, Mode]]) -> list[Cue]:
    """The automatic cues of a segment's text, where its mode was contextual: a tilt at the
    last word of a question, a beat at the last word of an exclamation, at a word in capitals
    (two letters or more: "NOW", not "I"), and at the first word of each clause after the
    first that runs :data:`BEAT_WORDS` words or more (the beat of a speaker starting a phrase)."""

    def contextual(char: int) -> bool:
        return any(a <= char < b and m == "contextual" for a, b, m in spans)

    cues: list[Cue] = []
    for match in _SENTENCE_END.finditer(text):
        mark = match.group()
        if "?" not in mark and "!" not in mark:
            continue
        last = text.rfind(" ", 0, match.start()) + 1
        if contextual(last):
            cues.append(Cue("tilt" if "?" in mark else "beat", last))
    cues += [Cue("beat", m.start()) for m in _CAPITALS.finditer(text) if contextual(m.start())]
    for match in _CLAUSE_END.finditer(text):
        start = match.end()
        while start < len(text) and text[start].isspace():
            start += 1
        end = _CLAUSE_END.search(text, start)
        words = text[start : end.start() if end else len(text)].split()
        if len(words) >= BEAT_WORDS and contextual(start):
            cues.append(Cue("beat", start))
    return cues
