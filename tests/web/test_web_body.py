"""The dashboard's whole-body view, in both real browsers: Nadine's arm waves when she waves,
Reachy Mini's head nods in the side view with what the driver measured drawn over it, and the
humanoid's mode, posture and walking velocity are drawn from its state; and the page's small
things (the resting face, clock times, a dismissed warning)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from anima.body import load_body
from anima.build import build
from anima.config import AnimaConfig, SpeechConfig, WebConfig
from anima.drivers.reachy_mini import ReachyMiniDriver
from anima.frontdoors.web import WebFrontDoor
from anima.runtime import Runtime
from anima.testing import eventually
from anima.testing.reachy import EchoLink

from .browsers import Browser
from .test_web_browser import _dashboard, _exists

pytestmark = pytest.mark.integration

Robot = tuple[Runtime, WebFrontDoor]

# samples the page for ``ms``: the right hand's height on screen and its angle, every 40 ms
SAMPLE_HAND = """new Promise((done) => {
  const out = [], hand = document.getElementById('hand-r');
  const t = setInterval(() => {
    out.push([hand.getBoundingClientRect().top, +hand.dataset.angle]);
    if (out.length >= %d) { clearInterval(t); done(out); }
  }, 40);
})"""


@pytest.fixture
def reachy_robot() -> Iterator[Robot]:
    """The Reachy Mini body on a driver whose robot reports what it was sent 3 targets ago."""
    body = load_body("reachy_mini")
    cfg = AnimaConfig(web=WebConfig(port=0), speech=SpeechConfig(enabled=False))
    driver = ReachyMiniDriver(body, lambda: EchoLink(behind=3))
    runtime = build(cfg, doors=False, body=body, driver=driver)
    door = WebFrontDoor(runtime, cfg.web)
    runtime.attach(door)
    runtime.start()
    yield runtime, door
    runtime.stop(ease=False)  # easing to rest took a second of real time, and is not tested here


def _shot(b: Browser, request: pytest.FixtureRequest, tmp_path: Path, name: str) -> None:
    shots = Path(os.environ.get("ANIMA_ARTIFACTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    shot = shots / f"{name}-{request.node.callspec.params['browser']}.png"
    b.screenshot(shot)
    assert shot.stat().st_size > 10_000


def test_nadines_wave_looks_like_a_wave(
    robot: Robot, browser: Browser, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    b = _dashboard(browser, robot[1])
    assert b.evaluate("document.getElementById('bodyview').dataset.figure") == "nadine"
    assert b.evaluate("document.getElementById('body-panel').hidden") is False
    still = b.evaluate(SAMPLE_HAND % 5)
    b.click("#gestures button[data-name='LOOKUP_Waving']")
    waving = b.evaluate(SAMPLE_HAND % 100)  # 4 s of the wave
    rest_top = still[-1][0]
    tops = [top for top, _ in waving]
    assert min(tops) < rest_top - 80  # the hand comes up above the shoulder …
    raised = [a for top, a in waving if top < rest_top - 80]
    assert max(raised) - min(raised) > 30  # … and swings from side to side while it is up
    assert max(tops) - min(tops) > 80
    _shot(b, request, tmp_path, "body-nadine")
    assert b.errors == []


def test_the_page_at_rest_its_clock_and_a_dismissed_warning(robot: Robot, browser: Browser) -> None:
    """The resting face is neutral (eyes open, mouth closed); events are stamped with the time of
    day; a standing health warning (this robot has no sound card) is dismissed with a click and
    stays dismissed on reload."""
    door = robot[1]
    b = _dashboard(browser, door)
    assert b.evaluate("document.getElementById('postures-heading').hidden") is False
    # at rest (the idle blink aside) the lids are up and the mouth a closed line
    b.wait_for("document.getElementById('lid-r').getAttribute('height') === '0.00'")
    b.wait_for("document.getElementById('mouth').getAttribute('ry') === '3.00'")
    b.click("#gestures button[data-name='nod']")
    b.wait_for(_exists("#log li[data-kind='move_started']"))
    stamp = b.evaluate(
        "document.querySelector(\"#log li[data-kind='move_started'] .t\").textContent"
    )
    assert re.fullmatch(r"\d\d:\d\d:\d\d\.\d{3}", stamp), stamp
    # the warnings not dismissed (the pill shows the first; a loaded machine may add missed ticks)
    live = "JSON.parse(document.getElementById('health').dataset.live || '[]')"
    sound = f"{live}.some(w => w.includes('no sound card'))"
    b.wait_for(sound)
    b.click("#health")
    b.wait_for(f"!{sound}")
    b.goto(door.url)  # a reload: still dismissed for this run of the robot
    b.wait_for("document.getElementById('health').dataset.live !== undefined")
    assert b.evaluate(sound) is False
    assert b.errors == []


def test_reachys_nod_in_the_side_view_with_the_measured_ghost(
    reachy_robot: Robot, browser: Browser, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    runtime, door = reachy_robot
    b = browser
    b.goto(door.url)
    b.wait_for("document.querySelector(\"#gestures button[data-name='nod']\") !== null")
    assert b.evaluate("document.getElementById('bodyview').dataset.figure") == "reachy_mini"
    assert b.evaluate("getComputedStyle(document.getElementById('face')).display") == "none"
    # no gaze postures on this body: no empty "Postures" heading either
    assert b.evaluate("document.getElementById('postures-heading').hidden") is True
    # what the driver measured is drawn dashed over what it was sent, and the caption says so
    b.wait_for(
        "getComputedStyle(document.querySelector('#reachy-side .measured')).display !== 'none'"
    )
    b.wait_for("document.getElementById('body-caption').textContent.includes('lag')")
    pitch = (
        "+/rotate\\(([-\\d.]+)\\)/.exec(document.querySelector('#reachy-side .sent > g')"
        ".getAttribute('transform'))[1]"
    )
    assert abs(b.evaluate(pitch)) < 1
    b.click("#gestures button[data-name='nod']")
    b.wait_for(f"{pitch} > 8")  # the nod's 14° down: clockwise, the face to the right
    measured = runtime.state().measured
    assert measured is not None
    assert eventually(lambda: (runtime.state().measured or measured).lag_ms is not None)
    _shot(b, request, tmp_path, "body-reachy")
    assert b.errors == []


def test_the_humanoid_figure_walks_as_the_robot_does(
    humanoid_robot: Robot, browser: Browser
) -> None:
    runtime, door = humanoid_robot
    b = browser
    b.goto(door.url)
    b.wait_for("document.querySelector('#humanoid-figure .mode') !== null")
    b.wait_for("document.querySelector('#humanoid-figure .mode').textContent.startsWith('Stop')")
    link = runtime.humanoid
    assert link is not None
    client = link.client
    assert client is not None
    for _ in range(8):  # through the modes to Walk, each once the robot offers it
        s = client.state()
        if s.fsm_name == "Walk":
            break
        nxt = next(m for m in ("Walk", "Stand", "Zero", "Start") if m in s.mode_enable_list)
        client.set_mode(nxt)
        client.wait_for_mode(nxt)
    assert client.state().fsm_name == "Walk"
    client.speed(0.3, 0.0, 0.4, continuous=True)
    b.wait_for("document.querySelector('#humanoid-figure .mode').textContent.startsWith('Walk')")
    # forward is up on the ground seen from above; a left turn draws an arc
    b.wait_for("+document.getElementById('adam-arrow').getAttribute('y2') < -10")
    b.wait_for("document.querySelector('#adam-velocity path').getAttribute('d') !== ''")
    client.speed(0.0, 0.0, 0.0, continuous=True)
    b.wait_for("+document.getElementById('adam-arrow').getAttribute('y2') > -1")
    assert b.errors == []
