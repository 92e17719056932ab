"""The REST API's interactive reference (/docs, Swagger UI; /redoc, ReDoc) without internet."""

from __future__ import annotations

import re

import httpx
import pytest

from anima.frontdoors.web.app import DOCS_ASSETS


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
