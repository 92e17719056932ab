"""Configuration: defaults, YAML, ANIMA_SECTION__KEY environment, errors that name the key."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from anima.config import AnimaConfig, MotionConfig, OpenAIPlannerConfig, from_dict, load_config
from anima.errors import AnimaError, ConfigError

pytestmark = pytest.mark.fast


def _yaml(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "anima.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_without_file_or_environment() -> None:
    cfg = load_config(env={})
    assert cfg == AnimaConfig()
    assert cfg.motion.rate_hz == 100.0
    assert cfg.motion.period == pytest.approx(0.01)
    assert cfg.driver.type == "sim"
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.motion.rate_hz = 50.0  # type: ignore[misc]


def test_yaml_values_override_defaults(tmp_path: Path) -> None:
    path = _yaml(
        tmp_path,
        """
motion:
  rate_hz: 50          # an int is fine for a float
  blend_s: 0.3
  breathing:
    enabled: false
  blink:
    interval_s: [1.5, 3]
driver:
  history: 20
log_level: debug
""",
    )
    cfg = load_config(path, env={})
    assert cfg.motion.rate_hz == 50.0
    assert isinstance(cfg.motion.rate_hz, float)
    assert cfg.motion.blend_s == 0.3
    assert cfg.motion.breathing.enabled is False
    assert cfg.motion.breathing.period_s == 5.0  # untouched keys keep their defaults
    assert cfg.motion.blink.interval_s == (1.5, 3.0)
    assert cfg.driver.history == 20
    assert cfg.log_level == "debug"


def test_an_empty_yaml_file_gives_defaults(tmp_path: Path) -> None:
    assert load_config(_yaml(tmp_path, "# nothing yet\n"), env={}) == AnimaConfig()


def test_environment_overrides_the_file(tmp_path: Path) -> None:
    path = _yaml(tmp_path, "motion:\n  rate_hz: 50\n  stop_s: 0.2\n")
    env = {
        "ANIMA_MOTION__RATE_HZ": "200",
        "ANIMA_MOTION__BREATHING__PERIOD_S": "3.5",
        "ANIMA_MOTION__BLINK__INTERVAL_S": "[2, 5]",
        "ANIMA_MOTION__BREATHING__ENABLED": "false",
        "ANIMA_BODY__CHECKER_INI": "/robots/head.ini",
        "ANIMA_LOG_LEVEL": "WARNING",
        "ANIMA_CONFIG": "ignored.yaml",  # names the file, is not a key
        "HOME": "/root",  # not ours
    }
    cfg = load_config(path, env=env)
    assert cfg.motion.rate_hz == 200.0
    assert cfg.motion.stop_s == 0.2  # from the file, not overridden
    assert cfg.motion.breathing.period_s == 3.5
    assert cfg.motion.breathing.enabled is False
    assert cfg.motion.blink.interval_s == (2.0, 5.0)
    assert cfg.body.checker_ini == "/robots/head.ini"
    assert cfg.log_level == "WARNING"


def test_the_process_environment_is_read_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANIMA_MOTION__RATE_HZ", "250")
    assert load_config().motion.rate_hz == 250.0
    monkeypatch.setenv("ANIMA_MOTION__RATEHZ", "250")
    with pytest.raises(ConfigError, match=r"motion\.ratehz"):
        load_config()


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("motion:\n  rate: 50\n", "motion.rate"),
        ("motion:\n  breathing:\n    depth: 1\n", "motion.breathing.depth"),
        ("colour: red\n", "colour"),
    ],
)
def test_unknown_keys_in_the_file_are_errors_naming_key_and_file(
    tmp_path: Path, text: str, key: str
) -> None:
    path = _yaml(tmp_path, text)
    with pytest.raises(ConfigError, match="unknown key") as info:
        load_config(path, env={})
    assert key in str(info.value)
    assert str(path) in str(info.value)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("motion:\n  rate_hz: fast\n", "motion.rate_hz"),
        ("motion:\n  rate_hz: true\n", "motion.rate_hz"),  # a bool is not a number here
        ("motion:\n  stats_window: 2.5\n", "motion.stats_window"),
        ("motion:\n  breathing:\n    enabled: maybe\n", "motion.breathing.enabled"),
        ("motion:\n  blink:\n    interval_s: [1, 2, 3]\n", "motion.blink.interval_s"),
        ("motion:\n  blink:\n    interval_s: [1, x]\n", "motion.blink.interval_s[1]"),
        ("body:\n  checker_ini: 5\n", "body.checker_ini"),
        ("motion: 5\n", "motion"),
    ],
)
def test_wrong_types_are_errors_naming_the_key(tmp_path: Path, text: str, key: str) -> None:
    path = _yaml(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path, env={})
    assert key in str(info.value)


@pytest.mark.parametrize(
    ("env", "key"),
    [
        ({"ANIMA_MOTION__RATE": "5"}, "motion.rate"),
        ({"ANIMA_MOTION__RATE_HZ": "fast"}, "motion.rate_hz"),
        ({"ANIMA_DRIVER__HISTORY": "[1]"}, "driver.history"),
        ({"ANIMA_MOTION__BREATHING__ENABLED": "sometimes"}, "motion.breathing.enabled"),
    ],
)
def test_bad_environment_values_are_errors_naming_the_key(env: dict[str, str], key: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(env=env)
    assert key in str(info.value)


def test_an_error_from_the_environment_names_the_variable(tmp_path: Path) -> None:
    path = _yaml(tmp_path, "motion:\n  rate_hz: 50\n")
    with pytest.raises(ConfigError) as info:
        load_config(path, env={"ANIMA_MOTION__RATE_HZ": "fast"})
    assert "ANIMA_MOTION__RATE_HZ" in str(info.value)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("motion:\n  rate_hz: -5\n", "motion.rate_hz"),
        ("motion:\n  rate_hz: 5000\n", "motion.rate_hz"),
        ("motion:\n  blend_s: 0\n", "motion.blend_s"),
        ("motion:\n  breathing:\n    amplitude_rad: 3\n", "motion.breathing.amplitude_rad"),
        ("motion:\n  blink:\n    interval_s: [5, 1]\n", "motion.blink.interval_s"),
        ("driver:\n  history: 0\n", "driver.history"),
        ("serve:\n  shutdown_s: -1\n", "serve.shutdown_s"),
        ("log_level: LOUD\n", "log_level"),
    ],
)
def test_out_of_range_values_are_errors_naming_key_and_file(
    tmp_path: Path, text: str, key: str
) -> None:
    path = _yaml(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path, env={})
    assert key in str(info.value)
    assert str(path) in str(info.value)


def test_unreadable_and_malformed_files_are_config_errors(tmp_path: Path) -> None:
    missing = tmp_path / "missing.yaml"
    with pytest.raises(ConfigError, match=r"missing\.yaml"):
        load_config(missing, env={})
    bad = _yaml(tmp_path, "motion: [unclosed\n")
    with pytest.raises(ConfigError, match="invalid YAML"):
        load_config(bad, env={})
    listed = _yaml(tmp_path, "- 1\n- 2\n")
    with pytest.raises(ConfigError, match="mapping"):
        load_config(listed, env={})
    assert issubclass(ConfigError, AnimaError)


def test_from_dict_builds_one_section() -> None:
    motion = from_dict(MotionConfig, {"rate_hz": 250, "breathing": {"period_s": 4}}, "test")
    assert motion.rate_hz == 250.0
    assert motion.breathing.period_s == 4.0
    with pytest.raises(ConfigError, match=r"test: unknown key speed"):
        from_dict(MotionConfig, {"speed": 1}, "test")


def test_configs_validate_when_built_in_code() -> None:
    with pytest.raises(ConfigError, match="rate_hz"):
        MotionConfig(rate_hz=0)
    with pytest.raises(ConfigError, match="stats_window"):
        MotionConfig(stats_window=4)


def test_settings_that_are_one_of_a_few_names_take_them_from_yaml_and_the_environment(
    tmp_path: Path,
) -> None:
    """Issue 15: such settings are StrEnums (their YAML and JSON unchanged). listen.turn_gate,
    a Literal before, could not be set from a file at all ("unsupported config type")."""
    from anima.choices import EchoCanceller, HumanoidType, PlannerMode, TurnGate

    path = _yaml(
        tmp_path,
        "listen:\n  turn_gate: hold\n  echo: none\nagent:\n  planner:\n    type: openai\n"
        "    mode: json\n",
    )
    cfg = load_config(path, env={"ANIMA_HUMANOID__TYPE": "sim"})
    assert cfg.listen.turn_gate is TurnGate.HOLD
    assert cfg.listen.turn_gate == "hold"
    assert cfg.listen.echo is EchoCanceller.NONE
    assert isinstance(cfg.agent.planner, OpenAIPlannerConfig)
    assert cfg.agent.planner.mode is PlannerMode.JSON
    assert cfg.humanoid.type is HumanoidType.SIM
    assert json.loads(json.dumps({"type": cfg.humanoid.type})) == {"type": "sim"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "listen:\n  turn_gate: maybe\n",
            r"listen\.turn_gate must be one of hold, cues, got 'maybe'",
        ),
        (
            "humanoid:\n  type: robot\n",
            r"humanoid\.type must be one of none, sim, adam, got 'robot'",
        ),
        ("mqtt:\n  embedded_broker: 3\n", r"mqtt\.embedded_broker must be one of auto, mosquitto"),
    ],
)
def test_a_name_not_among_the_choices_is_refused_naming_them(
    tmp_path: Path, text: str, message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        load_config(_yaml(tmp_path, text), env={})


def test_a_choice_given_in_python_is_checked_too() -> None:
    from anima.choices import HumanoidType
    from anima.config import HumanoidConfig

    assert HumanoidConfig(type="adam").type is HumanoidType.ADAM  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"humanoid\.type must be one of none, sim, adam"):
        HumanoidConfig(type="robot")  # type: ignore[arg-type]


def test_a_sections_refusal_carries_its_key_and_points_at_its_line(tmp_path: Path) -> None:
    """Issue 15: the error says which setting, as data (``key``), not only in its words."""
    path = _yaml(tmp_path, "mqtt:\n  prefix: lab\n  keepalive_s: 3\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path, env={})
    assert caught.value.key == "mqtt.keepalive_s"  # the section's own check
    assert str(caught.value).startswith(f"{path}:3: ")
    path = _yaml(tmp_path, "mqtt:\n  prefix: lab\n  embedded_broker: nope\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path, env={})
    assert caught.value.key == "mqtt.embedded_broker"  # the loader's check of the choices
    with pytest.raises(ConfigError) as caught:
        load_config(_yaml(tmp_path, "motion:\n  rate_hz: fast\n"), env={})
    assert caught.value.key == "motion.rate_hz"  # the loader's check of the type


def test_the_command_lines_driver_type_comes_before_the_check(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """``ANIMA_DRIVER__HOST=robot anima serve --driver reachy_mini``: the host is the Reachy
    driver's, kept; the file's sim-only settings are dropped, said so; without the flag the
    host on the simulated robot is refused by name, as before."""
    env = {"ANIMA_DRIVER__HOST": "reachy-mini.local", "ANIMA_DRIVER__PORT": "8001"}
    cfg = load_config(None, env, types={"driver": "reachy_mini"})
    assert cfg.driver.type == "reachy_mini"
    assert cfg.driver.host == "reachy-mini.local"  # type: ignore[union-attr]
    assert cfg.driver.port == 8001  # type: ignore[union-attr]
    with pytest.raises(ConfigError, match=r"driver\.host is a setting of driver\.type reachy_mini"):
        load_config(None, env)
    path = tmp_path / "anima.yaml"
    path.write_text("driver:\n  type: sim\n  record: run.jsonl\n")
    cfg = load_config(path, {}, types={"driver": "reachy_mini"})
    assert cfg.driver.type == "reachy_mini"
    assert "anima.yaml:3: driver.record is not a setting of driver.type reachy_mini" in caplog.text
    assert load_config(path, {}, types={"driver": None}).driver.type == "sim"
