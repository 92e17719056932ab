"""Speech markers take a gesture as every other door does (issue 30: names nobody guesses):
``^start(wave)`` is ``LOOKUP_Waving``, resolved once where the marker is checked, and an
unknown one is refused with the library's "did you mean" — in the speech service, on the
wire (MQTT, REST) and in the agent's plans. Real parts: the shipped animation library, the
behaviour, the speech service (not started: checking a text needs no audio)."""

from __future__ import annotations

import re

import pytest

from anima.agent.actions import ActionRegistry
from anima.agent.builtins import register_builtins
from anima.agent.plan import parse_plan
from anima.animation.library import AnimationLibrary, shipped_folder
from anima.behaviour.controller import Behaviour
from anima.behaviour.speech_gestures import BehaviourGestures
from anima.errors import InvalidCommandError, PlanError
from anima.events import EventHub
from anima.language.markup import Cue, checked
from anima.speech.service import SpeechService
from anima.speech.sinks import NullSink
from anima.testing.harness import make_engine
from anima.testing.tts import ScriptedEngine
from anima.wire.payloads import PayloadError, parse_speak

pytestmark = pytest.mark.fast

GESTURES = ("nod", "shake", "LOOKUP_Waving", "bow")
KNOWN = frozenset(GESTURES).__contains__


def test_a_marker_takes_any_spelling_or_alias_and_carries_the_librarys_name() -> None:
    script = checked(
        "Hi ^start(wave) there ^wait(lookup_waving) and ^run(Nod) bye", KNOWN, GESTURES
    )
    first, second, third = script.segments
    assert first.cues == (Cue("start", 3, "LOOKUP_Waving"),)
    assert first.wait == ("LOOKUP_Waving",)  # the same gesture, however it was written
    assert (second.run, second.wait) == (("nod",), ("nod",))
    assert third.text == "bye"
    assert script.gestures == {"LOOKUP_Waving", "nod"}
    assert checked("^start(nod) hi", KNOWN, GESTURES).gestures == {"nod"}  # exact names as before


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (
            "Hi ^start(wav) there",
            "speech marker ^start(wav) at character 3: unknown animation 'wav' "
            "(did you mean LOOKUP_Waving?)",
        ),
        ("^run(nodd) hi", "speech marker ^run(nodd) at character 0: unknown animation 'nodd' "),
        ("^start(moonwalk) hi", "unknown animation 'moonwalk' (nothing close; did you mean"),
    ],
)
def test_an_unknown_marker_name_is_refused_with_the_librarys_did_you_mean(
    text: str, says: str
) -> None:
    with pytest.raises(InvalidCommandError, match=re.escape(says)):
        checked(text, KNOWN, GESTURES)


@pytest.fixture(scope="module")
def library() -> AnimationLibrary:
    engine, _, _ = make_engine()
    library = AnimationLibrary([shipped_folder()], len(engine.body))
    library.load()
    return library


def test_the_speech_service_plays_the_librarys_name(library: AnimationLibrary) -> None:
    hub = EventHub()
    engine, _, clock = make_engine(events=hub)
    behaviour = Behaviour(engine, library, hub, clock)
    service = SpeechService(
        [ScriptedEngine()],
        NullSink(clock),
        engine,
        hub,
        clock,
        gestures=BehaviourGestures(behaviour, hub),
    )
    script = service.script("Hello ^start(waving) there")
    assert script.segments[0].cues == (Cue("start", 6, "LOOKUP_Waving"),)
    with pytest.raises(InvalidCommandError, match=r"did you mean LOOKUP_Waving"):
        service.script("Hello ^start(waiving) there")


def test_the_wire_and_the_agent_take_an_alias_in_a_marker(library: AnimationLibrary) -> None:
    assert parse_speak("Hi ^start(wave) there", library).text == "Hi ^start(wave) there"
    with pytest.raises((PayloadError, InvalidCommandError), match="did you mean LOOKUP_Waving"):
        parse_speak("Hi ^start(wav) there", library)
    registry = ActionRegistry()
    register_builtins(registry, animations=GESTURES, postures=("LOOKUPPostureDefault",))
    parse_plan(registry, ["say(text='Hi ^start(wave) there')"])
    with pytest.raises(PlanError, match="did you mean LOOKUP_Waving"):
        parse_plan(registry, ["say(text='Hi ^start(wav) there')"])
