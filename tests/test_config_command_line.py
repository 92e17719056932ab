"""`anima serve`'s flags composed with the file and the environment (issue 30): a flag that
picks a section's type keeps that section's other settings, the port and prefix flags, and the
``ANIMA_*`` variables of other tools, which are not config."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from anima.cli import app, serve
from anima.config import (
    AnimaConfig,
    HumanoidConfig,
    ReachyMiniDriverConfig,
    SerialDriverConfig,
    load_config,
    with_changes,
)
from anima.errors import ConfigError

pytestmark = pytest.mark.fast


@pytest.fixture(autouse=True)
def no_anima_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    """The process's own ANIMA_* (ANIMA_ARTIFACTS in CI, …) stay out of these configs."""
    import os

    for name in [n for n in os.environ if n.startswith("ANIMA_")]:
        monkeypatch.delenv(name)


def configure(config: Path | None = None, **flags: object) -> AnimaConfig:
    """What `anima serve` makes of the file, the environment and these flags."""
    args: dict[str, object] = {"record": None, "driver": None, "port": None, "broker": None}
    args.update(flags)
    return serve.configure(config, mqtt=True, **args)  # type: ignore[arg-type]


def test_humanoid_sim_keeps_its_port_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 30 item 2: ``ANIMA_HUMANOID__SIM_PORT=16666 anima serve --humanoid sim`` served
    on 6666: the section was reset to its defaults when the flag set its type."""
    monkeypatch.setenv("ANIMA_HUMANOID__SIM_PORT", "16666")
    monkeypatch.setenv("ANIMA_HUMANOID__STATE_HZ", "5")
    cfg = configure(humanoid="sim")
    assert cfg.humanoid.type == "sim"
    assert cfg.humanoid.sim_port == 16666
    assert cfg.humanoid.state_hz == 5.0


def test_humanoid_sim_keeps_its_port_from_the_file(tmp_path: Path) -> None:
    path = tmp_path / "anima.yaml"
    path.write_text("humanoid:\n  sim_port: 16666\n")
    assert configure(path, humanoid="sim").humanoid.sim_port == 16666
    path.write_text("humanoid:\n  type: adam\n  address: robot:50051\n  sim_port: 16666\n")
    cfg = configure(path, humanoid="sim")
    assert (cfg.humanoid.type, cfg.humanoid.sim_port) == ("sim", 16666)
    assert configure(path, humanoid="none").humanoid.sim_port == 16666  # kept, unused
    path.write_text("humanoid: adam\n")  # a type's name alone
    assert configure(path, humanoid="sim").humanoid == HumanoidConfig(type="sim")
    # one class for every type: a bad value is refused by its line, not dropped
    path.write_text("humanoid:\n  type: adam\n  sim_port: many\n")
    with pytest.raises(ConfigError, match=r"anima.yaml:3: humanoid\.sim_port must be an integer"):
        configure(path, humanoid="sim")


def test_a_type_flag_keeps_what_fits_and_drops_the_rest_naming_its_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The serial board's ``port`` is a device, the Reachy daemon's a number: through
    ``--driver reachy_mini`` the file's serial port goes, said with its line; the retry
    delays, which both types have, stay."""
    path = tmp_path / "anima.yaml"
    path.write_text(
        "driver:\n  type: serial\n  port: /dev/ttyUSB0\n  baud: 57600\n  reconnect_s: [1, 3]\n"
    )
    cfg = configure(path, driver="reachy_mini")
    assert isinstance(cfg.driver, ReachyMiniDriverConfig)
    assert cfg.driver.port == 8000
    assert cfg.driver.reconnect_s == (1.0, 3.0)
    assert "anima.yaml:3: driver.port '/dev/ttyUSB0' does not fit driver.type reachy_mini" in (
        caplog.text
    )
    assert "anima.yaml:4: driver.baud is not a setting of driver.type reachy_mini" in caplog.text
    # the same type on both sides: nothing is dropped, a bad value is refused by its line
    path.write_text("driver:\n  type: reachy_mini\n  port: 80o1\n")
    with pytest.raises(ConfigError, match=r"anima.yaml:3: driver.port must be an integer"):
        configure(path, driver="reachy_mini")


