"""Handles on what a script asked the robot to do: wait for it, see if it is done, cancel it.

A handle is finished by the backend when the robot reports the end (``end_speak``,
``animation_done``) or a refusal; :class:`HandleBook` pairs those reports with the handles
waiting for them, whichever thread they arrive on.
"""

from __future__ import annotations

import collections
import functools
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from anima.errors import AnimaError, RobotTimeoutError
from anima.language import markup
from anima.language.names import Names

_REMEMBERED = 256  # ended utterance ids kept for a handle registered after its end arrived


class Handle:
    """Something started on the robot; finished once, by the robot's report or a refusal."""

    what = "command"

    def __init__(self, cancel: Callable[[], None], default_timeout: float) -> None:
        self._cancel = cancel
        self._default_timeout = default_timeout
        self._done = threading.Event()
        self._reason = ""
        self._error: AnimaError | None = None
        self.payload = ""  # as sent over MQTT, to pair a refusal on the error topic with it

    @property
    def done(self) -> bool:
        """True once the robot reported the end (or refused it)."""
        return self._done.is_set()

    @property
    def reason(self) -> str:
        """How it ended: ``done``, ``stopped``, ``cleared``, … (empty while running)."""
        return self._reason

    def wait(self, timeout: float | None = None) -> str:
        """Block until it ended and return :attr:`reason`.

        ``timeout`` in seconds (the robot's default when None); RobotTimeoutError when it passes,
        the robot's refusal (e.g. CommandRejectedByRobotError) when it was refused.
        """
        limit = self._default_timeout if timeout is None else timeout
        if not self._done.wait(limit):
            raise RobotTimeoutError(f"{self.what} did not end within {limit:g} s")
        if self._error is not None:
            raise self._error
        return self._reason

    def cancel(self) -> None:
        """Stop it now if it still runs; a finished handle is left alone."""
        if not self.done:
            self._cancel()

    # ------------------------------------------------------------------ for backends
    def finish(self, reason: str) -> None:
        if not self._done.is_set():
            self._reason = reason
            self._done.set()

    def fail(self, error: AnimaError) -> None:
        if not self._done.is_set():
            self._error = error
            self._reason = "refused"
            self._done.set()


class SpeechHandle(Handle):
    """One utterance; done after its ``end_speak``. ``cancel()`` stops speaking (barge-in).

    ``text`` is what was asked; ``utterance`` the runtime's id, "" until the robot assigned it.
    """

    def __init__(
        self, text: str, cancel: Callable[[], None], default_timeout: float, utterance: str = ""
    ) -> None:
        super().__init__(cancel, default_timeout)
        self.text = text
        self.said = _said(text)  # what its start_speak will show: the text without its markers
        self.utterance = utterance  # the runtime's id; "" until the robot assigned it
        self.what = f"speech {text[:40]!r}"


def _said(text: str) -> str:
    """``text`` as the robot's ``start_speak`` shows it: stripped, gesture markers taken out
    (a text whose markers the robot will refuse is left as it is: no start_speak comes)."""
    text = text.strip()
    if "^" not in text:
        return text
    try:
        return markup.parse(text).text
    except AnimaError:
        return text


class AnimationHandle(Handle):
    """One animation (``name``); done after its ``animation_done``. ``cancel()`` ends this
    animation only (``cancel_animation``): dropped if it waits, brought to a smooth hold if it
    runs (reason ``cancelled``); other animations go on. With several plays of one name waiting,
    it ends the oldest, the one the oldest handle is paired with."""

    def __init__(self, name: str, cancel: Callable[[], None], default_timeout: float) -> None:
        super().__init__(cancel, default_timeout)
        self.name = name
        self.what = f"animation {name!r}"


@functools.lru_cache(maxsize=256)
def stands_for(given: str, name: str) -> bool:
    """Whether ``given`` (what a client asked for) names the library's ``name``."""
    return given == name or Names((name,)).resolve(given) == name


