"""The dashboard in headless Chromium (Debian's, driven by Playwright): no console errors, an
animation button moves the simulated robot, speak shows start then end in the event log, estop
freezes the bars. A screenshot is kept (ANIMA_ARTIFACTS, else the test's tmp_path)."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from anima.frontdoors.web import WebFrontDoor
from anima.runtime import Runtime

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

Robot = tuple[Runtime, WebFrontDoor]


@pytest.fixture
def page(robot: Robot) -> Iterator[tuple[Any, list[str]]]:
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian chromium is not installed (scripts/apt-packages.txt)")
    errors: list[str] = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            pg = browser.new_page(viewport={"width": 1400, "height": 900})
            pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            pg.on("pageerror", lambda e: errors.append(str(e)))
            pg.goto(robot[1].url)
            pg.wait_for_selector("#gestures button[data-name='nod']")
            yield pg, errors
        finally:
            browser.close()


def _wait(predicate: Any, timeout: float = 5.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.02)
    return False


def test_the_dashboard_drives_and_shows_the_robot(
    robot: Robot, page: tuple[Any, list[str]], tmp_path: Path
) -> None:
    runtime, _ = robot
    pg, errors = page
    assert pg.inner_text("#link") == "live"
    assert pg.locator("#channels .channel").count() == len(runtime.body)

    # an animation button moves the simulated robot's channels, and the bars follow
    before = runtime.engine.last_frame.copy()
    pg.click("#gestures button[data-name='LOOKUP_Waving']")
    assert _wait(lambda: abs(runtime.engine.last_frame - before).max() > 10)
    shoulder = pg.locator(".channel[data-channel='r_shoulder_pitch'] .val")
    assert _wait(
        lambda: float(shoulder.inner_text()) > before[runtime.body.index("r_shoulder_pitch")] + 10
    )

    # speak shows start then end in the event log
    pg.fill("#speak-text", "hello from the browser")
    pg.click("#speak")
    pg.wait_for_selector("#log li[data-kind='end_speak']", timeout=10_000)
    kinds = pg.eval_on_selector_all("#log li", "els => els.map(e => e.dataset.kind)")
    assert kinds.index("start_speak") < kinds.index("end_speak")
    assert "hello from the browser" in pg.inner_text("#log")

    # estop freezes the bars
    pg.click("#estop-btn")
    pg.wait_for_selector("#estop.bad")
    pg.click("#gestures button[data-name='nod']")
    time.sleep(0.2)
    frozen = pg.eval_on_selector_all(".channel .val", "els => els.map(e => e.textContent)")
    time.sleep(0.5)
    later = pg.eval_on_selector_all(".channel .val", "els => els.map(e => e.textContent)")
    assert frozen == later
    assert int(pg.inner_text("#ups")) >= 20  # updates per second on the page

    shots = Path(os.environ.get("ANIMA_ARTIFACTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    pg.screenshot(path=str(shots / "dashboard.png"))
    assert (shots / "dashboard.png").stat().st_size > 10_000
    pg.click("#reset-btn")
    pg.wait_for_selector("#estop:not(.bad)")
    assert errors == []


def test_the_humanoid_panel_shows_and_drives_the_simulated_adam() -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian chromium is not installed (scripts/apt-packages.txt)")
    from anima.config import AnimaConfig, HumanoidConfig, SpeechConfig, WebConfig

    cfg = AnimaConfig(
        web=WebConfig(port=0),
        speech=SpeechConfig(enabled=False),
        humanoid=HumanoidConfig(type="sim", sim_port=0, state_hz=20.0),
    )
    runtime = Runtime(cfg)
    door = WebFrontDoor(runtime, cfg.web)
    runtime.attach(door)
    with runtime, sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            pg = browser.new_page()
            pg.goto(door.url)
            pg.wait_for_selector("#humanoid:not([hidden])", timeout=10_000)
            text = pg.inner_text("#humanoid-state")
            # the controls offer only what the robot accepts now: Start, from Stop
            pg.wait_for_selector("#h-mode option[value='Start']", state="attached", timeout=10_000)
            assert pg.locator("#h-posture input[type=range]").count() == 4
            pg.select_option("#h-mode", "Start")
            pg.click("#h-mode-btn")
            pg.wait_for_function(
                "document.getElementById('humanoid-state').innerText.includes('Start')",
                timeout=10_000,
            )
            link = runtime.humanoid
            assert link is not None
            assert link.client is not None
            assert link.client.state().fsm_name == "Start"
        finally:
            browser.close()
    assert "mode" in text
    assert "Stop" in text  # the simulated Adam starts in its Stop mode
