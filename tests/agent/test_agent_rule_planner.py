"""The offline rule planner: phrases of the registry → validated action strings."""

from __future__ import annotations

import pytest

from anima.agent.actions import ActionRegistry
from anima.agent.executor import Executor
from anima.agent.plan import parse_plan
from anima.agent.planners import PLANNERS, PlannerReply, create_planner
from anima.agent.planners.rules import UNKNOWN, RulePlanner
from anima.agent.vocabulary import builtin_registry
from anima.choices import REALTIME_BRAINS
from anima.config import PLANNER_TYPES, AgentConfig
from anima.errors import ConfigError
from anima.runtime import Runtime

pytestmark = pytest.mark.fast


class _Robot:
    def speed(self, x: float, y: float, yaw: float, *, continuous: bool = False) -> str:
        return "ok"

    def stand_motion(self, motion: str) -> str:
        return "ok"

    def posture(self, pitch: float, roll: float, yaw: float, height: float) -> str:
        return "ok"

    def set_mode(self, mode: str) -> str:
        return "ok"


@pytest.fixture
def planner() -> RulePlanner:
    return RulePlanner(builtin_registry(humanoid=_Robot()))


@pytest.mark.parametrize(
    ("heard", "actions"),
    [
        ("wave", ["play_animation(name='LOOKUP_Waving')"]),
        ("Hey robot, wave!", ["play_animation(name='LOOKUP_Waving')"]),
        ("nod", ["play_animation(name='nod')"]),
        ("please nod your head", ["play_animation(name='nod')"]),
        ("shake your head", ["play_animation(name='shake')"]),
        ("can you shake hands please", ["play_animation(name='shakehand_TwoArgGesture')"]),
        ("look at me", ["look_at_target(name='Posture_LookAtInterviewer')"]),
        ("look left", ["look_at(x=1.0, y=0.6, z=0.0)"]),
        ("say hello", ["say(text='Hello!')"]),
        ("say the weather is nice", ["say(text='the weather is nice')"]),
        ("say hello and goodbye", ["say(text='hello and goodbye')"]),
        ("say hello and wave", ["say(text='Hello!')", "play_animation(name='LOOKUP_Waving')"]),
        (
            "wave, then nod and say good job",
            [
                "play_animation(name='LOOKUP_Waving')",
                "play_animation(name='nod')",
                "say(text='good job')",
            ],
        ),
        ("wait five seconds", ["wait(seconds=5.0)"]),
        ("wait 2.5 seconds", ["wait(seconds=2.5)"]),
        ("stop", ["stop()"]),
        ("that's all", ["finish()"]),
        ("walk forward", ["walk_forward()"]),
        ("walk forward 3 seconds", ["walk_forward(seconds=3.0)"]),
        ("walk back", ["walk_backward()"]),
        ("turn left", ["turn(direction='left')"]),
        ("stop walking", ["stop_walking()"]),
        ("start walking", ["set_gait(mode='Walk')"]),
        ("salute", ['stand_motion(name="Gentleman\'s Salute")']),
    ],
)
def test_recognized_commands_become_actions(
    planner: RulePlanner, heard: str, actions: list[str]
) -> None:
    reply = planner.plan(heard)
    assert reply.actions == actions
    assert reply.response == ""
    parse_plan(planner.registry, reply.actions)  # always valid


@pytest.mark.parametrize(
    "heard", ["", "   ", "say", "wait forever", "blorp zzk", "walk " * 100, "um uh", "the of a"]
)
def test_anything_else_is_not_understood_and_nothing_moves(
    planner: RulePlanner, heard: str
) -> None:
    reply = planner.plan(heard)
    # heard (or typed) well, not understood: never "didn't catch that" (issue 30 item 5), but
    # what was not understood, and what the robot can do
    assert reply.response.startswith(UNKNOWN + " ")
    assert UNKNOWN == "Sorry, I didn't understand"
    assert "catch" not in reply.response
    assert reply.response.endswith(". I can wave, nod, shake my head, look around and say things.")
    assert reply.actions == []


@pytest.mark.parametrize(
    ("heard", "named"),
    [
        ("do a backflip", "I can't do a backflip."),
        ("wave and fly", "I can't fly."),  # no part is done when one part can't be
        ("make me a coffee", "I can't make you a coffee."),
    ],
)
def test_what_it_has_no_action_for_is_refused_by_name(
    planner: RulePlanner, heard: str, named: str
) -> None:
    reply = planner.plan(heard)
    assert reply.actions == []
    assert named in reply.response
    assert "I can wave, nod" in reply.response  # and what it can do, from the registry


