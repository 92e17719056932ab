"""Settings and wire values that are one of a few names: StrEnums (a member is its name, as a
string: YAML, JSON and comparisons with plain strings are unchanged), and the check a config
section runs on one given in Python."""

from __future__ import annotations

from enum import StrEnum
from typing import TypeVar

from anima.errors import ConfigError

E = TypeVar("E", bound=StrEnum)


def checked(kind: type[E], value: object, key: str) -> E:
    """``value`` as a member of ``kind``; ConfigError naming ``key`` and the choices."""
    try:
        if not isinstance(value, str):
            raise ValueError(value)
        return kind(value)
    except ValueError:
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
        choices = ", ".join(m.value for m in kind)
        raise ConfigError(f"{key} must be one of {choices}, got {shown}", key=key) from None


class HumanoidType(StrEnum):
    NONE = "none"  # no humanoid
    SIM = "sim"  # serve the simulated Adam in-process
    ADAM = "adam"  # a real one


class EmbeddedBroker(StrEnum):
    AUTO = "auto"  # Mosquitto when installed, else amqtt
    MOSQUITTO = "mosquitto"
    AMQTT = "amqtt"


class PlannerType(StrEnum):
    """``agent.planner``: which planner decides what the robot does (anima.agent.planners.
    PLANNERS makes each)."""

    RULES = "rules"  # offline, from the actions' phrases
    OPENAI = "openai"  # an OpenAI-compatible server (Ollama, llama.cpp, vLLM, …)
    DIFY = "dify"  # a Dify app
    # a speech-to-speech model over the OpenAI Realtime protocol: not a text planner, it
    # replaces the conversation (ears, planner, voice) with anima.agent.realtime's agent
    OPENAI_REALTIME = "openai_realtime"
    GEMINI_LIVE = "gemini_live"  # the same, over Google's Live API


# the planner types that are realtime brains (speech to speech), not planners of text
REALTIME_BRAINS = frozenset({PlannerType.OPENAI_REALTIME, PlannerType.GEMINI_LIVE})


class PlannerMode(StrEnum):
    TOOLS = "tools"  # tool calls → actions
    JSON = "json"  # the seed's JSON reply


class AsrMode(StrEnum):
    GRAMMAR = "grammar"  # pocketsphinx: the command phrases only
    LM = "lm"  # pocketsphinx: any words


class TurnGate(StrEnum):
    HOLD = "hold"  # a silence only the level gate hears ends the turn after turn_hold_s
    CUES = "cues"  # … after turn_quick_s when the voice fell


class EchoCanceller(StrEnum):
    AUTO = "auto"
    WEBRTC = "webrtc"
    NONE = "none"
