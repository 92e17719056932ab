"""End to end: `anima serve --agent --audio-in FILE.wav` hears "hey robot, <command>" in a WAV
file made here by anima's own TTS, and the robot does it — observed as an operator would, on
the MQTT contract of a real Mosquitto (the agent's plan, its steps' status, the animation done).

Piper speaks (pocketsphinx's keyphrase search hears Piper's "hey robot", not eSpeak's: see
tests/listening/conftest.py). Piper's audio varies a little from run to run, so the request is
said twice, far apart: the test needs the robot to have done it once, and nothing else.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from anima.errors import AnimaError
from anima.listening.audio import SAMPLE_RATE, resample
from anima.listening.sources import write_wav
from anima.speech.base import Cancel
from anima.testing.mosquitto import Mosquitto, find_mosquitto
from anima.testing.mqtt import Message, MqttProbe
from anima.testing.serve import ServeProcess

pytestmark = [
    pytest.mark.skipif(find_mosquitto() is None, reason="needs Debian mosquitto"),
    pytest.mark.timeout(120),
]
pytest.importorskip("pocketsphinx", reason="needs the listen extra")


def _piper_wav(path: Path, texts: list[str], gap_s: float) -> None:
    from anima.speech.piper import PiperEngine

    engine = PiperEngine()
    try:
        engine.load()
    except AnimaError as exc:
        pytest.skip(f"Piper is not available: {exc}")
    silence = np.zeros(round(gap_s * SAMPLE_RATE), dtype=np.int16)
    parts = [np.zeros(SAMPLE_RATE, dtype=np.int16)]
    for text in texts:
        chunks = list(engine.synthesize(text, "en-US", Cancel()))
        said = np.concatenate([c.samples for c in chunks])
        parts += [resample(said, chunks[0].sample_rate), silence]
    write_wav(path, np.concatenate(parts))


def _plans(probe: MqttProbe, prefix: str) -> list[dict[str, object]]:
    return [m.json() for m in probe.messages(f"{prefix}/agent/plan")]


def _serve(tmp_path: Path, wav: Path, broker: Mosquitto, prefix: str, *more: str) -> ServeProcess:
    env: dict[str, str | None] = {
        "ANIMA_CONFIG": None,  # the defaults, not the developer's config
        "XDG_RUNTIME_DIR": str(tmp_path),  # its own pid file
        "ANIMA_MQTT__PREFIX": prefix,
        "ANIMA_WEB__ENABLED": "false",  # tests would share the dashboard's port
        "HF_HUB_OFFLINE": "1",  # nothing is downloaded at run time
    }
    args = ["--agent", "--audio-in", str(wav), "--broker", str(broker.address)]
    return ServeProcess([*args, "--audio-out", "null", *more], env=env, cwd=tmp_path)


def test_serve_hears_a_wav_file_and_the_robot_nods(tmp_path: Path) -> None:
    wav = tmp_path / "request.wav"
    _piper_wav(wav, ["hey robot, nod", "hey robot, nod"], gap_s=4.0)
    prefix = "audioin"
    with Mosquitto() as broker, MqttProbe(broker.address, subscribe=f"{prefix}/#") as probe:
        server = _serve(tmp_path, wav, broker, prefix)
        try:
            server.wait_for(r"anima agent: rules planner, listening to wav", timeout=60)
            done = probe.wait_for(
                f"{prefix}/agent/plan",
                where=lambda m: m.json().get("outcome") == "succeeded",
                timeout=60,
            )
            plans = _plans(probe, prefix)
            started = [p for p in plans if "steps" in p]
            assert started, plans
            assert all(p["steps"] == ["play_animation(name='nod')"] for p in started), plans
            nodded = probe.wait_for(
                f"{prefix}/agent/feedback/animation_done",
                where=lambda m: m.json().get("name") == "nod",
                timeout=10,
            ).json()
            assert nodded["cut"] is False, nodded  # it nodded to the end
            heard = [m.json() for m in probe.messages(f"{prefix}/agent/asr")]
            assert any(h.get("wake") == "keyphrase" for h in heard), heard  # by the wake phrase
            assert any(h.get("final") and h.get("text") == "nod" for h in heard), heard
            assert json.loads(done.payload)["id"] in {p["id"] for p in started}
        finally:
            code = server.stop()
        output = "".join(server.lines)
        assert code == 0, output
        assert "Traceback" not in output, output


def test_serve_audio_in_with_the_simulated_humanoid_walks(tmp_path: Path) -> None:
    """'hey robot, walk forward' from a fresh start: the simulated Adam is brought up and walks
    (issue 13's first defect: the agent had no humanoid actions, then could not bring it up)."""
    wav = tmp_path / "walk.wav"
    _piper_wav(wav, ["hey robot, walk forward", "hey robot, walk forward"], gap_s=12.0)
    prefix = "audioinwalk"
    with Mosquitto() as broker, MqttProbe(broker.address, subscribe=f"{prefix}/#") as probe:
        server = _serve(tmp_path, wav, broker, prefix, "--humanoid", "sim")
        try:
            server.wait_for(r"anima agent: rules planner, listening to wav", timeout=60)

            def walked(m: Message) -> bool:
                body = m.json()
                return body.get("action") == "walk_forward" and body.get("status") in (
                    "succeeded", "failed"
                )  # fmt: skip

            status = probe.wait_for(f"{prefix}/agent/action_status", where=walked, timeout=60)
            assert status.json()["status"] == "succeeded", status.json()
            started = [p for p in _plans(probe, prefix) if "steps" in p]
            assert started
            for plan in started:  # the bring-up, if planned, is its own steps
                steps = [s for s in plan["steps"] if not str(s).startswith("set_gait")]
                assert steps == ["walk_forward()"], started
        finally:
            code = server.stop()
        output = "".join(server.lines)
        assert code == 0, output
        assert "Traceback" not in output, output
