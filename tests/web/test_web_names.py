"""Animation names as people guess them, over REST (issue 30 item 5)."""

from __future__ import annotations

import httpx
import pytest

from anima.frontdoors.web.server import WebFrontDoor
from anima.runtime import Runtime
from anima.testing import eventually

pytestmark = pytest.mark.integration


def test_rest_takes_the_names_people_guess(
    robot: tuple[Runtime, WebFrontDoor], http: httpx.Client
) -> None:
    runtime, _ = robot
    r = http.post("/api/animation", json={"name": "Wave"})
    assert r.status_code == 202, r.text
    assert eventually(lambda: runtime.engine.state().move == "LOOKUP_Waving", timeout=3)
    r = http.post("/api/look_at_target", json={"name": "look at me"})
    assert r.status_code == 202, r.text
    assert eventually(lambda: runtime.behaviour.latched_target == "Posture_LookAtInterviewer")
    r = http.post("/api/animation", json={"name": "wav"})
    assert r.status_code == 400
    assert r.json()["reason"] == "unknown animation 'wav' (did you mean LOOKUP_Waving?)"
