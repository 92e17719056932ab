"""Issue 14 item 4: the conversation's phase, published on every change and in the state."""

from __future__ import annotations

import dataclasses
import threading

import pytest
from tests.agent.conftest import (
    Recorder,
    autojump_runtime,
    fake_clock,
    quiet_config,
    started_conversation,
)

from anima.agent.presence import Presence
from anima.events import ConversationChanged, Event, EventHub, Transcript
from anima.testing import FakeClock, eventually
from anima.timers import Timers

pytestmark = pytest.mark.fast


def on_fake_time() -> tuple[FakeClock, Timers]:
    """A fake clock and timers the test runs itself (run_due), no thread."""
    clock = FakeClock()
    return clock, Timers(clock)


def later(clock: FakeClock, timers: Timers, seconds: float) -> None:
    clock.advance(seconds)
    timers.run_due()


def changes(hub: EventHub) -> list[ConversationChanged]:
    seen: list[ConversationChanged] = []
    lock = threading.Lock()

    def keep(event: Event) -> None:
        assert isinstance(event, ConversationChanged)
        with lock:
            seen.append(event)

    hub.subscribe(keep, ConversationChanged.kind)
    return seen


def test_each_change_is_published_once_with_where_it_came_from() -> None:
    hub = EventHub()
    seen = changes(hub)
    clock, timers = on_fake_time()
    presence = Presence(hub.publish, clock, timers.call_later, engaged_s=60, sleep_after_s=None)
    assert presence.state == "idle"
    presence.to("listening", "wake (mqtt)")
    presence.to("listening", "wake (mqtt)")  # already there: nothing published
    presence.to("thinking", "heard 'wave'")
    presence.to("engaged", "done", when=("speaking",))  # not speaking: no change
    presence.to("speaking", "the robot speaks")
    presence.to("engaged", "the robot finished speaking", when=("speaking",))
    presence.close()
    presence.to("listening", "after close")  # closed: nothing
    hub.drain()  # delivered here, on this thread (the hub is not started)
    assert [(c.previous, c.state) for c in seen] == [
        ("idle", "listening"), ("listening", "thinking"), ("thinking", "speaking"),
        ("speaking", "engaged"),
    ]  # fmt: skip
    assert seen[0].reason == "wake (mqtt)"


def test_engaged_falls_idle_then_asleep_and_a_wake_ends_it() -> None:
    hub = EventHub()
    seen = changes(hub)
    clock, timers = on_fake_time()
    presence = Presence(hub.publish, clock, timers.call_later, engaged_s=20, sleep_after_s=600)
    try:
        presence.to("engaged", "the turn is over")
        later(clock, timers, 19.99)
        assert presence.state == "engaged"
        later(clock, timers, 0.01)
        assert presence.state == "idle"
        later(clock, timers, 599.99)
        assert presence.state == "idle"
        later(clock, timers, 0.01)
        assert presence.state == "sleeping"
        hub.drain()
        assert [c.state for c in seen] == ["engaged", "idle", "sleeping"]
        assert "nobody spoke for 600 s" in seen[-1].reason
        presence.to("listening", "wake (asr)")
        assert presence.state == "listening"  # and no timer takes it away
        later(clock, timers, 3600)
        assert presence.state == "listening"
        assert timers.pending == 0
    finally:
        presence.close()


def test_a_stay_in_engaged_starts_its_time_again() -> None:
    hub = EventHub()
    clock, timers = on_fake_time()
    presence = Presence(hub.publish, clock, timers.call_later, engaged_s=20, sleep_after_s=None)
    try:
        presence.to("engaged", "turn")
        for _ in range(4):  # a turn every 15 s: never 20 s without one
            later(clock, timers, 15)
            presence.to("engaged", "another turn")
        assert presence.state == "engaged"
        later(clock, timers, 19.9)
        assert presence.state == "engaged"
        later(clock, timers, 0.1)  # 20 s after the last turn
        assert presence.state == "idle"
    finally:
        presence.close()


def test_a_turn_goes_listening_thinking_speaking_engaged_and_the_state_says_so() -> None:
    # engaged for a day: the runtime's fake time runs on while the test looks at its state
    cfg = quiet_config()
    cfg = dataclasses.replace(cfg, agent=dataclasses.replace(cfg.agent, engaged_s=86_400.0))
    with autojump_runtime(cfg) as runtime:
        recorder = Recorder().attach(runtime.events)
        with fake_clock(runtime).hold():  # idle, then listening, until the request is heard
            conv = started_conversation(runtime)
            assert runtime.state().conversation == "idle"
            conv.wake("mqtt")
            assert runtime.state().conversation == "listening"
            conv.hear(Transcript(t=0.0, text="say hello", final=True, confidence=0.9))
        try:
            assert eventually(lambda: conv.presence.state == "engaged", timeout=10)
            states = [
                e.state for e in recorder.of("conversation") if isinstance(e, ConversationChanged)
            ]
            assert states[:4] == ["listening", "thinking", "speaking", "engaged"]
            assert runtime.state().conversation == "engaged"
        finally:
            runtime.detach_agent()
        assert runtime.state().conversation is None
