"""``agent.planner``: one section per planner type (issue 15 item 4), and the flat keys of before.

A planner's name alone is that planner with its defaults; a mapping with ``type`` sets its own
settings; another planner's setting is refused by name; the flat ``agent.base_url`` … of the
configs written before still load, moved into the section with a warning that names the new key.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from anima.agent.planners import create_planner
from anima.agent.planners.dify import DifyPlanner
from anima.agent.planners.openai import OpenAIPlanner
from anima.agent.vocabulary import builtin_registry
from anima.choices import PlannerMode
from anima.config import (
    AgentConfig,
    DifyPlannerConfig,
    OpenAIPlannerConfig,
    RulesPlannerConfig,
    load_config,
)
from anima.errors import ConfigError

pytestmark = pytest.mark.fast


def _load(tmp_path: Path, text: str, env: dict[str, str] | None = None) -> AgentConfig:
    path = tmp_path / "anima.yaml"
    path.write_text(text, encoding="utf-8")
    return load_config(path, env=env or {}).agent


def test_the_default_is_the_rules_planner_with_no_settings() -> None:
    assert AgentConfig().planner == RulesPlannerConfig()
    assert load_config(env={}).agent.planner.type == "rules"


def test_a_name_alone_is_that_planner_with_its_defaults(tmp_path: Path) -> None:
    planner = _load(tmp_path, "agent:\n  planner: openai\n").planner
    assert planner == OpenAIPlannerConfig()
    assert planner.base_url == "http://127.0.0.1:11434/v1"  # Ollama's
    assert _load(tmp_path, "agent:\n  planner: dify\n").planner == DifyPlannerConfig()
    from_env = load_config(env={"ANIMA_AGENT__PLANNER": "dify"}).agent.planner
    assert from_env == DifyPlannerConfig()
    # and in Python, the name is that section
    assert AgentConfig(planner="openai").planner == OpenAIPlannerConfig()  # type: ignore[arg-type]


def test_a_section_sets_its_own_settings(tmp_path: Path) -> None:
    text = (
        "agent:\n  planner:\n    type: openai\n    base_url: http://10.0.0.5:8000/v1\n"
        "    model: qwen2.5\n    mode: json\n    stream: false\n"
    )
    planner = _load(tmp_path, text).planner
    assert planner == OpenAIPlannerConfig(
        base_url="http://10.0.0.5:8000/v1", model="qwen2.5", mode=PlannerMode.JSON, stream=False
    )
    env = {"ANIMA_AGENT__PLANNER__TYPE": "dify", "ANIMA_AGENT__PLANNER__USER": "robot-3"}
    assert load_config(env=env).agent.planner == DifyPlannerConfig(user="robot-3")


def test_another_planners_setting_is_refused_by_name(tmp_path: Path) -> None:
    path = tmp_path / "anima.yaml"
    path.write_text("agent:\n  planner:\n    type: dify\n    model: qwen2.5\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_config(path, env={})
    assert str(err.value) == (
        f"{path}:4: agent.planner.model is a setting of agent.planner.type openai, "
        "openai_realtime or gemini_live, not of dify"
    )
    path.write_text("agent:\n  planner: {type: rules, timeout_s: 5}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"timeout_s is a setting of .*openai or dify, not"):
        load_config(path, env={})


def test_an_unknown_planner_names_the_choices(tmp_path: Path) -> None:
    path = tmp_path / "anima.yaml"
    path.write_text("agent:\n  planner: gpt\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"agent\.planner\.type must be one of rules, openai"):
        load_config(path, env={})


def test_the_flat_keys_of_before_move_into_the_section_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    text = (
        "agent:\n  planner: openai\n  base_url: http://10.0.0.5:8000/v1\n  model: qwen2.5\n"
        "  mode: json\n  timeout_s: 9\n"
    )
    with caplog.at_level(logging.WARNING, logger="anima.config.loading"):
        planner = _load(tmp_path, text).planner
    assert planner == OpenAIPlannerConfig(
        base_url="http://10.0.0.5:8000/v1", model="qwen2.5", mode=PlannerMode.JSON, timeout_s=9
    )
    said = [r.getMessage() for r in caplog.records]
    assert f"{tmp_path / 'anima.yaml'}:4: agent.model is now agent.planner.model" in said
    # dify_user was the only renamed one
    dify = _load(tmp_path, "agent:\n  planner: dify\n  dify_user: robot-7\n").planner
    assert dify == DifyPlannerConfig(user="robot-7")
    # from the environment too
    env = {"ANIMA_AGENT__PLANNER": "openai", "ANIMA_AGENT__MODEL": "007"}
    assert load_config(env=env).agent.planner == OpenAIPlannerConfig(model="007")


def test_a_flat_key_the_chosen_planner_has_no_use_for_is_dropped_said_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # the usual old file: the rules planner, with an LLM's settings left in it
    with caplog.at_level(logging.WARNING, logger="anima.config.loading"):
        agent = _load(tmp_path, "agent:\n  model: llama3.2\n  max_tokens: 256\n")
    assert agent.planner == RulesPlannerConfig()
    said = [r.getMessage() for r in caplog.records]
    assert any("agent.model is not a setting of the rules planner: ignored" in m for m in said)


def test_a_flat_key_is_checked_where_it_now_lives(tmp_path: Path) -> None:
    path = tmp_path / "anima.yaml"
    path.write_text("agent:\n  planner: openai\n  max_tokens: 0\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_config(path, env={})
    assert str(err.value).startswith(f"{path}:3: agent.planner.max_tokens must be in [16, 32768]")


def test_each_section_makes_its_planner() -> None:
    reg = builtin_registry()
    openai = create_planner(AgentConfig(planner=OpenAIPlannerConfig(model="m7")), reg)
    dify = create_planner(AgentConfig(planner=DifyPlannerConfig(user="u")), reg)
    try:
        assert isinstance(openai, OpenAIPlanner)
        assert openai.model == "m7"
        assert isinstance(dify, DifyPlanner)
        assert dify.user == "u"
    finally:
        openai.close()
        dify.close()


def test_any_section_of_one_dataclass_per_type_takes_a_name_alone(tmp_path: Path) -> None:
    from anima.config import SerialDriverConfig

    path = tmp_path / "anima.yaml"
    path.write_text("driver: serial\n", encoding="utf-8")
    assert load_config(path, env={}).driver == SerialDriverConfig()
    assert load_config(env={"ANIMA_DRIVER": "serial"}).driver == SerialDriverConfig()
