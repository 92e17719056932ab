"""Requests as Whisper tiny.en writes them: punctuation between the steps, a misheard word, the
same sounds cut into other words, a word of its prompt after the request — understood when the
rest of the sentence says what was meant, and never turned into an action when it does not.

The transcripts are what Whisper heard for dev requests of benchmarks/conversation (spoken by
eSpeak NG and Piper, clean and in noise); the junk is what it wrote for mumbles and noise, and
requests for things the robot has no action for. The held-out split is never read here.
"""

from __future__ import annotations

import pytest

from anima.agent.actions import ActionRegistry
from anima.agent.plan import parse_plan
from anima.agent.understanding import Understander, understand
from anima.agent.understanding.soundalike import SoundAlikes
from anima.agent.vocabulary import builtin_registry, robot_registry
from anima.build import build
from anima.config import AnimaConfig, MqttConfig
from anima.config.sections import HumanoidConfig
from anima.drivers.sim import SimDriver

pytestmark = pytest.mark.fast

WAVE = "play_animation(name='LOOKUP_Waving')"
NOD = "play_animation(name='nod')"
BOW = "play_animation(name='bow')"
SMILE = "play_animation(name='smile')"
LEFT = "look_at(x=1.0, y=0.6, z=0.0)"
STOP = "stop()"
CAMERA = "look_at_target(name='Posture_LookAtZoom')"
INTRODUCE = "say(text='Hello! I am a robot. Nice to meet you.')"


@pytest.fixture(scope="module")
def registry() -> ActionRegistry:
    """The registry `anima serve --agent --humanoid sim` gives (a runtime never started: its
    constructor touches nothing), with the shipped animation library."""
    config = AnimaConfig(mqtt=MqttConfig(enabled=False), humanoid=HumanoidConfig(type="sim"))
    runtime = build(config, doors=False, driver=SimDriver())
    runtime.library.load()
    return robot_registry(runtime)


def plan(text: str, registry: ActionRegistry) -> list[str]:
    understood = understand(text, registry)
    assert understood.kind == "act", (text, understood)
    parse_plan(registry, understood.actions)  # every step valid as it stands
    return understood.actions


# ------------------------------------------------------------------ punctuation and steps
@pytest.mark.parametrize(
    ("heard", "expected"),
    [
        ("Look to the left and then nod,", [LEFT, NOD]),  # a trailing comma
        ("Look to the left, then nod.", [LEFT, NOD]),
        ("Look to the left. Then nod.", [LEFT, NOD]),
        ("nod, wait to second and wave.", [NOD, "wait(seconds=2.0)", WAVE]),
        ("Nod to times.", [NOD, NOD]),  # "to" before times or seconds is a two
        ("Smile, and then wave!", [SMILE, WAVE]),
    ],
)
def test_steps_are_cut_at_punctuation_and_joining_words(
    heard: str, expected: list[str], registry: ActionRegistry
) -> None:
    assert plan(heard, registry) == expected


def test_to_is_a_two_only_before_a_unit(registry: ActionRegistry) -> None:
    assert plan("turn to the left", registry) == ["turn(direction='left')"]
    assert understand("walk to the door", registry).kind == "refuse"


# ------------------------------------------------------------------ stop and its object
@pytest.mark.parametrize("heard", ["Okay, stop, nod.", "Cancel, nod.", "Stop, wave."])
def test_a_word_after_stop_and_a_comma_is_what_was_stopped(
    heard: str, registry: ActionRegistry
) -> None:
    """ "stop that", "cancel that": Whisper, biased by its prompt, writes "that" as a word of
    the vocabulary ("nod"); a stop is never the wrong thing to do, a nod after it is."""
    assert plan(heard, registry) == [STOP]


def test_a_step_joined_to_stop_by_a_word_still_runs(registry: ActionRegistry) -> None:
    assert plan("stop, and then nod", registry) == [STOP, NOD]
    assert plan("walk forward for two seconds, then stop", registry)[-1] == STOP


@pytest.mark.parametrize("heard", ["That's it, thanks.", "That will do.", "You can stop now."])
def test_what_people_say_to_end_a_gesture_is_a_stop(heard: str, registry: ActionRegistry) -> None:
    assert plan(heard, registry) == [STOP]


# ------------------------------------------------------------------ free text
def test_say_does_not_swallow_the_request_after_it(registry: ActionRegistry) -> None:
    assert plan("say cheese and smile", registry) == ["say(text='cheese')", SMILE]
    assert plan("Say hi and give me an ad.", registry) == ["say(text='Hi!')", NOD]


