"""A robot's identity names its dashboard (the fleet page links it): the bound address, none
without a web door, the host's name for a wildcard bind."""

from __future__ import annotations

import socket

import pytest

from anima.config import AnimaConfig, SpeechConfig, WebConfig
from anima.drivers.sim import SimDriver
from anima.frontdoors.mqtt.presence import dashboard_url
from anima.frontdoors.web import WebFrontDoor
from anima.runtime import Runtime

pytestmark = pytest.mark.integration


def test_the_identity_names_the_bound_dashboard() -> None:
    cfg = AnimaConfig(web=WebConfig(port=0), speech=SpeechConfig(enabled=False))
    runtime = Runtime(cfg, driver=SimDriver())
    assert dashboard_url(runtime) is None  # port 0, nothing bound yet
    door = WebFrontDoor(runtime, cfg.web)
    runtime.attach(door)
    runtime.start()
    try:
        assert door.port != 0
        assert dashboard_url(runtime) == door.url == f"http://127.0.0.1:{door.port}/"
    finally:
        runtime.stop(ease=False)  # no real second easing to rest


def test_no_web_door_no_dashboard_and_a_wildcard_is_named_by_the_host() -> None:
    off = AnimaConfig(web=WebConfig(enabled=False), speech=SpeechConfig(enabled=False))
    assert dashboard_url(Runtime(off, driver=SimDriver())) is None
    wild = AnimaConfig(
        web=WebConfig(host="0.0.0.0", port=8123, token="a-token-long-enough-to-pass"),
        speech=SpeechConfig(enabled=False),
    )
    assert dashboard_url(Runtime(wild, driver=SimDriver())) == (
        f"http://{socket.gethostname()}:8123/"
    )
