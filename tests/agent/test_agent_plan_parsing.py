"""Action strings: literal arguments bound to the signature, everything else refused unrun."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anima.agent.actions import ActionRegistry, ActionResult, action
from anima.agent.context import ActionContext
from anima.agent.plan import parse_plan, parse_step, rejection_feedback, step_from_values
from anima.agent.vocabulary import builtin_registry
from anima.errors import InvalidCommandError, PlanError

pytestmark = pytest.mark.fast

CALLS: list[str] = []


@action
def point(ctx: ActionContext, xyz: tuple[float, float, float], label: str = "") -> ActionResult:
    """Point at a place.

    Args:
        xyz: metres
        label: what is there
    """
    CALLS.append("point")
    return True


@action
def choose(ctx: ActionContext, colour: Literal["red", "green"], count: int = 1) -> ActionResult:
    """Choose a colour."""
    CALLS.append("choose")
    return True


@action
def tag(ctx: ActionContext, names: list[str], *, loud: bool = False) -> ActionResult:
    """Tag names."""
    CALLS.append("tag")
    return True


@pytest.fixture
def registry() -> ActionRegistry:
    CALLS.clear()
    reg = builtin_registry(animations=["nod", "LOOKUP_Waving"], postures=["Posture_LookAtZoom"])
    for a in (point, choose, tag):
        reg.add(a)
    return reg


def test_literal_arguments_bind_to_the_signature(registry: ActionRegistry) -> None:
    plan = parse_plan(
        registry,
        [
            "say('hello')",
            'play_animation(name="nod")',
            "look_at(1, -0.5, +0.25)",
            "wait(2)",
            "stop",
            "point((1, 2, 3), label='door')",
            "point(xyz=[1.5, -2, 0])",
            "choose('green', count=3)",
            "tag(['a', 'b'], loud=True)",
            "  finish()  ",
        ],
    )
    texts = plan.texts
    assert texts[0] == "say(text='hello')"
    assert texts[2] == "look_at(x=1.0, y=-0.5, z=0.25)"  # int → float
    assert texts[3] == "wait(seconds=2.0)"
    assert texts[4] == "stop()"
    assert texts[5] == "point(xyz=(1.0, 2.0, 3.0), label='door')"
    assert texts[6] == "point(xyz=(1.5, -2.0, 0.0))"  # a list where a tuple is typed
    assert texts[7] == "choose(colour='green', count=3)"
    assert texts[8] == "tag(names=['a', 'b'], loud=True)"
    assert plan.steps[8].kwargs == {"loud": True}
    assert plan.steps[5].args == ((1.0, 2.0, 3.0), "door")
    # a canonical text parses back to the same step
    for step in plan.steps:
        assert parse_step(registry, step.text).text == step.text
    assert CALLS == []  # parsing runs nothing


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        ("__import__('os').system('touch pwned')", "must be a plain name, found attribute access"),
        ("play_animation.__globals__", "found attribute access"),
        ("play_animation.__globals__['os']", "found a subscript"),
        ("open('pwned', 'w')", "unknown action 'open'"),
        ("eval('1')", "unknown action 'eval'"),
        ("exec('import os')", "unknown action 'exec'"),
        ("say(open('pwned', 'w'))", "calls are not allowed inside arguments"),
        ("say(say('x'))", "calls are not allowed inside arguments"),
        ("say(str(1))", "calls are not allowed inside arguments"),
        ("say(text)", "names are not allowed as arguments"),
        ("say(__builtins__)", "names are not allowed as arguments"),
        ("say('abc'[0])", "found a subscript"),
        ("say((lambda: 'x')())", "calls are not allowed"),
        ("say(lambda: 'x')", "found a lambda"),
        ("say(*['x'])", "starred arguments"),
        ("say(**{'text': 'x'})", "**arguments are not allowed"),
        ("say('a' + 'b')", "found an expression"),
        ("say(f'{os}')", "found an f-string"),
        ("say(x := 'a')", "found an assignment"),
        ("say({'a': 1})", "found a dict"),
        ("say([c for c in 'ab'])", "found a comprehension"),
        ("say(-'x')", "arguments must be literals"),
        ("say(not True)", "arguments must be literals"),
        ("say('x') or say('y')", "must be one call"),
        ("say('x'); say('y')", "not a call"),
        ("import os", "not a call"),
        ("moonwalk()", "unknown action 'moonwalk'"),
        ("_private()", "unknown action '_private'"),
        ("self.say('x')", "found attribute access"),
        ("say()", "missing a required argument: 'text'"),
        ("say('a', 'b')", "too many positional arguments"),
        ("say(text='a', text='b')", "given twice"),
        ("say(words='x')", "unexpected keyword argument 'words'"),
        ("say(1)", "text must be a string, got int 1"),
        ("say(None)", "text must be str, got None"),
        ("wait('2')", "seconds must be a number"),
        ("wait(True)", "seconds must be a number, got bool True"),
        ("wait(61)", "seconds must be in [0, 60]"),
        ("wait(-1)", "seconds must be in [0, 60]"),
        ("look_at(1e999, 0, 0)", "x must be a finite number"),
        ("play_animation('moonwalk')", "name must be one of 'nod', 'LOOKUP_Waving'"),
        ("look_at_target('nod')", "name must be one of 'Posture_LookAtZoom'"),
        ("choose('blue')", "colour must be one of 'red', 'green'"),
        ("choose('red', count=1.5)", "count must be an integer"),
        ("point((1, 2))", "xyz needs 3 items, got 2"),
        ("point(('a', 2, 3))", "xyz[0] must be a number"),
        ("point(((1,), 2, 3))", "arguments must be literals"),
        ("tag('ab')", "names must be list[str]"),
        ("tag(['a'], True)", "too many positional arguments"),
        ("say('" + "x" * 3000 + "')", "longer than 2000 characters"),
        ("(" * 500 + "1" + ")" * 500, "not a call"),
        ("", "not a call"),
    ],
)
def test_refused_with_a_reason_and_without_side_effects(
    registry: ActionRegistry,
    source: str,
    reason: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(PlanError) as info:
        parse_plan(registry, ["say('first')", source])
    message = str(info.value)
    assert message.startswith("step 2 ")
    assert reason in message
    assert info.value.index == 1
    assert info.value.step == source
    assert isinstance(info.value, InvalidCommandError)
    assert os.listdir(tmp_path) == []  # nothing written, nothing run
    assert CALLS == []


def test_a_plan_is_rejected_as_a_whole(registry: ActionRegistry) -> None:
    with pytest.raises(PlanError, match=r"step 3 'dance\(\)': unknown action"):
        parse_plan(registry, ["say('a')", "play_animation('nod')", "dance()", "wait(1)"])
    with pytest.raises(PlanError, match="at most 50"):
        parse_plan(registry, ["stop()"] * 51)
    with pytest.raises(PlanError, match="an action string is needed"):
        parse_plan(registry, [42])  # type: ignore[list-item]


def test_rejection_feedback_goes_back_to_the_planner(registry: ActionRegistry) -> None:
    with pytest.raises(PlanError) as info:
        parse_plan(registry, ["dance()"])
    text = rejection_feedback(info.value)
    assert text.startswith("Robot feedback: plan rejected, nothing was done: step 1 'dance()'")


def test_step_from_values_checks_like_a_parsed_step(registry: ActionRegistry) -> None:
    step = step_from_values(registry["look_at"], {"x": 1, "y": 0, "z": 0.5})
    assert step.text == "look_at(x=1.0, y=0.0, z=0.5)"
    with pytest.raises(PlanError, match="missing argument 'z'"):
        step_from_values(registry["look_at"], {"x": 1, "y": 0})
    with pytest.raises(PlanError, match="unknown argument 'q'"):
        step_from_values(registry["say"], {"text": "x", "q": 1})


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_any_text_parses_or_is_refused_with_plan_error(text: str) -> None:
    reg = builtin_registry()
    with contextlib.suppress(PlanError):
        parse_step(reg, text)


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["say", "wait", "look_at", "play_animation", "open", "__import__"]),
    st.lists(
        st.one_of(
            st.integers(-(10**6), 10**6),
            st.floats(allow_nan=False),
            st.text(max_size=8),
            st.booleans(),
            st.none(),
            st.sampled_from(["os", "x.y", "f()", "[1]", "lambda: 0", "*a"]),
        ),
        max_size=4,
    ),
)
def test_generated_calls_are_either_valid_or_refused(name: str, args: list[object]) -> None:
    reg = builtin_registry()
    rendered = [
        a if isinstance(a, str) and a in ("os", "x.y", "f()", "[1]") else repr(a) for a in args
    ]
    source = f"{name}({', '.join(rendered)})"
    try:
        step = parse_step(reg, source)
    except PlanError:
        return
    assert step.name in ("say", "wait", "look_at", "play_animation")
    assert parse_step(reg, step.text).text == step.text
