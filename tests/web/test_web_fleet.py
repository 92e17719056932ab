"""``anima fleet serve``'s page in both real browsers: three robots on a real broker side by
side, an E-STOP on one stops only it, E-STOP ALL stops them all, Reset all releases them; the
API refuses what it does not know; off loopback it needs a token."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from anima.errors import ConfigError
from anima.fleet import FleetWatcher
from anima.fleet.web import check_exposure, make_app
from anima.frontdoors.mqtt.broker import EmbeddedBroker, free_port
from anima.runtime import Runtime
from anima.testing import eventually
from anima.testing.fleet import mqtt_robot

from .browsers import BROWSERS, Browser, open_browser

THREE = 3


@pytest.fixture(scope="module")
def page() -> Iterator[tuple[str, list[Runtime]]]:
    """Three robots on an embedded broker, and the fleet page on a free loopback port."""
    import uvicorn

    broker = EmbeddedBroker(free_port())
    broker.start()
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
        broker.stop()


@pytest.fixture(params=BROWSERS)
def browser(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Browser]:
    with open_browser(request.param, tmp_path) as b:
        yield b


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
