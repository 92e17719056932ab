"""The REST API over real HTTP: each command reaches the simulated robot; refusals carry the
MQTT door's reasons, because both call the same parsers. The robot runs on autojump fake time
held still while the test talks to it (conftest's ``HeldTime``): time runs only while the test
waits for it, so a nod or an utterance takes no real second."""

from __future__ import annotations

import httpx
import pytest

from anima.errors import AnimaError
from anima.events import CommandRejected, Event
from anima.frontdoors.web import WebFrontDoor
from anima.runtime import Runtime
from anima.wire import payloads

from .conftest import HeldTime

pytestmark = pytest.mark.integration

Robot = tuple[Runtime, WebFrontDoor]


@pytest.fixture
def robot(fake_robot: Robot) -> Robot:
    """This file's robot (and its ``http`` client's) runs on held fake time."""
    return fake_robot


def next_tick(robot: Robot, robot_time: HeldTime) -> None:
    """Move held time on by one period and see the motion loop wake for its tick (counted as it
    wakes: what the tick does may still be under way; a test settles on that). A microsecond
    more than the period: the loop's deadline is ``t0 + k * period``, which a sum of periods can
    miss by a rounding error."""
    runtime = robot[0]
    ticks = runtime.engine.stats().ticks
    robot_time.advance(runtime.engine.period + 1e-6)
    assert robot_time.settle(lambda: runtime.engine.stats().ticks > ticks)


def test_animation_moves_the_robot(robot: Robot, robot_time: HeldTime, http: httpx.Client) -> None:
    runtime, _ = robot
    r = http.post("/api/animation", json={"name": "nod"})
    assert r.status_code == 202
    next_tick(robot, robot_time)  # the tick that starts it: time held after it
    assert robot_time.settle(lambda: runtime.engine.state().move == "nod")
    assert robot_time.until(lambda: runtime.engine.state().move is None)


def test_look_at_turns_the_head(robot: Robot, robot_time: HeldTime, http: httpx.Client) -> None:
    runtime, _ = robot
    before = runtime.engine.last_frame.copy()
    r = http.post("/api/look_at", json={"x": 1.0, "y": 0.6, "z": 0.2})
    assert r.status_code == 202
    assert robot_time.until(lambda: abs(runtime.engine.last_frame - before).max() > 3.0)


def test_look_at_target_latches_the_gaze(
    robot: Robot, robot_time: HeldTime, http: httpx.Client
) -> None:
    runtime, _ = robot
    posture = "Posture_LookAtInterviewer"
    assert http.post("/api/look_at_target", json={"name": posture}).status_code == 202
    assert robot_time.until(lambda: runtime.behaviour.latched_target is not None)
    state = http.get("/api/state").json()
    assert state["gaze_target"] == posture == runtime.behaviour.latched_target


def test_speak_and_stop(robot: Robot, robot_time: HeldTime, http: httpx.Client) -> None:
    runtime, _ = robot
    r = http.post("/api/speak", json={"text": "hello there, how are you today", "locale": "en-US"})
    assert r.status_code == 202
    assert robot_time.settle(lambda: runtime.speaking)  # time held: it stays under way
    assert http.get("/api/state").json()["speaking"] is True
    assert http.post("/api/stop_speak").status_code == 202
    assert robot_time.until(lambda: not runtime.speaking)


def test_estop_freezes_and_reset_releases(
    robot: Robot, robot_time: HeldTime, http: httpx.Client
) -> None:
    runtime, _ = robot
    refused: list[Event] = []
    runtime.events.subscribe(refused.append, CommandRejected.kind)
    assert http.post("/api/estop").status_code == 202
    assert robot_time.settle(lambda: http.get("/api/state").json()["estop"] is True)
    frozen = runtime.engine.last_frame.copy()
    # refused on the same call (202 before issue 30), and as an event for the other clients
    nod = http.post("/api/animation", json={"name": "nod"})
    assert nod.status_code == 409
    assert nod.json() == {
        "v": 1,
        "path": "/api/animation",
        "reason": "'nod' refused: emergency stop is active (reset to resume)",
    }
    assert robot_time.settle(
        lambda: [e.command for e in refused if isinstance(e, CommandRejected)] == ["/api/animation"]
    )
    ticks = runtime.engine.stats().ticks
    assert robot_time.until(lambda: runtime.engine.stats().ticks > ticks + 30)
    assert (runtime.engine.last_frame == frozen).all()
    assert http.post("/api/reset").status_code == 202
    assert robot_time.settle(lambda: http.get("/api/state").json()["estop"] is False)