class HandleBook:
    """The handles still waiting, and the pairing of the robot's reports with them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._speech: dict[str, SpeechHandle] = {}  # by utterance id
        self._unassigned: list[SpeechHandle] = []  # sent, no start_speak seen yet (MQTT)
        self._ended: collections.OrderedDict[str, str] = collections.OrderedDict()
        self._animations: list[AnimationHandle] = []

    def add_speech(self, handle: SpeechHandle) -> None:
        """Track ``handle``: by its id when known, else until :meth:`speech_started` names it."""
        with self._lock:
            if not handle.utterance:
                self._unassigned.append(handle)
                return
            ended = self._ended.pop(handle.utterance, None)
            if ended is None:
                self._speech[handle.utterance] = handle
        if ended is not None:
            handle.finish(ended)

    def speech_started(self, utterance: str, text: str) -> None:
        """A start_speak: the first unassigned handle saying ``text`` gets ``utterance``."""
        with self._lock:
            for handle in self._unassigned:
                if handle.said == text:
                    self._unassigned.remove(handle)
                    handle.utterance = utterance
                    self._speech[utterance] = handle
                    return

    def speech_ended(self, utterance: str, reason: str) -> None:
        with self._lock:
            handle = self._speech.pop(utterance, None)
            if handle is None:
                self._ended[utterance] = reason
                while len(self._ended) > _REMEMBERED:
                    self._ended.popitem(last=False)
        if handle is not None:
            handle.finish(reason)

    def add_animation(self, handle: AnimationHandle) -> None:
        with self._lock:
            self._animations.append(handle)

    def animation_ended(self, name: str, reason: str) -> None:
        """An animation_done: finishes the oldest handle waiting on ``name``, the library's
        name, which a handle asked for by an alias or in another case matches too (``wave``,
        ``lookup_waving`` for ``LOOKUP_Waving``: the robot resolved it so)."""
        with self._lock:
            handle = next((h for h in self._animations if stands_for(h.name, name)), None)
            if handle is not None:
                self._animations.remove(handle)
        if handle is not None:
            handle.finish(reason)

    def refused(
        self, kind: type[Handle], matches: Callable[[Handle], bool], error: AnimaError
    ) -> None:
        """A refusal: fails the oldest waiting handle of ``kind`` that ``matches``."""
        with self._lock:
            waiting: list[Handle] = list(
                self._unassigned if kind is SpeechHandle else self._animations
            )
            handle = next((h for h in waiting if matches(h)), None)
            if handle is not None:
                if isinstance(handle, SpeechHandle):
                    self._unassigned.remove(handle)
                elif isinstance(handle, AnimationHandle):
                    self._animations.remove(handle)
        if handle is not None:
            handle.fail(error)

    @contextmanager
    def sending(self, handle: SpeechHandle | AnimationHandle) -> Iterator[None]:
        """Track ``handle`` while its command is sent (so an end that comes back at once is not
        missed); forget it again if sending raises."""
        if isinstance(handle, SpeechHandle):
            self.add_speech(handle)
        else:
            self.add_animation(handle)
        try:
            yield
        except BaseException:
            self.forget(handle)
            raise

    def refused_command(self, command: str, argument: str, error: AnimaError) -> None:
        """A remote refusal of a ``speak`` or ``animation`` sent with payload (excerpt)
        ``argument``: fails the oldest waiting handle of that command sent so."""
        kind = {"speak": SpeechHandle, "animation": AnimationHandle}.get(command)
        if kind is not None:
            self.refused(kind, lambda h: h.payload == argument, error)

    def forget(self, handle: Handle) -> None:
        """Stop tracking ``handle`` (the command was refused before it was sent)."""
        with self._lock:
            if isinstance(handle, AnimationHandle) and handle in self._animations:
                self._animations.remove(handle)
            if isinstance(handle, SpeechHandle) and handle in self._unassigned:
                self._unassigned.remove(handle)

    def close(self, error: AnimaError) -> None:
        """Fail every waiting handle (the robot went away)."""
        with self._lock:
            handles: list[Handle] = [*self._speech.values(), *self._unassigned, *self._animations]
            self._speech.clear()
            self._unassigned.clear()
            self._animations.clear()
        for handle in handles:
            handle.fail(error)