def test_changing_a_type_in_code_keeps_the_settings_made_that_fit(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """``with_changes``, the mechanism under every flag: a type changed keeps the settings
    made (not the old type's defaults) that the new type takes."""
    cfg = AnimaConfig(humanoid=HumanoidConfig(sim_port=16666, state_hz=5))
    changed = with_changes(cfg, "humanoid", {"type": "sim"})
    assert changed.humanoid == HumanoidConfig(type="sim", sim_port=16666, state_hz=5)
    serial = AnimaConfig(driver=SerialDriverConfig(port="/dev/ttyS1", reconnect_s=(1, 3)))
    reachy = with_changes(serial, "driver", {"type": "reachy_mini"}).driver
    assert reachy == ReachyMiniDriverConfig(reconnect_s=(1.0, 3.0))  # the port does not fit
    assert "driver.port '/dev/ttyS1' does not fit driver.type reachy_mini" in caplog.text
    # the serial defaults are not carried over as settings: the Reachy driver's own stay
    plain = with_changes(
        AnimaConfig(driver=SerialDriverConfig()), "driver", {"type": "reachy_mini"}
    )
    assert plain.driver == ReachyMiniDriverConfig()


def test_the_other_flags_keep_their_sections_other_settings(tmp_path: Path) -> None:
    """--broker, --audio-out, --body, --driver set one setting of their section: the rest
    stays as the file has it."""
    path = tmp_path / "anima.yaml"
    path.write_text(
        "mqtt:\n  prefix: hall1\n  keepalive_s: 12\nspeech:\n  espeak_wpm: 200\n"
        "body:\n  rest_posture: sleep\ndriver:\n  history: 50\n"
    )
    cfg = configure(path, broker="embedded", audio_out="null", body="reachy_mini", driver="sim")
    assert (cfg.mqtt.broker, cfg.mqtt.prefix, cfg.mqtt.keepalive_s) == ("embedded", "hall1", 12)
    assert (cfg.speech.audio_out, cfg.speech.espeak_wpm) == ("null", 200)
    assert (cfg.body.checker_ini, cfg.body.rest_posture) == ("reachy_mini", "sleep")
    assert cfg.driver.history == 50  # type: ignore[union-attr]


# ------------------------------------------------------------------ the port and prefix flags
def test_web_port_and_prefix_flags() -> None:
    cfg = configure(web_port=8181, prefix="hall1")
    assert cfg.web.port == 8181
    assert cfg.mqtt.prefix == "hall1"


def test_the_mqtt_port_flag_is_the_brokers_port_whichever_picks_it(tmp_path: Path) -> None:
    auto = configure(mqtt_port=1884)
    assert auto.mqtt.broker == "auto"
    assert auto.mqtt.candidates == ("localhost:1884",)  # the one there, else started there
    assert auto.mqtt.embedded_port == 1884
    embedded = configure(broker="embedded", mqtt_port=1884)
    assert embedded.mqtt.embedded_port == 1884
    path = tmp_path / "anima.yaml"
    path.write_text("mqtt:\n  broker: broker.lan:1883\n")
    assert configure(path, mqtt_port=8883).mqtt.broker == "broker.lan:8883"
    with pytest.raises(ConfigError, match=r"--mqtt-port 1884 with --broker h:1883"):
        configure(broker="h:1883", mqtt_port=1884)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--web-port", "70000"], "web.port out of range: 70000"),
        (["--prefix", "a/#"], "mqtt.prefix must be a plain topic level, got 'a/#'"),
        (["--mqtt-port", "0"], "--mqtt-port must be in [1, 65535], got 0"),
        (["--broker", "h:1", "--mqtt-port", "2"], "the port is in --broker"),
    ],
)
def test_anima_serve_refuses_a_bad_port_or_prefix_in_one_line(
    args: list[str], message: str
) -> None:
    result = CliRunner().invoke(app, ["serve", *args])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output


# ------------------------------------------------------------------ other tools' variables
def test_other_tools_anima_variables_are_not_config() -> None:
    """Issue 30: ``ANIMA_FLEET_TOKEN`` (anima fleet serve's) and ``ANIMA_REACHY_DAEMON`` (the
    tests' daemon), both documented, made `anima serve` exit 2 ("unknown key fleet_token").
    Config is ``ANIMA_<SECTION>__<KEY>``, or a top-level key's own name (``ANIMA_LOG_LEVEL``,
    ``ANIMA_MOTION`` as YAML); any other ``ANIMA_*`` name belongs to another tool."""
    env = {
        "ANIMA_FLEET_TOKEN": "s3cret",
        "ANIMA_REACHY_DAEMON": "/opt/reachy/bin/reachy-mini-daemon",
        "ANIMA_ARTIFACTS": "/tmp/shots",
        "ANIMA_CONFIG": "anima.yaml",
    }
    assert load_config(env=env) == AnimaConfig()
    cfg = load_config(env={**env, "ANIMA_LOG_LEVEL": "DEBUG", "ANIMA_MOTION": "{rate_hz: 50}"})
    assert (cfg.log_level, cfg.motion.rate_hz) == ("DEBUG", 50.0)
    with pytest.raises(ConfigError, match=r"environment ANIMA_MOTON__RATE_HZ: unknown key moton"):
        load_config(env={"ANIMA_MOTON__RATE_HZ": "50"})  # a section's typo is still refused


def test_anima_config_runs_with_other_tools_variables_set() -> None:
    env = {"ANIMA_FLEET_TOKEN": "s3cret", "ANIMA_REACHY_DAEMON": "/usr/bin/true"}
    result = CliRunner().invoke(app, ["config"], env=env)
    assert result.exit_code == 0, result.output
    assert "fleet_token" not in result.output
