"""``anima fleet serve``'s token follows ``web.token``'s rule (issue 30): a blank token, or one
with a space at its ends or a control character, is refused in one line before anything
starts — before, ``--token " "`` served every robot's estop and reset off loopback to anyone
who sent ``?token=%20`` — and an empty one is no token, so the page keeps its Host/Origin guard
(before, ``--token ""`` took the guard away and ``?token=`` passed)."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import httpx
import pytest
from typer.testing import CliRunner

from anima.cli import app
from anima.errors import ConfigError
from anima.fleet import FleetWatcher
from anima.fleet.web import check_exposure, make_app
from anima.frontdoors.mqtt.broker import EmbeddedBroker, free_port
from anima.testing import eventually

pytestmark = pytest.mark.integration

pytest.importorskip("uvicorn")
pytest.importorskip("fastapi")


@pytest.mark.parametrize("host", ["0.0.0.0", "127.0.0.1"])
@pytest.mark.parametrize(
    ("token", "says"),
    [
        (" ", "fleet.token must not be blank, got ' '"),
        ("\t\t", "fleet.token must not be blank"),
        (" s3cret", "no space at its ends and no control character"),
        ("s3cret\n", "no space at its ends and no control character"),
        ("s3\x1bcret", "no space at its ends and no control character"),
    ],
    ids=["space", "tabs", "padded", "newline", "escape"],
)
def test_a_token_web_token_refuses_is_refused(host: str, token: str, says: str) -> None:
    with pytest.raises(ConfigError) as info:
        check_exposure(host, token)
    message = str(info.value)
    assert message.startswith("anima fleet serve: fleet.token must")
    assert says in message
    assert message.endswith("(--token, ANIMA_FLEET_TOKEN)")


def test_good_tokens_and_no_token_on_loopback_stay_valid() -> None:
    check_exposure("0.0.0.0", "s3cret")
    check_exposure("127.0.0.1", None)
    check_exposure("127.0.0.1", "")  # empty: no token, as web.token has it
    with pytest.raises(ConfigError, match="give it a --token"):
        check_exposure("0.0.0.0", "")


def test_the_command_refuses_a_blank_token_before_it_serves() -> None:
    result: list[object] = []

    def run() -> None:  # on a thread: a command that serves (the fault) fails, not hangs
        result.append(
            CliRunner().invoke(
                app,
                ["fleet", "serve", "--broker", "127.0.0.1:1", "--host", "0.0.0.0", "--port", "0"],
                env={"ANIMA_FLEET_TOKEN": " "},
            )
        )

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(10)
    assert not worker.is_alive(), "anima fleet serve started with a blank token"
    (outcome,) = result
    assert outcome.exit_code == 2  # type: ignore[attr-defined]
    assert "fleet.token must not be blank" in outcome.output  # type: ignore[attr-defined]


@pytest.fixture
def page() -> Iterator[str]:
    """``anima fleet serve``'s app given an empty token, on 127.0.0.1 (its base URL)."""
    import uvicorn

    broker = EmbeddedBroker(free_port())
    broker.start()
    watcher = FleetWatcher(broker.address).start()
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            make_app(watcher, token=""), host="127.0.0.1", port=port, log_level="warning"
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        assert eventually(lambda: server.started, timeout=10)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(5)
        watcher.stop()
        broker.stop()


def test_an_empty_token_leaves_the_guard_in_place(page: str) -> None:
    with httpx.Client(base_url=page, timeout=5.0) as http:
        foreign = http.post(
            "/api/fleet/reset", params={"token": ""}, headers={"Origin": "http://evil.example"}
        )
        assert foreign.status_code == 403  # before: through (409, no robot online)
        mine = http.post("/api/fleet/reset", headers={"Origin": page}, json={})
        assert mine.status_code == 409  # through the guard, no token asked: no robot online