ESTOPPED = [  # the command routes and what an estopped runtime answers (a look_at is not
    # refused by the runtime: the estop holds the head; its answer is the runtime's all the same)
    ("/api/speak", {"text": "hello"}, 409),
    ("/api/animation", {"name": "nod"}, 409),
    ("/api/look_at_target", {"name": "Posture_LookAtInterviewer"}, 409),
    ("/api/stop_speak", None, 202),
    ("/api/stop_animation", None, 202),
    ("/api/estop", None, 202),
]


def test_every_command_route_answers_the_runtimes_verdict(
    robot: Robot, robot_time: HeldTime, http: httpx.Client
) -> None:
    """One rule for every command route: 202 when carried out, 409 with the reason when the
    runtime refused it, on the same call; not 202 "accepted" and a refusal later."""
    runtime, _ = robot
    assert http.post("/api/estop").status_code == 202
    assert runtime.estopped  # the answer came after it was carried out
    for path, body, status in ESTOPPED:
        got = http.post(path, json=body) if body is not None else http.post(path)
        assert got.status_code == status, (path, got.text)
        if status == 409:
            assert "emergency stop is active (reset to resume)" in got.json()["reason"], path
        else:
            assert got.json() == {"v": 1, "accepted": path}
    assert http.post("/api/reset").status_code == 202
    assert not runtime.estopped
    assert http.post("/api/animation", json={"name": "nod"}).status_code == 202
    assert not runtime.engine.is_idle  # queued on the engine before the answer (no tick since)
    next_tick(robot, robot_time)  # the next tick starts it
    # (the tick is counted when the loop wakes, before its work: wait for the work, time held)
    assert robot_time.settle(lambda: runtime.engine.state().move is not None)


@pytest.mark.parametrize(
    ("path", "body", "parse"),
    [
        ("/api/look_at", '{"x": 1, "y": 0}', payloads.parse_look_at),
        ("/api/look_at", '{"x": 1, "y": 0, "z": true}', payloads.parse_look_at),
        ("/api/look_at", '{"x": 1, "y": 0, "z": 0, "w": 1}', payloads.parse_look_at),
        ("/api/look_at", '{"x": 0, "y": 0, "z": 0}', payloads.parse_look_at),
        ("/api/look_at", '{"x": 1e9, "y": 0, "z": 0}', payloads.parse_look_at),
        ("/api/look_at", "[1, 2, 3]", payloads.parse_look_at),
        ("/api/look_at", "{nope", payloads.parse_look_at),
        ("/api/speak", '{"text": "hi", "locale": "english"}', payloads.parse_speak),
        ("/api/speak", '{"text": ""}', payloads.parse_speak),
        ("/api/speak", "", payloads.parse_speak),
        ("/api/speak", "x" * 2001, payloads.parse_speak),
    ],
)
def test_refusals_carry_the_mqtt_reason(
    http: httpx.Client, path: str, body: str, parse: payloads.Parser
) -> None:
    with pytest.raises(AnimaError) as refused:
        parse(body.encode())
    r = http.post(path, content=body, headers={"content-type": "application/json"})
    assert r.status_code == 400
    assert r.json() == {"v": 1, "path": path, "reason": str(refused.value)}


