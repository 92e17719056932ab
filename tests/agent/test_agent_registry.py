"""The action registry: signatures → JSON schemas, phrases, constraints, user modules."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Literal

import pytest

from anima.agent.actions import Action, ActionRegistry, ActionResult, action, make_action
from anima.agent.context import ActionContext
from anima.agent.phrases import Phrase
from anima.agent.vocabulary import builtin_registry, load_user_actions
from anima.errors import ActionDefinitionError, ConfigError

pytestmark = pytest.mark.fast


@action(phrases=("spin", Phrase("spin {turns} times"), Phrase("spin fast", speed="fast")))
def spin(
    ctx: ActionContext,
    turns: int = 1,
    speed: Literal["slow", "fast"] = "slow",
    note: str | None = None,
) -> ActionResult:
    """Spin on the spot.

    Turns the whole body around.

    Args:
        turns: how many full turns
        speed: how fast
        note (str): anything to remember
    """
    return True


def test_signature_and_docstring_become_a_tool_schema() -> None:
    assert isinstance(spin, Action)
    assert spin.summary == "Spin on the spot."
    assert spin.usage() == (
        "spin(turns: int = 1, speed: Literal['slow', 'fast'] = 'slow', note: str | None = None)"
    )
    tool = spin.tool()
    assert tool == {
        "type": "function",
        "function": {
            "name": "spin",
            "description": "Spin on the spot.",
            "parameters": {
                "type": "object",
                "properties": {
                    "turns": {
                        "type": "integer",
                        "description": "how many full turns",
                        "default": 1,
                    },
                    "speed": {
                        "type": "string",
                        "enum": ["slow", "fast"],
                        "description": "how fast",
                        "default": "slow",
                    },
                    "note": {"type": ["string", "null"], "description": "anything to remember"},
                },
                "required": [],
                "additionalProperties": False,
            },
        },
    }
    json.dumps(tool)  # plain JSON


def test_builtins_schemas_and_phrases() -> None:
    reg = builtin_registry()
    assert reg.names() == [
        "finish",
        "look_at",
        "look_at_target",
        "play_animation",
        "say",
        "stop",
        "wait",
    ]
    say = reg["say"].tool()["function"]
    assert say["parameters"]["required"] == ["text"]
    assert say["parameters"]["properties"]["text"]["type"] == "string"
    wait = reg["wait"].parameters_schema()["properties"]["seconds"]
    assert (wait["type"], wait["minimum"], wait["maximum"]) == ("number", 0.0, 60.0)
    assert {p["function"]["name"] for p in reg.tools()} == set(reg.names())
    grammar = reg.grammar_phrases()
    for words in ("wave", "nod", "look at me", "say hello", "stop", "that's all"):
        assert words in grammar
    assert not [g for g in grammar if "{" in g]  # slots are not grammar phrases
    wave = next(a for ph, a in reg.phrases() if ph.text == "wave")
    assert wave.name == "play_animation"


def test_constraints_narrow_choices_and_drop_phrases_that_no_longer_fit() -> None:
    reg = builtin_registry(animations=["nod", "shake"], postures=["Posture_LookAtZoom"])
    schema = reg["play_animation"].parameters_schema()["properties"]["name"]
    assert schema["enum"] == ["nod", "shake"]
    texts = {p.text for p in reg["play_animation"].phrases}
    assert "nod" in texts
    assert "shake your head" in texts
    assert "wave" not in texts  # LOOKUP_Waving is not in this library
    assert {p.text for p in reg["look_at_target"].phrases} == {"look at the camera"}


def test_humanoid_actions_only_with_a_humanoid() -> None:
    class Robot:
        def speed(self, x: float, y: float, yaw: float, *, continuous: bool = False) -> str:
            return "ok"

        def stand_motion(self, motion: str) -> str:
            return "ok"

        def posture(self, pitch: float, roll: float, yaw: float, height: float) -> str:
            return "ok"

        def set_mode(self, mode: str) -> str:
            return "ok"

    assert "walk_forward" not in builtin_registry()
    reg = builtin_registry(humanoid=Robot())
    for name in ("walk_forward", "walk_backward", "turn", "stop_walking", "set_gait"):
        assert name in reg
    assert "stand_motion" in reg
    assert "posture" in reg
    motion = reg["stand_motion"].parameters_schema()["properties"]["name"]
    assert "Greeting" in motion["enum"]
    pitch = reg["posture"].parameters_schema()["properties"]["pitch"]
    assert (pitch["minimum"], pitch["maximum"]) == (-0.1, 0.1)
    assert "walk forward" in reg.grammar_phrases()
    assert "stop" in {p.text for p in reg["stop"].phrases}  # stop kept its phrases


def _undocumented(ctx: ActionContext) -> ActionResult:
    return True


def _no_ctx() -> ActionResult:
    """Nothing."""
    return True


def _untyped(ctx: ActionContext, x) -> ActionResult:  # type: ignore[no-untyped-def]
    """Nothing."""
    return True


def _dict_arg(ctx: ActionContext, x: dict[str, int]) -> ActionResult:
    """Nothing."""
    return True


def _varargs(ctx: ActionContext, *xs: int) -> ActionResult:
    """Nothing."""
    return True


def _union(ctx: ActionContext, x: int | str) -> ActionResult:
    """Nothing."""
    return True


def _bad_default(ctx: ActionContext, x: int = "one") -> ActionResult:  # type: ignore[assignment]
    """Nothing."""
    return True


@pytest.mark.parametrize(
    ("fn", "kw", "reason"),
    [
        (_undocumented, {}, "needs a docstring"),
        (_no_ctx, {}, "first parameter must take the ActionContext"),
        (_untyped, {}, "has no annotation"),
        (_dict_arg, {}, "unsupported annotation"),
        (_varargs, {}, "*args and **kwargs"),
        (_union, {}, "only `T | None` unions"),
        (_bad_default, {}, "default x must be an integer"),
        (_no_ctx, {"name": "class"}, "public Python identifier"),
        (_dict_arg, {"name": "_hidden"}, "public Python identifier"),
        (spin.fn, {"choices": {"turns": (1, 2)}, "bounds": {"spin": (0, 1)}}, "no parameter"),
        (spin.fn, {"choices": {"speed": ("x",)}}, "both a Literal annotation and choices="),
        (spin.fn, {"bounds": {"note": (0, 1)}}, "bounds= needs a number type"),
        (spin.fn, {"phrases": [Phrase("spin {laps} times")]}, "'laps'"),
        (spin.fn, {"phrases": [Phrase("spin quickly", speed="quick")]}, "speed must be one of"),
        (spin.fn, {"phrases": [Phrase("spin {turns}", turns=2)]}, "both a slot and an argument"),
    ],
)
def test_bad_definitions_are_refused(fn: object, kw: dict[str, object], reason: str) -> None:
    with pytest.raises(ActionDefinitionError) as info:
        make_action(fn, **{"name": "probe", **kw})  # type: ignore[arg-type]
    assert reason in str(info.value)
    assert isinstance(info.value, ConfigError)


def test_registry_is_explicit() -> None:
    reg = ActionRegistry()
    assert len(reg) == 0  # nothing registered by importing or decorating
    reg.add(spin)
    with pytest.raises(ActionDefinitionError, match="already registered"):
        reg.add(spin)
    reg.add(spin, replace=True)

    @reg.action(phrases=("hop",))
    def hop(ctx: ActionContext, height: float = 0.1) -> ActionResult:
        """Hop."""
        return True

    assert reg.names() == ["hop", "spin"]
    assert reg["hop"].usage() == "hop(height: float = 0.1)"
    assert reg.grammar_phrases() == ["hop", "spin", "spin fast"]


def test_user_actions_come_from_a_module_named_in_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "my_robot_actions.py").write_text(
        textwrap.dedent(
            '''
            from __future__ import annotations

            from typing import TYPE_CHECKING

            from anima.agent import ActionRegistry, ActionResult

            if TYPE_CHECKING:
                from anima.agent import ActionContext


            def register(registry: ActionRegistry) -> None:
                @registry.action(phrases=("dance", "do a dance"))
                def dance(ctx: ActionContext, seconds: float = 3.0) -> ActionResult:
                    """Dance for a while.

                    Args:
                        seconds: how long
                    """
                    return (True, "danced")
            '''
        )
    )
    (tmp_path / "not_actions.py").write_text("x = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    reg = builtin_registry()
    load_user_actions(reg, "my_robot_actions")
    assert reg["dance"].usage() == "dance(seconds: float = 3.0)"
    assert "do a dance" in reg.grammar_phrases()
    with pytest.raises(ActionDefinitionError, match="no register"):
        load_user_actions(reg, "not_actions")
    with pytest.raises(ActionDefinitionError, match="cannot import"):
        load_user_actions(reg, "no_such_module_here")
