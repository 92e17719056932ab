"""``anima doctor``: each check against the real thing — a Mosquitto and a web server that is
not MQTT on loopback, a taken port, a pseudo-terminal as the serial board, an HTTP server as
the Reachy daemon, a listening socket as the humanoid — and the command's exit code."""

from __future__ import annotations

import json
import os
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

from anima import doctor
from anima.cli import app
from anima.config import (
    AgentConfig,
    AnimaConfig,
    BodyConfig,
    HumanoidConfig,
    MqttConfig,
    ReachyMiniDriverConfig,
    SerialDriverConfig,
    SpeechConfig,
    WebConfig,
)
from anima.doctor import Status
from anima.frontdoors.mqtt.broker import free_port
from anima.testing.mosquitto import Mosquitto, find_mosquitto

pytestmark = pytest.mark.integration


def statuses(check: object, config: AnimaConfig) -> list[tuple[str, Status]]:
    return [(c.name, c.status) for c in check(config)]  # type: ignore[operator]


class Reply(BaseHTTPRequestHandler):
    body = b'{"state": "running"}'

    def do_GET(self) -> None:
        self.send_response(200)
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture
def http_server() -> Iterator[int]:
    server = HTTPServer(("127.0.0.1", 0), Reply)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def test_the_body(tmp_path: Path) -> None:
    assert statuses(doctor.check_body, AnimaConfig()) == [("body", Status.OK)]
    bad = tmp_path / "bad.ini"
    bad.write_text("[channels]\n1 = x 10 20 5\n")
    (check,) = doctor.check_body(AnimaConfig(body=BodyConfig(checker_ini=str(bad))))
    assert check.status is Status.FAIL
    assert "bad.ini" in check.detail


def test_the_motion_tick_says_whether_it_runs_compiled(monkeypatch: pytest.MonkeyPatch) -> None:
    from anima.motion import compiled

    # make test builds it: here the engine imported is the build's
    (check,) = doctor.check_motion_tick(AnimaConfig())
    assert check.status is Status.OK
    assert check.detail.startswith("compiled (mypyc) (")
    assert "anima-native" in check.detail
    monkeypatch.setattr(compiled, "compiled", lambda: False)
    monkeypatch.setitem(compiled._state, "tick", "plain Python")
    monkeypatch.setitem(compiled._state, "why", "not built for these sources: anima compile")
    (check,) = doctor.check_motion_tick(AnimaConfig())
    assert check.status is Status.WARN
    assert check.fix == "anima compile"
    assert "warn  motion tick: plain Python (not built" in check.line()
    monkeypatch.setenv("ANIMA_PURE_PYTHON", "1")
    (check,) = doctor.check_motion_tick(AnimaConfig())
    assert check.fix == "unset ANIMA_PURE_PYTHON"  # built, and turned off on purpose


