"""``anima doctor``: does this machine have what the configured robot needs? One line per check,
with the fix; the exit code is 0 when every needed piece is there (docs/fleet.md, *Doctor*).
What ``anima serve`` runs without, and only warns about (:mod:`anima.health`'s warnings: no
sound card with ``audio_out`` left to auto), is a ``warn`` here too, not a failure.

Each check looks at the real thing, as ``anima serve`` would use it: the audio devices
(PortAudio's), each TTS voice loaded, the listening engines importable, the broker answering
an MQTT CONNECT (not just TCP), the ports the doors bind, the driver's serial device or Reachy
daemon, the humanoid's gRPC port, the body file. What the config turns off is ``skip``.
"""

from __future__ import annotations

import json
import os
import socket
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from anima.config import AnimaConfig


class Status(StrEnum):
    OK = "ok"
    WARN = "warn"  # works, but not as well as it could
    FAIL = "FAIL"  # needed, and missing
    SKIP = "skip"  # not used by this config


@dataclass(frozen=True)
class Check:
    name: str
    status: Status
    detail: str
    fix: str = ""

    def line(self) -> str:
        fix = (
            f" — fix: {self.fix}" if self.fix and self.status in (Status.FAIL, Status.WARN) else ""
        )
        return f"{self.status.value:4}  {self.name}: {self.detail}{fix}"


def run_checks(config: AnimaConfig) -> list[Check]:
    checks: list[Check] = []
    for make in CHECKS:
        try:
            checks.extend(make(config))
        except Exception as exc:  # a check that breaks is a finding, not a crash
            checks.append(Check(make.__name__, Status.FAIL, f"the check itself failed: {exc!r}"))
    return checks


# ------------------------------------------------------------------ the checks
def check_body(config: AnimaConfig) -> Iterator[Check]:
    from anima.body import load_body

    where = config.body.checker_ini or "nadine (shipped)"
    try:
        body = load_body(config.body.checker_ini)
    except Exception as exc:
        yield Check("body", Status.FAIL, f"{where}: {exc}", "anima body validate FILE says where")
        return
    yield Check("body", Status.OK, f"{body.name}: {len(body)} channels ({where})")


def check_audio_out(config: AnimaConfig) -> Iterator[Check]:
    out = config.speech.audio_out
    if not config.speech.enabled:
        yield Check("audio out", Status.SKIP, "speech is off (speech.enabled: false)")
        return
    if out == "null" or (out is not None and out.lower().endswith(".wav")):
        yield Check("audio out", Status.OK, f"{out} (as configured: no sound card used)")
        return
    found, why = _device("output")
    if found:
        yield Check("audio out", Status.OK, found)
        return
    fix = (
        "connect a sound card or speaker (Debian: libportaudio2 for PortAudio), or, for a "
        "robot without one, --audio-out null (in YAML quoted, audio_out: 'null': a bare "
        "null is auto)"
    )
    if out in (None, "auto"):  # serve runs, speech plays silently: anima.health warns the same
        yield Check(
            "audio out",
            Status.WARN,
            f"no audio output device ({why}): speech would play silently (audio_out auto)",
            fix,
        )
    else:  # the sound card named (sounddevice): speech fails without one
        yield Check(
            "audio out", Status.FAIL, f"no audio output device ({why}): {out} needs one", fix
        )


def check_audio_in(config: AnimaConfig) -> Iterator[Check]:
    source = config.agent.audio_in
    if not config.agent.enabled:
        yield Check("audio in", Status.SKIP, "the voice agent is off (agent.enabled: false)")
        return
    if source in ("none", "stdin", "push") or source.lower().endswith(".wav"):
        yield Check("audio in", Status.OK, f"{source} (as configured: no microphone used)")
        return
    found, why = _device("input")
    if found:
        yield Check("audio in", Status.OK, found)
    else:
        status = Status.FAIL if source == "mic" else Status.WARN
        yield Check(
            "audio in",
            status,
            f"no microphone ({why}): the agent would be deaf",
            "connect a microphone, or set agent.audio_in: none (wake and ask over MQTT)",
        )


