"""The phrases the ASR bench's recognizers are given, as a runtime's registry gives them."""

from __future__ import annotations


def vocabulary() -> list[str]:
    """The phrases a runtime's registry gives: the built-ins, and the humanoid's fixed words."""
    from anima.agent.vocabulary import builtin_registry

    return [*builtin_registry().grammar_phrases(), "walk forward", "turn left", "turn right"]


def prompt_vocabulary() -> list[str]:
    """Whisper's prompt phrases as ``anima serve --agent --humanoid sim`` gives them: the
    registry of a runtime with the shipped library and the simulated humanoid (never started:
    its constructor touches nothing), each kind of action in turn."""
    from anima.agent.understanding import prompt_phrases
    from anima.agent.vocabulary import robot_registry
    from anima.build import build
    from anima.choices import HumanoidType
    from anima.config import AnimaConfig, MqttConfig
    from anima.config.sections import HumanoidConfig
    from anima.drivers.sim import SimDriver

    config = AnimaConfig(
        mqtt=MqttConfig(enabled=False), humanoid=HumanoidConfig(type=HumanoidType.SIM)
    )
    runtime = build(config, doors=False, driver=SimDriver())
    runtime.library.load()
    return prompt_phrases(robot_registry(runtime))
