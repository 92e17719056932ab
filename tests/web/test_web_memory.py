"""What the robot remembers, over REST with curl's view of it (httpx on 127.0.0.1): listed,
searched, exported, imported, forgotten by id, person or all, every mistake a 4xx with its
reason; the persona; 409 without the voice agent; the token guards it like every route."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from anima.build import build
from anima.config import AgentConfig, AnimaConfig, MqttConfig, SpeechConfig, WebConfig
from anima.config.memory import MemoryConfig
from anima.drivers.sim import SimDriver
from anima.frontdoors.web import WebFrontDoor

pytestmark = pytest.mark.integration


def serve(tmp_path: Path, *, agent: bool, token: str | None = None) -> tuple[object, WebFrontDoor]:
    cfg = AnimaConfig(
        web=WebConfig(port=0, token=token),
        mqtt=MqttConfig(enabled=False),
        speech=SpeechConfig(enabled=False),
        agent=AgentConfig(
            enabled=agent, audio_in="none",
            memory=MemoryConfig(path=str(tmp_path / "memory.sqlite3")),
        ),
    )  # fmt: skip
    runtime = build(cfg, doors=False, driver=SimDriver())
    door = WebFrontDoor(runtime, cfg.web)
    runtime.attach(door)
    return runtime, door


def test_memory_read_exported_imported_and_forgotten(tmp_path: Path) -> None:
    runtime, door = serve(tmp_path, agent=True)
    with runtime, httpx.Client(base_url=door.url, timeout=10.0) as http:  # type: ignore[attr-defined]
        memory = runtime.agent.memory  # type: ignore[attr-defined]
        memory.remember("my name is Ana", "Ana")
        memory.remember("I like jazz")
        listed = http.get("/api/memory").json()
        assert listed["person"] == "Ana"
        assert listed["count"] == 2
        assert [m["what"] for m in listed["memories"]] == ["I like jazz", "my name is Ana"]
        found = http.get("/api/memory", params={"search": "jazz"}).json()["memories"]
        assert [m["what"] for m in found] == ["I like jazz"]
        one = http.get(f"/api/memory/{found[0]['id']}").json()
        assert one["who"] == "Ana"
        assert http.get("/api/memory/999").status_code == 404
        exported = http.get("/api/memory/export").json()
        assert len(exported) == 2
        r = http.post("/api/memory/import", json=[{"what": "the lab closes at six"}])
        assert (r.status_code, r.json()["imported"]) == (200, 1)
        bad = http.post("/api/memory/import", json=[{"what": "ok"}, {"what": ""}])
        assert bad.status_code == 400
        assert "item 1" in bad.json()["reason"]
        json_type = {"Content-Type": "application/json"}
        assert (
            http.post("/api/memory/import", content=b"{nope", headers=json_type).status_code == 400
        )
        assert http.post("/api/memory/import", content=b"[1]").status_code == 415  # not JSON's type
        assert http.get("/api/memory", params={"limit": 0}).status_code == 400
        assert http.delete("/api/memory").status_code == 400  # neither who nor all
        r = http.delete(f"/api/memory/{found[0]['id']}")
        assert r.json()["forgotten"] == 1
        assert memory.store.residue("jazz") == 0
        assert http.delete("/api/memory", params={"who": "Ana"}).json()["forgotten"] == 1
        assert http.delete("/api/memory", params={"all": "true"}).json()["forgotten"] == 1
        assert http.get("/api/memory").json()["count"] == 0
        persona = http.get("/api/persona").json()
        assert persona["source"] == "the default persona"
        assert "friendly social robot" in persona["instructions"]


def test_without_the_agent_memory_is_409_and_the_token_guards_it(tmp_path: Path) -> None:
    runtime, door = serve(tmp_path, agent=False, token="s3cret")
    with runtime, httpx.Client(base_url=door.url, timeout=10.0) as http:  # type: ignore[attr-defined]
        assert http.get("/api/memory").status_code == 401
        auth = {"Authorization": "Bearer s3cret"}
        r = http.get("/api/memory", headers=auth)
        assert r.status_code == 409
        assert "anima serve --agent" in r.json()["reason"]
        assert http.get("/api/persona", headers=auth).status_code == 409
