"""`anima agent`: ears on one process, the agent in a running runtime, MQTT in between."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from anima.build import attach_agent
from anima.config import AnimaConfig, MqttConfig
from anima.drivers.sim import SimDriver
from anima.errors import AnimaError
from anima.events import PlanStarted
from anima.frontdoors.mqtt.broker import EmbeddedBroker, free_port
from anima.frontdoors.mqtt.frontdoor import MqttFrontDoor
from anima.listening.sources import write_wav
from anima.runtime import Runtime
from anima.speech.base import Cancel
from anima.speech.piper.piper import PiperEngine
from anima.speech.sinks import NullSink
from anima.testing.tts import ScriptedEngine

from .conftest import Recorder

pytestmark = pytest.mark.model


def test_anima_agent_forwards_what_it_hears_to_the_running_agent(tmp_path: Path) -> None:
    voice = PiperEngine()  # the clearest offline voice for pocketsphinx (CI installs it)
    try:
        voice.load()
    except AnimaError as exc:
        pytest.skip(f"Piper is not available: {exc}")
    chunks = list(voice.synthesize("look at me", "en-US", Cancel()))
    rate = chunks[0].sample_rate
    silence = np.zeros(int(0.3 * rate), dtype=np.int16)
    audio = np.concatenate([silence, *[c.samples for c in chunks], *[silence] * 4])
    wav = tmp_path / "request.wav"
    write_wav(wav, audio, rate)

    broker = EmbeddedBroker(free_port())
    broker.start()
    cfg = AnimaConfig(mqtt=MqttConfig(prefix="remote"))
    rt = Runtime(cfg, driver=SimDriver(), audio_sink=NullSink(), tts=[ScriptedEngine()])
    attach_agent(rt, audio_in="none")
    door = MqttFrontDoor(rt, cfg.mqtt, broker.address)
    rt.attach(door)
    recorder = Recorder()
    rt.events.subscribe(recorder)
    rt.start()
    proc = None
    try:
        assert door.wait_connected(5)
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        args = ["--broker", str(broker.address), "--prefix", "remote", "--audio-in", str(wav)]
        proc = subprocess.Popen(
            [sys.executable, "-m", "anima", "agent", *args, "--wake"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        # a generous bound: a fresh interpreter loads its models and hears 2 s of audio (12 s on
        # a quiet machine, over 20 s at a load average of 7)
        started = recorder.wait_for(lambda e: isinstance(e, PlanStarted), timeout=60)
        assert isinstance(started, PlanStarted)
        assert any(step.startswith("look_at") for step in started.steps), started.steps
    finally:
        try:
            if proc is not None:
                proc.send_signal(signal.SIGTERM)
                out, _ = proc.communicate(timeout=10)
                assert "Traceback" not in out, out
        finally:  # even when the ears failed: a runtime left running keeps pytest from exiting
            rt.stop(ease=False)
            broker.stop()


def test_the_ears_ask_the_reading_they_chose() -> None:
    """The recognizer is here, not in the runtime: a final Whisper read as nothing is asked as
    the reading chosen here (choose_reading in `anima agent`), and the report line says so."""
    from anima.agent.remote import RemoteEars
    from anima.events import Transcript
    from anima.wire.mqtt import BrokerAddress

    class Client:
        def __init__(self) -> None:
            self.sent: list[tuple[str, str]] = []

        def publish(self, topic: str, payload: str, qos: int = 0) -> None:
            self.sent.append((topic, payload))

    def choose(heard: Transcript) -> str:
        return heard.alternatives[0] if heard.alternatives else heard.text.strip()

    reports: list[str] = []
    ears = RemoteEars(
        lambda _: object(),  # type: ignore[arg-type, return-value]
        BrokerAddress.parse("127.0.0.1:1883"), "remote", reports.append, choose=choose,
    )  # fmt: skip
    client = Client()
    ears._client = client
    ears.on_final(Transcript(t=0.0, text="Look over to your light.", final=True,
                             alternatives=("Look over to your right.",)))  # fmt: skip
    ears.on_final(Transcript(t=1.0, text=" nod ", final=True))
    ears.on_final(Transcript(t=2.0, text="  ", final=True))  # nothing heard: nothing asked
    assert [(t.rsplit("/", 1)[-1], p) for t, p in client.sent] == [
        ("ask", "Look over to your right."), ("ask", "nod"),
    ]  # fmt: skip
    assert all(t == "remote/agent/control/ask" for t, _ in client.sent)
    assert reports == ["heard 'Look over to your light.', asking 'Look over to your right.'"]
