"""The command dispatcher: stops jump the queue; an emergency stop flushes what waits."""

from __future__ import annotations

import threading

import pytest

from anima import commands as cmd
from anima.events import CommandRejected, EventHub
from anima.frontdoors.dispatch import CommandDispatcher, Origin
from anima.testing import EventRecorder, eventually

pytestmark = pytest.mark.fast


class HeldWorker:
    """A dispatcher whose worker is held on the animation "first" until :meth:`release`, so
    what is submitted meanwhile waits in its queue; ``ran`` is what it executed, in order."""

    def __init__(self) -> None:
        self.hub = EventHub()
        self.recorder = EventRecorder().attach(self.hub)
        self.ran: list[cmd.Command] = []
        self._gate = threading.Event()
        self._busy = threading.Event()  # the worker has taken "first"
        self._estopped = threading.Event()
        self.dispatcher = CommandDispatcher(self._execute, self.hub)

    def _execute(self, command: cmd.Command) -> None:
        if isinstance(command, cmd.PlayAnimation) and command.name == "first":
            self._busy.set()
            self._gate.wait(5)  # the worker is busy with this one while others arrive
        self.ran.append(command)
        if isinstance(command, cmd.EmergencyStop):
            self._estopped.set()

    def __enter__(self) -> HeldWorker:
        self.dispatcher.start()
        self.dispatcher.submit(cmd.PlayAnimation(name="first"), Origin("test", "animation"))
        assert self._busy.wait(5)
        return self

    def release_until_estop(self) -> None:
        self._gate.set()
        assert self._estopped.wait(5)

    def __exit__(self, *_exc: object) -> None:
        self.dispatcher.stop()
        self.hub.drain()

    def rejected(self) -> list[CommandRejected]:
        return [e for e in self.recorder.events if isinstance(e, CommandRejected)]


def test_an_emergency_stop_runs_next_and_flushes_the_waiting_commands() -> None:
    with HeldWorker() as held:
        d = held.dispatcher
        for name in ("second", "third"):
            d.submit(cmd.PlayAnimation(name=name), Origin("test", "animation", name))
        d.submit(cmd.EmergencyStop(), Origin("test", "estop"))
        held.release_until_estop()
    assert held.ran == [cmd.PlayAnimation(name="first"), cmd.EmergencyStop()]
    flushed = held.rejected()
    assert [e.argument for e in flushed] == ["second", "third"]
    assert all("emergency stop" in e.reason for e in flushed)


def test_two_estops_waiting_are_one_stop_not_a_refusal() -> None:
    """MQTT's estop lane and the door deliver the same estop: the second must not report the
    first as 'flushed by an emergency stop'."""
    with HeldWorker() as held:
        d = held.dispatcher
        d.submit(cmd.PlayAnimation(name="second"), Origin("test", "animation", "second"))
        d.submit(cmd.EmergencyStop(), Origin("mqtt", "estop", "lane"))
        d.submit(cmd.EmergencyStop(), Origin("mqtt", "estop", "door"))
        held.release_until_estop()
    assert held.ran == [cmd.PlayAnimation(name="first"), cmd.EmergencyStop()]
    assert [e.argument for e in held.rejected()] == ["second"]


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


def test_priority_is_the_command_types_and_a_reset_never_overtakes_its_estop() -> None:
    """Issue 15: the dispatcher reads each command type's priority; system commands jump the
    ordered queue but keep their own order, so a reset sent after an estop runs after it."""
    assert cmd.EmergencyStop.priority is cmd.Priority.SYSTEM
    assert cmd.ResetEmergencyStop.priority is cmd.Priority.SYSTEM
    assert cmd.StopSpeaking.priority is cmd.Priority.SYSTEM
    assert cmd.StopAnimation.priority is cmd.Priority.SYSTEM
    assert cmd.LookAt.priority is cmd.Priority.LATEST
    assert cmd.PlayAnimation.priority is cmd.Priority.ORDERED
    assert cmd.Speak.priority is cmd.Priority.ORDERED
    with HeldWorker() as held:
        d = held.dispatcher
        d.submit(cmd.PlayAnimation(name="second"), Origin("test", "animation", "second"))
        d.submit(cmd.EmergencyStop(), Origin("test", "estop"))
        d.submit(cmd.ResetEmergencyStop(), Origin("test", "reset"))
        d.submit(cmd.PlayAnimation(name="third"), Origin("test", "animation", "third"))
        d.submit(cmd.StopSpeaking(), Origin("test", "stop_speak"))
        held.release_until_estop()
        d.submit(cmd.Listen(), Origin("test", "listen"))  # ordered: runs after everything
        assert eventually(lambda: cmd.Listen() in held.ran)
    assert held.ran == [
        cmd.PlayAnimation(name="first"),
        cmd.EmergencyStop(),
        cmd.ResetEmergencyStop(),
        cmd.StopSpeaking(),
        cmd.PlayAnimation(name="third"),
        cmd.Listen(),
    ]
    assert [e.argument for e in held.rejected()] == ["second"]
