"""The rule planner on the robot's memory: names, "remember that …", questions about what was
told, forgetting, and the ``remember``/``forget`` actions validated as any plan's steps; what
was told survives a new planner on the same file (a restart)."""

from __future__ import annotations

from pathlib import Path

import pytest

from anima.agent.context import ActionContext
from anima.agent.plan import PlanError, parse_plan
from anima.agent.planners.rules import RulePlanner
from anima.agent.remembering import Remembering, register_memory, second_person
from anima.agent.vocabulary import builtin_registry
from anima.memory.store import MemoryStore

pytestmark = pytest.mark.fast


class Session:
    """One conversation: a rule planner on a memory file, each plan run as the executor
    runs it (validated, then each step's action called with a context)."""

    def __init__(self, path: Path) -> None:
        self.store = MemoryStore(path)
        self.memory = Remembering(self.store)
        self.registry = builtin_registry()
        register_memory(self.registry, self.memory)
        self.planner = RulePlanner(self.registry)
        self.planner.remember_with(self.memory)
        self.results: list[object] = []

    def say(self, text: str) -> str:
        reply = self.planner.plan(text)
        plan = parse_plan(self.registry, reply.actions)
        ctx = ActionContext(robot=None)  # type: ignore[arg-type]
        for step in plan.steps:
            self.results.append(step.action.fn(ctx, *step.args, **step.kwargs))
        return reply.response

    def close(self) -> None:
        self.store.close()


@pytest.fixture
def session(tmp_path: Path) -> Session:
    s = Session(tmp_path / "memory.sqlite3")
    yield s  # type: ignore[misc]
    s.close()


def test_a_name_given_is_the_person_talking(session: Session) -> None:
    assert session.say("What's my name?") == "I don't know your name yet. What is it?"
    assert session.say("Hey robot, my name is Ana.") == "Nice to meet you, Ana."
    assert session.memory.person == "Ana"
    assert session.say("what's my name") == "Your name is Ana."
    assert session.say("I'm Bob.") == "Nice to meet you, Bob."
    assert session.say("Do you know who I am?") == "Your name is Bob."
    # "I'm tired" is no name (a name is a capitalised word, as Whisper writes names)
    assert session.memory.person == "Bob"
    session.say("I'm tired")
    assert session.memory.person == "Bob"


def test_facts_told_are_said_back_in_the_robots_words(session: Session) -> None:
    session.say("my name is Ana")
    assert session.say("Remember that I like jazz.") == "OK, I'll remember that you like jazz."
    session.say("please remember my favourite colour is blue")
    assert session.say("What do I like?") == "You like jazz."
    assert session.say("what is my favourite colour") == "Your favourite colour is blue."
    session.say("my favourite colour is green")  # said plainly: kept too, and it replaces
    assert session.say("what's my favourite colour?") == "Your favourite colour is green."
    assert session.store.residue("colour is blue") == 2  # replaced, not forgotten
    about = session.say("what do you know about me")
    assert "Your favourite colour is green." in about
    assert "You like jazz." in about


def test_forgetting_by_request_leaves_no_residue(session: Session) -> None:
    session.say("my name is Ana")
    session.say("remember that I like jazz")
    session.say("remember that my dog is called Rex")
    assert session.say("forget what I told you") == "OK, I've forgotten it."
    assert session.store.residue("Rex") == 0
    assert session.say("forget that I like jazz") == "OK, I've forgotten that."
    assert session.store.residue("jazz") == 0
    session.say("remember that I live in Paris")
    assert session.say("forget everything about me") == (
        "OK, Ana, I've forgotten everything about you."
    )
    assert session.store.count() == 0
    assert session.store.residue("Paris") == 0
    assert session.store.residue("Ana") == 0
    assert session.memory.person is None
    assert session.say("what's my name") == "I don't know your name yet. What is it?"


def test_forgetting_everything_needs_a_name(session: Session) -> None:
    session.say("remember that the keys are on the table")
    assert "tell me your name first" in session.say("forget everything about me")
    assert session.store.count() == 1


def test_what_was_told_survives_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite3"
    first = Session(path)
    first.say("my name is Ana")
    first.say("remember that I play the cello")
    first.close()
    second = Session(path)  # a new process: nobody named yet
    assert second.say("what's my name") == "I don't know your name yet. What is it?"
    second.say("my name is Ana")
    assert second.say("what do I play") == "You play the cello."
    assert second.store.count() == 2  # the name told again is kept once
    second.close()


