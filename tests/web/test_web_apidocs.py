"""The REST API's interactive reference (/docs, Swagger UI; /redoc, ReDoc) without internet."""

from __future__ import annotations

import re

import httpx
import pytest

from anima.frontdoors.web.app import DOCS_ASSETS
from anima.wire import payloads

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_the_reference_loads_its_scripts_from_the_robot(http: httpx.Client, page: str) -> None:
    html = http.get(page)
    assert html.status_code == 200
    sources = re.findall(r'(?:src|href)="([^"]+)"', html.text)
    scripts = [s for s in sources if s.endswith(".js")]
    assert scripts
    assert all(s.startswith(DOCS_ASSETS + "/") for s in scripts), sources
    assert [s for s in sources if "//" in s] == [], "nothing may come from another host"
    for asset in sources:
        got = http.get(asset)
        assert got.status_code == 200, asset
        assert len(got.content) > 1000, asset
    assert "/openapi.json" in html.text


def test_every_request_body_has_its_field_schema(http: httpx.Client) -> None:
    """Each POST body in /openapi.json names its fields with types and the parsers' bounds
    (before issue 30 the humanoid bodies were `{"type": "object"}` and nothing else)."""
    paths = http.get("/openapi.json").json()["paths"]
    bodies = {
        path: ops["post"]["requestBody"]["content"]["application/json"]["schema"]
        for path, ops in paths.items()
        if "post" in ops and "requestBody" in ops["post"]
    }
    fields = {path: set(schema["properties"]) for path, schema in bodies.items()}
    assert all(fields.values()), fields  # no body is a bare {"type": "object"}
    assert (
        fields.items()
        >= {
            "/api/speak": {"text", "locale"},
            "/api/animation": {"name"},
            "/api/look_at": {"x", "y", "z"},
            "/api/look_at_target": {"name"},
            "/api/humanoid/mode": {"mode"},
            "/api/humanoid/motion": {"motion"},
            "/api/humanoid/posture": {"pitch", "roll", "yaw", "height"},
            "/api/humanoid/speed": {"x", "y", "yaw"},
        }.items()
    )
    for path, schema in bodies.items():
        assert schema["additionalProperties"] is False, path
        assert set(schema["required"]) <= fields[path], path
        for name, field in schema["properties"].items():
            assert field["type"] in ("string", "number"), (path, name)
    speak = bodies["/api/speak"]["properties"]
    assert speak["text"]["maxLength"] == payloads.MAX_TEXT
    assert re.fullmatch(speak["locale"]["pattern"].strip("^$"), "en-US")
    assert bodies["/api/look_at"]["properties"]["x"]["maximum"] == payloads.MAX_COORD
    assert bodies["/api/animation"]["properties"]["name"]["maxLength"] == payloads.MAX_NAME
    posture = bodies["/api/humanoid/posture"]["properties"]
    assert (posture["roll"]["minimum"], posture["roll"]["maximum"]) == (-0.06, 0.06)
    assert (posture["height"]["minimum"], posture["height"]["maximum"]) == (-0.2, 0.0)
    assert "Greeting" in bodies["/api/humanoid/motion"]["properties"]["motion"]["enum"]
    assert "Walk" in bodies["/api/humanoid/mode"]["properties"]["mode"]["enum"]
    # the bodiless commands declare none
    for path in ("/api/estop", "/api/reset", "/api/stop_speak", "/api/stop_animation"):
        assert "requestBody" not in paths[path]["post"], path
