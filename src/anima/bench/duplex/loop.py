"""The 100 Hz loop while the robot talks and listens, full duplex against half duplex.

``anima bench duplex --loop-seconds N`` runs the real runtime on the simulated robot twice: the
robot says a long reply again and again for ``N`` seconds, its sink's audio coming back through
a :class:`~anima.testing.room.RoomSource` into the agent's listener (Silero VAD, Whisper) — once
gated as before (``listen.duplex: false``), once through WebRTC's echo canceller and the
residual guard (``listen.duplex: true``). Printed per run, over the talking only (after a
start-up of 3 s): the tick rate, ticks missed, and each tick's lateness p50 / p99 / max.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

import numpy as np

from anima.build import attach_agent
from anima.config import AnimaConfig, MqttConfig
from anima.drivers.sim import SimDriver
from anima.listening.echo.source import EchoCancelledSource
from anima.runtime import Runtime
from anima.speech.reference import PlaybackReference
from anima.speech.sinks import NullSink
from anima.testing.room import EchoPath, RoomSource

TALK = (
    "Let me tell you a story. Once there was a little robot who lived by the sea, and every "
    "morning it watched the boats go out and counted the birds on the harbour wall."
)
WARM_S = 3.0  # start-up (models loading) is left out


@dataclass(frozen=True)
class LoopWhileTalking:
    duplex: bool
    seconds: float
    rate_hz: float
    missed: int
    late_p50_ms: float
    late_p99_ms: float
    late_max_ms: float
    frames_cleaned: int  # microphone frames through the canceller (0: half duplex)

    def line(self) -> str:
        mode = "full duplex (echo canceller)" if self.duplex else "half duplex (gated)"
        return (
            f"  {mode}: {self.rate_hz:.2f} Hz, {self.missed} missed, lateness p50 "
            f"{self.late_p50_ms:.2f} / p99 {self.late_p99_ms:.2f} / max {self.late_max_ms:.2f} ms"
            f" over {self.seconds:.0f} s of talk ({self.frames_cleaned} frames cleaned)"
        )


def loop_while_talking(duplex: bool, seconds: float) -> LoopWhileTalking:
    base = AnimaConfig(mqtt=MqttConfig(enabled=False))
    listen = dataclasses.replace(base.listen, duplex=duplex, wake_word=False)
    config = dataclasses.replace(base, listen=listen)
    reference = PlaybackReference(NullSink())  # the room hears the robot either way
    runtime = Runtime(config, driver=SimDriver(history=100), audio_sink=reference)
    runtime.start()
    try:
        room = RoomSource(reference.reader(), EchoPath(delay_s=0.04, gain_db=-3.0))
        conversation = attach_agent(runtime, audio_in=room)  # started: the runtime runs
        time.sleep(WARM_S)
        speech = runtime.speech
        assert speech is not None
        before = runtime.engine.stats()
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if not speech.speaking:
                speech.speak(TALK, "en-US")
            time.sleep(0.1)
        after = runtime.engine.stats()
        late = runtime.engine.period_errors_since(before.ticks) * 1e3
        source = conversation.listener.source if conversation.listener is not None else None
        cleaned = source.frames if duplex and isinstance(source, EchoCancelledSource) else 0
        runtime.detach_agent()
    finally:
        runtime.stop(ease=False)
    span = after.elapsed_s - before.elapsed_s
    return LoopWhileTalking(
        duplex=duplex, seconds=seconds,
        rate_hz=(after.ticks - before.ticks) / span if span > 0 else 0.0,
        missed=after.missed - before.missed,
        late_p50_ms=float(np.percentile(late, 50)), late_p99_ms=float(np.percentile(late, 99)),
        late_max_ms=float(late.max()), frames_cleaned=cleaned,
    )  # fmt: skip
