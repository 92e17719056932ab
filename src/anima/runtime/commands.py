"""The one way in: each typed command from any front door carried out on the runtime's parts
(:meth:`anima.runtime.Runtime.execute`). An emergency stop comes through here too: motion
holds, speech stops (``end_speak`` reason ``estop``) and both are refused until the reset."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from anima import commands as cmd
from anima import estop
from anima.errors import CommandRefusedError
from anima.events import Transcript
from anima.logtext import quoted

if TYPE_CHECKING:
    from anima.humanoid.link import HumanoidLink
    from anima.parts import Agent
    from anima.runtime import Runtime

log = logging.getLogger("anima.runtime")

NO_HUMANOID = "no humanoid is linked (anima serve --humanoid sim|adam)"
NO_AGENT = "the agent is not running (anima serve --agent)"


def carry_out(rt: Runtime, command: cmd.Command) -> cmd.Result:
    """:meth:`Runtime.execute`'s work (its docstring says what each command returns)."""
    b = rt.behaviour
    match command:
        case cmd.PlayAnimation(name=name):
            return cmd.Played(idle_layer=b.play_animation(name))
        case cmd.LookAt(x=x, y=y, z=z):
            return b.look_at_position(x, y, z)
        case cmd.LookAtTarget(name=name):
            b.look_at_target(name)
        case cmd.EndLookAt():
            b.end_look_at()
        case cmd.Shutdown():
            b.shutdown()
        case cmd.Wake():
            b.wake()
        case cmd.SetChannelDefault(channel=channel, value=value):
            b.set_channel_default(channel, value)
        case cmd.Speak():
            if rt.speech is None:
                raise CommandRefusedError(f"speech is not available: {rt.speech_problem}")
            return cmd.Spoken(utterance=rt.speech.say(command))
        case cmd.OpenVoiceStream():
            if rt.speech is None:
                raise CommandRefusedError(f"speech is not available: {rt.speech_problem}")
            return cmd.VoiceStreamOpened(stream=rt.speech.open_stream(command))
        case cmd.StopSpeaking(reason=reason):
            if rt.speech is not None:
                rt.speech.stop_speaking(reason)
        case cmd.EmergencyStop():
            estop.engage(rt.engine, rt.speech, rt.events)
        case cmd.ResetEmergencyStop():
            estop.release(rt.engine, rt.events)
        case cmd.StopAnimation():
            rt.engine.clear()
        case cmd.CancelAnimation(name=name):
            b.cancel_animation(name)
        case cmd.Listen():
            _agent(rt).wake("command")
        case cmd.Ask(text=text):
            agent = _agent(rt)
            log.info("asked: %s", quoted(text))  # typed, as a heard one is logged 'heard:'
            agent.hear(Transcript(t=rt.engine.clock.now(), text=text, final=True))
        case (
            cmd.HumanoidMode() | cmd.HumanoidMotion() | cmd.HumanoidPosture() | cmd.HumanoidSpeed()
        ):
            return cmd.HumanoidAnswer(answer=_humanoid(rt).request(command))
        case cmd.ReadHumanoidState():
            return _humanoid(rt).read()
    return None


def _agent(rt: Runtime) -> Agent:
    if rt.agent is None:
        raise CommandRefusedError(NO_AGENT)
    return rt.agent


def _humanoid(rt: Runtime) -> HumanoidLink:
    if rt.humanoid is None:
        raise CommandRefusedError(NO_HUMANOID)
    return rt.humanoid