def test_other_requests_go_to_the_other_rules(session: Session) -> None:
    reply = session.planner.plan("wave")
    assert reply.actions == ["play_animation(name='LOOKUP_Waving')"]
    assert session.planner.plan("never mind").actions == ["stop()"]
    assert session.planner.plan("what is your name").response == "My name is Anima."
    # a question about the person with nothing told is answered so, not refused
    assert "don't know that yet" in session.say("what's my favourite colour")
    assert session.store.count() == 0


def test_the_actions_validate_their_arguments(session: Session) -> None:
    with pytest.raises(PlanError):
        parse_plan(session.registry, ["remember(what=3)"])
    with pytest.raises(PlanError):
        parse_plan(session.registry, ["forget(everything='yes')"])
    ctx = ActionContext(robot=None)  # type: ignore[arg-type]
    step = parse_plan(session.registry, ["remember(what='   ')"]).steps[0]
    ok, message = step.action.fn(ctx, *step.args, **step.kwargs)  # type: ignore[misc]
    assert not ok
    assert "nothing to remember" in message
    step = parse_plan(session.registry, ["forget(about='unicorns')"]).steps[0]
    ok, message = step.action.fn(ctx, *step.args, **step.kwargs)  # type: ignore[misc]
    assert not ok
    assert "nothing to forget" in message


@pytest.mark.parametrize(
    ("said", "back"),
    [
        ("I like jazz", "you like jazz"),
        ("my sister is called Eva", "your sister is called Eva"),
        ("I'm a teacher", "you're a teacher"),
        ("I was born in May.", "you were born in May."),
    ],
)
def test_said_back_in_the_second_person(said: str, back: str) -> None:
    assert second_person(said) == back


def test_the_conversation_forgets_who_is_talking_when_it_ends(tmp_path: Path) -> None:
    # fake time: 20 s of nobody speaking (agent.engaged_s) end the conversation; the next
    # person is nobody until they say their name, and a known one is welcomed back
    import dataclasses

    from anima import commands as cmd
    from anima.config.memory import MemoryConfig
    from anima.events import ConversationChanged, PlanFinished, SpeechStarted
    from anima.testing import FakeTimeRobot

    from .conftest import agent_config

    cfg = agent_config()
    memory_cfg = MemoryConfig(path=str(tmp_path / "memory.sqlite3"))
    cfg = dataclasses.replace(cfg, agent=dataclasses.replace(cfg.agent, memory=memory_cfg))
    with FakeTimeRobot(cfg, history=5000) as robot:
        conversation = robot.runtime.agent
        memory = conversation.memory  # type: ignore[union-attr]
        assert memory is not None

        def said(text: str) -> str:
            # the plan (or the reply) waited for in real time before fake time runs on: the
            # agent's and the plan's threads do real work (planning, the memory file) before
            # their first wait on the clock, which does not count them until then; ticks raced
            # ahead of them (fake time ran 8 s before the plan began, and the reply missed its
            # 10 s: 2-5 runs in 10)
            mark = robot.recorder.mark()
            robot.execute(cmd.Ask(text=text))
            robot.settle_for(lambda e: isinstance(e, PlanFinished | SpeechStarted), since=mark)
            started = robot.advance_until(SpeechStarted, within=10, since=mark)
            return started.text

        assert said("my name is Ana") == "Nice to meet you, Ana."
        # the reply's words go out as the plan starts; its remember step names the person on
        # the plan's thread meanwhile (the reply came first in a loaded fresh clone's run)
        robot.settle(lambda: memory.person == "Ana")
        robot.advance_until(
            lambda e: isinstance(e, ConversationChanged) and e.state == "idle", within=60
        )
        assert memory.person is None
        assert said("what's my name") == "I don't know your name yet. What is it?"
        assert said("my name is Ana") == "Welcome back, Ana."


def test_a_fact_too_long_to_keep_is_not_promised(session: Session) -> None:
    reply = session.say("remember that " + "very " * 120 + "long")
    assert reply == "Sorry, I can't remember that: tell me in a shorter sentence."
    assert session.store.count() == 0


@pytest.mark.parametrize(
    ("said", "name"),
    [
        ("Call me Ana", "Ana"),
        ("call me later", None),  # "call me" gives a name only capitalised, as Whisper writes one
        ("you can call me Zoë", "Zoë"),
        ("my name is josé", "José"),  # said plainly: any letters, capitalised for saying back
        ("I'm Zoë.", "Zoë"),
        ("I'm tired", None),
        ("my name is Robert'); DROP TABLE memories;--", None),
        ("my name is 😀", None),
    ],
)
def test_which_words_give_a_name(session: Session, said: str, name: str | None) -> None:
    session.say(said)
    assert session.memory.person == name
    assert session.store.count() == (0 if name is None else 1)


