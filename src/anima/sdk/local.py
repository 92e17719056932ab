"""The Robot's backend for a runtime in this very process (``Robot.local(config)``).

Commands go straight to :meth:`Runtime.execute`, so refusals are raised where they are made
(UnknownAnimationError, CommandRefusedError, …); handles are finished from the runtime's events.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from anima import commands as cmd
from anima.errors import NotSupportedError, RobotNotConnectedError
from anima.events import (
    Event,
    MoveFinished,
    SpeechEnded,
)
from anima.sdk.backend import (
    RobotSnapshot,
    check_kind,
    hub_kind,
    snapshot_of,
)
from anima.sdk.handles import AnimationHandle, HandleBook, SpeechHandle
from anima.sdk.humanoid import HumanoidActions

if TYPE_CHECKING:
    from anima.config import AnimaConfig
    from anima.runtime import Runtime


class LocalBackend:
    """Owns a :class:`~anima.runtime.Runtime`: started by ``open()``, stopped by ``close()``."""

    description = "local runtime"

    def __init__(
        self, config: AnimaConfig | None = None, *, doors: bool = False, **runtime_kwargs: Any
    ) -> None:
        self._config = config
        self._doors = doors
        self._kwargs = runtime_kwargs
        self.runtime: Runtime | None = None
        self._book = HandleBook()
        self._unsubscribe: list[Callable[[], None]] = []

    # ------------------------------------------------------------------ lifecycle
    def open(self, timeout: float) -> None:
        from anima.build import build

        runtime = build(self._config, doors=self._doors, **self._kwargs)
        events = runtime.events
        self._unsubscribe = [
            events.subscribe(self._on_event, SpeechEnded.kind, MoveFinished.kind),
        ]
        runtime.start()
        self.runtime = runtime
        runtime.wait_first_tick(timeout)

    def close(self) -> None:
        runtime, self.runtime = self.runtime, None
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe = []
        if runtime is not None:
            runtime.stop()
        self._book.close(RobotNotConnectedError("the robot was closed"))

    def _rt(self) -> Runtime:
        if self.runtime is None:
            raise RobotNotConnectedError("the local runtime is not running")
        return self.runtime

    def _on_event(self, event: Event) -> None:
        if isinstance(event, SpeechEnded):
            self._book.speech_ended(event.utterance, event.reason)
        elif isinstance(event, MoveFinished):
            self._book.animation_ended(event.name, event.reason or "done")

    # ------------------------------------------------------------------ speech
    def say(self, text: str, locale: str, timeout: float) -> SpeechHandle:
        utterance = self._rt().execute(cmd.Speak(text=text, locale=locale)).utterance
        handle = SpeechHandle(text, self.stop_speaking, timeout, utterance=utterance)
        self._book.add_speech(handle)
        return handle

    def stop_speaking(self) -> None:
        self._rt().execute(cmd.StopSpeaking())

    # ------------------------------------------------------------------ motion
    def play(self, name: str, timeout: float) -> AnimationHandle:
        rt = self._rt()
        # the library's name ("wave" → LOOKUP_Waving): the one its animation_done carries
        name = rt.library.resolve(name)
        handle = AnimationHandle(name, lambda: self.cancel_animation(name), timeout)
        with self._book.sending(handle):  # tracked first: a short move's end may come at once
            played = rt.execute(cmd.PlayAnimation(name=name))
        if played.idle_layer:  # a blink, a looping idle animation: no animation_done comes
            self._book.forget(handle)
            handle.finish("done")
        return handle

    def stop_animation(self) -> None:
        self._rt().execute(cmd.StopAnimation())

    def cancel_animation(self, name: str) -> None:
        self._rt().execute(cmd.CancelAnimation(name=name))

    def look_at(self, x: float, y: float, z: float) -> None:
        self._rt().execute(cmd.LookAt(x=x, y=y, z=z))

    def look_at_target(self, name: str) -> None:
        self._rt().execute(cmd.LookAtTarget(name=name))

    def end_look_at(self) -> None:
        self._rt().execute(cmd.EndLookAt())

    def estop(self) -> None:
        self._rt().execute(cmd.EmergencyStop())

    def reset(self) -> None:
        self._rt().execute(cmd.ResetEmergencyStop())

    # ------------------------------------------------------------------ state and events
    def state(self, timeout: float) -> RobotSnapshot:
        return snapshot_of(self._rt().state())

    def subscribe(self, kind: str, fn: Callable[[Event], None]) -> Callable[[], None]:
        check_kind(kind)
        rt = self._rt()
        if kind != "animation_done":
            return rt.events.subscribe(fn, hub_kind(kind))
        library = rt.library

        def animations_only(event: Event) -> None:
            if isinstance(event, MoveFinished) and event.name in library:
                fn(event)

        return rt.events.subscribe(animations_only, MoveFinished.kind)

    def humanoid(self) -> HumanoidActions:
        rt = self._rt()
        if rt.humanoid is None:
            raise NotSupportedError(
                "no humanoid is linked to this runtime: set humanoid.type to sim or adam"
            )
        from anima.humanoid.commanded import CommandedHumanoid

        return HumanoidActions(CommandedHumanoid(rt.execute))
