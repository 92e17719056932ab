"""Issue 30: the Piper voice loaded while the 100 Hz loop already ran (~1.1 s of loading, the
interpreter held up to ~50 ms at a time: start-up gaps in the loop), so the voices were loaded
before the loop started. Issue 34: the first tick comes first, and the start loads the voices
beside the running loop with the garbage collector paused (its full passes were the long holds;
Piper runs in its own process). One that fails does not stop the start (the speech thread
reports it)."""

from __future__ import annotations

import threading

import pytest

from anima.drivers.sim import SimDriver
from anima.errors import SpeechError
from anima.events import Notice
from anima.runtime import Runtime
from anima.speech.sinks import NullSink
from anima.testing import eventually
from anima.testing.tts import ScriptedEngine

pytestmark = pytest.mark.integration


class NotingEngine(ScriptedEngine):
    """Notes, at each load, whether the motion loop was running; ``fail`` raises instead."""

    def __init__(self, name: str, *, fail: bool = False) -> None:
        super().__init__(name=name)
        self.fail = fail
        self.loads_with_loop: list[bool] = []

    def load(self) -> None:
        motion = any(t.name == "anima-motion" for t in threading.enumerate())
        self.loads_with_loop.append(motion)
        if self.fail:
            raise SpeechError(f"{self.name}: no voice file")


def test_the_voices_load_at_start_once_the_loop_runs() -> None:
    good, bad = NotingEngine("good"), NotingEngine("bad", fail=True)
    rt = Runtime(driver=SimDriver(), tts=[bad, good], audio_sink=NullSink())
    notices: list[Notice] = []
    rt.subscribe(lambda e: notices.append(e) if isinstance(e, Notice) else None, Notice.kind)
    with rt:
        assert rt.wait_first_tick()
        assert good.loads_with_loop[0] is True  # loaded at start, the loop already running
        assert bad.loads_with_loop[0] is True  # tried then too, and the start went on
        assert eventually(lambda: any("bad: no voice file" in n.message for n in notices))
        assert rt.speech is not None
        assert [e.name for e in rt.speech.engines] == ["good"]  # the failing one dropped