def test_a_misheard_fact_is_put_right_and_the_wrong_one_never_recalled(session: Session) -> None:
    session.say("My name is Ana.")
    # what Whisper made of "Remember that I live in Lyon" in an eSpeak voice
    assert session.say("Remember that I live in light on.") == (
        "OK, I'll remember that you live in light on."
    )
    assert session.say("No, I said Lyon.") == "Sorry. I'll remember that you live in Lyon."
    assert session.say("Where do I live?") == "You live in Lyon."
    assert session.say("Do I live in light on?") != "You live in light on."
    kept = session.store.recent(who="Ana", limit=10, superseded=True)
    assert [m.what for m in kept if m.supersedes is not None] == ["I live in Lyon"]
    # the misheard one is linked, not recalled; forgetting the fact removes both
    assert session.say("forget what I told you") == "OK, I've forgotten it."
    assert session.store.residue("light") == 0
    assert session.store.residue("Lyon") == 0


@pytest.mark.parametrize(
    ("told", "said", "kept"),
    [
        ("My middle name is a death.", "No, I said Ade.", "my middle name is Ade"),
        ("Remember that I keep peace.", "I meant bees", "I keep bees"),
        ("My sister is called either.", "no, it's Eva", "my sister is called Eva"),
        ("Remember that I live in light on.", "No, I said I live in Lyon.", "I live in Lyon"),
        ("Remember that I like tea.", "No I said coffee", "I like coffee"),  # no sound in common
    ],
)
def test_how_a_correction_is_read(session: Session, told: str, said: str, kept: str) -> None:
    session.say("my name is Bob")
    session.say(told)
    session.say(said)
    assert session.memory.last_told() is not None
    assert session.memory.last_told().what == kept  # type: ignore[union-attr]
    # the name, the misheard fact (kept, linked, never recalled) and the one put right
    assert session.store.count() == 3
    assert len(session.store.recent(who="Bob")) == 2


def test_what_is_not_a_correction(session: Session) -> None:
    # nothing told yet in this conversation: said so, nothing kept
    assert session.say("No, I said Lyon.") == (
        "Sorry, I wasn't told anything to put right just now."
    )
    assert session.store.count() == 0
    session.say("Remember that I like jazz.")
    # a correction too long to keep is refused before anything is promised
    assert session.say("No, I said " + "x" * 600) == (
        "Sorry, I can't remember that: tell me in a shorter sentence."
    )
    # a longer sentence with "I said" is not a correction of the last fact
    session.say("I said hello to Bob yesterday")
    assert session.memory.last_told().what == "I like jazz"  # type: ignore[union-attr]


def test_the_correction_is_an_action_any_planner_can_call(session: Session) -> None:
    session.say("my name is Ana")
    session.say("remember that I play the chillo")
    plan = parse_plan(session.registry, ["remember(what='I play the cello', correct=True)"])
    ctx = ActionContext(robot=None)  # type: ignore[arg-type]
    ok, said = plan.steps[0].action.fn(ctx, *plan.steps[0].args, **plan.steps[0].kwargs)
    assert ok, said
    assert session.say("What instrument do I play?") == "You play the cello."
    assert [m.what for m in session.store.recent(who="Ana")] == [
        "I play the cello",
        "my name is Ana",
    ]


def test_a_fact_keeps_the_words_as_said(session: Session) -> None:
    session.say("My name is Ana.")
    assert session.say("Remember that my sister lives in New York.") == (
        "OK, I'll remember that your sister lives in New York."
    )
    assert session.say("Where does my sister live?") == "Your sister lives in New York."


@pytest.mark.parametrize(
    ("asked", "memory_answers"),
    [
        ("Where did I park?", True),
        ("What did I buy?", True),
        ("Was I born in May?", True),
        ("What's my favourite colour?", True),
        ("How do I turn you off?", False),  # a question, not about what was told
        ("What can I ask you?", False),
    ],
)
def test_a_question_about_what_was_never_told(
    session: Session, asked: str, memory_answers: bool
) -> None:
    session.say("My name is Ana.")
    answer = session.say(asked)
    assert (answer == "I don't know that yet. Tell me, and I'll remember it.") is memory_answers
