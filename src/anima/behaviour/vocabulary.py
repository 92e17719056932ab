"""What a robot can be asked to do, by name: the agent's view of its animation library.

The agent names gestures and gaze postures in its actions, and shows it heard with a blink;
:class:`Vocabulary` is those names, built from a loaded library and the behaviour's config
without a runtime (``anima agent actions`` lists a robot's actions with no robot running).
"""

from __future__ import annotations

from dataclasses import dataclass

from anima.animation.library import AnimationLibrary
from anima.config import BehaviourConfig


@dataclass(frozen=True, kw_only=True)
class Vocabulary:
    gestures: tuple[str, ...]  # animations a person may ask for (not the shutdown, idle loops)
    postures: tuple[str, ...]  # gaze and body postures (look_at_target's names)
    blink: str  # the animation that shows "I heard you" when the head need not turn
    humanoid: bool = False  # a humanoid is linked: walking, turning, stand motions apply

    @classmethod
    def of(
        cls, library: AnimationLibrary, config: BehaviourConfig, *, humanoid: bool = False
    ) -> Vocabulary:
        """The vocabulary of ``library`` (loaded) under ``config``."""
        hidden = {config.shutdown_animation, *config.looping_idle_animations}
        return cls(
            gestures=tuple(n for n in library.gestures() if n not in hidden),
            postures=tuple(library.postures()),
            blink=config.blink_animation,
            humanoid=humanoid,
        )
