"""The dispatcher tells a door that waits (REST) each command's verdict once (issue 30): carried
out, merged into a newer one, refused at execution, flushed by an estop or refused for a full
queue, so its answer is the runtime's and never a silent 202."""

from __future__ import annotations

import pytest

from anima import commands as cmd
from anima.errors import EStopActiveError
from anima.events import EventHub
from anima.frontdoors.dispatch import CommandDispatcher, Origin
from anima.testing import eventually

from .test_dispatch import HeldWorker

pytestmark = pytest.mark.fast

Verdicts = dict[str, list[str | None]]


def told(verdicts: Verdicts, name: str) -> Origin:
    def reply(reason: str | None) -> None:
        verdicts.setdefault(name, []).append(reason)

    return Origin("test", name, reply=reply)


def test_each_command_is_told_its_verdict_once() -> None:
    verdicts: Verdicts = {}
    with HeldWorker() as held:
        d = held.dispatcher
        d.submit(cmd.LookAt(x=1, y=0, z=0), told(verdicts, "look 1"))
        d.submit(cmd.LookAt(x=1, y=1, z=0), told(verdicts, "look 2"))  # merges look 1
        d.submit(cmd.PlayAnimation(name="second"), told(verdicts, "second"))
        d.submit(cmd.EmergencyStop(), told(verdicts, "estop 1"))
        d.submit(cmd.EmergencyStop(), told(verdicts, "estop 2"))  # merges estop 1
        held.release_until_estop()
    assert verdicts == {
        "look 1": [None],
        "look 2": ["flushed by an emergency stop"],
        "second": ["flushed by an emergency stop"],
        "estop 1": [None],
        "estop 2": [None],
    }


def test_a_refusal_at_execution_and_a_full_queue_are_told() -> None:
    verdicts: Verdicts = {}
    hub = EventHub()

    def execute(command: cmd.Command) -> None:
        if isinstance(command, cmd.PlayAnimation):
            raise EStopActiveError(repr(command.name))

    full = CommandDispatcher(execute, hub, max_pending=1)  # not started: nothing runs yet
    full.submit(cmd.PlayAnimation(name="nod"), told(verdicts, "nod"))
    full.submit(cmd.PlayAnimation(name="shake"), told(verdicts, "shake"))
    assert verdicts == {"shake": ["too many pending commands (1); try again"]}
    full.start()
    try:
        assert eventually(lambda: "nod" in verdicts)
    finally:
        full.stop()
        hub.drain()
    assert verdicts["nod"] == ["'nod' refused: emergency stop is active (reset to resume)"]
