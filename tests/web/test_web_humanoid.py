"""The dashboard's humanoid controls over REST: through AdamClient, refusals with reasons."""

from __future__ import annotations

import httpx
import pytest

from anima.build import build
from anima.config import AnimaConfig, HumanoidConfig, MqttConfig, SpeechConfig, WebConfig
from anima.drivers.sim import SimDriver
from anima.frontdoors.web import WebFrontDoor
from anima.testing import eventually

pytestmark = pytest.mark.integration


def test_mode_motion_and_posture_reach_the_simulated_adam() -> None:
    cfg = AnimaConfig(
        web=WebConfig(port=0),
        mqtt=MqttConfig(enabled=False),
        speech=SpeechConfig(enabled=False),
        humanoid=HumanoidConfig(type="sim", sim_port=0, state_hz=20.0),
    )
    runtime = build(cfg, doors=False, driver=SimDriver())
    door = WebFrontDoor(runtime, cfg.web)
    runtime.attach(door)
    with runtime, httpx.Client(base_url=door.url, timeout=10.0) as http:
        link = runtime.humanoid
        assert link is not None
        assert eventually(lambda: link.summary() is not None, timeout=10.0)
        ranges = http.get("/api/humanoid/ranges").json()["posture"]
        assert ranges["pitch"] == [-0.1, 0.1]
        assert ranges["height"] == [-0.2, 0.0]
        # not allowed now: the robot's own reason comes back
        r = http.post("/api/humanoid/mode", json={"mode": "Walk"})
        assert r.status_code == 409
        assert "Walk" in r.json()["reason"]
        r = http.post("/api/humanoid/mode", json={"mode": "Start"})
        assert r.status_code == 202, r.text
        assert eventually(lambda: getattr(link.summary(), "fsm", None) == "Start", timeout=10.0)
        summary = link.summary()
        assert summary is not None
        assert isinstance(summary.mode_enable_list, tuple)
        r = http.post(
            "/api/humanoid/posture", json={"pitch": 0.5, "roll": 0, "yaw": 0, "height": 0}
        )
        assert r.status_code in (400, 409)  # out of range (or not in Stand): refused either way
        assert http.post("/api/humanoid/posture", json={"pitch": "x"}).status_code == 400
        r = http.post("/api/humanoid/motion", json={})
        assert (r.status_code, r.json()["reason"]) == (400, "missing field 'motion'")
        r = http.post("/api/humanoid/mode", json={"mode": 5})
        assert (r.status_code, r.json()["reason"]) == (
            400,
            "'mode' must be a non-empty string, got 5",
        )
        # its whole state, GetRobotState's fields
        state = http.get("/api/humanoid/state").json()
        assert state["fsm_name"] == "Start"
        assert "Zero" in state["mode_enable_list"]
        assert state["x_vel"] == 0.0
        # walking needs Walk or Run: refused from Start with the robot's reason; numbers only
        r = http.post("/api/humanoid/speed", json={"x": 0.2, "y": 0, "yaw": 0})
        assert r.status_code == 409
        assert "Walk" in r.json()["reason"] or "Run" in r.json()["reason"]
        r = http.post("/api/humanoid/speed", json={"x": True, "y": 0, "yaw": 0})
        assert (r.status_code, r.json()["reason"]) == (400, "'x' must be a number, got true")


def test_without_a_humanoid_the_controls_answer_409() -> None:
    cfg = AnimaConfig(
        web=WebConfig(port=0), mqtt=MqttConfig(enabled=False), speech=SpeechConfig(enabled=False)
    )
    runtime = build(cfg, doors=False, driver=SimDriver())
    door = WebFrontDoor(runtime, cfg.web)
    runtime.attach(door)
    with runtime, httpx.Client(base_url=door.url, timeout=5.0) as http:
        r = http.post("/api/humanoid/mode", json={"mode": "Start"})
        assert r.status_code == 409
        assert "no humanoid" in r.json()["reason"]
        r = http.get("/api/humanoid/state")
        assert r.status_code == 409
        assert "no humanoid" in r.json()["reason"]
