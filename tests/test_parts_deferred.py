"""A :class:`~anima.parts.Deferred` part makes its parts at prepare (after the first tick), then
prepares and starts them in order and stops them last first; a make that fails leaves nothing
running. (The MQTT door's tests find the door it made in ``runtime.frontdoors``.)"""

from __future__ import annotations

import pytest

from anima.parts import Deferred, Parts

pytestmark = pytest.mark.fast


class Noted:
    def __init__(self, name: str, log: list[str], *, fail_start: bool = False) -> None:
        self.name, self.log, self.fail_start = name, log, fail_start

    def prepare(self) -> None:
        self.log.append(f"prepare {self.name}")

    def start(self) -> None:
        if self.fail_start:
            raise RuntimeError(f"{self.name} cannot start")
        self.log.append(f"start {self.name}")

    def stop(self, timeout: float = 5.0) -> None:
        self.log.append(f"stop {self.name}")


def test_its_parts_are_made_at_prepare_started_in_order_and_stopped_last_first() -> None:
    log: list[str] = []
    made: list[str] = []

    def make() -> list[Noted]:
        made.append("made")
        return [Noted("broker", log), Noted("door", log)]

    deferred = Deferred(make)  # type: ignore[arg-type]
    parts = Parts()
    parts.add(deferred, running=False)
    assert made == []
    assert deferred.made == []
    parts.prepare()
    assert made == ["made"]
    parts.start()
    parts.stop()
    assert log == [
        "prepare broker",
        "prepare door",
        "start broker",
        "start door",
        "stop door",
        "stop broker",
    ]


def test_a_failed_start_still_stops_what_was_prepared() -> None:
    log: list[str] = []
    deferred = Deferred(lambda: [Noted("broker", log), Noted("door", log, fail_start=True)])
    parts = Parts()
    parts.add(deferred, running=False)
    parts.prepare()
    with pytest.raises(RuntimeError, match="door cannot start"):
        parts.start()
    parts.stop()
    assert log[-2:] == ["stop door", "stop broker"]


def test_a_make_that_fails_leaves_nothing_to_stop() -> None:
    def make() -> list[Noted]:
        raise RuntimeError("no broker")

    deferred = Deferred(make)  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="no broker"):
        deferred.prepare()
    deferred.stop()  # nothing made, nothing stopped, no error
    assert deferred.made == []


def test_the_parts_listed_are_the_made_ones_once_made() -> None:
    log: list[str] = []
    first, broker, door = Noted("first", log), Noted("broker", log), Noted("door", log)
    deferred = Deferred(lambda: [broker, door])
    parts = Parts()
    parts.add(first, running=False)
    parts.add(deferred, running=False)
    assert parts.flat() == [first]  # nothing made yet
    parts.prepare()
    assert parts.flat() == [first, broker, door]