def test_unknown_animation_and_gesture_as_posture(robot: Robot, http: httpx.Client) -> None:
    runtime, _ = robot
    r = http.post("/api/animation", json={"name": "nodd"})
    assert r.status_code == 400
    with pytest.raises(AnimaError) as refused:
        payloads.parse_animation("nodd", runtime.library)
    assert r.json()["reason"] == str(refused.value)
    assert "did you mean" in r.json()["reason"]
    r = http.post("/api/look_at_target", json={"name": "nod"})
    assert r.status_code == 400
    assert r.json()["reason"] == "'nod' is a gesture, not a posture"
    r = http.post("/api/animation", json={"title": "nod"})
    assert r.json()["reason"] == "unknown field 'title' (fields: name)"


def test_speak_without_speech_is_409() -> None:
    from anima.config import SpeechConfig

    from .conftest import serving, web_config

    cfg = web_config()
    cfg = type(cfg)(web=cfg.web, speech=SpeechConfig(enabled=False))
    with serving(cfg) as (_, door), httpx.Client(base_url=door.url) as http:
        r = http.post("/api/speak", json={"text": "hello"})
        assert r.status_code == 409
        assert r.json()["reason"].startswith("speech is not available")


def test_state_body_animations_and_openapi(robot: Robot, http: httpx.Client) -> None:
    runtime, _ = robot
    state = http.get("/api/state").json()
    assert state["driver_connected"] is True
    assert len(state["values"]) == len(runtime.body)
    assert state["loop"]["rate_hz"] > 0
    body = http.get("/api/body").json()
    assert [c["name"] for c in body["channels"]] == [c.name for c in runtime.body.channels]
    assert all(c["min"] <= c["default"] <= c["max"] for c in body["channels"])
    anims = http.get("/api/animations").json()
    assert "nod" in anims["gestures"]
    assert set(anims["postures"]) == set(runtime.library.postures())
    spec = http.get("/openapi.json").json()
    for path in ("/api/speak", "/api/look_at", "/api/estop", "/api/state", "/api/body"):
        assert path in spec["paths"]
    schema = spec["paths"]["/api/look_at"]["post"]["requestBody"]["content"]["application/json"]
    assert schema["schema"]["required"] == ["x", "y", "z"]
    assert http.get("/").status_code == 200


def test_token_is_required_when_set() -> None:
    from .conftest import serving, web_config

    cfg = web_config(token="s3cret")
    with serving(cfg) as (runtime, door), httpx.Client(base_url=door.url) as http:
        assert http.get("/api/state").status_code == 401
        assert http.post("/api/estop").status_code == 401
        assert not runtime.engine.estopped
        ok = http.get("/api/state", headers={"Authorization": "Bearer s3cret"})
        assert ok.status_code == 200
        assert http.get("/api/state?token=s3cret").status_code == 200
        assert http.get("/").status_code == 200  # the page itself holds nothing secret


def test_a_taken_port_is_one_clear_error() -> None:
    import socket

    from anima.config import AnimaConfig, SpeechConfig, WebConfig
    from anima.errors import ConfigError

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        cfg = AnimaConfig(web=WebConfig(port=port), speech=SpeechConfig(enabled=False))
        runtime = Runtime(cfg)
        runtime.attach(WebFrontDoor(runtime, cfg.web))
        with pytest.raises(ConfigError, match=r"cannot serve on 127\.0\.0\.1:\d+.*web\.port"):
            runtime.start()


def test_annotated_speech_plays_its_gesture_and_a_bad_one_is_refused_at_once(
    robot: Robot, robot_time: HeldTime, http: httpx.Client
) -> None:
    runtime, _ = robot
    r = http.post("/api/speak", json={"text": "Hi ^start(moonwalk) there"})
    assert r.status_code == 400
    assert "unknown animation 'moonwalk'" in r.json()["reason"]
    assert not runtime.speaking
    r = http.post("/api/speak", json={"text": "Hello ^start(nod) there, my good friend"})
    assert r.status_code == 202
    assert robot_time.until(lambda: runtime.engine.state().move == "nod")


def test_the_camera_view_says_there_is_no_camera(http: httpx.Client) -> None:
    r = http.get("/api/vision/frame.jpg")
    assert r.status_code == 409
    assert r.json()["reason"] == "no camera (vision.source: none): docs/attention.md"
    state = http.get("/api/state").json()
    assert state["attention"] is None
