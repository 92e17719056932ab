"""The dashboard announced over mDNS (``web.mdns: true``), found by ``anima fleet find``'s
browser, on 127.0.0.1 only; gone once the runtime stops; off by default."""

from __future__ import annotations

import pytest

from anima.build import build
from anima.config import AnimaConfig, MqttConfig, SpeechConfig, WebConfig
from anima.frontdoors.web import WebFrontDoor
from anima.testing import eventually

pytest.importorskip("zeroconf", reason="pip install 'anima[mdns]'")

from anima.frontdoors.web.mdns import find_dashboards

pytestmark = pytest.mark.integration


def test_the_dashboard_is_found_on_the_lan_and_gone_after() -> None:
    cfg = AnimaConfig(
        mqtt=MqttConfig(enabled=False, prefix="mdns-test", name="Mdns Test"),
        web=WebConfig(port=0, mdns=True),
        speech=SpeechConfig(enabled=False),
    )
    runtime = build(cfg, doors=False)
    door = WebFrontDoor(runtime, cfg.web)
    runtime.attach(door)
    with runtime:
        assert door.mdns is not None
        assert door.mdns.registered.wait(10)
        found = [d for d in find_dashboards(2.0, loopback=True) if d.prefix == "mdns-test"]
        assert len(found) == 1
        assert found[0].name == "anima Mdns Test"
        assert found[0].url == door.url
        assert found[0].body == "nadine"
    assert door.mdns is None
    assert eventually(
        lambda: not [d for d in find_dashboards(1.0, loopback=True) if d.prefix == "mdns-test"],
        timeout=10,
    )


def test_it_is_off_by_default() -> None:
    cfg = AnimaConfig(mqtt=MqttConfig(enabled=False), web=WebConfig(port=0),
                      speech=SpeechConfig(enabled=False))  # fmt: skip
    runtime = build(cfg, doors=False)
    door = WebFrontDoor(runtime, cfg.web)
    runtime.attach(door)
    with runtime:
        assert door.mdns is None