def test_say_keeps_words_that_start_no_request(registry: ActionRegistry) -> None:
    assert plan("say hello and goodbye", registry) == ["say(text='hello and goodbye')"]
    assert plan("say that I am here and that you know", registry) == [
        "say(text='that i am here and that you know')"
    ]


def test_say_before_a_request_it_cannot_do_is_not_said(registry: ActionRegistry) -> None:
    """Before, "say hi and make me a coffee" said "hi and make me a coffee"."""
    understood = understand("say hi and make me a coffee", registry)
    assert understood.kind == "refuse"
    assert "coffee" in understood.response


# ------------------------------------------------------------------ sound-alikes
@pytest.mark.parametrize(
    ("heard", "expected"),
    [
        ("Can you take a blow?", [BOW]),
        ("Give me an ad.", [NOD]),  # the same sounds, cut into other words
        ("Interuse yourself.", [INTRODUCE]),
        ("Look out of the camera.", [CAMERA]),
        ("Look out to the camera.", [CAMERA]),
        ("Smile and then take a blow.", [SMILE, BOW]),
    ],
)
def test_a_misheard_phrase_is_understood_when_the_sentence_supports_it(
    heard: str, expected: list[str], registry: ActionRegistry
) -> None:
    assert plan(heard, registry) == expected
    assert "sounds like" in understand(heard, registry).why


def test_the_words_as_heard_win_over_a_sound_alike(registry: ActionRegistry) -> None:
    assert understand("take a bow", registry).why == "phrase 'take a bow'"
    assert plan("give me a smile", registry) == [SMILE]


@pytest.mark.parametrize(
    "heard",
    [
        "Give me a hug.",  # 70 against "give me a nod"
        "Give me a hand.",  # 86, but three letters differ in a short command
        "Give me a kiss.",
        "Do a dance.",
        "Make me a coffee.",
        "Don't take a blow.",  # turned around: never acted on
        "Bowl.",  # one word alone is never guessed
        "Blow.",
        "Look out the window.",
        "Take a picture.",
        "What are we to do?",
        "You fetch the applause of waters.",
        "I'm the hot.",
        "Thank you very much.",
        "The odd white man smile.",
        "And you've worn.",
        "Come your way, Mat me.",
    ],
)
def test_junk_and_requests_it_cannot_do_never_become_actions(
    heard: str, registry: ActionRegistry
) -> None:
    assert understand(heard, registry).kind != "act", heard


def test_two_calls_that_sound_alike_are_a_guess_not_taken() -> None:
    reg = builtin_registry(animations=["bow"])

    @reg.action(phrases=("take a blow", "take a bough"))
    def blow_out(ctx: object) -> bool:
        """Blow out the candles."""
        return True

    @reg.action(phrases=("take a blot",))
    def blot(ctx: object) -> bool:
        """Blot the ink."""
        return True

    sounds = SoundAlikes(reg)
    assert sounds.find(["take", "a", "blow"]) is not None  # its own phrase, letter for letter
    # "take a blou": as near "take a blow" (blow_out) as "take a blot" (blot): not taken
    assert sounds.find(["take", "a", "blou"]) is None
    assert understand("take a blou", reg).kind != "act"


def test_a_pause_has_no_audience(registry: ActionRegistry) -> None:
    """ "could you wave at me" heard as "could you wait at me" waited a second."""
    assert understand("Could you wait at me?", registry).kind != "act"
    assert plan("wait a second", registry) == ["wait(seconds=1.0)"]
    assert plan("wave at me", registry) == [WAVE]


def test_the_understander_compiles_the_sound_alikes_once(registry: ActionRegistry) -> None:
    understander = Understander(registry)
    assert understander.understand("Can you take a blow?").actions == [BOW]
    assert understander.understand("Can you take a blow?").actions == [BOW]


# ------------------------------------------------------------------ what the decoder adds
def test_a_clause_said_again_after_a_comma_is_done_once(registry: ActionRegistry) -> None:
    """Whisper's decoder starting over: "look down, look down" looked down twice."""
    assert plan("Look down, look down.", registry) == ["look_at(x=1.0, y=0.0, z=-0.4)"]
    assert plan("look left, then look left", registry) == [LEFT, LEFT]  # joined: said twice