def check_tts(config: AnimaConfig) -> Iterator[Check]:
    if not config.speech.enabled:
        yield Check("tts", Status.SKIP, "speech is off")
        return
    from anima.speech import close_engines, load_engines

    engines, problems = load_engines(config.speech)
    for problem in problems:
        yield Check("tts", Status.WARN, problem, "pip install 'anima[speech]'; docs/speech.md")
    for engine in engines:
        try:
            engine.load()
        except Exception as exc:
            yield Check(
                f"tts {engine.name}", Status.WARN, f"does not load: {exc}", "docs/speech.md"
            )
        else:
            yield Check(f"tts {engine.name}", Status.OK, "loads its voice")
        finally:
            close_engines([engine])  # Piper's worker process: ended again
    if not engines:
        yield Check("tts", Status.FAIL, "no TTS engine at all", "pip install 'anima[speech]'")


def check_listening(config: AnimaConfig) -> Iterator[Check]:
    """The voice agent's VAD, recognizer and wake spotter, each made and loaded as the agent
    would (Whisper's model can take seconds)."""
    if not config.agent.enabled:
        yield Check("listening", Status.SKIP, "the voice agent is off")
        return
    from anima.listening.makers import make_recognizer, make_spotter
    from anima.listening.registry import whisper_installed
    from anima.listening.vad import load_vad

    listen = config.listen
    if not whisper_installed():
        yield Check("asr whisper", Status.WARN, "not installed: pocketsphinx hears only the "
                    "command phrases", "pip install 'anima[listen]'")  # fmt: skip
    for what, make in (
        ("vad", lambda: load_vad(listen.vad)),
        # the agent gives its command phrases (pocketsphinx's grammar needs some): two stand in
        ("asr", lambda: _loaded(make_recognizer(listen, phrases=("nod", "look at me")))),
        ("wake", lambda: _loaded(make_spotter(listen))),
    ):
        try:
            engine = make()
        except Exception as exc:  # a package or a model missing
            yield Check(what, Status.FAIL, f"does not load: {exc}"[:300],
                        "pip install 'anima[listen]'; docs/listening.md")  # fmt: skip
        else:
            yield Check(what, Status.OK, f"{type(engine).__name__} loads")


def _loaded(engine: Any) -> Any:
    """``engine`` loaded, to prove it can be, then closed: pocketsphinx's runs in a worker
    process that would otherwise outlive the check."""
    try:
        engine.load()
    finally:
        engine.close()
    return engine


def check_broker(config: AnimaConfig) -> Iterator[Check]:
    mqtt = config.mqtt
    if not mqtt.enabled:
        yield Check("mqtt", Status.SKIP, "MQTT is off (mqtt.enabled: false)")
        return
    from anima.frontdoors.mqtt.mosquitto import find_mosquitto
    from anima.frontdoors.mqtt.probe import Answer, probe
    from anima.wire.mqtt import BrokerAddress

    if mqtt.broker == "embedded":
        yield _embedded(find_mosquitto())
        return
    candidates = mqtt.candidates if mqtt.broker == "auto" else (mqtt.broker,)
    for text in candidates:
        address = BrokerAddress.parse(text)
        result = probe(address, timeout=1.0)
        if result.answer is Answer.MQTT:
            yield Check("mqtt", Status.OK, f"a broker answers MQTT at {address} ({result.detail})")
            return
        if mqtt.broker != "auto":
            what = "something that is not MQTT" if result.answer is Answer.NOT_MQTT else "nothing"
            yield Check(
                "mqtt",
                Status.FAIL,
                f"{what} answers at {address} ({result.detail})",
                "start the broker, or set mqtt.broker: auto (anima starts one)",
            )
            return
    yield _embedded(find_mosquitto(), f"no broker at {', '.join(candidates)}: ")


def _embedded(mosquitto: str | None, why: str = "") -> Check:
    if mosquitto is not None:
        return Check("mqtt", Status.OK, f"{why}anima starts Mosquitto ({mosquitto}) itself")
    return Check(
        "mqtt",
        Status.WARN,
        f"{why}anima starts amqtt itself (no Mosquitto)",
        "apt-get install mosquitto: a sturdier broker",
    )


