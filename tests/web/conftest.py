"""A robot with the web door on a free loopback port, speech by the scripted engine: ``robot`` on
the real clock (browsers see it move in real time, streams are timed in real time),
``fake_robot`` on autojump fake time held still while the test talks to it (``HeldTime``), and
``serving()`` for a test that only talks to one; the real browsers, launched once per test
process and shared."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import httpx
import pytest
import websockets

from anima.build import build
from anima.config import AnimaConfig, BehaviourConfig, HumanoidConfig, SpeechConfig, WebConfig
from anima.drivers.sim import SimDriver
from anima.frontdoors.web import WebFrontDoor
from anima.runtime import Runtime
from anima.speech.sinks import NullSink
from anima.testing import eventually
from anima.testing.clock import FakeClock
from anima.testing.tts import ScriptedEngine

from .browsers import BROWSERS, Browser, BrowserPool

REAL_BOUND_S = 10.0  # a generous real-time bound: only a hang reaches it


def web_config(**web: Any) -> AnimaConfig:
    return AnimaConfig(
        web=WebConfig(port=0, **web),
        behaviour=BehaviourConfig(full_blink_every_s=600.0),  # no periodic animation events
        speech=SpeechConfig(enabled=True),
    )


@pytest.fixture
def robot() -> Iterator[tuple[Runtime, WebFrontDoor]]:
    """The robot on the real clock."""
    cfg = web_config()
    runtime = Runtime(cfg, driver=SimDriver(), tts=[ScriptedEngine()], audio_sink=NullSink())
    door = WebFrontDoor(runtime, cfg.web)
    runtime.attach(door)
    runtime.start()
    assert runtime.wait_first_tick()
    yield runtime, door
    runtime.stop(ease=False)


class HeldTime:
    """A runtime's autojump fake clock, held still while the test talks to the robot: no tick
    runs between two requests, a transient state (an utterance under way) stays put while the
    test looks at it, and no tick burns a core while a request is in flight. Time runs, at the
    speed of the runtime's CPU work, only while the test waits for it (:meth:`until`)."""

    def __init__(self) -> None:
        self.clock = FakeClock(autojump=True)
        self._hold: AbstractContextManager[None] | None = None
        self.hold()

    def hold(self) -> None:
        if self._hold is None:
            self._hold = self.clock.hold()
            self._hold.__enter__()

    def release(self) -> None:
        if self._hold is not None:
            self._hold.__exit__(None, None, None)
            self._hold = None

    @contextmanager
    def running(self) -> Iterator[None]:
        """Time runs inside this block (and is held again after it)."""
        self.release()
        try:
            yield
        finally:
            self.hold()

    def advance(self, seconds: float) -> None:
        """Move time by hand (held still otherwise), waking the waits it makes due."""
        self.clock.advance(seconds)

    def settle(self, condition: Callable[[], object], timeout: float = REAL_BOUND_S) -> bool:
        """Wait (real seconds) with time held until the runtime's threads make ``condition()``
        true: for what a request sets going without a tick (a transient state included)."""
        return eventually(condition, timeout, every=0.001)

    def until(self, condition: Callable[[], object], timeout: float = REAL_BOUND_S) -> bool:
        """Let time run until ``condition()`` holds (checked first with time held), then hold it
        again; False after ``timeout`` real seconds. For a state that stays once reached."""
        if condition():
            return True
        with self.running():
            return eventually(condition, timeout, every=0.001)

    def close(self) -> None:
        self.release()
        self.clock.close()


@pytest.fixture
def robot_time() -> Iterator[HeldTime]:
    held = HeldTime()
    yield held
    held.close()


@pytest.fixture
def fake_robot(robot_time: HeldTime) -> Iterator[tuple[Runtime, WebFrontDoor]]:
    """The ``robot`` on autojump fake time held still (:class:`HeldTime`, ``robot_time``)."""
    clock = robot_time.clock
    cfg = web_config()
    runtime = Runtime(
        cfg, driver=SimDriver(), clock=clock, tts=[ScriptedEngine()], audio_sink=NullSink(clock)
    )
    door = WebFrontDoor(runtime, cfg.web)
    runtime.attach(door)
    with robot_time.running():  # the loop's first tick
        runtime.start()
        assert runtime.wait_first_tick()
    # and its second: the loop's rate (the state's loop.rate_hz) is measured from two ticks on;
    # how many ran before the hold was the threads' race (under load: one, and a rate of 0)
    assert robot_time.until(lambda: runtime.engine.stats().ticks >= 2)
    yield runtime, door
    runtime.stop(ease=False)  # time still held: the loop's sleep ends on the stop


@contextmanager
def serving(cfg: AnimaConfig) -> Iterator[tuple[Runtime, WebFrontDoor]]:
    """A runtime serving ``cfg`` with the web door (speech by the scripted engine), on autojump
    fake time held still while the test talks to it: no tick runs, and none burns a core, while
    a request is in flight. On the way out the clock runs again, so the runtime eases to rest
    (``with runtime``'s exit) in fake time: a second of real time on the real clock."""
    clock = FakeClock(autojump=True)
    runtime = Runtime(cfg, clock=clock, tts=[ScriptedEngine()], audio_sink=NullSink(clock))
    door = WebFrontDoor(runtime, cfg.web)
    runtime.attach(door)
    try:
        with runtime, clock.hold():
            yield runtime, door
    finally:
        clock.close()


@pytest.fixture
def humanoid_robot() -> Iterator[tuple[Runtime, WebFrontDoor]]:
    """The dashboard linked to a simulated Adam on a free loopback port (no speech)."""
    cfg = AnimaConfig(
        web=WebConfig(port=0),
        speech=SpeechConfig(enabled=False),
        humanoid=HumanoidConfig(type="sim", sim_port=0, state_hz=20.0),
    )
    runtime = build(cfg, doors=False)
    door = WebFrontDoor(runtime, cfg.web)
    runtime.attach(door)
    runtime.start()
    yield runtime, door
    runtime.stop(ease=False)  # easing to rest took a second of real time, and is not tested here


@pytest.fixture
def http(robot: tuple[Runtime, WebFrontDoor]) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=robot[1].url, timeout=5.0) as client:
        yield client


def collect(url: str, seconds: float, until: str | None = None) -> list[dict[str, Any]]:
    """Messages from the WebSocket at ``url`` for ``seconds`` (or until an event of ``until``)."""

    async def run() -> list[dict[str, Any]]:
        got: list[dict[str, Any]] = []
        async with websockets.connect(url) as ws:
            end = time.monotonic() + seconds
            while (left := end - time.monotonic()) > 0:
                try:
                    text = await asyncio.wait_for(ws.recv(), left)
                except TimeoutError:
                    break
                msg = json.loads(text)
                got.append(msg)
                if until is not None and msg.get("kind") == until:
                    break
        return got

    return asyncio.run(run())


@pytest.fixture(scope="session")
def browser_pool(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrowserPool]:
    pool = BrowserPool(tmp_path_factory.mktemp("browsers"))
    yield pool
    pool.close()


@pytest.fixture(params=BROWSERS)
def browser(request: pytest.FixtureRequest, browser_pool: BrowserPool) -> Iterator[Browser]:
    """Each browser in turn, shared by the process's tests: the test starts with no errors, and
    ends on a blank page (the last one's, its server stopped, would go on reconnecting and log
    each refusal); a browser that cannot go there is closed, and the next test launches one."""
    name: str = request.param
    b = browser_pool.get(name)
    b.errors.clear()
    yield b
    try:
        b.goto("about:blank")
    except Exception:
        browser_pool.discard(name)
        raise
    b.errors.clear()
