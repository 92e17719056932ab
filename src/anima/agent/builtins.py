"""The built-in actions: speak, gesture, look, wait, stop, finish.

Each one drives the runtime through its typed commands and waits for the event that says it is
done (``end_speak`` for ``say``, ``MoveFinished`` for gestures and postures), or for the plan's
cancel, whichever comes first. Their phrases cover the animations that ship with anima; a
registry built for a library without some of them drops the phrases that no longer fit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from anima import commands as cmd
from anima.agent.actions import ActionRegistry, ActionResult, action
from anima.agent.context import ActionContext, Inbox
from anima.agent.gestures import MAX_REPLY_GESTURES, bounded_gestures, warn_dropped
from anima.agent.phrases import Phrase
from anima.commands import LookAtResult
from anima.events import Event, MoveFinished, SpeechEnded
from anima.language import markup
from anima.language.names import Names

REACH_M = (-10.0, 10.0)  # look_at coordinates: a room, in metres


@action(
    phrases=(
        Phrase("say hello", text="Hello!"),
        Phrase("say hi", text="Hi!"),
        Phrase("say goodbye", text="Goodbye!"),
        Phrase("introduce yourself", text="Hello! I am a robot. Nice to meet you."),
        Phrase("say {text}"),
        Phrase("repeat after me {text}"),
        Phrase("tell them {text}"),
        Phrase("tell everyone {text}"),
        Phrase("tell him {text}"),
        Phrase("tell her {text}"),
    )
)
def say(ctx: ActionContext, text: str) -> ActionResult:
    """Say something out loud; done when the last word has been heard.

    Args:
        text: the words to speak, in the robot's language
    """
    rt = ctx.robot
    text, started, dropped = bounded_gestures(text, MAX_REPLY_GESTURES - ctx.gestures)
    ctx.gestures += started
    if dropped:
        warn_dropped(dropped, text, "say")
    with ctx.events(SpeechEnded.kind) as inbox:
        # refused (no speech, estop, a bad marker): the step fails with the runtime's message
        utterance = rt.execute(cmd.Speak(text=text, locale=ctx.locale)).utterance

        def hush() -> None:
            rt.execute(cmd.StopSpeaking())

        unhook = ctx.on_cancel(hush)
        try:
            ended = inbox.wait(
                lambda e: isinstance(e, SpeechEnded) and e.utterance == utterance,
                ctx.step_timeout_s,
            )
        finally:
            unhook()
        if ended is None and not ctx.canceled:
            hush()
    if ended is None:
        return _unfinished(ctx, "speaking")
    assert isinstance(ended, SpeechEnded)
    if ended.reason != "done":
        return (False, f"speech ended early ({ended.reason})")
    return True


@action(
    phrases=(
        Phrase("wave", name="LOOKUP_Waving"),
        Phrase("wave hello", name="LOOKUP_Waving"),
        Phrase("wave your hand", name="LOOKUP_Waving"),
        Phrase("wave your arm", name="LOOKUP_Waving"),
        Phrase("wave goodbye", name="LOOKUP_Waving"),
        Phrase("wave bye", name="LOOKUP_Waving"),
        Phrase("nod", name="nod"),
        Phrase("nod your head", name="nod"),
        Phrase("shake your head", name="shake"),
        Phrase("shake head", name="shake"),
        Phrase("head shake", name="shake"),
        Phrase("bow", name="bow"),
        Phrase("take a bow", name="bow"),
        Phrase("bow down", name="bow"),
        Phrase("smile", name="smile"),
        Phrase("look happy", name="smile"),
        Phrase("be happy", name="smile"),
        Phrase("put on a smile", name="smile"),
        Phrase("look surprised", name="surprise"),
        Phrase("be surprised", name="surprise"),
        Phrase("act surprised", name="surprise"),
        Phrase("look shocked", name="surprise"),
        Phrase("think", name="think"),
        Phrase("look thoughtful", name="think"),
        Phrase("think about it", name="think"),
        Phrase("think about that", name="think"),
        Phrase("look like you're thinking", name="think"),
        Phrase("show me you're thinking", name="think"),
        Phrase("point right", name="point_right"),
        Phrase("point to the right", name="point_right"),
        Phrase("shake hands", name="shakehand_TwoArgGesture"),
        Phrase("shake my hand", name="shakehand_TwoArgGesture"),
        Phrase("blink", name="blink"),
    )
)
def play_animation(ctx: ActionContext, name: str) -> ActionResult:
    """Play a gesture or facial expression from the animation library; done when it ends.

    Args:
        name: the animation's name, e.g. nod, shake, LOOKUP_Waving, smile
    """
    with ctx.events(MoveFinished.kind) as inbox:
        if ctx.robot.execute(cmd.PlayAnimation(name=name)).idle_layer:
            return True  # a blink or a looping idle animation: no move to wait for
        return _move_done(ctx, inbox, name)


@action(
    phrases=(
        Phrase("look up", x=1.0, y=0.0, z=0.5),
        Phrase("look down", x=1.0, y=0.0, z=-0.4),
        Phrase("look left", x=1.0, y=0.6, z=0.0),
        Phrase("look to the left", x=1.0, y=0.6, z=0.0),
        Phrase("look right", x=1.0, y=-0.6, z=0.0),
        Phrase("look to the right", x=1.0, y=-0.6, z=0.0),
        Phrase("look upward", x=1.0, y=0.0, z=0.5),
        Phrase("look at the ceiling", x=1.0, y=0.0, z=0.5),
        Phrase("look downward", x=1.0, y=0.0, z=-0.4),
        Phrase("look at the floor", x=1.0, y=0.0, z=-0.4),
        Phrase("look at the ground", x=1.0, y=0.0, z=-0.4),
        Phrase("look down at the floor", x=1.0, y=0.0, z=-0.4),
        Phrase("look up at the sky", x=1.0, y=0.0, z=0.5),
        Phrase("look up at the ceiling", x=1.0, y=0.0, z=0.5),
        Phrase("turn your head left", x=1.0, y=0.6, z=0.0),
        Phrase("turn your head to the left", x=1.0, y=0.6, z=0.0),
        Phrase("turn your head right", x=1.0, y=-0.6, z=0.0),
        Phrase("turn your head to the right", x=1.0, y=-0.6, z=0.0),
    ),
    bounds={"x": REACH_M, "y": REACH_M, "z": REACH_M},
)
def look_at(ctx: ActionContext, x: float, y: float, z: float) -> ActionResult:
    """Turn the head and eyes towards a point; the gaze keeps following it smoothly (a held
    gaze posture is released first).

    Args:
        x: metres forward from the head
        y: metres to the robot's left (negative: right)
        z: metres up (negative: down)
    """
    # the runtime releases a held gaze posture ("look at the camera") itself, on every door;
    # under an estop that release is refused, and the refusal is the step's
    result = ctx.robot.execute(cmd.LookAt(x=x, y=y, z=z))
    if result in (LookAtResult.MOVED, LookAtResult.DEAD_ZONE):
        return True
    return (False, f"look_at {result.value}")


@action(
    phrases=(
        Phrase("look at me", name="Posture_LookAtInterviewer"),
        Phrase("look over here", name="Posture_LookAtInterviewer"),
        Phrase("look here", name="Posture_LookAtInterviewer"),
        Phrase("face me", name="Posture_LookAtInterviewer"),
        Phrase("make eye contact", name="Posture_LookAtInterviewer"),
        Phrase("eyes on me", name="Posture_LookAtInterviewer"),
        Phrase("look my way", name="Posture_LookAtInterviewer"),
        Phrase("look this way", name="Posture_LookAtInterviewer"),
        Phrase("look back at me", name="Posture_LookAtInterviewer"),
        Phrase("look at the camera", name="Posture_LookAtZoom"),
        Phrase("look ahead", name="LOOKUPPostureDefault"),
        Phrase("look straight ahead", name="LOOKUPPostureDefault"),
        Phrase("look forward", name="LOOKUPPostureDefault"),
        Phrase("stop looking at me", name="LOOKUPPostureDefault"),
        Phrase("look straight", name="LOOKUPPostureDefault"),
        Phrase("look away", name="LOOKUPPostureDefault"),
    )
)
def look_at_target(ctx: ActionContext, name: str) -> ActionResult:
    """Hold a gaze posture (look at the person, at the camera) until another one is chosen;
    the default posture releases it.

    Args:
        name: the gaze posture's name
    """
    with ctx.events(MoveFinished.kind) as inbox:
        ctx.robot.execute(cmd.LookAtTarget(name=name))
        return _move_done(ctx, inbox, name)


@action(
    phrases=(
        Phrase("wait {seconds} seconds"),
        Phrase("wait {seconds} second"),
        Phrase("wait a second", seconds=1.0),
        Phrase("wait a moment", seconds=2.0),
        Phrase("pause", seconds=2.0),
    ),
    bounds={"seconds": (0.0, 60.0)},
)
def wait(ctx: ActionContext, seconds: float) -> ActionResult:
    """Do nothing for a while (a pause between actions).

    Args:
        seconds: how long, at most 60
    """
    if not ctx.sleep(seconds):
        return _unfinished(ctx, "waiting")
    return True


@action(
    phrases=(
        "stop",
        "stop moving",
        "freeze",
        "hold still",
        "stop talking",
        "be quiet",
        "stop it",
        "stop that",
        "stop what you're doing",
        "stop doing that",
        "never mind",
        "cancel",
        "cancel that",
        "forget it",
        "forget about it",
        "that's enough",
        "shut up",
    )
)
def stop(ctx: ActionContext) -> ActionResult:
    """Stop: the current gesture eases to a hold, queued gestures and speech are dropped."""
    halt(ctx)
    return True


def halt(ctx: ActionContext) -> None:
    """Hold the motion and silence the speech (what ``stop`` does, and what a cancel does)."""
    ctx.robot.execute(cmd.StopAnimation())
    ctx.robot.execute(cmd.StopSpeaking())


@action(
    phrases=(
        "finish",
        "that's all",
        "that is all",
        "we're done",
        "we are done",
        "end the task",
        "end the current task",
        "thank you that's all",
    )
)
def finish(ctx: ActionContext) -> ActionResult:
    """End the current task: drop the rest of the plan and start a fresh conversation."""
    ctx.finish()
    return None


def _move_done(ctx: ActionContext, inbox: Inbox, name: str) -> ActionResult:
    done = inbox.wait(lambda e: _finished(e, name), ctx.step_timeout_s)
    if done is None:
        return _unfinished(ctx, name)
    assert isinstance(done, MoveFinished)
    if done.cut:
        return (False, f"{name} was cut short ({done.reason or 'cut'})")
    return True


def _finished(event: Event, name: str) -> bool:
    return isinstance(event, MoveFinished) and event.name == name


def _unfinished(ctx: ActionContext, what: str) -> ActionResult:
    if ctx.canceled:
        return (False, "interrupted")
    return (False, f"{what} did not finish within {ctx.step_timeout_s:g} s")


BUILTINS = (say, play_animation, look_at, look_at_target, wait, stop, finish)


def markers_checker(animations: Sequence[str]) -> Callable[[str], None]:
    """A check of ``say``'s text: its speech markers (``^start(nod)``…) well formed and naming
    animations of the library, so a plan naming an unknown one is refused before it runs."""
    known = frozenset(animations)

    def check(text: str) -> None:
        markup.checked(text, known.__contains__, animations, words=False)

    return check


def register_builtins(
    registry: ActionRegistry,
    *,
    animations: Iterable[str] | None = None,
    postures: Iterable[str] | None = None,
) -> None:
    """Add the built-ins; ``animations``/``postures`` narrow the names they accept. An action
    left with no name to accept is not added: a body with no gaze postures (Reachy Mini) has
    no ``look_at_target``, one with no gestures no ``play_animation``."""
    for act in BUILTINS:
        registry.add(act)
    if animations is not None:
        names = tuple(animations)
        if names:
            registry.constrain(
                "play_animation", choices={"name": names}, resolvers={"name": resolver(names)}
            )
        else:
            registry.remove("play_animation")
        registry.constrain("say", validators={"text": markers_checker(names)})
    if postures is not None:
        shapes = tuple(postures)
        if shapes:
            registry.constrain(
                "look_at_target", choices={"name": shapes}, resolvers={"name": resolver(shapes)}
            )
        else:
            registry.remove("look_at_target")


def resolver(names: Sequence[str]) -> Callable[[str], str]:
    """The library's lookup of a name as people write it (``wave``, ``lookup_waving`` →
    ``LOOKUP_Waving``; :mod:`anima.language.names`), over ``names``: so a plan, a tool call
    and an MCP call take what every door takes, and carry the library's name."""
    known = Names(names)

    def resolve(given: str) -> str:
        found = known.resolve(given)
        if found is None:
            raise ValueError(known.hint(given) or "")
        return found

    return resolve