def test_the_prompt_run_on_after_the_request_is_dropped(registry: ActionRegistry) -> None:
    """ "let's shake hands" heard as "Let's shake hands, look up, lo": the decoder went on
    through its prompt ("…, shake hands, look up, look down.") until its budget cut a word."""
    assert plan("Let's shake hands, look up, lo", registry) == [
        "play_animation(name='shakehand_TwoArgGesture')"
    ]


def test_phrases_of_the_prompt_said_on_purpose_stay_steps(registry: ActionRegistry) -> None:
    up = "look_at(x=1.0, y=0.0, z=0.5)"
    assert plan("Let's shake hands, look up.", registry)[-1] == up  # no cut word: said
    assert plan("nod, wave", registry) == [NOD, WAVE]


@pytest.mark.parametrize("heard", ["Stop moving clean.", "Okay, stop down.", "Stop the music."])
def test_a_request_that_begins_with_a_stop_is_a_stop(heard: str, registry: ActionRegistry) -> None:
    assert plan(heard, registry) == [STOP]


@pytest.mark.parametrize("heard", ["Don't stop.", "Please do not stop."])
def test_a_stop_turned_around_is_no_stop(heard: str, registry: ActionRegistry) -> None:
    assert understand(heard, registry).kind != "act"


# ------------------------------------------------------------------ a misheard verb
def test_a_misheard_verb_is_read_when_the_rest_makes_one_command(registry: ActionRegistry) -> None:
    assert plan("Work forward for two seconds.", registry) == ["walk_forward(seconds=2.0)"]
    assert "'work' heard for 'walk'" in understand("Work forward for two seconds.", registry).why


@pytest.mark.parametrize(
    "heard",
    [
        "Wake at me.",  # "wave at me" or "walk at me": a guess between two, not taken
        "Smell the roses.",  # "smile the roses" is no command either
        "Bake me a cake.",  # no verb of the robot's is a letter or two from "bake"
        "Walk the dog.",
        "Bling.",  # one word alone is never re-read
        "Can you give me a way?",  # "give" is a word the robot knows: never "gaze me a way"
        "Save alone.",  # free text takes any words: "say alone" would be a guess said aloud
    ],
)
def test_a_verb_is_not_re_read_into_a_guess(heard: str, registry: ActionRegistry) -> None:
    assert understand(heard, registry).kind != "act", heard


@pytest.mark.parametrize(
    ("heard", "expected"),
    [
        ("Blink, twice and smile.", ["play_animation(name='blink')"] * 2 + [SMILE]),
        ("nod, twice, then smile.", [NOD, NOD, SMILE]),
        ("Nod, three times.", [NOD] * 3),
    ],
)
def test_a_count_after_a_comma_is_the_command_before_it(
    heard: str, expected: list[str], registry: ActionRegistry
) -> None:
    """Whisper writes a pause as a comma: "blink, twice and smile" smiled twice."""
    assert plan(heard, registry) == expected


def test_a_stop_is_never_guessed_from_a_misheard_verb(registry: ActionRegistry) -> None:
    """ "nod three times" heard as "Hard 3 times" was read as "halt 3 times"."""
    assert understand("Hard 3 times and then say yes.", registry).kind != "act"


def test_a_known_word_is_never_re_read_as_another_verb(registry: ActionRegistry) -> None:
    """ "nod, wait two seconds, then wave" heard as "nod, wave to second and wave." walked
    for two seconds ("wave to second" re-read as "walk to second")."""
    assert understand("nod, wave to second and wave.", registry).kind != "act"


def test_a_misheard_word_for_look_is_read_as_look(registry: ActionRegistry) -> None:
    assert plan("Peak to the left.", registry) == [LEFT]  # "peek", a word for look


@pytest.mark.parametrize("heard", ["First wave, thin bow.", "First wave, en-bow."])
def test_then_as_whisper_writes_it_joins_steps(heard: str, registry: ActionRegistry) -> None:
    assert plan(heard, registry) == [WAVE, BOW]


@pytest.mark.parametrize("heard", ["Shake your hands three times.", "Can you shake your hand?"])
def test_shake_your_hand_is_whispers_shake_your_head(heard: str, registry: ActionRegistry) -> None:
    """The robot never shakes its own hand: "shake your hands three times" shook hands ×3."""
    assert set(plan(heard, registry)) == {"play_animation(name='shake')"}


@pytest.mark.parametrize(
    "said", ["shake my hand", "let's shake hands", "shake my hand if you agree"]
)
def test_a_handshake_asked_for_stays_one(said: str, registry: ActionRegistry) -> None:
    assert plan(said, registry) == ["play_animation(name='shakehand_TwoArgGesture')"]
