"""The command dispatcher: stops jump the queue; an emergency stop flushes what waits."""

from __future__ import annotations

import threading

from anima import commands as cmd
from anima.events import CommandRejected, Event, EventHub
from anima.frontdoors.dispatch import CommandDispatcher, Origin


def test_an_emergency_stop_runs_next_and_flushes_the_waiting_commands() -> None:
    hub = EventHub()
    seen: list[Event] = []
    hub.subscribe(seen.append)
    gate = threading.Event()
    busy = threading.Event()  # the worker has taken "first": later submits queue behind it
    ran: list[cmd.Command] = []
    done = threading.Event()

    def execute(command: cmd.Command) -> None:
        if isinstance(command, cmd.PlayAnimation) and command.name == "first":
            busy.set()
            gate.wait(5)  # the worker is busy with this one while others arrive
        ran.append(command)
        if isinstance(command, cmd.EmergencyStop):
            done.set()

    d = CommandDispatcher(execute, hub)
    d.start()
    try:
        d.submit(cmd.PlayAnimation(name="first"), Origin("test", "animation"))
        assert busy.wait(5)
        for name in ("second", "third"):
            d.submit(cmd.PlayAnimation(name=name), Origin("test", "animation", name))
        d.submit(cmd.EmergencyStop(), Origin("test", "estop"))
        gate.set()
        assert done.wait(5)
    finally:
        d.stop()
    hub.drain()
    assert ran == [cmd.PlayAnimation(name="first"), cmd.EmergencyStop()]
    flushed = [e for e in seen if isinstance(e, CommandRejected)]
    assert [e.argument for e in flushed] == ["second", "third"]
    assert all("emergency stop" in e.reason for e in flushed)


def test_two_estops_waiting_are_one_stop_not_a_refusal() -> None:
    """MQTT's estop lane and the door deliver the same estop: the second must not report the
    first as 'flushed by an emergency stop'."""
    hub = EventHub()
    seen: list[Event] = []
    hub.subscribe(seen.append)
    gate = threading.Event()
    busy = threading.Event()
    ran: list[cmd.Command] = []
    done = threading.Event()

    def execute(command: cmd.Command) -> None:
        if isinstance(command, cmd.PlayAnimation):
            busy.set()
            gate.wait(5)
        ran.append(command)
        if isinstance(command, cmd.EmergencyStop):
            done.set()

    d = CommandDispatcher(execute, hub)
    d.start()
    try:
        d.submit(cmd.PlayAnimation(name="first"), Origin("test", "animation"))
        assert busy.wait(5)
        d.submit(cmd.PlayAnimation(name="second"), Origin("test", "animation", "second"))
        d.submit(cmd.EmergencyStop(), Origin("mqtt", "estop", "lane"))
        d.submit(cmd.EmergencyStop(), Origin("mqtt", "estop", "door"))
        gate.set()
        assert done.wait(5)
    finally:
        d.stop()
    hub.drain()
    assert ran == [cmd.PlayAnimation(name="first"), cmd.EmergencyStop()]
    flushed = [e for e in seen if isinstance(e, CommandRejected)]
    assert [e.argument for e in flushed] == ["second"]


def test_stop_speaking_jumps_the_queue() -> None:
    hub = EventHub()
    gate = threading.Event()
    busy = threading.Event()  # the worker has taken "first": later submits queue behind it
    ran: list[cmd.Command] = []
    finished = threading.Event()

    def execute(command: cmd.Command) -> None:
        if isinstance(command, cmd.PlayAnimation) and command.name == "first":
            busy.set()
            gate.wait(5)
        ran.append(command)
        if len(ran) == 3:
            finished.set()

    d = CommandDispatcher(execute, hub)
    d.start()
    try:
        d.submit(cmd.PlayAnimation(name="first"), Origin("test", "animation"))
        assert busy.wait(5)
        d.submit(cmd.PlayAnimation(name="second"), Origin("test", "animation"))
        d.submit(cmd.StopSpeaking(), Origin("test", "stop_speak"))
        gate.set()
        assert finished.wait(5)
    finally:
        d.stop()
    assert ran[1] == cmd.StopSpeaking()