def check_ports(config: AnimaConfig) -> Iterator[Check]:
    wanted = []
    if config.web.enabled and config.web.port:
        wanted.append(("web port", config.web.host, config.web.port, "web.port"))
    if config.mqtt.enabled and config.mqtt.broker == "embedded":
        wanted.append(("broker port", "127.0.0.1", config.mqtt.embedded_port, "mqtt.embedded_port"))
    if not wanted:
        yield Check("ports", Status.SKIP, "no door binds a fixed port")
    for name, host, port, key in wanted:
        with socket.socket() as s:
            try:
                s.bind((host, port))
            except OSError as exc:
                yield Check(
                    name,
                    Status.FAIL,
                    f"{host}:{port} is taken ({exc.strerror})",
                    f"stop what holds it (another anima?), or set {key}",
                )
                continue
        yield Check(name, Status.OK, f"{host}:{port} is free")


def check_driver(config: AnimaConfig) -> Iterator[Check]:
    d = config.driver
    if d.type == "sim":
        yield Check("driver", Status.OK, "sim (the simulated robot: nothing to reach)")
    elif d.type == "serial":
        from anima.body import load_body

        yield _serial(d.port or load_body(config.body.checker_ini).board.port)
    elif d.type == "reachy_mini":
        yield _reachy(d.host, d.port)
    else:
        yield Check("driver", Status.WARN, f"{d.type}: no check for this driver")


def _serial(port: str) -> Check:
    path = Path(port)
    if not path.exists():
        return Check(
            "driver serial",
            Status.FAIL,
            f"{port} does not exist",
            "plug the servo board in, or set driver.port (ls /dev/serial/by-id/)",
        )
    if not os.access(path, os.R_OK | os.W_OK):
        return Check(
            "driver serial",
            Status.FAIL,
            f"{port}: no permission to read and write",
            "add yourself to the dialout group (sudo adduser $USER dialout)",
        )
    return Check("driver serial", Status.OK, f"{port} is there and writable")


def _reachy(host: str, port: int) -> Check:
    url = f"http://{host}:{port}/api/daemon/status"
    try:
        with urllib.request.urlopen(url, timeout=2) as reply:
            state = json.loads(reply.read()).get("state")
    except (OSError, ValueError) as exc:
        return Check(
            "driver reachy_mini",
            Status.FAIL,
            f"no Reachy Mini daemon at {host}:{port} ({exc})",
            "start reachy-mini-daemon, or set driver.host/port (docs/reachy-mini.md)",
        )
    if state != "running":
        return Check(
            "driver reachy_mini",
            Status.FAIL,
            f"the daemon at {host}:{port} is {state}",
            "see the daemon's log; restart it",
        )
    return Check("driver reachy_mini", Status.OK, f"the daemon at {host}:{port} is running")


def check_humanoid(config: AnimaConfig) -> Iterator[Check]:
    h = config.humanoid
    if h.type != "adam":
        yield Check("humanoid", Status.SKIP, f"humanoid.type {h.type}")
        return
    address = h.address or "127.0.0.1:6666"
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=2):
            pass
    except (OSError, ValueError) as exc:
        yield Check(
            "humanoid",
            Status.FAIL,
            f"nothing answers at {address} ({exc})",
            "start the robot's RobotControl server, or set humanoid's address",
        )
        return
    yield Check("humanoid", Status.OK, f"{address} accepts connections")


def _device(kind: str) -> tuple[str, str]:
    """The default ``kind`` (input/output) device's name, or "" and why there is none."""
    try:
        import sounddevice as sd  # type: ignore[import-not-found, unused-ignore]
    except (ImportError, OSError) as exc:
        return "", f"PortAudio is not available: {exc}"
    try:
        info = sd.query_devices(kind=kind)
    except Exception as exc:  # no device of that kind
        return "", f"PortAudio: {exc}"
    return f"{info['name']} ({int(info['default_samplerate'])} Hz)", ""


def check_motion_tick(config: AnimaConfig) -> Iterator[Check]:
    from anima.motion import compiled

    if compiled.compiled():
        yield Check("motion tick", Status.OK, compiled.status())
        return
    # plain Python keeps every deadline too, at about twice the tick's cost (docs/motion.md)
    fix = "unset ANIMA_PURE_PYTHON" if compiled.disabled() else "anima compile"
    yield Check("motion tick", Status.WARN, compiled.status(), fix)


CHECKS: tuple[Callable[[AnimaConfig], Iterator[Check]], ...] = (
    check_body,
    check_motion_tick,
    check_audio_out,
    check_audio_in,
    check_tts,
    check_listening,
    check_broker,
    check_ports,
    check_driver,
    check_humanoid,
)
