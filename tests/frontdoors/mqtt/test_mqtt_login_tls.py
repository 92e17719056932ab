"""A broker that wants a password and TLS (issue 15: one MQTT client factory for every client).

A real Mosquitto with a password file and a TLS listener whose certificate a CA made here
signed. The runtime's door, ``Robot.connect("mqtts://…")``, the remote ears and the test probe
all reach it with the same settings; a wrong password is refused in words that say what to fix.
"""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from anima import Robot
from anima.build import build
from anima.config import AnimaConfig, MqttConfig, SpeechConfig, WebConfig
from anima.drivers.sim import SimDriver
from anima.errors import RobotNotConnectedError
from anima.frontdoors.mqtt.frontdoor import MqttFrontDoor
from anima.testing.mosquitto import Mosquitto, find_mosquitto
from anima.testing.mqtt import MqttProbe
from anima.wire.mqtt import BrokerAddress, Credentials

USER, PASSWORD = "robot", "s3cret:with@odd/chars"

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        find_mosquitto() is None or shutil.which("openssl") is None,
        reason="needs mosquitto and openssl (Debian: mosquitto, openssl)",
    ),
]


def _run(*argv: str | Path) -> None:
    subprocess.run([str(a) for a in argv], check=True, capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Mosquitto, Path]]:
    """Mosquitto on a TLS listener that wants USER's password; the CA file that signed it."""
    d = tmp_path_factory.mktemp("tls")
    ca_key, ca, key, csr, cert = (
        d / n for n in ("ca.key", "ca.crt", "srv.key", "srv.csr", "srv.crt")
    )
    _run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca_key,
         "-out", ca, "-days", "2", "-subj", "/CN=anima test CA")  # fmt: skip
    _run("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr,
         "-subj", "/CN=127.0.0.1")  # fmt: skip
    ext = d / "san.ext"
    ext.write_text("subjectAltName=IP:127.0.0.1\n")
    _run("openssl", "x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial",
         "-out", cert, "-days", "2", "-extfile", ext)  # fmt: skip
    passwords = d / "passwd"
    _run("mosquitto_passwd", "-b", "-c", passwords, USER, PASSWORD)
    broker = Mosquitto(
        anonymous=False,
        listener_options=[
            f"cafile {ca}",
            f"certfile {cert}",
            f"keyfile {key}",
            f"password_file {passwords}",
        ],
    )
    with broker:
        yield broker, ca


def _config(prefix: str, ca: Path, password: str = PASSWORD) -> AnimaConfig:
    mqtt = MqttConfig(prefix=prefix, username=USER, password=password, tls_ca=str(ca))
    return AnimaConfig(mqtt=mqtt, speech=SpeechConfig(enabled=False), web=WebConfig(enabled=False))


class _Quiet:
    """A listener that hears nothing: the test speaks for it."""

    def start(self) -> None: ...

    def stop(self) -> None: ...


def _door(runtime: Any) -> MqttFrontDoor:
    return next(d for d in runtime.frontdoors if isinstance(d, MqttFrontDoor))


def test_the_runtime_and_a_script_reach_a_broker_with_a_login_over_tls(
    secured: tuple[Mosquitto, Path],
) -> None:
    broker, ca = secured
    cfg = _config("tlsbot", ca)
    cfg = dataclasses.replace(cfg, mqtt=dataclasses.replace(cfg.mqtt, broker=str(broker.address)))
    runtime = build(cfg, driver=SimDriver())
    runtime.start()
    try:
        assert _door(runtime).wait_connected(10), "the door did not get in"
        port = broker.address.port
        quoted = PASSWORD.replace(":", "%3A").replace("@", "%40").replace("/", "%2F")
        # the login in the URL, the CA as an argument
        url = f"mqtts://{USER}:{quoted}@127.0.0.1:{port}"
        with Robot.connect(url, prefix="tlsbot", tls_ca=str(ca), timeout=10) as robot:
            assert robot.state().driver_connected
            handle = robot.play("nod", wait=True)
            assert handle.done
        # the login as arguments
        with Robot.connect(
            f"mqtts://127.0.0.1:{port}",
            prefix="tlsbot",
            username=USER,
            password=PASSWORD,
            tls_ca=str(ca),
            timeout=10,
        ) as robot:
            assert not robot.state().estop
    finally:
        runtime.stop(ease=False)  # no real second easing to rest


def test_the_probe_and_the_remote_ears_log_in_with_the_config(
    secured: tuple[Mosquitto, Path],
) -> None:
    """``anima agent`` takes the config's mqtt login and TLS: what it hears reaches the broker."""
    from anima.agent.remote import RemoteEars
    from anima.events import Transcript

    broker, ca = secured
    credentials = Credentials.of(_config("ears", ca).mqtt)
    with MqttProbe(broker.address, subscribe="ears/#", credentials=credentials) as probe:
        ears = RemoteEars(
            lambda _ears: _Quiet(),  # type: ignore[arg-type, return-value]
            broker.address, "ears", print, credentials=credentials,
        )  # fmt: skip
        ears.start(10)
        try:
            ears.on_final(Transcript(text="wave hello", final=True))
            heard = probe.wait_for("ears/agent/control/ask", timeout=10)
            assert heard.text() == "wave hello"
        finally:
            ears.stop()


def test_a_wrong_password_is_refused_in_words_that_say_what_to_fix(
    secured: tuple[Mosquitto, Path],
) -> None:
    broker, ca = secured
    port = broker.address.port
    started = time.monotonic()
    with pytest.raises(RobotNotConnectedError, match=r"refused.*user name and password"):
        Robot.connect(
            f"mqtts://{USER}:wrong@127.0.0.1:{port}", prefix="x", tls_ca=str(ca), timeout=60
        ).open()
    assert time.monotonic() - started < 30  # said at the refusal, not after the 60 s time out
    from anima.agent.remote import RemoteEars

    ears = RemoteEars(
        lambda _ears: _Quiet(),  # type: ignore[arg-type, return-value]
        BrokerAddress("127.0.0.1", port), "x", print,
        credentials=Credentials(username=USER, password="wrong", tls=True, tls_ca=str(ca)),
    )  # fmt: skip
    started = time.monotonic()
    with pytest.raises(ConnectionError, match=r"refused.*user name and password"):
        ears.start(60)
    assert time.monotonic() - started < 30
