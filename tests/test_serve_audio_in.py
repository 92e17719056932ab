"""End to end: `anima serve --agent --audio-in FILE.wav` hears "hey robot, <command>" in a WAV
file made here by anima's own TTS, and the robot does it — observed as an operator would, on
the MQTT contract of a real Mosquitto (the agent's plan, its steps' status, the animation done).

Piper speaks (the keyphrase spotter hears Piper's "hey robot" best: see
tests/listening/conftest.py), in whole requests as people say them ("nod your head please":
Whisper heard a lone "nod" as "Not"). Piper's audio varies a little from run to run, so the
request is said twice, far apart: the test needs the robot to have done it, and nothing else (the
humanoid's request once: a second wake would cancel its bring-up).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from anima.audio import SAMPLE_RATE, resample
from anima.errors import AnimaError
from anima.listening.sources import write_wav
from anima.speech.base import Cancel
from anima.testing.mosquitto import Mosquitto, find_mosquitto
from anima.testing.mqtt import Message, MqttProbe
from anima.testing.serve import ServeProcess

pytestmark = [
    pytest.mark.model,
    pytest.mark.skipif(find_mosquitto() is None, reason="needs Debian mosquitto"),
    pytest.mark.timeout(120),
]
pytest.importorskip("pocketsphinx", reason="needs the listen extra")


def _piper_wav(path: Path, texts: list[str], gap_s: float) -> None:
    from anima.speech.piper.piper import PiperEngine

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


def _topics(prefix: str) -> list[str]:
    """What the agent reports (not the state stream, so a failure lists what it heard)."""
    return [f"{prefix}/agent/{t}" for t in ("asr", "plan", "action_status", "feedback/#")]


def _plans(probe: MqttProbe, prefix: str) -> list[dict[str, object]]:
    return [m.json() for m in probe.messages(f"{prefix}/agent/plan")]


def _serve(tmp_path: Path, wav: Path, broker: Mosquitto, prefix: str, *more: str) -> ServeProcess:
    env: dict[str, str | None] = {
        "ANIMA_CONFIG": None,  # the defaults, not the developer's config
        "XDG_RUNTIME_DIR": str(tmp_path),  # its own pid file
        "ANIMA_MQTT__PREFIX": prefix,
        "ANIMA_WEB__ENABLED": "false",  # tests would share the dashboard's port
        "HF_HUB_OFFLINE": "1",  # nothing is downloaded at run time
        "ANIMA_HUMANOID__SIM_PORT": "0",  # a free port for the simulated Adam, if there is one
    }
    args = ["--agent", "--audio-in", str(wav), "--broker", str(broker.address)]
    return ServeProcess([*args, "--audio-out", "null", *more], env=env, cwd=tmp_path)


def test_serve_hears_a_wav_file_and_the_robot_nods(tmp_path: Path) -> None:
    wav = tmp_path / "request.wav"
    _piper_wav(wav, ["hey robot, nod your head please"] * 2, gap_s=4.0)
    prefix = "audioin"
    with Mosquitto() as broker, MqttProbe(broker.address, subscribe=_topics(prefix)) as probe:
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
            assert any(h.get("wake") not in (None, "manual") for h in heard), heard  # by the phrase
            assert any(h.get("final") and "nod" in str(h.get("text")).lower() for h in heard)
            assert json.loads(done.payload)["id"] in {p["id"] for p in started}
        finally:
            code = server.stop()
        output = "".join(server.lines)
        assert code == 0, output
        assert "Traceback" not in output, output


def test_serve_audio_in_with_the_simulated_humanoid_walks(tmp_path: Path) -> None:
    """'hey robot, walk forward a bit' from a fresh start: the simulated Adam is brought up and
    walks (issue 13's first defect: the agent had no humanoid actions, then could not bring it
    up)."""
    wav = tmp_path / "walk.wav"
    # once: a second wake would cancel a bring-up that a loaded machine makes slow
    _piper_wav(wav, ["hey robot, walk forward a bit"], gap_s=25.0)
    prefix = "audioinwalk"
    with Mosquitto() as broker, MqttProbe(broker.address, subscribe=_topics(prefix)) as probe:
        server = _serve(tmp_path, wav, broker, prefix, "--humanoid", "sim")
        try:
            server.wait_for(r"anima agent: rules planner, listening to wav", timeout=60)

            def walked(m: Message) -> bool:
                body = m.json()
                return body.get("action") == "walk_forward" and body.get("status") in (
                    "succeeded", "failed"
                )  # fmt: skip

            status = probe.wait_for(f"{prefix}/agent/action_status", where=walked, timeout=60)
            told = [m.json() for m in probe.messages(f"{prefix}/agent/action_status")]
            assert status.json()["status"] == "succeeded", told
            started = [p for p in _plans(probe, prefix) if "steps" in p]
            assert started
            for plan in started:  # the bring-up, if planned, is its own steps
                steps = [s for s in plan["steps"] if not str(s).startswith("set_gait")]
                assert len(steps) == 1, started
                assert str(steps[0]).startswith("walk_forward("), started  # "a bit": any time
        finally:
            code = server.stop()
        output = "".join(server.lines)
        assert code == 0, output
        assert "Traceback" not in output, output


@pytest.mark.parametrize("kind", ["fifo", "0 Hz"])
def test_serve_refuses_an_audio_file_it_cannot_stream_in_one_line(
    tmp_path: Path, kind: str
) -> None:
    """Issue 30: a FIFO hung the start (SIGTERM ignored), a header saying 1 Hz asked for
    11.9 GiB, 0 Hz gave a traceback. Each is one line and exit 2, before anything starts."""
    import os
    import struct
    import subprocess
    import sys
    import time

    wav = tmp_path / "voice.wav"
    if kind == "fifo":
        os.mkfifo(wav)
    else:
        write_wav(wav, np.zeros(100_000, np.int16))
        rate = int(kind.split(maxsplit=1)[0])
        data = bytearray(wav.read_bytes())
        data[24:32] = struct.pack("<II", rate, rate * 2)
        wav.write_bytes(bytes(data))
    env = {**os.environ, "XDG_RUNTIME_DIR": str(tmp_path), "HF_HUB_OFFLINE": "1"}
    env.pop("ANIMA_CONFIG", None)
    args = ["--agent", "--audio-in", str(wav), "--no-mqtt", "--no-web", "--audio-out", "null"]
    t0 = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "anima", "serve", *args],
        check=False, capture_output=True, text=True, timeout=60, cwd=tmp_path, env=env,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    said = "a FIFO, not a WAV file" if kind == "fifo" else f"a sample rate of {rate} Hz"
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, done.stderr
    assert said in errors[0], done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert time.monotonic() - t0 < 30  # refused before the models load or the loop starts
