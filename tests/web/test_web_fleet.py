"""``anima fleet serve``'s page in both real browsers: three robots on a real broker side by
side, an E-STOP on one stops only it, E-STOP ALL stops them all, Reset all releases them; the
API refuses what it does not know; off loopback it needs a token."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from anima.errors import ConfigError
from anima.fleet import FleetWatcher
from anima.fleet.web import check_exposure, make_app
from anima.frontdoors.mqtt.broker import EmbeddedBroker, free_port
from anima.runtime import Runtime
from anima.testing import eventually
from anima.testing.fleet import mqtt_robot

from .browsers import Browser

pytestmark = pytest.mark.integration

THREE = 3


@pytest.fixture(scope="module")
def broker() -> Iterator[EmbeddedBroker]:
    broker = EmbeddedBroker(free_port())
    broker.start()
    yield broker
    broker.stop()


@pytest.fixture(scope="module")
def page(broker: EmbeddedBroker) -> Iterator[tuple[str, list[Runtime]]]:
    """Three robots on an embedded broker, and the fleet page on a free loopback port."""
    import uvicorn

    robots = []
    for i in range(THREE):
        runtime, door = mqtt_robot(f"page{i}", broker.address, name=f"robot {i}")
        runtime.start()
        assert door.wait_connected(10)
        robots.append(runtime)
    watcher = FleetWatcher(broker.address).start()
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(make_app(watcher), host="127.0.0.1", port=port,
                                           log_level="warning"))  # fmt: skip
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    assert eventually(lambda: server.started, timeout=10)
    try:
        yield f"http://127.0.0.1:{port}/", robots
    finally:
        server.should_exit = True
        thread.join(5)
        watcher.stop()
        for runtime in robots:
            runtime.stop(ease=False)


def estopped(robots: list[Runtime]) -> list[bool]:
    return [r.state().estop for r in robots]


def test_the_page_stops_one_robot_or_all(page: tuple[str, list[Runtime]], browser: Browser) -> None:
    url, robots = page
    b = browser
    b.goto(url)
    b.wait_for(f"document.querySelectorAll('.robot.online').length === {THREE}")
    assert b.evaluate("document.getElementById('count').textContent") == "3 robots, 3 online"
    b.click(".robot[data-prefix='page1'] button.estop")
    assert eventually(lambda: estopped(robots) == [False, True, False], timeout=5)
    time.sleep(0.3)  # nothing else follows
    assert estopped(robots) == [False, True, False]
    b.wait_for(
        "document.querySelector(\".robot[data-prefix='page1']\").classList.contains('estopped')"
    )
    b.click("#estop-all")
    assert eventually(lambda: all(estopped(robots)), timeout=5)
    b.click("#reset-all")
    assert eventually(lambda: not any(estopped(robots)), timeout=5)
    assert b.errors == []


def test_a_card_links_the_dashboard_and_shows_every_warning_whole(
    page: tuple[str, list[Runtime]], broker: EmbeddedBroker, browser: Browser
) -> None:
    """A robot's card links the dashboard its identity names (an http(s) address only: anyone
    on the broker can publish one) and lists each of its warnings in full."""
    from paho.mqtt import publish

    url, _ = page
    long = "driver reachy_mini not connected: " + "the daemon stopped answering " * 6
    robots = {"page7": "http://127.0.0.1:18080/", "page8": "javascript:alert(1)"}
    msgs: list[Any] = []
    for prefix, dashboard in robots.items():
        identity = {"v": 1, "name": prefix, "prefix": prefix, "dashboard": dashboard}
        health = {"v": 1, "ok": False, "warnings": [long, "the loop missed 3 deadlines"]}
        msgs += [(f"{prefix}/agent/status", "online", 1, True),
                 (f"{prefix}/agent/identity", json.dumps(identity), 1, True),
                 (f"{prefix}/agent/health", json.dumps(health), 1, True)]  # fmt: skip
    address = broker.address
    publish.multiple(msgs, hostname=address.host, port=address.port)
    try:
        b = browser
        b.goto(url)
        card = "document.querySelector(\".robot[data-prefix='page7']\")"
        b.wait_for(f"{card} !== null && {card}.querySelector('a.dashboard') !== null")
        assert b.evaluate(f"{card}.querySelector('a.dashboard').href") == robots["page7"]
        # a card that shows nothing new is kept, not rebuilt under the pointer each second
        b.evaluate(f"window.kept = {card}; true")
        b.evaluate("new Promise(r => setTimeout(() => r(true), 2200))")  # two refreshes
        assert b.evaluate(f"window.kept === {card}") is True
        shown = b.evaluate(f"{card}.querySelector(\"dd[data-field='health']\").innerText")
        assert long.strip() in shown
        assert "the loop missed 3 deadlines" in shown
        forged = "document.querySelector(\".robot[data-prefix='page8']\")"
        b.wait_for(f"{forged} !== null")
        assert b.evaluate(f"{forged}.querySelector('a') === null")
        assert b.errors == []
    finally:
        clear = [(f"{p}/agent/{leaf}", "", 1, True) for p in robots
                 for leaf in ("status", "identity", "health")]  # fmt: skip
        publish.multiple(clear, hostname=address.host, port=address.port)


def test_the_api_refuses_what_it_does_not_know(page: tuple[str, list[Runtime]]) -> None:
    url, _ = page
    assert httpx.post(url + "api/fleet/dance", json={}).status_code == 404
    reply = httpx.post(url + "api/fleet/estop", json={"robots": ["nobody"]})
    assert reply.status_code == 404
    assert "no robot nobody" in reply.json()["detail"]
    assert httpx.post(url + "api/fleet/estop", json={"robots": "page0"}).status_code == 422
    assert len(httpx.get(url + "api/fleet").json()) >= THREE


def test_off_loopback_it_needs_a_token() -> None:
    with pytest.raises(ConfigError, match="give it a --token"):
        check_exposure("0.0.0.0", None)
    check_exposure("0.0.0.0", "s3cret")
    check_exposure("127.0.0.1", None)