def test_questions_are_answered_from_the_config_and_the_registry() -> None:
    reg = builtin_registry()
    planner = create_planner(AgentConfig(name="Nadine"), reg)
    assert planner.plan("what's your name?") == PlannerReply(response="My name is Nadine.")
    can = planner.plan("what can you do").response
    assert can.startswith("I can wave, nod, shake my head, look around, say things")
    assert "walk" not in can  # no humanoid in this registry


@pytest.mark.parametrize("name", ["", "   ", "x" * 61])
def test_agent_name_is_refused_when_it_is_no_name(name: str) -> None:
    with pytest.raises(ConfigError, match=r"agent\.name must be 1 to 60 characters"):
        AgentConfig(name=name)


def test_phrases_follow_the_registry() -> None:
    reg = builtin_registry(animations=["nod"])
    planner = RulePlanner(reg)
    assert planner.plan("wave").actions == []  # no LOOKUP_Waving in this library
    assert "walk forward" not in reg.grammar_phrases()  # no humanoid
    assert planner.plan("walk forward").actions == []
    assert planner.plan("walk forward").response.startswith("Sorry, I can't walk forward.")

    @reg.action(phrases=("dance", "do a little dance", "dance for {seconds} seconds"))
    def dance(ctx: object, seconds: float = 2.0) -> bool:
        """Dance."""
        return True

    # the same planner sees the new action: the registry is compiled again when it changes
    assert planner.plan("do a little dance").actions == ["dance()"]
    assert planner.plan("dance for ten seconds").actions == ["dance(seconds=10.0)"]
    assert planner.plan("could you dance for a bit").actions == ["dance(seconds=1.0)"]


def test_a_custom_wake_phrase_is_ignored_in_front() -> None:
    planner = RulePlanner(builtin_registry(), wake_phrase="hello nadine")
    assert planner.plan("Hello Nadine, nod").actions == ["play_animation(name='nod')"]


def test_a_request_not_understood_is_quoted_back_when_short(planner: RulePlanner) -> None:
    assert planner.plan("blorp zzk").response.startswith("Sorry, I didn't understand “blorp zzk”.")
    assert planner.plan("walk " * 100).response.startswith("Sorry, I didn't understand that.")


def test_again_repeats_the_last_plan_until_reset(planner: RulePlanner) -> None:
    assert planner.plan("again").response.startswith(UNKNOWN)  # nothing to repeat yet
    assert planner.plan("nod twice").actions == ["play_animation(name='nod')"] * 2
    assert planner.plan("stop").actions == ["stop()"]  # a stop is not what "again" repeats
    assert planner.plan("do it again").actions == ["play_animation(name='nod')"] * 2
    planner.reset()  # finish() ended the task
    assert planner.plan("one more time").actions == []


def test_feedback_reset_interrupt_close_are_harmless(planner: RulePlanner) -> None:
    assert planner.feedback("Robot feedback: Execution ['stop()'] completed") is None
    planner.reset()
    planner.interrupt()
    planner.close()


def test_the_planner_registry_builds_from_config() -> None:
    reg = builtin_registry()
    assert sorted(PLANNERS.names) == ["dify", "openai", "rules"]
    # the config's names, made by the registry; but the realtime brain, which is no text
    # planner: it replaces the conversation (anima.agent.realtime, made by anima.build)
    assert set(PLANNERS.names) == set(PLANNER_TYPES) - REALTIME_BRAINS
    planner = create_planner(AgentConfig(), reg)
    assert planner.name == "rules"
    with pytest.raises(ConfigError, match=r"agent\.planner\.type must be one of"):
        AgentConfig(planner="magic")


def test_heard_words_to_moving_robot(runtime: Runtime, registry: ActionRegistry) -> None:
    planner = RulePlanner(registry)
    reply = planner.plan("please nod and then say thank you")
    result = Executor(runtime).run(parse_plan(registry, reply.actions), timeout=15)
    assert result.outcome == "succeeded"
    assert [s.text for s in result.steps] == [
        "play_animation(name='nod')",
        "say(text='thank you')",
    ]