def test_audio_out_names_the_missing_device(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 30: no sound card failed the doctor (exit 2) where serve runs and only warns
    (anima.health): with audio_out auto it is a warning here too, with its fix; the sound card
    named outright (sounddevice) is still missing."""
    monkeypatch.setattr(doctor, "_device", lambda kind: ("", "PortAudio: no default device"))
    for auto in (AnimaConfig(), AnimaConfig(speech=SpeechConfig(audio_out="auto"))):
        (check,) = doctor.check_audio_out(auto)
        assert check.status is Status.WARN
        assert "no audio output device" in check.detail
        assert "speech would play silently" in check.detail
        assert "--audio-out null" in check.fix
        assert "--audio-out null" in check.line()
    (check,) = doctor.check_audio_out(AnimaConfig(speech=SpeechConfig(audio_out="sounddevice")))
    assert check.status is Status.FAIL
    assert "sounddevice needs one" in check.detail
    null = AnimaConfig(speech=SpeechConfig(audio_out="null"))
    assert statuses(doctor.check_audio_out, null) == [("audio out", Status.OK)]
    off = AnimaConfig(speech=SpeechConfig(enabled=False))
    assert statuses(doctor.check_audio_out, off) == [("audio out", Status.SKIP)]
    monkeypatch.setattr(doctor, "_device", lambda kind: ("USB Audio (48000 Hz)", ""))
    (check,) = doctor.check_audio_out(AnimaConfig())
    assert check.status is Status.OK
    assert check.detail == "USB Audio (48000 Hz)"


def test_audio_in_only_for_the_agent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doctor, "_device", lambda kind: ("", "PortAudio: no default device"))
    assert statuses(doctor.check_audio_in, AnimaConfig()) == [("audio in", Status.SKIP)]
    mic = AnimaConfig(agent=AgentConfig(enabled=True, audio_in="mic"))
    assert statuses(doctor.check_audio_in, mic) == [("audio in", Status.FAIL)]
    auto = AnimaConfig(agent=AgentConfig(enabled=True))
    assert statuses(doctor.check_audio_in, auto) == [("audio in", Status.WARN)]  # deaf, but runs
    none = AnimaConfig(agent=AgentConfig(enabled=True, audio_in="none"))
    assert statuses(doctor.check_audio_in, none) == [("audio in", Status.OK)]


@pytest.mark.model  # loads Piper
def test_each_tts_engine_loads() -> None:
    checks = list(doctor.check_tts(AnimaConfig()))
    assert ("tts espeak", Status.OK) in [(c.name, c.status) for c in checks]


def test_the_broker_must_answer_mqtt_not_just_tcp(http_server: int) -> None:
    if find_mosquitto() is None:
        pytest.skip("mosquitto is not installed")
    with Mosquitto() as broker:
        cfg = AnimaConfig(mqtt=MqttConfig(broker=str(broker.address)))
        (check,) = doctor.check_broker(cfg)
        assert check.status is Status.OK
        assert "answers MQTT" in check.detail
    web = AnimaConfig(mqtt=MqttConfig(broker=f"127.0.0.1:{http_server}"))
    (check,) = doctor.check_broker(web)
    assert check.status is Status.FAIL
    assert "not MQTT" in check.detail
    gone = AnimaConfig(mqtt=MqttConfig(broker=f"127.0.0.1:{free_port()}"))
    (check,) = doctor.check_broker(gone)
    assert check.status is Status.FAIL
    assert check.detail.startswith("nothing answers")
    auto = AnimaConfig(mqtt=MqttConfig(candidates=(f"127.0.0.1:{free_port()}",)))
    assert doctor.check_broker(auto).__next__().status in (Status.OK, Status.WARN)  # it starts one


def test_a_taken_port_is_named() -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        (check,) = doctor.check_ports(AnimaConfig(web=WebConfig(port=port)))
        assert check.status is Status.FAIL
        assert "web.port" in check.fix
    (check,) = doctor.check_ports(AnimaConfig(web=WebConfig(port=free_port())))
    assert check.status is Status.OK


def test_the_serial_board(tmp_path: Path) -> None:
    missing = AnimaConfig(driver=SerialDriverConfig(port=str(tmp_path / "ttyUSB9")))
    (check,) = doctor.check_driver(missing)
    assert check.status is Status.FAIL
    assert "does not exist" in check.detail
    main, sub = os.openpty()  # a pseudo-terminal plays the board
    try:
        pty = AnimaConfig(driver=SerialDriverConfig(port=os.ttyname(sub)))
        assert statuses(doctor.check_driver, pty) == [("driver serial", Status.OK)]
    finally:
        os.close(main)
        os.close(sub)


def test_the_reachy_daemon(http_server: int) -> None:
    up = AnimaConfig(driver=ReachyMiniDriverConfig(host="127.0.0.1", port=http_server))
    assert statuses(doctor.check_driver, up) == [("driver reachy_mini", Status.OK)]
    down = AnimaConfig(driver=ReachyMiniDriverConfig(host="127.0.0.1", port=free_port()))
    (check,) = doctor.check_driver(down)
    assert check.status is Status.FAIL
    assert "no Reachy Mini daemon" in check.detail


def test_the_humanoid() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        address = f"127.0.0.1:{server.getsockname()[1]}"
        up = AnimaConfig(humanoid=HumanoidConfig(type="adam", address=address))
        assert statuses(doctor.check_humanoid, up) == [("humanoid", Status.OK)]
    down = AnimaConfig(humanoid=HumanoidConfig(type="adam", address=f"127.0.0.1:{free_port()}"))
    assert statuses(doctor.check_humanoid, down) == [("humanoid", Status.FAIL)]


def test_the_command_exits_2_naming_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doctor, "_device", lambda kind: ("", "PortAudio: no default device"))
    monkeypatch.setenv("ANIMA_WEB__PORT", str(free_port()))
    monkeypatch.setenv("ANIMA_SPEECH__ENGINES", "[espeak]")  # one voice to load: fast
    result = CliRunner().invoke(app, ["doctor", "--audio-out", "sounddevice"])
    assert result.exit_code == 2, result.output
    assert "FAIL  audio out: no audio output device" in result.output
    assert result.output.strip().endswith("missing: audio out")
    result = CliRunner().invoke(app, ["doctor", "--audio-out", "null", "--json"])
    assert result.exit_code == 0, result.output
    checks = json.loads(result.output)
    assert {c["status"] for c in checks} <= {"ok", "skip", "warn"}
    assert {c["name"] for c in checks} >= {"body", "audio out", "mqtt", "web port", "driver"}


def test_no_sound_card_is_a_warning_as_serve_says_not_a_failure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``anima doctor`` on a machine with no sound card: exit 0 (serve runs, speech plays
    silently), the warning and its fix on the audio line, named on the last."""
    monkeypatch.setattr(doctor, "_device", lambda kind: ("", "PortAudio: no default device"))
    monkeypatch.setenv("ANIMA_WEB__PORT", str(free_port()))
    monkeypatch.setenv("ANIMA_SPEECH__ENGINES", "[espeak]")  # one voice to load: fast
    result = CliRunner().invoke(app, ["doctor"])
    assert result.exit_code == 0, result.output
    assert "warn  audio out: no audio output device" in result.output
    assert "fix: connect a sound card" in result.output
    assert "--audio-out null" in result.output
    last = result.output.strip().splitlines()[-1]
    assert last.startswith("all that this robot needs is here; warnings: ")
    assert "audio out" in last


def test_the_command_takes_serves_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    """``anima doctor --web-port N --broker embedded --mqtt-port N --humanoid adam``: the
    config anima serve would run with the same flags is the one checked."""
    monkeypatch.setenv("ANIMA_SPEECH__ENGINES", "[espeak]")  # one voice to load: fast
    quiet = ["doctor", "--audio-out", "null", "--json"]
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = str(holder.getsockname()[1])
        flags = ["--web-port", port, "--broker", "embedded", "--mqtt-port", port]
        result = CliRunner().invoke(app, [*quiet, *flags])
        assert result.exit_code == 2, result.output
        checks = {c["name"]: c for c in json.loads(result.output)}
        assert checks["web port"]["detail"].startswith(f"127.0.0.1:{port} is taken")
        assert checks["broker port"]["detail"].startswith(f"127.0.0.1:{port} is taken")
        monkeypatch.setenv("ANIMA_HUMANOID__ADDRESS", f"127.0.0.1:{port}")
        monkeypatch.setenv("ANIMA_WEB__PORT", "0")
        result = CliRunner().invoke(app, [*quiet, "--humanoid", "adam"])
        checks = {c["name"]: c for c in json.loads(result.output)}
        assert checks["humanoid"]["status"] == "ok", checks["humanoid"]


@pytest.mark.model  # loads pocketsphinx
def test_the_listening_engines_load(monkeypatch: pytest.MonkeyPatch) -> None:
    from anima.config import ListenConfig

    assert statuses(doctor.check_listening, AnimaConfig()) == [("listening", Status.SKIP)]
    cfg = AnimaConfig(
        agent=AgentConfig(enabled=True),
        listen=ListenConfig(vad="energy", asr="pocketsphinx", wake="keyphrase"),
    )
    got = dict(statuses(doctor.check_listening, cfg))
    assert got["vad"] is Status.OK
    assert got["asr"] is Status.OK
    assert got["wake"] is Status.OK

    def broken(_kind: str) -> object:
        raise RuntimeError("no model")

    monkeypatch.setattr("anima.listening.vad.load_vad", broken)
    (vad,) = [c for c in doctor.check_listening(cfg) if c.name == "vad"]
    assert vad.status is Status.FAIL
    assert "no model" in vad.detail
