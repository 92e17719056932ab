"""The event hub: non-blocking publish, filtered subscriptions, delivery on drain or a thread."""

from __future__ import annotations

import dataclasses
import threading

import pytest

from anima.events import (
    EngineFault,
    EStopChanged,
    Event,
    EventHub,
    MoveFinished,
    MoveStarted,
)

pytestmark = pytest.mark.fast


def test_events_are_frozen_and_carry_a_stable_kind() -> None:
    started = MoveStarted(t=1.0, name="wave", duration=2.0)
    assert started.kind == "move_started"
    assert MoveFinished(name="wave", cut=True, reason="cleared").kind == "move_finished"
    assert EngineFault(source="driver", reason="x").kind == "engine_fault"
    assert EStopChanged(active=True).kind == "estop"
    assert Event().t == 0.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        started.name = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        MoveStarted(1.0, "wave", 2.0)  # type: ignore[misc]  # keyword-only


def test_publish_only_enqueues_and_drain_delivers_in_order() -> None:
    hub = EventHub()
    got: list[Event] = []
    hub.subscribe(got.append)
    events = [MoveStarted(t=float(i), name=f"m{i}", duration=1.0) for i in range(5)]
    for e in events:
        hub.publish(e)
    assert got == []  # nothing is delivered on the publishing thread
    assert hub.drain() == 5
    assert got == events
    assert hub.drain() == 0


def test_subscriptions_filter_by_kind_and_can_be_cancelled() -> None:
    hub = EventHub()
    everything: list[Event] = []
    faults: list[Event] = []
    moves: list[Event] = []
    hub.subscribe(everything.append)
    unsubscribe = hub.subscribe(faults.append, "engine_fault")
    hub.subscribe(moves.append, "move_started", "move_finished")
    hub.publish(EngineFault(source="a", reason="b"))
    hub.publish(MoveStarted(name="m", duration=1.0))
    hub.publish(EStopChanged(active=True))
    hub.drain()
    assert [e.kind for e in everything] == ["engine_fault", "move_started", "estop"]
    assert [e.kind for e in faults] == ["engine_fault"]
    assert [e.kind for e in moves] == ["move_started"]
    unsubscribe()
    unsubscribe()  # twice is harmless
    hub.publish(EngineFault(source="c", reason="d"))
    hub.drain()
    assert len(faults) == 1
    assert len(everything) == 4


def test_a_failing_handler_does_not_stop_the_others(caplog: pytest.LogCaptureFixture) -> None:
    hub = EventHub()
    got: list[Event] = []

    def broken(_event: Event) -> None:
        raise RuntimeError("subscriber bug")

    hub.subscribe(broken)
    hub.subscribe(got.append)
    hub.publish(EStopChanged(active=False))
    hub.publish(EStopChanged(active=True))
    assert hub.drain() == 2
    assert len(got) == 2
    assert "subscriber bug" in caplog.text


def test_the_dispatcher_thread_delivers_and_stops() -> None:
    hub = EventHub()
    done = threading.Event()
    got: list[Event] = []
    delivered_on: list[str] = []

    def handler(event: Event) -> None:
        got.append(event)
        delivered_on.append(threading.current_thread().name)
        if len(got) == 3:
            done.set()

    hub.subscribe(handler)
    hub.start()
    hub.start()  # idempotent
    for i in range(3):
        hub.publish(MoveStarted(name=f"m{i}", duration=0.0))
    assert done.wait(2.0)
    hub.stop()
    hub.stop()  # idempotent
    assert [e.name for e in got if isinstance(e, MoveStarted)] == ["m0", "m1", "m2"]
    assert set(delivered_on) == {"anima-events"}
    # after stop, publishing still never blocks; events wait for a drain
    hub.publish(EStopChanged(active=True))
    assert hub.drain() == 1
    assert len(got) == 4


def test_a_slow_subscriber_never_blocks_the_publisher() -> None:
    hub = EventHub()
    entered, release = threading.Event(), threading.Event()
    calls: list[Event] = []

    def stuck(event: Event) -> None:
        calls.append(event)
        entered.set()
        release.wait(5.0)

    hub.subscribe(stuck)
    hub.start()
    publisher = threading.Thread(
        target=lambda: [hub.publish(EStopChanged(active=True)) for _ in range(1000)]
    )
    try:
        assert not entered.is_set()
        publisher.start()
        publisher.join(2.0)
        assert not publisher.is_alive()  # all 1000 published while delivery is stuck
        assert entered.wait(2.0)
        assert len(calls) == 1
    finally:
        release.set()
        hub.stop()


def test_flush_returns_once_everything_published_before_it_was_delivered() -> None:
    hub = EventHub()
    got: list[Event] = []
    gate = threading.Event()

    def slow(e: Event) -> None:
        gate.wait(5)
        got.append(e)

    hub.subscribe(slow)
    hub.start()
    try:
        for i in range(3):
            hub.publish(MoveStarted(t=float(i), name=f"m{i}", duration=1.0))
        assert not hub.flush(0.05)  # the subscriber is still busy: flush says so
        gate.set()
        assert hub.flush(2.0)
        assert [e.name for e in got if isinstance(e, MoveStarted)] == ["m0", "m1", "m2"]
    finally:
        hub.stop()


def test_flush_without_a_dispatcher_delivers_here_and_never_deadlocks_a_subscriber() -> None:
    hub = EventHub()
    got: list[Event] = []
    hub.subscribe(got.append)
    hub.publish(EStopChanged(active=True))
    assert hub.flush()  # not started: delivered on this thread
    assert len(got) == 1
    answers: list[bool] = []
    hub.subscribe(lambda e: answers.append(hub.flush(5.0)), EngineFault.kind)
    hub.start()
    try:
        hub.publish(EngineFault(source="x", reason="y"))
        assert hub.flush(2.0)
        assert answers == [False]  # a subscriber asking to flush is told no at once
    finally:
        hub.stop()
