"""Values past any sane bound are refused in one line naming the key (issue 30, Minor): the
loop's rate, a blank or padded web token."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from anima.config import MotionConfig, WebConfig, load_config
from anima.errors import ConfigError

pytestmark = pytest.mark.fast


@pytest.mark.parametrize("text", ["1e-7", "0.5", "9.99", "1001"])
def test_the_loop_rate_is_bounded(tmp_path: Path, text: str) -> None:
    """``motion.rate_hz: 1e-7`` was accepted: a first tick in four months."""
    path = tmp_path / "anima.yaml"
    path.write_text(f"motion:\n  rate_hz: {text}\n")
    with pytest.raises(ConfigError, match=r"anima.yaml:2: motion.rate_hz must be") as caught:
        load_config(path, env={})
    assert caught.value.key == "motion.rate_hz"
    if float(text) < 10:
        assert "must be in [10, 1000] Hz" in str(caught.value)


def test_the_loop_rates_bounds_themselves_are_fine() -> None:
    assert MotionConfig(rate_hz=10).rate_hz == 10
    assert MotionConfig(rate_hz=1000).rate_hz == 1000
    with pytest.raises(ConfigError, match=r"environment ANIMA_MOTION__RATE_HZ: motion.rate_hz"):
        load_config(env={"ANIMA_MOTION__RATE_HZ": "1e-7"})


@pytest.mark.parametrize(
    ("token", "message"),
    [
        (" ", "web.token must not be blank, got ' '"),
        ("\t\n", "web.token must not be blank"),
        (" s3cret", "web.token must have no space at its ends"),
        ("s3cret\n", "web.token must have no space at its ends"),
        ("s3\x1bcret", "no control character"),
    ],
)
def test_a_blank_or_padded_token_is_refused(token: str, message: str) -> None:
    """A one-space ``web.token`` off loopback was accepted: a token anyone guesses."""
    with pytest.raises(ConfigError, match=message):
        WebConfig(host="0.0.0.0", token=token)
    with pytest.raises(ConfigError, match=message):
        WebConfig(token=token)  # on loopback too: it is meant as one, and is none


def test_a_blank_token_is_refused_naming_its_line_or_variable(tmp_path: Path) -> None:
    path = tmp_path / "anima.yaml"
    path.write_text("web:\n  host: 0.0.0.0\n  token: ' '\n")
    with pytest.raises(ConfigError, match=r"anima.yaml:3: web\.token must not be blank"):
        load_config(path, env={})
    env = {"ANIMA_WEB__HOST": "0.0.0.0", "ANIMA_WEB__TOKEN": " "}  # blank there is null
    with pytest.raises(ConfigError, match=r"ANIMA_WEB__TOKEN: web\.token is required"):
        load_config(env=env)
    ok = load_config(env={**env, "ANIMA_WEB__TOKEN": "correct horse"})  # spaces inside: fine
    assert ok.web.token == "correct horse"
    assert WebConfig(token="").token == ""  # nothing is no token, as null is, on loopback
    with pytest.raises(ConfigError, match=r"web\.token is required"):
        WebConfig(host="0.0.0.0", token="")


@pytest.mark.parametrize(
    ("variable", "message"),
    [
        ("ANIMA_MQTT__STATE_HZ", "mqtt.state_hz must be in [0.1, 100] Hz, got 1e-300"),
        ("ANIMA_HUMANOID__STATE_HZ", "humanoid.state_hz must be in [0.1, 100] Hz"),
        ("ANIMA_WEB__UPDATES_HZ", "web.updates_hz must be in [0.1, 1000] Hz"),
        ("ANIMA_MCP__STATE_HZ", "mcp.state_hz must be in [0.1, 50] Hz"),
        ("ANIMA_SERVE__STATUS_INTERVAL_S", "serve.status_interval_s must be in [0.1, 86400] s"),
    ],
)
def test_a_rate_whose_period_is_a_wait_has_a_floor(variable: str, message: str) -> None:
    """Rates the threads wait one period of: 1e-300 Hz is a period past any wait (the
    humanoid's state reader died of OverflowError), 1e-300 s a log flood."""
    with pytest.raises(ConfigError, match=re.escape(f"environment {variable}: {message}")):
        load_config(env={variable: "1e-300"})


def test_the_reachy_drivers_rate_has_a_floor() -> None:
    env = {"ANIMA_DRIVER__TYPE": "reachy_mini", "ANIMA_DRIVER__RATE_HZ": "0.001"}
    with pytest.raises(ConfigError, match=r"driver\.rate_hz must be in \[1, 100\] Hz"):
        load_config(env=env)
