"""Animation names as people guess them, from the SDK (issue 30 item 5): in-process, over MQTT
and over REST a handle asked for by an alias is finished by its gesture's animation_done,
which names the library's animation."""

from __future__ import annotations

import pytest

from anima.errors import CommandRejectedByRobotError, UnknownAnimationError
from anima.sdk import Robot
from anima.sdk.handles import AnimationHandle, HandleBook
from anima.testing import FakeClock

from .conftest import tick_until

pytestmark = pytest.mark.integration


def test_a_handle_asked_for_by_an_alias_ends_with_its_gesture(
    robot: Robot, clock: FakeClock
) -> None:
    with clock.hold():  # the 4.6 s wave cannot end before it is cancelled
        handle = robot.play("Lookup Waving")
        tick_until(clock, lambda: robot.state().move == "LOOKUP_Waving")
        handle.cancel()
        tick_until(clock, lambda: handle.done)
    assert handle.wait(5) == "cancelled"  # its own animation only (AnimationHandle.cancel)


def test_an_unknown_name_says_what_is_close(robot: Robot) -> None:
    with pytest.raises((UnknownAnimationError, CommandRejectedByRobotError)) as info:
        robot.play("wav", wait=True)
    assert "unknown animation 'wav' (did you mean LOOKUP_Waving?)" in str(info.value)


def test_the_book_pairs_an_alias_with_the_librarys_name() -> None:
    book = HandleBook()
    wave = AnimationHandle("wave", lambda: None, 1.0)
    nod = AnimationHandle("NOD", lambda: None, 1.0)
    book.add_animation(wave)
    book.add_animation(nod)
    book.animation_ended("shake", "done")  # neither's
    book.animation_ended("LOOKUP_Waving", "done")
    book.animation_ended("nod", "cleared")
    assert (wave.reason, nod.reason) == ("done", "cleared")
