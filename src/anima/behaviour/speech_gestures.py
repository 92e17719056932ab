"""Gestures for annotated speech, through the behaviour's rules (``play_animation``'s).

A start counts the gesture as playing until its ``move_finished`` (played or cut) arrives;
``wait`` blocks on that count. Looping idle animations (``breathingSlow``) and the blink run as
idle layers, not moves: they count as ended at once.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Sequence

from anima.behaviour.controller import Behaviour
from anima.events import Event, EventHub, MoveFinished


class BehaviourGestures:
    def __init__(self, behaviour: Behaviour, events: EventHub) -> None:
        self._behaviour = behaviour
        self._cond = threading.Condition()
        self._playing: collections.Counter[str] = collections.Counter()
        events.subscribe(self._on_event, MoveFinished.kind)

    def known(self, name: str) -> bool:
        return name in self._behaviour.library

    def choices(self) -> Sequence[str]:
        return self._behaviour.library.names()

    def duration(self, name: str) -> float:
        anim = self._behaviour.library.get(name)
        return float(anim.duration) + self._behaviour.animation_config.reset_s

    def _is_move(self, name: str) -> bool:
        cfg = self._behaviour.config
        return name != cfg.blink_animation and name not in cfg.looping_idle_animations

    def start(self, name: str) -> None:
        if self._is_move(name):
            with self._cond:
                self._playing[name] += 1
        try:
            self._behaviour.play_animation(name)
        except BaseException:
            self._done(name)
            raise

    def stop(self, name: str) -> None:
        engine = self._behaviour.engine
        if not self._is_move(name):
            self._behaviour.stop_idle_animation(name)
        elif self._playing[name] and engine.state().move == name:
            engine.clear()

    def wait(self, name: str, timeout: float) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: self._playing[name] <= 0, timeout)

    def _done(self, name: str) -> None:
        with self._cond:
            if self._playing[name] > 0:
                self._playing[name] -= 1
            self._cond.notify_all()

    def _on_event(self, event: Event) -> None:
        if isinstance(event, MoveFinished) and self._playing[event.name]:
            self._done(event.name)
